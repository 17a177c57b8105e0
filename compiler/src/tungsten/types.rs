//! Tungsten types: the scalar types with their hardware number types, aggregates, and the
//! implicit coercion of binary operations (tungsten.md §4, seed 003).

use csl_arch::isa::NumTy;

/// A scalar type name of the language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    /// 32-bit IEEE float.
    Sp,
    /// 16-bit IEEE float.
    Hp,
    /// 16-bit signed integer (the type of a context-free integer literal).
    Xp,
    /// 16-bit signed integer.
    S16,
    /// 16-bit unsigned integer.
    U16,
    /// 32-bit signed integer.
    S32,
    /// 32-bit unsigned integer.
    U32,
    /// 64-bit unsigned: only the type of integer literals of 2^32 or more.
    U64,
    /// A raw 32-bit wavelet, bit-compatible with `u32` (ours).
    Wv,
    /// A comparison result (0 or 1); not spelled in the language.
    Bool,
}

impl Scalar {
    /// The types a program can write, in the order editors list them.
    pub const WRITTEN: [Scalar; 9] = [
        Scalar::Sp,
        Scalar::Hp,
        Scalar::Xp,
        Scalar::S16,
        Scalar::U16,
        Scalar::S32,
        Scalar::U32,
        Scalar::U64,
        Scalar::Wv,
    ];

    /// One line on what the type holds, for editors.
    pub fn summary(self) -> &'static str {
        match self {
            Scalar::Sp => "32-bit IEEE float (single precision)",
            Scalar::Hp => {
                "16-bit float (IEEE half precision unless the FP control word picks another format)"
            }
            Scalar::Xp => "16-bit signed integer, the type of an integer literal without context",
            Scalar::S16 => "16-bit signed integer",
            Scalar::U16 => "16-bit unsigned integer",
            Scalar::S32 => "32-bit signed integer",
            Scalar::U32 => "32-bit unsigned integer",
            Scalar::U64 => "64-bit unsigned integer: only integer literals of 2^32 or more have it",
            Scalar::Wv => "a raw 32-bit wavelet, bit-compatible with u32",
            Scalar::Bool => "a comparison result, 0 or 1",
        }
    }

    /// The keyword.
    pub fn name(self) -> &'static str {
        match self {
            Scalar::Sp => "sp",
            Scalar::Hp => "hp",
            Scalar::Xp => "xp",
            Scalar::S16 => "s16",
            Scalar::U16 => "u16",
            Scalar::S32 => "s32",
            Scalar::U32 => "u32",
            Scalar::U64 => "u64",
            Scalar::Wv => "wv",
            Scalar::Bool => "bool",
        }
    }

    /// The machine number type (`None` for `u64`, which has no registers).
    pub fn num(self) -> Option<NumTy> {
        Some(match self {
            Scalar::Sp => NumTy::F32,
            Scalar::Hp => NumTy::F16,
            Scalar::Xp | Scalar::S16 => NumTy::I16,
            Scalar::U16 => NumTy::U16,
            Scalar::S32 => NumTy::I32,
            Scalar::U32 | Scalar::Wv => NumTy::U32,
            Scalar::Bool => NumTy::Bool,
            Scalar::U64 => return None,
        })
    }

    /// The machine type, `u32` standing in for `u64` (callers reject `u64` first).
    pub fn nt(self) -> NumTy {
        self.num().unwrap_or(NumTy::U32)
    }

    /// Width in bits.
    pub fn bits(self) -> u32 {
        match self {
            Scalar::Hp | Scalar::Xp | Scalar::S16 | Scalar::U16 => 16,
            Scalar::Sp | Scalar::S32 | Scalar::U32 | Scalar::Wv => 32,
            Scalar::U64 => 64,
            Scalar::Bool => 1,
        }
    }

    /// Bytes in memory.
    pub fn bytes(self) -> u32 {
        match self.bits() {
            64 => 8,
            32 => 4,
            _ => 2,
        }
    }

    /// Whether it is `sp` or `hp`.
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::Sp | Scalar::Hp)
    }

    /// Whether it is an unsigned integer (`wv` and comparison results included).
    pub fn is_unsigned(self) -> bool {
        matches!(
            self,
            Scalar::U16 | Scalar::U32 | Scalar::U64 | Scalar::Wv | Scalar::Bool
        )
    }

    /// Whether two types are the same for coercion (`xp`/`s16` and `u32`/`wv` are).
    pub fn same(self, other: Scalar) -> bool {
        self == other || (self != Scalar::U64 && other != Scalar::U64 && self.num() == other.num())
    }
}

/// Why a binary operation's operands cannot be coerced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoerceError {
    /// An unsigned integer would have to become a float (rule 4 on SDR).
    UnsignedToFloat(Scalar, Scalar),
}

