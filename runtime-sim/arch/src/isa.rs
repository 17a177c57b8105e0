//! The PE instruction set: one declarative table, [`for_each_op!`], expanded here into the
//! [`Op`] enum, its binary encoding, decoding and disassembly, and expanded again by the
//! simulator into its interpreter.
//!
//! # Machine model
//!
//! * Each call frame has its own file of 32-bit virtual registers ([`Reg`]); a function's
//!   header in the image says how many it needs. Arguments arrive in registers `r0..rN`.
//! * A register holds the bits of one scalar, zero-extended to 32 bits: an `i16` `-1` is
//!   `0x0000_ffff`. Every arithmetic op names its [`NumTy`] and re-normalises its result.
//!   Booleans are `0` or `1`.
//! * Memory is byte-addressed (CSL pointers hold byte addresses). [`Op::Load`] and
//!   [`Op::Store`] move 1, 2 or 4 bytes little-endian. Addresses at or above
//!   [`crate::fabric::mmio::BASE`] are memory-mapped registers.
//! * Branch targets and the program counter count instructions (not bytes) from the start
//!   of the program class's code.
//! * Integer arithmetic wraps (two's complement). Division by zero traps.
//! * Register–immediate forms ([`Op::BinImm`], [`Op::CmpImm`]) behave exactly like the
//!   register forms with the immediate's bits in the second operand register;
//!   [`Op::LoadOff`] and [`Op::StoreOff`] add a 16-bit offset to the address register
//!   modulo 2^16 (PE addresses are 16 bits), as a 16-bit `add` would. Every instruction
//!   takes one cycle except `copy` and synchronous DSD operations.
//!
//! # Encoding
//!
//! One opcode byte (the op's position in the table) followed by each field in table order,
//! little-endian, at its natural width.

pub use crate::dsd::{DsdField, DsdOpcode};
use std::fmt;

/// A virtual register of the current call frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Reg(pub u16);

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "r{}", self.0)
    }
}

/// The scalar type an arithmetic op works on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NumTy {
    /// `bool`, held as 0 or 1.
    Bool,
    /// `i8`.
    I8,
    /// `u8`.
    U8,
    /// `i16`.
    I16,
    /// `u16`.
    U16,
    /// `i32`.
    I32,
    /// `u32`.
    U32,
    /// IEEE binary16.
    F16,
    /// IEEE binary32.
    F32,
}

impl NumTy {
    /// Size in bytes when stored in memory.
    pub fn size(self) -> u32 {
        match self {
            NumTy::Bool | NumTy::I8 | NumTy::U8 => 1,
            NumTy::I16 | NumTy::U16 | NumTy::F16 => 2,
            NumTy::I32 | NumTy::U32 | NumTy::F32 => 4,
        }
    }

    /// Whether the type is a signed integer.
    pub fn is_signed(self) -> bool {
        matches!(self, NumTy::I8 | NumTy::I16 | NumTy::I32)
    }

    /// Whether the type is a float.
    pub fn is_float(self) -> bool {
        matches!(self, NumTy::F16 | NumTy::F32)
    }

    /// The memory access width for this type.
    pub fn width(self) -> Width {
        match self.size() {
            1 => Width::W8,
            2 => Width::W16,
            _ => Width::W32,
        }
    }

    /// The CSL spelling.
    pub fn name(self) -> &'static str {
        match self {
            NumTy::Bool => "bool",
            NumTy::I8 => "i8",
            NumTy::U8 => "u8",
            NumTy::I16 => "i16",
            NumTy::U16 => "u16",
            NumTy::I32 => "i32",
            NumTy::U32 => "u32",
            NumTy::F16 => "f16",
            NumTy::F32 => "f32",
        }
    }

    /// Every value, in encoding order.
    pub const ALL: [NumTy; 9] = [
        NumTy::Bool,
        NumTy::I8,
        NumTy::U8,
        NumTy::I16,
        NumTy::U16,
        NumTy::I32,
        NumTy::U32,
        NumTy::F16,
        NumTy::F32,
    ];
}

/// Memory access width.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Width {
    /// One byte.
    W8,
    /// Two bytes (one PE word).
    W16,
    /// Four bytes.
    W32,
}

impl Width {
    /// Bytes moved.
    pub fn bytes(self) -> u32 {
        match self {
            Width::W8 => 1,
            Width::W16 => 2,
            Width::W32 => 4,
        }
    }
    /// Every value, in encoding order.
    pub const ALL: [Width; 3] = [Width::W8, Width::W16, Width::W32];
}

