//! Forward propagation through extended basic blocks: what is known about registers flows
//! from a block into a successor it alone reaches. Facts are about register values only
//! (never memory), so stores, calls and DSD operations invalidate nothing; redefining a
//! register invalidates every fact that names it.

use super::rpo;
use crate::ir::{BlockId, Function, ImmVal, Inst, Term, VReg};
use cranelift_entity::EntityRef;
use csl_arch::alu;
use csl_arch::isa::{BinOp, CmpOp, NumTy, UnOp};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// What is known about a register's value.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fact {
    /// A constant or a global's address.
    Imm(ImmVal),
    /// The address of byte `off` of the frame.
    Frame(u32),
    /// The same value as another register.
    Copy(VReg),
    /// `base + k`, computed by an integer `bin_imm` add of type `ty`.
    AddK { base: VReg, k: ImmVal, ty: NumTy },
}

impl Fact {
    /// The register the fact depends on, if any.
    fn names(self) -> Option<VReg> {
        match self {
            Fact::Copy(r) | Fact::AddK { base: r, .. } => Some(r),
            Fact::Imm(_) | Fact::Frame(_) => None,
        }
    }
}

/// A pure computation some register holds, for reuse (common subexpressions). Operands
/// are registers whose value has not changed since.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Expr {
    Bin(BinOp, NumTy, VReg, VReg),
    BinImm(BinOp, NumTy, VReg, ImmVal),
    Cmp(CmpOp, NumTy, VReg, VReg),
    CmpImm(CmpOp, NumTy, VReg, ImmVal),
    Un(UnOp, NumTy, VReg),
    Conv(NumTy, NumTy, VReg),
}

impl Expr {
    /// The expression `inst` computes, if it is pure and worth reusing. Running it again
    /// with unchanged operands gives the same bits, and could not trap if the first did
    /// not, so even division qualifies.
    fn of(inst: &Inst) -> Option<Expr> {
        Some(match *inst {
            Inst::Bin { op, ty, a, b, .. } => {
                // Operand order matters for float NaN payloads; integers commute exactly.
                let (a, b) = if !ty.is_float() && commutative(op) && b < a {
                    (b, a)
                } else {
                    (a, b)
                };
                Expr::Bin(op, ty, a, b)
            }
            Inst::BinImm { op, ty, a, imm, .. } => Expr::BinImm(op, ty, a, imm),
            Inst::Cmp { op, ty, a, b, .. } => Expr::Cmp(op, ty, a, b),
            Inst::CmpImm { op, ty, a, imm, .. } => Expr::CmpImm(op, ty, a, imm),
            Inst::Un { op, ty, a, .. } => Expr::Un(op, ty, a),
            Inst::Conv { to, from, src, .. } => Expr::Conv(to, from, src),
            _ => return None,
        })
    }

    fn operands(self) -> [Option<VReg>; 2] {
        match self {
            Expr::Bin(_, _, a, b) | Expr::Cmp(_, _, a, b) => [Some(a), Some(b)],
            Expr::BinImm(_, _, a, _)
            | Expr::CmpImm(_, _, a, _)
            | Expr::Un(_, _, a)
            | Expr::Conv(_, _, a) => [Some(a), None],
        }
    }
}

/// The value a fact makes its register a candidate home for.
fn home_of_fact(fact: Fact) -> Option<Home> {
    match fact {
        Fact::Imm(v) => Some(Home::Imm(v)),
        Fact::Frame(o) => Some(Home::Frame(o)),
        _ => None,
    }
}

/// A value some register holds, for reuse.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Home {
    Imm(ImmVal),
    Frame(u32),
}

