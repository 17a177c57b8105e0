//! A program class prepared for execution: its decoded code, the task-id → function table,
//! and the load-time checks that let the interpreter index registers without re-checking.
//!
//! [`Image::from_elf`](csl_arch::image::Image::from_elf) already checks call and jump
//! targets and task bindings. On top of that, [`Class::prepare`] checks, for every function,
//! that each instruction reachable from its entry (following jumps and branches, not calls)
//! names only registers below the function's `nregs`, and that static calls pass no more
//! arguments than the callee has registers. A malformed class is rejected at load time
//! with an [`ImageError`] instead of faulting (or worse) at run time.

use crate::decode::{Fast, predecode};
use csl_arch::fabric::{NUM_TASK_IDS, PE_MEMORY_BYTES};
use csl_arch::image::{
    FuncInfo, ImageError, ProgramClass, TaskKind, WaveletArgs, section_class, section_text,
};
use csl_arch::isa::{Op, Reg};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Marks a task id with no task bound in [`Class::bindings`].
pub(crate) const NO_TASK: u32 = u32::MAX;

/// One program class, ready to run.
#[derive(Clone, Debug)]
pub struct Class {
    /// The class as read from the image.
    pub program: ProgramClass,
    /// The code, shared between classes whose code is identical (classes often differ only
    /// in data, e.g. colours or per-column memcpy parameters): one copy keeps the
    /// interpreter's instruction fetches in cache.
    code: Arc<[Op]>,
    /// The code pre-decoded for the interpreter (same indices as `code`).
    fast: Arc<[Fast]>,
    /// Function index bound to each task id, or [`NO_TASK`].
    pub(crate) bindings: [u32; NUM_TASK_IDS as usize],
    /// How each task id is triggered (meaningful where bound).
    pub(crate) kinds: [TaskKind; NUM_TASK_IDS as usize],
    /// How each data or control task receives its wavelet.
    pub(crate) args: [WaveletArgs; NUM_TASK_IDS as usize],
    /// Bit `i`: a data task is bound to id `i` (ids 0..=31).
    pub(crate) data_bound: u32,
    /// Colour bound to each output queue (`0xff`: none), from `ClassInfo::output_queues`.
    pub(crate) out_queue_color: [u8; 8],
    /// The initial memory (the program's data, at most `PE_MEMORY_BYTES`), shared by the
    /// memories of every PE of the class until they write it (module `mem`).
    pub(crate) init: Arc<[u8]>,
}

impl Class {
    /// Checks class number `n` of an image and builds its task table.
    pub fn prepare(n: usize, program: &ProgramClass) -> Result<Class, ImageError> {
        let info = &program.info;
        let mut bindings = [NO_TASK; NUM_TASK_IDS as usize];
        let mut kinds = [TaskKind::Local; NUM_TASK_IDS as usize];
        let mut args = [WaveletArgs::None; NUM_TASK_IDS as usize];
        let mut data_bound = 0u32;
        for t in &info.tasks {
            let Some(slot) = bindings.get_mut(usize::from(t.id)) else {
                return Err(bad(
                    section_class(n),
                    format!("task id {} is out of range", t.id),
                ));
            };
            if *slot != NO_TASK {
                return Err(bad(
                    section_class(n),
                    format!("task id {} is bound twice", t.id),
                ));
            }
            if t.func as usize >= info.functions.len() {
                return Err(bad(
                    section_class(n),
                    format!("task id {} names no function", t.id),
                ));
            }
            *slot = t.func;
            if let Some(k) = kinds.get_mut(usize::from(t.id)) {
                *k = t.kind;
            }
            if let Some(a) = args.get_mut(usize::from(t.id)) {
                *a = t.args;
            }
            if t.kind == TaskKind::Data && t.id < 32 {
                data_bound |= 1 << t.id;
            }
        }
        let mut out_queue_color = [0xff; 8];
        for b in &info.output_queues {
            if let Some(slot) = out_queue_color.get_mut(usize::from(b.queue)) {
                *slot = b.color;
            }
        }
        check_registers(n, program)?;
        Ok(Class {
            program: program.clone(),
            code: Arc::from(program.code.as_slice()),
            fast: Arc::from(predecode(&program.code)),
            bindings,
            kinds,
            args,
            data_bound,
            out_queue_color,
            init: Arc::from(
                program
                    .data
                    .get(..program.data.len().min(PE_MEMORY_BYTES as usize))
                    .unwrap_or(&[]),
            ),
        })
    }

    /// The code.
    #[inline]
    pub fn code(&self) -> &[Op] {
        &self.code
    }

    /// The pre-decoded code (same indices as [`Class::code`]).
    #[inline]
    pub(crate) fn fast(&self) -> &[Fast] {
        &self.fast
    }

    /// Makes this class use `other`'s copy of the code when the two are identical.
    pub(crate) fn share_code(&mut self, other: &Class) {
        if self.code.len() == other.code.len() && self.code == other.code {
            self.code = Arc::clone(&other.code);
            self.fast = Arc::clone(&other.fast);
        }
    }

    /// The functions.
    #[inline]
    pub fn functions(&self) -> &[FuncInfo] {
        &self.program.info.functions
    }

    /// The name of function `func`, or `(task picker)` for an invalid index (used when a
    /// fault happens before any function runs).
    pub fn func_name(&self, func: u32) -> &str {
        self.functions()
            .get(func as usize)
            .map_or("(task picker)", |f| f.name.as_str())
    }

    /// The name of the function whose code holds instruction `pc` (the one with the
    /// greatest entry not above it), for traces.
    pub fn func_name_at(&self, pc: u32) -> &str {
        self.functions()
            .iter()
            .filter(|f| f.entry <= pc)
            .max_by_key(|f| f.entry)
            .map_or("?", |f| f.name.as_str())
    }

