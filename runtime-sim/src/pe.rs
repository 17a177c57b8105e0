//! The state of one processing element: its memory, task state, call stack, CE input
//! queues, DSD operations in progress and counters. The per-cycle behaviour (task picker,
//! control-wavelet dispatch, microthreads) is in `ce`.
//!
//! # Call stack
//!
//! Each call frame has its own registers, kept in one register stack per PE (a frame is a
//! window `base .. base + nregs` of it, so calls do not allocate once the stack has grown).
//! The memory stack pointer starts at [`PE_MEMORY_BYTES`]; each frame (the task's bottom
//! frame included) takes its function's `frame_bytes` below its caller's, and may not go
//! below `PE_MEMORY_BYTES - STACK_BYTES`.

use crate::class::Class;
use crate::dsd::DsdExec;
use crate::error::{FaultKind, PeLoc};
use crate::mem::Mem;
use crate::params::SimParams;
use crate::ring::{Ring, Wavelet};
use csl_arch::fabric::{Arch, NUM_COLORS, NUM_TASK_IDS, PE_MEMORY_BYTES, STACK_BYTES};
use csl_arch::isa::{Reg, Width};
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

/// Marks a colour bound to no CE input queue in [`Pe::color_inq`].
pub(crate) const NO_QUEUE: u8 = u8::MAX;

/// Number of microthreads per PE ([`csl_arch::fabric::MICROTHREADS`], as an index bound).
pub const MICROTHREADS: usize = csl_arch::fabric::MICROTHREADS as usize;

/// One processing element.
///
/// `repr(C)`, 64-byte aligned, with the fields a CE tick reads first: the running frame,
/// the stall and task state, the worklist-relevant masks, the register stack, the class,
/// the counters a tick updates, the CE input buffers, the run-ahead store log, the spare
/// DSD boxes and the pending host calls lie in the first five cache lines, then the
/// memory (its page table first), the microthreads' operations and the rarely used state.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Pe {
    /// The running frame (meaningful while `task` is set).
    pub(crate) cur: Frame,
    /// Cycles left before the PE can do anything else.
    pub(crate) stall: u32,
    /// Of the `stall` cycles, those that stand for instructions already executed ahead
    /// (`exec::run_ahead`): each counts as one instruction in its cycle.
    pub(crate) ahead: u32,
    /// Bit per CE input buffer: its oldest wavelet is a control wavelet.
    pub(crate) ctrl_heads: u32,
    /// Bit per CE input buffer: read by a running operation that ends on a control
    /// wavelet or takes control wavelets as data (`control_transform`): the operation,
    /// not the dispatcher, takes control wavelets there.
    pub(crate) term_bufs: u32,
    /// Bit per CE input buffer: not empty.
    pub(crate) inq_nonempty: u32,
    /// The running task's id, if any.
    pub(crate) task: Option<u8>,
    /// The id the task picker started last: the next pick looks above it first.
    pub(crate) last_picked: Option<u8>,
    /// Bit per microthread: running an operation.
    pub(crate) ut_busy: u8,
    /// Whether the tracer follows this PE.
    pub(crate) traced: bool,
    pub(crate) cmd_unblocked: bool,
    /// Number of CE input buffers (the first `ninq` entries of `inq_cap` are used).
    pub(crate) ninq: u8,
    /// The stores of `ahead_stores` not due yet are taken back (between two runs).
    pub(crate) stores_held: bool,
    pub(crate) active: u64,
    pub(crate) blocked: u64,
    /// Bit `i`: task id `i` has high priority (the `TASK_PRIORITY` register).
    pub(crate) high_priority: u64,
    /// The synchronous DSD operation holding the running task.
    pub(crate) main_op: Option<Box<DsdExec>>,
    /// Register stack.
    pub(crate) regs: Vec<u32>,
    pub(crate) class: usize,
    pub(crate) busy_cycles: u64,
    /// While the PE sleeps through its stall (`sim`: it is off the CE worklist until
    /// cycle `sleep_until`, or until something wakes it): the first stall cycle not yet
    /// counted. `sleep_until` is 0 while it is awake.
    pub(crate) sleep_from: u64,
    pub(crate) sleep_until: u64,
    pub(crate) instructions: u64,
    pub(crate) tasks_started: u64,
    pub(crate) dsd_elements: u64,
    /// CE input buffers: one per colour (WSE-2) or per input queue (WSE-3), indexed by
    /// buffer; allocated up to the highest buffer a wavelet has reached so far (a missing
    /// buffer is empty), so PEs that never receive one cost nothing here.
    pub(crate) inq: Vec<Ring>,
    /// The stores of the last run-ahead stretch (`exec::run_ahead`), oldest first.
    pub(crate) ahead_stores: Vec<AheadStore>,
    /// Boxes of finished operations, reused by the next ones (kept boxed: they move
    /// into `main_op` and `uts` without allocating).
    #[allow(clippy::vec_box)]
    pub(crate) spare_ops: Vec<Box<DsdExec>>,
    /// Set when the PE went to sleep with work it could not progress: the cycle from
    /// which its stalled cycles are counted lazily.
    pub(crate) stalled_since: Option<u64>,
    pub(crate) stalled_cycles: u64,
    pub(crate) host_calls: VecDeque<HostCall>,
    /// Saved caller frames of the running task.
    pub(crate) callers: Vec<Frame>,
    /// The CE input buffer of each colour, or [`NO_QUEUE`].
    pub(crate) color_inq: [u8; NUM_COLORS as usize],
    /// Capacity of each CE input buffer.
    pub(crate) inq_cap: [u8; NUM_COLORS as usize],
    /// Its memory, paged (module `mem`).
    pub(crate) mem: Mem,
    /// Asynchronous DSD operations per microthread.
    pub(crate) uts: [Option<Box<DsdExec>>; MICROTHREADS],
    /// Its timeline events (`--perfetto`), when it is recorded.
    pub(crate) perf: Option<Box<crate::perfetto::PeRecorder>>,
    /// The timestamp counter as latched by the last read of its low word.
    pub(crate) tsc_latch: u64,
    pub(crate) loc: PeLoc,
    /// Control wavelets taken from each CE input buffer so far (for `@dfilt`).
    pub(crate) ctrl_seen: Vec<u32>,
    /// The `<simprint>` line being built.
    pub(crate) print_buf: Vec<u8>,
    /// Finished `<simprint>` lines with the cycle each ended at.
    pub(crate) log: Vec<(u64, String)>,
    /// Payload of the control wavelet that last activated each control task id.
    pub(crate) ctrl_args: [u32; NUM_TASK_IDS as usize],
}

