//! Unary operators: negation, `not`, bitwise complement, dereference and address-of.

use super::*;

impl Sema {
    pub(super) fn unary(
        &mut self,
        env: &mut Env,
        op: UnaryOp,
        operand: ExprId,
        span: Span,
    ) -> R<Val> {
        if op == UnaryOp::AddrOf {
            return self.addr_of(env, operand, span);
        }
        let (v, ty) = self.expr_typed(env, operand)?;
        let ospan = self.span(env, operand);
        let ok = match op {
            UnaryOp::Neg => self.types.is_numeric(ty),
            UnaryOp::Not => ty == self.types.common.bool_,
            UnaryOp::BitNot => matches!(self.types.get(ty), Type::Int { .. }),
            UnaryOp::AddrOf => true,
        };
        if !ok {
            let d = self.types.display(ty);
            let sym = match op {
                UnaryOp::Neg => "-",
                UnaryOp::Not => "!",
                UnaryOp::BitNot => "~",
                UnaryOp::AddrOf => "&",
            };
            return Err(self.err(
                codes::BAD_OPERAND,
                format!("operator `{sym}` cannot be applied to {d}"),
                ospan,
                format!("this has type {d}"),
            ));
        }
        match v {
            Val::Ct(c) => Ok(Val::Ct(match (op, c) {
                (UnaryOp::Neg, Value::BigInt(b)) => Value::comptime_int(-(*b).clone(), ty),
                (UnaryOp::BitNot, Value::BigInt(b)) => Value::comptime_int(!(*b).clone(), ty),
                (UnaryOp::Neg, Value::Int(i, t)) => {
                    let Some(r) = i.checked_neg() else {
                        // Only a comptime_int reaches the 128-bit edge.
                        return Ok(Val::Ct(Value::comptime_int(
                            -num_bigint::BigInt::from(i),
                            t,
                        )));
                    };
                    if !self.types.int_fits(t, r) {
                        return Err(self.overflows("negation", t, span, "result out of range"));
                    }
                    Value::Int(r, t)
                }
                (UnaryOp::Neg, Value::Float(f, t)) => Value::Float(-f, t),
                (UnaryOp::Not, Value::Bool(b)) => Value::Bool(!b),
                (UnaryOp::BitNot, Value::Int(i, t)) => match self.types.int_info(t) {
                    Some((signed, bits)) => Value::Int(wrap_int(!i, signed, bits), t),
                    // comptime_int: `~x` is `-x - 1`, exactly.
                    None => Value::Int(!i, t),
                },
                _ => return Err(Reported),
            })),
            Val::Rt { reg, ty } => {
                let nt = self.types.num_ty(ty).unwrap_or(NumTy::U16);
                let uop = match op {
                    UnaryOp::Neg => UnOp::Neg,
                    UnaryOp::Not => UnOp::LNot,
                    _ => UnOp::Not,
                };
                let dst = self.fb(env).reg();
                self.fb(env).emit(Inst::Un {
                    op: uop,
                    ty: nt,
                    dst,
                    a: reg,
                });
                Ok(Val::Rt { reg: dst, ty })
            }
        }
    }

    pub(super) fn addr_of(&mut self, env: &mut Env, operand: ExprId, span: Span) -> R<Val> {
        let ospan = self.span(env, operand);
        // `&f` of a function is the function itself.
        if let ExprKind::Ident(n) = &env.ast.exprs[operand].kind
            && env.find(*n).is_none()
            && let Some(d) = self.lookup_decl(env.module, *n)
            && let Some(DeclKind::Fn(f)) = self.mods[d.module]
                .ast
                .decls
                .get(d.index as usize)
                .map(|x| &x.kind)
        {
            if f.is_inline {
                let fspan = f.name.span;
                return Err(self.inline_fn_address(ospan, fspan));
            }
            return Ok(Val::Ct(Value::Func(d)));
        }
        if !self.is_place_expr(env, operand) {
            // A named constant gets a read-only copy in memory; a temporary has no address.
            let named = matches!(
                env.ast.exprs[operand].kind,
                ExprKind::Ident(_) | ExprKind::Field { .. } | ExprKind::Index { .. }
            );
            let v = self.expr(env, operand)?;
            return match v {
                Val::Ct(Value::Func(d)) => Ok(Val::Ct(Value::Func(d))),
                Val::Ct(c) if named => {
                    let ty = c.ty(&mut self.types);
                    if self.types.size_of(ty).is_none() || self.types.is_comptime_only(ty) {
                        return Err(self.err_ty(
                            codes::NOT_COMPTIME,
                            ty,
                            ospan,
                            "comptime-only",
                            |d| {
                                format!(
                                    "a value of type {d} exists only at comptime and has no address"
                                )
                            },
                        ));
                    }
                    let g = self.const_global(&c, ty, ospan)?;
                    let pty = self.types.ptr(ty, true);
                    Ok(Val::Ct(Value::GlobalPtr {
                        global: g,
                        offset: 0,
                        ty: pty,
                    }))
                }
                _ => Err(self.report(
                    Diagnostic::error(
                        codes::BAD_OPERAND,
                        "cannot take the address of a temporary value",
                        ospan,
                        "this value is not stored anywhere",
                    )
                    .with_help("store it in a `var` first and take the address of that"),
                )),
            };
        }
        let saved = env.comptime;
        // Taking the address of a global is fine in comptime code: the address is a
        // link-time constant.
        if env.ctx != Ctx::Layout {
            env.comptime = false;
        }
        let p = self.place(env, operand);
        env.comptime = saved;
        match p? {
            Place::Mem(m) => {
                let pty = self.types.ptr(m.ty, !m.mutable);
                match (m.base, m.dyn_off) {
                    (MemBase::Global(g), None) => Ok(Val::Ct(Value::GlobalPtr {
                        global: g,
                        offset: m.off,
                        ty: pty,
                    })),
                    (MemBase::Abs(a), None) => Ok(Val::Ct(Value::AbsPtr {
                        addr: a + m.off,
                        ty: pty,
                    })),
                    _ => {
                        self.runtime_only(env, span)?;
                        let r = self.place_addr(env, m, span)?;
                        Ok(Val::Rt { reg: r, ty: pty })
                    }
                }
            }
            Place::Ct { .. } => Err(self.report(
                Diagnostic::error(
                    codes::NOT_COMPTIME,
                    "a comptime variable has no address",
                    ospan,
                    "exists only while compiling",
                )
                .with_help("declare it with `var` to give it storage at runtime"),
            )),
            Place::Reg { .. } => Err(self.report(
                Diagnostic::error(
                    codes::BAD_OPERAND,
                    "cannot take the address of this value",
                    ospan,
                    "held in a register, not in memory",
                )
                .with_help("copy it into a local `var` and take the address of that"),
            )),
        }
    }

    pub(crate) fn inline_fn_address(&mut self, use_span: Span, decl_span: Span) -> Reported {
        self.report(
            Diagnostic::error(
                codes::BAD_OPERAND,
                "an `inline fn` has no address",
                use_span,
                "used as a function pointer here",
            )
            .with_label(decl_span, "declared `inline` here")
            .with_help("remove `inline` to call it through a pointer"),
        )
    }
}
