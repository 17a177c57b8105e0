//! Coercions: converting comptime values and runtime registers to a wanted type, the
//! type-mismatch diagnostic, and the integer and float range helpers they use.

use super::*;

impl Sema {
    /// The type of a [`Val`].
    pub fn val_ty(&mut self, v: &Val) -> TypeId {
        match v {
            Val::Ct(v) => v.ty(&mut self.types),
            Val::Rt { ty, .. } => *ty,
        }
    }

    /// Evaluates `e` and coerces it to `ty` (reported at `e`'s span).
    pub fn expr_as(&mut self, env: &mut Env, e: ExprId, ty: TypeId) -> R<Val> {
        let v = self.expr(env, e)?;
        let s = self.span(env, e);
        self.coerce(env, v, ty, s)
    }

    /// OUT_OF_RANGE: the value `shown` does not fit in type `ty` (an explicit conversion).
    pub fn does_not_fit(
        &mut self,
        shown: impl std::fmt::Display,
        ty: TypeId,
        span: Span,
    ) -> Reported {
        self.err_ty(codes::OUT_OF_RANGE, ty, span, "out of range", |d| {
            format!("{shown} does not fit in {d}")
        })
    }

    /// OUT_OF_RANGE: the comptime result of `what` overflows type `ty`.
    pub fn overflows(&mut self, what: &str, ty: TypeId, span: Span, label: &str) -> Reported {
        self.err_ty(codes::OUT_OF_RANGE, ty, span, label, |d| {
            format!("{what} overflows {d}")
        })
    }

    /// OUT_OF_RANGE: the integer `shown` does not fit in type `ty` (an implicit coercion),
    /// with the type's range as help.
    fn int_out_of_range(
        &mut self,
        shown: impl std::fmt::Display,
        ty: TypeId,
        span: Span,
    ) -> Reported {
        let d = self.types.display(ty);
        let msg = format!("integer {shown} does not fit in {d}");
        let dg = Diagnostic::error(
            codes::OUT_OF_RANGE,
            msg,
            span,
            format!("out of range for {d}"),
        );
        self.report(dg.with_help(int_range_help(&self.types, ty)))
    }

    /// Evaluates `e`: its value and that value's type.
    pub fn expr_typed(&mut self, env: &mut Env, e: ExprId) -> R<(Val, TypeId)> {
        let v = self.expr(env, e)?;
        let ty = self.val_ty(&v);
        Ok((v, ty))
    }

    /// Puts a scalar value into a register.
    pub fn materialize(&mut self, env: &mut Env, v: Val, span: Span) -> R<VReg> {
        let v = match v {
            Val::Rt { reg, .. } => return Ok(reg),
            Val::Ct(v) => v,
        };
        self.runtime_only(env, span)?;
        let bits = match &v {
            Value::GlobalPtr { global, offset, .. } => {
                return self.emit_global_addr(env, *global, *offset, span);
            }
            Value::Dsd(d) => {
                let d = d.clone();
                return self.dsd_const_addr(env, &d, span);
            }
            Value::Dsr(k, n) => {
                let g = self.dsr_slot(*k, *n, span)?;
                return Ok(self.global_addr(env, g, 0));
            }
            Value::Func(d) => {
                let f = self.lower_fn(*d, span)?;
                let dst = self.fb(env).reg();
                self.fb(env).emit(Inst::FuncAddr { dst, func: f });
                return Ok(dst);
            }
            Value::Array(..) | Value::Record(..) => return self.const_addr(env, &v, span),
            other => self.scalar_bits(other, span)?,
        };
        Ok(self.imm(env, bits))
    }

