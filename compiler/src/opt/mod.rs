//! The IR optimiser, run on every function between lowering and code generation (turned off
//! by `cslc -O0`).
//!
//! Lowering is deliberately naive: every constant is a fresh `imm`, every variable read a
//! `mov`, every address `base + index * size` computed from scratch. The simulator charges
//! a cycle per instruction, so this pass pays directly. After `args` has moved call
//! arguments into per-function argument registers, it repeats, until nothing changes,
//!
//! * `cfg`: branches on the same block become jumps, jumps to empty jump-only blocks are
//!   threaded, a block reached only by a jump is merged into its predecessor, and a jump
//!   back to a small loop header becomes a copy of it (the loop tests at the bottom);
//! * `local`: forward propagation through each extended basic block: copy propagation,
//!   reuse of a register that already holds a constant or address, constant folding with
//!   the simulator's own ALU ([`csl_arch::alu`], integers only: floats are never folded),
//!   algebraic identities, common subexpressions, constant branch conditions, reassociation
//!   of constant additions (and `(x + k) * c` as `x * c + k * c` when `x * c` is at hand),
//!   facts of registers written once (in the blocks their
//!   definition dominates), and selection of the register–immediate instructions
//!   (`bin_imm`, `cmp_imm`, `load_off`, `store_off`);
//! * `dce`: liveness over the CFG, removal of instructions without side effects whose
//!   result is never read, and `t = ...; v = t` rewritten to compute into `v`.
//!
//! Everything is exact: the optimised function computes the same register and memory
//! values, stores, calls, DSD operations and faults as the original. Blocks that lowering
//! left unreachable are not touched (code generation still checks them).

mod args;
mod cfg;
mod dce;
mod local;
#[cfg(test)]
mod tests;

use crate::ir::{BlockId, Function, Inst, Program, Term};
use cranelift_entity::EntityRef;

/// Rounds of the pass pipeline before giving up on reaching a fixed point.
const MAX_ROUNDS: usize = 8;

/// Optimises every function of `prog`.
pub fn optimize(prog: &mut Program) {
    Memo::default().optimize(prog);
}

/// Optimised bodies by their unoptimised form. Program classes that differ only in a few
/// parameters share most of their functions body for body (the MD flagship on 32×16 PEs:
/// 43 classes, 4,257 functions, 190 distinct bodies), and [`optimize_function`] depends
/// on nothing but the body, so each distinct body is optimised once per link.
#[derive(Default)]
pub struct Memo {
    done: rustc_hash::FxHashMap<Function, Function>,
}

impl Memo {
    /// Distinct bodies optimised so far.
    pub fn len(&self) -> usize {
        self.done.len()
    }

    /// Whether no body was optimised yet.
    pub fn is_empty(&self) -> bool {
        self.done.is_empty()
    }

    /// Optimises every function of `prog`, reusing the result for a body seen before.
    pub fn optimize(&mut self, prog: &mut Program) {
        for f in prog.functions.values_mut() {
            if let Some(done) = self.done.get(f) {
                *f = done.clone();
            } else {
                let before = f.clone();
                optimize_function(f);
                self.done.insert(before, f.clone());
            }
        }
    }
}

/// Optimises one function.
pub fn optimize_function(f: &mut Function) {
    let frozen: Vec<bool> = reachable(f).into_iter().map(|r| !r).collect();
    args::place(f, &frozen);
    for _ in 0..MAX_ROUNDS {
        let mut changed = cfg::simplify(f, &frozen);
        changed |= local::run(f);
        changed |= dce::run(f);
        if !changed {
            break;
        }
    }
    clear_dead_blocks(f, &frozen);
}

/// Which blocks the entry reaches.
pub(crate) fn reachable(f: &Function) -> Vec<bool> {
    let mut seen = vec![false; f.blocks.len()];
    let mut stack = Vec::with_capacity(f.blocks.len() + 1);
    stack.push(BlockId::new(0));
    while let Some(b) = stack.pop() {
        if b.index() >= seen.len() || seen[b.index()] {
            continue;
        }
        seen[b.index()] = true;
        stack.extend(f.blocks[b].term.succs());
    }
    seen
}

/// Reachable blocks in reverse post-order (entry first).
pub(crate) fn rpo(f: &Function) -> Vec<BlockId> {
    let n = f.blocks.len();
    let mut seen = vec![false; n];
    let mut post = Vec::with_capacity(n);
    // (block, index of the next successor to visit)
    let mut stack: Vec<(BlockId, usize)> = Vec::with_capacity(n);
    if n > 0 {
        seen[0] = true;
        stack.push((BlockId::new(0), 0));
    }
    while let Some((b, i)) = stack.pop() {
        let succs = f.blocks[b].term.succs();
        if let Some(&s) = succs.get(i) {
            stack.push((b, i + 1));
            if !seen[s.index()] {
                seen[s.index()] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(b);
        }
    }
    post.reverse();
    post
}

/// Empties blocks the passes made unreachable (they become one trap). A block holding a DSD
/// operation that names a completion task is kept: code generation checks that task.
fn clear_dead_blocks(f: &mut Function, frozen: &[bool]) {
    let live = reachable(f);
    for (b, block) in f.blocks.iter_mut() {
        let i = b.index();
        if live[i] || frozen[i] {
            continue;
        }
        let checked = block.insts.iter().any(|inst| {
            matches!(
                inst,
                Inst::DsdOp {
                    done_task: Some(_),
                    ..
                }
            )
        });
        if !checked {
            block.insts.clear();
            block.term = Term::Unreachable;
        }
    }
}
