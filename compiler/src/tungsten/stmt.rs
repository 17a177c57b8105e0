//! Tungsten statements: declarations, assignments, sends and receives, `flip`, `if`,
//! loops (`i in [a, b)`, `∀`, `forever`, `forever dispatch`), `parallel` and `return`.
//!
//! Errors are reported and the walk goes on with the next statement. `flip` is checked
//! against the statement just before it in the same block: a send on the same socket that
//! is one operation (a scalar send, or a loop lowered to one vector send).

use super::ast::{self, Arm, AssignOp, Expr, ExprKind, Init, LoopHead, Stmt, StmtKind};
use super::lower::{Base, LastSend, Local, Lower, Par, Place, R, Reported, Val, const_int};
use super::types::{Scalar, Ty, common};
use crate::diag::{Diagnostic, codes};
use crate::ir::{BlockId, Inst, Term, VReg};
use crate::source::Span;
use csl_arch::isa::{BinOp, CmpOp, NumTy};

impl<'a> Lower<'a> {
    /// The head of a counting loop over `i`: jumps to `head`, which runs `bodyb` while
    /// `i < bound` (`<=` when `closed`; compared as `nt`) and else leaves for `exit`, or
    /// always runs `bodyb` without a bound. Continues in `bodyb`.
    fn range_head(
        &mut self,
        (head, bodyb, exit): (BlockId, BlockId, BlockId),
        i: VReg,
        bound: Option<VReg>,
        closed: bool,
        nt: NumTy,
    ) {
        match bound {
            Some(h) => {
                let op = if closed { CmpOp::Le } else { CmpOp::Lt };
                self.fb.loop_header(head, bodyb, exit, (op, nt, i, h));
            }
            None => {
                self.fb.terminate(Term::Jump(head));
                self.fb.switch_to(head);
                self.fb.terminate(Term::Jump(bodyb));
                self.fb.switch_to(bodyb);
            }
        }
    }

    /// Lowers a list of statements in a new scope.
    pub fn block(&mut self, stmts: &[Stmt]) {
        self.scopes.push(Default::default());
        self.last_send = None;
        for s in stmts {
            self.stmt(s);
        }
        self.scopes.pop();
        self.last_send = None;
    }

    /// Lowers one statement (errors are recorded; the walk goes on).
    pub fn stmt(&mut self, s: &Stmt) {
        self.fb.mark(s.span);
        let was_direct = self.par_direct;
        let last = self.last_send.take();
        let mut sent = None;
        let _ = self.stmt_inner(s, last, &mut sent);
        self.par_direct = was_direct;
        self.last_send = sent;
    }

    fn stmt_inner(
        &mut self,
        s: &Stmt,
        last: Option<LastSend>,
        sent: &mut Option<LastSend>,
    ) -> R<()> {
        match &s.kind {
            StmtKind::Empty | StmtKind::Error => Ok(()),
            StmtKind::Decl(d) => self.local_decl(d),
            StmtKind::Expr(e) => {
                self.par_direct = false;
                match &e.kind {
                    ExprKind::Call(name, args) => self.call(name, args, e.span, false).map(|_| ()),
                    _ => {
                        if self.is_socket_read(e) {
                            // A bare read discards one wavelet (ours): read it whole.
                            let Some(sk) = self.socket_of_read(e) else {
                                return Ok(());
                            };
                            return self.receive_value(sk, Scalar::U32, e.span).map(|_| ());
                        }
                        self.expr(e).map(|_| ())
                    }
                }
            }
            StmtKind::Assign(lhs, op, rhs) => self.assign(lhs, *op, rhs, s.span, sent),
            StmtKind::Block(b) => {
                self.par_direct = false;
                self.block(b);
                Ok(())
            }
            StmtKind::Parallel(b) => self.parallel(b, s.span),
            StmtKind::If(c, a, b) => {
                self.par_direct = false;
                self.if_stmt(c, a, b.as_deref())
            }
            StmtKind::Loop(head, body) => self.loop_stmt(head, body, s.span, sent),
            StmtKind::Let(id, range) => self.declare_local(id, Local::Let(range.clone())),
            StmtKind::Dispatch(sock, arms) => self.dispatch(sock, arms, s.span),
            StmtKind::Flip(sock) => self.flip(sock, last, s.span),
            StmtKind::Return(e) => self.ret(e.as_ref(), s.span),
        }
    }