/// Facts at one point of a block.
#[derive(Clone, Default)]
struct State {
    facts: HashMap<VReg, Fact>,
    /// Registers whose fact names the key.
    users: HashMap<VReg, Vec<VReg>>,
    /// A register holding each known value.
    home: HashMap<Home, VReg>,
    /// The value each home register holds.
    home_of: HashMap<VReg, Home>,
    /// A register holding each known computation.
    exprs: HashMap<Expr, VReg>,
    /// The computation each register in `exprs` holds.
    expr_of: HashMap<VReg, Expr>,
    /// The computations in `exprs` that read the key register.
    expr_users: HashMap<VReg, Vec<Expr>>,
}

impl State {
    fn imm(&self, r: VReg) -> Option<ImmVal> {
        match self.facts.get(&r) {
            Some(Fact::Imm(v)) => Some(*v),
            _ => None,
        }
    }

    fn konst(&self, r: VReg) -> Option<u32> {
        match self.imm(r) {
            Some(ImmVal::Const(c)) => Some(c),
            _ => None,
        }
    }

    /// The register to read instead of `r`: the original of a copy, or the register that
    /// first took on `r`'s constant.
    fn resolve(&self, r: VReg) -> VReg {
        let home = match self.facts.get(&r) {
            Some(Fact::Copy(s)) => return *s,
            Some(Fact::Imm(v)) => Home::Imm(*v),
            Some(Fact::Frame(o)) => Home::Frame(*o),
            _ => return r,
        };
        self.home.get(&home).copied().unwrap_or(r)
    }

    /// Forgets everything that depends on the old value of `d`.
    fn kill(&mut self, d: VReg) {
        self.facts.remove(&d);
        if let Some(us) = self.users.remove(&d) {
            for u in us {
                if self.facts.get(&u).and_then(|f| f.names()) == Some(d) {
                    self.facts.remove(&u);
                }
            }
        }
        if let Some(h) = self.home_of.remove(&d) {
            self.home.remove(&h);
        }
        if let Some(e) = self.expr_of.remove(&d) {
            self.exprs.remove(&e);
        }
        for e in self.expr_users.remove(&d).unwrap_or_default() {
            if let Some(h) = self.exprs.remove(&e) {
                self.expr_of.remove(&h);
            }
        }
    }

    /// Records that `d` now holds the computation `e`.
    fn remember(&mut self, d: VReg, e: Expr) {
        let ops = e.operands();
        if ops.contains(&Some(d)) || self.exprs.contains_key(&e) || self.expr_of.contains_key(&d) {
            return;
        }
        self.exprs.insert(e, d);
        self.expr_of.insert(d, e);
        for r in ops.into_iter().flatten() {
            self.expr_users.entry(r).or_default().push(e);
        }
    }

    /// Records that `d` was just written, holding `fact` if known.
    fn define(&mut self, d: VReg, fact: Option<Fact>) {
        self.kill(d);
        let Some(fact) = fact else { return };
        if let Some(n) = fact.names() {
            if n == d {
                return;
            }
            self.users.entry(n).or_default().push(d);
        }
        self.facts.insert(d, fact);
        let home = match fact {
            Fact::Imm(v) => Home::Imm(v),
            Fact::Frame(o) => Home::Frame(o),
            _ => return,
        };
        if let std::collections::hash_map::Entry::Vacant(e) = self.home.entry(home) {
            e.insert(d);
            self.home_of.insert(d, home);
        }
    }
}