/// A store executed ahead of its cycle (`exec::run_ahead`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct AheadStore {
    /// The cycle it stands for.
    pub due: u64,
    pub addr: u32,
    pub w: Width,
    /// The value before it, and the one it stores.
    pub old: u32,
    pub new: u32,
}

impl Pe {
    /// A PE in its reset state running `class` (memory initialised from the class's data).
    pub(crate) fn new(
        loc: PeLoc,
        class_index: usize,
        class: &Class,
        arch: Arch,
        params: &SimParams,
    ) -> Pe {
        // Pages hold the class's initial data until written (shared by its PEs).
        let mem = Mem::new(Arc::clone(&class.init));
        let info = &class.program.info;
        // CE input buffers: WSE-2 one per colour (depth of the queue bound to it, if any),
        // WSE-3 one per input queue (bound to colours by `@initialize_queue`).
        let mut color_inq = [NO_QUEUE; NUM_COLORS as usize];
        let mut caps: Vec<u8> = match arch {
            Arch::Wse2 => {
                for (c, slot) in color_inq.iter_mut().enumerate() {
                    *slot = c as u8;
                }
                let d = params
                    .wse2_color_input_depth
                    .clamp(1, crate::ring::MAX_RING as u32);
                vec![d as u8; NUM_COLORS.into()]
            }
            Arch::Wse3 => (0..8u8)
                .map(|q| arch.input_queue_depth(q).unwrap_or(4) as u8)
                .collect(),
        };
        let mut blocked = info.initially_blocked;
        for b in &info.input_queues {
            match arch {
                Arch::Wse2 => {
                    if let (Some(cap), Some(d)) = (
                        caps.get_mut(usize::from(b.color)),
                        arch.input_queue_depth(b.queue),
                    ) {
                        *cap = d as u8;
                    }
                }
                Arch::Wse3 => {
                    if let Some(slot) = color_inq.get_mut(usize::from(b.color))
                        && *slot == NO_QUEUE
                        && b.queue < 8
                    {
                        *slot = b.queue;
                    }
                }
            }
        }
        if arch == Arch::Wse3 {
            for &q in &info.blocked_queues {
                if q < 8 {
                    blocked |= 1 << q;
                }
            }
        }
        let mut inq_cap = [0u8; NUM_COLORS as usize];
        for (slot, c) in inq_cap.iter_mut().zip(&caps) {
            *slot = (*c).clamp(1, crate::ring::MAX_RING as u8);
        }
        let ninq = caps.len().min(inq_cap.len()) as u8;
        Pe {
            loc,
            class: class_index,
            mem,
            active: info.initially_active,
            blocked,
            task: None,
            cur: Frame::default(),
            callers: Vec::new(),
            regs: Vec::new(),
            stall: 0,
            ahead: 0,
            host_calls: VecDeque::new(),
            cmd_unblocked: false,
            ctrl_seen: vec![0; 32],
            high_priority: 0,
            last_picked: None,
            print_buf: Vec::new(),
            log: Vec::new(),
            inq: Vec::new(),
            inq_cap,
            ninq,
            color_inq,
            inq_nonempty: 0,
            ctrl_heads: 0,
            term_bufs: 0,
            ctrl_args: [0; NUM_TASK_IDS as usize],
            main_op: None,
            uts: Default::default(),
            ut_busy: 0,
            spare_ops: Vec::new(),
            ahead_stores: Vec::new(),
            stores_held: false,
            stalled_since: None,
            tsc_latch: 0,
            traced: false,
            perf: None,
            busy_cycles: 0,
            sleep_from: 0,
            sleep_until: 0,
            stalled_cycles: 0,
            instructions: 0,
            tasks_started: 0,
            dsd_elements: 0,
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
    /// Its memory (`PE_MEMORY_BYTES` bytes) as one slice. Memory is paged (module
    /// `mem`): this assembles a copy, kept until the PE's next write, so it costs 48 KB
    /// per PE it is called on. Readers of a few bytes or of many PEs use
    /// [`Pe::read_memory`] or [`Pe::read_word`].
    pub fn memory(&self) -> &[u8] {
        self.mem.contiguous()
    }
    /// The `len` bytes at byte address `addr` (`None` if they pass the end of memory).
    pub fn read_memory(&self, addr: u32, len: usize) -> Option<Vec<u8>> {
        self.mem.read_vec(addr as usize, len)
    }
    /// The little-endian value of width `w` at byte address `addr` (`None` if it passes
    /// the end of memory).
    pub fn read_word(&self, addr: u32, w: csl_arch::isa::Width) -> Option<u32> {
        self.mem.read(addr, w)
    }
    /// Whether this PE sleeps in a stall that ends in cycle `now` (a timer entry that
    /// does not pass this is stale: the PE was woken early).
    pub(crate) fn stall_ends(&self, now: u64) -> bool {
        self.sleep_until == now
    }
    /// Bytes of memory pages this PE has written (the rest costs nothing).
    pub fn memory_allocated(&self) -> usize {
        self.mem.allocated_bytes()
    }
    /// Writes `bytes` at byte address `addr`; bytes past the end of memory are dropped.
    pub fn write_bytes(&mut self, addr: u32, bytes: &[u8]) {
        let start = (addr as usize).min(self.mem.len());
        let end = start.saturating_add(bytes.len()).min(self.mem.len());
        if let Some(src) = bytes.get(..end - start) {
            self.mem.write_from(start, src);
        }
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
    /// Cycles in which it executed an instruction, started a task, or moved a DSD element.
    pub fn busy_cycles(&self) -> u64 {
        self.busy_cycles
    }
    /// Wavelets waiting in the CE input buffer of colour `c` (WSE-3: the queue bound to it).
    pub fn input_queued(&self, c: u8) -> usize {
        self.color_inq
            .get(usize::from(c))
            .and_then(|&b| self.inq.get(usize::from(b)))
            .map_or(0, Ring::len)
    }
    /// Whether a synchronous DSD operation holds the running task.
    pub fn in_sync_op(&self) -> bool {
        self.main_op.is_some()
    }
    /// Bit `u` set: microthread `u` runs an asynchronous DSD operation.
    pub fn busy_microthreads(&self) -> u8 {
        self.ut_busy
    }
    /// Instructions executed.
    pub fn instructions(&self) -> u64 {
        self.instructions
    }
    /// Tasks (and host calls) started.
    pub fn tasks_started(&self) -> u64 {
        self.tasks_started
    }

    /// Whether the CE's main thread is free for the memcpy runtime: no task running or
    /// ready to run, no synchronous operation, no pending host call. Microthreads may still
    /// be busy.
    pub fn main_thread_free(&self) -> bool {
        self.task.is_none()
            && self.stall == 0
            && self.host_calls.is_empty()
            && self.active & !self.blocked == 0
    }

    /// Whether the PE would do something if ticked (ignoring wavelets not yet arrived).
    pub fn has_work(&self) -> bool {
        self.task.is_some()
            || self.stall > 0
            || !self.host_calls.is_empty()
            || self.active & !self.blocked != 0
            || self.ut_busy != 0
            || self.inq_nonempty != 0
    }

    /// Whether colour `c`'s CE input buffer can take a wavelet in cycle `now` (`None`: the
    /// colour is bound to no input queue).
    #[inline]
    pub(crate) fn ce_room(&self, c: u8, now: u64) -> Option<bool> {
        let b = *self.color_inq.get(usize::from(c))?;
        if b >= self.ninq {
            return None;
        }
        let b = usize::from(b);
        let cap = usize::from(*self.inq_cap.get(b)?);
        // A buffer not allocated yet is empty.
        Some(self.inq.get(b).is_none_or(|ring| ring.has_room(cap, now)))
    }

    /// Appends `w` to colour `c`'s CE input buffer (the caller checked [`Pe::ce_room`]).
    #[inline]
    pub(crate) fn ce_push(&mut self, c: u8, w: Wavelet) {
        let Some(&b) = self.color_inq.get(usize::from(c)) else {
            return;
        };
        // Buffers up to this one exist from now on (a PE receiving on a few low colours
        // has a few small rings, close together, not one per colour).
        if b < self.ninq && self.inq.len() <= usize::from(b) {
            self.inq.resize(usize::from(b) + 1, Ring::default());
        }
        if let Some(ring) = self.inq.get_mut(usize::from(b)) {
            let was_empty = ring.is_empty();
            if ring.push(w) {
                self.inq_nonempty |= 1 << b;
                if was_empty && w.is_ctrl() {
                    self.ctrl_heads |= 1 << b;
                }
            }
        }
    }

    /// Removes the oldest wavelet of CE input buffer `b`.
    #[inline]
    pub(crate) fn ce_pop(&mut self, b: usize, now: u64) -> Option<Wavelet> {
        let ring = self.inq.get_mut(b)?;
        let w = ring.pop(now);
        let bit = 1u32 << b;
        match ring.front() {
            None => {
                self.inq_nonempty &= !bit;
                self.ctrl_heads &= !bit;
            }
            Some(h) if h.is_ctrl() => self.ctrl_heads |= bit,
            Some(_) => self.ctrl_heads &= !bit,
        }
        w
    }

    /// Starts function `func` as task `id` with `args` in `r0..`.
    pub(crate) fn start_task(
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

impl Pe {
    /// The stall cycles a sleeping PE has passed before cycle `now` that are not counted
    /// yet, and how many of them stand for instructions run ahead.
    #[inline]
    pub(crate) fn slept(&self, now: u64) -> (u32, u32) {
        if self.sleep_until == 0 {
            return (0, 0);
        }
        let n = now
            .saturating_sub(self.sleep_from)
            .min(u64::from(self.stall)) as u32;
        (n, n.min(self.ahead))
    }

    /// Counts the stall cycles a sleeping PE has passed before `now` as its ticks would
    /// have (one busy cycle each, one instruction for each instruction run ahead).
    #[inline]
    pub(crate) fn catch_up(&mut self, now: u64) {
        let (n, a) = self.slept(now);
        self.stall -= n;
        self.ahead -= a;
        self.busy_cycles += u64::from(n);
        self.instructions += u64::from(a);
        self.sleep_from = now;
    }
}

impl Pe {
    /// Takes back the stores that ran ahead for cycle `now` or later (the clock stands at
    /// `now`: a run returns), newest first, so that the host sees the memory of cycle
    /// `now`; [`Pe::release_stores`] makes them again.
    pub(crate) fn hold_stores(&mut self, now: u64) {
        if self.stores_held {
            return;
        }
        for s in self.ahead_stores.iter().rev() {
            if s.due < now {
                break;
            }
            self.mem.write(s.addr, s.w, s.old);
            self.stores_held = true;
        }
    }

    /// Makes the stores [`Pe::hold_stores`] took back again, oldest first (a run starts
    /// at cycle `now`); they come after anything the host wrote in between, as they would
    /// have in their cycles.
    pub(crate) fn release_stores(&mut self, now: u64) {
        if !self.stores_held {
            return;
        }
        self.stores_held = false;
        for s in &self.ahead_stores {
            if s.due >= now {
                self.mem.write(s.addr, s.w, s.new);
            }
        }
    }

    /// Keeps the box of a finished DSD operation for the next one (at most one per thread).
    #[inline]
    pub(crate) fn recycle_op(&mut self, op: Box<DsdExec>) {
        if self.spare_ops.len() <= MICROTHREADS {
            self.spare_ops.push(op);
        }
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

impl Pe {
    /// The simulator-log lines this PE printed, with the cycle each was finished at.
    pub fn log(&self) -> &[(u64, String)] {
        &self.log
    }
}
