//! The interpreter: [`step`] executes one instruction of a PE's running task (one cycle).
//!
//! Semantics follow the machine model in [`csl_arch::isa`]; the arithmetic is in
//! [`crate::alu`], DSD operations in [`crate::dsd`]. Register indices are not re-checked
//! here: [`crate::class::Class::prepare`] proved at load time that every instruction a
//! frame can reach names only registers of that frame.
//!
//! Costs (ours): one cycle per instruction, except branches and jumps, which take
//! [`crate::SimParams::branch_taken_cycles`] or `branch_not_taken_cycles` (1 by default);
//! `copy` of `n` bytes takes `ceil(n / 4)` cycles
//! (one 32-bit write per cycle); a synchronous `dsd_op` holds the task until its operation
//! completes (see [`crate::dsd`]).

use crate::alu;
use crate::ce::CeOut;
use crate::class::Class;
use crate::decode::Fast;
use crate::dsd::{self, Env, IssueArgs, Issued, Site};
use crate::error::FaultKind;
use crate::mem::Mem;
use crate::pe::{AheadStore, Pe};
use crate::router::Router;
use csl_arch::dsd::{DESC_BYTES, DsdField, field};
use csl_arch::fabric::{NUM_COLORS, PE_MEMORY_BYTES, mmio};
use csl_arch::isa::{Op, Width};

/// Executes the instruction at the running frame's pc. Returns `false` if the instruction
/// could not execute this cycle (an asynchronous `dsd_op` whose microthread is busy) and
/// must be retried.
/// A `<simprint>` line longer than this is flushed as it is.
const PRINT_LINE_MAX: usize = 1024;

