//! Liveness over the CFG and dead-code elimination.
//!
//! Only instructions without side effects are removed: constants, moves, arithmetic that
//! cannot trap, comparisons, conversions and address computations. Loads (which may read
//! memory-mapped registers or fault), stores, calls, task and DSD operations stay.

use super::rpo;
use crate::ir::{BlockId, Function, ImmVal, Inst, VReg};
use cranelift_entity::EntityRef;
use csl_arch::isa::BinOp;

/// A set of registers.
struct RegSet(Vec<u64>);

impl RegSet {
    fn new(n: usize) -> RegSet {
        RegSet(vec![0; n.div_ceil(64)])
    }
    fn insert(&mut self, r: VReg) {
        set_insert(&mut self.0, r);
    }
    fn remove(&mut self, r: VReg) {
        let i = r.index();
        if let Some(w) = self.0.get_mut(i / 64) {
            *w &= !(1 << (i % 64));
        }
    }
    fn contains(&self, r: VReg) -> bool {
        set_contains(&self.0, r)
    }
    fn union_with(&mut self, o: &[u64]) {
        for (a, b) in self.0.iter_mut().zip(o) {
            *a |= b;
        }
    }
}

/// Whether removing `inst` (when its result is unused) changes nothing observable.
pub fn is_pure(inst: &Inst) -> bool {
    match inst {
        Inst::Imm { .. }
        | Inst::Mov { .. }
        | Inst::Cmp { .. }
        | Inst::CmpImm { .. }
        | Inst::Un { .. }
        | Inst::Conv { .. }
        | Inst::ConvR { .. }
        | Inst::FrameAddr { .. }
        | Inst::GlobalAddr { .. }
        | Inst::FuncAddr { .. } => true,
        // Integer division by a register may trap.
        Inst::Bin { op, ty, .. } => ty.is_float() || !matches!(op, BinOp::Div | BinOp::Rem),
        Inst::BinImm { op, ty, imm, .. } => {
            ty.is_float()
                || !matches!(op, BinOp::Div | BinOp::Rem)
                || matches!(imm, ImmVal::Const(c) if c & csl_arch::alu::mask(*ty) != 0)
        }
        _ => false,
    }
}

/// How far back [`coalesce_site`] looks.
const COALESCE_WINDOW: usize = 32;

/// The index in `before` of the instruction that computes `t` for a following `v = t`, if
/// it can write `v` instead: nothing in between reads `t` or touches `v`.
fn coalesce_site(before: &[Inst], v: VReg, t: VReg) -> Option<usize> {
    let real = before
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, i)| !i.is_marker());
    for (k, inst) in real.take(COALESCE_WINDOW) {
        if inst.def() == Some(t) {
            return Some(k);
        }
        let mut touches = inst.def() == Some(v);
        inst.uses(|r| touches |= r == v || r == t);
        if touches {
            return None;
        }
    }
    None
}

/// Per-block register sets in one flat buffer: block `i`'s set is the `words` words from
/// `i * words` (one allocation for all blocks instead of one per block).
struct BlockSets {
    words: usize,
    bits: Vec<u64>,
}

impl BlockSets {
    fn new(nblocks: usize, nregs: usize) -> BlockSets {
        let words = nregs.div_ceil(64);
        BlockSets {
            words,
            bits: vec![0; words * nblocks],
        }
    }
    fn get(&self, b: usize) -> &[u64] {
        &self.bits[b * self.words..(b + 1) * self.words]
    }
    fn get_mut(&mut self, b: usize) -> &mut [u64] {
        &mut self.bits[b * self.words..(b + 1) * self.words]
    }
}

/// Adds `r` to a register bit set (one bit per register, 64 per word).
fn set_insert(set: &mut [u64], r: VReg) {
    let i = r.index();
    if let Some(w) = set.get_mut(i / 64) {
        *w |= 1 << (i % 64);
    }
}

/// Whether `r` is in a register bit set.
fn set_contains(set: &[u64], r: VReg) -> bool {
    let i = r.index();
    set.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
}

/// Registers live on entry to each block (indexed by block), for the reachable blocks of
/// `order` (the reverse post-order).
fn live_in(f: &Function, order: &[BlockId]) -> BlockSets {
    let n = f.nregs as usize;
    let nb = f.blocks.len();
    // use/def per block.
    let mut gen_ = BlockSets::new(nb, n);
    let mut kill = BlockSets::new(nb, n);
    for &b in order {
        let (g, k) = (gen_.get_mut(b.index()), kill.get_mut(b.index()));
        let block = &f.blocks[b];
        for inst in &block.insts {
            inst.uses(|r| {
                if !set_contains(k, r) {
                    set_insert(g, r);
                }
            });
            if let Some(d) = inst.def() {
                set_insert(k, d);
            }
        }
        if let Some(r) = block.term.use_reg()
            && !set_contains(k, r)
        {
            set_insert(g, r);
        }
    }
    let mut live = BlockSets::new(nb, n);
    let mut out = vec![0u64; live.words];
    let mut changed = true;
    while changed {
        changed = false;
        for &b in order.iter().rev() {
            out.fill(0);
            for s in f.blocks[b].term.succs() {
                for (o, l) in out.iter_mut().zip(live.get(s.index())) {
                    *o |= l;
                }
            }
            // in = gen ∪ (out − kill)
            let i = b.index();
            for ((o, k), g) in out.iter_mut().zip(kill.get(i)).zip(gen_.get(i)) {
                *o = (*o & !k) | g;
            }
            let cur = live.get_mut(i);
            if out[..] != cur[..] {
                cur.copy_from_slice(&out);
                changed = true;
            }
        }
    }
    live
}

/// Removes pure instructions whose results are dead. Returns whether anything changed.
pub fn run(f: &mut Function) -> bool {
    let order = rpo(f);
    let live_in = live_in(f, &order);
    let n = f.nregs as usize;
    let mut changed = false;
    let mut live = RegSet::new(n);
    let mut keep = Vec::new();
    for b in order {
        live.0.fill(0);
        for s in f.blocks[b].term.succs() {
            live.union_with(live_in.get(s.index()));
        }
        let block = &mut f.blocks[b];
        if let Some(r) = block.term.use_reg() {
            live.insert(r);
        }
        keep.clear();
        keep.resize(block.insts.len(), true);
        for i in (0..block.insts.len()).rev() {
            // `t = ...; v = t` with `t` dead afterwards: compute into `v` directly.
            if let Inst::Mov { dst: v, src: t } = block.insts[i]
                && v != t
                && !live.contains(t)
                && let Some(at) = coalesce_site(&block.insts[..i], v, t)
            {
                if let Some(d) = block.insts[at].def_mut() {
                    *d = v;
                }
                keep[i] = false;
                continue;
            }
            let inst = &block.insts[i];
            let dead = match inst.def() {
                Some(d) => !live.contains(d) && is_pure(inst),
                None => false,
            };
            // A self-move does nothing either way.
            let self_move = matches!(inst, Inst::Mov { dst, src } if dst == src);
            if dead || self_move {
                keep[i] = false;
                continue;
            }
            if let Some(d) = inst.def() {
                live.remove(d);
            }
            inst.uses(|r| live.insert(r));
        }
        if keep.iter().any(|k| !k) {
            changed = true;
            let mut it = keep.iter();
            block.insts.retain(|_| it.next().copied().unwrap_or(true));
        }
    }
    changed
}
