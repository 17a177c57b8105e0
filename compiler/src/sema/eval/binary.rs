//! Binary operators: peer types, operator checks, comptime folding, emitted arithmetic and
//! comparisons, and the short-circuit `and` / `or`.

use super::*;

impl Sema {
    pub(super) fn binary(
        &mut self,
        env: &mut Env,
        op: BinaryOp,
        lhs: ExprId,
        rhs: ExprId,
        span: Span,
    ) -> R<Val> {
        if matches!(op, BinaryOp::And | BinaryOp::Or) {
            return self.short_circuit(env, op, lhs, rhs, span);
        }
        let l = self.expr(env, lhs)?;
        let r = self.expr(env, rhs)?;
        let lspan = self.span(env, lhs);
        let rspan = self.span(env, rhs);
        self.binary_vals(env, op, l, r, span, lspan, rspan)
    }

    /// Applies a binary operator to two analysed operands.
    #[allow(clippy::too_many_arguments)]
    pub fn binary_vals(
        &mut self,
        env: &mut Env,
        op: BinaryOp,
        l: Val,
        r: Val,
        span: Span,
        lspan: Span,
        rspan: Span,
    ) -> R<Val> {
        let lt = self.val_ty(&l);
        let rt = self.val_ty(&r);
        let is_shift = matches!(op, BinaryOp::Shl | BinaryOp::Shr);
        // Shifts: the result has the left operand's type; the amount must be unsigned.
        let ty = if is_shift {
            if let Some((true, _)) = self.types.int_info(rt) {
                let d = self.types.display(rt);
                return Err(self.report(
                    Diagnostic::error(
                        codes::BAD_OPERAND,
                        "shift amount must be unsigned",
                        rspan,
                        format!("this has type {d}"),
                    )
                    .with_help("convert it with `@as(u16, ...)`"),
                ));
            }
            if !self.types.is_int(lt) || !self.types.is_int(rt) {
                let d = self
                    .types
                    .display(if self.types.is_int(lt) { rt } else { lt });
                return Err(self.err(
                    codes::BAD_OPERAND,
                    format!("cannot shift a value of type {d}"),
                    span,
                    "shifts need integers",
                ));
            }
            lt
        } else {
            self.peer_type(lt, rt, &l, &r, op, lspan, rspan)?
        };
        let is_cmp = matches!(
            op,
            BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
        );
        self.check_operator(op, ty, span)?;
        match (l, r) {
            (Val::Ct(a), Val::Ct(b)) => {
                let a = if is_shift {
                    a
                } else {
                    self.coerce_value(a, ty, lspan)?
                };
                let b = if is_shift {
                    b
                } else {
                    self.coerce_value(b, ty, rspan)?
                };
                Ok(Val::Ct(self.fold_binary(op, a, b, ty, span, rspan)?))
            }
            (l, r) => {
                if env.comptime {
                    let s = if matches!(l, Val::Rt { .. }) {
                        lspan
                    } else {
                        rspan
                    };
                    return Err(self.not_comptime(s));
                }
                let (lv, rv) = if is_shift {
                    let rv = match r {
                        Val::Ct(Value::Int(i, t)) if t == self.types.common.comptime_int => {
                            Val::Ct(Value::Int(i, lt))
                        }
                        other => other,
                    };
                    (l, rv)
                } else {
                    (
                        self.coerce(env, l, ty, lspan)?,
                        self.coerce(env, r, ty, rspan)?,
                    )
                };
                let a = self.materialize(env, lv, lspan)?;
                let b = self.materialize(env, rv, rspan)?;
                let Some(nt) = self.types.num_ty(ty) else {
                    let sym = op.symbol();
                    return Err(self.err_ty(codes::BAD_OPERAND, ty, span, "here", |d| {
                        format!("operator `{sym}` is not available at runtime for {d}")
                    }));
                };
                let dst = self.fb(env).reg();
                if is_cmp {
                    let cop = match op {
                        BinaryOp::Eq => CmpOp::Eq,
                        BinaryOp::Ne => CmpOp::Ne,
                        BinaryOp::Lt => CmpOp::Lt,
                        BinaryOp::Le => CmpOp::Le,
                        BinaryOp::Gt => CmpOp::Gt,
                        _ => CmpOp::Ge,
                    };
                    self.fb(env).emit(Inst::Cmp {
                        op: cop,
                        ty: nt,
                        dst,
                        a,
                        b,
                    });
                    Ok(Val::Rt {
                        reg: dst,
                        ty: self.types.common.bool_,
                    })
                } else {
                    let bop = arith_op(op);
                    self.fb(env).bin(bop, nt, dst, a, b);
                    Ok(Val::Rt { reg: dst, ty })
                }
            }
        }
    }

