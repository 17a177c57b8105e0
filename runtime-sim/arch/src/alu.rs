//! Scalar arithmetic on register values, per [`NumTy`]: the semantics of `bin`, `cmp`, `un`
//! and `conv`.
//!
//! A register holds a value's bits zero-extended to 32 bits. Integer ops sign-extend 8- and
//! 16-bit signed operands, compute with wrap-around, and mask the result back to the
//! type's width. `bool` is 0 or 1 (a 1-bit unsigned type). `f32` uses the register bits
//! directly; `f16` computes in `f32` and rounds once to `f16` (exact for `+ - * /`, since
//! f32 has more than twice f16's precision). Choices of ours: bitwise ops and shifts on a
//! float type act on its raw bits; `%` on floats is the C `fmod`.
//!
//! Shared by the simulator's interpreter and the compiler's constant folder, so folding is
//! bit-exact with execution by construction.

use crate::isa::{BinOp, CmpOp, NumTy, UnOp};
use half::f16;

/// Bit mask of a type's width.
#[inline]
pub fn mask(ty: NumTy) -> u32 {
    match ty {
        NumTy::Bool => 1,
        NumTy::I8 | NumTy::U8 => 0xff,
        NumTy::I16 | NumTy::U16 | NumTy::F16 => 0xffff,
        NumTy::I32 | NumTy::U32 | NumTy::F32 => u32::MAX,
    }
}

/// Width in bits (1 for `bool`).
#[inline]
fn bits(ty: NumTy) -> u32 {
    match ty {
        NumTy::Bool => 1,
        NumTy::I8 | NumTy::U8 => 8,
        NumTy::I16 | NumTy::U16 | NumTy::F16 => 16,
        NumTy::I32 | NumTy::U32 | NumTy::F32 => 32,
    }
}

/// The value of an integer register as `i64`: sign-extended for signed types, masked
/// otherwise.
#[inline]
fn int_value(ty: NumTy, v: u32) -> i64 {
    match ty {
        NumTy::I8 => i64::from(v as u8 as i8),
        NumTy::I16 => i64::from(v as u16 as i16),
        NumTy::I32 => i64::from(v as i32),
        _ => i64::from(v & mask(ty)),
    }
}

/// The register bits normalised to the type (masked to its width; `bool` becomes 0/1).
#[inline]
pub fn normalize(ty: NumTy, v: u32) -> u32 {
    match ty {
        NumTy::Bool => u32::from(v != 0),
        _ => v & mask(ty),
    }
}

#[inline]
fn to_f32(ty: NumTy, v: u32) -> f32 {
    match ty {
        NumTy::F16 => f16::from_bits(v as u16).to_f32(),
        _ => f32::from_bits(v),
    }
}

#[inline]
fn from_f32(ty: NumTy, x: f32) -> u32 {
    match ty {
        NumTy::F16 => u32::from(f16::from_f32(x).to_bits()),
        _ => x.to_bits(),
    }
}

/// The f16 bits of `x`, rounded once to nearest even (overflow to infinity, NaN to a
/// quiet NaN of the same sign). `half::f16::from_f64` rounds through f32 on hosts with
/// F16C (and truncates to 32 bits without it), so it can round twice: 1 + 2^-11 + 2^-30
/// would become 1.0 instead of 1 + 2^-10.
pub fn f16_from_f64(x: f64) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 48) & 0x8000) as u16;
    let exp = ((b >> 52) & 0x7ff) as i32;
    let mant = b & ((1u64 << 52) - 1);
    if exp == 0x7ff {
        return if mant == 0 {
            sign | 0x7c00
        } else {
            sign | 0x7e00 | ((mant >> 42) as u16 & 0x3ff)
        };
    }
    if exp == 0 {
        // An f64 subnormal is far below half of f16's smallest step.
        return sign;
    }
    let e = exp - 1023;
    if e > 15 {
        return sign | 0x7c00;
    }
    // The significand with its implicit bit (53 bits), and how many of its low bits are
    // below the f16 step: 42 for a normal result, more for a subnormal one (step 2^-24).
    let m = (1u64 << 52) | mant;
    let shift = 42 + (-14 - e).max(0) as u32;
    if shift >= 64 {
        return sign;
    }
    let mut q = m >> shift;
    let rem = m & ((1u64 << shift) - 1);
    let half = 1u64 << (shift - 1);
    if rem > half || (rem == half && q & 1 == 1) {
        q += 1;
    }
    // A normal result: q holds the implicit bit (1 << 10), which adds the 1 that takes
    // the biased exponent from e + 14 to e + 15; a carry out of the significand moves
    // into the exponent the same way.
    let bits = if e >= -14 {
        (((e + 14) as u64) << 10) + q
    } else {
        q
    };
    if bits >= 0x7c00 {
        sign | 0x7c00
    } else {
        sign | bits as u16
    }
}

