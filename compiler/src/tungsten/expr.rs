//! Tungsten expressions: literals, names, operators (folded exactly when both sides are
//! constants, see [`super::lower`]), casts, `min`/`max`, the ternary and calls; each
//! type-checked and emitted as IR in one walk.

use super::ast::{self, Expr, ExprKind};
use super::lower::*;
use super::types::{CoerceError, Scalar, Ty, common};
use crate::diag::{Diagnostic, codes};
use crate::ir::{BlockId, Inst, Term, VReg};
use crate::source::Span;
use csl_arch::alu;
use csl_arch::isa::{BinOp, CmpOp, RoundMode, UnOp};

impl Lower<'_> {
    /// Evaluates an expression.
    pub fn expr(&mut self, e: &Expr) -> R<Val> {
        match &e.kind {
            ExprKind::Int(n) => Ok(if *n >= 1u128 << 32 {
                Val::Const {
                    bits: *n as u64,
                    ty: Scalar::U64,
                }
            } else {
                Val::Int(*n as i128)
            }),
            ExprKind::Float { value, sp, .. } => {
                if f32::from_bits(*sp).is_infinite() {
                    return Err(self.literal_range(e.span, *value, Scalar::Sp, true));
                }
                Ok(Val::Const {
                    bits: u64::from(*sp),
                    ty: Scalar::Sp,
                })
            }
            ExprKind::Typed(inner, ty, sspan) => self.typed_literal(inner, *ty, *sspan),
            ExprKind::Inf => Err(self.err(
                codes::TUNG_SPECIAL_CONST,
                "`∞` is not a value",
                e.span,
                "only the end of a range `[a, ∞)`",
            )),
            ExprKind::Nan => Err(self.err(
                codes::TUNG_SPECIAL_CONST,
                "`NAN` is not a run-time value",
                e.span,
                "only in a float array's initialiser",
            )),
            ExprKind::Error => Err(Reported),
            ExprKind::Name(id) => {
                if let Some(l) = self.local(&id.name) {
                    return match l {
                        Local::Var { r, ty } => Ok(Val::Reg { r, ty }),
                        Local::Let(_) => Err(self.err(
                            codes::TUNG_TYPE_MISMATCH,
                            format!("`{}` is a `let` index", id.name),
                            id.span,
                            "only usable in a statement under `∀`",
                        )),
                        Local::Mem { ty, .. } | Local::Ref { ty, .. } => {
                            let d = ty.describe(&self.aggs);
                            Err(self.err(
                                codes::TUNG_TYPE_MISMATCH,
                                format!("`{}` is a `{d}`, not a scalar value", id.name),
                                id.span,
                                "used as a value here",
                            ))
                        }
                    };
                }
                match self.globals.get(&id.name).cloned() {
                    Some(Sym::Const { val, .. }) => Ok(val),
                    Some(Sym::Socket(_)) => Err(self.socket_used_as(id, "value", |n| {
                        format!("read the next wavelet with a typed read such as `(xp){n}[]`")
                    })),
                    Some(Sym::Global { .. }) => {
                        let p = self.place(e)?;
                        self.load(&p, e.span)
                    }
                    None => Err(self.undefined(id)),
                }
            }
            ExprKind::Index(b, None) => {
                if self.socket_of_read(e).is_some() {
                    let name = describe_expr(b);
                    return Err(self.report(
                        Diagnostic::error(
                            codes::TUNG_SOCKET_READ_TYPE,
                            format!("the type of this read of `{name}` is unknown"),
                            e.span,
                            "how many bits to read, and as what?",
                        )
                        .with_help(format!(
                            "cast the read, as in `(xp){name}[]` or `(sp){name}[]`, or assign it directly to a variable: `v <- {name}[];`"
                        )),
                    ));
                }
                Err(self.socket_misuse(
                    format!("`{}` is not a socket", describe_expr(b)),
                    e.span,
                    "`[]` with no index reads a socket",
                    "index an array with `a[i]`",
                ))
            }
            ExprKind::Index(..) => {
                let p = self.place(e)?;
                self.load(&p, e.span)
            }
            ExprKind::Member(b, f) => {
                if self.is_socket_read(b) {
                    let _ = f;
                    return Err(self.index_half(e.span));
                }
                let p = self.place(e)?;
                self.load(&p, e.span)
            }
            ExprKind::Call(name, args) => self.call(name, args, e.span, true),
            ExprKind::Unary(op, a) => self.unary(*op, a, e.span),
            ExprKind::Binary(op, a, b) => self.binary(*op, a, b, e.span),
            ExprKind::Ternary(c, a, b) => self.ternary(c, a, b, e.span),
            ExprKind::Cast(t, inner) => {
                let to = self.scalar_type(t, "a cast's type")?;
                if let Some(s) = self.socket_of_read(inner) {
                    // The cast says how to read the bits; it converts nothing.
                    return self.receive_value(s, to, inner.span);
                }
                if let ExprKind::Cast(t2, inner2) = &inner.kind
                    && let Some(s) = self.socket_of_read(inner2)
                {
                    let mid = self.scalar_type(t2, "a cast's type")?;
                    let v = self.receive_value(s, mid, inner2.span)?;
                    return self.convert(v, to, e.span, "casting");
                }
                let v = self.expr(inner)?;
                if to == Scalar::U64 {
                    return Err(self.no_64bit(t.span, "a cast to `u64`"));
                }
                self.convert(v, to, e.span, "casting")
            }
            ExprKind::Min(a, b) | ExprKind::Max(a, b) => {
                let is_min = matches!(e.kind, ExprKind::Min(..));
                self.min_max(is_min, a, b, e.span)
            }
            ExprKind::Round(x, m) => {
                let mode = self.const_int(m, "the rounding mode of `round`")?;
                let mode = match mode {
                    0 => RoundMode::NearestEven,
                    1 => RoundMode::TowardZero,
                    2 => RoundMode::Down,
                    3 => RoundMode::Up,
                    _ => {
                        return Err(self.report(
                            Diagnostic::error(
                                codes::TUNG_TYPE_MISMATCH,
                                format!("rounding mode {mode} does not exist"),
                                m.span,
                                "not 0 to 3",
                            )
                            .with_note("0 = to nearest even, 1 = toward zero, 2 = down, 3 = up"),
                        ));
                    }
                };
                let v = self.expr(x)?;
                let ty = v.ty().unwrap_or(Scalar::Xp);
                if !ty.is_float() {
                    return Ok(v);
                }
                match v {
                    Val::Const { bits, ty } => Ok(Val::Const {
                        bits: u64::from(alu::conv_round(mode, ty.nt(), ty.nt(), bits as u32)),
                        ty,
                    }),
                    Val::Reg { r, ty } => {
                        let dst = self.fb.reg();
                        self.fb.emit(Inst::ConvR {
                            mode,
                            to: ty.nt(),
                            from: ty.nt(),
                            dst,
                            src: r,
                        });
                        Ok(Val::Reg { r: dst, ty })
                    }
                    Val::Int(_) => Ok(v),
                }
            }
            ExprKind::Bitcast(t, inner) => {
                let to = self.scalar_type(t, "a bitcast's type")?;
                if let Some(s) = self.socket_of_read(inner) {
                    return self.receive_value(s, to, inner.span);
                }
                let v = self.expr(inner)?;
                let from = v.ty();
                if to == Scalar::U64 || from == Some(Scalar::U64) {
                    return Err(self.no_64bit(e.span, "a 64-bit bitcast is a 64-bit copy"));
                }
                match v {
                    Val::Int(n) => Ok(Val::Const {
                        bits: wrap_int(n, if to.bits() == 16 { Scalar::U16 } else { Scalar::U32 }),
                        ty: to,
                    }),
                    Val::Const { ty, .. } | Val::Reg { ty, .. } if ty.bits() != to.bits() => {
                        Err(self.report(
                            Diagnostic::error(
                                codes::TUNG_BITCAST_WIDTH,
                                format!(
                                    "bitcast from `{}` ({} bits) to `{}` ({} bits)",
                                    ty.name(),
                                    ty.bits(),
                                    to.name(),
                                    to.bits()
                                ),
                                e.span,
                                "the widths differ",
                            )
                            .with_help("a bitcast keeps every bit: use a cast `(T)e` to change the width, or a union to view storage at another width"),
                        ))
                    }
                    Val::Const { bits, .. } => Ok(Val::Const { bits, ty: to }),
                    Val::Reg { r, .. } => Ok(Val::Reg { r, ty: to }),
                }
            }
            ExprKind::Control(_) => Err(self.report(
                Diagnostic::error(
                    codes::TUNG_CONTROL,
                    "`control(w)` is only the value of a send",
                    e.span,
                    "not a value",
                )
                .with_help("send a control wavelet with `sock[] <- control(w);`"),
            )),
        }
    }

    /// A literal whose value its type cannot hold (E1124).
    fn literal_range(&mut self, span: Span, value: f64, ty: Scalar, float_lit: bool) -> Reported {
        let int_range = |t: Scalar| match (t.is_unsigned(), t.bits()) {
            (true, 16) => "0 to 65535",
            (true, _) => "0 to 4294967295",
            (false, 16) => "-32768 to 32767",
            (false, _) => "-2147483648 to 2147483647",
        };
        let float_note;
        let (range, help) = match ty {
            _ if !ty.is_float() && float_lit => {
                float_note = format!(
                    "a float literal with an integer suffix is rounded to nearest even, which must lie in {}",
                    int_range(ty)
                );
                (float_note.as_str(), "use a wider type")
            }
            Scalar::Sp => (
                "its largest finite value is about 3.4e38",
                "use a smaller value",
            ),
            Scalar::Hp => (
                "its largest finite value is 65504 (65520 and more round to infinity)",
                "use a smaller value, or an `sp` literal",
            ),
            _ if ty.is_float() => ("", ""),
            _ => (
                if ty.bits() == 16 {
                    "it holds 16 bits: 0 to 0xFFFF written as a literal (a negative value is `-` applied to one)"
                } else {
                    "it holds 32 bits: 0 to 0xFFFFFFFF written as a literal (a negative value is `-` applied to one)"
                },
                "use a wider type, or an untyped literal, which wraps in its context",
            ),
        };
        self.report(
            Diagnostic::error(
                codes::TUNG_LITERAL_RANGE,
                format!(
                    "the literal {} does not fit in `{}`",
                    if value.abs() < 1e16 {
                        format!("{value}")
                    } else {
                        format!("{value:e}")
                    },
                    ty.name()
                ),
                span,
                format!("out of the range of `{}`", ty.name()),
            )
            .with_note(range.to_string())
            .with_help(help.to_string()),
        )
    }

    fn typed_literal(&mut self, inner: &Expr, ty: Scalar, sspan: Span) -> R<Val> {
        let span = inner.span.to(sspan);
        match &inner.kind {
            ExprKind::Int(n) => {
                if ty == Scalar::U64 {
                    return Ok(Val::Const {
                        bits: *n as u64,
                        ty,
                    });
                }
                if ty.is_float() {
                    let bits = float_bits(*n as f64, ty);
                    if const_float(bits, ty).is_infinite() {
                        return Err(self.literal_range(span, *n as f64, ty, false));
                    }
                    return Ok(Val::Const { bits, ty });
                }
                if *n >> ty.bits() != 0 {
                    return Err(self.literal_range(span, *n as f64, ty, false));
                }
                Ok(Val::Const {
                    bits: wrap_int(*n as i128, ty),
                    ty,
                })
            }
            ExprKind::Float {
                value,
                exponent,
                sp,
            } => {
                if *exponent {
                    return Err(self.report(
                        Diagnostic::error(
                            codes::TUNG_TYPED_SUFFIX,
                            "an exponent literal takes no type suffix",
                            sspan,
                            "remove this suffix",
                        )
                        .with_note("a literal written with `e` or `p` is always `sp`")
                        .with_help("write the value without an exponent, or cast it: `(hp)2.5e-3`"),
                    ));
                }
                if ty == Scalar::U64 {
                    return Err(self.no_64bit(sspan, "a `u64` float literal"));
                }
                if ty.is_float() {
                    let bits = if ty == Scalar::Sp {
                        u64::from(*sp)
                    } else {
                        float_bits(*value, ty)
                    };
                    if const_float(bits, ty).is_infinite() {
                        return Err(self.literal_range(span, *value, ty, true));
                    }
                    Ok(Val::Const { bits, ty })
                } else {
                    // An integer type: the value rounded to nearest even, which must be in
                    // the type's range (signed or unsigned as the type is).
                    let r = value.round_ties_even();
                    let (lo, hi) = match (ty.is_unsigned(), ty.bits()) {
                        (true, 16) => (0.0, 65535.0),
                        (true, _) => (0.0, 4294967295.0),
                        (false, 16) => (-32768.0, 32767.0),
                        (false, _) => (-2147483648.0, 2147483647.0),
                    };
                    if !(lo..=hi).contains(&r) {
                        return Err(self.literal_range(span, *value, ty, true));
                    }
                    Ok(Val::Const {
                        bits: wrap_int(r as i128, ty),
                        ty,
                    })
                }
            }
            _ => Err(self.report(
                Diagnostic::error(
                    codes::TUNG_TYPED_SUFFIX,
                    format!("a `:{}` suffix only applies to a literal", ty.name()),
                    sspan,
                    "suffix on something that is not a literal",
                )
                .with_note(format!(
                    "`{}` is not a number literal",
                    describe_expr(inner)
                ))
                .with_help(format!(
                    "to convert a value, cast it: `({}){}`",
                    ty.name(),
                    describe_expr(inner)
                )),
            )),
        }
    }

    /// `op` of the register `a` of type `ty` into a new register of that type.
    fn un_reg(&mut self, op: UnOp, a: VReg, ty: Scalar) -> Val {
        let dst = self.fb.reg();
        self.fb.emit(Inst::Un {
            op,
            ty: ty.nt(),
            dst,
            a,
        });
        Val::Reg { r: dst, ty }
    }

    fn unary(&mut self, op: ast::UnOp, a: &Expr, span: Span) -> R<Val> {
        if op == ast::UnOp::AddrOf {
            return Err(self.err(
                codes::TUNG_ADDRESS,
                "`&` is only allowed in `address(&a + k)`",
                span,
                "address taken here",
            ));
        }
        let v = self.expr(a)?;
        match op {
            ast::UnOp::Neg => match v {
                Val::Int(n) => Ok(Val::Int(-n)),
                Val::Const { bits, ty } if ty != Scalar::U64 => Ok(Val::Const {
                    bits: u64::from(alu::un(UnOp::Neg, ty.nt(), bits as u32)),
                    ty,
                }),
                Val::Const { bits, ty } => Ok(Val::Const {
                    bits: bits.wrapping_neg(),
                    ty,
                }),
                Val::Reg { ty, .. } => {
                    let ty = if ty == Scalar::Bool { Scalar::Xp } else { ty };
                    let r = self.materialize(v, ty, span)?;
                    Ok(self.un_reg(UnOp::Neg, r, ty))
                }
            },
            ast::UnOp::BitNot => {
                if v.ty().is_some_and(Scalar::is_float) {
                    return Err(self.err(
                        codes::TUNG_TYPE_MISMATCH,
                        "`~` needs an integer",
                        span,
                        "applied to a float",
                    ));
                }
                match v {
                    Val::Int(n) => Ok(Val::Int(!n)),
                    Val::Const { bits, ty } => Ok(Val::Const {
                        bits: !bits
                            & if ty == Scalar::U64 {
                                u64::MAX
                            } else {
                                u64::from(alu::mask(ty.nt()))
                            },
                        ty,
                    }),
                    Val::Reg { r, ty } => Ok(self.un_reg(UnOp::Not, r, ty)),
                }
            }
            _ => {
                // `!`
                match v {
                    Val::Int(n) => Ok(Val::Const {
                        bits: u64::from(n == 0),
                        ty: Scalar::Bool,
                    }),
                    _ => {
                        let t = self.truth(v, span)?;
                        Ok(self.un_reg(UnOp::LNot, t, Scalar::Bool))
                    }
                }
            }
        }
    }

    /// Brings two operands to their common type (rules 1-6).
    pub fn coerce_pair(&mut self, a: Val, b: Val, span: Span) -> R<(Val, Val, Option<Scalar>)> {
        // Comparison results take part as `xp`.
        let fix = |s: &mut Self, v: Val| -> R<Val> {
            if v.ty() == Some(Scalar::Bool) {
                s.convert(v, Scalar::Xp, span, "using")
            } else {
                Ok(v)
            }
        };
        let a = fix(self, a)?;
        let b = fix(self, b)?;
        match (a.ty(), b.ty()) {
            (None, None) => Ok((a, b, None)),
            (Some(t), None) => Ok((a, self.convert(b, t, span, "using")?, Some(t))),
            (None, Some(t)) => Ok((self.convert(a, t, span, "using")?, b, Some(t))),
            (Some(ta), Some(tb)) => {
                if (ta == Scalar::U64) != (tb == Scalar::U64) {
                    return Err(self.no_64bit(span, "a `u64` operand"));
                }
                match common(ta, tb) {
                    Ok(t) => Ok((
                        self.convert(a, t, span, "using")?,
                        self.convert(b, t, span, "using")?,
                        Some(t),
                    )),
                    Err(CoerceError::UnsignedToFloat(from, to)) => {
                        Err(self.unsigned_to_float(from, to, span, "this operation converts"))
                    }
                }
            }
        }
    }

    fn binary(&mut self, op: ast::BinOp, ea: &Expr, eb: &Expr, span: Span) -> R<Val> {
        use ast::BinOp as B;
        if matches!(op, B::And | B::Or) {
            return self.logical(op == B::And, ea, eb, span);
        }
        let a = self.expr(ea)?;
        let b = self.expr(eb)?;
        if matches!(op, B::Shl | B::Shr) {
            // The result has the left operand's type; the amount is converted to it.
            let (a, b, _) = match (a.ty(), b.ty()) {
                (Some(t), _) if t != Scalar::Bool => {
                    let b = match b {
                        Val::Int(n) => Val::Const {
                            bits: wrap_int(n, t),
                            ty: t,
                        },
                        _ => {
                            let bt = b.ty().unwrap_or(t);
                            if bt.is_float() {
                                return Err(self.err(
                                    codes::TUNG_TYPE_MISMATCH,
                                    "a shift amount must be an integer",
                                    eb.span,
                                    "a float",
                                ));
                            }
                            self.convert(b, t, span, "using")?
                        }
                    };
                    (a, b, Some(t))
                }
                _ => self.coerce_pair(a, b, span)?,
            };
            return self.arith(op, a, b, span);
        }
        let (a, b, _) = self.coerce_pair(a, b, span)?;
        self.arith(op, a, b, span)
    }

    /// `a op b` on operands of one type.
    pub fn arith(&mut self, op: ast::BinOp, a: Val, b: Val, span: Span) -> R<Val> {
        use ast::BinOp as B;
        let ty = a.ty().or(b.ty());
        if let Some(t) = ty
            && t.is_float()
            && matches!(op, B::BitAnd | B::BitOr | B::BitXor | B::Shl | B::Shr)
        {
            return Err(self.err(
                codes::TUNG_TYPE_MISMATCH,
                format!("`{}` needs integers", op.spelling()),
                span,
                format!("applied to `{}`", t.name()),
            ));
        }
        let cmp = match op {
            B::Lt => Some(CmpOp::Lt),
            B::Le => Some(CmpOp::Le),
            B::Gt => Some(CmpOp::Gt),
            B::Ge => Some(CmpOp::Ge),
            B::Eq => Some(CmpOp::Eq),
            B::Ne => Some(CmpOp::Ne),
            _ => None,
        };
        let bop = match op {
            B::Mul => BinOp::Mul,
            B::Div => BinOp::Div,
            B::Rem => BinOp::Rem,
            B::Add => BinOp::Add,
            B::Sub => BinOp::Sub,
            B::Shl => BinOp::Shl,
            B::Shr => BinOp::Shr,
            B::BitAnd => BinOp::And,
            B::BitXor => BinOp::Xor,
            _ => BinOp::Or,
        };
        // Exact folding of untyped literals.
        if let (Val::Int(x), Val::Int(y)) = (a, b) {
            if let Some(c) = cmp {
                return Ok(exact_compare(c, x, y));
            }
            let lim = 1i128 << 100;
            let r = match bop {
                BinOp::Add => x.checked_add(y),
                BinOp::Sub => x.checked_sub(y),
                BinOp::Mul => x.checked_mul(y),
                BinOp::Div | BinOp::Rem if y == 0 => {
                    return Err(self.err(
                        codes::TUNG_TYPE_MISMATCH,
                        "division by zero",
                        span,
                        "the divisor is 0",
                    ));
                }
                BinOp::Div => x.checked_div(y),
                BinOp::Rem => x.checked_rem(y),
                BinOp::And => Some(x & y),
                BinOp::Or => Some(x | y),
                BinOp::Xor => Some(x ^ y),
                BinOp::Shl => u32::try_from(y).ok().filter(|&s| s < 64).map(|s| x << s),
                BinOp::Shr => u32::try_from(y).ok().filter(|&s| s < 127).map(|s| x >> s),
            };
            return match r.filter(|v| v.abs() < lim) {
                Some(v) => Ok(Val::Int(v)),
                None => Err(self.err(
                    codes::TUNG_NOT_CONST,
                    "this constant expression overflows",
                    span,
                    "too large",
                )),
            };
        }
        let Some(ty) = ty else {
            return Err(Reported);
        };
        if ty == Scalar::U64 {
            if let (Val::Const { bits: x, .. }, Val::Const { bits: y, .. }) = (a, b) {
                if let Some(c) = cmp {
                    return Ok(exact_compare(c, x, y));
                }
                let r = match bop {
                    BinOp::Add => Some(x.wrapping_add(y)),
                    BinOp::Sub => Some(x.wrapping_sub(y)),
                    BinOp::Mul => Some(x.wrapping_mul(y)),
                    BinOp::Div => x.checked_div(y),
                    BinOp::Rem => x.checked_rem(y),
                    BinOp::And => Some(x & y),
                    BinOp::Or => Some(x | y),
                    BinOp::Xor => Some(x ^ y),
                    BinOp::Shl => Some(x.wrapping_shl(y as u32)),
                    BinOp::Shr => Some(x.wrapping_shr(y as u32)),
                };
                return match r {
                    Some(bits) => Ok(Val::Const { bits, ty }),
                    None => Err(self.err(
                        codes::TUNG_TYPE_MISMATCH,
                        "division by zero",
                        span,
                        "the divisor is 0",
                    )),
                };
            }
            return Err(self.no_64bit(span, "a `u64` operation at run time"));
        }
        let nt = ty.nt();
        if let (Val::Const { bits: x, .. }, Val::Const { bits: y, .. }) = (a, b) {
            if let Some(c) = cmp {
                return Ok(Val::Const {
                    bits: u64::from(alu::cmp(c, nt, x as u32, y as u32)),
                    ty: Scalar::Bool,
                });
            }
            return match alu::bin(bop, nt, x as u32, y as u32) {
                Ok(v) => Ok(Val::Const {
                    bits: u64::from(v),
                    ty,
                }),
                Err(_) => Err(self.err(
                    codes::TUNG_TYPE_MISMATCH,
                    "division by zero",
                    span,
                    "the divisor is 0",
                )),
            };
        }
        let ra = self.materialize(a, ty, span)?;
        let rb = self.materialize(b, ty, span)?;
        let dst = self.fb.reg();
        if let Some(c) = cmp {
            self.fb.emit(Inst::Cmp {
                op: c,
                ty: nt,
                dst,
                a: ra,
                b: rb,
            });
            return Ok(Val::Reg {
                r: dst,
                ty: Scalar::Bool,
            });
        }
        self.fb.bin(bop, nt, dst, ra, rb);
        Ok(Val::Reg { r: dst, ty })
    }

    fn logical(&mut self, is_and: bool, ea: &Expr, eb: &Expr, span: Span) -> R<Val> {
        let a = self.expr(ea)?;
        let ta = self.truth(a, ea.span)?;
        let res = self.fb.reg();
        self.fb.emit(Inst::Mov { dst: res, src: ta });
        let rhs = self.fb.block();
        let join = self.fb.block();
        let (then, otherwise) = if is_and { (rhs, join) } else { (join, rhs) };
        self.fb.branch(ta, then, otherwise);
        self.fb.switch_to(rhs);
        let b = self.expr(eb)?;
        let tb = self.truth(b, eb.span)?;
        self.fb.emit(Inst::Mov { dst: res, src: tb });
        self.fb.terminate(Term::Jump(join));
        self.fb.switch_to(join);
        let _ = span;
        Ok(Val::Reg {
            r: res,
            ty: Scalar::Bool,
        })
    }

    fn ternary(&mut self, c: &Expr, ea: &Expr, eb: &Expr, span: Span) -> R<Val> {
        let cv = self.expr(c)?;
        let cond = self.truth(cv, c.span)?;
        let ba = self.fb.block();
        let bb = self.fb.block();
        let join = self.fb.block();
        self.fb.branch(cond, ba, bb);
        self.fb.switch_to(ba);
        let va = self.expr(ea)?;
        let end_a = self.fb.cur;
        self.fb.switch_to(bb);
        let vb = self.expr(eb)?;
        let end_b = self.fb.cur;
        let ty = match (va.ty(), vb.ty()) {
            (None, None) => Scalar::Xp,
            (Some(t), None) | (None, Some(t)) => t,
            (Some(x), Some(y)) => match common(x, y) {
                Ok(t) => t,
                Err(CoerceError::UnsignedToFloat(f, t)) => {
                    return Err(self.unsigned_to_float(f, t, span, "the two arms convert"));
                }
            },
        };
        let res = self.fb.reg();
        self.fb.switch_to(end_a);
        let ra = self.materialize(va, ty, ea.span)?;
        self.fb.emit(Inst::Mov { dst: res, src: ra });
        self.fb.terminate(Term::Jump(join));
        self.fb.switch_to(end_b);
        let rb = self.materialize(vb, ty, eb.span)?;
        self.fb.emit(Inst::Mov { dst: res, src: rb });
        self.fb.terminate(Term::Jump(join));
        self.fb.switch_to(join);
        Ok(Val::Reg { r: res, ty })
    }

    fn min_max(&mut self, is_min: bool, ea: &Expr, eb: &Expr, span: Span) -> R<Val> {
        let a = self.expr(ea)?;
        let b = self.expr(eb)?;
        let (a, b, ty) = self.coerce_pair(a, b, span)?;
        let Some(ty) = ty else {
            if let (Val::Int(x), Val::Int(y)) = (a, b) {
                return Ok(Val::Int(if is_min { x.min(y) } else { x.max(y) }));
            }
            return Err(Reported);
        };
        let op = if is_min { CmpOp::Lt } else { CmpOp::Gt };
        if let (Val::Const { bits: x, .. }, Val::Const { bits: y, .. }) = (a, b)
            && ty != Scalar::U64
        {
            let pick_b = alu::cmp(op, ty.nt(), y as u32, x as u32);
            return Ok(Val::Const {
                bits: if pick_b { y } else { x },
                ty,
            });
        }
        let ra = self.materialize(a, ty, span)?;
        let rb = self.materialize(b, ty, span)?;
        let res = self.fb.reg();
        self.fb.emit(Inst::Mov { dst: res, src: ra });
        let join = self.if_cmp(op, ty, rb, ra);
        self.fb.emit(Inst::Mov { dst: res, src: rb });
        self.fb.terminate(Term::Jump(join));
        self.fb.switch_to(join);
        Ok(Val::Reg { r: res, ty })
    }

    /// Goes on in a new block when `a op b` (of type `ty`) holds; returns the block where
    /// both ways join, which the caller enters (or jumps to) when it is done.
    pub fn if_cmp(&mut self, op: CmpOp, ty: Scalar, a: VReg, b: VReg) -> BlockId {
        let c = self.fb.reg();
        self.fb.emit(Inst::Cmp {
            op,
            ty: ty.nt(),
            dst: c,
            a,
            b,
        });
        let then = self.fb.block();
        let join = self.fb.block();
        self.fb.branch(c, then, join);
        self.fb.switch_to(then);
        join
    }

    /// A call; `want_value` when the result is used.
    pub fn call(
        &mut self,
        name: &ast::Ident,
        args: &[Expr],
        span: Span,
        want_value: bool,
    ) -> R<Val> {
        let Some(&fi) = self.func_names.get(&name.name) else {
            if self.local(&name.name).is_some() || self.globals.contains_key(&name.name) {
                return Err(self.err(
                    codes::TUNG_CALL,
                    format!("`{}` is not a function", name.name),
                    name.span,
                    "called here",
                ));
            }
            return Err(self.undefined(name));
        };
        let Some(sig) = self.funcs.get(fi).cloned() else {
            return Err(Reported);
        };
        if args.len() != sig.params.len() {
            return Err(self.report(
                Diagnostic::error(
                    codes::TUNG_CALL,
                    format!(
                        "`{}` takes {} argument{}, but {} {} given",
                        sig.name,
                        sig.params.len(),
                        if sig.params.len() == 1 { "" } else { "s" },
                        args.len(),
                        if args.len() == 1 { "is" } else { "are" }
                    ),
                    span,
                    "this call",
                )
                .with_label(sig.span, "declared here"),
            ));
        }
        if want_value && sig.ret.is_none() {
            return Err(self.report(
                Diagnostic::error(
                    codes::TUNG_CALL,
                    format!("`{}` returns no value", sig.name),
                    span,
                    "used as a value",
                )
                .with_label(sig.span, "declared without `-> T`"),
            ));
        }
        let mut regs = Vec::with_capacity(args.len());
        for (a, pt) in args.iter().zip(&sig.params) {
            let pt = match pt {
                ParamTy::Scalar(s) => *s,
                ParamTy::Array(want) => {
                    regs.push(self.array_argument(a, want, &sig)?);
                    continue;
                }
            };
            let v = if let Some(s) = self.socket_of_read(a) {
                self.receive_value(s, pt, a.span)?
            } else {
                self.expr(a)?
            };
            regs.push(self.materialize(v, pt, a.span)?);
        }
        if let Some(caller) = self.cur_func {
            self.calls.push((caller, fi, span));
        }
        let dst = sig.ret.map(|_| self.fb.reg());
        self.fb.emit(Inst::Call {
            func: sig.id,
            args: regs,
            dst,
        });
        Ok(match (dst, sig.ret) {
            (Some(r), Some(ty)) => Val::Reg { r, ty },
            _ => Val::Int(0),
        })
    }

    /// The address of the array `a` passed for a parameter of type `want` of `sig`: an
    /// array variable, element or member of exactly that type.
    fn array_argument(&mut self, a: &Expr, want: &Ty, sig: &FuncSig) -> R<VReg> {
        let wanted = want.describe(&self.aggs);
        let mismatch = |this: &mut Self, got: String| {
            this.report(
                Diagnostic::error(
                    codes::TUNG_TYPE_MISMATCH,
                    format!("`{}` takes a `{wanted}` here, not {got}", sig.name),
                    a.span,
                    "passed here",
                )
                .with_label(sig.span, "declared here")
                .with_help("an array parameter takes an array of the same element type and length, by reference"),
            )
        };
        let is_place = matches!(
            a.kind,
            ExprKind::Name(_) | ExprKind::Index(..) | ExprKind::Member(..)
        );
        if !is_place {
            return Err(mismatch(self, "a value".to_string()));
        }
        match self.place(a)? {
            Place::Mem {
                base,
                off,
                dynoff,
                ty,
            } if ty == *want => Ok(self.addr_of(base, off, dynoff)),
            Place::Mem { ty, .. } => {
                let got = format!("a `{}`", ty.describe(&self.aggs));
                Err(mismatch(self, got))
            }
            Place::Reg { ty, .. } => Err(mismatch(self, format!("a `{}`", ty.name()))),
        }
    }
}

/// The boolean constant `x c y` of two exact values.
fn exact_compare<T: PartialOrd>(c: CmpOp, x: T, y: T) -> Val {
    Val::Const {
        bits: u64::from(csl_arch::alu::compare(c, x, y)),
        ty: Scalar::Bool,
    }
}