/// Binary arithmetic and bitwise operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// Addition (wrapping for integers).
    Add,
    /// Subtraction (wrapping for integers).
    Sub,
    /// Multiplication (wrapping for integers).
    Mul,
    /// Division (truncating for integers; traps on integer division by zero).
    Div,
    /// Remainder with the sign of the dividend (integers only).
    Rem,
    /// Bitwise and.
    And,
    /// Bitwise or.
    Or,
    /// Bitwise xor.
    Xor,
    /// Shift left; the amount is taken modulo the bit width.
    Shl,
    /// Shift right: arithmetic for signed types, logical otherwise.
    Shr,
}

impl BinOp {
    /// Every value, in encoding order.
    pub const ALL: [BinOp; 10] = [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::Rem,
        BinOp::And,
        BinOp::Or,
        BinOp::Xor,
        BinOp::Shl,
        BinOp::Shr,
    ];
}

/// Comparison operators; the result is a `bool` (0 or 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CmpOp {
    /// Every value, in encoding order.
    pub const ALL: [CmpOp; 6] = [
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
    ];
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// Arithmetic negation.
    Neg,
    /// Bitwise complement (integers).
    Not,
    /// Logical not (`bool`).
    LNot,
}

impl UnOp {
    /// Every value, in encoding order.
    pub const ALL: [UnOp; 3] = [UnOp::Neg, UnOp::Not, UnOp::LNot];
}

/// The instruction table. Each entry is `snake_name = CamelName { field: Type, ... };`
/// with a doc comment. Invoke with the name of a macro that accepts the list.
#[macro_export]
macro_rules! for_each_op {
    ($m:ident) => {
        $m! {
            /// Does nothing for one cycle.
            nop = Nop {};
            /// `dst = imm` (32 raw bits).
            imm = Imm { dst: Reg, imm: u32 };
            /// `dst = src`.
            mov = Mov { dst: Reg, src: Reg };
            /// `dst = a <op> b` computed in type `ty`.
            bin = Bin { op: BinOp, ty: NumTy, dst: Reg, a: Reg, b: Reg };
            /// `dst = (a <op> b) ? 1 : 0`, comparing as type `ty`.
            cmp = Cmp { op: CmpOp, ty: NumTy, dst: Reg, a: Reg, b: Reg };
            /// `dst = <op> a` in type `ty`.
            un = Un { op: UnOp, ty: NumTy, dst: Reg, a: Reg };
            /// `dst = @as(to, src as from)`: float to int truncates toward zero and
            /// saturates; to `bool` is `!= 0`.
            conv = Conv { to: NumTy, from: NumTy, dst: Reg, src: Reg };
            /// `dst = zero-extended load of width w at byte address addr`.
            load = Load { w: Width, dst: Reg, addr: Reg };
            /// Store the low `w` bytes of `src` at byte address `addr`.
            store = Store { w: Width, addr: Reg, src: Reg };
            /// `dst = address of byte off of this call frame's stack area`.
            frame_addr = FrameAddr { dst: Reg, off: u16 };
            /// Continue at instruction `target`.
            jump = Jump { target: u32 };
            /// Continue at `target` if `cond != 0`.
            br_true = BrTrue { cond: Reg, target: u32 };
            /// Continue at `target` if `cond == 0`.
            br_false = BrFalse { cond: Reg, target: u32 };
            /// Call function `func` with arguments `args .. args+nargs`; the result (if
            /// any) lands in `dst`.
            call = Call { func: u32, args: Reg, nargs: u8, dst: Reg };
            /// Call the function whose index is in `fptr`.
            call_ind = CallInd { fptr: Reg, args: Reg, nargs: u8, dst: Reg };
            /// Return `src` to the caller.
            ret = Ret { src: Reg };
            /// Return without a value (also ends a task).
            ret_void = RetVoid {};
            /// Activate the task id held in `id`.
            activate = Activate { id: Reg };
            /// Block the task id held in `id`.
            block = Block { id: Reg };
            /// Unblock the task id held in `id`.
            unblock = Unblock { id: Reg };
            /// Stop the PE with a fault; `code` is a [`TrapCode`](crate::isa::TrapCode).
            trap = Trap { code: u16 };
            /// Run DSD operation `op` (see [`crate::dsd`]). `kinds` packs the operand kinds
            /// of `dst, a, b, c` ([`OperandKind`](crate::dsd::OperandKind)); `cfg` holds
            /// [`crate::dsd::cfg`] bits; `done` is the task id to activate or unblock on
            /// completion; `ut` the microthread of an async op; `idx` the `.index` register.
            dsd_op = DsdOp { op: DsdOpcode, kinds: u8, cfg: u8, done: u8, ut: u8, dst: Reg, a: Reg, b: Reg, c: Reg, idx: Reg };
            /// Change one field of the descriptor at byte address `desc` to/by `val`.
            dsd_set = DsdSet { field: DsdField, desc: Reg, val: Reg };
            /// Copy `bytes` bytes of memory from address `src` to address `dst`.
            copy = Copy { dst: Reg, src: Reg, bytes: u16 };
            /// `dst = a <op> imm`: [`Op::Bin`] with the raw bits `imm` as second operand.
            bin_imm = BinImm { op: BinOp, ty: NumTy, dst: Reg, a: Reg, imm: u32 };
            /// `dst = (a <op> imm) ? 1 : 0`: [`Op::Cmp`] with the raw bits `imm` as second
            /// operand.
            cmp_imm = CmpImm { op: CmpOp, ty: NumTy, dst: Reg, a: Reg, imm: u32 };
            /// [`Op::Load`] from byte address `(addr + off) mod 2^16`.
            load_off = LoadOff { w: Width, dst: Reg, addr: Reg, off: u16 };
            /// [`Op::Store`] to byte address `(addr + off) mod 2^16`.
            store_off = StoreOff { w: Width, addr: Reg, off: u16, src: Reg };
            /// `dst = src` converted from `from` to `to` rounding in [`RoundMode`] `mode`;
            /// float to integer saturates (NaN gives 0); float to the same float rounds to
            /// an integral value (Tungsten casts and `round(x, m)`).
            conv_r = ConvR { mode: u8, to: NumTy, from: NumTy, dst: Reg, src: Reg };
            /// Wait until none of the microthreads in bit mask `mask` is busy (the join at
            /// the end of a Tungsten `parallel` block). Takes one cycle once they are idle.
            ut_wait = UtWait { mask: u8 };
        }
    };
}

