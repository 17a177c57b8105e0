//! Typed errors of the simulator: a guest fault on one PE, a host command that can never
//! complete (deadlock), and the cycle limit. A misbehaving guest program is a value of
//! [`SimError`], never a panic of the simulator.

use csl_arch::fabric::{Direction, PE_MEMORY_BYTES, PeCoord, STACK_BYTES, control};
use csl_arch::isa::TrapCode;
use std::fmt;

/// Where a PE sits: inside the program rectangle and on the whole fabric.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct PeLoc {
    /// Coordinate relative to the program rectangle's north-west PE (what the host's
    /// `px`/`py` and the layout's `@set_tile_code(x, y, ..)` use).
    pub rel: PeCoord,
    /// Absolute fabric coordinate (what `ROW_ID`/`COL_ID` report).
    pub abs: PeCoord,
}

impl PeLoc {
    /// A placeholder location (0,0) for internal lookups that cannot fail in practice.
    pub(crate) fn unknown() -> PeLoc {
        let zero = PeCoord { x: 0, y: 0 };
        PeLoc {
            rel: zero,
            abs: zero,
        }
    }
}

impl fmt::Display for PeLoc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [fabric ({},{})]", self.rel, self.abs.x, self.abs.y)
    }
}

/// Why one PE stopped with a fault.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
        #[serde(deserialize_with = "leak_str")]
        what: StaticName,
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
    /// A `dsd_op` operand names a descriptor the operation cannot use.
    BadDescriptor {
        /// Byte address of the descriptor.
        addr: u32,
        /// What is wrong.
        #[serde(deserialize_with = "leak_str")]
        why: StaticName,
    },
    /// A `dsd_op` instruction whose operand kinds do not fit its operation.
    BadDsdOperands {
        /// What is wrong.
        #[serde(deserialize_with = "leak_str")]
        why: StaticName,
    },
    /// A fabric DSD operation longer than one of its memory operands: it would read or
    /// write past the operand's end (a compile-time warning when the lengths are known).
    DsdLengthMismatch {
        /// Which operand: 0 the destination, 1.. the sources.
        operand: usize,
        /// That operand's length.
        len: u32,
        /// The operation's length.
        total: u32,
    },
    /// The switch-advance ("flip") bit on the last wavelet of a send that is a control
    /// wavelet whose command 0 is not a NOP: the hardware carries the bit only on data
    /// wavelets and on control wavelets with command 0 = NOP.
    FlipOnControl {
        /// The colour sent on.
        color: u8,
        /// The control word.
        word: u32,
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
            FaultKind::BadDescriptor { addr, why } => {
                write!(f, "bad DSD descriptor at 0x{addr:04x}: {why}")
            }
            FaultKind::BadDsdOperands { why } => write!(f, "bad DSD operation: {why}"),
            FaultKind::DsdLengthMismatch {
                operand,
                len,
                total,
            } => {
                let which = match operand {
                    0 => "the destination".to_string(),
                    n => format!("source {n}"),
                };
                write!(
                    f,
                    "fabric DSD operation of {total} elements, but {which} is a memory \
                     descriptor of {len}: it would run past its end"
                )
            }
            FaultKind::FlipOnControl { color, word } => {
                let op = control::opcode_phrase(control::command(*word, 0));
                write!(
                    f,
                    "the switch-advance (flip) bit rides on a control wavelet 0x{word:08x} on \
                     colour {color} whose command 0 is {op}: only data wavelets and control \
                     wavelets whose command 0 is a NOP can carry it"
                )
            }
        }
    }
}

/// What a stalled DSD operation waits for.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum WaitOn {
    /// A wavelet in an empty CE input queue (WSE-2: of a colour; WSE-3: a queue).
    InputEmpty {
        /// The colour (WSE-2), or the colour bound to the queue (WSE-3) if any.
        color: Option<u8>,
        /// The input queue (WSE-3).
        queue: Option<u8>,
    },
    /// A control wavelet at the head of the input queue that no one takes (its channel is
    /// blocked and the operation does not terminate on control).
    ControlAtHead {
        /// The colour (WSE-2), or the colour bound to the queue (WSE-3) if any.
        color: Option<u8>,
        /// The input queue (WSE-3).
        queue: Option<u8>,
    },
    /// Room in a full output queue.
    OutputFull {
        /// The colour.
        color: u8,
        /// The output queue.
        queue: u8,
    },
    /// Data in an empty FIFO.
    FifoEmpty {
        /// Byte address of the FIFO's descriptor.
        fifo: u32,
    },
    /// Room in a full FIFO.
    FifoFull {
        /// Byte address of the FIFO's descriptor.
        fifo: u32,
    },
}