    fn assign(
        &mut self,
        lhs: &Expr,
        op: AssignOp,
        rhs: &Expr,
        span: Span,
        sent: &mut Option<LastSend>,
    ) -> R<()> {
        // Send.
        if let Some(sk) = self.socket_of_read(lhs) {
            if op == AssignOp::Acc {
                return Err(self.err(
                    codes::TUNG_SOCKET_MISUSE,
                    "`<+-` cannot send",
                    span,
                    "a send adds nothing",
                ));
            }
            // A flip may only ride on a control wavelet whose command 0 is a NOP: remember
            // command 0 of a constant word for `flip` to check.
            let ctrl_cmd0 = match &rhs.kind {
                ExprKind::Control(w) => self
                    .quiet_int(w)
                    .map(|n| csl_arch::fabric::control::command(n as u32, 0)),
                _ => None,
            };
            let d = self.send(sk, rhs, span)?;
            *sent = Some(LastSend {
                socket: sk,
                desc: Some(d),
                span,
                ctrl_cmd0,
            });
            return Ok(());
        }
        if let ExprKind::Index(b, None) = &lhs.kind {
            return Err(self.socket_misuse(
                format!("`{}` is not a socket", super::lower::describe_expr(b)),
                lhs.span,
                "sent to here",
                "declare it with `socket name;`, or index an array with `a[i]`",
            ));
        }
        if let ExprKind::Member(b, f) = &lhs.kind
            && self.is_socket_read(b)
        {
            let _ = f;
            return Err(self.index_half(lhs.span));
        }
        // Receive (possibly through a cast saying how to read the bits).
        let (read, cast) = match &rhs.kind {
            ExprKind::Cast(t, inner) if self.is_socket_read(inner) => {
                (self.socket_of_read(inner), Some(t))
            }
            ExprKind::Member(b, f) if self.is_socket_read(b) && f.name == "data" => {
                (self.socket_of_read(b), None)
            }
            _ => (self.socket_of_read(rhs), None),
        };
        if let Some(sk) = read {
            let place = match self.place(lhs) {
                Ok(p) => p,
                Err(r) => {
                    return Err(r);
                }
            };
            let Some(pty) = self.place_scalar(&place) else {
                let d = match &place {
                    Place::Mem { ty, .. } => ty.describe(&self.aggs),
                    Place::Reg { ty, .. } => ty.name().into(),
                };
                return Err(self.socket_misuse(
                    format!("cannot receive into a whole `{d}`"),
                    lhs.span,
                    "not a scalar",
                    "receive into a scalar member (`u.u <- s[];`) or an element, or loop over the elements",
                ));
            };
            let mut rty = match cast {
                Some(t) => self.scalar_type(t, "a cast's type")?,
                None => pty,
            };
            if matches!(&rhs.kind, ExprKind::Member(..)) {
                rty = if pty.bits() == 16 { pty } else { Scalar::U16 };
            }
            if op == AssignOp::Acc {
                let v = self.receive_value(sk, rty, rhs.span)?;
                return self.accumulate(&place, v, span);
            }
            if rty.same(pty) {
                return self.receive_into(sk, &place, rty, span);
            }
            let v = self.receive_value(sk, rty, rhs.span)?;
            let v = self.convert(v, pty, span, "assigning")?;
            return self.store(&place, v, span);
        }
        self.par_direct = false;
        let place = self.place(lhs)?;
        if let Place::Mem {
            ty: ty @ (Ty::Agg(_) | Ty::Array(..)),
            base,
            off,
            dynoff,
        } = &place
        {
            // Whole unions, structs or arrays: a copy of the same type.
            let rp = self.place(rhs)?;
            if let Place::Mem {
                ty: rty,
                base: rb,
                off: ro,
                dynoff: rd,
            } = &rp
                && rty == ty
                && op == AssignOp::Set
            {
                let bytes = ty.size(&self.aggs);
                let d = self.addr_of(*base, *off, *dynoff);
                let s = self.addr_of(*rb, *ro, *rd);
                self.fb.emit(Inst::Copy {
                    dst: d,
                    src: s,
                    bytes: bytes.min(u32::from(u16::MAX)) as u16,
                });
                return Ok(());
            }
            let d = ty.describe(&self.aggs);
            return Err(self.err(
                codes::TUNG_TYPE_MISMATCH,
                format!("only a `{d}` can be assigned to a `{d}`"),
                rhs.span,
                "a different type",
            ));
        }
        let v = self.expr(rhs)?;
        match op {
            AssignOp::Set => {
                let ty = self.place_scalar(&place).unwrap_or(Scalar::Xp);
                let v = self.convert(v, ty, rhs.span, "assigning")?;
                self.store(&place, v, span)
            }
            AssignOp::Acc => self.accumulate(&place, v, span),
        }
    }