/// Rounding of [`Op::ConvR`] (the `mode` operand).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum RoundMode {
    /// To nearest, ties to even (the FP control word's default).
    NearestEven = 0,
    /// Toward zero (C's conversion; Tungsten `round(x, 1)`).
    TowardZero = 1,
    /// Toward negative infinity.
    Down = 2,
    /// Toward positive infinity.
    Up = 3,
}

impl RoundMode {
    /// Decodes a mode operand (only the low two bits count).
    pub fn from_u8(m: u8) -> RoundMode {
        match m & 3 {
            0 => RoundMode::NearestEven,
            1 => RoundMode::TowardZero,
            2 => RoundMode::Down,
            _ => RoundMode::Up,
        }
    }
}

/// Why a [`Op::Trap`] instruction stops the PE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[repr(u16)]
pub enum TrapCode {
    /// `@assert` failed.
    AssertFailed = 1,
    /// Control reached code the compiler proved unreachable (missing return).
    Unreachable = 2,
}

impl TrapCode {
    /// Decodes a trap code.
    pub fn from_u16(c: u16) -> Option<TrapCode> {
        match c {
            1 => Some(TrapCode::AssertFailed),
            2 => Some(TrapCode::Unreachable),
            _ => None,
        }
    }
}

/// A malformed instruction stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The stream ended inside an instruction.
    Truncated {
        /// Byte offset where the instruction started.
        offset: usize,
    },
    /// An opcode or operand byte has no meaning.
    BadByte {
        /// Byte offset of the bad byte.
        offset: usize,
        /// What was being decoded.
        what: &'static str,
        /// The byte.
        byte: u8,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Truncated { offset } => {
                write!(
                    f,
                    "instruction stream ends inside the instruction at byte {offset}"
                )
            }
            DecodeError::BadByte { offset, what, byte } => {
                write!(f, "invalid {what} 0x{byte:02x} at byte {offset}")
            }
        }
    }
}

impl std::error::Error for DecodeError {}

