//! Pre-decoded instructions: at load, each instruction of a class is translated once into
//! a [`Fast`] form that the interpreter dispatches without the general `Op` match. Only
//! the hot, simple instructions get a fast form (32-bit integer arithmetic and compares
//! with one variant per operation; arithmetic, compares, unary operations and conversions
//! of the other types through [`csl_arch::alu`]; immediates, moves, branches, loads,
//! stores, returns); everything else is [`Fast::Slow`]
//! and runs through the general `Op` interpreter in `exec` (so does a load or store outside
//! SRAM, a memory-mapped register or a fault, and a return outside a run-ahead stretch). A fast form computes exactly what
//! [`csl_arch::alu`] computes for its `Op` (checked by the tests below).

use csl_arch::isa::{BinOp, CmpOp, NumTy, Op, Reg, UnOp, Width};

/// Whether `ty` is signed, for the two 32-bit integer types (the only ones with fast forms).
fn signed_32(ty: NumTy) -> Option<bool> {
    match ty {
        NumTy::I32 => Some(true),
        NumTy::U32 => Some(false),
        _ => None,
    }
}

/// A 32-bit integer operation or comparison (a comparison yields 0 or 1; the type's
/// signedness matters only for `>>` and the ordered comparisons).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IntOp {
    Add,
    Sub,
    Mul,
    And,
    Or,
    Xor,
    Shl,
    ShrU,
    ShrS,
    Eq,
    Ne,
    LtU,
    LeU,
    GtU,
    GeU,
    LtS,
    LeS,
    GtS,
    GeS,
}

impl IntOp {
    /// The fast form of `op` on type `ty`, if there is one.
    fn of(op: BinOp, ty: NumTy) -> Option<IntOp> {
        let signed = signed_32(ty)?;
        Some(match op {
            BinOp::Add => IntOp::Add,
            BinOp::Sub => IntOp::Sub,
            BinOp::Mul => IntOp::Mul,
            BinOp::And => IntOp::And,
            BinOp::Or => IntOp::Or,
            BinOp::Xor => IntOp::Xor,
            BinOp::Shl => IntOp::Shl,
            BinOp::Shr if signed => IntOp::ShrS,
            BinOp::Shr => IntOp::ShrU,
            BinOp::Div | BinOp::Rem => return None,
        })
    }

    /// The fast form of the comparison `op` on type `ty`, if there is one.
    fn cmp(op: CmpOp, ty: NumTy) -> Option<IntOp> {
        Some(match (op, signed_32(ty)?) {
            (CmpOp::Eq, _) => IntOp::Eq,
            (CmpOp::Ne, _) => IntOp::Ne,
            (CmpOp::Lt, false) => IntOp::LtU,
            (CmpOp::Le, false) => IntOp::LeU,
            (CmpOp::Gt, false) => IntOp::GtU,
            (CmpOp::Ge, false) => IntOp::GeU,
            (CmpOp::Lt, true) => IntOp::LtS,
            (CmpOp::Le, true) => IntOp::LeS,
            (CmpOp::Gt, true) => IntOp::GtS,
            (CmpOp::Ge, true) => IntOp::GeS,
        })
    }

    /// `x <op> y` (a comparison as 0 or 1).
    #[inline(always)]
    pub(crate) fn apply(self, x: u32, y: u32) -> u32 {
        let (sx, sy) = (x as i32, y as i32);
        match self {
            IntOp::Add => x.wrapping_add(y),
            IntOp::Sub => x.wrapping_sub(y),
            IntOp::Mul => x.wrapping_mul(y),
            IntOp::And => x & y,
            IntOp::Or => x | y,
            IntOp::Xor => x ^ y,
            IntOp::Shl => x << (y % 32),
            IntOp::ShrU => x >> (y % 32),
            IntOp::ShrS => (sx >> (y % 32)) as u32,
            IntOp::Eq => u32::from(x == y),
            IntOp::Ne => u32::from(x != y),
            IntOp::LtU => u32::from(x < y),
            IntOp::LeU => u32::from(x <= y),
            IntOp::GtU => u32::from(x > y),
            IntOp::GeU => u32::from(x >= y),
            IntOp::LtS => u32::from(sx < sy),
            IntOp::LeS => u32::from(sx <= sy),
            IntOp::GtS => u32::from(sx > sy),
            IntOp::GeS => u32::from(sx >= sy),
        }
    }
}

