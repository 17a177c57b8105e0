//! Data structure descriptors (DSDs) as the PE sees them: the in-memory descriptor layout
//! that `dsd_op` instructions read, the DSD operation table with each operation's element
//! types, and the encodings of operand kinds and completion flags.
//!
//! # Descriptor layout ([`DESC_BYTES`] bytes, little-endian, 2-byte aligned)
//!
//! | offset | field | meaning |
//! |---|---|---|
//! | 0 | kind (u8) | [`DsdKind`] |
//! | 1 | flags (u8) | [`flags`] bits |
//! | 2 | queue (u8) | fabric DSDs: input/output queue id |
//! | 3 | color (u8) | fabric DSDs: colour id |
//! | 4 | base (u16) | memory DSDs and FIFOs: byte address of element 0 |
//! | 6 | length (u16) | mem1d / fabric: number of elements (wavelets); FIFO: capacity in elements; `0x7fff` = unbounded |
//! | 8 | stride (i16) | mem1d: element stride |
//! | 10 | ndims (u8) | mem4d: number of dimensions (1..=4) |
//! | 11 | elem (u8) | FIFO: element size in bytes (2 or 4) |
//! | 12 | extents ([u16; 4]) | mem4d: extents, **innermost first** |
//! | 20 | strides ([i16; 4]) | mem4d: element strides, innermost first; stride `d` is applied when dimension `d` advances (inner dimensions having wrapped) |
//! | 28 | fifo read (u16) | FIFO: index of the next element to pop |
//! | 30 | fifo count (u16) | FIFO: number of elements held |
//!
//! Task ids a FIFO activates on push/pop are bytes 12 (`activate_push`) and 13
//! (`activate_pop`), `0xff` meaning none. A FIFO's read and write lengths
//! (`@set_fifo_read_length` / `@set_fifo_write_length`, 0 at start) are the u16s at bytes
//! 16 ([`field::FIFO_READ_LEN`]) and 18 ([`field::FIFO_WRITE_LEN`]). Offsets are folded into `base` by the compiler;
//! units of `stride`/`strides` are elements of the operation's element type.

use std::fmt;

/// Bytes of one descriptor in PE memory.
pub const DESC_BYTES: u32 = 32;

/// Field offsets within a descriptor.
#[allow(missing_docs)]
pub mod field {
    pub const KIND: u32 = 0;
    pub const FLAGS: u32 = 1;
    pub const QUEUE: u32 = 2;
    pub const COLOR: u32 = 3;
    pub const BASE: u32 = 4;
    pub const LENGTH: u32 = 6;
    pub const STRIDE: u32 = 8;
    pub const NDIMS: u32 = 10;
    pub const ELEM: u32 = 11;
    pub const EXTENTS: u32 = 12;
    pub const STRIDES: u32 = 20;
    pub const FIFO_READ: u32 = 28;
    pub const FIFO_COUNT: u32 = 30;
    pub const FIFO_ACTIVATE_PUSH: u32 = 12;
    pub const FIFO_ACTIVATE_POP: u32 = 13;
    pub const FIFO_READ_LEN: u32 = 16;
    pub const FIFO_WRITE_LEN: u32 = 18;
    /// Fabout only: [`fab_zero`] bits (shares its byte with `EXTENTS`, unused by fabric
    /// descriptors).
    pub const FAB_ZERO: u32 = 12;
}

/// Bits of the fabout [`field::FAB_ZERO`] byte (`.zero = .{ .first_source = true }`):
/// which memory sources of the operation are cleared, element by element, once read.
pub mod fab_zero {
    /// Clear the operation's first source.
    pub const FIRST: u8 = 1;
    /// Clear the operation's second source.
    pub const SECOND: u8 = 2;
}

/// A length meaning "no limit" (streams that never end).
pub const UNBOUNDED_LENGTH: u16 = 0x7fff;