/// Runs the propagation over every reachable block. Returns whether anything changed.
pub fn run(f: &mut Function) -> bool {
    let widths = widths(f);
    let order = rpo(f);
    let n = f.blocks.len();
    let mut preds = vec![0u32; n];
    let mut pred_of = vec![None; n];
    for &b in &order {
        for s in f.blocks[b].term.succs() {
            preds[s.index()] += 1;
            pred_of[s.index()] = Some(b);
        }
    }
    let mut done = vec![false; n];
    // The final states of the blocks a successor inherits from (sparse: most blocks have
    // none).
    let mut out: HashMap<usize, State> = HashMap::default();
    // How many successors still inherit each block's final state: the last one takes it
    // instead of copying it.
    let mut heirs = vec![0u32; n];
    for &b in &order {
        for s in f.blocks[b].term.succs() {
            if preds[s.index()] == 1 && s.index() != 0 {
                heirs[b.index()] += 1;
            }
        }
    }
    // A block starts an extended basic block unless it has exactly one predecessor (which
    // then precedes it in reverse post-order and hands it its state).
    let root: Vec<bool> = (0..n).map(|i| i == 0 || preds[i] != 1).collect();
    let mut seeds = seeds(f, &order, preds[0] == 0, &root, &pred_of);
    let mut changed = false;
    // The instructions being rewritten, reused from block to block.
    let mut insts: Vec<Inst> = Vec::new();
    for &b in &order {
        let i = b.index();
        let mut st = match pred_of[i] {
            Some(p) if preds[i] == 1 && i != 0 && done[p.index()] => {
                let h = &mut heirs[p.index()];
                *h = h.saturating_sub(1);
                if *h == 0 {
                    out.remove(&p.index()).unwrap_or_default()
                } else {
                    out.get(&p.index()).cloned().unwrap_or_default()
                }
            }
            _ => seeds.remove(&i).unwrap_or_default(),
        };
        let block = &mut f.blocks[b];
        let old = std::mem::take(&mut block.insts);
        insts.reserve(old.len());
        for mut inst in old.iter().cloned() {
            match &mut inst {
                // Several arguments stay where they are: they were placed in the argument
                // registers on purpose (see `opt::args`).
                Inst::Call { args, .. } if args.len() >= 2 => {}
                Inst::CallInd { fptr, args, .. } if args.len() >= 2 => *fptr = st.resolve(*fptr),
                _ => inst.uses_mut(|r| *r = st.resolve(*r)),
            }
            let Some(mut new) = simplify(inst, &st, &widths) else {
                continue;
            };
            let expr = Expr::of(&new);
            if let (Some(e), Some(dst)) = (expr, new.def())
                && let Some(&h) = st.exprs.get(&e)
                && h != dst
            {
                new = Inst::Mov { dst, src: h };
            }
            if let Some(d) = new.def() {
                st.define(d, fact_of(&new, &st));
                if let Some(e) = expr
                    && matches!(
                        new,
                        Inst::Bin { .. }
                            | Inst::BinImm { .. }
                            | Inst::Cmp { .. }
                            | Inst::CmpImm { .. }
                            | Inst::Un { .. }
                            | Inst::Conv { .. }
                    )
                {
                    st.remember(d, e);
                }
            }
            insts.push(new);
        }
        match &mut block.term {
            Term::Branch {
                cond,
                then,
                otherwise,
            } => {
                *cond = st.resolve(*cond);
                if let Some(c) = st.konst(*cond) {
                    block.term = Term::Jump(if c != 0 { *then } else { *otherwise });
                    changed = true;
                }
            }
            Term::Ret(Some(r)) => *r = st.resolve(*r),
            _ => {}
        }
        changed |= old != insts;
        block.insts = std::mem::replace(&mut insts, old);
        insts.clear();
        done[i] = true;
        if block.term.succs().iter().any(|s| preds[s.index()] == 1) {
            out.insert(i, st);
        }
    }
    changed
}