/// Defines [`Fast`] with one variant per integer operation and operand form (register
/// `R`, immediate `I`), so that the interpreter dispatches an arithmetic instruction
/// with one jump instead of one on the form and one on the operation, and the
/// conversions from [`IntOp`].
macro_rules! fast_forms {
    ($($op:ident => $r:ident, $i:ident;)*) => {
        /// The pre-decoded form of one instruction (registers are frame-relative indices).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) enum Fast {
    /// Run the general interpreter on the `Op`.
    Slow,
    Imm {
        dst: u16,
        imm: u32,
    },
    Mov {
        dst: u16,
        src: u16,
    },
    Jump {
        target: u32,
    },
    BrTrue {
        cond: u16,
        target: u32,
    },
    BrFalse {
        cond: u16,
        target: u32,
    },
    /// `dst = load(addr)`: the register's value as the byte address.
    Load {
        w: Width,
        dst: u16,
        addr: u16,
    },
    /// `dst = load((addr + off) & 0xffff)`.
    LoadOff {
        w: Width,
        dst: u16,
        addr: u16,
        off: u16,
    },
    /// `store(addr) = src`.
    Store {
        w: Width,
        addr: u16,
        src: u16,
    },
    /// `store((addr + off) & 0xffff) = src`.
    StoreOff {
        w: Width,
        addr: u16,
        off: u16,
        src: u16,
    },
    /// `ret src` (run by the general interpreter except when running ahead, `exec`).
    Ret {
        src: u16,
    },
    /// `ret` without a value (likewise).
    RetVoid,
    /// `dst = a <op> b` in any other type ([`csl_arch::alu::bin`]; an integer division
    /// by zero is left to the general interpreter, which reports it).
    Bin {
        op: BinOp,
        ty: NumTy,
        dst: u16,
        a: u16,
        b: u16,
    },
    /// `dst = a <op> imm` likewise.
    BinImm {
        op: BinOp,
        ty: NumTy,
        dst: u16,
        a: u16,
        imm: u32,
    },
    /// `dst = (a <op> b)` compared in any other type ([`csl_arch::alu::cmp`]).
    Cmp {
        op: CmpOp,
        ty: NumTy,
        dst: u16,
        a: u16,
        b: u16,
    },
    /// `dst = (a <op> imm)` likewise.
    CmpImm {
        op: CmpOp,
        ty: NumTy,
        dst: u16,
        a: u16,
        imm: u32,
    },
    /// `dst = <op> a` ([`csl_arch::alu::un`]).
    Un {
        op: UnOp,
        ty: NumTy,
        dst: u16,
        a: u16,
    },
    /// `dst = src` converted ([`csl_arch::alu::conv`]).
    Conv {
        to: NumTy,
        from: NumTy,
        dst: u16,
        src: u16,
    },
            $(
                /// `dst = a <op> b`.
                $r { dst: u16, a: u16, b: u16 },
                /// `dst = a <op> imm`.
                $i { dst: u16, a: u16, imm: u32 },
            )*
        }

        /// The fast form `dst = a <op> b`, if `op` has one.
        fn bin(op: Option<IntOp>, dst: Reg, a: Reg, b: Reg) -> Fast {
            let (dst, a, b) = (dst.0, a.0, b.0);
            match op {
                $(Some(IntOp::$op) => Fast::$r { dst, a, b },)*
                None => Fast::Slow,
            }
        }

        /// The fast form `dst = a <op> imm`, if `op` has one.
        fn bin_imm(op: Option<IntOp>, dst: Reg, a: Reg, imm: u32) -> Fast {
            let (dst, a) = (dst.0, a.0);
            match op {
                $(Some(IntOp::$op) => Fast::$i { dst, a, imm },)*
                None => Fast::Slow,
            }
        }

        impl Fast {
            /// For an integer operation: its destination register and its value with the
            /// frame's registers `regs` (`None` for any other form).
            #[inline(always)]
            pub(crate) fn int(self, regs: &[u32]) -> Option<(u16, u32)> {
                let r = |x: u16| regs.get(usize::from(x)).copied().unwrap_or(0);
                match self {
                    $(
                        Fast::$r { dst, a, b } => Some((dst, IntOp::$op.apply(r(a), r(b)))),
                        Fast::$i { dst, a, imm } => Some((dst, IntOp::$op.apply(r(a), imm))),
                    )*
                    _ => None,
                }
            }
        }
    };
}

fast_forms! {
    Add => AddR, AddI;
    Sub => SubR, SubI;
    Mul => MulR, MulI;
    And => AndR, AndI;
    Or => OrR, OrI;
    Xor => XorR, XorI;
    Shl => ShlR, ShlI;
    ShrU => ShrUR, ShrUI;
    ShrS => ShrSR, ShrSI;
    Eq => EqR, EqI;
    Ne => NeR, NeI;
    LtU => LtUR, LtUI;
    LeU => LeUR, LeUI;
    GtU => GtUR, GtUI;
    GeU => GeUR, GeUI;
    LtS => LtSR, LtSI;
    LeS => LeSR, LeSI;
    GtS => GtSR, GtSI;
    GeS => GeSR, GeSI;
}

/// The fast form of every instruction of `code`.
pub(crate) fn predecode(code: &[Op]) -> Vec<Fast> {
    code.iter().map(fast).collect()
}