    /// `place <- place + v` with the place evaluated once.
    /// The addition follows the coercion rules (`xp d <+- 1.5` adds in `sp`), and the sum
    /// is converted back to the place's type as an assignment converts.
    fn accumulate(&mut self, place: &Place, v: Val, span: Span) -> R<()> {
        let cur = self.load(place, span)?;
        let ty = self.place_scalar(place).unwrap_or(Scalar::Xp);
        let (cur, v, _) = self.coerce_pair(cur, v, span)?;
        let sum = self.arith(ast::BinOp::Add, cur, v, span)?;
        let sum = self.convert(sum, ty, span, "assigning")?;
        self.store(place, sum, span)
    }

    /// The socket `sock` names (a global socket no local hides); `label` says what needs it.
    fn socket_named(&mut self, sock: &ast::Ident, label: &str) -> R<usize> {
        match self.globals.get(&sock.name) {
            Some(super::lower::Sym::Socket(i)) if self.local(&sock.name).is_none() => Ok(*i),
            _ => Err(self.err(
                codes::TUNG_SOCKET_MISUSE,
                format!("`{}` is not a socket", sock.name),
                sock.span,
                label,
            )),
        }
    }

    fn flip(&mut self, sock: &ast::Ident, last: Option<LastSend>, span: Span) -> R<()> {
        let s = self.socket_named(sock, "flip needs a socket")?;
        match last {
            Some(LastSend {
                socket,
                ctrl_cmd0: Some(c),
                span: prev,
                ..
            }) if socket == s && c & 3 != csl_arch::fabric::control::NOP => {
                let what = csl_arch::fabric::control::opcode_phrase(c);
                Err(self.report(
                    Diagnostic::error(
                        codes::TUNG_FLIP,
                        format!("`flip` on a control wavelet whose command 0 is {what}"),
                        span,
                        "this flip",
                    )
                    .with_label(prev, "command 0 (bits 24:22) of this word is not a NOP")
                    .with_note("only data wavelets, or control wavelets whose command 0 is a NOP (opcode bits 23:22 = 00), can carry the flip bit"),
                ))
            }
            Some(LastSend { socket, desc: Some(g), .. }) if socket == s => {
                // A control word known only at run time is not checked.
                if let Some(gl) = self.prog.globals.get_mut(g)
                    && let Some(b) = gl.init.get_mut(csl_arch::dsd::field::FLAGS as usize)
                {
                    *b |= csl_arch::dsd::flags::ADVANCE_SWITCH;
                }
                Ok(())
            }
            Some(LastSend { socket, desc: None, span: prev, .. }) if socket == s => Err(self.report(
                Diagnostic::error(
                    codes::TUNG_FLIP,
                    "`flip` after a loop of sends that is not one transfer",
                    span,
                    "cannot mark the last wavelet",
                )
                .with_label(prev, "this loop sends one wavelet per iteration")
                .with_help("send array elements as they are, `i in [0, n) s[] <- a[i];` (n constant or not), so the loop is one operation"),
            )),
            Some(LastSend { span: prev, socket, .. }) => {
                let other = self.sockets.get(socket).map(|x| x.name.clone()).unwrap_or_default();
                Err(self.report(
                    Diagnostic::error(
                        codes::TUNG_FLIP,
                        format!("`flip {}[]` must directly follow a send on `{}`", sock.name, sock.name),
                        span,
                        "this flip",
                    )
                    .with_label(prev, format!("the statement before sends on `{other}`")),
                ))
            }
            None => Err(self.report(
                Diagnostic::error(
                    codes::TUNG_FLIP,
                    format!("`flip {}[]` must directly follow a send on `{}`", sock.name, sock.name),
                    span,
                    "no send directly before this",
                )
                .with_note("the flip bit rides on the last wavelet of the send just before it; a statement in between is not allowed"),
            )),
        }
    }