    /// The common type of two operands (comptime literals adopt the other side's type).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn peer_type(
        &mut self,
        lt: TypeId,
        rt: TypeId,
        l: &Val,
        r: &Val,
        op: BinaryOp,
        lspan: Span,
        rspan: Span,
    ) -> R<TypeId> {
        if lt == rt {
            return Ok(lt);
        }
        let c = &self.types.common;
        let (ci, cf) = (c.comptime_int, c.comptime_float);
        let l_ct_num = (lt == ci || lt == cf) && matches!(l, Val::Ct(_));
        let r_ct_num = (rt == ci || rt == cf) && matches!(r, Val::Ct(_));
        if (lt == ci && rt == cf) || (lt == cf && rt == ci) {
            return Ok(cf);
        }
        if l_ct_num && self.types.is_numeric(rt) && !(lt == cf && self.types.is_int(rt)) {
            return Ok(rt);
        }
        if r_ct_num && self.types.is_numeric(lt) && !(rt == cf && self.types.is_int(lt)) {
            return Ok(lt);
        }
        let ld = self.types.display(lt);
        let rd = self.types.display(rt);
        let both_fixed = self.types.is_numeric(lt) && self.types.is_numeric(rt);
        let msg = if both_fixed {
            format!(
                "mixed-type arithmetic: `{}` between {ld} and {rd}",
                op.symbol()
            )
        } else {
            format!("operator `{}` cannot combine {ld} and {rd}", op.symbol())
        };
        let mut d = Diagnostic::error(
            codes::TYPE_MISMATCH,
            msg,
            rspan,
            format!("this has type {rd}"),
        )
        .with_label(lspan, format!("this has type {ld}"));
        if both_fixed {
            d = d.with_help(format!("CSL never converts between fixed-width types implicitly; convert one side, e.g. `@as({ld}, ...)`"));
        } else {
            let (le, re) = (
                matches!(self.types.get(lt), Type::Enum(_)),
                matches!(self.types.get(rt), Type::Enum(_)),
            );
            if (le && self.types.is_numeric(rt)) || (re && self.types.is_numeric(lt)) {
                let (e, n) = if le {
                    (ld.clone(), rd.clone())
                } else {
                    (rd.clone(), ld.clone())
                };
                d = d.with_help(format!(
                    "compare with a member such as `{e}.<member>`, or convert with `@as({}, ...)`",
                    if n.starts_with("comptime") {
                        e.clone()
                    } else {
                        n
                    }
                ));
            }
        }
        Err(self.report(d))
    }

    pub(super) fn check_operator(&mut self, op: BinaryOp, ty: TypeId, span: Span) -> R<()> {
        let t = self.types.get(ty).clone();
        let numeric = self.types.is_numeric(ty);
        let int = self.types.is_int(ty);
        let ok = match op {
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div => numeric,
            BinaryOp::Rem
            | BinaryOp::Shl
            | BinaryOp::Shr
            | BinaryOp::BitAnd
            | BinaryOp::BitOr
            | BinaryOp::BitXor => int,
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => numeric,
            BinaryOp::Eq | BinaryOp::Ne => {
                numeric
                    || t.is_id()
                    || matches!(
                        t,
                        Type::Bool
                            | Type::ComptimeString
                            | Type::Direction
                            | Type::Type
                            | Type::Ptr { .. }
                            | Type::ManyPtr { .. }
                            | Type::Enum(_)
                    )
            }
            BinaryOp::And | BinaryOp::Or => matches!(t, Type::Bool),
        };
        if ok {
            Ok(())
        } else {
            let d = self.types.display(ty);
            let mut dg = Diagnostic::error(
                codes::BAD_OPERAND,
                format!("operator `{}` cannot be applied to {d}", op.symbol()),
                span,
                format!("operands have type {d}"),
            );
            if matches!(t, Type::Enum(_)) {
                let tag = self
                    .types
                    .enum_def(ty)
                    .map_or("u16".to_string(), |e| self.types.display(e.tag));
                dg = dg.with_help(format!("enums support only `==` and `!=`; for arithmetic convert with `@as({tag}, ...)`"));
            }
            Err(self.report(dg))
        }
    }

    /// A binary operation on `comptime_int` operands of which at least one, or the
    /// result, is beyond 128 bits: computed exactly, up to [`MAX_COMPTIME_INT_BITS`].
    fn fold_big(
        &mut self,
        op: BinaryOp,
        a: &Value,
        b: &Value,
        ty: TypeId,
        span: Span,
        rspan: Span,
    ) -> R<Value> {
        use BinaryOp::*;
        use num_bigint::{BigInt, Sign};
        let (Some(x), Some(y)) = (a.as_bigint(), b.as_bigint()) else {
            return Err(Reported);
        };
        let r: BigInt = match op {
            Eq => return Ok(Value::Bool(x == y)),
            Ne => return Ok(Value::Bool(x != y)),
            Lt => return Ok(Value::Bool(x < y)),
            Le => return Ok(Value::Bool(x <= y)),
            Gt => return Ok(Value::Bool(x > y)),
            Ge => return Ok(Value::Bool(x >= y)),
            Add => x + y,
            Sub => x - y,
            Mul => x * y,
            Div | Rem if y.sign() == Sign::NoSign => {
                return Err(self.err(
                    codes::COMPTIME_DIV_ZERO,
                    "division by zero at comptime",
                    rspan,
                    "this is zero",
                ));
            }
            // Truncating, as for i128 (the remainder has the dividend's sign).
            Div => x / y,
            Rem => x % y,
            // Two's complement of infinite width.
            BitAnd => x & y,
            BitOr => x | y,
            BitXor => x ^ y,
            Shl | Shr => {
                if y.sign() == Sign::Minus {
                    return Err(self.negative_shift(rspan));
                }
                let n = usize::try_from(&y)
                    .ok()
                    .filter(|n| *n <= MAX_COMPTIME_INT_BITS as usize);
                if op == Shl && ty != self.types.common.comptime_int {
                    // A fixed-width left operand with a huge comptime amount.
                    return Err(
                        self.err_ty(codes::OUT_OF_RANGE, ty, rspan, "too large", |d| {
                            format!("shift amount {y} is too large for {d}")
                        }),
                    );
                }
                match (op, n) {
                    // Shifting right by more than the width leaves the sign.
                    (Shr, None) => BigInt::from(if x.sign() == Sign::Minus { -1 } else { 0 }),
                    (Shr, Some(n)) => x >> n,
                    (_, None) => return Err(self.ct_int_range(span, MAX_COMPTIME_INT_BITS)),
                    (_, Some(n)) => x << n,
                }
            }
            _ => return Err(Reported),
        };
        if r.bits() > MAX_COMPTIME_INT_BITS {
            return Err(self.ct_int_range(span, MAX_COMPTIME_INT_BITS));
        }
        Ok(Value::comptime_int(r, ty))
    }

    pub(super) fn fold_binary(
        &mut self,
        op: BinaryOp,
        a: Value,
        b: Value,
        ty: TypeId,
        span: Span,
        rspan: Span,
    ) -> R<Value> {
        use BinaryOp::*;
        let cmp = |o: std::cmp::Ordering| -> bool {
            match op {
                Eq => o.is_eq(),
                Ne => o.is_ne(),
                Lt => o.is_lt(),
                Le => o.is_le(),
                Gt => o.is_gt(),
                _ => o.is_ge(),
            }
        };
        if matches!(a, Value::BigInt(_)) || matches!(b, Value::BigInt(_)) {
            return self.fold_big(op, &a, &b, ty, span, rspan);
        }
        Ok(match (a, b) {
            (Value::Int(x, xt), Value::Int(y, yt)) => match op {
                Eq | Ne | Lt | Le | Gt | Ge => Value::Bool(cmp(x.cmp(&y))),
                _ => {
                    let r = match op {
                        Add => x.checked_add(y),
                        Sub => x.checked_sub(y),
                        Mul => x.checked_mul(y),
                        Div | Rem => {
                            if y == 0 {
                                return Err(self.err(
                                    codes::COMPTIME_DIV_ZERO,
                                    "division by zero at comptime",
                                    rspan,
                                    "this is zero",
                                ));
                            }
                            if op == Div {
                                x.checked_div(y)
                            } else {
                                x.checked_rem(y)
                            }
                        }
                        BitAnd => Some(x & y),
                        BitOr => Some(x | y),
                        BitXor => Some(x ^ y),
                        Shl | Shr => {
                            if y < 0
                                || (yt != self.types.common.comptime_int
                                    && !self.types.int_fits(yt, y))
                            {
                                return Err(self.negative_shift(rspan));
                            }
                            if let Some((_, bits)) = self.types.int_info(ty)
                                && y >= i128::from(bits)
                            {
                                // The machine shifts by the amount modulo the width; a
                                // comptime-known amount that large is a mistake.
                                let d = self.types.display(ty);
                                return Err(self.report(
                                    Diagnostic::error(
                                        codes::OUT_OF_RANGE,
                                        format!("shift amount {y} is too large for {d}"),
                                        rspan,
                                        format!("must be less than {bits}"),
                                    )
                                    .with_help(format!("shift a {d} by 0 to {} bits", bits - 1)),
                                ));
                            }
                            match (op, self.types.int_info(ty)) {
                                // Fixed width: the bits shifted out are lost, as at run time.
                                (Shl, Some((signed, bits))) => {
                                    Some(wrap_int(wrap_int(x, false, bits) << y, signed, bits))
                                }
                                // comptime_int: exact (beyond 128 bits below).
                                (Shl, None) => exact_shl(x, y),
                                _ => Some(x >> y.min(127)),
                            }
                        }
                        _ => None,
                    };
                    match r {
                        Some(r) if self.types.int_fits(ty, r) => Value::Int(r, ty),
                        // A comptime_int beyond 128 bits: exactly, in a big integer.
                        None if ty == self.types.common.comptime_int => {
                            let (a, b) = (Value::Int(x, xt), Value::Int(y, yt));
                            return self.fold_big(op, &a, &b, ty, span, rspan);
                        }
                        _ => {
                            return Err(self.overflows(
                                "comptime arithmetic",
                                ty,
                                span,
                                "overflows",
                            ));
                        }
                    }
                }
            },
            (Value::Float(x, _), Value::Float(y, _)) => match op {
                Eq | Ne | Lt | Le | Gt | Ge => {
                    Value::Bool(x.partial_cmp(&y).is_some_and(cmp) || (op == Ne && x.is_nan()))
                }
                Add | Sub | Mul | Div => {
                    let r = match op {
                        Add => x + y,
                        Sub => x - y,
                        Mul => x * y,
                        _ => x / y,
                    };
                    let tt = self.types.get(ty).clone();
                    Value::Float(round_to(&tt, r), ty)
                }
                _ => return Err(Reported),
            },
            (Value::Bool(x), Value::Bool(y)) => Value::Bool(if op == Eq { x == y } else { x != y }),
            (a, b) => {
                let eq = a.canonical(&self.types) == b.canonical(&self.types);
                match op {
                    Eq => Value::Bool(eq),
                    Ne => Value::Bool(!eq),
                    _ => return Err(Reported),
                }
            }
        })
    }

    pub(super) fn short_circuit(
        &mut self,
        env: &mut Env,
        op: BinaryOp,
        lhs: ExprId,
        rhs: ExprId,
        span: Span,
    ) -> R<Val> {
        let bool_ = self.types.common.bool_;
        match self.expr_as(env, lhs, bool_)? {
            Val::Ct(Value::Bool(b)) => {
                // The skipped operand is not even analysed.
                if (op == BinaryOp::And && !b) || (op == BinaryOp::Or && b) {
                    return Ok(Val::Ct(Value::Bool(b)));
                }
                self.expr_as(env, rhs, bool_)
            }
            Val::Ct(_) => Err(Reported),
            Val::Rt { reg, .. } => {
                let result = self.fb(env).copy(reg);
                let rhs_b = self.fb(env).block();
                let join = self.fb(env).block();
                // `and` evaluates the right operand when the left is true, `or` when false.
                let (then, otherwise) = if op == BinaryOp::And {
                    (rhs_b, join)
                } else {
                    (join, rhs_b)
                };
                self.fb(env).branch(reg, then, otherwise);
                self.fb(env).switch_to(rhs_b);
                let r = self.expr_as(env, rhs, bool_)?;
                let rr = self.materialize(env, r, span)?;
                self.fb(env).emit(Inst::Mov {
                    dst: result,
                    src: rr,
                });
                self.fb(env).jump_to(join);
                Ok(Val::Rt {
                    reg: result,
                    ty: bool_,
                })
            }
        }
    }

    /// OUT_OF_RANGE: a comptime shift amount at `span` is negative.
    fn negative_shift(&mut self, span: Span) -> Reported {
        self.err(
            codes::OUT_OF_RANGE,
            "negative shift amount",
            span,
            "must be non-negative",
        )
    }

    // ----- fields, initialisers ----------------------------------------------------------
}

pub(super) fn arith_op(op: BinaryOp) -> BinOp {
    match op {
        BinaryOp::Add => BinOp::Add,
        BinaryOp::Sub => BinOp::Sub,
        BinaryOp::Mul => BinOp::Mul,
        BinaryOp::Div => BinOp::Div,
        BinaryOp::Rem => BinOp::Rem,
        BinaryOp::Shl => BinOp::Shl,
        BinaryOp::Shr => BinOp::Shr,
        BinaryOp::BitAnd => BinOp::And,
        BinaryOp::BitOr => BinOp::Or,
        _ => BinOp::Xor,
    }
}