impl fmt::Display for WaitOn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let q = |f: &mut fmt::Formatter<'_>, color: &Option<u8>, queue: &Option<u8>| match (
            color, queue,
        ) {
            (Some(c), Some(q)) => write!(f, "input queue {q} (colour {c})"),
            (None, Some(q)) => write!(f, "input queue {q} (bound to no colour)"),
            (Some(c), None) => write!(f, "colour {c}"),
            (None, None) => f.write_str("an input queue"),
        };
        match self {
            WaitOn::InputEmpty { color, queue } => {
                f.write_str("waits for a wavelet on ")?;
                q(f, color, queue)
            }
            WaitOn::ControlAtHead { color, queue } => {
                f.write_str("waits behind a control wavelet nobody takes on ")?;
                q(f, color, queue)
            }
            WaitOn::OutputFull { color, queue } => {
                write!(f, "waits for room in output queue {queue} (colour {color})")
            }
            WaitOn::FifoEmpty { fifo } => write!(f, "waits for data in the FIFO at 0x{fifo:04x}"),
            WaitOn::FifoFull { fifo } => write!(f, "waits for room in the FIFO at 0x{fifo:04x}"),
        }
    }
}

/// Why a PE keeps a host command (or the end of a run) from completing.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum WaitReason {
    /// The PE has nothing left to run and never stored to `HOST_CMD_UNBLOCK`.
    NeverUnblockedCmdStream {
        /// Bit `i` set: task id `i` is activated but blocked (it would run if unblocked).
        blocked_tasks: u64,
    },
    /// A synchronous DSD operation holds the running task.
    SyncOp {
        /// The task id.
        task: Option<u8>,
        /// The function that issued it.
        func: String,
        /// Instruction index of the `dsd_op`.
        pc: u32,
        /// Its source line (`file:line`), if the image has a line table.
        line: Option<String>,
        /// The operation (`fadds`, ...).
        #[serde(deserialize_with = "leak_str")]
        op: StaticName,
        /// What it waits for.
        on: WaitOn,
    },
    /// An asynchronous DSD operation on a microthread cannot progress.
    Microthread {
        /// The microthread.
        ut: u8,
        /// The task that issued it.
        task: Option<u8>,
        /// The function that issued it.
        func: String,
        /// Instruction index of the `dsd_op`.
        pc: u32,
        /// Its source line (`file:line`), if the image has a line table.
        line: Option<String>,
        /// The operation.
        #[serde(deserialize_with = "leak_str")]
        op: StaticName,
        /// What it waits for.
        on: WaitOn,
    },
    /// A task waits to issue an asynchronous operation on a microthread that stays busy.
    MicrothreadBusy {
        /// The microthread.
        ut: u8,
        /// The waiting task.
        task: Option<u8>,
        /// Its function.
        func: String,
        /// Instruction index of the `dsd_op`.
        pc: u32,
        /// Its source line (`file:line`), if the image has a line table.
        line: Option<String>,
    },
    /// A streaming memcpy did not move all of this PE's wavelets.
    Stream {
        /// Host to device (`true`) or device to host.
        h2d: bool,
        /// The colour.
        color: u8,
        /// Wavelets moved (host to device: that left the host, into the memcpy path).
        done: u32,
        /// Wavelets to move.
        total: u32,
    },
}

/// ` at file:line` for a known source line, else nothing.
fn at_line(line: &Option<String>) -> String {
    line.as_ref()
        .map_or_else(String::new, |l| format!(" at {l}"))
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
            WaitReason::SyncOp {
                task,
                func,
                pc,
                line,
                op,
                on,
            } => {
                write!(
                    f,
                    "{} in `{func}` is held by synchronous @{op} (pc {pc}{}), which {on}",
                    task_name(*task),
                    at_line(line)
                )
            }
            WaitReason::Microthread {
                ut,
                task,
                func,
                pc,
                line,
                op,
                on,
            } => write!(
                f,
                "microthread {ut}: asynchronous @{op} issued by {} in `{func}` (pc {pc}{}) {on}",
                task_name(*task),
                at_line(line)
            ),
            WaitReason::MicrothreadBusy {
                ut,
                task,
                func,
                pc,
                line,
            } => write!(
                f,
                "{} in `{func}` waits at pc {pc}{} to start an asynchronous operation on busy \
                 microthread {ut}",
                task_name(*task),
                at_line(line)
            ),
            WaitReason::Stream {
                h2d,
                color,
                done,
                total,
            } => {
                if *h2d {
                    write!(
                        f,
                        "took {done} of {total} streamed host wavelets on colour {color}"
                    )
                } else {
                    write!(
                        f,
                        "sent {done} of {total} wavelets for the host on colour {color}"
                    )
                }
            }
        }
    }
}

fn task_name(t: Option<u8>) -> String {
    t.map_or_else(|| "no task".to_string(), |t| format!("task {t}"))
}