#[inline]
pub(crate) fn step<const REC: bool>(
    pe: &mut Pe,
    router: &mut Router,
    class: &Class,
    env: &Env,
    now: u64,
    out: &mut CeOut,
) -> Result<bool, FaultKind> {
    let pc = pe.cur.pc;
    let base = pe.cur.base as usize;
    let mut next = pc.wrapping_add(1);
    // The pre-decoded fast forms (module `decode`) first.
    let Some(&fast) = class.fast().get(pc as usize) else {
        return Err(FaultKind::PcOutOfRange { pc });
    };
    if let Some(next) = FastState::of(pe, base)
        .and_then(|mut st| exec_fast::<false>(&mut st, env, fast, pc, true, now))
    {
        pe.cur.pc = next;
        return Ok(true);
    }
    let Some(&op) = class.code().get(pc as usize) else {
        return Err(FaultKind::PcOutOfRange { pc });
    };
    // Register `r` of the running frame.
    macro_rules! r {
        ($reg:expr) => {
            pe.regs[base + usize::from($reg.0)]
        };
    }
    match op {
        Op::Nop {} => {}
        Op::DsdOp {
            op,
            kinds,
            cfg,
            done,
            ut,
            dst,
            a,
            b,
            c,
            idx,
        } => {
            let args = IssueArgs {
                op,
                kinds,
                cfg,
                done,
                ut,
                vals: [r!(dst), r!(a), r!(b), r!(c), r!(idx)],
                site: Site {
                    task: pe.task,
                    func: pe.cur.func,
                    pc,
                },
            };
            match dsd::issue(pe, &class.out_queue_color, env, &args)? {
                Issued::Sync(mut exec) => {
                    if REC && let Some(r) = pe.perf.as_deref_mut() {
                        r.op_start(crate::perfetto::MAIN_SLOT, exec.op.name(), now);
                    }
                    // The setup cycles of a synchronous operation change nothing but its
                    // counter: they become stall cycles of the PE, which can sleep
                    // through them (busy cycles either way). Not on traced or recorded
                    // PEs, whose every tick is seen.
                    if env.run_ahead && !REC && !pe.traced {
                        pe.stall += exec.setup;
                        exec.setup = 0;
                    }
                    pe.main_op = Some(exec);
                }
                Issued::Async => {
                    if REC && let Some(r) = pe.perf.as_deref_mut() {
                        r.op_start(usize::from(ut & 7), op.name(), now);
                    }
                }
                Issued::UtBusy => return Ok(false),
            }
        }
        Op::DsdSet {
            field: f,
            desc,
            val,
        } => {
            let a = dsd::check_desc(r!(desc))?;
            let v = r!(val);
            let (off, value) = match f {
                DsdField::Base => (field::BASE, v as u16),
                DsdField::AddBase => {
                    let old = pe.mem.read(a as u32 + field::BASE, Width::W16).unwrap_or(0) as u16;
                    (field::BASE, old.wrapping_add(v as u16))
                }
                DsdField::Length => (field::LENGTH, v as u16),
                DsdField::Stride => (field::STRIDE, v as u16),
                DsdField::FifoRead => (field::FIFO_READ_LEN, v as u16),
                DsdField::FifoWrite => (field::FIFO_WRITE_LEN, v as u16),
            };
            debug_assert!(off + 2 <= DESC_BYTES);
            mem_write(&mut pe.mem, (a as u32) + off, Width::W16, u32::from(value))?;
        }
        Op::Copy { dst, src, bytes } => {
            let (d, s, n) = (r!(dst), r!(src), u32::from(bytes));
            for (addr, what) in [(s, s), (d, d)] {
                if u64::from(addr) + u64::from(n) > u64::from(PE_MEMORY_BYTES) {
                    return Err(FaultKind::MemoryOutOfBounds {
                        addr: what,
                        width: n,
                    });
                }
            }
            let (s, d, n) = (s as usize, d as usize, n as usize);
            pe.mem.copy_within(s, d, n);
            pe.stall = (n as u32).div_ceil(4).saturating_sub(1);
        }
        Op::Imm { dst, imm } => r!(dst) = imm,
        Op::Mov { dst, src } => r!(dst) = r!(src),
        Op::Bin { op, ty, dst, a, b } => {
            r!(dst) = alu::bin(op, ty, r!(a), r!(b)).map_err(|_| FaultKind::DivisionByZero)?
        }
        Op::Cmp { op, ty, dst, a, b } => r!(dst) = u32::from(alu::cmp(op, ty, r!(a), r!(b))),
        Op::Un { op, ty, dst, a } => r!(dst) = alu::un(op, ty, r!(a)),
        Op::Conv { to, from, dst, src } => r!(dst) = alu::conv(to, from, r!(src)),
        Op::ConvR {
            mode,
            to,
            from,
            dst,
            src,
        } => r!(dst) = alu::conv_round(csl_arch::isa::RoundMode::from_u8(mode), to, from, r!(src)),
        Op::UtWait { mask } => {
            if pe.ut_busy & mask != 0 {
                return Ok(false);
            }
        }
        Op::BinImm {
            op,
            ty,
            dst,
            a,
            imm,
        } => r!(dst) = alu::bin(op, ty, r!(a), imm).map_err(|_| FaultKind::DivisionByZero)?,
        Op::CmpImm {
            op,
            ty,
            dst,
            a,
            imm,
        } => r!(dst) = u32::from(alu::cmp(op, ty, r!(a), imm)),
        Op::Load { w, dst, addr } => r!(dst) = load(pe, router, r!(addr), w, now)?,
        Op::LoadOff { w, dst, addr, off } => {
            r!(dst) = load(pe, router, offset_addr(r!(addr), off), w, now)?
        }
        Op::Store { w, addr, src } => store(pe, router, out, r!(addr), w, r!(src), now)?,
        Op::StoreOff { w, addr, off, src } => {
            let a = offset_addr(r!(addr), off);
            store(pe, router, out, a, w, r!(src), now)?
        }
        Op::FrameAddr { dst, off } => r!(dst) = pe.cur.sp + u32::from(off),
        Op::Jump { target } => next = target,
        Op::BrTrue { cond, target } => {
            if r!(cond) != 0 {
                next = target;
            }
        }
        Op::BrFalse { cond, target } => {
            if r!(cond) == 0 {
                next = target;
            }
        }
        Op::Call {
            func,
            args,
            nargs,
            dst,
        } => {
            pe.call(class, func, args, nargs, dst, next)?;
            return Ok(true);
        }
        Op::CallInd {
            fptr,
            args,
            nargs,
            dst,
        } => {
            let func = r!(fptr);
            pe.call(class, func, args, nargs, dst, next)?;
            return Ok(true);
        }
        Op::Ret { src } => {
            let v = r!(src);
            pe.ret(Some(v))?;
            return Ok(true);
        }
        Op::RetVoid {} => {
            pe.ret(None)?;
            return Ok(true);
        }
        Op::Activate { id } => pe.active |= task_bit(r!(id)),
        Op::Block { id } => pe.blocked |= task_bit(r!(id)),
        Op::Unblock { id } => pe.blocked &= !task_bit(r!(id)),
        Op::Trap { code } => return Err(FaultKind::Trap { code }),
    }
    pe.cur.pc = next;
    Ok(true)
}

/// The parts of a PE that the fast forms touch, borrowed apart (the running frame's
/// registers, the memory, the log of stores run ahead, the stall counter), so that a
/// stretch of fast forms keeps them in registers instead of reloading them through the
/// `Pe` after every write.
pub(crate) struct FastState<'a> {
    /// The running frame's registers (index 0 is register 0 of the frame).
    pub regs: &'a mut [u32],
    pub mem: &'a mut Mem,
    pub log: &'a mut Vec<AheadStore>,
    pub stall: &'a mut u32,
}

