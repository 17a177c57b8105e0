//! One cycle of a PE's compute engine: control-wavelet dispatch, microthreads, then the
//! main thread (a stall, a synchronous DSD operation, one instruction, or the task picker).
//!
//! # Order within a cycle (ours)
//!
//! 1. **Control dispatch.** A control wavelet at the head of a CE input queue whose channel
//!    (task id = colour on WSE-2, queue on WSE-3) is not blocked is removed; if a control
//!    task is bound to the id in its bits 21:16, that id is activated and the payload kept
//!    as its argument (one pending activation per id, like local tasks: a second control
//!    wavelet for the same id before the task runs replaces the argument). Otherwise it is
//!    dropped. A queue read by a running operation with `ON_CONTROL_TERMINATE` is left to
//!    that operation.
//! 2. **Microthreads** 0..=7, in order, each advance their asynchronous operation by one
//!    step.
//! 3. **Main thread**: a stall cycle; else one step of the synchronous DSD operation
//!    holding the running task; else one instruction of the running task; else the task
//!    picker.
//!
//! # Task picker (ours; the hardware order is undocumented)
//!
//! A task runs to completion. When a PE has no running task it starts, in this order:
//!
//! 1. a pending host call (`launch`), under task id
//!    [`LAUNCH_TASK_ID`](csl_arch::fabric::LAUNCH_TASK_ID): host calls come first so that a
//!    program that keeps re-activating its own tasks cannot starve the host's commands;
//! 2. otherwise the **lowest task id** that is runnable: activated and not blocked, or a
//!    data task whose input queue (colour on WSE-2) holds a data wavelet that has arrived,
//!    and not blocked. A data task pops one wavelet into its argument registers per its
//!    [`WaveletArgs`]; a local or control task clears its activation bit. If the id has no
//!    task bound the PE faults with [`FaultKind::UnboundTask`].
//!
//! Starting a task costs [`TASK_START_CYCLES`](crate::pe::TASK_START_CYCLES); its first
//! instruction runs in the next cycle.

use crate::class::Class;
use crate::dsd::{self, Env, Site, Step};
use crate::error::FaultKind;
use crate::pe::{Frame, Pe};
use crate::router::Router;
use csl_arch::fabric::LAUNCH_TASK_ID;
use csl_arch::image::{TaskKind, WaveletArgs};

/// What a CE did in one cycle.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CeOut {
    /// Something happened (an instruction, a task start, a DSD step, a dispatch).
    pub progressed: bool,
    /// Nothing happened but a wavelet it needs arrives in a later cycle.
    pub later: bool,
    /// It unblocked the host command stream for the first time.
    pub unblocked: bool,
    /// Its router must look at its buffers again.
    pub wake_router: bool,
    /// The instruction executed (its pc), for traces.
    pub retired: Option<u32>,
    /// The task started, for traces.
    pub started: Option<u8>,
}

/// A fault and where it happened (`None`: the running frame).
pub(crate) struct Fault {
    pub kind: FaultKind,
    pub site: Option<Site>,
}

impl From<FaultKind> for Fault {
    fn from(kind: FaultKind) -> Fault {
        Fault { kind, site: None }
    }
}

/// The argument registers of a data or control task triggered by `w`.
fn wavelet_args(how: WaveletArgs, w: u32) -> ([u32; 2], usize) {
    match how {
        WaveletArgs::None => ([0, 0], 0),
        WaveletArgs::Word => ([w, 0], 1),
        WaveletArgs::Low16 => ([w & 0xffff, 0], 1),
        WaveletArgs::Pair16 => ([w & 0xffff, w >> 16], 2),
    }
}