/// Where wavelets are stuck.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum StuckPlace {
    /// A router input buffer, by the port the wavelets came from (`Ramp`: the CE's output
    /// queue).
    RouterInput(Direction),
    /// The CE input buffer of the colour (WSE-2) or input queue (WSE-3).
    CeInput {
        /// The input queue (WSE-3).
        queue: Option<u8>,
    },
    /// The memcpy path between the host and the CE input buffer (a streaming
    /// `memcpy_h2d`; `SimParams::h2d_path_depth`).
    HostPath,
}

/// Why wavelets cannot move on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum StuckWhy {
    /// A destination (next router, or the CE input queue) is full.
    Backpressure,
    /// The colour is in teardown mode at this router.
    Teardown,
    /// The port is not an input of the colour's current switch position.
    NotAccepted,
    /// The colour has no route at this router (output of the CE on an unrouted colour).
    NoRoute,
    /// The channel's task id is blocked (`@block`).
    ChannelBlocked,
    /// A data task is bound but the CE never got to run it.
    TaskNotRun,
    /// Nothing reads the queue (no data task bound, no fabric input operation running).
    NoConsumer,
    /// Message passing: another input's message holds the output the wavelet needs.
    PathHeld,
}

impl fmt::Display for StuckWhy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StuckWhy::Backpressure => "a destination is full",
            StuckWhy::Teardown => "the colour is in teardown",
            StuckWhy::NotAccepted => "the port is not an input of the current switch position",
            StuckWhy::NoRoute => "the colour has no route here",
            StuckWhy::ChannelBlocked => "its task id is blocked",
            StuckWhy::TaskNotRun => "its data task never ran",
            StuckWhy::NoConsumer => "nothing reads it",
            StuckWhy::PathHeld => "another message holds the path it needs",
        })
    }
}

/// Wavelets that cannot move, at the end of a deadlocked run.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Stuck {
    /// The PE.
    pub pe: PeLoc,
    /// The colour (WSE-3 CE input queues: the colour bound to the queue, or 255).
    pub color: u8,
    /// Where.
    pub place: StuckPlace,
    /// How many.
    pub count: u32,
    /// Why.
    pub why: StuckWhy,
}

impl fmt::Display for Stuck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} wavelet(s) of colour {} ",
            self.pe, self.count, self.color
        )?;
        match self.place {
            StuckPlace::RouterInput(Direction::Ramp) => {
                f.write_str("in the router's RAMP input (CE output queue)")?
            }
            StuckPlace::RouterInput(d) => write!(f, "in the router's {} input", d.name())?,
            StuckPlace::CeInput { queue: Some(q) } => write!(f, "in CE input queue {q}")?,
            StuckPlace::CeInput { queue: None } => f.write_str("in the CE input buffer")?,
            StuckPlace::HostPath => f.write_str("in the memcpy path from the host")?,
        }
        write!(f, ": {}", self.why)
    }
}

/// A routing failure: a wavelet the fabric cannot carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum RoutingError {
    /// A wavelet arrived on a colour that has no route at this PE.
    Unrouted {
        /// The port it arrived on.
        from: Direction,
    },
    /// A wavelet arrived on a port that no switch position of the colour accepts.
    NotAccepted {
        /// The port it arrived on.
        from: Direction,
    },
    /// A route sends a wavelet off the edge of the program rectangle.
    OffEdge {
        /// The direction.
        dir: Direction,
    },
    /// WSE-3: a wavelet for the CE on a colour bound to no input queue.
    NoInputQueue,
    /// WSE-3 message passing: a message reached a PE whose router does not have message
    /// passing enabled on the colour (the hardware would lose the message).
    MessagePassingOff {
        /// The port it arrived on.
        from: Direction,
    },
    /// WSE-3 message passing: a header names a PE outside the program rectangle.
    MessageDestination {
        /// Destination column.
        col: u32,
        /// Destination row.
        row: u32,
    },
    /// WSE-3 message passing: a control wavelet arrived where a header was expected.
    MessageWithoutHeader {
        /// The port it arrived on.
        from: Direction,
    },
}

impl fmt::Display for RoutingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RoutingError::Unrouted { from } => write!(
                f,
                "a wavelet arrived from {} on a colour that has no route at this PE",
                from.name()
            ),
            RoutingError::NotAccepted { from } => write!(
                f,
                "a wavelet arrived from {}, which is not an input of any switch position of \
                 the colour here",
                from.name()
            ),
            RoutingError::OffEdge { dir } => write!(
                f,
                "the route sends a wavelet {} off the edge of the program rectangle",
                dir.name()
            ),
            RoutingError::NoInputQueue => f.write_str(
                "a wavelet for the CE on a colour that no input queue is bound to (@initialize_queue)",
            ),
            RoutingError::MessagePassingOff { from } => write!(
                f,
                "a message arrived from {} but message passing is not enabled on the colour \
                 at this PE (the message would be lost)",
                from.name()
            ),
            RoutingError::MessageDestination { col, row } => write!(
                f,
                "a message header names PE ({col},{row}), outside the program rectangle"
            ),
            RoutingError::MessageWithoutHeader { from } => write!(
                f,
                "a control wavelet arrived from {} on a message-passing colour where a \
                 message header was expected",
                from.name()
            ),
        }
    }
}