    fn if_stmt(&mut self, c: &Expr, a: &Stmt, b: Option<&Stmt>) -> R<()> {
        let cv = self.expr(c)?;
        let cond = self.truth(cv, c.span)?;
        let then = self.fb.block();
        let join = self.fb.block();
        let otherwise = if b.is_some() { self.fb.block() } else { join };
        self.fb.branch(cond, then, otherwise);
        self.fb.switch_to(then);
        self.scoped(a);
        self.fb.terminate(Term::Jump(join));
        if let Some(b) = b {
            self.fb.switch_to(otherwise);
            self.scoped(b);
            self.fb.terminate(Term::Jump(join));
        }
        self.fb.switch_to(join);
        Ok(())
    }

    /// A statement in a scope of its own.
    fn scoped(&mut self, s: &Stmt) {
        self.scopes.push(Default::default());
        self.stmt(s);
        self.scopes.pop();
    }

    fn loop_stmt(
        &mut self,
        head: &LoopHead,
        body: &Stmt,
        span: Span,
        sent: &mut Option<LastSend>,
    ) -> R<()> {
        match head {
            LoopHead::Forever => {
                self.par_direct = false;
                let top = self.fb.block();
                self.fb.terminate(Term::Jump(top));
                self.fb.switch_to(top);
                self.scoped(body);
                self.fb.terminate(Term::Jump(top));
                let after = self.fb.block();
                self.fb.switch_to(after);
                Ok(())
            }
            LoopHead::In(var, range) => self.range_loop(var, range, body, span, sent),
            LoopHead::Forall(var) => match self.local(&var.name) {
                Some(Local::Let(range)) => self.range_loop(var, &range, body, span, sent),
                _ => Err(self.report(
                    Diagnostic::error(
                        codes::TUNG_UNDEFINED,
                        format!("no `let {} in [a, b);` for this `∀`", var.name),
                        var.span,
                        "not a `let` index",
                    )
                    .with_help(format!(
                        "declare the index first: `let {} in [0, N);`",
                        var.name
                    )),
                )),
            },
        }
    }

    fn range_loop(
        &mut self,
        var: &ast::Ident,
        range: &ast::Range,
        body: &Stmt,
        span: Span,
        sent: &mut Option<LastSend>,
    ) -> R<()> {
        // The one loop form that may use `.index`.
        if let Some(r) = self.index_loop(var, range, body, span) {
            self.par_direct = false;
            return r;
        }
        if let Some(d) = self.try_vector(var, range, body)? {
            if let Some(sk) = self.socket_of_send(body) {
                *sent = Some(LastSend {
                    socket: sk,
                    desc: d,
                    span,
                    ctrl_cmd0: None,
                });
            }
            return Ok(());
        }
        let was_direct = self.par_direct;
        self.par_direct = false;
        let lo = self.expr(&range.lo)?;
        let hi = match range.hi.kind {
            ExprKind::Inf => None,
            _ => Some(self.expr(&range.hi)?),
        };
        let ty = match (lo.ty(), hi.and_then(|h| h.ty())) {
            (None, None) => Scalar::Xp,
            (Some(t), None) | (None, Some(t)) => t,
            (Some(a), Some(b)) => common(a, b).unwrap_or(Scalar::Xp),
        };
        let ty = if ty == Scalar::Bool { Scalar::Xp } else { ty };
        let i = self.fb.reg();
        let l = self.materialize(lo, ty, range.lo.span)?;
        self.fb.emit(Inst::Mov { dst: i, src: l });
        let h = match hi {
            Some(h) => Some(self.materialize(h, ty, range.hi.span)?),
            None => None,
        };
        let head = self.fb.block();
        let bodyb = self.fb.block();
        let exit = self.fb.block();
        self.range_head((head, bodyb, exit), i, h, range.closed, ty.nt());
        self.scopes.push(Default::default());
        if let Some(sc) = self.scopes.last_mut() {
            sc.insert(var.name.clone(), Local::Var { r: i, ty });
        }
        self.stmt(body);
        self.scopes.pop();
        // The increment belongs to the loop's line, not to the body's last statement.
        self.fb.mark(span);
        let one = if ty.is_float() {
            self.imm(super::lower::wrap_int(1, ty) as u32)
        } else {
            self.imm(1)
        };
        self.fb.bin(BinOp::Add, ty.nt(), i, i, one);
        self.fb.terminate(Term::Jump(head));
        self.fb.switch_to(exit);
        if let Some(sk) = self.socket_of_send(body) {
            *sent = Some(LastSend {
                socket: sk,
                desc: None,
                span,
                ctrl_cmd0: None,
            });
        }
        self.par_direct = was_direct;
        Ok(())
    }