/// Facts true on entry to each block whatever the path: a register written once in the
/// function, by a constant, an address or a copy of a register never written (a
/// parameter), holds that value in every block its definition's block strictly dominates.
/// Only sound if the entry block cannot be re-entered (`entry_alone`).
///
/// Only blocks that start an extended basic block (`root`) receive seeds (the others
/// inherit their predecessor's state), and each receives only the facts its extended block
/// can use: those of the registers it reads and of the values it materialises (for
/// constant reuse). Dominance is an O(1) interval test on the dominator tree, so the pass
/// stays near-linear even when the dominator tree is a long chain (a 5,000-term `and`).
fn seeds(
    f: &Function,
    order: &[BlockId],
    entry_alone: bool,
    root: &[bool],
    pred_of: &[Option<BlockId>],
) -> HashMap<usize, State> {
    let n = f.blocks.len();
    let mut seeds = HashMap::default();
    if !entry_alone {
        return seeds;
    }
    let nregs = f.nregs as usize;
    let mut defs = vec![0u32; nregs];
    for block in f.blocks.values() {
        for inst in &block.insts {
            if let Some(d) = inst.def().and_then(|d| defs.get_mut(d.index())) {
                *d += 1;
            }
        }
    }
    let idom = dominators(f, order);
    // Single definitions in reverse post-order, indexed by register and by value.
    let mut single: Vec<(BlockId, VReg, Fact)> = Vec::new();
    let mut single_of: HashMap<VReg, usize> = HashMap::default();
    let mut by_home: HashMap<Home, Vec<usize>> = HashMap::default();
    for &b in order {
        for inst in &f.blocks[b].insts {
            let Some(d) = inst.def() else { continue };
            if d.index() < f.nparams as usize || defs[d.index()] != 1 {
                continue;
            }
            let fact = match *inst {
                Inst::Imm { imm, .. } => Fact::Imm(ImmVal::Const(imm)),
                Inst::GlobalAddr { global, offset, .. } => {
                    Fact::Imm(ImmVal::Global(global, offset))
                }
                Inst::FrameAddr { off, .. } => Fact::Frame(off),
                Inst::Mov { src, .. } if defs.get(src.index()) == Some(&0) => Fact::Copy(src),
                _ => continue,
            };
            let k = single.len();
            single_of.insert(d, k);
            if let Some(h) = home_of_fact(fact) {
                by_home.entry(h).or_default().push(k);
            }
            single.push((b, d, fact));
        }
    }
    if single.is_empty() {
        return seeds;
    }
    // Pre- and post-order numbers of the dominator tree: `a` dominates `b` iff
    // pre[a] <= pre[b] && post[b] <= post[a].
    let mut children: Vec<Vec<BlockId>> = vec![Vec::new(); n];
    for &b in order.iter().skip(1) {
        if let Some(d) = idom[b.index()] {
            children[d.index()].push(b);
        }
    }
    let (mut pre, mut post) = (vec![usize::MAX; n], vec![0usize; n]);
    let mut clock = 0usize;
    if let Some(&entry) = order.first() {
        let mut stack = vec![(entry, 0usize)];
        pre[entry.index()] = clock;
        clock += 1;
        while let Some((b, next)) = stack.last_mut() {
            if let Some(&c) = children[b.index()].get(*next) {
                *next += 1;
                pre[c.index()] = clock;
                clock += 1;
                stack.push((c, 0));
            } else {
                post[b.index()] = clock;
                clock += 1;
                stack.pop();
            }
        }
    }
    let strictly_dominates = |a: BlockId, b: BlockId| {
        a != b
            && pre[a.index()] != usize::MAX
            && pre[b.index()] != usize::MAX
            && pre[a.index()] <= pre[b.index()]
            && post[b.index()] <= post[a.index()]
    };
    // What each extended block reads and materialises, collected at its root.
    let mut region = vec![None::<BlockId>; n];
    let mut regs: Vec<Vec<VReg>> = vec![Vec::new(); n];
    let mut homes: Vec<Vec<Home>> = vec![Vec::new(); n];
    for &b in order {
        let r = if root[b.index()] {
            b
        } else {
            pred_of[b.index()]
                .and_then(|p| region[p.index()])
                .unwrap_or(b)
        };
        region[b.index()] = Some(r);
        let rs = &mut regs[r.index()];
        for inst in &f.blocks[b].insts {
            inst.uses(|u| rs.push(u));
        }
        if let Some(u) = f.blocks[b].term.use_reg() {
            rs.push(u);
        }
        let hs = &mut homes[r.index()];
        for inst in &f.blocks[b].insts {
            let h = match *inst {
                Inst::Imm { imm, .. } => Home::Imm(ImmVal::Const(imm)),
                Inst::GlobalAddr { global, offset, .. } => {
                    Home::Imm(ImmVal::Global(global, offset))
                }
                Inst::FrameAddr { off, .. } => Home::Frame(off),
                _ => continue,
            };
            hs.push(h);
        }
    }
    for &b in order {
        if !root[b.index()] {
            continue;
        }
        let mut picked: Vec<usize> = Vec::new();
        let mut want_homes: Vec<Home> = std::mem::take(&mut homes[b.index()]);
        for r in std::mem::take(&mut regs[b.index()]) {
            if let Some(&k) = single_of.get(&r)
                && strictly_dominates(single[k].0, b)
            {
                picked.push(k);
                want_homes.extend(home_of_fact(single[k].2));
            }
        }
        let mut seen = HashSet::default();
        want_homes.retain(|h| seen.insert(*h));
        for h in want_homes {
            if let Some(k) = by_home.get(&h).and_then(|ks| {
                ks.iter()
                    .copied()
                    .find(|&k| strictly_dominates(single[k].0, b))
            }) {
                picked.push(k);
            }
        }
        picked.sort_unstable();
        picked.dedup();
        if picked.is_empty() {
            continue;
        }
        let st: &mut State = seeds.entry(b.index()).or_default();
        for k in picked {
            let (_, d, fact) = single[k];
            st.define(d, Some(fact));
        }
    }
    seeds
}

