//! The middle-end IR: one [`Program`] per distinct PE program (program class).
//!
//! The IR knows nothing of CSL syntax: functions of basic blocks over virtual registers,
//! globals as byte images with relocations, task bindings and host exports. A second front
//! end can lower into it directly.
//!
//! Invariants (checked by construction in `sema::lower`): every block ends in a real
//! terminator; every [`VReg`] is below its function's `nregs`; call arguments match the
//! callee's parameter count.

use crate::source::Span;
use cranelift_entity::{PrimaryMap, entity_impl};
use csl_arch::image::TaskKind;
use csl_arch::isa::{BinOp, CmpOp, NumTy, RoundMode, TrapCode, UnOp, Width};

/// A virtual register of one function.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VReg(u32);
entity_impl!(VReg, "v");

/// A basic block of one function.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockId(u32);
entity_impl!(BlockId, "blk");

/// A function (or task body) of a program.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FuncId(u32);
entity_impl!(FuncId, "fn");

/// A global variable of a program.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GlobalId(u32);
entity_impl!(GlobalId, "g");

/// One compiled PE program.
#[derive(Default)]
pub struct Program {
    /// Functions and task bodies.
    pub functions: PrimaryMap<FuncId, Function>,
    /// Globals placed in PE memory.
    pub globals: PrimaryMap<GlobalId, Global>,
    /// Task-id bindings.
    pub tasks: Vec<TaskBind>,
    /// Task ids active at start.
    pub initially_active: u64,
    /// Task ids blocked at start.
    pub initially_blocked: u64,
    /// Symbols exported to the host.
    pub symbols: Vec<ExportedSymbol>,
    /// Input queues bound to colours.
    pub input_queues: Vec<csl_arch::image::QueueBinding>,
    /// Output queues bound to colours.
    pub output_queues: Vec<csl_arch::image::QueueBinding>,
    /// Colour configurations set by the program itself (`@set_local_color_config`), with
    /// where each was written.
    pub local_routes: Vec<(csl_arch::image::ColorConfig, Span)>,
    /// Bit `c` set: a fabric input DSD of the program names colour `c` (`fabric_color`).
    /// The static route checks ([`crate::fabric_check`]) count it as reading the colour.
    pub fabric_in: u32,
    /// Bit `c` set: a fabric output DSD of the program names colour `c`.
    pub fabric_out: u32,
}

/// A task bound to an id.
pub struct TaskBind {
    /// Task id.
    pub id: u8,
    /// Kind.
    pub kind: TaskKind,
    /// Body.
    pub func: FuncId,
    /// How the wavelet becomes arguments.
    pub args: csl_arch::image::WaveletArgs,
    /// Where it was bound.
    pub span: Span,
}

/// A host-visible symbol.
pub struct ExportedSymbol {
    /// Host name.
    pub name: String,
    /// What it names.
    pub target: ExportTarget,
}

/// What an exported symbol names.
#[derive(Clone, Copy)]
pub enum ExportTarget {
    /// A pointer variable.
    Global(GlobalId),
    /// A function.
    Func(FuncId),
}

/// A global's storage and initial bytes.
pub struct Global {
    /// Qualified name.
    pub name: String,
    /// Size in bytes.
    pub size: u32,
    /// Alignment in bytes.
    pub align: u32,
    /// Initial bytes (`size` long).
    pub init: Vec<u8>,
    /// 16-bit little-endian pointer fields to patch with another global's address.
    pub relocs: Vec<Reloc>,
    /// Declaration.
    pub span: Span,
    /// Where it goes in memory.
    pub place: GlobalPlace,
}

/// Where a global is placed in PE memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GlobalPlace {
    /// Wherever code generation puts it (creation order, clear of fixed globals).
    #[default]
    Auto,
    /// At this byte address (Tungsten `address(0x7C46)`: registers and pinned arrays).
    /// At or above [`csl_arch::fabric::mmio::BASE`] it names registers and takes no
    /// memory; it must then have no initial bytes.
    At(u32),
    /// `offset` bytes after the start of an earlier global (Tungsten `address(&g + k)`):
    /// an alias of, or a neighbour of, that storage.
    After {
        /// The global it is placed relative to (created before this one).
        base: GlobalId,
        /// Byte offset from `base`'s address.
        offset: u32,
    },
}

/// A pointer stored in a global's initial bytes.
pub struct Reloc {
    /// Byte offset within the global.
    pub offset: u32,
    /// The global pointed to.
    pub target: GlobalId,
    /// Bytes added to the target's address.
    pub addend: u32,
}

/// A function body. (`Hash` and `Eq` compare every field: the optimiser's memo,
/// `opt::Memo`, reuses the result for an identical body.)
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Function {
    /// Qualified name (for traces and faults).
    pub name: String,
    /// Parameter count (parameters arrive in the first registers).
    pub nparams: u32,
    /// Registers used.
    pub nregs: u32,
    /// Stack bytes for local aggregates.
    pub frame_bytes: u32,
    /// Blocks; the first is the entry.
    pub blocks: PrimaryMap<BlockId, Block>,
    /// Declaration.
    pub span: Span,
}