    /// The socket a statement sends on, if it is a single send.
    fn socket_of_send(&self, body: &Stmt) -> Option<usize> {
        let mut b = body;
        while let StmtKind::Block(v) = &b.kind {
            match v.as_slice() {
                [one] => b = one,
                _ => return None,
            }
        }
        match &b.kind {
            StmtKind::Assign(l, AssignOp::Set, _) => self.socket_of_read(l),
            _ => None,
        }
    }

    /// `i in [a, b) x[s[].index] <- s[].data;`: `Some` if the loop uses `.index`/`.data`.
    fn index_loop(
        &mut self,
        var: &ast::Ident,
        range: &ast::Range,
        body: &Stmt,
        span: Span,
    ) -> Option<R<()>> {
        let uses_halves = stmt_mentions_half(body, self);
        if !uses_halves {
            return None;
        }
        let mut b = body;
        while let StmtKind::Block(v) = &b.kind {
            match v.as_slice() {
                [one] => b = one,
                _ => return Some(Err(self.index_half(span))),
            }
        }
        let StmtKind::Assign(lhs, AssignOp::Set, rhs) = &b.kind else {
            return Some(Err(self.index_half(b.span)));
        };
        let ExprKind::Index(arr, Some(idx)) = &lhs.kind else {
            return Some(Err(self.index_half(b.span)));
        };
        let (ExprKind::Member(ib, ifield), ExprKind::Member(db, dfield)) = (&idx.kind, &rhs.kind)
        else {
            return Some(Err(self.index_half(b.span)));
        };
        let (Some(si), Some(sd)) = (self.socket_of_read(ib), self.socket_of_read(db)) else {
            return Some(Err(self.index_half(b.span)));
        };
        if si != sd || !matches!(ifield.name.as_str(), "index" | "idx") || dfield.name != "data" {
            return Some(Err(self.index_half(b.span)));
        }
        let _ = var;
        Some(self.index_loop_body(arr, si, range, body))
    }

    fn index_loop_body(&mut self, arr: &Expr, s: usize, range: &ast::Range, body: &Stmt) -> R<()> {
        let (base, off, dynoff, elem, _) = self.array_place(arr)?;
        let Ty::Scalar(et) = *elem else {
            return Err(self.err(
                codes::TUNG_TYPE_MISMATCH,
                "the array must hold 16-bit scalars",
                arr.span,
                "here",
            ));
        };
        if et.bits() != 16 {
            return Err(self.err(
                codes::TUNG_TYPE_MISMATCH,
                format!(
                    "the data half of a wavelet is 16 bits, but `{}` holds `{}`",
                    super::lower::describe_expr(arr),
                    et.name()
                ),
                arr.span,
                "not a 16-bit array",
            ));
        }
        let lo = self.expr(&range.lo)?;
        let hi = match range.hi.kind {
            ExprKind::Inf => None,
            _ => Some(self.expr(&range.hi)?),
        };
        let i = self.fb.reg();
        let l = self.materialize(lo, Scalar::Xp, range.lo.span)?;
        self.fb.emit(Inst::Mov { dst: i, src: l });
        let h = match hi {
            Some(h) => Some(self.materialize(h, Scalar::Xp, range.hi.span)?),
            None => None,
        };
        let head = self.fb.block();
        let bodyb = self.fb.block();
        let exit = self.fb.block();
        self.range_head((head, bodyb, exit), i, h, range.closed, Scalar::Xp.nt());
        let w = self.receive_value(s, Scalar::U32, body.span)?;
        let Val::Reg { r: w, .. } = w else {
            return Err(Reported);
        };
        let data = self.fb.reg();
        let m = self.imm(0xffff);
        self.fb.bin(BinOp::And, Scalar::U32.nt(), data, w, m);
        let idx = self.fb.reg();
        let sh = self.imm(16);
        self.fb.bin(BinOp::Shr, Scalar::U32.nt(), idx, w, sh);
        let two = self.imm(2);
        let byte = self.fb.reg();
        self.fb.bin(BinOp::Mul, Scalar::U16.nt(), byte, idx, two);
        let total = match dynoff {
            Some(d) => {
                let t = self.fb.reg();
                self.fb.bin(BinOp::Add, Scalar::U16.nt(), t, d, byte);
                t
            }
            None => byte,
        };
        let p = Place::Mem {
            base,
            off,
            dynoff: Some(total),
            ty: Ty::Scalar(et),
        };
        self.store(&p, Val::Reg { r: data, ty: et }, body.span)?;
        let one = self.imm(1);
        self.fb.bin(BinOp::Add, Scalar::Xp.nt(), i, i, one);
        self.fb.terminate(Term::Jump(head));
        self.fb.switch_to(exit);
        Ok(())
    }

