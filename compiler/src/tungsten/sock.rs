//! Sockets and DSD vector operations: descriptor globals, sends and receives (synchronous,
//! or asynchronous on a microthread directly inside `parallel`), and the lowering of loops
//! to one DSD operation.
//!
//! Every transfer statement gets its own descriptor globals (named `$fabout.SOCK.N`,
//! `$fabin.SOCK.N`, `$mem.ARRAY.N`), so `flip` can set the advance-switch flag of exactly
//! the send before it. A scalar send is `mov16`/`mov32` with a `Scalar` source and a
//! length-1 fabout; a receive is `mov16`/`mov32` from a length-1 fabin into a `Ptr`
//! destination (the variable's address, or a frame slot for a register variable).
//!
//! Loops lowered to one DSD operation (a constant lower bound, every array indexed by the
//! loop variable plus a constant, one element type, scalars loop-invariant). The upper
//! bound is a constant, or a 16- or 32-bit integer expression evaluated once at run time:
//! then the descriptors' lengths are set from it (`dsd_set Length`, CSL's
//! `@set_dsd_length`) just before the op, which is skipped when the range is empty, so a
//! run-time-bounded transfer is still one (asynchronous, inside `parallel`) operation.
//! The run-time length is not checked against the arrays (nor is a scalar loop's index):
//! * `s[] <- a[i]` (mov16/mov32 to a length-N fabout), `a[i] <- s[]` (from a length-N
//!   fabin), `a[i] <+- s[]` (fadds/faddh/add16 with the fabin as second source);
//! * `a[i] = b[i]`, `a[i] = x` (fmovs/fmovh/mov16/mov32);
//! * `a[i] = b[i] op c[i]` and `b[i] op x` / `x op b[i]` for `+ -` (fadds/fsubs, faddh/fsubh,
//!   add16/sub16 on 16-bit integers), `*` on floats (fmuls/fmulh), `& | ^` on 16-bit
//!   integers (and16/or16/xor16);
//! * `a[i] = b[i]*x + c[i]` (either order; fmacs/fmach, fused), `a[i] = -b[i]`
//!   (fnegs/fnegh), `a[i] = max(b[i], c[i])` (fmaxs/fmaxh), `a[i] <+- b[i]`.
//!
//! Every other loop, including any with a run-time lower bound, 32-bit integer arithmetic,
//! conversions, calls or socket reads inside expressions, is a scalar loop.

use super::ast::{self, AssignOp, Expr, ExprKind, Stmt, StmtKind};
use super::lower::{Base, Local, Lower, Place, R, Reported, Sym, Val};
use super::types::{Scalar, Ty};
use crate::diag::{Diagnostic, codes};
use crate::ir::{Global, GlobalId, GlobalPlace, Inst, Reloc, VReg};
use crate::source::Span;
use csl_arch::Arch;
use csl_arch::dsd::{DESC_BYTES, DsdField, DsdKind, DsdOpcode, OperandKind, cfg, field};
use csl_arch::fabric::MICROTHREADS;

/// A DSD operand.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Opnd {
    /// A descriptor global (and, for frame arrays, its run-time base address).
    Desc(GlobalId),
    /// A scalar in a register.
    Scalar(VReg),
    /// A pointer to one scalar.
    Ptr(VReg),
}

/// An array operand of a vector loop.
#[derive(Clone, Copy, Debug)]
struct ArrOp<'e> {
    base: Base,
    /// Byte offset of element 0 of the loop.
    off: u32,
    elem: Scalar,
    /// A run-time part of the index (`a[i + n]`, `n` a 16- or 32-bit integer expression
    /// that does not mention the loop index), in elements: the descriptor's base address
    /// is set at run time.
    dynidx: Option<&'e Expr>,
}