/// Descriptor flag bits (byte 1).
pub mod flags {
    /// Memory DSD: add the op's `.index` (in 16-bit words) to the base; fabout: put the
    /// op's `.index` in the high 16 bits of every wavelet.
    pub const WAVELET_INDEX_OFFSET: u8 = 1;
    /// Fabout: send control wavelets.
    pub const CONTROL: u8 = 2;
    /// Fabout: advance the colour's switch after the last wavelet.
    pub const ADVANCE_SWITCH: u8 = 4;
    /// 16-bit data packed two per wavelet, one wavelet per step (`simd_32`). With
    /// [`SIMD_64`] as well: `simd_32_or_64`.
    pub const SIMD_32: u8 = 8;
    /// 16-bit data packed two per wavelet, two wavelets per step (`simd_64`).
    pub const SIMD_64: u8 = 16;
    /// Both SIMD bits: the descriptor's SIMD mode (0 = none).
    pub const SIMD_MASK: u8 = SIMD_32 | SIMD_64;
    /// Control wavelets are converted to/from marked data (`control_transform`): see
    /// [`super::CONTROL_TRANSFORM_MARK`].
    pub const CONTROL_TRANSFORM: u8 = 32;
    /// Memory DSD (mem1d): when an operation completes, the descriptor's base moves past
    /// the elements it processed (`@load_to_dsr(..., .{ .save_address = true })`).
    pub const SAVE_ADDRESS: u8 = 64;
}

/// `control_transform`: the two most significant payload bits (the top of the 16-bit
/// index) of a control wavelet that a `fabin` with [`flags::CONTROL_TRANSFORM`] takes as
/// data are set to this pattern; a `fabout` with the flag sends a word carrying it as a
/// control wavelet, with those bits cleared.
pub const CONTROL_TRANSFORM_MARK: u32 = 0xc000_0000;

/// What a descriptor describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum DsdKind {
    /// A strided vector in memory.
    Mem1d = 0,
    /// Up to four nested dimensions in memory.
    Mem4d = 1,
    /// Wavelets arriving on a colour / input queue.
    FabIn = 2,
    /// Wavelets sent on a colour / output queue.
    FabOut = 3,
    /// A ring buffer in memory.
    Fifo = 4,
}

impl DsdKind {
    /// Decodes byte 0 of a descriptor.
    pub fn from_u8(b: u8) -> Option<DsdKind> {
        Some(match b {
            0 => DsdKind::Mem1d,
            1 => DsdKind::Mem4d,
            2 => DsdKind::FabIn,
            3 => DsdKind::FabOut,
            4 => DsdKind::Fifo,
            _ => return None,
        })
    }
}

/// How an operand register of a `dsd_op` is to be read (2 bits per operand).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum OperandKind {
    /// No operand.
    None = 0,
    /// The register holds the byte address of a descriptor.
    Desc = 1,
    /// The register holds a scalar value (broadcast to every element).
    Scalar = 2,
    /// The register holds the byte address of one scalar (`*p` forms): as a destination
    /// every element overwrites it; as the first source it accumulates (reductions).
    Ptr = 3,
}

impl OperandKind {
    /// Packs four operand kinds (dst, src0, src1, src2) into one byte.
    pub fn pack(k: [OperandKind; 4]) -> u8 {
        k.iter()
            .enumerate()
            .fold(0, |acc, (i, k)| acc | ((*k as u8) << (2 * i)))
    }

    /// Unpacks four operand kinds.
    pub fn unpack(b: u8) -> [OperandKind; 4] {
        let one = |v: u8| match v & 3 {
            1 => OperandKind::Desc,
            2 => OperandKind::Scalar,
            3 => OperandKind::Ptr,
            _ => OperandKind::None,
        };
        [one(b), one(b >> 2), one(b >> 4), one(b >> 6)]
    }
}