    /// The 32-bit register image of a comptime scalar.
    pub fn scalar_bits(&mut self, v: &Value, span: Span) -> R<u32> {
        Ok(match v {
            Value::Bool(b) => u32::from(*b),
            Value::Enum(t, i) => {
                let tag = self
                    .types
                    .enum_def(*t)
                    .map_or(self.types.common.u16, |d| d.tag);
                return self.scalar_bits(&Value::Int(*i, tag), span);
            }
            Value::Int(i, t) => {
                if *t == self.types.common.comptime_int {
                    return Err(self.err(
                        codes::TYPE_MISMATCH,
                        "an untyped integer has no runtime representation",
                        span,
                        "give it a type, e.g. `@as(i16, ...)`",
                    ));
                }
                let (_, bits) = self.types.int_info(*t).unwrap_or((false, 32));
                if bits > 32 {
                    return Err(self.err(
                        codes::UNSUPPORTED,
                        "64-bit integers are not supported at runtime",
                        span,
                        "use a 32-bit type",
                    ));
                }
                let mask: u64 = if bits >= 32 {
                    0xffff_ffff
                } else {
                    (1u64 << bits) - 1
                };
                ((*i as i64 as u64) & mask) as u32
            }
            Value::Float(f, t) => match self.types.get(*t) {
                Type::F32 => (*f as f32).to_bits(),
                Type::F16 => u32::from(csl_arch::alu::f16_from_f64(*f)),
                _ => {
                    return Err(self.err(
                        codes::TYPE_MISMATCH,
                        "an untyped float has no runtime representation",
                        span,
                        "give it a type, e.g. `@as(f32, ...)`",
                    ));
                }
            },
            Value::Color(c) => u32::from(*c),
            Value::Dir(d) => u32::from(d.index()),
            Value::TaskId(_, n) | Value::Queue(_, n) => u32::from(*n),
            Value::AbsPtr { addr, .. } => *addr,
            other => {
                let ty = other.ty(&mut self.types);
                return Err(self.comptime_only(ty, span, "used in runtime code here"));
            }
        })
    }

    // ----- coercion ----------------------------------------------------------------------

    /// Coerces a comptime value to `ty` (range-checked), or reports a type mismatch.
    pub fn coerce_value(&mut self, v: Value, ty: TypeId, span: Span) -> R<Value> {
        let vt = v.ty(&mut self.types);
        if vt == ty {
            return Ok(v);
        }
        let target = self.types.get(ty).clone();
        let ok = match (&v, &target) {
            (_, Type::ComptimeStruct) if matches!(v, Value::Struct(_) | Value::Record(..)) => {
                Some(v.clone())
            }
            // `@get_ut_id(n)` is held as `.{ .ut = n }`; it is the one value of `ut_id`.
            (Value::Struct(fields), Type::UtId)
                if fields.len() == 1 && fields.iter().all(|(n, _)| n == "ut") =>
            {
                Some(v.clone())
            }
            (Value::Struct(fields), Type::Struct(_)) => {
                return self.anon_to_record(fields.clone(), ty, span);
            }
            (Value::Void, Type::Struct(_)) => {
                return self.anon_to_record(Rc::new(Vec::new()), ty, span);
            }
            (Value::Func(d), Type::Fn { .. }) => return self.coerce_func(*d, ty, ty, span),
            (Value::Func(d), Type::Ptr { elem, .. })
                if matches!(self.types.get(*elem), Type::Fn { .. }) =>
            {
                return self.coerce_func(*d, *elem, ty, span);
            }
            (Value::Int(i, _), Type::Int { .. }) => {
                if !self.types.int_fits(ty, *i) {
                    return Err(self.int_out_of_range(i, ty, span));
                }
                Some(Value::Int(*i, ty))
            }
            (Value::Int(i, _), Type::ComptimeInt) => Some(Value::Int(*i, ty)),
            (Value::BigInt(b), Type::Int { .. }) => {
                return Err(self.int_out_of_range(b, ty, span));
            }
            (Value::BigInt(b), Type::F16 | Type::F32 | Type::ComptimeFloat) => {
                let f = bigint_to_f64(b);
                Some(Value::Float(self.round_checked(f, ty, span)?, ty))
            }
            (Value::Int(i, t), Type::F16 | Type::F32 | Type::ComptimeFloat)
                if *t == self.types.common.comptime_int =>
            {
                Some(Value::Float(self.round_checked(*i as f64, ty, span)?, ty))
            }
            (Value::Float(f, t), Type::F16 | Type::F32)
                if *t == self.types.common.comptime_float =>
            {
                Some(Value::Float(self.round_checked(*f, ty, span)?, ty))
            }
            (Value::Float(f, _), Type::ComptimeFloat) => Some(Value::Float(*f, ty)),
            (Value::Array(_, elems), Type::Array { elem, dims }) => {
                let n: u64 = dims.iter().product();
                if elems.len() as u64 == n {
                    let mut out = Vec::with_capacity(elems.len());
                    for e in elems.iter() {
                        out.push(self.coerce_value(e.clone(), *elem, span)?);
                    }
                    Some(Value::Array(ty, Rc::new(out)))
                } else {
                    None
                }
            }
            (Value::Struct(fields), Type::Array { elem, dims })
                if fields
                    .iter()
                    .enumerate()
                    .all(|(i, (n, _))| *n == i.to_string()) =>
            {
                let n: u64 = dims.iter().product();
                if fields.len() as u64 == n {
                    let mut out = Vec::with_capacity(fields.len());
                    for (_, e) in fields.iter() {
                        out.push(self.coerce_value(e.clone(), *elem, span)?);
                    }
                    Some(Value::Array(ty, Rc::new(out)))
                } else {
                    None
                }
            }
            (Value::GlobalPtr { global, offset, .. }, _) if self.ptr_coercible(vt, ty) => {
                Some(Value::GlobalPtr {
                    global: *global,
                    offset: *offset,
                    ty,
                })
            }
            (Value::AbsPtr { addr, .. }, _) if self.ptr_coercible(vt, ty) => {
                Some(Value::AbsPtr { addr: *addr, ty })
            }
            (Value::Task(_), Type::LocalTaskId | Type::DataTaskId | Type::ControlTaskId) => None,
            _ => None,
        };
        match ok {
            Some(v) => Ok(v),
            None => Err(self.mismatch(ty, vt, span)),
        }
    }