    fn parallel(&mut self, body: &[Stmt], span: Span) -> R<()> {
        if self.par.is_some() && self.par_direct {
            // A nested parallel block joins with its parent.
            self.scopes.push(Default::default());
            for s in body {
                self.par_direct = true;
                self.stmt(s);
            }
            self.scopes.pop();
            return Ok(());
        }
        let outer = self.par.replace(Par::default());
        self.scopes.push(Default::default());
        self.last_send = None;
        for s in body {
            self.par_direct = true;
            self.stmt(s);
        }
        self.par_direct = false;
        self.scopes.pop();
        let par = std::mem::replace(&mut self.par, outer).unwrap_or_default();
        if par.uts != 0 {
            self.fb.emit(Inst::UtWait { mask: par.uts });
        }
        for (off, r, ty) in par.fixups {
            let a = self.fb.reg();
            self.fb.emit(Inst::FrameAddr { dst: a, off });
            self.fb.emit(Inst::Load {
                w: ty.nt().width(),
                dst: r,
                addr: a,
            });
        }
        let _ = span;
        Ok(())
    }

    fn dispatch(&mut self, sock: &ast::Ident, arms: &[Arm], span: Span) -> R<()> {
        self.par_direct = false;
        let s = self.socket_named(sock, "dispatch needs a socket")?;
        let mut wave = None;
        for a in arms {
            match a {
                Arm::Wavelet(p, b, sp) => {
                    if wave.is_some() {
                        return Err(self.err(
                            codes::TUNG_DUPLICATE,
                            "two `wavelet` arms",
                            *sp,
                            "second arm",
                        ));
                    }
                    wave = Some((p, b));
                }
                Arm::Control(_, sp) => {
                    return Err(self.report(
                        Diagnostic::error(
                            codes::TUNG_UNSUPPORTED,
                            "`control()` arms of `dispatch` are not supported yet",
                            *sp,
                            "not supported",
                        )
                        .with_note("control wavelets would need a control task bound for the socket's colour"),
                    ));
                }
            }
        }
        let top = self.fb.block();
        self.fb.terminate(Term::Jump(top));
        self.fb.switch_to(top);
        self.scopes.push(Default::default());
        if let Some((p, b)) = wave {
            match p {
                Some((t, name)) => {
                    let ty = self.scalar_type(t, "a wavelet's type")?;
                    let v = self.receive_value(s, ty, name.span)?;
                    let (r, ty) = self.in_own_reg(v, name.span)?;
                    let var = self.fb.reg();
                    self.fb.emit(Inst::Mov { dst: var, src: r });
                    self.declare_local(name, Local::Var { r: var, ty })?;
                }
                None => {
                    self.receive_value(s, Scalar::U32, span)?;
                }
            }
            self.block(b);
        } else {
            self.receive_value(s, Scalar::U32, span)?;
        }
        self.scopes.pop();
        self.fb.terminate(Term::Jump(top));
        let after = self.fb.block();
        self.fb.switch_to(after);
        Ok(())
    }

    fn ret(&mut self, e: Option<&Expr>, span: Span) -> R<()> {
        self.par_direct = false;
        match (e, self.ret_ty) {
            (Some(e), Some(t)) => {
                let r = (|| {
                    let v = if let Some(s) = self.socket_of_read(e) {
                        self.receive_value(s, t, e.span)?
                    } else {
                        self.expr(e)?
                    };
                    self.materialize(v, t, e.span)
                })();
                match r {
                    Ok(r) => {
                        self.fb.terminate_and_continue(Term::Ret(Some(r)));
                        Ok(())
                    }
                    Err(x) => {
                        // Still a return: no "missing return" on top of the error.
                        self.fb.terminate_and_continue(Term::Unreachable);
                        Err(x)
                    }
                }
            }
            (None, None) => {
                self.fb.terminate_and_continue(Term::Ret(None));
                Ok(())
            }
            (Some(e), None) => Err(self.err(
                codes::TUNG_CALL,
                "this function returns no value",
                e.span,
                "a value returned here",
            )),
            (None, Some(t)) => Err(self.err(
                codes::TUNG_CALL,
                format!("this function returns a `{}`", t.name()),
                span,
                "no value returned",
            )),
        }
    }