/// Completion and behaviour bits of a `dsd_op` (its `cfg` operand).
pub mod cfg {
    /// Run on a microthread; the issuing task continues at once.
    pub const ASYNC: u8 = 1;
    /// On completion, activate task id `done`.
    pub const ON_DONE_ACTIVATE: u8 = 2;
    /// On completion, unblock task id `done`.
    pub const ON_DONE_UNBLOCK: u8 = 4;
    /// A control wavelet arriving on the fabric input ends the op early.
    pub const ON_CONTROL_TERMINATE: u8 = 8;
    /// The op has an `.index` (in the `idx` register).
    pub const HAS_INDEX: u8 = 16;
    /// WSE-2 priority bits (0 low, 1 medium, 2 high) in bits 5..=6.
    pub const PRIORITY_SHIFT: u8 = 5;
}

/// Element type of one side of a DSD operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    /// 16-bit integer (bit pattern; signedness per operation).
    I16,
    /// 32-bit word.
    W32,
    /// IEEE half.
    F16,
    /// IEEE single.
    F32,
}

impl Elem {
    /// Bytes per element in memory.
    pub fn bytes(self) -> u32 {
        match self {
            Elem::I16 | Elem::F16 => 2,
            Elem::W32 | Elem::F32 => 4,
        }
    }
}

macro_rules! dsd_ops {
    ($( $(#[$doc:meta])* $name:ident = $csl:literal : $dst:ident <- [$($src:ident),*] ;)*) => {
        /// Every DSD operation (the `@name` builtins that take DSD operands).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum DsdOpcode { $( $(#[$doc])* $name, )* }

        const ALL_DSD_OPS: &[DsdOpcode] = &[ $( DsdOpcode::$name, )* ];

        impl DsdOpcode {
            /// The builtin's name without `@`.
            pub fn name(self) -> &'static str {
                match self { $( DsdOpcode::$name => $csl, )* }
            }
            /// Element type of the destination.
            pub fn dst_elem(self) -> Elem {
                match self { $( DsdOpcode::$name => Elem::$dst, )* }
            }
            /// Element types of the sources, in order.
            pub fn src_elems(self) -> &'static [Elem] {
                match self { $( DsdOpcode::$name => &[$(Elem::$src),*], )* }
            }
        }
    };
}