/// Integer division or remainder by zero (the simulator turns it into a fault).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DivisionByZero;

/// `a <op> b` in type `ty`.
#[inline]
pub fn bin(op: BinOp, ty: NumTy, a: u32, b: u32) -> Result<u32, DivisionByZero> {
    let m = mask(ty);
    if ty.is_float() {
        let (x, y) = (to_f32(ty, a), to_f32(ty, b));
        let r = match op {
            BinOp::Add => from_f32(ty, x + y),
            BinOp::Sub => from_f32(ty, x - y),
            BinOp::Mul => from_f32(ty, x * y),
            BinOp::Div => from_f32(ty, x / y),
            BinOp::Rem => from_f32(ty, x % y),
            BinOp::And => a & b,
            BinOp::Or => a | b,
            BinOp::Xor => a ^ b,
            BinOp::Shl => (a & m) << ((b & m) % bits(ty)),
            BinOp::Shr => (a & m) >> ((b & m) % bits(ty)),
        };
        return Ok(r & m);
    }
    let signed = ty.is_signed();
    // Operands as 32-bit patterns: sign-extended for signed types, masked otherwise.
    let (x, y) = (int_value(ty, a) as u32, int_value(ty, b) as u32);
    let r = match op {
        BinOp::Add => x.wrapping_add(y),
        BinOp::Sub => x.wrapping_sub(y),
        BinOp::Mul => x.wrapping_mul(y),
        BinOp::Div | BinOp::Rem if y == 0 => return Err(DivisionByZero),
        BinOp::Div if signed => (x as i32).wrapping_div(y as i32) as u32,
        BinOp::Div => x / y,
        BinOp::Rem if signed => (x as i32).wrapping_rem(y as i32) as u32,
        BinOp::Rem => x % y,
        BinOp::And => x & y,
        BinOp::Or => x | y,
        BinOp::Xor => x ^ y,
        BinOp::Shl => x << ((b & m) % bits(ty)),
        BinOp::Shr if signed => ((x as i32) >> ((b & m) % bits(ty))) as u32,
        BinOp::Shr => x >> ((b & m) % bits(ty)),
    };
    Ok(r & m)
}

/// `a <op> b` compared as type `ty`.
#[inline]
pub fn cmp(op: CmpOp, ty: NumTy, a: u32, b: u32) -> bool {
    if ty.is_float() {
        compare(op, to_f32(ty, a), to_f32(ty, b))
    } else {
        compare(op, int_value(ty, a), int_value(ty, b))
    }
}

/// `x <op> y` for values of any ordered type (so a NaN compares unequal and unordered).
#[inline]
pub fn compare<T: PartialOrd>(op: CmpOp, x: T, y: T) -> bool {
    match op {
        CmpOp::Eq => x == y,
        CmpOp::Ne => x != y,
        CmpOp::Lt => x < y,
        CmpOp::Le => x <= y,
        CmpOp::Gt => x > y,
        CmpOp::Ge => x >= y,
    }
}