/// A cursor over encoded bytes.
pub struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    start: usize,
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Result<u8, DecodeError> {
        let b = *self
            .bytes
            .get(self.pos)
            .ok_or(DecodeError::Truncated { offset: self.start })?;
        self.pos += 1;
        Ok(b)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut out = [0u8; N];
        for b in &mut out {
            *b = self.byte()?;
        }
        Ok(out)
    }
    fn bad(&self, what: &'static str, byte: u8) -> DecodeError {
        DecodeError::BadByte {
            offset: self.pos.saturating_sub(1),
            what,
            byte,
        }
    }
}

/// A field type of the instruction table.
pub trait Operand: Sized + Copy {
    /// Appends the encoding.
    fn encode(self, out: &mut Vec<u8>);
    /// Reads one value.
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError>;
}

macro_rules! int_operand {
    ($($t:ty),*) => {$(
        impl Operand for $t {
            fn encode(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
                Ok(<$t>::from_le_bytes(r.array()?))
            }
        }
    )*};
}
int_operand!(u8, u16, u32, i16);

impl Operand for Reg {
    fn encode(self, out: &mut Vec<u8>) {
        self.0.encode(out)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Reg(u16::decode(r)?))
    }
}

macro_rules! enum_operand {
    ($($t:ident),*) => {$(
        impl Operand for $t {
            fn encode(self, out: &mut Vec<u8>) {
                let idx = $t::ALL.iter().position(|&x| x == self).unwrap_or(0);
                out.push(idx as u8);
            }
            fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
                let b = r.byte()?;
                $t::ALL.get(b as usize).copied().ok_or_else(|| r.bad(stringify!($t), b))
            }
        }
    )*};
}
enum_operand!(NumTy, Width, BinOp, CmpOp, UnOp, DsdField);

impl Operand for DsdOpcode {
    fn encode(self, out: &mut Vec<u8>) {
        out.push(self as u8);
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let b = r.byte()?;
        DsdOpcode::from_u8(b).ok_or_else(|| r.bad("DSD opcode", b))
    }
}

macro_rules! define_ops {
    ($( $(#[$attr:meta])* $snake:ident = $Name:ident { $($field:ident : $fty:ident),* } ;)*) => {
        /// One PE instruction. See the module documentation for the machine model.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Op {
            $( $(#[$attr])* $Name { $( #[allow(missing_docs)] $field: $fty ),* }, )*
        }

        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        #[repr(u8)]
        enum Opcode { $( $Name, )* }

        const OPCODES: &[Opcode] = &[ $( Opcode::$Name, )* ];

        impl Op {
            /// The mnemonic used by the disassembler.
            pub fn mnemonic(&self) -> &'static str {
                match self { $( Op::$Name { .. } => stringify!($snake), )* }
            }

            /// Appends the binary encoding of this instruction.
            pub fn encode(&self, out: &mut Vec<u8>) {
                match *self {
                    $( Op::$Name { $($field),* } => {
                        out.push(Opcode::$Name as u8);
                        $( Operand::encode($field, out); )*
                    } )*
                }
            }

            fn decode_one(r: &mut Reader<'_>) -> Result<Op, DecodeError> {
                let b = r.byte()?;
                let opcode = OPCODES.get(b as usize).ok_or_else(|| r.bad("opcode", b))?;
                match opcode {
                    $( Opcode::$Name => Ok(Op::$Name { $( $field: <$fty as Operand>::decode(r)? ),* }), )*
                }
            }
        }

        impl fmt::Display for Op {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self {
                    $( Op::$Name { $($field),* } => {
                        f.write_str(stringify!($snake))?;
                        let mut _first = true;
                        $(
                            f.write_str(if _first { " " } else { ", " })?;
                            _first = false;
                            write!(f, "{}={}", stringify!($field), DisasField(*$field))?;
                        )*
                        Ok(())
                    } )*
                }
            }
        }
    };
}

for_each_op!(define_ops);

/// Formats one operand for the disassembler.
struct DisasField<T>(T);

macro_rules! disas_debug {
    ($($t:ty),*) => {$(
        impl fmt::Display for DisasField<$t> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{:?}", self.0)
            }
        }
    )*};
}
disas_debug!(u8, u16, i16, Width, BinOp, CmpOp, UnOp, DsdField);

impl fmt::Display for DisasField<DsdOpcode> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name())
    }
}