dsd_ops! {
    /// `d = a + b` (16-bit, wrapping).
    Add16 = "add16": I16 <- [I16, I16];
    /// `d = a + b + carry` (16-bit).
    Addc16 = "addc16": I16 <- [I16, I16];
    /// `d = a - b` (16-bit, wrapping).
    Sub16 = "sub16": I16 <- [I16, I16];
    /// `d = a & b`.
    And16 = "and16": I16 <- [I16, I16];
    /// `d = a | b`.
    Or16 = "or16": I16 <- [I16, I16];
    /// `d = a ^ b`.
    Xor16 = "xor16": I16 <- [I16, I16];
    /// `d = a << b`.
    Sll16 = "sll16": I16 <- [I16, I16];
    /// `d = a >> b` (logical).
    Slr16 = "slr16": I16 <- [I16, I16];
    /// `d = a >> b` (arithmetic).
    Sar16 = "sar16": I16 <- [I16, I16];
    /// Count leading zeros of a 16-bit value.
    Clz = "clz": I16 <- [I16];
    /// Count trailing zeros of a 16-bit value.
    Ctz = "ctz": I16 <- [I16];
    /// Count set bits of a 16-bit value.
    Popcnt = "popcnt": I16 <- [I16];
    /// 16-bit move.
    Mov16 = "mov16": I16 <- [I16];
    /// 32-bit move.
    Mov32 = "mov32": W32 <- [W32];
    /// f16 move.
    Fmovh = "fmovh": F16 <- [F16];
    /// f32 move.
    Fmovs = "fmovs": F32 <- [F32];
    /// f16 absolute value.
    Fabsh = "fabsh": F16 <- [F16];
    /// f32 absolute value.
    Fabss = "fabss": F32 <- [F32];
    /// f16 negation.
    Fnegh = "fnegh": F16 <- [F16];
    /// f32 negation.
    Fnegs = "fnegs": F32 <- [F32];
    /// f16 `a + b`.
    Faddh = "faddh": F16 <- [F16, F16];
    /// f32 `a + b`.
    Fadds = "fadds": F32 <- [F32, F32];
    /// f32 result of f16 `a + b`.
    Faddhs = "faddhs": F32 <- [F16, F16];
    /// f16 `a - b`.
    Fsubh = "fsubh": F16 <- [F16, F16];
    /// f32 `a - b`.
    Fsubs = "fsubs": F32 <- [F32, F32];
    /// f16 `a * b`.
    Fmulh = "fmulh": F16 <- [F16, F16];
    /// f32 `a * b`.
    Fmuls = "fmuls": F32 <- [F32, F32];
    /// f16 `max(a, b)`.
    Fmaxh = "fmaxh": F16 <- [F16, F16];
    /// f32 `max(a, b)`.
    Fmaxs = "fmaxs": F32 <- [F32, F32];
    /// f16 `a + b * x` (x scalar), fused.
    Fmach = "fmach": F16 <- [F16, F16, F16];
    /// f32 `a + b * x` (x scalar).
    Fmacs = "fmacs": F32 <- [F32, F32, F32];
    /// f32 `a + b * x` with f16 `b` and `x`.
    Fmachs = "fmachs": F32 <- [F32, F16, F16];
    /// f16 to f32.
    Fh2s = "fh2s": F32 <- [F16];
    /// f32 to f16.
    Fs2h = "fs2h": F16 <- [F32];
    /// f16 to 16-bit integer.
    Fh2xp16 = "fh2xp16": I16 <- [F16];
    /// f32 to 16-bit integer.
    Fs2xp16 = "fs2xp16": I16 <- [F32];
    /// 16-bit integer to f16.
    Xp162fh = "xp162fh": F16 <- [I16];
    /// 16-bit integer to f32.
    Xp162fs = "xp162fs": F32 <- [I16];
    /// Normalise an f16 (`*p` destination).
    Fnormh = "fnormh": F16 <- [F16];
    /// Normalise an f32 (`*p` destination).
    Fnorms = "fnorms": F32 <- [F32];
    /// Scale an f16 by a power of two (`*p` destination).
    Fscaleh = "fscaleh": F16 <- [F16, I16];
    /// Scale an f32 by a power of two (`*p` destination).
    Fscales = "fscales": F32 <- [F32, I16];
    /// `@dfilt`: drop the data wavelets arriving on the fabric input (the only operand, as
    /// source 0; no destination) until `length` control wavelets have passed it.
    Dfilt = "dfilt": W32 <- [W32];
}

impl DsdOpcode {
    /// Looks up an operation by its builtin name.
    pub fn from_name(name: &str) -> Option<DsdOpcode> {
        ALL_DSD_OPS.iter().copied().find(|o| o.name() == name)
    }

    /// Every operation.
    pub fn all() -> &'static [DsdOpcode] {
        ALL_DSD_OPS
    }

    /// Decodes an opcode byte.
    pub fn from_u8(b: u8) -> Option<DsdOpcode> {
        ALL_DSD_OPS.get(b as usize).copied()
    }
}

impl fmt::Display for DsdOpcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which field a `dsd_set` instruction changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum DsdField {
    /// Replace the base address (`@set_dsd_base_addr`).
    Base = 0,
    /// Add a byte offset to the base (`@increment_dsd_offset`).
    AddBase = 1,
    /// Replace the length (`@set_dsd_length`).
    Length = 2,
    /// Replace the stride (`@set_dsd_stride`).
    Stride = 3,
    /// FIFO: set the number of elements readable (`@set_fifo_read_length`).
    FifoRead = 4,
    /// FIFO: set the number of elements writable (`@set_fifo_write_length`).
    FifoWrite = 5,
}