fn fast(op: &Op) -> Fast {
    match *op {
        Op::Imm { dst, imm } => Fast::Imm { dst: dst.0, imm },
        Op::Mov { dst, src } => Fast::Mov {
            dst: dst.0,
            src: src.0,
        },
        // 32-bit integer operations get one variant per operation, the other types the
        // general forms that call `alu`.
        Op::Bin { op, ty, dst, a, b } => match IntOp::of(op, ty) {
            Some(f) => bin(Some(f), dst, a, b),
            None => Fast::Bin {
                op,
                ty,
                dst: dst.0,
                a: a.0,
                b: b.0,
            },
        },
        Op::Cmp { op, ty, dst, a, b } => match IntOp::cmp(op, ty) {
            Some(f) => bin(Some(f), dst, a, b),
            None => Fast::Cmp {
                op,
                ty,
                dst: dst.0,
                a: a.0,
                b: b.0,
            },
        },
        Op::BinImm {
            op,
            ty,
            dst,
            a,
            imm,
        } => match IntOp::of(op, ty) {
            Some(f) => bin_imm(Some(f), dst, a, imm),
            None => Fast::BinImm {
                op,
                ty,
                dst: dst.0,
                a: a.0,
                imm,
            },
        },
        Op::CmpImm {
            op,
            ty,
            dst,
            a,
            imm,
        } => match IntOp::cmp(op, ty) {
            Some(f) => bin_imm(Some(f), dst, a, imm),
            None => Fast::CmpImm {
                op,
                ty,
                dst: dst.0,
                a: a.0,
                imm,
            },
        },
        Op::Un { op, ty, dst, a } => Fast::Un {
            op,
            ty,
            dst: dst.0,
            a: a.0,
        },
        Op::Conv { to, from, dst, src } => Fast::Conv {
            to,
            from,
            dst: dst.0,
            src: src.0,
        },
        Op::Jump { target } => Fast::Jump { target },
        Op::BrTrue { cond, target } => Fast::BrTrue {
            cond: cond.0,
            target,
        },
        Op::BrFalse { cond, target } => Fast::BrFalse {
            cond: cond.0,
            target,
        },
        Op::Load { w, dst, addr } => Fast::Load {
            w,
            dst: dst.0,
            addr: addr.0,
        },
        Op::LoadOff { w, dst, addr, off } => Fast::LoadOff {
            w,
            dst: dst.0,
            addr: addr.0,
            off,
        },
        Op::Store { w, addr, src } => Fast::Store {
            w,
            addr: addr.0,
            src: src.0,
        },
        Op::StoreOff { w, addr, off, src } => Fast::StoreOff {
            w,
            addr: addr.0,
            off,
            src: src.0,
        },
        Op::Ret { src } => Fast::Ret { src: src.0 },
        Op::RetVoid {} => Fast::RetVoid,
        _ => Fast::Slow,
    }
}

#[cfg(test)]
mod tests {
    use super::{Fast, IntOp, bin, bin_imm};
    use csl_arch::alu;
    use csl_arch::isa::{BinOp, CmpOp, NumTy, Reg};

    const VALUES: [u32; 10] = [
        0,
        1,
        2,
        31,
        32,
        33,
        0x7fff_ffff,
        0x8000_0000,
        0xffff_fffe,
        u32::MAX,
    ];

    #[test]
    fn fast_forms_compute_what_the_alu_computes() {
        for ty in [NumTy::I32, NumTy::U32] {
            for &x in &VALUES {
                for &y in &VALUES {
                    for op in BinOp::ALL {
                        if let Some(f) = IntOp::of(op, ty) {
                            assert_eq!(Ok(f.apply(x, y)), alu::bin(op, ty, x, y), "{op:?} {ty:?}");
                        }
                    }
                    for op in CmpOp::ALL {
                        let f = IntOp::cmp(op, ty).expect("every compare has a fast form");
                        assert_eq!(f.apply(x, y), u32::from(alu::cmp(op, ty, x, y)));
                    }
                }
            }
        }
        assert!(IntOp::of(BinOp::Add, NumTy::U16).is_none());
    }

    #[test]
    fn every_integer_form_computes_its_operation() {
        let (x, y) = (0xffff_fff0u32, 7u32);
        let regs = [x, y, 0];
        let mut ops = Vec::new();
        for ty in [NumTy::I32, NumTy::U32] {
            ops.extend(BinOp::ALL.iter().filter_map(|&op| IntOp::of(op, ty)));
            ops.extend(CmpOp::ALL.iter().filter_map(|&op| IntOp::cmp(op, ty)));
        }
        for f in ops {
            let r = bin(Some(f), Reg(2), Reg(0), Reg(1));
            assert_eq!(r.int(&regs), Some((2, f.apply(x, y))), "{f:?}");
            let i = bin_imm(Some(f), Reg(2), Reg(1), 5);
            assert_eq!(i.int(&regs), Some((2, f.apply(y, 5))), "{f:?}");
        }
        assert_eq!(bin(None, Reg(0), Reg(0), Reg(0)), Fast::Slow);
        assert_eq!(Fast::RetVoid.int(&regs), None);
        assert!(IntOp::of(BinOp::Div, NumTy::U32).is_none());
    }
}