impl fmt::Display for DisasField<u32> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 > 0xffff {
            write!(f, "0x{:08x}", self.0)
        } else {
            write!(f, "{}", self.0)
        }
    }
}
impl fmt::Display for DisasField<Reg> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}
impl fmt::Display for DisasField<NumTy> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name())
    }
}

/// Encodes a sequence of instructions.
pub fn encode_all(ops: &[Op]) -> Vec<u8> {
    let mut out = Vec::with_capacity(ops.len() * 8);
    for op in ops {
        op.encode(&mut out);
    }
    out
}

/// Decodes a whole instruction stream.
pub fn decode_all(bytes: &[u8]) -> Result<Vec<Op>, DecodeError> {
    let mut r = Reader {
        bytes,
        pos: 0,
        start: 0,
    };
    let mut ops = Vec::new();
    while r.pos < bytes.len() {
        r.start = r.pos;
        ops.push(Op::decode_one(&mut r)?);
    }
    Ok(ops)
}

/// Disassembles a decoded stream, one numbered instruction per line.
pub fn disassemble(ops: &[Op]) -> String {
    let mut s = String::new();
    for (i, op) in ops.iter().enumerate() {
        s.push_str(&format!("{i:5}: {op}\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reg() -> impl Strategy<Value = Reg> {
        any::<u16>().prop_map(Reg)
    }
    fn numty() -> impl Strategy<Value = NumTy> {
        prop::sample::select(NumTy::ALL.to_vec())
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            Just(Op::Nop {}),
            (reg(), any::<u32>()).prop_map(|(dst, imm)| Op::Imm { dst, imm }),
            (
                prop::sample::select(BinOp::ALL.to_vec()),
                numty(),
                reg(),
                reg(),
                reg()
            )
                .prop_map(|(op, ty, dst, a, b)| Op::Bin { op, ty, dst, a, b }),
            (
                prop::sample::select(CmpOp::ALL.to_vec()),
                numty(),
                reg(),
                reg(),
                reg()
            )
                .prop_map(|(op, ty, dst, a, b)| Op::Cmp { op, ty, dst, a, b }),
            (numty(), numty(), reg(), reg()).prop_map(|(to, from, dst, src)| Op::Conv {
                to,
                from,
                dst,
                src
            }),
            (0..4u8, numty(), numty(), reg(), reg()).prop_map(|(mode, to, from, dst, src)| {
                Op::ConvR {
                    mode,
                    to,
                    from,
                    dst,
                    src,
                }
            }),
            any::<u8>().prop_map(|mask| Op::UtWait { mask }),
            (any::<u32>(), reg(), any::<u8>(), reg()).prop_map(|(func, args, nargs, dst)| {
                Op::Call {
                    func,
                    args,
                    nargs,
                    dst,
                }
            }),
            (reg(), any::<u32>()).prop_map(|(cond, target)| Op::BrFalse { cond, target }),
            (
                prop::sample::select(BinOp::ALL.to_vec()),
                numty(),
                reg(),
                reg(),
                any::<u32>()
            )
                .prop_map(|(op, ty, dst, a, imm)| Op::BinImm {
                    op,
                    ty,
                    dst,
                    a,
                    imm
                }),
            (reg(), reg(), any::<u16>(), any::<u16>()).prop_map(|(addr, src, off, _)| {
                Op::StoreOff {
                    w: Width::W16,
                    addr,
                    off,
                    src,
                }
            }),
            any::<u16>().prop_map(|code| Op::Trap { code }),
        ]
    }

    proptest! {
        #[test]
        fn encode_decode_round_trip(ops in prop::collection::vec(op(), 0..40)) {
            let bytes = encode_all(&ops);
            prop_assert_eq!(decode_all(&bytes), Ok(ops));
        }

        #[test]
        fn decoding_garbage_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode_all(&bytes);
        }
    }

    #[test]
    fn disassembly_is_readable() {
        let ops = [
            Op::Imm {
                dst: Reg(0),
                imm: 7,
            },
            Op::Bin {
                op: BinOp::Add,
                ty: NumTy::I16,
                dst: Reg(1),
                a: Reg(0),
                b: Reg(0),
            },
            Op::RetVoid {},
        ];
        assert_eq!(
            disassemble(&ops),
            "    0: imm dst=r0, imm=7\n    1: bin op=Add, ty=i16, dst=r1, a=r0, b=r0\n    2: ret_void\n"
        );
    }
}
