//! The state of one processing element: its memory, task state, call stack and counters,
//! and the task picker that decides what it runs next.
//!
//! # Task picker (our choices; the hardware order is undocumented)
//!
//! A task runs to completion. When a PE has no running task it starts, in this order:
//!
//! 1. a pending host call (`launch`), under task id [`LAUNCH_TASK_ID`]: host calls have
//!    priority over local tasks so that a program that keeps re-activating its own tasks
//!    cannot starve the host's command stream;
//! 2. otherwise the **lowest task id** that is activated and not blocked (simulator-model
//!    §1.1 says the order among runnable tasks is unspecified; lowest-first is our rule).
//!    Picking clears the id's activation bit (activation is one pending bit per id). If
//!    that id has no task bound, the PE faults with [`FaultKind::UnboundTask`].
//!
//! Starting a task costs [`TASK_START_CYCLES`]; its first instruction runs in the cycle
//! after that.
//!
//! # Call stack
//!
//! Each call frame has its own registers, kept in one register stack per PE (a frame is a
//! window `base .. base + nregs` of it, so calls do not allocate once the stack has grown).
//! The memory stack pointer starts at [`PE_MEMORY_BYTES`]; each frame (the task's bottom
//! frame included) takes its function's `frame_bytes` below its caller's, and may not go
//! below `PE_MEMORY_BYTES - STACK_BYTES`.

use crate::class::{Class, NO_TASK};
use crate::error::{FaultKind, PeLoc};
use csl_arch::fabric::{LAUNCH_TASK_ID, PE_MEMORY_BYTES, STACK_BYTES};
use csl_arch::isa::Reg;
use std::collections::VecDeque;
use std::sync::Arc;

/// Cycles the task picker takes to start a task or a host call (ours: one cycle).
pub const TASK_START_CYCLES: u32 = 1;

/// Most call frames one task may have, the task's own frame included (ours: it bounds the
/// simulator's memory when frames use no stack bytes).
pub const MAX_CALL_DEPTH: usize = 1024;

/// Most 32-bit registers all active frames of one PE may hold together (ours).
pub const MAX_REGISTER_WORDS: usize = 1 << 20;

/// Lowest address the stack may reach.
pub const STACK_LIMIT: u32 = PE_MEMORY_BYTES - STACK_BYTES;

/// One call frame.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Frame {
    /// Function index (`u32::MAX` while the task picker is starting a task).
    pub func: u32,
    /// Next instruction (for a saved caller frame: the return address).
    pub pc: u32,
    /// First register of this frame in [`Pe::regs`].
    pub base: u32,
    /// Registers of this frame.
    pub nregs: u32,
    /// Memory stack pointer: this frame's stack area starts here.
    pub sp: u32,
    /// Register of the caller that receives this frame's return value.
    pub dst: u16,
}

/// A host call waiting to start on a PE.
#[derive(Clone, Debug)]
pub(crate) struct HostCall {
    /// Function index in the PE's class.
    pub func: u32,
    /// Arguments, one 32-bit word each.
    pub args: Arc<[u32]>,
}

/// What a PE did in one cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tick {
    /// It had nothing to do (the cycle cost nothing).
    Idle,
    /// It worked.
    Busy,
    /// It worked and unblocked the host command stream for the first time.
    BusyUnblocked,
}

/// One processing element.
#[derive(Clone, Debug)]
pub struct Pe {
    pub(crate) loc: PeLoc,
    pub(crate) class: usize,
    pub(crate) mem: Vec<u8>,
    pub(crate) active: u64,
    pub(crate) blocked: u64,
    /// The running task's id, if any.
    pub(crate) task: Option<u8>,
    /// The running frame (meaningful while `task` is set).
    pub(crate) cur: Frame,
    /// Saved caller frames of the running task.
    pub(crate) callers: Vec<Frame>,
    /// Register stack.
    pub(crate) regs: Vec<u32>,
    /// Cycles left before the PE can do anything else.
    pub(crate) stall: u32,
    pub(crate) host_calls: VecDeque<HostCall>,
    pub(crate) cmd_unblocked: bool,
    pub(crate) in_worklist: bool,
    pub(crate) busy_cycles: u64,
    pub(crate) instructions: u64,
    pub(crate) tasks_started: u64,
}