/// The immediate dominator of every reachable block but the entry (Cooper, Harvey and
/// Kennedy's iterative algorithm over the reverse post-order).
fn dominators(f: &Function, order: &[BlockId]) -> Vec<Option<BlockId>> {
    let n = f.blocks.len();
    let mut pos = vec![usize::MAX; n];
    for (i, b) in order.iter().enumerate() {
        pos[b.index()] = i;
    }
    let mut preds: Vec<Vec<BlockId>> = vec![Vec::new(); n];
    for &b in order {
        for s in f.blocks[b].term.succs() {
            preds[s.index()].push(b);
        }
    }
    let mut idom: Vec<Option<BlockId>> = vec![None; n];
    let Some(&entry) = order.first() else {
        return idom;
    };
    idom[entry.index()] = Some(entry);
    let mut changed = true;
    while changed {
        changed = false;
        for &b in order.iter().skip(1) {
            let mut new: Option<BlockId> = None;
            for &p in &preds[b.index()] {
                if idom[p.index()].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => p,
                    Some(mut x) => {
                        let mut y = p;
                        while x != y {
                            while pos[x.index()] > pos[y.index()] {
                                x = idom[x.index()].unwrap_or(entry);
                            }
                            while pos[y.index()] > pos[x.index()] {
                                y = idom[y.index()].unwrap_or(entry);
                            }
                        }
                        x
                    }
                });
            }
            if new.is_some() && idom[b.index()] != new {
                idom[b.index()] = new;
                changed = true;
            }
        }
    }
    idom[entry.index()] = None;
    idom
}

/// What `inst` (already simplified) tells about the register it writes.
fn fact_of(inst: &Inst, st: &State) -> Option<Fact> {
    match *inst {
        Inst::Imm { imm, .. } => Some(Fact::Imm(ImmVal::Const(imm))),
        Inst::GlobalAddr { global, offset, .. } => Some(Fact::Imm(ImmVal::Global(global, offset))),
        Inst::FrameAddr { off, .. } => Some(Fact::Frame(off)),
        Inst::Mov { src, .. } => Some(match st.facts.get(&src) {
            Some(f @ (Fact::Imm(_) | Fact::Frame(_) | Fact::AddK { .. })) => *f,
            _ => Fact::Copy(src),
        }),
        Inst::BinImm {
            op: BinOp::Add,
            ty,
            a,
            imm,
            ..
        } if !ty.is_float() => Some(Fact::AddK {
            base: a,
            k: imm,
            ty,
        }),
        _ => None,
    }
}