/// One PE a deadlocked host command waits for.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Waiting {
    /// The PE.
    pub pe: PeLoc,
    /// What it failed to do.
    pub reason: WaitReason,
}

/// Why a simulation stopped early.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
        /// Its source line (`file:line`), if the image has a line table.
        line: Option<String>,
        /// Cycle of the fault.
        cycle: u64,
        /// What went wrong.
        kind: FaultKind,
    },
    /// Nothing in the fabric can progress, but a host command (or the run) is not complete:
    /// PEs wait, or wavelets are stuck.
    Deadlock {
        /// Cycle at which the fabric went idle.
        cycle: u64,
        /// The host command, e.g. ``launch `f` ``, or `run` for the end of a run.
        command: String,
        /// Each PE that did not complete its part, or whose task or microthread is stuck.
        waiting: Vec<Waiting>,
        /// Wavelets that cannot move, per PE, colour and buffer.
        stuck: Vec<Stuck>,
    },
    /// The fabric cannot carry a wavelet.
    Routing {
        /// The PE whose router found the problem.
        pe: PeLoc,
        /// The colour.
        color: u8,
        /// The cycle.
        cycle: u64,
        /// What is wrong.
        kind: RoutingError,
    },
    /// The simulated clock reached the limit.
    CycleLimit {
        /// The limit reached.
        cycle: u64,
    },
    /// The host's interrupt check ([`crate::sim::InterruptCheck`]) asked to stop, e.g.
    /// Ctrl-C in Python.
    Interrupted {
        /// The cycle reached.
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
                line,
                cycle,
                kind,
            } => {
                write!(f, "fault on {pe}")?;
                if let Some(t) = task {
                    write!(f, ", task {t}")?;
                }
                write!(
                    f,
                    ", function `{func}`, pc {pc}{}, cycle {cycle}: {kind}",
                    at_line(line)
                )
            }
            SimError::Deadlock {
                cycle,
                command,
                waiting,
                stuck,
            } => {
                write!(
                    f,
                    "deadlock at cycle {cycle}: {command} cannot complete and nothing can \
                     progress; {} wait(s) on PEs, {} place(s) with stuck wavelets",
                    waiting.len(),
                    stuck.len()
                )?;
                const SHOWN: usize = 16;
                for w in waiting.iter().take(SHOWN) {
                    write!(f, "\n  {}: {}", w.pe, w.reason)?;
                }
                if waiting.len() > SHOWN {
                    write!(f, "\n  ... and {} more", waiting.len() - SHOWN)?;
                }
                for s in stuck.iter().take(SHOWN) {
                    write!(f, "\n  stuck: {s}")?;
                }
                if stuck.len() > SHOWN {
                    write!(
                        f,
                        "\n  ... and {} more places with stuck wavelets",
                        stuck.len() - SHOWN
                    )?;
                }
                Ok(())
            }
            SimError::Routing {
                pe,
                color,
                cycle,
                kind,
            } => write!(
                f,
                "routing error on {pe}, colour {color}, cycle {cycle}: {kind}"
            ),
            SimError::CycleLimit { cycle } => write!(
                f,
                "cycle limit reached: the simulation ran for {cycle} cycles without finishing \
                 (infinite loop? raise the limit with `--max-cycles` or `SdkRuntime::with_max_cycles`)"
            ),
            SimError::Interrupted { cycle } => {
                write!(f, "interrupted by the host at cycle {cycle}")
            }
        }
    }
}

impl std::error::Error for SimError {}

/// An output file (a Perfetto trace, a heatmap) could not be written.
#[derive(Debug)]
pub struct WriteError {
    /// The file.
    pub path: std::path::PathBuf,
    /// The OS error.
    pub source: std::io::Error,
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot write `{}`: {}", self.path.display(), self.source)
    }
}

impl std::error::Error for WriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// A `&'static str` field (named so that the serde derive does not take it as borrowed
/// from the input: [`leak_str`] reads it).
type StaticName = &'static str;

/// Reads a `&'static str` field of an error sent by another rank of a distributed run
/// (`crate::dist`): the few bytes of a failure report are leaked.
fn leak_str<'de, D: serde::Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    let s = <String as serde::Deserialize>::deserialize(d)?;
    Ok(Box::leak(s.into_boxed_str()))
}