/// A basic block.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Block {
    /// Straight-line instructions.
    pub insts: Vec<Inst>,
    /// How it ends.
    pub term: Term,
}

/// A straight-line instruction.
#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Inst {
    Imm {
        dst: VReg,
        imm: u32,
    },
    Mov {
        dst: VReg,
        src: VReg,
    },
    Bin {
        op: BinOp,
        ty: NumTy,
        dst: VReg,
        a: VReg,
        b: VReg,
    },
    Cmp {
        op: CmpOp,
        ty: NumTy,
        dst: VReg,
        a: VReg,
        b: VReg,
    },
    Un {
        op: UnOp,
        ty: NumTy,
        dst: VReg,
        a: VReg,
    },
    Conv {
        to: NumTy,
        from: NumTy,
        dst: VReg,
        src: VReg,
    },
    /// [`Inst::Conv`] rounding float sources in `mode` (see `csl_arch::isa::Op::ConvR`).
    ConvR {
        mode: RoundMode,
        to: NumTy,
        from: NumTy,
        dst: VReg,
        src: VReg,
    },
    /// Wait until the microthreads in `mask` are idle (the join of a `parallel` block).
    UtWait {
        mask: u8,
    },
    /// `dst = a <op> imm` (selected by the optimiser; `imm` holds raw register bits).
    BinImm {
        op: BinOp,
        ty: NumTy,
        dst: VReg,
        a: VReg,
        imm: ImmVal,
    },
    /// `dst = a <op> imm` as a comparison (selected by the optimiser).
    CmpImm {
        op: CmpOp,
        ty: NumTy,
        dst: VReg,
        a: VReg,
        imm: ImmVal,
    },
    Load {
        w: Width,
        dst: VReg,
        addr: VReg,
    },
    /// Load from `(addr + off) mod 2^16` (selected by the optimiser).
    LoadOff {
        w: Width,
        dst: VReg,
        addr: VReg,
        off: ImmVal,
    },
    /// Store to `(addr + off) mod 2^16` (selected by the optimiser).
    StoreOff {
        w: Width,
        addr: VReg,
        off: ImmVal,
        src: VReg,
    },
    Store {
        w: Width,
        addr: VReg,
        src: VReg,
    },
    /// Address of `off` bytes into this frame's stack area.
    FrameAddr {
        dst: VReg,
        off: u32,
    },
    /// Address of a global plus `offset`.
    GlobalAddr {
        dst: VReg,
        global: GlobalId,
        offset: u32,
    },
    /// Index of a function (a function pointer).
    FuncAddr {
        dst: VReg,
        func: FuncId,
    },
    Call {
        func: FuncId,
        args: Vec<VReg>,
        dst: Option<VReg>,
    },
    CallInd {
        fptr: VReg,
        args: Vec<VReg>,
        dst: Option<VReg>,
    },
    Activate {
        id: VReg,
    },
    Block {
        id: VReg,
    },
    Unblock {
        id: VReg,
    },
    Trap {
        code: TrapCode,
    },
    /// Copy `bytes` bytes from address `src` to address `dst`.
    Copy {
        dst: VReg,
        src: VReg,
        bytes: u16,
    },
    /// A DSD operation (see [`csl_arch::dsd`]); `operands` are (kind, register) for dst,
    /// src0, src1, src2.
    DsdOp {
        op: csl_arch::dsd::DsdOpcode,
        operands: [(csl_arch::dsd::OperandKind, Option<VReg>); 4],
        cfg: u8,
        done: u8,
        /// A task whose bound id replaces `done` when the program is finished.
        done_task: Option<FuncId>,
        ut: u8,
        idx: Option<VReg>,
    },
    /// Change a field of the descriptor at address `desc`.
    DsdSet {
        field: csl_arch::dsd::DsdField,
        desc: VReg,
        val: VReg,
    },
    /// A source position marker: the instructions after it (until the next marker) come
    /// from the statement at `span`. It reads and writes nothing and compiles to no
    /// instruction; code generation turns it into a row of the class's line table
    /// ([`csl_arch::lines`]). Passes that count or look for instructions skip markers
    /// ([`Inst::is_marker`]), so they never change the code that is generated.
    Loc {
        span: Span,
    },
}

/// An immediate operand whose value may only be known once globals are placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ImmVal {
    /// Raw register bits.
    Const(u32),
    /// The address of a global plus an offset (wrapping), as [`Inst::GlobalAddr`] gives.
    Global(GlobalId, u32),
}