    /// Resolves the type of a declaration (element type and dimensions).
    pub fn decl_type(&mut self, d: &ast::VarDecl) -> R<Ty> {
        self.array_type(&d.ty, &d.dims, &d.name)
    }

    /// The type `elem` with dimensions `dims` (outermost first) of the name `name`.
    pub fn array_type(
        &mut self,
        elem: &ast::TypeRef,
        dims: &[ast::Dim],
        name: &ast::Ident,
    ) -> R<Ty> {
        let mut ty = self.type_of(elem)?;
        for dim in dims.iter().rev() {
            let n = self.const_int(&dim.len, "an array length")?;
            if n <= 0 || n > 0x8000 {
                return Err(self.err(
                    codes::TUNG_TYPE_MISMATCH,
                    format!("an array length must be between 1 and 32768, not {n}"),
                    dim.len.span,
                    "bad length",
                ));
            }
            ty = Ty::Array(Box::new(ty), n as u32);
        }
        if ty.size(&self.aggs) > csl_arch::fabric::PE_MEMORY_BYTES {
            return Err(self.err(
                codes::TUNG_TYPE_MISMATCH,
                format!("`{}` does not fit in PE memory", name.name),
                name.span,
                "too large",
            ));
        }
        Ok(ty)
    }

    fn local_decl(&mut self, d: &ast::VarDecl) -> R<()> {
        self.par_direct = false;
        if d.is_param || d.is_extern || d.address.is_some() {
            let what = if d.is_param {
                "a param"
            } else if d.is_extern {
                "`extern`"
            } else {
                "`address(...)`"
            };
            return Err(self.err(
                codes::TUNG_ADDRESS,
                format!("{what} is only allowed at file scope"),
                d.span,
                "inside a block",
            ));
        }
        let ty = self.decl_type(d)?;
        match ty {
            Ty::Scalar(Scalar::U64) => Err(self.no_64bit_decl(d)),
            Ty::Scalar(s) => {
                // A bad initialiser is reported once: the variable is still declared (as
                // 0), so its later uses do not add "not declared" errors.
                let init = self
                    .scalar_init(d, s)
                    .and_then(|v| self.materialize(v, s, d.span));
                let (src, failed) = match init {
                    Ok(src) => (src, None),
                    Err(r) => match self.materialize(Val::Const { bits: 0, ty: s }, s, d.span) {
                        Ok(zero) => (zero, Some(r)),
                        Err(_) => return Err(r),
                    },
                };
                let r = self.fb.reg();
                self.fb.emit(Inst::Mov { dst: r, src });
                self.declare_local(&d.name, Local::Var { r, ty: s })?;
                failed.map_or(Ok(()), Err)
            }
            ty => {
                let size = ty.size(&self.aggs);
                let align = ty.align(&self.aggs);
                let off = self.fb.frame_slot(size, align);
                self.declare_local(
                    &d.name,
                    Local::Mem {
                        off,
                        ty: ty.clone(),
                    },
                )?;
                match &d.init {
                    None => Ok(()),
                    Some(Init::List(items, sp)) => {
                        let elems = flat_elems(&ty, &self.aggs);
                        if items.len() > elems.len() {
                            return Err(self.err(
                                codes::TUNG_INIT,
                                format!("{} values for {} elements", items.len(), elems.len()),
                                *sp,
                                "too many values",
                            ));
                        }
                        for (e, (eoff, et)) in items.iter().zip(elems) {
                            let v = if matches!(e.kind, ExprKind::Nan) && et.is_float() {
                                Val::Const {
                                    bits: super::lower::float_bits(f64::NAN, et),
                                    ty: et,
                                }
                            } else {
                                self.expr(e)?
                            };
                            let p = Place::Mem {
                                base: Base::Frame,
                                off: off + eoff,
                                dynoff: None,
                                ty: Ty::Scalar(et),
                            };
                            let v = self.convert(v, et, e.span, "initialising")?;
                            self.store(&p, v, e.span)?;
                        }
                        Ok(())
                    }
                    Some(Init::Expr(e)) => Err(self.err(
                        codes::TUNG_INIT,
                        format!(
                            "`{}` needs a list `{{...}}` as its initialiser",
                            d.name.name
                        ),
                        e.span,
                        "a single value",
                    )),
                }
            }
        }
    }

