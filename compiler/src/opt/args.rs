//! Call arguments in place: the ISA passes a call's arguments in consecutive registers of
//! the caller. Code generation copies them there unless they already are; this pass gives
//! every function a block of argument registers and moves each call's arguments into them
//! in the IR, where `local` and `dce` can compute each argument directly
//! into its register instead of copying it.

use crate::ir::{Function, Inst, VReg};
use cranelift_entity::EntityRef;

/// Functions with more registers than this are left alone (the register count is bounded).
const MAX_REGS: u32 = 60_000;

/// Rewrites every call of the blocks not in `frozen` to take its arguments from the
/// function's argument registers, copied there just before the call.
pub fn place(f: &mut Function, frozen: &[bool]) {
    let max = f
        .blocks
        .values()
        .flat_map(|b| b.insts.iter())
        .map(|i| match i {
            Inst::Call { args, .. } | Inst::CallInd { args, .. } => args.len() as u32,
            _ => 0,
        })
        .max()
        .unwrap_or(0);
    if max < 2 || f.nregs + max > MAX_REGS {
        return;
    }
    let base = f.nregs;
    f.nregs += max;
    let slot = |i: usize| VReg::new(base as usize + i);
    for (b, block) in f.blocks.iter_mut() {
        if frozen.get(b.index()).copied().unwrap_or(true)
            || !block.insts.iter().any(is_multi_arg_call)
        {
            continue;
        }
        let mut out = Vec::with_capacity(block.insts.len());
        for mut inst in std::mem::take(&mut block.insts) {
            if is_multi_arg_call(&inst)
                && let Inst::Call { args, .. } | Inst::CallInd { args, .. } = &mut inst
            {
                for (i, a) in args.iter_mut().enumerate() {
                    out.push(Inst::Mov {
                        dst: slot(i),
                        src: *a,
                    });
                    *a = slot(i);
                }
            }
            out.push(inst);
        }
        block.insts = out;
    }
}

/// Whether `inst` is a call with at least two arguments (the calls `place` rewrites).
fn is_multi_arg_call(inst: &Inst) -> bool {
    matches!(inst, Inst::Call { args, .. } | Inst::CallInd { args, .. } if args.len() >= 2)
}