    /// The source line instruction `pc` was compiled from (`file:line`), if the image
    /// has a line table covering it; for traces and fault reports.
    pub fn line_at(&self, pc: u32) -> Option<String> {
        self.program.lines.lookup(pc).map(|l| l.to_string())
    }

    /// How task id `id` is triggered, if a task is bound to it.
    pub fn kind(&self, id: u8) -> Option<TaskKind> {
        self.binding(id)?;
        self.kinds.get(usize::from(id)).copied()
    }

    /// The function bound to task id `id`, if any.
    pub fn binding(&self, id: u8) -> Option<u32> {
        self.bindings
            .get(usize::from(id))
            .copied()
            .filter(|&f| f != NO_TASK)
    }
}

fn bad(section: String, reason: String) -> ImageError {
    ImageError::BadSection { section, reason }
}

/// Registers an instruction needs: one more than the highest register it names.
fn regs_needed(op: &Op) -> u32 {
    let r = |reg: Reg| u32::from(reg.0) + 1;
    let span = |args: Reg, nargs: u8| {
        if nargs == 0 {
            0
        } else {
            u32::from(args.0) + u32::from(nargs)
        }
    };
    match *op {
        Op::Nop {} | Op::Jump { .. } | Op::RetVoid {} | Op::Trap { .. } | Op::UtWait { .. } => 0,
        Op::Imm { dst, .. } | Op::FrameAddr { dst, .. } => r(dst),
        Op::Mov { dst, src } => r(dst).max(r(src)),
        Op::Bin { dst, a, b, .. } | Op::Cmp { dst, a, b, .. } => r(dst).max(r(a)).max(r(b)),
        Op::Un { dst, a, .. } | Op::BinImm { dst, a, .. } | Op::CmpImm { dst, a, .. } => {
            r(dst).max(r(a))
        }
        Op::Conv { dst, src, .. } | Op::ConvR { dst, src, .. } => r(dst).max(r(src)),
        Op::Load { dst, addr, .. } | Op::LoadOff { dst, addr, .. } => r(dst).max(r(addr)),
        Op::Store { addr, src, .. } | Op::StoreOff { addr, src, .. } => r(addr).max(r(src)),
        Op::BrTrue { cond, .. } | Op::BrFalse { cond, .. } => r(cond),
        // `dst` is checked when a value is returned into it (a void call may name any).
        Op::Call { args, nargs, .. } => span(args, nargs),
        Op::CallInd {
            fptr, args, nargs, ..
        } => r(fptr).max(span(args, nargs)),
        Op::Ret { src } => r(src),
        Op::Activate { id } | Op::Block { id } | Op::Unblock { id } => r(id),
        Op::DsdOp {
            dst, a, b, c, idx, ..
        } => r(dst).max(r(a)).max(r(b)).max(r(c)).max(r(idx)),
        Op::DsdSet { desc, val, .. } => r(desc).max(r(val)),
        Op::Copy { dst, src, .. } => r(dst).max(r(src)),
    }
}

/// Checks register use of every function and the argument counts of static calls.
fn check_registers(n: usize, program: &ProgramClass) -> Result<(), ImageError> {
    let code = &program.code;
    let funcs = &program.info.functions;
    for (pc, op) in code.iter().enumerate() {
        if let Op::Call { func, nargs, .. } = *op {
            let callee = funcs.get(func as usize);
            if callee.is_none_or(|f| u16::from(nargs) > f.nregs) {
                return Err(bad(
                    section_text(n),
                    format!(
                        "the call at instruction {pc} passes more arguments than the callee has registers"
                    ),
                ));
            }
        }
    }
    // Registers needed by the code reachable from each distinct entry point.
    let mut needed: BTreeMap<u32, u32> = BTreeMap::new();
    let mut seen = vec![u32::MAX; code.len()];
    let mut stack = Vec::new();
    for (stamp, f) in funcs.iter().enumerate() {
        let need = match needed.get(&f.entry) {
            Some(&need) => need,
            None => {
                let need = reachable_need(code, f.entry, stamp as u32, &mut seen, &mut stack);
                needed.insert(f.entry, need);
                need
            }
        };
        if need > u32::from(f.nregs) {
            return Err(bad(
                section_class(n),
                format!(
                    "function `{}` declares {} registers but its code uses {need}",
                    f.name, f.nregs
                ),
            ));
        }
    }
    Ok(())
}

/// The maximum of [`regs_needed`] over the instructions reachable from `entry` without
/// following calls. `seen[pc] == stamp` marks visited instructions.
fn reachable_need(
    code: &[Op],
    entry: u32,
    stamp: u32,
    seen: &mut [u32],
    stack: &mut Vec<u32>,
) -> u32 {
    let mut need = 0;
    stack.clear();
    stack.push(entry);
    while let Some(pc) = stack.pop() {
        let Some(mark) = seen.get_mut(pc as usize) else {
            continue;
        };
        if *mark == stamp {
            continue;
        }
        *mark = stamp;
        let Some(op) = code.get(pc as usize) else {
            continue;
        };
        need = need.max(regs_needed(op));
        match *op {
            Op::Jump { target } => stack.push(target),
            Op::BrTrue { target, .. } | Op::BrFalse { target, .. } => {
                stack.push(target);
                stack.push(pc.saturating_add(1));
            }
            Op::Ret { .. } | Op::RetVoid {} | Op::Trap { .. } => {}
            _ => stack.push(pc.saturating_add(1)),
        }
    }
    need
}