/// The simplest instruction equivalent to `inst` given `st`, or `None` if it does nothing.
fn simplify(inst: Inst, st: &State, widths: &[u32]) -> Option<Inst> {
    let width = |r: VReg| widths.get(r.index()).copied().unwrap_or(u32::MAX);
    Some(match inst {
        Inst::Mov { dst, src } if dst == src => return None,
        Inst::Mov { dst, src } => match st.imm(src) {
            Some(ImmVal::Const(c)) => Inst::Imm { dst, imm: c },
            _ => inst,
        },
        Inst::Bin { op, ty, dst, a, b } => {
            if let Some(k) = st.imm(b) {
                bin_imm(st, &width, op, ty, dst, a, k)
            } else if let (Some(k), false) = (st.imm(a), ty.is_float()) {
                if commutative(op) {
                    bin_imm(st, &width, op, ty, dst, b, k)
                } else {
                    inst
                }
            } else if a == b && !ty.is_float() && matches!(op, BinOp::Sub | BinOp::Xor) {
                Inst::Imm { dst, imm: 0 }
            } else {
                inst
            }
        }
        Inst::BinImm {
            op,
            ty,
            dst,
            a,
            imm,
        } => bin_imm(st, &width, op, ty, dst, a, imm),
        Inst::Cmp { op, ty, dst, a, b } => {
            if let Some(k) = st.imm(b) {
                cmp_imm(st, op, ty, dst, a, k)
            } else if let Some(k) = st.imm(a) {
                cmp_imm(st, mirror(op), ty, dst, b, k)
            } else if a == b && !ty.is_float() {
                let eq = matches!(op, CmpOp::Eq | CmpOp::Le | CmpOp::Ge);
                Inst::Imm {
                    dst,
                    imm: u32::from(eq),
                }
            } else {
                inst
            }
        }
        Inst::CmpImm {
            op,
            ty,
            dst,
            a,
            imm,
        } => cmp_imm(st, op, ty, dst, a, imm),
        Inst::Un { op, ty, dst, a } => match st.konst(a) {
            Some(x) if !ty.is_float() => Inst::Imm {
                dst,
                imm: alu::un(op, ty, x),
            },
            _ => inst,
        },
        Inst::Conv { to, from, dst, src } if !to.is_float() && !from.is_float() => {
            if let Some(x) = st.konst(src) {
                Inst::Imm {
                    dst,
                    imm: alu::conv(to, from, x),
                }
            } else if conv_is_identity(to, from, width(src)) {
                Inst::Mov { dst, src }
            } else {
                inst
            }
        }
        Inst::Load { w, dst, addr } => match offset_form(st, addr, None) {
            Some((addr, off)) => Inst::LoadOff { w, dst, addr, off },
            None => inst,
        },
        Inst::LoadOff { w, dst, addr, off } => match offset_form(st, addr, Some(off)) {
            Some((addr, off)) => Inst::LoadOff { w, dst, addr, off },
            None => inst,
        },
        Inst::Store { w, addr, src } => match offset_form(st, addr, None) {
            Some((addr, off)) => Inst::StoreOff { w, addr, off, src },
            None => inst,
        },
        Inst::StoreOff { w, addr, off, src } => match offset_form(st, addr, Some(off)) {
            Some((addr, off)) => Inst::StoreOff { w, addr, off, src },
            None => inst,
        },
        _ => inst,
    })
}

/// `addr` (plus `off`) as a base register and a 16-bit offset, when `addr` was computed by
/// a 16-bit add of a constant (whose wrap-around `load_off`/`store_off` reproduce).
fn offset_form(st: &State, addr: VReg, off: Option<ImmVal>) -> Option<(VReg, ImmVal)> {
    let Some(Fact::AddK { base, k, ty }) = st.facts.get(&addr).copied() else {
        return None;
    };
    if !matches!(ty, NumTy::U16 | NumTy::I16) {
        return None;
    }
    let k = match off {
        None => k,
        Some(o) => add_imm(k, o)?,
    };
    Some((base, k))
}