/// A source of a vector op, before descriptors are made.
#[derive(Clone, Debug)]
enum VSrc<'e> {
    Arr(ArrOp<'e>, String),
    Scalar(&'e Expr),
    Fabin(usize),
}

impl<'a> Lower<'a> {
    /// Makes a descriptor global.
    #[allow(clippy::too_many_arguments)]
    pub fn desc_global(
        &mut self,
        hint: &str,
        kind: DsdKind,
        flags: u8,
        queue: u8,
        color: u8,
        base: Option<(GlobalId, u32)>,
        length: u16,
        span: Span,
    ) -> GlobalId {
        let mut init = vec![0u8; DESC_BYTES as usize];
        init[field::KIND as usize] = kind as u8;
        init[field::FLAGS as usize] = flags;
        init[field::QUEUE as usize] = queue;
        init[field::COLOR as usize] = color;
        let l = field::LENGTH as usize;
        init[l..l + 2].copy_from_slice(&length.to_le_bytes());
        if kind == DsdKind::Mem1d {
            let s = field::STRIDE as usize;
            init[s..s + 2].copy_from_slice(&1u16.to_le_bytes());
        }
        let relocs = base
            .map(|(g, off)| Reloc {
                offset: field::BASE,
                target: g,
                addend: off,
            })
            .into_iter()
            .collect();
        self.ndesc += 1;
        self.prog.globals.push(Global {
            name: format!("${hint}.{}", self.ndesc),
            size: DESC_BYTES,
            align: 2,
            init,
            relocs,
            span,
            place: GlobalPlace::Auto,
        })
    }

    /// The queue and colours of socket `s` (an unbound socket was reported already).
    fn sock(&mut self, s: usize) -> R<(String, u8, u8, u8)> {
        let Some(sock) = self.sockets.get(s) else {
            return Err(Reported);
        };
        let Some(b) = &sock.binding else {
            return Err(Reported);
        };
        Ok((sock.name.clone(), sock.queue, b.rx, b.tx))
    }

    fn fabin(&mut self, s: usize, len: u16, span: Span) -> R<GlobalId> {
        let (name, q, rx, _) = self.sock(s)?;
        Ok(self.desc_global(
            &format!("fabin.{name}"),
            DsdKind::FabIn,
            0,
            q,
            rx,
            None,
            len,
            span,
        ))
    }

    fn fabout(&mut self, s: usize, len: u16, flags: u8, span: Span) -> R<GlobalId> {
        let (name, q, _, tx) = self.sock(s)?;
        Ok(self.desc_global(
            &format!("fabout.{name}"),
            DsdKind::FabOut,
            flags,
            q,
            tx,
            None,
            len,
            span,
        ))
    }

    /// Picks the microthread of an asynchronous op (`queue`: of its fabric operand).
    fn alloc_ut(&mut self, queue: u8, span: Span) -> R<u8> {
        let arch = self.spec.arch;
        let Some(par) = self.par.as_mut() else {
            return Ok(0);
        };
        par.count += 1;
        let free = |m: u8, u: u8| m & (1 << u) == 0;
        let pick = if arch == Arch::Wse2 && queue < MICROTHREADS && free(par.uts, queue) {
            Some(queue)
        } else {
            (0..MICROTHREADS).find(|&u| free(par.uts, u))
        };
        match pick {
            Some(u) => {
                par.uts |= 1 << u;
                Ok(u)
            }
            None => Err(self.report(
                Diagnostic::error(
                    codes::TUNG_PARALLEL,
                    "too many socket statements in one `parallel` block",
                    span,
                    "the ninth one",
                )
                .with_note(format!(
                    "each runs on its own microthread, and a PE has {MICROTHREADS}"
                ))
                .with_help("split the block, or make a loop of transfers one statement"),
            )),
        }
    }

    /// Emits a DSD op; asynchronous (on its own microthread) when the statement is
    /// directly inside `parallel` and `fabric` is the queue of a fabric operand.
    fn emit_dsd(
        &mut self,
        op: DsdOpcode,
        dst: Opnd,
        srcs: &[Opnd],
        fabric: Option<u8>,
        span: Span,
    ) -> R<()> {
        let mut operands = [(OperandKind::None, None); 4];
        let all = std::iter::once(dst).chain(srcs.iter().copied());
        for (i, o) in all.enumerate().take(4) {
            operands[i] = match o {
                Opnd::Desc(g) => {
                    let r = self.fb.reg();
                    self.fb.emit(Inst::GlobalAddr {
                        dst: r,
                        global: g,
                        offset: 0,
                    });
                    (OperandKind::Desc, Some(r))
                }
                Opnd::Scalar(r) => (OperandKind::Scalar, Some(r)),
                Opnd::Ptr(r) => (OperandKind::Ptr, Some(r)),
            };
        }
        let (c, ut) = match fabric {
            Some(q) if self.par_direct && self.par.is_some() => {
                (cfg::ASYNC, self.alloc_ut(q, span)?)
            }
            Some(q) if self.spec.arch == Arch::Wse2 => (0, q.min(7)),
            _ => (0, 0),
        };
        self.fb.emit(Inst::DsdOp {
            op,
            operands,
            cfg: c,
            done: 0,
            done_task: None,
            ut,
            idx: None,
        });
        Ok(())
    }

    /// `@mov16`/`@mov32` (by the width of `ty`) from `src` to `dst`; `fabric` as for
    /// [`Self::emit_dsd`].
    fn mov_one(
        &mut self,
        ty: Scalar,
        dst: Opnd,
        src: Opnd,
        fabric: Option<u8>,
        span: Span,
    ) -> R<()> {
        self.emit_dsd(Self::mov_for(ty), dst, &[src], fabric, span)
    }

    /// Receives the next wavelet of socket `s` as `ty` into a new 4-byte frame slot
    /// (`fabric` as for [`Self::emit_dsd`]): the slot's offset and a register holding its
    /// address.
    fn receive_to_slot(
        &mut self,
        s: usize,
        ty: Scalar,
        fabric: Option<u8>,
        span: Span,
    ) -> R<(u32, VReg)> {
        let fabin = self.fabin(s, 1, span)?;
        let off = self.fb.frame_slot(4, 4);
        let a = self.fb.reg();
        self.fb.emit(Inst::FrameAddr { dst: a, off });
        self.mov_one(ty, Opnd::Ptr(a), Opnd::Desc(fabin), fabric, span)?;
        Ok((off, a))
    }

    fn mov_for(ty: Scalar) -> DsdOpcode {
        if ty.bits() == 16 {
            DsdOpcode::Mov16
        } else {
            DsdOpcode::Mov32
        }
    }

    fn check_wire_type(&mut self, ty: Scalar, span: Span) -> R<()> {
        if ty == Scalar::U64 {
            return Err(self.report(
                Diagnostic::error(
                    codes::TUNG_NO_64BIT,
                    "no 64-bit copies on this target: a `u64` cannot be sent or received",
                    span,
                    "a 64-bit transfer",
                )
                .with_help("send two u32 halves"),
            ));
        }
        Ok(())
    }

    /// Reads the next wavelet of socket `s` as `ty` (synchronously) into a register.
    pub fn receive_value(&mut self, s: usize, ty: Scalar, span: Span) -> R<Val> {
        self.check_wire_type(ty, span)?;
        let ty = if ty == Scalar::Bool { Scalar::Xp } else { ty };
        let saved = std::mem::replace(&mut self.par_direct, false);
        let r = self.receive_to_slot(s, ty, None, span);
        self.par_direct = saved;
        let (_, a) = r?;
        let dst = self.fb.reg();
        self.fb.emit(Inst::Load {
            w: ty.nt().width(),
            dst,
            addr: a,
        });
        Ok(Val::Reg { r: dst, ty })
    }

    /// `place <- s[]` with the wavelet read as `ty` (the place's type or the cast's).
    pub fn receive_into(&mut self, s: usize, place: &Place, ty: Scalar, span: Span) -> R<()> {
        self.check_wire_type(ty, span)?;
        let pty = self.place_scalar(place);
        let direct = pty.is_some_and(|p| p.same(ty));
        let (_, q, _, _) = self.sock(s)?;
        match place {
            Place::Mem {
                base, off, dynoff, ..
            } if direct => {
                let fabin = self.fabin(s, 1, span)?;
                let a = self.addr_of(*base, *off, *dynoff);
                self.mov_one(ty, Opnd::Ptr(a), Opnd::Desc(fabin), Some(q), span)
            }
            Place::Reg { r, .. } if direct && self.par_direct && self.par.is_some() => {
                // Through a frame slot, read back after the join.
                let (off, _) = self.receive_to_slot(s, ty, Some(q), span)?;
                if let Some(p) = self.par.as_mut() {
                    p.fixups.push((off, *r, ty));
                }
                Ok(())
            }
            _ => {
                let v = self.receive_value(s, ty, span)?;
                self.store(place, v, span)
            }
        }
    }

    /// Sends one value (or a control wavelet); returns the send's descriptor.
    pub fn send(&mut self, s: usize, rhs: &Expr, span: Span) -> R<GlobalId> {
        let (_, q, _, _) = self.sock(s)?;
        if let ExprKind::Control(w) = &rhs.kind {
            let v = self.expr(w)?;
            let r = self.materialize(v, Scalar::U32, w.span)?;
            let d = self.fabout(s, 1, csl_arch::dsd::flags::CONTROL, span)?;
            self.emit_dsd(
                DsdOpcode::Mov32,
                Opnd::Desc(d),
                &[Opnd::Scalar(r)],
                Some(q),
                span,
            )?;
            return Ok(d);
        }
        let v = if let Some(src) = self.socket_of_read(rhs) {
            let name = self
                .sockets
                .get(src)
                .map(|x| x.name.clone())
                .unwrap_or_default();
            return Err(self.report(
                Diagnostic::error(
                    codes::TUNG_SOCKET_READ_TYPE,
                    format!("the type of this read of `{name}` is unknown"),
                    rhs.span,
                    "how many bits to forward?",
                )
                .with_help(format!(
                    "say the width with a cast: `(u32){name}[]` forwards a whole wavelet"
                )),
            ));
        } else {
            self.expr(rhs)?
        };
        let (r, ty) = self.in_own_reg(v, rhs.span)?;
        let ty = if ty == Scalar::Bool { Scalar::Xp } else { ty };
        let d = self.fabout(s, 1, 0, span)?;
        self.mov_one(ty, Opnd::Desc(d), Opnd::Scalar(r), Some(q), span)?;
        Ok(d)
    }

    // ---- vector loops ----

    /// Runs `f` without keeping its diagnostics or code.
    fn quietly<T>(&mut self, f: impl FnOnce(&mut Self) -> R<T>) -> Option<T> {
        let n = self.diags.len();
        let saved = std::mem::replace(&mut self.fb, crate::sema::lower::FnBuilder::sink());
        let r = f(self);
        self.fb = saved;
        self.diags.truncate(n);
        r.ok()
    }

    /// A constant integer, or `None` (no diagnostics).
    pub(super) fn quiet_int(&mut self, e: &Expr) -> Option<i128> {
        self.quietly(|s| match s.expr(e)? {
            Val::Int(n) => Ok(n),
            Val::Const { bits, ty } if !ty.is_float() => Ok(super::lower::const_int(bits, ty)),
            _ => Err(Reported),
        })
    }

    /// `arr[i + c]` (or `arr[i + n]`, `n` a run-time integer) as a vector operand
    /// starting at loop index `lo`, `len` elements.
    fn arr_operand<'e>(
        &mut self,
        e: &'e Expr,
        var: &str,
        lo: i128,
        len: i128,
    ) -> Option<(ArrOp<'e>, String)> {
        let ExprKind::Index(b, Some(idx)) = &e.kind else {
            return None;
        };
        let ExprKind::Name(arr) = &b.kind else {
            return None;
        };
        let mut dynidx = None;
        let c: i128 = match &idx.kind {
            ExprKind::Name(n) if n.name == var => 0,
            ExprKind::Binary(op @ (ast::BinOp::Add | ast::BinOp::Sub), x, y) => {
                let (is_var, k) = match (&x.kind, &y.kind) {
                    (ExprKind::Name(n), _) if n.name == var => (true, y),
                    (_, ExprKind::Name(n)) if n.name == var && *op == ast::BinOp::Add => (true, x),
                    _ => (false, y),
                };
                if !is_var || mentions(k, var) {
                    return None;
                }
                match self.quiet_int(k) {
                    Some(k) => {
                        if *op == ast::BinOp::Sub {
                            -k
                        } else {
                            k
                        }
                    }
                    // A run-time offset (added, never subtracted): a 16-bit integer, as
                    // a scalar index is (a wider one stays a scalar loop).
                    None if *op == ast::BinOp::Add
                        && matches!(
                            self.dyn_bound_type(k),
                            Some(Scalar::Xp | Scalar::S16 | Scalar::U16)
                        ) =>
                    {
                        dynidx = Some(&**k);
                        0
                    }
                    None => return None,
                }
            }
            _ => return None,
        };
        let (base, ty) = match self.local(&arr.name) {
            Some(Local::Mem { off, ty }) => ((Base::Frame, off), ty),
            Some(Local::Ref { r, ty }) => ((Base::Ptr(r), 0), ty),
            Some(_) => return None,
            None => match self.globals.get(&arr.name) {
                // Hardware registers (`address(0x7b30)`) are not memory a DSD can walk:
                // their loops stay scalar loads and stores.
                Some(Sym::Global { g, .. })
                    if matches!(self.prog.globals[*g].place,
                        GlobalPlace::At(a) if a >= csl_arch::fabric::mmio::BASE) =>
                {
                    return None;
                }
                Some(Sym::Global { g, ty, .. }) => ((Base::Global(*g), 0), ty.clone()),
                _ => return None,
            },
        };
        let Ty::Array(elem, n) = ty else {
            return None;
        };
        let Ty::Scalar(elem) = *elem else {
            return None;
        };
        let first = lo + c;
        if first < 0 || first + len > i128::from(n) || elem == Scalar::U64 {
            return None;
        }
        Some((
            ArrOp {
                base: base.0,
                off: base.1 + (first as u32) * elem.bytes(),
                elem,
                dynidx,
            },
            arr.name.clone(),
        ))
    }

    fn mem_desc(&mut self, a: ArrOp<'_>, name: &str, len: u16, span: Span) -> R<GlobalId> {
        // A run-time part of the index: base = the array's element `first` + k elements.
        // Like a scalar index, k is not checked against the array's length.
        let scaled = match a.dynidx {
            Some(k) => {
                let kv = self.expr(k)?;
                let kr = self.materialize(kv, Scalar::U16, k.span)?;
                Some(self.scale_index(kr, a.elem.bytes()))
            }
            None => None,
        };
        // A global array at a constant offset is a relocation; anything else (a frame
        // array, a run-time offset) sets the descriptor's base address at run time.
        let reloc = match (a.base, scaled) {
            (Base::Global(g), None) => Some((g, a.off)),
            _ => None,
        };
        let d = self.desc_global(
            &format!("mem.{name}"),
            DsdKind::Mem1d,
            0,
            0,
            0,
            reloc,
            len,
            span,
        );
        if reloc.is_none() {
            let r = self.fb.reg();
            self.fb.emit(Inst::GlobalAddr {
                dst: r,
                global: d,
                offset: 0,
            });
            let base = self.addr_of(a.base, a.off, scaled);
            self.fb.emit(Inst::DsdSet {
                field: DsdField::Base,
                desc: r,
                val: base,
            });
        }
        Ok(d)
    }

    /// Tries to lower `var in [lo, hi) body` as one DSD operation. `Ok(Some(d))` when
    /// done (`d`: the fabout descriptor of a vector send), `Ok(None)` when the shape does
    /// not fit (nothing was emitted).
    pub fn try_vector(
        &mut self,
        var: &ast::Ident,
        range: &ast::Range,
        body: &Stmt,
    ) -> R<Option<Option<GlobalId>>> {
        let mut body = body;
        while let StmtKind::Block(v) = &body.kind {
            match v.as_slice() {
                [one] => body = one,
                _ => return Ok(None),
            }
        }
        let StmtKind::Assign(lhs, op, rhs) = &body.kind else {
            return Ok(None);
        };
        if matches!(range.hi.kind, ExprKind::Inf) {
            return Ok(None);
        }
        let Some(lo) = self.quiet_int(&range.lo) else {
            return Ok(None);
        };
        // A constant length, or (`dynty`, the bound's type) one set at run time: the
        // shape is checked as if the loop had one element.
        let (len, dynty) = match self.quiet_int(&range.hi) {
            Some(hi) => {
                let len = hi - lo + i128::from(range.closed);
                if !(1..0x7fff).contains(&len) {
                    return Ok(None);
                }
                (len, None)
            }
            None => match self.dyn_bound_type(&range.hi) {
                Some(t) if (-0x7fff..0x7fff).contains(&lo) => (1, Some(t)),
                _ => return Ok(None),
            },
        };
        let n16 = if dynty.is_some() { 0 } else { len as u16 };
        let dynb = dynty.map(|t| (range, lo, t));
        let v = var.name.as_str();
        let span = body.span;
        // Send: s[] <- a[i]
        if let Some(s) = self.socket_of_read(lhs) {
            if *op != AssignOp::Set {
                return Ok(None);
            }
            let Some((a, name)) = self.arr_operand(rhs, v, lo, len) else {
                return Ok(None);
            };
            let (_, q, _, _) = self.sock(s)?;
            let guard = self.open_dyn(dynb)?;
            let src = self.mem_desc(a, &name, n16, span)?;
            let d = self.fabout(s, n16, 0, span)?;
            self.set_lengths(guard, &[src, d]);
            self.mov_one(a.elem, Opnd::Desc(d), Opnd::Desc(src), Some(q), span)?;
            self.close_dyn(guard);
            return Ok(Some(Some(d)));
        }
        if *op == AssignOp::Acc && self.arr_operand(lhs, v, lo, len).is_none() && !mentions(lhs, v)
        {
            return self.try_reduction(lhs, rhs, (v, lo, len, dynb), span);
        }
        let Some((dst, dname)) = self.arr_operand(lhs, v, lo, len) else {
            return Ok(None);
        };
        let t = dst.elem;
        // Strip a cast to the destination's own type on a socket read.
        let rhs_read = match &rhs.kind {
            ExprKind::Cast(tr, inner) => match &tr.kind {
                ast::TypeKind::Scalar(ct) if ct.same(t) => self.socket_of_read(inner),
                _ => None,
            },
            _ => self.socket_of_read(rhs),
        };
        let mut srcs: Vec<VSrc<'_>> = Vec::new();
        let opcode = if let Some(s) = rhs_read {
            match op {
                AssignOp::Set => {
                    srcs.push(VSrc::Fabin(s));
                    Some(Self::mov_for(t))
                }
                AssignOp::Acc => {
                    srcs.push(VSrc::Arr(dst, dname.clone()));
                    srcs.push(VSrc::Fabin(s));
                    add_op(t)
                }
            }
        } else if *op == AssignOp::Acc {
            match self.vsrc(rhs, v, lo, len, t) {
                Some(x) => {
                    srcs.push(VSrc::Arr(dst, dname.clone()));
                    srcs.push(x);
                    add_op(t)
                }
                None => None,
            }
        } else {
            self.vshape(rhs, v, lo, len, t, &mut srcs)
        };
        let Some(opcode) = opcode else {
            return Ok(None);
        };
        // At least one source must be a vector, or the op would have length 1... the
        // destination's length applies then, which is what we want.
        let guard = self.open_dyn(dynb)?;
        let mut ops = Vec::new();
        let mut fabric = None;
        for s in &srcs {
            ops.push(match s {
                VSrc::Arr(a, name) => Opnd::Desc(self.mem_desc(*a, name, n16, span)?),
                VSrc::Fabin(sk) => {
                    let (_, q, _, _) = self.sock(*sk)?;
                    fabric = Some(q);
                    Opnd::Desc(self.fabin(*sk, n16, span)?)
                }
                VSrc::Scalar(e) => {
                    let val = self.expr(e)?;
                    Opnd::Scalar(self.materialize(val, t, e.span)?)
                }
            });
        }
        let d = self.mem_desc(dst, &dname, n16, span)?;
        let descs = descs_of(&ops, d);
        self.set_lengths(guard, &descs);
        self.emit_dsd(opcode, Opnd::Desc(d), &ops, fabric, span)?;
        self.close_dyn(guard);
        Ok(Some(None))
    }

    /// The type of a loop bound that is not a constant, if a run-time DSD length can be
    /// made of it: a 16- or 32-bit integer (no diagnostics, no code).
    fn dyn_bound_type(&mut self, hi: &Expr) -> Option<Scalar> {
        let t = self.quietly(|s| s.expr(hi))?.ty()?;
        match t {
            Scalar::Xp | Scalar::S16 | Scalar::U16 | Scalar::S32 | Scalar::U32 => Some(t),
            Scalar::Bool => Some(Scalar::Xp),
            _ => None,
        }
    }

    /// For a run-time bound: evaluates it (once, as the scalar loop would), skips the op
    /// when the range is empty (`hi <= lo`, or `hi < lo` when closed) and returns the
    /// length `hi - lo (+ 1)` and the block after the op. Nothing for a constant bound.
    fn open_dyn(&mut self, dynb: Option<(&ast::Range, i128, Scalar)>) -> R<Option<DynLen>> {
        let Some((range, lo, t)) = dynb else {
            return Ok(None);
        };
        let hv = self.expr(&range.hi)?;
        let h = self.materialize(hv, t, range.hi.span)?;
        let l = self.imm(lo as u32);
        let op = if range.closed {
            csl_arch::isa::CmpOp::Le
        } else {
            csl_arch::isa::CmpOp::Lt
        };
        let join = self.if_cmp(op, t, l, h);
        let len = self.fb.reg();
        self.fb
            .bin(csl_arch::isa::BinOp::Sub, Scalar::U16.nt(), len, h, l);
        if range.closed {
            let one = self.imm(1);
            self.fb
                .bin(csl_arch::isa::BinOp::Add, Scalar::U16.nt(), len, len, one);
        }
        Ok(Some(DynLen { len, join }))
    }

    /// Sets the length of every descriptor of a run-time-bounded op.
    fn set_lengths(&mut self, guard: Option<DynLen>, descs: &[GlobalId]) {
        let Some(g) = guard else {
            return;
        };
        for &d in descs {
            let r = self.fb.reg();
            self.fb.emit(Inst::GlobalAddr {
                dst: r,
                global: d,
                offset: 0,
            });
            self.fb.emit(Inst::DsdSet {
                field: DsdField::Length,
                desc: r,
                val: g.len,
            });
        }
    }

    /// Ends the guarded op of a run-time bound.
    fn close_dyn(&mut self, guard: Option<DynLen>) {
        if let Some(g) = guard {
            self.fb.terminate(crate::ir::Term::Jump(g.join));
            self.fb.switch_to(g.join);
        }
    }

    /// `s <+- rhs` over the loop, with `s` a scalar that does not depend on the index: one
    /// DSD reduction into `*&s` (`faddh`/`fadds`/`add16` of an array, `fmach`/`fmacs` of a
    /// product of an array and an array or a loop-invariant scalar). `s` is read once
    /// before and written once after; a register variable goes through a frame slot.
    #[allow(clippy::type_complexity)]
    fn try_reduction(
        &mut self,
        lhs: &Expr,
        rhs: &Expr,
        (v, lo, len, dynb): (&str, i128, i128, Option<(&ast::Range, i128, Scalar)>),
        span: Span,
    ) -> R<Option<Option<GlobalId>>> {
        use ast::BinOp as B;
        let Some(place) = self.quietly(|s| s.place(lhs)) else {
            return Ok(None);
        };
        let Some(t) = self.place_scalar(&place) else {
            return Ok(None);
        };
        let mut srcs: Vec<VSrc<'_>> = Vec::new();
        let opcode = match (&rhs.kind, class_of(t)) {
            (ExprKind::Binary(B::Mul, x, y), Class::Sp | Class::Hp) => {
                let (Some(a), Some(b)) = (self.vsrc(x, v, lo, len, t), self.vsrc(y, v, lo, len, t))
                else {
                    return Ok(None);
                };
                // fmac's scalar operand is its last.
                let (a, b) = match (a, b) {
                    (VSrc::Scalar(_), _) => return Ok(None),
                    pair => pair,
                };
                srcs.push(a);
                srcs.push(b);
                if t == Scalar::Sp {
                    DsdOpcode::Fmacs
                } else {
                    DsdOpcode::Fmach
                }
            }
            (_, class) => {
                let Some(VSrc::Arr(a, n)) = self.vsrc(rhs, v, lo, len, t) else {
                    return Ok(None);
                };
                srcs.push(VSrc::Arr(a, n));
                match class {
                    Class::Sp => DsdOpcode::Fadds,
                    Class::Hp => DsdOpcode::Faddh,
                    Class::I16 => DsdOpcode::Add16,
                    Class::W32 => return Ok(None),
                }
            }
        };
        if srcs.iter().any(|s| matches!(s, VSrc::Fabin(_))) {
            return Ok(None);
        }
        let n16 = if dynb.is_some() { 0 } else { len as u16 };
        let guard = self.open_dyn(dynb)?;
        let mut ops = Vec::new();
        for s in &srcs {
            ops.push(match s {
                VSrc::Arr(a, name) => Opnd::Desc(self.mem_desc(*a, name, n16, span)?),
                VSrc::Scalar(e) => {
                    let val = self.expr(e)?;
                    Opnd::Scalar(self.materialize(val, t, e.span)?)
                }
                VSrc::Fabin(_) => return Ok(None),
            });
        }
        let descs: Vec<GlobalId> = ops
            .iter()
            .filter_map(|o| match o {
                Opnd::Desc(g) => Some(*g),
                _ => None,
            })
            .collect();
        self.set_lengths(guard, &descs);
        let (addr, back) = match &place {
            Place::Mem {
                base, off, dynoff, ..
            } => (self.addr_of(*base, *off, *dynoff), None),
            Place::Reg { r, .. } => {
                let off = self.fb.frame_slot(4, 4);
                let a = self.fb.reg();
                self.fb.emit(Inst::FrameAddr { dst: a, off });
                self.fb.emit(Inst::Store {
                    w: t.nt().width(),
                    addr: a,
                    src: *r,
                });
                (a, Some(*r))
            }
        };
        let mut all = vec![Opnd::Ptr(addr)];
        all.extend(ops);
        let saved = std::mem::replace(&mut self.par_direct, false);
        let r = self.emit_dsd(opcode, Opnd::Ptr(addr), &all, None, span);
        self.par_direct = saved;
        r?;
        if let Some(r) = back {
            self.fb.emit(Inst::Load {
                w: t.nt().width(),
                dst: r,
                addr,
            });
        }
        self.close_dyn(guard);
        Ok(Some(None))
    }

    /// One source operand: an array element of type `t` or a loop-invariant scalar.
    fn vsrc<'e>(
        &mut self,
        e: &'e Expr,
        v: &str,
        lo: i128,
        len: i128,
        t: Scalar,
    ) -> Option<VSrc<'e>> {
        if let Some((a, name)) = self.arr_operand(e, v, lo, len) {
            return a.elem.same(t).then_some(VSrc::Arr(a, name));
        }
        if invariant(e, v) {
            // Its type must convert to `t` without error.
            let ok = self
                .quietly(|s| {
                    let x = s.expr(e)?;
                    s.convert(x, t, e.span, "converting")
                })
                .is_some();
            let typed_ok = self.quietly(|s| s.expr(e)).is_some_and(|x| match x.ty() {
                None => true,
                Some(xt) => xt.same(t) || (t.is_float() && xt.is_float() && xt.bits() <= t.bits()),
            });
            return (ok && typed_ok).then_some(VSrc::Scalar(e));
        }
        None
    }

    /// The shape of `a[i] = rhs`: pushes the sources and returns the opcode.
    fn vshape<'e>(
        &mut self,
        rhs: &'e Expr,
        v: &str,
        lo: i128,
        len: i128,
        t: Scalar,
        srcs: &mut Vec<VSrc<'e>>,
    ) -> Option<DsdOpcode> {
        use ast::BinOp as B;
        let class = class_of(t);
        match &rhs.kind {
            ExprKind::Binary(B::Add, x, y) => {
                // Multiply-add: b*s + c or c + b*s.
                for (m, c) in [(x, y), (y, x)] {
                    if let ExprKind::Binary(B::Mul, p, q) = &m.kind
                        && class.is_float()
                    {
                        let (arr, sc) = if self.arr_operand(p, v, lo, len).is_some() {
                            (p, q)
                        } else {
                            (q, p)
                        };
                        if let (
                            Some(VSrc::Arr(ba, bn)),
                            Some(VSrc::Scalar(se)),
                            Some(VSrc::Arr(ca, cn)),
                        ) = (
                            self.vsrc(arr, v, lo, len, t),
                            self.vsrc(sc, v, lo, len, t),
                            self.vsrc(c, v, lo, len, t),
                        ) {
                            srcs.push(VSrc::Arr(ca, cn));
                            srcs.push(VSrc::Arr(ba, bn));
                            srcs.push(VSrc::Scalar(se));
                            return Some(if t == Scalar::Sp {
                                DsdOpcode::Fmacs
                            } else {
                                DsdOpcode::Fmach
                            });
                        }
                    }
                }
                self.two(x, y, v, lo, len, t, srcs)?;
                add_op(t)
            }
            ExprKind::Binary(B::Sub, x, y) => {
                self.two(x, y, v, lo, len, t, srcs)?;
                match class {
                    Class::Sp => Some(DsdOpcode::Fsubs),
                    Class::Hp => Some(DsdOpcode::Fsubh),
                    Class::I16 => Some(DsdOpcode::Sub16),
                    Class::W32 => None,
                }
            }
            ExprKind::Binary(op @ (B::Mul | B::BitAnd | B::BitOr | B::BitXor), x, y) => {
                let opc = match (op, class) {
                    (B::Mul, Class::Sp) => DsdOpcode::Fmuls,
                    (B::Mul, Class::Hp) => DsdOpcode::Fmulh,
                    (B::BitAnd, Class::I16) => DsdOpcode::And16,
                    (B::BitOr, Class::I16) => DsdOpcode::Or16,
                    (B::BitXor, Class::I16) => DsdOpcode::Xor16,
                    _ => return None,
                };
                self.two(x, y, v, lo, len, t, srcs)?;
                Some(opc)
            }
            ExprKind::Max(x, y) if class.is_float() => {
                self.two(x, y, v, lo, len, t, srcs)?;
                Some(if t == Scalar::Sp {
                    DsdOpcode::Fmaxs
                } else {
                    DsdOpcode::Fmaxh
                })
            }
            ExprKind::Unary(ast::UnOp::Neg, x) if class.is_float() => {
                let VSrc::Arr(a, n) = self.vsrc(x, v, lo, len, t)? else {
                    return None;
                };
                srcs.push(VSrc::Arr(a, n));
                Some(if t == Scalar::Sp {
                    DsdOpcode::Fnegs
                } else {
                    DsdOpcode::Fnegh
                })
            }
            _ => {
                let s = self.vsrc(rhs, v, lo, len, t)?;
                srcs.push(s);
                Some(match class {
                    Class::Sp => DsdOpcode::Fmovs,
                    Class::Hp => DsdOpcode::Fmovh,
                    Class::I16 => DsdOpcode::Mov16,
                    Class::W32 => DsdOpcode::Mov32,
                })
            }
        }
    }

    /// Two sources, at least one of them an array.
    #[allow(clippy::too_many_arguments)]
    fn two<'e>(
        &mut self,
        x: &'e Expr,
        y: &'e Expr,
        v: &str,
        lo: i128,
        len: i128,
        t: Scalar,
        srcs: &mut Vec<VSrc<'e>>,
    ) -> Option<()> {
        let a = self.vsrc(x, v, lo, len, t)?;
        let b = self.vsrc(y, v, lo, len, t)?;
        if matches!((&a, &b), (VSrc::Scalar(_), VSrc::Scalar(_))) {
            return None;
        }
        srcs.push(a);
        srcs.push(b);
        Some(())
    }
}