impl DsdField {
    /// Every field, in encoding order.
    pub const ALL: [DsdField; 6] = [
        DsdField::Base,
        DsdField::AddBase,
        DsdField::Length,
        DsdField::Stride,
        DsdField::FifoRead,
        DsdField::FifoWrite,
    ];
}

/// A descriptor's fields as they are laid out in memory, for writing one: the compiler's
/// comptime descriptors and the simulator tests' hand-assembled ones both go through
/// [`Desc::encode`]. Fields the kind does not use stay zero ([`Default`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Desc {
    /// What it describes.
    pub kind: DsdKind,
    /// [`flags`] bits.
    pub flags: u8,
    /// Fabric: input/output queue id.
    pub queue: u8,
    /// Fabric: colour id.
    pub color: u8,
    /// Memory and FIFO: byte address of element 0.
    pub base: u16,
    /// mem1d / fabric length; FIFO capacity.
    pub length: u16,
    /// mem1d stride in elements.
    pub stride: i16,
    /// mem4d: number of dimensions.
    pub ndims: u8,
    /// Element size in bytes.
    pub elem: u8,
    /// mem4d extents, innermost first.
    pub extents: [u16; 4],
    /// mem4d strides in elements, innermost first.
    pub strides: [i16; 4],
    /// FIFO only: task ids activated on push / pop (`0xff`: none).
    pub fifo_tasks: (u8, u8),
    /// Fabout only: [`fab_zero`] bits.
    pub zero: u8,
}

impl Default for Desc {
    fn default() -> Desc {
        Desc {
            kind: DsdKind::Mem1d,
            flags: 0,
            queue: 0,
            color: 0,
            base: 0,
            length: 0,
            stride: 0,
            ndims: 0,
            elem: 0,
            extents: [0; 4],
            strides: [0; 4],
            fifo_tasks: (0, 0),
            zero: 0,
        }
    }
}

impl Desc {
    /// The descriptor's [`DESC_BYTES`] bytes (see the layout in the module documentation).
    pub fn encode(&self) -> [u8; DESC_BYTES as usize] {
        let mut b = [0u8; DESC_BYTES as usize];
        let mut put16 = |at: u32, v: u16| {
            let at = at as usize;
            b[at..at + 2].copy_from_slice(&v.to_le_bytes());
        };
        put16(field::BASE, self.base);
        put16(field::LENGTH, self.length);
        put16(field::STRIDE, self.stride as u16);
        for i in 0..4 {
            put16(field::EXTENTS + 2 * i as u32, self.extents[i]);
            put16(field::STRIDES + 2 * i as u32, self.strides[i] as u16);
        }
        b[field::KIND as usize] = self.kind as u8;
        b[field::FLAGS as usize] = self.flags;
        b[field::QUEUE as usize] = self.queue;
        b[field::COLOR as usize] = self.color;
        b[field::NDIMS as usize] = self.ndims;
        b[field::ELEM as usize] = self.elem;
        if self.kind == DsdKind::Fifo {
            b[field::FIFO_ACTIVATE_PUSH as usize] = self.fifo_tasks.0;
            b[field::FIFO_ACTIVATE_POP as usize] = self.fifo_tasks.1;
        }
        if self.kind == DsdKind::FabOut {
            b[field::FAB_ZERO as usize] = self.zero;
        }
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operand_kinds_round_trip() {
        let k = [
            OperandKind::Desc,
            OperandKind::Scalar,
            OperandKind::Ptr,
            OperandKind::None,
        ];
        assert_eq!(OperandKind::unpack(OperandKind::pack(k)), k);
    }

    #[test]
    fn op_table_lookup() {
        assert_eq!(DsdOpcode::from_name("fmacs"), Some(DsdOpcode::Fmacs));
        assert_eq!(
            DsdOpcode::Fmacs.src_elems(),
            &[Elem::F32, Elem::F32, Elem::F32]
        );
        for (i, op) in DsdOpcode::all().iter().enumerate() {
            assert_eq!(DsdOpcode::from_u8(i as u8), Some(*op));
        }
    }
}
