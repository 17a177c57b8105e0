//! Control-flow simplification: trivial branches, jump threading, block merging, and
//! loop rotation (a jump back to a small loop header becomes a copy of the header).

use super::reachable;
use crate::ir::{BlockId, Function, Inst, Term};
use cranelift_entity::EntityRef;

/// Simplifies the reachable part of `f`'s CFG; `frozen` blocks (unreachable from the
/// start) are neither changed nor merged. Returns whether anything changed.
pub fn simplify(f: &mut Function, frozen: &[bool]) -> bool {
    let mut changed = false;
    let live = reachable(f);
    let n = f.blocks.len();
    // Branches whose targets agree, and jump threading through empty jump-only blocks.
    for (i, _) in live.iter().enumerate().filter(|(_, l)| **l) {
        let b = BlockId::new(i);
        let mut term = f.blocks[b].term.clone();
        if let Term::Branch {
            then, otherwise, ..
        } = term
            && then == otherwise
        {
            term = Term::Jump(then);
        }
        match &mut term {
            Term::Jump(t) => *t = thread(f, *t),
            Term::Branch {
                then, otherwise, ..
            } => {
                *then = thread(f, *then);
                *otherwise = thread(f, *otherwise);
            }
            _ => {}
        }
        if term != f.blocks[b].term {
            f.blocks[b].term = term;
            changed = true;
        }
    }
    // Merge a block into its predecessor when that predecessor jumps to it and nothing else
    // reaches it.
    let live = reachable(f);
    let mut preds = vec![0u32; n];
    for (i, _) in live.iter().enumerate().filter(|(_, l)| **l) {
        for s in f.blocks[BlockId::new(i)].term.succs() {
            preds[s.index()] += 1;
        }
    }
    for (i, _) in live.iter().enumerate().filter(|(_, l)| **l) {
        let a = BlockId::new(i);
        while let Term::Jump(t) = f.blocks[a].term {
            let ti = t.index();
            if t == a || ti == 0 || preds[ti] != 1 || frozen[ti] {
                break;
            }
            let moved = std::mem::take(&mut f.blocks[t].insts);
            let term = std::mem::replace(&mut f.blocks[t].term, Term::Unreachable);
            f.blocks[a].insts.extend(moved);
            f.blocks[a].term = term;
            preds[ti] = 0;
            changed = true;
        }
    }
    // A jump back to a small block that ends in a branch (a loop header) becomes a copy
    // of that block: the loop then tests its condition at the bottom, and the jump is gone.
    for (i, _) in live.iter().enumerate().filter(|(_, l)| **l) {
        let p = BlockId::new(i);
        let Term::Jump(h) = f.blocks[p].term else {
            continue;
        };
        let header = &f.blocks[h];
        if h.index() > i
            || h == p
            || frozen[h.index()]
            || header.insts.iter().filter(|i| !i.is_marker()).count() > ROTATE_MAX
            || !matches!(header.term, Term::Branch { .. })
        {
            continue;
        }
        let (insts, term) = (header.insts.clone(), header.term.clone());
        f.blocks[p].insts.extend(insts);
        f.blocks[p].term = term;
        changed = true;
    }
    changed
}

/// The largest loop header (in instructions) copied into the jumps back to it.
const ROTATE_MAX: usize = 4;

/// The block control really continues at when jumping to `t`: empty blocks that only jump
/// are skipped (a cycle of them is left alone). Source markers count as empty: they
/// generate no code, and a statement's line is worth less than a jump.
fn thread(f: &Function, mut t: BlockId) -> BlockId {
    for _ in 0..f.blocks.len() {
        let block = &f.blocks[t];
        match block.term {
            Term::Jump(next) if block.insts.iter().all(Inst::is_marker) && next != t => t = next,
            _ => break,
        }
    }
    t
}