/// The run-time length of a loop's DSD op and the block after the op.
#[derive(Clone, Copy)]
struct DynLen {
    len: VReg,
    join: crate::ir::BlockId,
}

/// The descriptors among `ops`, and `d`.
fn descs_of(ops: &[Opnd], d: GlobalId) -> Vec<GlobalId> {
    ops.iter()
        .filter_map(|o| match o {
            Opnd::Desc(g) => Some(*g),
            _ => None,
        })
        .chain(std::iter::once(d))
        .collect()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Sp,
    Hp,
    I16,
    W32,
}

impl Class {
    fn is_float(self) -> bool {
        matches!(self, Class::Sp | Class::Hp)
    }
}

fn class_of(t: Scalar) -> Class {
    match t {
        Scalar::Sp => Class::Sp,
        Scalar::Hp => Class::Hp,
        _ if t.bits() == 16 => Class::I16,
        _ => Class::W32,
    }
}

fn add_op(t: Scalar) -> Option<DsdOpcode> {
    match class_of(t) {
        Class::Sp => Some(DsdOpcode::Fadds),
        Class::Hp => Some(DsdOpcode::Faddh),
        Class::I16 => Some(DsdOpcode::Add16),
        Class::W32 => None,
    }
}

/// Whether `e` mentions the name `v`.
pub(crate) fn mentions(e: &Expr, v: &str) -> bool {
    let mut found = false;
    walk(e, &mut |x| {
        if let ExprKind::Name(n) = &x.kind
            && n.name == v
        {
            found = true;
        }
    });
    found
}