    /// The initial value of a scalar local declaration (0 without an initialiser).
    fn scalar_init(&mut self, d: &ast::VarDecl, s: Scalar) -> R<Val> {
        Ok(match &d.init {
            Some(Init::Expr(e)) => {
                if let Some(sk) = self.socket_of_read(e) {
                    self.receive_value(sk, s, e.span)?
                } else if let ExprKind::Cast(t, inner) = &e.kind
                    && let Some(sk) = self.socket_of_read(inner)
                {
                    let ct = self.scalar_type(t, "a cast's type")?;
                    let v = self.receive_value(sk, ct, inner.span)?;
                    self.convert(v, s, e.span, "initialising")?
                } else {
                    let v = self.expr(e)?;
                    self.convert(v, s, e.span, "initialising")?
                }
            }
            Some(Init::List(_, sp)) => {
                let msg = "a scalar takes one value, not a list";
                return Err(self.not_a_list(codes::TUNG_INIT, msg, *sp));
            }
            None => Val::Const { bits: 0, ty: s },
        })
    }

    /// The "no 64-bit" error for a `u64` declaration.
    pub fn no_64bit_decl(&mut self, d: &ast::VarDecl) -> Reported {
        self.report(
            Diagnostic::error(
                codes::TUNG_NO_64BIT,
                "no 64-bit copies on this target: a `u64` variable cannot be stored",
                d.ty.span,
                "`u64` here",
            )
            .with_note("`u64` is only the type of integer literals of 2^32 or more")
            .with_help("use `u32`, or two `u32` halves"),
        )
    }
}

/// The scalar elements of a type in memory order: (byte offset, type). Unions contribute
/// their first field.
pub(crate) fn flat_elems(ty: &Ty, aggs: &[super::types::Aggregate]) -> Vec<(u32, Scalar)> {
    let mut out = Vec::new();
    fn go(
        ty: &Ty,
        aggs: &[super::types::Aggregate],
        base: u32,
        out: &mut Vec<(u32, Scalar)>,
        depth: u32,
    ) {
        if depth > 64 || out.len() > 0x10000 {
            return;
        }
        match ty {
            Ty::Scalar(s) => out.push((base, *s)),
            Ty::Array(e, n) => {
                let sz = e.size(aggs);
                for i in 0..*n {
                    go(e, aggs, base + i * sz, out, depth + 1);
                }
            }
            Ty::Agg(i) => {
                if let Some(a) = aggs.get(*i) {
                    let fields: Vec<_> = if a.is_union {
                        a.fields.iter().take(1).collect()
                    } else {
                        a.fields.iter().collect()
                    };
                    for f in fields {
                        go(&f.ty, aggs, base + f.offset, out, depth + 1);
                    }
                }
            }
        }
    }
    go(ty, aggs, 0, &mut out, 0);
    out
}

/// Whether a statement mentions `s[].index` or `s[].idx`.
fn stmt_mentions_half(s: &Stmt, l: &Lower<'_>) -> bool {
    let mut found = false;
    let mut check = |e: &Expr| {
        super::sock::walk(e, &mut |x| {
            if let ExprKind::Member(b, f) = &x.kind
                && l.is_socket_read(b)
                && matches!(f.name.as_str(), "index" | "idx")
            {
                found = true;
            }
        })
    };
    fn stmts(s: &Stmt, check: &mut dyn FnMut(&Expr)) {
        match &s.kind {
            StmtKind::Assign(a, _, b) => {
                check(a);
                check(b);
            }
            StmtKind::Expr(e) => check(e),
            StmtKind::Block(v) | StmtKind::Parallel(v) => {
                for x in v {
                    stmts(x, check);
                }
            }
            StmtKind::If(c, a, b) => {
                check(c);
                stmts(a, check);
                if let Some(b) = b {
                    stmts(b, check);
                }
            }
            StmtKind::Loop(_, b) => stmts(b, check),
            StmtKind::Decl(d) => {
                if let Some(Init::Expr(e)) = &d.init {
                    check(e);
                }
            }
            _ => {}
        }
    }
    stmts(s, &mut check);
    found
}

#[allow(dead_code)]
fn int_of(v: Val) -> Option<i128> {
    match v {
        Val::Int(n) => Some(n),
        Val::Const { bits, ty } if !ty.is_float() => Some(const_int(bits, ty)),
        _ => None,
    }
}