/// The common type of a binary operation on typed operands `a` and `b`, by the first of
/// the rules of tungsten.md §4 that applies: (1) same type; (3) two floats: the wider;
/// (4) float and integer: the float (the integer must be signed); (5) integers of one
/// width: the unsigned one; (6) integers of different widths: the wider. (Rule 2, an
/// untyped literal operand, is applied by the caller before.) A comparison result counts
/// as an unsigned integer narrower than every other.
pub fn common(a: Scalar, b: Scalar) -> Result<Scalar, CoerceError> {
    if a.same(b) {
        return Ok(a);
    }
    match (a.is_float(), b.is_float()) {
        (true, true) => Ok(if a.bits() >= b.bits() { a } else { b }),
        (true, false) | (false, true) => {
            let (f, i) = if a.is_float() { (a, b) } else { (b, a) };
            if i.is_unsigned() && i != Scalar::Bool {
                Err(CoerceError::UnsignedToFloat(i, f))
            } else {
                Ok(f)
            }
        }
        (false, false) => {
            if a == Scalar::Bool {
                return Ok(b);
            }
            if b == Scalar::Bool {
                return Ok(a);
            }
            Ok(match a.bits().cmp(&b.bits()) {
                std::cmp::Ordering::Equal => {
                    if a.is_unsigned() {
                        a
                    } else {
                        b
                    }
                }
                std::cmp::Ordering::Greater => a,
                std::cmp::Ordering::Less => b,
            })
        }
    }
}

/// A type of a variable, field or expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ty {
    /// A scalar.
    Scalar(Scalar),
    /// An array of `len` elements.
    Array(Box<Ty>, u32),
    /// A union or struct (index into the aggregate table).
    Agg(usize),
}

/// A field of a union or struct.
#[derive(Clone, Debug)]
pub struct Field {
    /// Name.
    pub name: String,
    /// Type.
    pub ty: Ty,
    /// Byte offset.
    pub offset: u32,
}

/// A union or struct.
#[derive(Clone, Debug)]
pub struct Aggregate {
    /// Name.
    pub name: String,
    /// Union (all fields at offset 0) or struct.
    pub is_union: bool,
    /// Fields in order.
    pub fields: Vec<Field>,
    /// Size in bytes.
    pub size: u32,
    /// Alignment in bytes.
    pub align: u32,
}

impl Ty {
    /// Size in bytes.
    pub fn size(&self, aggs: &[Aggregate]) -> u32 {
        match self {
            Ty::Scalar(s) => s.bytes(),
            Ty::Array(e, n) => e.size(aggs).saturating_mul(*n),
            Ty::Agg(i) => aggs.get(*i).map_or(2, |a| a.size),
        }
    }

    /// Alignment in bytes (2 or 4).
    pub fn align(&self, aggs: &[Aggregate]) -> u32 {
        match self {
            Ty::Scalar(s) => s.bytes().clamp(2, 4),
            Ty::Array(e, _) => e.align(aggs),
            Ty::Agg(i) => aggs.get(*i).map_or(2, |a| a.align),
        }
    }

    /// How the type is written.
    pub fn describe(&self, aggs: &[Aggregate]) -> String {
        match self {
            Ty::Scalar(s) => s.name().to_string(),
            Ty::Array(e, n) => format!("{}[{n}]", e.describe(aggs)),
            Ty::Agg(i) => aggs.get(*i).map_or("?".into(), |a| {
                format!("{} {}", if a.is_union { "union" } else { "struct" }, a.name)
            }),
        }
    }

    /// The scalar, if it is one.
    pub fn scalar(&self) -> Option<Scalar> {
        match self {
            Ty::Scalar(s) => Some(*s),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coercion_rules() {
        assert_eq!(common(Scalar::Hp, Scalar::Sp), Ok(Scalar::Sp));
        assert_eq!(common(Scalar::U16, Scalar::S16), Ok(Scalar::U16));
        assert_eq!(common(Scalar::S16, Scalar::U16), Ok(Scalar::U16));
        assert_eq!(common(Scalar::U16, Scalar::U32), Ok(Scalar::U32));
        assert_eq!(common(Scalar::Xp, Scalar::Sp), Ok(Scalar::Sp));
        assert_eq!(common(Scalar::S32, Scalar::Hp), Ok(Scalar::Hp));
        assert_eq!(common(Scalar::U16, Scalar::Xp), Ok(Scalar::U16));
        assert!(matches!(
            common(Scalar::U16, Scalar::Hp),
            Err(CoerceError::UnsignedToFloat(Scalar::U16, Scalar::Hp))
        ));
        assert_eq!(common(Scalar::Xp, Scalar::S16), Ok(Scalar::Xp));
    }
}