impl Pe {
    /// A PE in its reset state running `class` (memory initialised from the class's data).
    pub(crate) fn new(loc: PeLoc, class_index: usize, class: &Class) -> Pe {
        let mut mem = vec![0u8; PE_MEMORY_BYTES as usize];
        let data = &class.program.data;
        // The image validator guarantees `data.len() <= PE_MEMORY_BYTES`.
        let n = data.len().min(mem.len());
        if let (Some(dst), Some(src)) = (mem.get_mut(..n), data.get(..n)) {
            dst.copy_from_slice(src);
        }
        let info = &class.program.info;
        Pe {
            loc,
            class: class_index,
            mem,
            active: info.initially_active,
            blocked: info.initially_blocked,
            task: None,
            cur: Frame::default(),
            callers: Vec::new(),
            regs: Vec::new(),
            stall: 0,
            host_calls: VecDeque::new(),
            cmd_unblocked: false,
            in_worklist: false,
            busy_cycles: 0,
            instructions: 0,
            tasks_started: 0,
        }
    }

    /// Where the PE is.
    pub fn loc(&self) -> PeLoc {
        self.loc
    }
    /// Index of its program class in the image.
    pub fn class_index(&self) -> usize {
        self.class
    }
    /// Its memory (`PE_MEMORY_BYTES` bytes).
    pub fn memory(&self) -> &[u8] {
        &self.mem
    }
    /// Its memory, writable (for host-side loaders and tests).
    pub fn memory_mut(&mut self) -> &mut [u8] {
        &mut self.mem
    }
    /// Bit `i` set: task id `i` is activated.
    pub fn active(&self) -> u64 {
        self.active
    }
    /// Bit `i` set: task id `i` is blocked.
    pub fn blocked(&self) -> u64 {
        self.blocked
    }
    /// The id of the running task.
    pub fn running_task(&self) -> Option<u8> {
        self.task
    }
    /// Whether it stored to `HOST_CMD_UNBLOCK` since the current host command began.
    pub fn cmd_unblocked(&self) -> bool {
        self.cmd_unblocked
    }
    /// Cycles in which it executed an instruction or started a task.
    pub fn busy_cycles(&self) -> u64 {
        self.busy_cycles
    }
    /// Instructions executed.
    pub fn instructions(&self) -> u64 {
        self.instructions
    }
    /// Tasks (and host calls) started.
    pub fn tasks_started(&self) -> u64 {
        self.tasks_started
    }

    /// Whether the PE would do something if ticked.
    pub fn has_work(&self) -> bool {
        self.task.is_some()
            || self.stall > 0
            || !self.host_calls.is_empty()
            || self.active & !self.blocked != 0
    }

    /// Advances the PE by one cycle.
    #[inline]
    pub(crate) fn tick(&mut self, class: &Class, cycle: u64) -> Result<Tick, FaultKind> {
        if self.stall > 0 {
            self.stall -= 1;
            self.busy_cycles += 1;
            return Ok(Tick::Busy);
        }
        if self.task.is_some() {
            self.busy_cycles += 1;
            self.instructions += 1;
            return crate::exec::step(self, class, cycle);
        }
        if let Some(call) = self.host_calls.pop_front() {
            self.busy_cycles += 1;
            self.start_task(class, LAUNCH_TASK_ID, call.func, &call.args)?;
            return Ok(Tick::Busy);
        }
        let runnable = self.active & !self.blocked;
        if runnable == 0 {
            return Ok(Tick::Idle);
        }
        // Lowest runnable id first (see the module documentation).
        let id = runnable.trailing_zeros() as u8;
        self.active &= !(1u64 << id);
        self.busy_cycles += 1;
        let func = class
            .bindings
            .get(usize::from(id))
            .copied()
            .unwrap_or(NO_TASK);
        if func == NO_TASK {
            self.task = Some(id);
            self.cur = Frame {
                func: u32::MAX,
                ..Frame::default()
            };
            return Err(FaultKind::UnboundTask { id });
        }
        self.start_task(class, id, func, &[])?;
        Ok(Tick::Busy)
    }