/// Whether `e` can be evaluated once before a vector op over `v`: no mention of `v`, no
/// calls, no socket reads, no array elements.
fn invariant(e: &Expr, v: &str) -> bool {
    let mut ok = true;
    walk(e, &mut |x| match &x.kind {
        ExprKind::Name(n) if n.name == v => ok = false,
        ExprKind::Call(..) | ExprKind::Index(..) | ExprKind::Control(_) | ExprKind::Ternary(..) => {
            ok = false
        }
        ExprKind::Binary(ast::BinOp::And | ast::BinOp::Or, ..) => ok = false,
        _ => {}
    });
    ok
}

/// Calls `f` on `e` and every subexpression.
pub(crate) fn walk(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Typed(a, ..)
        | ExprKind::Member(a, _)
        | ExprKind::Unary(_, a)
        | ExprKind::Cast(_, a)
        | ExprKind::Bitcast(_, a)
        | ExprKind::Control(a)
        | ExprKind::Index(a, None) => walk(a, f),
        ExprKind::Index(a, Some(b))
        | ExprKind::Binary(_, a, b)
        | ExprKind::Min(a, b)
        | ExprKind::Max(a, b)
        | ExprKind::Round(a, b) => {
            walk(a, f);
            walk(b, f);
        }
        ExprKind::Ternary(a, b, c) => {
            walk(a, f);
            walk(b, f);
            walk(c, f);
        }
        ExprKind::Call(_, args) => {
            for a in args {
                walk(a, f);
            }
        }
        _ => {}
    }
}
