//! Typed errors of the simulator: a guest fault on one PE, a host command that can never
//! complete (deadlock), and the cycle limit. A misbehaving guest program is a value of
//! [`SimError`], never a panic of the simulator.

use csl_arch::fabric::{PE_MEMORY_BYTES, PeCoord, STACK_BYTES};
use csl_arch::isa::TrapCode;
use std::fmt;

/// Where a PE sits: inside the program rectangle and on the whole fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PeLoc {
    /// Coordinate relative to the program rectangle's north-west PE (what the host's
    /// `px`/`py` and the layout's `@set_tile_code(x, y, ..)` use).
    pub rel: PeCoord,
    /// Absolute fabric coordinate (what `ROW_ID`/`COL_ID` report).
    pub abs: PeCoord,
}

impl fmt::Display for PeLoc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [fabric ({},{})]", self.rel, self.abs.x, self.abs.y)
    }
}

/// Why one PE stopped with a fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// A load or store outside the PE's SRAM (and below the memory-mapped window).
    MemoryOutOfBounds {
        /// Byte address.
        addr: u32,
        /// Access width in bytes.
        width: u32,
    },
    /// A load or store in the memory-mapped window that names no register usable that way.
    UnknownMmio {
        /// Byte address.
        addr: u32,
        /// Whether it was a store.
        write: bool,
    },
    /// Integer division or remainder by zero.
    DivisionByZero,
    /// An instruction this simulator does not execute yet.
    Unimplemented {
        /// The instruction's mnemonic.
        what: &'static str,
    },
    /// A `trap` instruction (`@assert` failed, unreachable code, ...).
    Trap {
        /// The raw trap code; see [`FaultKind::trap_code`].
        code: u16,
    },
    /// A call frame would extend below the stack area.
    StackOverflow {
        /// Stack pointer before the call.
        sp: u32,
        /// Bytes the new frame needs.
        frame_bytes: u16,
    },
    /// The task picker chose a task id that has no task bound to it.
    UnboundTask {
        /// The task id.
        id: u8,
    },
    /// More nested calls than the simulator allows.
    CallDepthExceeded {
        /// The limit ([`crate::pe::MAX_CALL_DEPTH`]).
        limit: usize,
    },
    /// The register frames of the active calls exceed the simulator's register budget.
    RegisterFileExhausted {
        /// The limit in 32-bit words ([`crate::pe::MAX_REGISTER_WORDS`]).
        limit: usize,
    },
    /// `call_ind` through a value that is not a function index.
    BadFunctionPointer {
        /// The value in the function-pointer register.
        value: u32,
        /// Number of functions in the program class.
        nfuncs: u32,
    },
    /// A call or launch passes more arguments than the callee has registers.
    TooManyArgs {
        /// Callee name.
        callee: String,
        /// Arguments passed.
        nargs: usize,
        /// Registers of the callee.
        nregs: u16,
    },
    /// A `ret` whose caller asked for the result in a register it does not have.
    BadReturnRegister {
        /// The destination register in the caller.
        dst: u16,
        /// Registers of the caller.
        nregs: u32,
    },
    /// Execution fell off the end of the code.
    PcOutOfRange {
        /// The program counter.
        pc: u32,
    },
}