/// Advances the compute engine of `pe` by one cycle, reporting what it did in `out` (which
/// the caller resets; filled in place rather than returned, which cost a store-forwarding
/// stall per tick on the copy). `REC`: report DSD operations to the
/// PE's timeline recorder (`--perfetto`); the instance without it has no recording code.
#[inline]
pub(crate) fn tick<const REC: bool>(
    pe: &mut Pe,
    router: &mut Router,
    class: &Class,
    env: &Env,
    now: u64,
    out: &mut CeOut,
) -> Result<(), Fault> {
    if let Some(since) = pe.stalled_since.take() {
        pe.stalled_cycles += now.saturating_sub(since);
    }
    if pe.ctrl_heads & !(pe.blocked as u32) & !pe.term_bufs != 0 {
        dispatch_controls(pe, class, now, out);
    }
    if pe.ut_busy != 0 {
        run_microthreads::<REC>(pe, router, env, now, out)?;
    }
    // Whether the main thread acted this cycle (not a stall cycle): the task may then
    // run ahead (below).
    let mut acted = false;
    if pe.stall > 0 {
        pe.stall -= 1;
        if pe.ahead > 0 {
            pe.ahead -= 1;
            pe.instructions += 1;
        }
        out.progressed = true;
    } else if let Some(mut op) = pe.main_op.take() {
        match dsd::step(&mut op, pe, router, env, now, &mut out.wake_router) {
            Err(kind) => {
                let site = Some(op.site);
                pe.main_op = Some(op);
                return Err(Fault { kind, site });
            }
            Ok(Step::Progress) => {
                out.progressed = true;
                if env.run_ahead {
                    out.wake_router |= dsd::run_ahead(&mut op, pe, router, env, now);
                }
                pe.main_op = Some(op);
            }
            Ok(Step::Later) => {
                out.later = true;
                pe.main_op = Some(op);
            }
            Ok(Step::Wait(on)) => {
                op.waiting = Some(on);
                pe.main_op = Some(op);
            }
            Ok(Step::Done) => {
                out.progressed = true;
                if REC && let Some(r) = pe.perf.as_deref_mut() {
                    r.op_end(crate::perfetto::MAIN_SLOT, now);
                }
                dsd::complete(&op, pe);
                pe.recycle_op(op);
                acted = true;
            }
        }
    } else if pe.task.is_some() {
        let pc = pe.cur.pc;
        if crate::exec::step::<REC>(pe, router, class, env, now, out)? {
            pe.instructions += 1;
            out.progressed = true;
            out.retired = Some(pc);
            acted = true;
        }
    } else {
        pick(pe, class, now, out)?;
        acted = out.started.is_some();
    }
    // The instructions of the next cycles run now if nothing can tell (`exec::run_ahead`).
    if acted
        && env.run_ahead
        && !REC
        && !pe.traced
        && pe.stall == 0
        && pe.task.is_some()
        && pe.main_op.is_none()
    {
        crate::exec::run_ahead(pe, class, env, now);
    }
    if out.progressed {
        pe.busy_cycles += 1;
    } else if pe.task.is_some() || pe.ut_busy != 0 {
        pe.stalled_cycles += 1;
    }
    Ok(())
}

/// Takes the control wavelets at the heads of unblocked input queues (module docs).
fn dispatch_controls(pe: &mut Pe, class: &Class, now: u64, out: &mut CeOut) {
    let mut m = pe.ctrl_heads & !(pe.blocked as u32) & !pe.term_bufs;
    while m != 0 {
        let b = m.trailing_zeros() as usize;
        m &= m - 1;
        let ready = pe
            .inq
            .get(b)
            .and_then(|r| r.front())
            .is_some_and(|w| w.ready <= now);
        if !ready {
            out.later = true;
            continue;
        }
        let Some(w) = pe.ce_pop(b, now) else {
            continue;
        };
        if let Some(n) = pe.ctrl_seen.get_mut(b) {
            *n = n.wrapping_add(1);
        }
        out.progressed = true;
        out.wake_router = true;
        let id = csl_arch::fabric::control::task_id(w.data);
        if class.kind(id) == Some(TaskKind::Control) {
            pe.active |= 1 << id;
            if let Some(slot) = pe.ctrl_args.get_mut(usize::from(id)) {
                *slot = w.data;
            }
        }
    }
}