impl<'a> FastState<'a> {
    /// The state of `pe` for the frame whose registers start at `base` (`None` if the
    /// register file is shorter, which `Class::prepare` rules out).
    #[inline(always)]
    pub(crate) fn of(pe: &'a mut Pe, base: usize) -> Option<FastState<'a>> {
        let Pe {
            regs,
            mem,
            ahead_stores,
            stall,
            ..
        } = pe;
        Some(FastState {
            regs: regs.get_mut(base..)?,
            mem,
            log: ahead_stores,
            stall,
        })
    }

    /// Register `r` of the frame (0 past its end, which `Class::prepare` rules out).
    #[inline(always)]
    fn get(&self, r: u16) -> u32 {
        self.regs.get(usize::from(r)).copied().unwrap_or(0)
    }

    /// Sets register `r`; `None` past the frame's end (nothing written).
    #[inline(always)]
    fn set(&mut self, r: u16, v: u32) -> Option<()> {
        *self.regs.get_mut(usize::from(r))? = v;
        Some(())
    }
}

/// Executes the fast form `fast` of the instruction at `pc` (the frame's state `st`);
/// returns the next pc, or `None` (nothing done) for [`Fast::Slow`], for a return, for a
/// load or store outside SRAM (a memory-mapped register, or a fault: the general
/// interpreter does them) and for any load or store unless `mem`. `AHEAD`: the
/// instruction runs ahead for cycle `due` (`run_ahead`), and a store is logged so that it
/// can be held back from the host (`Pe::hold_stores`).
#[inline(always)]
fn exec_fast<const AHEAD: bool>(
    st: &mut FastState<'_>,
    env: &Env,
    fast: Fast,
    pc: u32,
    mem: bool,
    due: u64,
) -> Option<u32> {
    let mut next = pc.wrapping_add(1);
    if let Some((dst, v)) = fast.int(st.regs) {
        st.set(dst, v)?;
        return Some(next);
    }
    match fast {
        // (Integer operations are done above.)
        Fast::Slow | Fast::Ret { .. } | Fast::RetVoid => return None,
        Fast::Imm { dst, imm } => st.set(dst, imm)?,
        Fast::Mov { dst, src } => st.set(dst, st.get(src))?,
        // An integer division by zero does nothing here: the general interpreter faults.
        Fast::Bin { op, ty, dst, a, b } => {
            st.set(dst, alu::bin(op, ty, st.get(a), st.get(b)).ok()?)?;
        }
        Fast::BinImm {
            op,
            ty,
            dst,
            a,
            imm,
        } => st.set(dst, alu::bin(op, ty, st.get(a), imm).ok()?)?,
        Fast::Cmp { op, ty, dst, a, b } => {
            st.set(dst, u32::from(alu::cmp(op, ty, st.get(a), st.get(b))))?;
        }
        Fast::CmpImm {
            op,
            ty,
            dst,
            a,
            imm,
        } => st.set(dst, u32::from(alu::cmp(op, ty, st.get(a), imm)))?,
        Fast::Un { op, ty, dst, a } => st.set(dst, alu::un(op, ty, st.get(a)))?,
        Fast::Conv { to, from, dst, src } => st.set(dst, alu::conv(to, from, st.get(src)))?,
        Fast::Jump { target } => {
            next = target;
            *st.stall += env.branch_taken_extra;
        }
        Fast::BrTrue { cond, target } => {
            if st.get(cond) != 0 {
                next = target;
                *st.stall += env.branch_taken_extra;
            } else {
                *st.stall += env.branch_not_taken_extra;
            }
        }
        Fast::BrFalse { cond, target } => {
            if st.get(cond) == 0 {
                next = target;
                *st.stall += env.branch_taken_extra;
            } else {
                *st.stall += env.branch_not_taken_extra;
            }
        }
        Fast::Load { w, dst, addr } => {
            if !mem {
                return None;
            }
            let v = sram_read(st.mem, st.get(addr), w)?;
            st.set(dst, v)?;
        }
        Fast::LoadOff { w, dst, addr, off } => {
            if !mem {
                return None;
            }
            let v = sram_read(st.mem, offset_addr(st.get(addr), off), w)?;
            st.set(dst, v)?;
        }
        Fast::Store { w, addr, src } => {
            if !mem {
                return None;
            }
            let (a, v) = (st.get(addr), st.get(src));
            sram_write::<AHEAD>(st.mem, st.log, a, w, v, due)?;
        }
        Fast::StoreOff { w, addr, off, src } => {
            if !mem {
                return None;
            }
            let (a, v) = (offset_addr(st.get(addr), off), st.get(src));
            sram_write::<AHEAD>(st.mem, st.log, a, w, v, due)?;
        }
        _ => return None,
    }
    Some(next)
}

/// A load of width `w` from SRAM address `a` (`None` outside SRAM: a memory-mapped
/// register or a fault, left to [`load`]).
#[inline(always)]
fn sram_read(mem: &Mem, a: u32, w: Width) -> Option<u32> {
    if u64::from(a) + u64::from(w.bytes()) > u64::from(PE_MEMORY_BYTES) {
        return None;
    }
    mem.read(a, w)
}

/// A store of width `w` to SRAM address `a` (`None`, nothing done, outside SRAM: left to
/// [`store`]); `AHEAD`: logged in `log` with the cycle `due` it stands for.
#[inline(always)]
fn sram_write<const AHEAD: bool>(
    mem: &mut Mem,
    log: &mut Vec<AheadStore>,
    a: u32,
    w: Width,
    v: u32,
    due: u64,
) -> Option<()> {
    if u64::from(a) + u64::from(w.bytes()) > u64::from(PE_MEMORY_BYTES) {
        return None;
    }
    if AHEAD {
        let old = mem.read(a, w)?;
        log.push(AheadStore {
            due,
            addr: a,
            w,
            old,
            new: v,
        });
    }
    mem.write(a, w, v).then_some(())
}

/// Most instructions [`run_ahead`] executes at once.
const RUN_AHEAD_MAX: u32 = 32;

/// **Running ahead** on instructions (ours; invisible to the program and to every
/// figure): after the main thread's action of cycle `now` (an instruction, a task start,
/// the completion of a synchronous DSD operation; `ce::tick` calls this when the task
/// runs on with no stall pending), the following instructions that have a fast form
/// (register arithmetic, compares, immediates, moves, branches, loads and stores of the
/// PE's own SRAM, returns) execute at once, up to [`RUN_AHEAD_MAX`], and the PE stalls
/// one cycle for each (`Pe::stall`, with `Pe::ahead` counting them so that each is
/// counted as an executed instruction in the cycle it would have run: the busy, stalled
/// and instruction counts of every cycle stay as they were). The stretch ends after a
/// return from the task's bottom frame (the task ends; the picker runs when the stall is
/// over, in the cycle it would have).
///
/// Why nothing can tell: nothing else reads a running task's registers or frames (the
/// control dispatch and microthreads that run during those cycles touch only memory,
/// queues and task bits; a PE with a stall pending is not free for the host whatever its
/// task). Loads and stores run ahead only while no microthread runs (nothing in the
/// stretch can start one), so nothing on the PE reads or writes its memory before the
/// cycle each access stands for. The host reads a PE's memory only between runs: every
/// store that ran ahead for a cycle not reached yet is logged (`Pe::ahead_stores`), taken
/// back when a run returns and made again when the next one starts
/// (`Simulator::settle`, `Simulator::resume`). Host copies wait until a PE is quiescent,
/// which a stalled PE is not, so a load cannot miss a host write (except past the copy
/// time-out, as for DSD operations that run ahead, `dsd::step`). The stretch stops before
/// any instruction without a fast form (memory-mapped registers, DSD operations, calls,
/// task bits) and before a load, store or return that would fault, so every instruction
/// that can fault or be seen runs in its own cycle. Off when branches cost extra cycles,
/// on traced or recorded PEs, and with `Simulator::set_run_ahead(false)`.
#[inline(never)]
pub(crate) fn run_ahead(pe: &mut Pe, class: &Class, env: &Env, now: u64) {
    if env.branch_taken_extra != 0 || env.branch_not_taken_extra != 0 {
        return;
    }
    // Every store logged by an earlier stretch is in the past (no stall is pending).
    pe.ahead_stores.clear();
    let mut base = pe.cur.base as usize;
    let mem = pe.ut_busy == 0;
    let fast = class.fast();
    let mut n = 0;
    while n < RUN_AHEAD_MAX {
        // The fast forms in a row, on the frame's state borrowed once (`FastState`).
        let mut pc = pe.cur.pc;
        let Some(mut st) = FastState::of(pe, base) else {
            break;
        };
        let mut f = Fast::Slow;
        let mut ran_out = false;
        while n < RUN_AHEAD_MAX {
            let Some(&g) = fast.get(pc as usize) else {
                ran_out = true;
                break;
            };
            f = g;
            let due = now + 1 + u64::from(n);
            match exec_fast::<true>(&mut st, env, f, pc, mem, due) {
                Some(next) => {
                    pc = next;
                    n += 1;
                }
                None => break,
            }
        }
        pe.cur.pc = pc;
        if ran_out || n >= RUN_AHEAD_MAX {
            break;
        }
        let due = now + 1 + u64::from(n);
        // Not run by `exec_fast`: a return, or what ends the stretch.
        let value = match f {
            Fast::Ret { src } => match pe.regs.get(base + usize::from(src)) {
                Some(&v) => Some(v),
                None => break,
            },
            Fast::RetVoid => None,
            Fast::Slow => {
                if slow_ahead(pe, class, base, pc, mem, due).is_some() {
                    n += 1;
                    base = pe.cur.base as usize;
                    continue;
                }
                // A synchronous DSD operation ends the stretch: issued ahead if it can be.
                if mem && issue_ahead(pe, class, env, base, pc) {
                    n += 1;
                }
                break;
            }
            // Outside SRAM: a constant register or the task priorities run ahead.
            Fast::Load { .. }
            | Fast::LoadOff { .. }
            | Fast::Store { .. }
            | Fast::StoreOff { .. } => {
                if slow_ahead(pe, class, base, pc, mem, due).is_some() {
                    n += 1;
                    continue;
                }
                break;
            }
            _ => break,
        };
        // `ret` changes nothing when it faults: that cycle runs it again.
        match pe.ret(value) {
            Ok(false) => {
                n += 1;
                base = pe.cur.base as usize;
            }
            Ok(true) => {
                // The task ended.
                n += 1;
                break;
            }
            Err(_) => break,
        }
    }
    pe.stall += n;
    pe.ahead += n;
    if let Some(op) = pe.main_op.as_deref_mut() {
        // Issued ahead: its setup cycles follow the instructions (as at `step`).
        pe.stall += op.setup;
        op.setup = 0;
    }
}

/// Runs ahead (`run_ahead`, for cycle `due`) the instruction at `pc` if it has no fast
/// form but is one of: a register-only operation without one (`ConvR`, `FrameAddr`; the
/// arithmetic, compares and plain conversions of every type have fast forms), a call, a
/// load of a constant memory-mapped register (`constant_register`), a store to the task
/// priorities (`set_task_priority`), a task activation, or, when `mem`, a descriptor field
/// set (a 16-bit SRAM store, logged like `Store`). Each
/// computes what `step` computes for it. `None` (nothing done but, for a call, the
/// register file grown, as its own cycle grows it again) for anything else and on a
/// fault, which the instruction's own cycle then reports.
#[inline(never)]
fn slow_ahead(pe: &mut Pe, class: &Class, base: usize, pc: u32, mem: bool, due: u64) -> Option<()> {
    let op = *class.code().get(pc as usize)?;
    let r = |pe: &Pe, x: csl_arch::isa::Reg| pe.regs.get(base + usize::from(x.0)).copied();
    let next = pc.wrapping_add(1);
    let (dst, v) = match op {
        Op::ConvR {
            mode,
            to,
            from,
            dst,
            src,
        } => {
            let mode = csl_arch::isa::RoundMode::from_u8(mode);
            (dst, alu::conv_round(mode, to, from, r(pe, src)?))
        }
        Op::FrameAddr { dst, off } => (dst, pe.cur.sp.checked_add(u32::from(off))?),
        // A load of a constant register (as `load` does it).
        Op::Load { w, dst, addr } => (dst, constant_register(pe, r(pe, addr)?)? & width_mask(w)),
        Op::LoadOff { w, dst, addr, off } => {
            let a = offset_addr(r(pe, addr)?, off);
            (dst, constant_register(pe, a)? & width_mask(w))
        }
        // An activation: the picker, which runs only between tasks, is the only reader
        // that cares when the bit was set (control wavelets and finished operations OR
        // their own bits in).
        Op::Activate { id } => {
            pe.active |= task_bit(r(pe, id)?);
            pe.cur.pc = next;
            return Some(());
        }
        // A store to the task priorities (as `mmio_write` does it).
        Op::Store { addr, src, .. } if is_task_priority(r(pe, addr)?) => {
            set_task_priority(pe, r(pe, addr)?, r(pe, src)?);
            pe.cur.pc = next;
            return Some(());
        }
        Op::StoreOff { addr, off, src, .. } if is_task_priority(offset_addr(r(pe, addr)?, off)) => {
            set_task_priority(pe, offset_addr(r(pe, addr)?, off), r(pe, src)?);
            pe.cur.pc = next;
            return Some(());
        }
        Op::Call {
            func,
            args,
            nargs,
            dst,
        } => {
            pe.call(class, func, args, nargs, dst, next).ok()?;
            return Some(());
        }
        Op::DsdSet {
            field: f,
            desc,
            val,
        } if mem => {
            let a = dsd::check_desc(r(pe, desc)?).ok()? as u32;
            let v = r(pe, val)?;
            let (off, value) = match f {
                DsdField::Base => (field::BASE, v as u16),
                DsdField::AddBase => {
                    let old = pe.mem.read(a + field::BASE, Width::W16).unwrap_or(0) as u16;
                    (field::BASE, old.wrapping_add(v as u16))
                }
                DsdField::Length => (field::LENGTH, v as u16),
                DsdField::Stride => (field::STRIDE, v as u16),
                DsdField::FifoRead => (field::FIFO_READ_LEN, v as u16),
                DsdField::FifoWrite => (field::FIFO_WRITE_LEN, v as u16),
            };
            sram_write::<true>(
                &mut pe.mem,
                &mut pe.ahead_stores,
                a + off,
                Width::W16,
                u32::from(value),
                due,
            )?;
            pe.cur.pc = next;
            return Some(());
        }
        _ => return None,
    };
    *pe.regs.get_mut(base + usize::from(dst.0))? = v;
    pe.cur.pc = next;
    Some(())
}

/// Issues the synchronous DSD operation at `pc` ahead of its cycle (`run_ahead`), if it
/// is one and neither faults nor reads the fabric; returns whether it did. Issuing reads
/// the instruction's registers and its descriptors in the PE's memory, which nothing
/// changes before that cycle (no microthread runs); an operation with a fabric input
/// also reads and marks the input buffer's control-wavelet state, which the control
/// dispatch may change meanwhile, so it is left to its cycle. Until then the operation
/// only waits in `Pe::main_op` behind the stall (the deadlock report counts a PE with
/// instructions pending as running them).
fn issue_ahead(pe: &mut Pe, class: &Class, env: &Env, base: usize, pc: u32) -> bool {
    let Some(&Op::DsdOp {
        op,
        kinds,
        cfg,
        done,
        ut,
        dst,
        a,
        b,
        c,
        idx,
    }) = class.code().get(pc as usize)
    else {
        return false;
    };
    if cfg & csl_arch::dsd::cfg::ASYNC != 0 {
        return false;
    }
    let regs = &pe.regs;
    let r = |x: csl_arch::isa::Reg| regs.get(base + usize::from(x.0)).copied().unwrap_or(0);
    // A source descriptor of kind `fabin` (or one outside memory) leaves the operation to
    // its own cycle: checked first, so that such an operation is not issued twice.
    let kinds_of = csl_arch::dsd::OperandKind::unpack(kinds);
    for (k, reg) in kinds_of.iter().skip(1).zip([a, b, c]) {
        if *k == csl_arch::dsd::OperandKind::Desc {
            let at = r(reg) as usize + field::KIND as usize;
            match pe.mem.byte(at) {
                Some(kind) if kind != csl_arch::dsd::DsdKind::FabIn as u8 => {}
                _ => return false,
            }
        }
    }
    let args = IssueArgs {
        op,
        kinds,
        cfg,
        done,
        ut,
        vals: [r(dst), r(a), r(b), r(c), r(idx)],
        site: Site {
            task: pe.task,
            func: pe.cur.func,
            pc,
        },
    };
    let term_bufs = pe.term_bufs;
    match dsd::issue(pe, &class.out_queue_color, env, &args) {
        Ok(Issued::Sync(exec)) if !exec.reads_fabric() => {
            pe.main_op = Some(exec);
            pe.cur.pc = pc.wrapping_add(1);
            true
        }
        Ok(Issued::Sync(exec)) => {
            // Undone: issuing changed nothing else.
            pe.term_bufs = term_bufs;
            pe.recycle_op(exec);
            false
        }
        // (Not asynchronous; a fault happens in the instruction's own cycle.)
        Ok(Issued::Async | Issued::UtBusy) | Err(_) => false,
    }
}

/// The address `addr + off` of a `load_off`/`store_off`: 16-bit arithmetic.
#[inline]
fn offset_addr(addr: u32, off: u16) -> u32 {
    addr.wrapping_add(u32::from(off)) & 0xffff
}

/// A load of width `w` from byte address `a` (SRAM or a memory-mapped register).
#[inline]
fn load(pe: &mut Pe, router: &Router, a: u32, w: Width, now: u64) -> Result<u32, FaultKind> {
    let v = if a >= mmio::BASE {
        mmio_read(pe, router, a, now)?
    } else {
        mem_read(&pe.mem, a, w)?
    };
    Ok(v & width_mask(w))
}

/// A store of the low `w` bytes of `v` to byte address `a` (SRAM or a memory-mapped
/// register).
#[inline]
fn store(
    pe: &mut Pe,
    router: &mut Router,
    out: &mut CeOut,
    a: u32,
    w: Width,
    v: u32,
    now: u64,
) -> Result<(), FaultKind> {
    if a >= mmio::BASE {
        mmio_write(pe, router, out, a, v, now)
    } else {
        mem_write(&mut pe.mem, a, w, v)
    }
}

/// The value of a memory-mapped register that never changes and that reading has no
/// effect on (the PE's fabric coordinates), or `None` for any other address. A load of one
/// may run ahead (`slow_ahead`).
fn constant_register(pe: &Pe, a: u32) -> Option<u32> {
    match a {
        mmio::ROW_ID => Some(pe.loc.abs.y & 0xffff),
        mmio::COL_ID => Some(pe.loc.abs.x & 0xffff),
        _ => None,
    }
}

/// Whether `a` is one of the `TASK_PRIORITY` words.
fn is_task_priority(a: u32) -> bool {
    (mmio::TASK_PRIORITY..mmio::TASK_PRIORITY + 8).contains(&a) && a.is_multiple_of(2)
}

/// A store of `v` to the `TASK_PRIORITY` word at `a` (16 priority bits of the task ids
/// from `8 * (a - TASK_PRIORITY)` up). Only the task picker reads them, and it runs only
/// while no task does, so a store may run ahead (`slow_ahead`).
fn set_task_priority(pe: &mut Pe, a: u32, v: u32) {
    let shift = (a - mmio::TASK_PRIORITY) * 8;
    pe.high_priority = (pe.high_priority & !(0xffff << shift)) | (u64::from(v & 0xffff) << shift);
}

/// A store to the memory-mapped register window (kept out of line: rare and large).
#[inline(never)]
fn mmio_write(
    pe: &mut Pe,
    router: &mut Router,
    out: &mut CeOut,
    a: u32,
    v: u32,
    now: u64,
) -> Result<(), FaultKind> {
    match a {
        mmio::HOST_CMD_UNBLOCK => {
            if !pe.cmd_unblocked {
                pe.cmd_unblocked = true;
                out.unblocked = true;
            }
        }
        a if is_task_priority(a) => set_task_priority(pe, a, v),
        mmio::PRINT_CHAR => {
            let b = (v & 0xff) as u8;
            if b == b'\n' || pe.print_buf.len() >= PRINT_LINE_MAX {
                let line = String::from_utf8_lossy(&pe.print_buf).into_owned();
                pe.log.push((now, line));
                pe.print_buf.clear();
            }
            if b != b'\n' {
                pe.print_buf.push(b);
            }
        }
        a if (mmio::COLOR_CONFIG..mmio::SWITCH_CONFIG + 2 * mmio::PER_COLOR_WORDS).contains(&a)
            && a % 2 == 0 =>
        {
            let (array, c) = color_register(a);
            if let Some(cs) = router.ensure_color(c) {
                if array == 0 {
                    cs.set_color_config_word(v);
                    cs.teardown = v >> 14 & 1 == 1;
                    if cs.teardown {
                        router.teardown_pending |= 1 << c;
                    } else {
                        router.teardown_pending &= !(1 << c);
                    }
                } else {
                    cs.set_switch_config_word(v);
                }
            }
            out.wake_router = true;
        }
        mmio::TEARDOWN_EXIT => {
            let c = (v & 0xff) as u8;
            if c < NUM_COLORS {
                router.teardown_pending &= !(1 << c);
                if let Some(cs) = router.color_mut(c) {
                    cs.teardown = false;
                }
                out.wake_router = true;
            }
        }
        _ => {
            return Err(FaultKind::UnknownMmio {
                addr: a,
                write: true,
            });
        }
    }
    Ok(())
}

/// Which per-colour register array (0 colour config, 1 switch config) and which colour a
/// byte address in `mmio::COLOR_CONFIG..` names.
fn color_register(a: u32) -> (u32, u8) {
    let word = (a - mmio::COLOR_CONFIG) / 2;
    let stride = mmio::SWITCH_CONFIG / 2 - mmio::COLOR_CONFIG / 2;
    ((word / stride), (word % stride) as u8)
}

/// The activation bit of the task id in the low 6 bits of `v`.
#[inline]
fn task_bit(v: u32) -> u64 {
    1u64 << (v & 63)
}

#[inline]
fn width_mask(w: Width) -> u32 {
    match w {
        Width::W8 => 0xff,
        Width::W16 => 0xffff,
        Width::W32 => u32::MAX,
    }
}

/// Little-endian load from SRAM.
#[inline]
pub(crate) fn mem_read(mem: &Mem, addr: u32, w: Width) -> Result<u32, FaultKind> {
    mem.read(addr, w).ok_or(FaultKind::MemoryOutOfBounds {
        addr,
        width: w.bytes(),
    })
}

/// Little-endian store of the low `w` bytes of `v` to SRAM.
#[inline]
pub(crate) fn mem_write(mem: &mut Mem, addr: u32, w: Width, v: u32) -> Result<(), FaultKind> {
    if mem.write(addr, w, v) {
        Ok(())
    } else {
        Err(FaultKind::MemoryOutOfBounds {
            addr,
            width: w.bytes(),
        })
    }
}

/// A load from the memory-mapped register window. Each register is one 16-bit word,
/// read whole (zero-extended) whatever the access width.
fn mmio_read(pe: &mut Pe, router: &Router, addr: u32, cycle: u64) -> Result<u32, FaultKind> {
    if let Some(v) = constant_register(pe, addr) {
        return Ok(v);
    }
    let latched = |pe: &Pe, shift: u32| ((pe.tsc_latch >> shift) & 0xffff) as u32;
    match addr {
        mmio::TEARDOWN_PENDING => Ok(router.teardown_pending & 0xffff),
        a if a == mmio::TEARDOWN_PENDING + 2 => Ok(router.teardown_pending >> 16),
        a if is_task_priority(a) => {
            Ok(((pe.high_priority >> ((a - mmio::TASK_PRIORITY) * 8)) & 0xffff) as u32)
        }
        a if (mmio::COLOR_CONFIG..mmio::SWITCH_CONFIG + 2 * mmio::PER_COLOR_WORDS).contains(&a)
            && a % 2 == 0 =>
        {
            let (array, c) = color_register(a);
            Ok(router.color(c).map_or(0, |cs| {
                if array == 0 {
                    cs.color_config_word()
                } else {
                    cs.switch_config_word()
                }
            }))
        }
        // The 48-bit timestamp counter as three little-endian 16-bit words. Reading the
        // low word latches the whole counter; the other two words read the latch, so a
        // low-to-high read of the three words is consistent (SIMULATOR.md §6).
        a if a == mmio::TSC => {
            pe.tsc_latch = cycle;
            Ok(latched(pe, 0))
        }
        a if a == mmio::TSC + 2 => Ok(latched(pe, 16)),
        a if a == mmio::TSC + 4 => Ok(latched(pe, 32)),
        _ => Err(FaultKind::UnknownMmio { addr, write: false }),
    }
}

#[cfg(test)]
mod tests {
    use super::{FastState, exec_fast};
    use crate::alu;
    use crate::decode::predecode;
    use crate::dsd::Env;
    use crate::mem::Mem;
    use csl_arch::fabric::Arch;
    use csl_arch::isa::{BinOp, CmpOp, NumTy, Op, Reg, UnOp};