/// `<op> a` in type `ty`.
#[inline]
pub fn un(op: UnOp, ty: NumTy, a: u32) -> u32 {
    let m = mask(ty);
    match op {
        UnOp::Neg if ty.is_float() => (a ^ (1 << (bits(ty) - 1))) & m,
        UnOp::Neg => a.wrapping_neg() & m,
        UnOp::Not => !a & m,
        UnOp::LNot => u32::from(a & m == 0),
    }
}

/// A scalar value in a form every conversion can start from.
enum Num {
    Int(i64),
    Float(f32),
}

/// `@as(to, a)` where `a` holds a `from`.
///
/// Float → integer truncates toward zero and saturates (NaN → 0); integer → float rounds
/// to nearest; anything → `bool` is `!= 0` (NaN → true); `bool` → number is 0/1;
/// integer → integer truncates or sign-extends as in C.
#[inline]
pub fn conv(to: NumTy, from: NumTy, a: u32) -> u32 {
    let n = match from {
        NumTy::Bool => Num::Int(i64::from(a != 0)),
        NumTy::F16 | NumTy::F32 => Num::Float(to_f32(from, a)),
        _ => Num::Int(int_value(from, a)),
    };
    match to {
        NumTy::Bool => u32::from(match n {
            Num::Int(i) => i != 0,
            Num::Float(x) => x != 0.0,
        }),
        // An i64 in the 32-bit range converts to f32 with one rounding; to f16, values up
        // to 2^24 are exact in f32 and larger ones overflow f16 either way.
        NumTy::F16 | NumTy::F32 => match n {
            Num::Int(i) => from_f32(to, i as f32),
            Num::Float(x) => from_f32(to, x),
        },
        _ => match n {
            Num::Int(i) => (i as u32) & mask(to),
            Num::Float(x) => {
                let (lo, hi) = int_range(to);
                // `as` from a float saturates and maps NaN to 0.
                let t = (f64::from(x).trunc() as i64).clamp(lo, hi);
                (t as u32) & mask(to)
            }
        },
    }
}

/// [`conv`] with an explicit rounding mode for float sources ([`crate::isa::Op::ConvR`]):
/// float to integer rounds in `mode` and saturates (NaN gives 0); float to float of the
/// same type rounds to an integral value; every other pair behaves as [`conv`].
pub fn conv_round(mode: crate::isa::RoundMode, to: NumTy, from: NumTy, a: u32) -> u32 {
    use crate::isa::RoundMode;
    if !from.is_float() {
        return conv(to, from, a);
    }
    let x = f64::from(to_f32(from, a));
    let r = match mode {
        RoundMode::NearestEven => x.round_ties_even(),
        RoundMode::TowardZero => x.trunc(),
        RoundMode::Down => x.floor(),
        RoundMode::Up => x.ceil(),
    };
    match to {
        NumTy::F16 | NumTy::F32 if to == from => from_f32(to, r as f32),
        NumTy::F16 | NumTy::F32 | NumTy::Bool => conv(to, from, a),
        _ => {
            let (lo, hi) = int_range(to);
            // `as` saturates at i64's range and maps NaN to 0; the clamp does the rest.
            ((r as i64).clamp(lo, hi) as u32) & mask(to)
        }
    }
}