/// The sum of two immediates, if it is one.
fn add_imm(a: ImmVal, b: ImmVal) -> Option<ImmVal> {
    match (a, b) {
        (ImmVal::Const(x), ImmVal::Const(y)) => Some(ImmVal::Const(x.wrapping_add(y))),
        (ImmVal::Global(g, o), ImmVal::Const(c)) | (ImmVal::Const(c), ImmVal::Global(g, o)) => {
            Some(ImmVal::Global(g, o.wrapping_add(c)))
        }
        (ImmVal::Global(..), ImmVal::Global(..)) => None,
    }
}

fn commutative(op: BinOp) -> bool {
    matches!(
        op,
        BinOp::Add | BinOp::Mul | BinOp::And | BinOp::Or | BinOp::Xor
    )
}

/// The comparison with its operands swapped.
fn mirror(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Le => CmpOp::Ge,
        CmpOp::Ge => CmpOp::Le,
        CmpOp::Eq | CmpOp::Ne => op,
    }
}

/// `dst = a <op> k` in its simplest form. `width(r)` bounds the bits `r` may hold.
fn bin_imm(
    st: &State,
    width: &dyn Fn(VReg) -> u32,
    op: BinOp,
    ty: NumTy,
    dst: VReg,
    a: VReg,
    k: ImmVal,
) -> Inst {
    let keep = Inst::BinImm {
        op,
        ty,
        dst,
        a,
        imm: k,
    };
    if ty.is_float() {
        return keep;
    }
    let m = alu::mask(ty);
    if let (Some(x), ImmVal::Const(c)) = (st.konst(a), k) {
        return match alu::bin(op, ty, x, c) {
            Ok(v) => Inst::Imm { dst, imm: v },
            // Division by zero: keep the trap.
            Err(_) => keep,
        };
    }
    // a - c is a + (-c) modulo the width.
    let (op, mut a, mut k) = match (op, k) {
        (BinOp::Sub, ImmVal::Const(c)) => (BinOp::Add, a, ImmVal::Const(c.wrapping_neg() & m)),
        _ => (op, a, k),
    };
    // (base + k1) + k2 is base + (k1 + k2) modulo the width.
    if op == BinOp::Add
        && let Some(Fact::AddK {
            base,
            k: k1,
            ty: t1,
        }) = st.facts.get(&a).copied()
        && t1 == ty
        && let Some(sum) = add_imm(k1, k)
    {
        a = base;
        k = sum;
    }
    // (base + k1) * c is base * c + k1 * c modulo the width: reuse a register that already
    // holds base * c (address arithmetic `a[i + 1]` next to `a[i]`).
    if op == BinOp::Mul
        && let ImmVal::Const(c) = k
        && let Some(Fact::AddK {
            base,
            k: ImmVal::Const(k1),
            ty: t1,
        }) = st.facts.get(&a).copied()
        && t1 == ty
        && let Some(&h) = st
            .exprs
            .get(&Expr::BinImm(BinOp::Mul, ty, base, ImmVal::Const(c & m)))
    {
        let sum = ImmVal::Const(k1.wrapping_mul(c) & m);
        return bin_imm(st, width, BinOp::Add, ty, dst, h, sum);
    }
    if let ImmVal::Const(c) = k {
        let c = c & m;
        k = ImmVal::Const(c);
        let bits = m.count_ones();
        let identity = match op {
            BinOp::Add | BinOp::Sub | BinOp::Or | BinOp::Xor => c == 0,
            BinOp::Shl | BinOp::Shr => c.is_multiple_of(bits),
            BinOp::Mul | BinOp::Div => c == 1,
            BinOp::And => c == m,
            BinOp::Rem => false,
        };
        // The register form re-normalises its result; a move is exact only if `a` is
        // already normalised.
        if identity && width(a) & !m == 0 {
            return Inst::Mov { dst, src: a };
        }
        let zero = match op {
            BinOp::Mul | BinOp::And => c == 0,
            BinOp::Rem => c == 1,
            _ => false,
        };
        if zero {
            return Inst::Imm { dst, imm: 0 };
        }
        if op == BinOp::Or && c == m {
            return Inst::Imm { dst, imm: m };
        }
    }
    Inst::BinImm {
        op,
        ty,
        dst,
        a,
        imm: k,
    }
}