    pub(crate) fn mismatch(&mut self, expected: TypeId, found: TypeId, span: Span) -> Reported {
        let e = self.types.display(expected);
        let f = self.types.display(found);
        let mut d = Diagnostic::error(
            codes::TYPE_MISMATCH,
            format!("expected {e}, found {f}"),
            span,
            format!("this has type {f}"),
        );
        let (te, tf) = (self.types.get(expected), self.types.get(found));
        if self.types.is_numeric(expected) && self.types.is_numeric(found) {
            d = d.with_help(format!("convert explicitly with `@as({e}, ...)`"));
        } else if found == self.types.common.void {
            d = d.with_note(
                "this expression produces no value (a call of a `void` function, or a statement)",
            );
        } else if expected == self.types.common.bool_ && self.types.is_numeric(found) {
            d = d.with_help("numbers are not conditions; compare explicitly, e.g. `x != 0`");
        } else if matches!((te, tf), (Type::Struct(_), Type::Struct(_))) {
            d = d.with_note("struct types are nominal: two definitions are different types even when their fields match");
        } else if matches!((te, tf), (Type::Enum(_), _)) && self.types.is_int(found)
            || matches!((te, tf), (_, Type::Enum(_))) && self.types.is_int(expected)
        {
            d = d.with_help(format!(
                "convert between enums and integers with `@as({e}, ...)`"
            ));
        }
        self.report(d)
    }

    pub(super) fn ptr_coercible(&self, from: TypeId, to: TypeId) -> bool {
        match (self.types.get(from), self.types.get(to)) {
            // *[N]T (or *[M, N]T, flattened row-major) -> [*]T
            (
                Type::Ptr { elem, is_const: fc },
                Type::ManyPtr {
                    elem: te,
                    is_const: tc,
                },
            ) => {
                matches!(self.types.get(*elem), Type::Array { elem: ae, dims } if ae == te && !dims.is_empty())
                    && (*tc || !*fc)
            }
            (
                Type::Ptr { elem, is_const: fc },
                Type::Ptr {
                    elem: te,
                    is_const: tc,
                },
            ) => elem == te && (*tc || !*fc),
            (
                Type::ManyPtr { elem, is_const: fc },
                Type::ManyPtr {
                    elem: te,
                    is_const: tc,
                },
            ) => elem == te && (*tc || !*fc),
            _ => false,
        }
    }