/// Matches an instruction by the register it writes: `$dst => $always` for those that
/// always write one (bound to `$dst`), `$opt => $call` for calls (`$opt` is the optional
/// destination), and `None` for those that write none. Exhaustive, so a new instruction
/// must say which it is; shared by [`Inst::def`] and [`Inst::def_mut`].
macro_rules! match_def {
    ($inst:expr, $dst:ident => $always:expr, $opt:ident => $call:expr) => {
        match $inst {
            Inst::Imm { dst: $dst, .. }
            | Inst::Mov { dst: $dst, .. }
            | Inst::Bin { dst: $dst, .. }
            | Inst::BinImm { dst: $dst, .. }
            | Inst::Cmp { dst: $dst, .. }
            | Inst::CmpImm { dst: $dst, .. }
            | Inst::Un { dst: $dst, .. }
            | Inst::Conv { dst: $dst, .. }
            | Inst::ConvR { dst: $dst, .. }
            | Inst::Load { dst: $dst, .. }
            | Inst::LoadOff { dst: $dst, .. }
            | Inst::FrameAddr { dst: $dst, .. }
            | Inst::GlobalAddr { dst: $dst, .. }
            | Inst::FuncAddr { dst: $dst, .. } => $always,
            Inst::Call { dst: $opt, .. } | Inst::CallInd { dst: $opt, .. } => $call,
            Inst::Store { .. }
            | Inst::StoreOff { .. }
            | Inst::Activate { .. }
            | Inst::Block { .. }
            | Inst::Unblock { .. }
            | Inst::Trap { .. }
            | Inst::UtWait { .. }
            | Inst::Copy { .. }
            | Inst::DsdOp { .. }
            | Inst::DsdSet { .. }
            | Inst::Loc { .. } => None,
        }
    };
}

impl Inst {
    /// Whether this is a [`Inst::Loc`] marker, which generates no code.
    pub fn is_marker(&self) -> bool {
        matches!(self, Inst::Loc { .. })
    }

    /// The register the instruction writes, if any.
    pub fn def(&self) -> Option<VReg> {
        match_def!(self, d => Some(*d), d => *d)
    }

    /// The register the instruction writes, to rewrite.
    pub fn def_mut(&mut self) -> Option<&mut VReg> {
        match_def!(self, d => Some(d), d => d.as_mut())
    }

    /// Calls `f` on every register the instruction reads (it may rewrite them).
    pub fn uses_mut(&mut self, mut f: impl FnMut(&mut VReg)) {
        match self {
            Inst::Imm { .. }
            | Inst::FrameAddr { .. }
            | Inst::GlobalAddr { .. }
            | Inst::FuncAddr { .. }
            | Inst::Trap { .. }
            | Inst::UtWait { .. }
            | Inst::Loc { .. } => {}
            Inst::Mov { src, .. } | Inst::Conv { src, .. } | Inst::ConvR { src, .. } => f(src),
            Inst::Bin { a, b, .. } | Inst::Cmp { a, b, .. } => {
                f(a);
                f(b);
            }
            Inst::BinImm { a, .. } | Inst::CmpImm { a, .. } | Inst::Un { a, .. } => f(a),
            Inst::Load { addr, .. } | Inst::LoadOff { addr, .. } => f(addr),
            Inst::Store { addr, src, .. } | Inst::StoreOff { addr, src, .. } => {
                f(addr);
                f(src);
            }
            Inst::Call { args, .. } => args.iter_mut().for_each(f),
            Inst::CallInd { fptr, args, .. } => {
                f(fptr);
                args.iter_mut().for_each(f);
            }
            Inst::Activate { id } | Inst::Block { id } | Inst::Unblock { id } => f(id),
            Inst::Copy { dst, src, .. } => {
                f(dst);
                f(src);
            }
            Inst::DsdOp { operands, idx, .. } => {
                for (_, r) in operands.iter_mut() {
                    if let Some(r) = r {
                        f(r);
                    }
                }
                if let Some(r) = idx {
                    f(r);
                }
            }
            Inst::DsdSet { desc, val, .. } => {
                f(desc);
                f(val);
            }
        }
    }

    /// Calls `f` on every register the instruction reads.
    pub fn uses(&self, mut f: impl FnMut(VReg)) {
        // `uses_mut` on a copy keeps one list of operands; instructions are small.
        let mut copy = self.clone();
        copy.uses_mut(|r| f(*r));
    }
}

impl Term {
    /// The register the terminator reads, if any.
    pub fn use_reg(&self) -> Option<VReg> {
        match self {
            Term::Branch { cond, .. } => Some(*cond),
            Term::Ret(r) => *r,
            Term::Open | Term::Jump(_) | Term::Unreachable => None,
        }
    }

    /// The successor blocks.
    pub fn succs(&self) -> Vec<BlockId> {
        match self {
            Term::Jump(t) => vec![*t],
            Term::Branch {
                then, otherwise, ..
            } => vec![*then, *otherwise],
            Term::Open | Term::Ret(_) | Term::Unreachable => Vec::new(),
        }
    }
}

/// A block terminator.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Term {
    /// Not yet terminated (only while building).
    Open,
    /// Unconditional jump.
    Jump(BlockId),
    /// Two-way branch.
    Branch {
        /// Condition (bool).
        cond: VReg,
        /// Taken when true.
        then: BlockId,
        /// Taken when false.
        otherwise: BlockId,
    },
    /// Return, with a value or not.
    Ret(Option<VReg>),
    /// Control cannot reach here (e.g. a missing return); traps if it does.
    Unreachable,
}