/// The value range of an integer type.
fn int_range(ty: NumTy) -> (i64, i64) {
    match ty {
        NumTy::I8 => (i64::from(i8::MIN), i64::from(i8::MAX)),
        NumTy::U8 => (0, i64::from(u8::MAX)),
        NumTy::I16 => (i64::from(i16::MIN), i64::from(i16::MAX)),
        NumTy::U16 => (0, i64::from(u16::MAX)),
        NumTy::I32 => (i64::from(i32::MIN), i64::from(i32::MAX)),
        _ => (0, i64::from(u32::MAX)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(x: f32) -> u32 {
        x.to_bits()
    }

    #[test]
    fn i16_wraps_and_masks() {
        assert_eq!(bin(BinOp::Add, NumTy::I16, 0x7fff, 1), Ok(0x8000));
        assert_eq!(bin(BinOp::Sub, NumTy::I16, 0, 1), Ok(0xffff));
        assert_eq!(bin(BinOp::Mul, NumTy::I16, 0x100, 0x100), Ok(0));
        assert_eq!(bin(BinOp::Div, NumTy::I16, 0xfff9, 2), Ok(0xfffd)); // -7 / 2 = -3
        assert_eq!(bin(BinOp::Rem, NumTy::I16, 0xfff9, 2), Ok(0xffff)); // -7 % 2 = -1
        assert_eq!(bin(BinOp::Div, NumTy::I16, 0x8000, 0xffff), Ok(0x8000)); // MIN / -1
        assert_eq!(bin(BinOp::Div, NumTy::U16, 0xfff9, 2), Ok(0x7ffc));
        assert_eq!(bin(BinOp::Div, NumTy::I32, 1, 0), Err(DivisionByZero));
        assert_eq!(bin(BinOp::Rem, NumTy::U8, 1, 0), Err(DivisionByZero));
    }

    #[test]
    fn shifts() {
        assert_eq!(bin(BinOp::Shr, NumTy::I16, 0x8000, 3), Ok(0xf000));
        assert_eq!(bin(BinOp::Shr, NumTy::U16, 0x8000, 3), Ok(0x1000));
        assert_eq!(bin(BinOp::Shl, NumTy::U8, 0x81, 1), Ok(0x02));
        assert_eq!(bin(BinOp::Shl, NumTy::U8, 1, 9), Ok(2)); // 9 mod 8
        assert_eq!(bin(BinOp::Shr, NumTy::I32, 0x8000_0000, 31), Ok(u32::MAX));
        assert_eq!(bin(BinOp::Shl, NumTy::I32, 1, 32), Ok(1));
    }

    #[test]
    fn floats() {
        assert_eq!(bin(BinOp::Add, NumTy::F32, f(1.5), f(2.25)), Ok(f(3.75)));
        assert_eq!(
            bin(BinOp::Div, NumTy::F32, f(1.0), f(0.0)),
            Ok(f(f32::INFINITY))
        );
        let h = |x: f32| u32::from(f16::from_f32(x).to_bits());
        assert_eq!(bin(BinOp::Mul, NumTy::F16, h(1.5), h(-2.0)), Ok(h(-3.0)));
        assert_eq!(un(UnOp::Neg, NumTy::F32, f(2.0)), f(-2.0));
        assert_eq!(un(UnOp::Neg, NumTy::F16, h(2.0)), h(-2.0));
        assert!(cmp(CmpOp::Lt, NumTy::F32, f(-1.0), f(0.5)));
        assert!(!cmp(CmpOp::Eq, NumTy::F32, f(f32::NAN), f(f32::NAN)));
        assert!(cmp(CmpOp::Ne, NumTy::F32, f(f32::NAN), f(f32::NAN)));
    }

    #[test]
    fn comparisons_respect_sign() {
        assert!(cmp(CmpOp::Lt, NumTy::I8, 0xff, 1)); // -1 < 1
        assert!(!cmp(CmpOp::Lt, NumTy::U8, 0xff, 1));
        assert!(cmp(CmpOp::Ge, NumTy::I32, 0, 0x8000_0000));
    }

    #[test]
    fn conversions() {
        assert_eq!(conv(NumTy::I16, NumTy::F32, f(-3.9)), 0xfffd);
        assert_eq!(conv(NumTy::I16, NumTy::F32, f(1e9)), 0x7fff);
        assert_eq!(conv(NumTy::I16, NumTy::F32, f(-1e9)), 0x8000);
        assert_eq!(conv(NumTy::U8, NumTy::F32, f(-5.0)), 0);
        assert_eq!(conv(NumTy::U32, NumTy::F32, f(f32::INFINITY)), u32::MAX);
        assert_eq!(conv(NumTy::I32, NumTy::F32, f(f32::NAN)), 0);
        assert_eq!(conv(NumTy::Bool, NumTy::F32, f(f32::NAN)), 1);
        assert_eq!(conv(NumTy::Bool, NumTy::F32, f(-0.0)), 0);
        assert_eq!(conv(NumTy::F32, NumTy::I16, 0xffff), f(-1.0));
        assert_eq!(conv(NumTy::F32, NumTy::U32, u32::MAX), f(4_294_967_296.0));
        assert_eq!(conv(NumTy::F32, NumTy::I32, 16_777_217), f(16_777_216.0));
        assert_eq!(conv(NumTy::F32, NumTy::Bool, 1), f(1.0));
        assert_eq!(conv(NumTy::I32, NumTy::I8, 0x80), 0xffff_ff80);
        assert_eq!(conv(NumTy::U8, NumTy::I32, 0x1234), 0x34);
        assert_eq!(conv(NumTy::U32, NumTy::I16, 0xffff), u32::MAX);
        assert_eq!(conv(NumTy::F16, NumTy::F32, f(65536.0)), 0x7c00); // +inf
        assert_eq!(conv(NumTy::F32, NumTy::F16, 0x3c00), f(1.0));
        assert_eq!(conv(NumTy::F16, NumTy::I32, 2049), 0x6800); // 2048: ties to even
        assert_eq!(conv(NumTy::I8, NumTy::F16, 0x5bd0), 0x7f); // 250.0 saturates
    }

    #[test]
    fn f64_to_f16_rounds_once() {
        // Above the tie between 1.0 and 1 + 2^-10 by 2^-30: up (f32 would make it a tie).
        assert_eq!(f16_from_f64(1.0 + 2f64.powi(-11) + 2f64.powi(-30)), 0x3c01);
        assert_eq!(f16_from_f64(1.0 + 2f64.powi(-11)), 0x3c00); // tie: even
        assert_eq!(f16_from_f64(1.0 + 3.0 * 2f64.powi(-11)), 0x3c02); // tie: even
        assert_eq!(
            f16_from_f64(-(1.0 + 2f64.powi(-11) + 2f64.powi(-40))),
            0xbc01
        );
        assert_eq!(f16_from_f64(65504.0), 0x7bff);
        assert_eq!(f16_from_f64(65519.99), 0x7bff);
        assert_eq!(f16_from_f64(65520.0), 0x7c00); // the tie above the largest: even = inf
        assert_eq!(f16_from_f64(1e300), 0x7c00);
        assert_eq!(f16_from_f64(f64::NEG_INFINITY), 0xfc00);
        assert_eq!(f16_from_f64(2f64.powi(-14)), 0x0400);
        assert_eq!(f16_from_f64(2f64.powi(-14) - 2f64.powi(-25)), 0x0400); // tie: even
        assert_eq!(f16_from_f64(2f64.powi(-24)), 0x0001);
        assert_eq!(f16_from_f64(2f64.powi(-25)), 0x0000); // tie: even
        assert_eq!(f16_from_f64(2f64.powi(-25) + 2f64.powi(-60)), 0x0001);
        assert_eq!(f16_from_f64(1.5 * 2f64.powi(-24)), 0x0002);
        assert_eq!(f16_from_f64(-0.0), 0x8000);
        assert_eq!(f16_from_f64(1e-300), 0);
        assert_eq!(f16_from_f64(f64::MIN_POSITIVE / 4.0), 0);
        assert!(f16::from_bits(f16_from_f64(f64::NAN)).is_nan());
        // Every f32 (a sample of patterns) converts as the single f32 -> f16 rounding.
        for b in (0..=u32::MAX).step_by(9973) {
            let x = f32::from_bits(b);
            let want = f16::from_f32(x);
            let got = f16::from_bits(f16_from_f64(f64::from(x)));
            if want.is_nan() {
                assert!(got.is_nan(), "{b:#x}");
            } else {
                assert_eq!(got.to_bits(), want.to_bits(), "{b:#x} = {x}");
            }
        }
    }
}