impl FaultKind {
    /// The decoded trap code of a [`FaultKind::Trap`].
    pub fn trap_code(&self) -> Option<TrapCode> {
        match self {
            FaultKind::Trap { code } => TrapCode::from_u16(*code),
            _ => None,
        }
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FaultKind::MemoryOutOfBounds { addr, width } => write!(
                f,
                "{width}-byte memory access at address 0x{addr:04x} is outside the PE's \
                 {PE_MEMORY_BYTES}-byte memory"
            ),
            FaultKind::UnknownMmio { addr, write } => write!(
                f,
                "{} at 0x{addr:04x}: no memory-mapped register there can be {}",
                if *write { "store" } else { "load" },
                if *write { "written" } else { "read" }
            ),
            FaultKind::DivisionByZero => f.write_str("integer division by zero"),
            FaultKind::Trap { code } => match TrapCode::from_u16(*code) {
                Some(TrapCode::AssertFailed) => f.write_str("assertion failed (@assert)"),
                Some(TrapCode::Unreachable) => {
                    f.write_str("reached code the compiler marked unreachable (missing return?)")
                }
                None => write!(f, "trap with unknown code {code}"),
            },
            FaultKind::StackOverflow { sp, frame_bytes } => write!(
                f,
                "stack overflow: a {frame_bytes}-byte frame below stack pointer 0x{sp:04x} \
                 leaves the {STACK_BYTES}-byte stack (which starts at 0x{:04x})",
                PE_MEMORY_BYTES - STACK_BYTES
            ),
            FaultKind::UnboundTask { id } => {
                write!(f, "task id {id} was activated but no task is bound to it")
            }
            FaultKind::CallDepthExceeded { limit } => {
                write!(
                    f,
                    "call depth exceeded: more than {limit} nested calls (runaway recursion?)"
                )
            }
            FaultKind::RegisterFileExhausted { limit } => write!(
                f,
                "the registers of the active calls exceed {limit} words (runaway recursion?)"
            ),
            FaultKind::BadFunctionPointer { value, nfuncs } => write!(
                f,
                "indirect call through {value}, which is not a function index (the program \
                 has {nfuncs} functions)"
            ),
            FaultKind::TooManyArgs {
                callee,
                nargs,
                nregs,
            } => write!(
                f,
                "{nargs} arguments passed to `{callee}`, which has only {nregs} registers"
            ),
            FaultKind::BadReturnRegister { dst, nregs } => write!(
                f,
                "return value goes to register r{dst} but the caller has only {nregs} registers"
            ),
            FaultKind::PcOutOfRange { pc } => {
                write!(f, "execution ran past the end of the code (pc {pc})")
            }
            FaultKind::Unimplemented { what } => {
                write!(f, "the simulator does not execute `{what}` yet")
            }
        }
    }
}

/// Why a PE keeps a host command from completing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WaitReason {
    /// The PE has nothing left to run and never stored to `HOST_CMD_UNBLOCK`.
    NeverUnblockedCmdStream {
        /// Bit `i` set: task id `i` is activated but blocked (it would run if unblocked).
        blocked_tasks: u64,
    },
}

impl fmt::Display for WaitReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WaitReason::NeverUnblockedCmdStream { blocked_tasks } => {
                f.write_str("has nothing left to run and never called unblock_cmd_stream")?;
                if *blocked_tasks != 0 {
                    let ids: Vec<String> = (0..64u32)
                        .filter(|i| blocked_tasks >> i & 1 == 1)
                        .map(|i| i.to_string())
                        .collect();
                    write!(f, " (activated but blocked task ids: {})", ids.join(", "))?;
                }
                Ok(())
            }
        }
    }
}

/// One PE a deadlocked host command waits for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiting {
    /// The PE.
    pub pe: PeLoc,
    /// What it failed to do.
    pub reason: WaitReason,
}

/// Why a simulation stopped early.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimError {
    /// A PE faulted.
    Fault {
        /// The PE.
        pe: PeLoc,
        /// The task id running (or being started) on it.
        task: Option<u8>,
        /// Name of the function executing (`(task picker)` when starting a task failed).
        func: String,
        /// Instruction index of the faulting instruction.
        pc: u32,
        /// Cycle of the fault.
        cycle: u64,
        /// What went wrong.
        kind: FaultKind,
    },
    /// A host command waits for PEs that have nothing left to run.
    Deadlock {
        /// Cycle at which the fabric went idle.
        cycle: u64,
        /// The host command, e.g. ``launch `f` ``.
        command: String,
        /// Each PE that did not complete its part of the command.
        waiting: Vec<Waiting>,
    },
    /// The simulated clock reached the limit.
    CycleLimit {
        /// The limit reached.
        cycle: u64,
    },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Fault {
                pe,
                task,
                func,
                pc,
                cycle,
                kind,
            } => {
                write!(f, "fault on {pe}")?;
                if let Some(t) = task {
                    write!(f, ", task {t}")?;
                }
                write!(f, ", function `{func}`, pc {pc}, cycle {cycle}: {kind}")
            }
            SimError::Deadlock {
                cycle,
                command,
                waiting,
            } => {
                write!(
                    f,
                    "deadlock at cycle {cycle}: {command} waits for {} PE(s) that have nothing \
                     left to run",
                    waiting.len()
                )?;
                const SHOWN: usize = 16;
                for w in waiting.iter().take(SHOWN) {
                    write!(f, "\n  {}: {}", w.pe, w.reason)?;
                }
                if waiting.len() > SHOWN {
                    write!(f, "\n  ... and {} more", waiting.len() - SHOWN)?;
                }
                Ok(())
            }
            SimError::CycleLimit { cycle } => write!(
                f,
                "cycle limit reached: the simulation ran for {cycle} cycles without finishing \
                 (infinite loop? raise the limit with `--max-cycles` or `SdkRuntime::with_max_cycles`)"
            ),
        }
    }
}

impl std::error::Error for SimError {}