    /// Starts function `func` as task `id` with `args` in `r0..`.
    fn start_task(
        &mut self,
        class: &Class,
        id: u8,
        func: u32,
        args: &[u32],
    ) -> Result<(), FaultKind> {
        self.task = Some(id);
        self.tasks_started += 1;
        self.stall = TASK_START_CYCLES.saturating_sub(1);
        self.callers.clear();
        let funcs = class.functions();
        let Some(f) = funcs.get(func as usize) else {
            self.cur = Frame {
                func: u32::MAX,
                ..Frame::default()
            };
            return Err(FaultKind::BadFunctionPointer {
                value: func,
                nfuncs: funcs.len() as u32,
            });
        };
        self.cur = Frame {
            func,
            pc: f.entry,
            base: 0,
            nregs: u32::from(f.nregs),
            sp: PE_MEMORY_BYTES,
            dst: 0,
        };
        if args.len() > usize::from(f.nregs) {
            return Err(FaultKind::TooManyArgs {
                callee: f.name.clone(),
                nargs: args.len(),
                nregs: f.nregs,
            });
        }
        self.cur.sp = frame_sp(PE_MEMORY_BYTES, f.frame_bytes)?;
        let n = usize::from(f.nregs);
        if self.regs.len() < n {
            self.regs.resize(n, 0);
        }
        if let Some(window) = self.regs.get_mut(..n) {
            window.fill(0);
            if let Some(head) = window.get_mut(..args.len()) {
                head.copy_from_slice(args);
            }
        }
        Ok(())
    }

    /// Pushes a frame for a call to `callee`; the caller resumes at `ret_pc`.
    #[inline]
    pub(crate) fn call(
        &mut self,
        class: &Class,
        callee: u32,
        args: Reg,
        nargs: u8,
        dst: Reg,
        ret_pc: u32,
    ) -> Result<(), FaultKind> {
        let funcs = class.functions();
        let Some(f) = funcs.get(callee as usize) else {
            return Err(FaultKind::BadFunctionPointer {
                value: callee,
                nfuncs: funcs.len() as u32,
            });
        };
        if u16::from(nargs) > f.nregs {
            return Err(FaultKind::TooManyArgs {
                callee: f.name.clone(),
                nargs: nargs.into(),
                nregs: f.nregs,
            });
        }
        if self.callers.len() + 1 >= MAX_CALL_DEPTH {
            return Err(FaultKind::CallDepthExceeded {
                limit: MAX_CALL_DEPTH,
            });
        }
        let sp = frame_sp(self.cur.sp, f.frame_bytes)?;
        let base = self.cur.base + self.cur.nregs;
        let nregs = u32::from(f.nregs);
        let end = (base + nregs) as usize;
        if end > MAX_REGISTER_WORDS {
            return Err(FaultKind::RegisterFileExhausted {
                limit: MAX_REGISTER_WORDS,
            });
        }
        if self.regs.len() < end {
            self.regs.resize(end, 0);
        }
        let src = (self.cur.base + u32::from(args.0)) as usize;
        let nargs = usize::from(nargs);
        // The class check guarantees that the argument registers lie in the caller's
        // frame; were it wrong, this reports a fault instead of panicking.
        if nargs > 0 && src + nargs > base as usize {
            return Err(FaultKind::TooManyArgs {
                callee: f.name.clone(),
                nargs,
                nregs: f.nregs,
            });
        }
        if let Some(window) = self.regs.get_mut(base as usize..end) {
            window.fill(0);
        }
        if nargs > 0 {
            self.regs.copy_within(src..src + nargs, base as usize);
        }
        let mut caller = self.cur;
        caller.pc = ret_pc;
        self.callers.push(caller);
        self.cur = Frame {
            func: callee,
            pc: f.entry,
            base,
            nregs,
            sp,
            dst: dst.0,
        };
        Ok(())
    }

    /// Returns from the current frame, delivering `value` to the caller's destination
    /// register. Returns `true` when the task's bottom frame returned (the task ended).
    #[inline]
    pub(crate) fn ret(&mut self, value: Option<u32>) -> Result<bool, FaultKind> {
        let Some(caller) = self.callers.last().copied() else {
            self.task = None;
            return Ok(true);
        };
        if let Some(v) = value {
            let dst = self.cur.dst;
            if u32::from(dst) >= caller.nregs {
                return Err(FaultKind::BadReturnRegister {
                    dst,
                    nregs: caller.nregs,
                });
            }
            if let Some(slot) = self.regs.get_mut((caller.base + u32::from(dst)) as usize) {
                *slot = v;
            }
        }
        self.callers.pop();
        self.cur = caller;
        Ok(false)
    }
}

/// The stack pointer of a frame of `frame_bytes` below `sp`, or a stack-overflow fault.
#[inline]
fn frame_sp(sp: u32, frame_bytes: u16) -> Result<u32, FaultKind> {
    match sp.checked_sub(u32::from(frame_bytes)) {
        Some(new) if new >= STACK_LIMIT => Ok(new),
        _ => Err(FaultKind::StackOverflow { sp, frame_bytes }),
    }
}