/// `dst = a <op> k` as a comparison, folded when `a` is a constant integer.
fn cmp_imm(st: &State, op: CmpOp, ty: NumTy, dst: VReg, a: VReg, k: ImmVal) -> Inst {
    if let (Some(x), ImmVal::Const(c), false) = (st.konst(a), k, ty.is_float()) {
        return Inst::Imm {
            dst,
            imm: u32::from(alu::cmp(op, ty, x, c)),
        };
    }
    Inst::CmpImm {
        op,
        ty,
        dst,
        a,
        imm: k,
    }
}

/// Whether converting a value of at most the bits `w` from `from` to `to` (integer or
/// `bool` types) leaves it unchanged (see [`alu::conv`]).
fn conv_is_identity(to: NumTy, from: NumTy, w: u32) -> bool {
    if to == NumTy::Bool || from == NumTy::Bool {
        // `!= 0` on either side: exact for 0 and 1.
        return w & !1 == 0;
    }
    if w & !alu::mask(to) != 0 {
        return false;
    }
    // Narrowing or same width keeps the low bits; widening sign- or zero-extends.
    to.size() <= from.size()
        || if from.is_signed() {
            w & !(alu::mask(from) >> 1) == 0
        } else {
            w & !alu::mask(from) == 0
        }
}

/// For every register, the bits any of its values may have set (all for parameters, call
/// results, addresses and registers never written).
fn widths(f: &Function) -> Vec<u32> {
    let n = f.nregs as usize;
    let mut w = vec![0u32; n];
    let mut written = vec![false; n];
    for i in 0..(f.nparams as usize).min(n) {
        w[i] = u32::MAX;
        written[i] = true;
    }
    for inst in f.blocks.values().flat_map(|b| b.insts.iter()) {
        if let Some(slot) = inst.def().and_then(|d| written.get_mut(d.index())) {
            *slot = true;
        }
    }
    let mut changed = true;
    while changed {
        changed = false;
        for block in f.blocks.values() {
            for inst in &block.insts {
                let Some(d) = inst.def() else { continue };
                let bits = match *inst {
                    Inst::Imm { imm, .. } => imm,
                    Inst::Mov { src, .. } => match written.get(src.index()) {
                        Some(true) => w[src.index()],
                        _ => u32::MAX,
                    },
                    Inst::Bin { ty, .. } | Inst::BinImm { ty, .. } | Inst::Un { ty, .. } => {
                        alu::mask(ty)
                    }
                    Inst::Cmp { .. } | Inst::CmpImm { .. } => 1,
                    Inst::Conv { to, .. } | Inst::ConvR { to, .. } => alu::mask(to),
                    Inst::Load { w: mw, .. } | Inst::LoadOff { w: mw, .. } => match mw.bytes() {
                        1 => 0xff,
                        2 => 0xffff,
                        _ => u32::MAX,
                    },
                    _ => u32::MAX,
                };
                if let Some(slot) = w.get_mut(d.index())
                    && *slot | bits != *slot
                {
                    *slot |= bits;
                    changed = true;
                }
            }
        }
    }
    for (slot, wr) in w.iter_mut().zip(&written) {
        if !wr {
            *slot = u32::MAX;
        }
    }
    w
}