fn run_microthreads<const REC: bool>(
    pe: &mut Pe,
    router: &mut Router,
    env: &Env,
    now: u64,
    out: &mut CeOut,
) -> Result<(), Fault> {
    let mut m = pe.ut_busy;
    while m != 0 {
        let u = m.trailing_zeros() as usize;
        m &= m - 1;
        let Some(mut op) = pe.uts.get_mut(u).and_then(Option::take) else {
            pe.ut_busy &= !(1 << u);
            continue;
        };
        let r = dsd::step(&mut op, pe, router, env, now, &mut out.wake_router);
        let done = match r {
            Err(kind) => {
                let site = Some(op.site);
                if let Some(slot) = pe.uts.get_mut(u) {
                    *slot = Some(op);
                }
                return Err(Fault { kind, site });
            }
            Ok(Step::Progress) => {
                out.progressed = true;
                false
            }
            Ok(Step::Later) => {
                out.later = true;
                false
            }
            Ok(Step::Wait(on)) => {
                op.waiting = Some(on);
                false
            }
            Ok(Step::Done) => {
                out.progressed = true;
                true
            }
        };
        if done {
            if REC && let Some(r) = pe.perf.as_deref_mut() {
                r.op_end(u, now);
            }
            pe.ut_busy &= !(1 << u);
            dsd::complete(&op, pe);
            pe.recycle_op(op);
        } else if let Some(slot) = pe.uts.get_mut(u) {
            *slot = Some(op);
        }
    }
    Ok(())
}

/// The task picker (module docs).
fn pick(pe: &mut Pe, class: &Class, now: u64, out: &mut CeOut) -> Result<(), Fault> {
    if let Some(call) = pe.host_calls.pop_front() {
        out.progressed = true;
        out.started = Some(LAUNCH_TASK_ID);
        pe.start_task(class, LAUNCH_TASK_ID, call.func, &call.args)?;
        return Ok(());
    }
    let local = pe.active & !pe.blocked;
    let mut data = pe.inq_nonempty & !pe.ctrl_heads & class.data_bound & !(pe.blocked as u32);
    let mut ready = 0u32;
    while data != 0 {
        let b = data.trailing_zeros() as usize;
        data &= data - 1;
        if pe
            .inq
            .get(b)
            .and_then(|r| r.front())
            .is_some_and(|w| w.ready <= now)
        {
            ready |= 1 << b;
        } else {
            out.later = true;
        }
    }
    let cand = local | u64::from(ready);
    if cand == 0 {
        return Ok(());
    }
    // High-priority ids first; within a class, round robin: the lowest id above the one
    // started last, else the lowest id (documented in SIMULATOR.md).
    let high = cand & pe.high_priority;
    let pool = if high != 0 { high } else { cand };
    let above = pe
        .last_picked
        .and_then(|l| u64::MAX.checked_shl(u32::from(l) + 1))
        .unwrap_or(u64::MAX);
    let id = if pool & above != 0 {
        (pool & above).trailing_zeros()
    } else {
        pool.trailing_zeros()
    } as u8;
    pe.last_picked = Some(id);
    out.progressed = true;
    out.started = Some(id);
    let Some(func) = class.binding(id) else {
        pe.active &= !(1u64 << id);
        pe.task = Some(id);
        pe.cur = Frame {
            func: u32::MAX,
            ..Frame::default()
        };
        return Err(FaultKind::UnboundTask { id }.into());
    };
    let how = class.args.get(usize::from(id)).copied().unwrap_or_default();
    let (args, n) = if u64::from(ready) >> id & 1 == 1 {
        out.wake_router = true;
        let w = pe.ce_pop(usize::from(id), now).map_or(0, |w| w.data);
        wavelet_args(how, w)
    } else {
        pe.active &= !(1u64 << id);
        if class.kind(id) == Some(TaskKind::Control) {
            let w = pe.ctrl_args.get(usize::from(id)).copied().unwrap_or(0);
            wavelet_args(how, w)
        } else {
            ([0, 0], 0)
        }
    };
    pe.start_task(class, id, func, args.get(..n).unwrap_or(&[]))?;
    Ok(())
}