    /// Runs `op` through its fast form with registers `x`, `y`, 0 and returns register 2,
    /// or `None` if the fast form did nothing.
    fn run(op: Op, x: u32, y: u32) -> Option<u32> {
        let env = Env {
            arch: Arch::Wse2,
            ramp: 0,
            setup: 0,
            branch_taken_extra: 0,
            branch_not_taken_extra: 0,
            fmacs_extra: 0,
            run_ahead: true,
        };
        let fast = *predecode(&[op]).first()?;
        let (mut regs, mut mem, mut log, mut stall) =
            (vec![x, y, 0], Mem::new([].into()), Vec::new(), 0);
        let mut st = FastState {
            regs: &mut regs,
            mem: &mut mem,
            log: &mut log,
            stall: &mut stall,
        };
        exec_fast::<true>(&mut st, &env, fast, 0, true, 1)?;
        regs.get(2).copied()
    }

    /// Every arithmetic, compare, unary and conversion form, in every type, computes what
    /// `alu` computes (so the general interpreter and a fast form cannot disagree); an
    /// integer division by zero is left to the general interpreter, which faults.
    #[test]
    fn every_register_form_computes_what_the_alu_computes() {
        let (r0, r1, r2) = (Reg(0), Reg(1), Reg(2));
        let values = [
            0u32,
            1,
            2,
            0x7f,
            0x80,
            0xffff,
            0x8000,
            0x3c00,
            0x3f80_0000,
            0xc000_0000,
            u32::MAX,
        ];
        for ty in NumTy::ALL {
            for &x in &values {
                for &y in &values {
                    for op in BinOp::ALL {
                        let want = alu::bin(op, ty, x, y).ok();
                        assert_eq!(
                            run(
                                Op::Bin {
                                    op,
                                    ty,
                                    dst: r2,
                                    a: r0,
                                    b: r1
                                },
                                x,
                                y
                            ),
                            want,
                            "{op:?} {ty:?} {x:#x} {y:#x}"
                        );
                        let imm = Op::BinImm {
                            op,
                            ty,
                            dst: r2,
                            a: r0,
                            imm: y,
                        };
                        assert_eq!(run(imm, x, 0), want, "{op:?} {ty:?} imm");
                    }
                    for op in CmpOp::ALL {
                        let want = Some(u32::from(alu::cmp(op, ty, x, y)));
                        assert_eq!(
                            run(
                                Op::Cmp {
                                    op,
                                    ty,
                                    dst: r2,
                                    a: r0,
                                    b: r1
                                },
                                x,
                                y
                            ),
                            want
                        );
                        assert_eq!(
                            run(
                                Op::CmpImm {
                                    op,
                                    ty,
                                    dst: r2,
                                    a: r0,
                                    imm: y
                                },
                                x,
                                0
                            ),
                            want
                        );
                    }
                }
                for op in UnOp::ALL {
                    assert_eq!(
                        run(
                            Op::Un {
                                op,
                                ty,
                                dst: r2,
                                a: r0
                            },
                            x,
                            0
                        ),
                        Some(alu::un(op, ty, x))
                    );
                }
                for to in NumTy::ALL {
                    let conv = Op::Conv {
                        to,
                        from: ty,
                        dst: r2,
                        src: r0,
                    };
                    assert_eq!(
                        run(conv, x, 0),
                        Some(alu::conv(to, ty, x)),
                        "{ty:?} -> {to:?}"
                    );
                }
            }
        }
        assert_eq!(
            run(
                Op::Bin {
                    op: BinOp::Div,
                    ty: NumTy::I16,
                    dst: r2,
                    a: r0,
                    b: r1
                },
                5,
                0
            ),
            None
        );
    }
}