    /// Coerces a value (comptime or runtime) to `ty`.
    pub fn coerce(&mut self, _env: &mut Env, v: Val, ty: TypeId, span: Span) -> R<Val> {
        match v {
            Val::Ct(v) => Ok(Val::Ct(self.coerce_value(v, ty, span)?)),
            Val::Rt { reg, ty: vt } => {
                if vt == ty || self.ptr_coercible(vt, ty) {
                    Ok(Val::Rt { reg, ty })
                } else {
                    Err(self.mismatch(ty, vt, span))
                }
            }
        }
    }

    // ----- operators ---------------------------------------------------------------------

    /// Rounds the comptime number `v` to the float type `ty`, reporting a finite value
    /// that becomes infinite (too large for the type) instead of silently storing `inf`.
    pub(crate) fn round_checked(&mut self, v: f64, ty: TypeId, span: Span) -> R<f64> {
        let r = round_to(self.types.get(ty), v);
        if v.is_finite() && !r.is_finite() {
            let d = self.types.display(ty);
            let max = match self.types.get(ty) {
                Type::F16 => "65504",
                _ => "about 3.4e38",
            };
            return Err(self.report(
                Diagnostic::error(
                    codes::OUT_OF_RANGE,
                    format!("{v:e} does not fit in {d}"),
                    span,
                    format!("out of range for {d}"),
                )
                .with_help(format!("the largest finite {d} is {max}")),
            ));
        }
        Ok(r)
    }
}

/// The largest `comptime_int` the compiler computes, in bits: a bound on memory and time
/// (a chain of squarings would otherwise double the size at each step), far beyond any
/// value a program can store.
pub const MAX_COMPTIME_INT_BITS: u64 = 1 << 16;

/// `x << y` exactly in `i128`, or `None` if the result does not fit (`y` >= 0).
pub fn exact_shl(x: i128, y: i128) -> Option<i128> {
    if x == 0 {
        return Some(0);
    }
    let y = u32::try_from(y).ok().filter(|&y| y < 128)?;
    let r = x << y;
    (r >> y == x).then_some(r)
}

/// Wraps an integer to a fixed width.
pub fn wrap_int(v: i128, signed: bool, bits: u8) -> i128 {
    if bits >= 127 {
        return v;
    }
    let m = 1i128 << bits;
    let r = v.rem_euclid(m);
    if signed && r >= m / 2 { r - m } else { r }
}

/// Rounds a float to the precision of a float type.
pub fn round_to(t: &Type, v: f64) -> f64 {
    match t {
        Type::F32 => v as f32 as f64,
        Type::F16 => half::f16::from_bits(csl_arch::alu::f16_from_f64(v)).to_f64(),
        _ => v,
    }
}

pub(super) fn int_range_help(types: &crate::sema::types::TypeStore, ty: TypeId) -> String {
    match types.int_info(ty) {
        Some((true, bits)) => format!(
            "{} holds {} to {}",
            types.display(ty),
            -(1i128 << (bits - 1)),
            (1i128 << (bits - 1)) - 1
        ),
        Some((false, bits)) => format!("{} holds 0 to {}", types.display(ty), (1i128 << bits) - 1),
        None => String::new(),
    }
}

/// Width of a load or store for a scalar type.
pub fn width_of(n: NumTy) -> Width {
    n.width()
}

/// A big integer as the nearest `f64` (infinite beyond its range).
pub fn bigint_to_f64(b: &num_bigint::BigInt) -> f64 {
    // Decimal text parses correctly rounded, and overflows to infinity.
    b.to_string().parse().unwrap_or(f64::INFINITY)
}

/// An integral, finite `f64` exactly as a big integer (`None` for NaN and infinities).
pub fn bigint_from_f64(f: f64) -> Option<num_bigint::BigInt> {
    if !f.is_finite() || f.fract() != 0.0 {
        return None;
    }
    let bits = f.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64;
    if exp == 0 {
        // Zero or subnormal: an integral one is zero.
        return Some(num_bigint::BigInt::from(0));
    }
    let mant = num_bigint::BigInt::from((bits & ((1u64 << 52) - 1)) | (1u64 << 52));
    let shift = exp - 1075;
    let mag = if shift >= 0 {
        mant << shift as usize
    } else {
        mant >> (-shift) as usize
    };
    Some(if f < 0.0 { -mag } else { mag })
}
