//! The compiled image: one ELF file holding every program class, the placement of classes
//! on the rectangle, the colour configuration, and the exported symbols.
//!
//! # Layout of the ELF file
//!
//! * `e_machine` is RISC-V 32 only because the `object` writer needs a known machine; the
//!   loader ignores it and checks [`ELF_OSABI_CSL`] and [`EF_CSL_IMAGE`] instead.
//! * [`SECTION_META`], [`SECTION_PLACEMENT`], [`SECTION_EXPORTS`]: JSON encodings of
//!   [`Meta`], the placement vector and the host symbol table.
//! * [`SECTION_ROUTES`]: the colour configuration, [`Routes`], in the binary layout
//!   [`crate::routes`] defines (each distinct configuration once, then one short entry per
//!   configured PE and colour).
//! * For program class `N`: `.text.classN` (encoded instructions, see [`crate::isa`]),
//!   `.data.classN` (the initial image of PE memory from address 0) and `.csl.classN`
//!   (JSON of [`ClassInfo`]), and, if the class has one, `.csl.linesN` (its
//!   [`crate::lines::LineTable`], in the binary layout that module defines).
//! * The ELF symbol table names every exported symbol as `classN.name`, valued at its
//!   address (data) or entry instruction (functions).

use crate::fabric::Arch;
use crate::isa::{self, NumTy, Op};
use crate::lines::LineTable;
pub use crate::routes::{PlacedRoute, Route, Routes};
use object::{Object, ObjectSection};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// ELF OS/ABI byte marking a CSL fabric image.
pub const ELF_OSABI_CSL: u8 = 0xCA;
/// ELF `e_flags` value marking a CSL fabric image of this format.
pub const EF_CSL_IMAGE: u32 = 0x4353_4C00 | FORMAT_VERSION;
/// Version of the manifest format; bumped on every incompatible change.
pub const FORMAT_VERSION: u32 = 2;

/// Section holding [`Meta`] as JSON.
pub const SECTION_META: &str = ".csl.meta";
/// Section holding the placement (class index per PE) as JSON.
pub const SECTION_PLACEMENT: &str = ".csl.placement";
/// Section holding the colour configuration ([`Routes`], binary: see [`crate::routes`]).
pub const SECTION_ROUTES: &str = ".csl.routes";
/// Section holding the host-visible symbol table as JSON.
pub const SECTION_EXPORTS: &str = ".csl.exports";
/// Optional section holding per-tile memory contents ([`TilePatch`]) in binary: for each
/// patch, `x`, `y`, `addr` and the byte count as little-endian u32s, then the bytes,
/// padded to a multiple of 4.
pub const SECTION_TILE_MEMORY: &str = ".csl.tilemem";

/// Name of the code section of class `n`.
pub fn section_text(n: usize) -> String {
    format!(".text.class{n}")
}
/// Name of the initial-memory section of class `n`.
pub fn section_data(n: usize) -> String {
    format!(".data.class{n}")
}
/// Name of the metadata section of class `n`.
pub fn section_class(n: usize) -> String {
    format!(".csl.class{n}")
}

/// Name of the optional line-table section of class `n` (see [`crate::lines`]).
pub fn section_lines(n: usize) -> String {
    format!(".csl.lines{n}")
}

/// A whole compiled program.
#[derive(Clone, Debug, PartialEq)]
pub struct Image {
    /// Target and geometry.
    pub meta: Meta,
    /// Class index of each PE of the rectangle, row-major (`y * width + x`).
    pub placement: Vec<u32>,
    /// Colour configuration per PE.
    pub routes: Routes,
    /// Host-visible names declared with `@export_name`.
    pub exports: Vec<ExportName>,
    /// The distinct compiled PE programs.
    pub classes: Vec<ProgramClass>,
    /// Memory contents of single tiles, applied over their class's initial memory in
    /// order (written by `miset`, and by `simfabric` into a core file).
    pub tile_memory: Vec<TilePatch>,
}

/// Bytes written into one tile's memory at load, after its class's initial memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TilePatch {
    /// Column within the rectangle.
    pub x: u32,
    /// Row within the rectangle.
    pub y: u32,
    /// Byte address of the first byte.
    pub addr: u32,
    /// The bytes.
    pub bytes: Vec<u8>,
}

/// Encodes patches as [`SECTION_TILE_MEMORY`] holds them.
pub fn encode_tile_memory(patches: &[TilePatch]) -> Vec<u8> {
    let mut out = Vec::new();
    for p in patches {
        for v in [p.x, p.y, p.addr, p.bytes.len() as u32] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&p.bytes);
        out.resize(out.len().div_ceil(4) * 4, 0);
    }
    out
}

/// Decodes [`SECTION_TILE_MEMORY`]; never panics.
pub fn decode_tile_memory(mut data: &[u8]) -> Result<Vec<TilePatch>, ImageError> {
    let bad = |reason: &str| ImageError::BadSection {
        section: SECTION_TILE_MEMORY.into(),
        reason: reason.into(),
    };
    let mut out = Vec::new();
    while !data.is_empty() {
        let word = |d: &[u8], i: usize| -> Option<u32> {
            d.get(4 * i..4 * i + 4)
                .and_then(|b| b.try_into().ok())
                .map(u32::from_le_bytes)
        };
        let (Some(x), Some(y), Some(addr), Some(n)) =
            (word(data, 0), word(data, 1), word(data, 2), word(data, 3))
        else {
            return Err(bad("truncated patch header"));
        };
        let n = n as usize;
        let padded = n.div_ceil(4) * 4;
        let Some(bytes) = data.get(16..16 + n) else {
            return Err(bad("truncated patch bytes"));
        };
        out.push(TilePatch {
            x,
            y,
            addr,
            bytes: bytes.to_vec(),
        });
        data = data.get(16 + padded..).unwrap_or(&[]);
    }
    Ok(out)
}

/// Target and geometry of an image.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    /// Manifest format version.
    pub format_version: u32,
    /// Target architecture.
    pub arch: Arch,
    /// Size of the whole simulated fabric (`--fabric-dims`).
    pub fabric_width: u32,
    /// Height of the fabric.
    pub fabric_height: u32,
    /// Column of the program rectangle's north-west PE (`--fabric-offsets`).
    pub offset_x: u32,
    /// Row of the program rectangle's north-west PE.
    pub offset_y: u32,
    /// Width of the program rectangle.
    pub width: u32,
    /// Height of the program rectangle.
    pub height: u32,
    /// Whether the memcpy infrastructure is present (`--memcpy`).
    pub memcpy: bool,
    /// I/O channels (`--channels`).
    pub channels: u32,
    /// Top-level params as given on the command line.
    pub params: BTreeMap<String, String>,
}

impl Meta {
    /// A `width` x `height` program rectangle at the usual fabric offset (4, 1), on a
    /// fabric with room for the memcpy infrastructure around it (`width + 7` x
    /// `height + 2`); no memcpy, one I/O channel, no params. Hand-built images start from
    /// it and change fields with struct update syntax.
    pub fn rect(arch: Arch, width: u32, height: u32) -> Meta {
        Meta {
            format_version: FORMAT_VERSION,
            arch,
            fabric_width: width + 7,
            fabric_height: height + 2,
            offset_x: 4,
            offset_y: 1,
            width,
            height,
            memcpy: false,
            channels: 1,
            params: BTreeMap::new(),
        }
    }
}

/// One router colour configuration of one PE (`@set_color_config` in the layout, or
/// `@set_local_color_config` in the PE's code, resolved to every PE running it).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ColorConfig {
    /// Column within the rectangle.
    pub x: u32,
    /// Row within the rectangle.
    pub y: u32,
    /// Colour id.
    pub color: u8,
    /// Input directions of switch position 0.
    pub rx: Vec<crate::fabric::Direction>,
    /// Output directions of switch position 0.
    pub tx: Vec<crate::fabric::Direction>,
    /// Switch positions 1..=3 and the switch state, if configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub switches: Option<SwitchConfig>,
    /// The colour's filter, if configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<FilterConfig>,
    /// Start in teardown mode.
    #[serde(default, skip_serializing_if = "is_false")]
    pub teardown: bool,
    /// Swap colours `c` and `c ^ 1` for wavelets arriving from east or west.
    #[serde(default, skip_serializing_if = "is_false")]
    pub color_swap_x: bool,
    /// Swap colours `c` and `c ^ 1` for wavelets arriving from north or south.
    #[serde(default, skip_serializing_if = "is_false")]
    pub color_swap_y: bool,
    /// WSE-3: the colour routes messages by their header wavelet
    /// ([`crate::fabric::message`]) instead of by `rx`/`tx` (which are then empty).
    #[serde(default, skip_serializing_if = "is_false")]
    pub message_passing: bool,
}

impl ColorConfig {
    /// A plain route of `color` at `(x, y)`, from `rx` to `tx`: no switch positions, no
    /// filter, no teardown, colour swap or message passing.
    pub fn route(
        x: u32,
        y: u32,
        color: u8,
        rx: Vec<crate::fabric::Direction>,
        tx: Vec<crate::fabric::Direction>,
    ) -> ColorConfig {
        ColorConfig {
            x,
            y,
            color,
            rx,
            tx,
            switches: None,
            filter: None,
            teardown: false,
            color_swap_x: false,
            color_swap_y: false,
            message_passing: false,
        }
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One switch position beyond position 0. A position overrides one side of position 0;
/// the other side is inherited. Both `None` means the position is invalid.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SwitchPos {
    /// Input direction in this position.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx: Option<crate::fabric::Direction>,
    /// Output directions in this position.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tx: Option<Vec<crate::fabric::Direction>>,
}

impl SwitchPos {
    /// Whether the position is usable.
    pub fn is_valid(&self) -> bool {
        self.rx.is_some() || self.tx.is_some()
    }
}

/// How a router drops the head command of a control wavelet (see `fabric.md` §3.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PopMode {
    /// Keep the command list.
    #[default]
    NoPop,
    /// Always remove the head command.
    AlwaysPop,
    /// Remove it only if this router's position changed.
    PopOnAdvance,
    /// Remove it if the position changed or the head was a NOP.
    PopOnAdvanceNop,
}

/// A colour's switch configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SwitchConfig {
    /// Positions 1, 2 and 3.
    pub positions: [SwitchPos; 3],
    /// Position at start (0..=3).
    pub current: u8,
    /// Advancing past the last valid position wraps to 0.
    pub ring_mode: bool,
    /// Command popping.
    pub pop_mode: PopMode,
}

/// Kind of a colour filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FilterKind {
    /// Pass data wavelets whose index (high 16 bits) is in `min_idx..=max_idx`.
    Range,
    /// Counter-based filter.
    Counter,
    /// Counter with a one-time limit switch.
    SparseCounter,
}

/// A colour filter: decides which wavelets reach the CE (forwarding is unaffected).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FilterConfig {
    /// Kind.
    pub kind: FilterKind,
    /// Data wavelets increment the counter.
    #[serde(default)]
    pub count_data: bool,
    /// Control wavelets increment the counter.
    #[serde(default)]
    pub count_control: bool,
    /// Initial counter.
    #[serde(default)]
    pub init_counter: u16,
    /// The counter wraps to 0 after reaching this value.
    #[serde(default)]
    pub limit1: u16,
    /// Sparse counters: replaces `limit1` once it is reached.
    #[serde(default)]
    pub limit2: Option<u16>,
    /// Wavelets are rejected while the counter exceeds this.
    #[serde(default)]
    pub max_counter: u16,
    /// Only control wavelets at `counter == max_counter` pass.
    #[serde(default)]
    pub filter_control: bool,
    /// Range filters: lowest index passed.
    #[serde(default)]
    pub min_idx: u16,
    /// Range filters: highest index passed.
    #[serde(default)]
    pub max_idx: u16,
}

impl FilterConfig {
    /// A filter of `kind` with every other field zero (`false`, `None`).
    pub fn new(kind: FilterKind) -> FilterConfig {
        FilterConfig {
            kind,
            count_data: false,
            count_control: false,
            init_counter: 0,
            limit1: 0,
            limit2: None,
            max_counter: 0,
            filter_control: false,
            min_idx: 0,
            max_idx: 0,
        }
    }
}

/// A host-visible name declared by `@export_name` in the layout.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportName {
    /// The name the host uses.
    pub name: String,
    /// What it is.
    pub kind: ExportKind,
}

/// The kind of a host-visible name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ExportKind {
    /// A tensor reached through an exported `[*]T` pointer variable.
    Tensor {
        /// Element type.
        elem: NumTy,
        /// Whether the host may write it.
        mutable: bool,
    },
    /// A function the host can launch.
    Func {
        /// Parameter types, in order.
        params: Vec<NumTy>,
    },
}

/// One distinct compiled PE program.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgramClass {
    /// Instructions.
    pub code: Vec<Op>,
    /// Initial contents of PE memory from address 0.
    pub data: Vec<u8>,
    /// Functions, tasks and symbols.
    pub info: ClassInfo,
    /// The source line of each instruction (empty if the compiler recorded none).
    pub lines: LineTable,
}

/// Metadata of one program class.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClassInfo {
    /// Human-readable origin, e.g. `pe_program.csl {M=4}`.
    pub name: String,
    /// Every function and task body, indexed by the `func` operand of `call`.
    pub functions: Vec<FuncInfo>,
    /// Task-id bindings.
    pub tasks: Vec<TaskBinding>,
    /// Bit `i` set: task id `i` is active when the program starts.
    pub initially_active: u64,
    /// Bit `i` set: task id `i` is blocked when the program starts.
    pub initially_blocked: u64,
    /// Symbols exported to the host with `@export_symbol`.
    pub symbols: Vec<SymbolExport>,
    /// Every global placed in memory (for debuggers and `read_symbol`).
    pub globals: Vec<GlobalInfo>,
    /// Input queues bound to colours.
    #[serde(default)]
    pub input_queues: Vec<QueueBinding>,
    /// Output queues bound to colours.
    #[serde(default)]
    pub output_queues: Vec<QueueBinding>,
    /// Colours whose wavelets are blocked from reaching tasks at start (WSE-2 `@block(color)`
    /// is the data task id bit; this lists WSE-3 input queues blocked at start).
    #[serde(default)]
    pub blocked_queues: Vec<u8>,
}

/// A function's entry and frame shape.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FuncInfo {
    /// Qualified name, for traces and fault reports.
    pub name: String,
    /// Index of the first instruction.
    pub entry: u32,
    /// Number of virtual registers in a frame.
    pub nregs: u16,
    /// Number of parameters (in `r0..`).
    pub nparams: u8,
    /// Bytes of stack the frame needs for local aggregates.
    pub frame_bytes: u16,
}

/// How a task is started.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskKind {
    /// Activated by `@activate` or an async completion.
    Local,
    /// Activated by an arriving wavelet.
    Data,
    /// Activated by a control wavelet.
    Control,
}

/// A task bound to a task id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskBinding {
    /// Task id (0..=63).
    pub id: u8,
    /// How it is triggered.
    pub kind: TaskKind,
    /// Index into [`ClassInfo::functions`].
    pub func: u32,
    /// How the triggering wavelet becomes the task's arguments (data and control tasks).
    #[serde(default)]
    pub args: WaveletArgs,
}

/// How a data or control task receives its wavelet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaveletArgs {
    /// No arguments.
    #[default]
    None,
    /// `r0` = the whole 32-bit payload.
    Word,
    /// `r0` = the low 16 bits (data; for control tasks the 16-bit data field).
    Low16,
    /// `r0` = the low 16 bits (data), `r1` = the high 16 bits (index).
    Pair16,
}

/// An input or output queue bound to a colour (`@initialize_queue`; on WSE-2 implied by
/// fabric DSDs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueBinding {
    /// Queue id.
    pub queue: u8,
    /// Colour id.
    pub color: u8,
}

/// A symbol exported to the host.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SymbolExport {
    /// The `@export_name` it matches.
    pub name: String,
    /// What it refers to.
    pub target: SymbolTarget,
}

/// What an exported symbol refers to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum SymbolTarget {
    /// The address of a pointer variable whose value is the tensor's address.
    Tensor {
        /// Byte address of the pointer variable.
        ptr_addr: u32,
    },
    /// A function.
    Func {
        /// Index into [`ClassInfo::functions`].
        func: u32,
    },
}

/// A global variable's place in memory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GlobalInfo {
    /// Qualified name.
    pub name: String,
    /// Byte address.
    pub addr: u32,
    /// Size in bytes.
    pub size: u32,
}

/// Why an image could not be written or read.
#[derive(Debug)]
pub enum ImageError {
    /// The file is not an ELF file, or not one of ours.
    NotAnImage(String),
    /// A required section is missing.
    MissingSection(String),
    /// A section's contents are malformed.
    BadSection {
        /// Section name.
        section: String,
        /// What is wrong.
        reason: String,
    },
    /// The ELF writer failed.
    Write(String),
}

impl fmt::Display for ImageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImageError::NotAnImage(why) => write!(f, "not a CSL fabric image: {why}"),
            ImageError::MissingSection(s) => write!(f, "image has no `{s}` section"),
            ImageError::BadSection { section, reason } => {
                write!(f, "section `{section}` is malformed: {reason}")
            }
            ImageError::Write(why) => write!(f, "cannot write image: {why}"),
        }
    }
}

impl std::error::Error for ImageError {}

fn json<T: Serialize>(v: &T) -> Result<Vec<u8>, ImageError> {
    serde_json::to_vec(v).map_err(|e| ImageError::Write(e.to_string()))
}

impl Image {
    /// Encodes the image as an ELF file.
    pub fn to_elf(&self) -> Result<Vec<u8>, ImageError> {
        use object::write::{Object as WObject, Symbol, SymbolSection};
        use object::{
            Architecture, BinaryFormat, Endianness, FileFlags, SectionKind, SymbolFlags,
            SymbolKind, SymbolScope,
        };
        let mut obj = WObject::new(BinaryFormat::Elf, Architecture::Riscv32, Endianness::Little);
        obj.flags = FileFlags::Elf {
            os_abi: object::elf::OsAbi(ELF_OSABI_CSL),
            abi_version: 0,
            e_flags: object::elf::FileFlags(EF_CSL_IMAGE),
        };
        let add = |obj: &mut WObject<'_>, name: &str, kind: SectionKind, data: Vec<u8>| {
            let id = obj.add_section(Vec::new(), name.as_bytes().to_vec(), kind);
            obj.append_section_data(id, &data, 4);
            id
        };
        let manifest = [
            (SECTION_META, json(&self.meta)?),
            (SECTION_PLACEMENT, json(&self.placement)?),
            (
                SECTION_ROUTES,
                self.routes
                    .encode()
                    .map_err(|e| ImageError::Write(e.to_string()))?,
            ),
            (SECTION_EXPORTS, json(&self.exports)?),
        ];
        for (name, bytes) in manifest {
            add(&mut obj, name, SectionKind::Metadata, bytes);
        }
        if !self.tile_memory.is_empty() {
            add(
                &mut obj,
                SECTION_TILE_MEMORY,
                SectionKind::Data,
                encode_tile_memory(&self.tile_memory),
            );
        }
        for (n, class) in self.classes.iter().enumerate() {
            let text = add(
                &mut obj,
                &section_text(n),
                SectionKind::Text,
                isa::encode_all(&class.code),
            );
            let data = add(
                &mut obj,
                &section_data(n),
                SectionKind::Data,
                class.data.clone(),
            );
            add(
                &mut obj,
                &section_class(n),
                SectionKind::Metadata,
                json(&class.info)?,
            );
            if !class.lines.is_empty() {
                add(
                    &mut obj,
                    &section_lines(n),
                    SectionKind::Metadata,
                    class.lines.encode(),
                );
            }
            for sym in &class.symbols() {
                let (section, value, kind) = match sym.1 {
                    SymbolTarget::Tensor { ptr_addr } => {
                        (data, u64::from(ptr_addr), SymbolKind::Data)
                    }
                    SymbolTarget::Func { func } => {
                        let entry = class
                            .info
                            .functions
                            .get(func as usize)
                            .map_or(0, |f| f.entry);
                        (text, u64::from(entry), SymbolKind::Text)
                    }
                };
                obj.add_symbol(Symbol {
                    name: format!("class{n}.{}", sym.0).into_bytes(),
                    value,
                    size: 0,
                    kind,
                    scope: SymbolScope::Dynamic,
                    weak: false,
                    section: SymbolSection::Section(section),
                    flags: SymbolFlags::None,
                });
            }
        }
        obj.write().map_err(|e| ImageError::Write(e.to_string()))
    }

    /// Decodes an ELF file written by [`Image::to_elf`]. Never panics on bad input.
    pub fn from_elf(bytes: &[u8]) -> Result<Image, ImageError> {
        let file = object::read::elf::ElfFile32::<object::Endianness>::parse(bytes)
            .map_err(|e| ImageError::NotAnImage(e.to_string()))?;
        let object::FileFlags::Elf {
            os_abi, e_flags, ..
        } = file.flags()
        else {
            return Err(ImageError::NotAnImage("not an ELF file".into()));
        };
        if os_abi.0 != ELF_OSABI_CSL {
            return Err(ImageError::NotAnImage(
                "the ELF OS/ABI byte is not the CSL one".into(),
            ));
        }
        if e_flags.0 != EF_CSL_IMAGE {
            return Err(ImageError::NotAnImage(format!(
                "format flags 0x{:08x}, this simulator reads 0x{EF_CSL_IMAGE:08x}; recompile with this cslc",
                e_flags.0
            )));
        }
        let section = |name: &str| -> Result<&[u8], ImageError> {
            let s = file
                .section_by_name(name)
                .ok_or_else(|| ImageError::MissingSection(name.into()))?;
            s.data().map_err(|e| ImageError::BadSection {
                section: name.into(),
                reason: e.to_string(),
            })
        };
        fn parse<'a, T: Deserialize<'a>>(name: &str, data: &'a [u8]) -> Result<T, ImageError> {
            serde_json::from_slice(data).map_err(|e| ImageError::BadSection {
                section: name.into(),
                reason: e.to_string(),
            })
        }
        let meta: Meta = parse(SECTION_META, section(SECTION_META)?)?;
        let placement: Vec<u32> = parse(SECTION_PLACEMENT, section(SECTION_PLACEMENT)?)?;
        let routes =
            Routes::decode(section(SECTION_ROUTES)?).map_err(|reason| ImageError::BadSection {
                section: SECTION_ROUTES.into(),
                reason,
            })?;
        let exports: Vec<ExportName> = parse(SECTION_EXPORTS, section(SECTION_EXPORTS)?)?;
        let mut classes = Vec::new();
        for n in 0.. {
            let name = section_class(n);
            if file.section_by_name(&name).is_none() {
                break;
            }
            let info: ClassInfo = parse(&name, section(&name)?)?;
            let text_name = section_text(n);
            let code =
                isa::decode_all(section(&text_name)?).map_err(|e| ImageError::BadSection {
                    section: text_name,
                    reason: e.to_string(),
                })?;
            let data = section(&section_data(n))?.to_vec();
            let lines_name = section_lines(n);
            let lines = match file.section_by_name(&lines_name) {
                Some(_) => LineTable::decode(section(&lines_name)?).map_err(|e| {
                    ImageError::BadSection {
                        section: lines_name,
                        reason: e.to_string(),
                    }
                })?,
                None => LineTable::default(),
            };
            classes.push(ProgramClass {
                code,
                data,
                info,
                lines,
            });
        }
        let tile_memory = match file.section_by_name(SECTION_TILE_MEMORY) {
            Some(_) => decode_tile_memory(section(SECTION_TILE_MEMORY)?)?,
            None => Vec::new(),
        };
        let image = Image {
            meta,
            placement,
            routes,
            exports,
            classes,
            tile_memory,
        };
        image.validate()?;
        Ok(image)
    }

    /// Checks the cross-references that later stages index without checking.
    pub fn validate(&self) -> Result<(), ImageError> {
        let bad = |section: &str, reason: String| ImageError::BadSection {
            section: section.into(),
            reason,
        };
        if self.meta.format_version != FORMAT_VERSION {
            return Err(bad(
                SECTION_META,
                format!("format version {}", self.meta.format_version),
            ));
        }
        let n_pes = u64::from(self.meta.width) * u64::from(self.meta.height);
        if self.placement.len() as u64 != n_pes {
            return Err(bad(
                SECTION_PLACEMENT,
                format!("{} entries for {n_pes} PEs", self.placement.len()),
            ));
        }
        if self.meta.offset_x.saturating_add(self.meta.width) > self.meta.fabric_width
            || self.meta.offset_y.saturating_add(self.meta.height) > self.meta.fabric_height
        {
            return Err(bad(
                SECTION_META,
                "the program rectangle does not fit in the fabric".into(),
            ));
        }
        if let Some(c) = self
            .placement
            .iter()
            .find(|&&c| c as usize >= self.classes.len())
        {
            return Err(bad(SECTION_PLACEMENT, format!("class {c} does not exist")));
        }
        // Routes: on a PE of the rectangle, an existing colour, once per (PE, colour). The
        // compiler's linker runs this too, so it never writes an image the loader rejects.
        let mut seen = crate::fabric::PeColorSet::new(self.meta.width, self.meta.height);
        for r in self.routes.iter() {
            if r.x >= self.meta.width || r.y >= self.meta.height {
                return Err(bad(
                    SECTION_ROUTES,
                    format!(
                        "colour {} is configured at ({},{}), outside the {}x{} rectangle",
                        r.color, r.x, r.y, self.meta.width, self.meta.height
                    ),
                ));
            }
            if r.color >= crate::fabric::NUM_COLORS {
                return Err(bad(
                    SECTION_ROUTES,
                    format!("colour {} does not exist", r.color),
                ));
            }
            if !seen.insert(r.x, r.y, r.color) {
                return Err(bad(
                    SECTION_ROUTES,
                    format!(
                        "colour {} is configured twice at ({},{})",
                        r.color, r.x, r.y
                    ),
                ));
            }
        }
        if !self.meta.arch.has_message_passing()
            && let Some(r) = self.routes.iter().find(|r| r.message_passing)
        {
            return Err(bad(
                SECTION_ROUTES,
                format!(
                    "colour {} at ({}, {}) uses message passing, which {} does not have",
                    r.color, r.x, r.y, self.meta.arch
                ),
            ));
        }
        for (n, class) in self.classes.iter().enumerate() {
            let sec = section_class(n);
            if class.data.len() as u64 > u64::from(crate::fabric::PE_MEMORY_BYTES) {
                return Err(bad(&section_data(n), "larger than PE memory".into()));
            }
            if let Err(e) = class.lines.check(class.code.len()) {
                return Err(bad(&section_lines(n), e.to_string()));
            }
            let nfuncs = class.info.functions.len() as u32;
            for f in &class.info.functions {
                if f.entry as usize >= class.code.len() {
                    return Err(bad(
                        &sec,
                        format!("function `{}` starts past the code", f.name),
                    ));
                }
            }
            for t in &class.info.tasks {
                if t.func >= nfuncs || t.id >= crate::fabric::NUM_TASK_IDS {
                    return Err(bad(
                        &sec,
                        format!("task binding for id {} is invalid", t.id),
                    ));
                }
            }
            for s in &class.info.symbols {
                if let SymbolTarget::Func { func } = s.target
                    && func >= nfuncs
                {
                    return Err(bad(&sec, format!("symbol `{}` names no function", s.name)));
                }
            }
            for op in &class.code {
                let ok = match *op {
                    Op::Call { func, .. } => func < nfuncs,
                    Op::Jump { target }
                    | Op::BrTrue { target, .. }
                    | Op::BrFalse { target, .. } => (target as usize) < class.code.len(),
                    _ => true,
                };
                if !ok {
                    return Err(bad(
                        &section_text(n),
                        format!("`{op}` points outside the class"),
                    ));
                }
            }
        }
        for p in &self.tile_memory {
            if p.x >= self.meta.width || p.y >= self.meta.height {
                return Err(bad(
                    SECTION_TILE_MEMORY,
                    format!(
                        "a patch names tile ({}, {}) outside the rectangle",
                        p.x, p.y
                    ),
                ));
            }
            if u64::from(p.addr) + p.bytes.len() as u64 > u64::from(crate::fabric::PE_MEMORY_BYTES)
            {
                return Err(bad(
                    SECTION_TILE_MEMORY,
                    format!(
                        "a patch of tile ({}, {}) at byte 0x{:x} runs past PE memory",
                        p.x, p.y, p.addr
                    ),
                ));
            }
        }
        Ok(())
    }
}

impl ProgramClass {
    fn symbols(&self) -> Vec<(String, SymbolTarget)> {
        self.info
            .symbols
            .iter()
            .map(|s| (s.name.clone(), s.target.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::Reg;

    fn sample() -> Image {
        Image {
            meta: Meta {
                memcpy: true,
                ..Meta::rect(Arch::Wse2, 1, 1)
            },
            placement: vec![0],
            routes: Routes::new(),
            exports: vec![ExportName {
                name: "f".into(),
                kind: ExportKind::Func { params: vec![] },
            }],
            classes: vec![ProgramClass {
                code: vec![
                    Op::Imm {
                        dst: Reg(0),
                        imm: 3,
                    },
                    Op::RetVoid {},
                ],
                data: vec![1, 2, 3, 4],
                info: ClassInfo {
                    name: "t".into(),
                    functions: vec![FuncInfo {
                        name: "f".into(),
                        entry: 0,
                        nregs: 1,
                        nparams: 0,
                        frame_bytes: 0,
                    }],
                    symbols: vec![SymbolExport {
                        name: "f".into(),
                        target: SymbolTarget::Func { func: 0 },
                    }],
                    ..ClassInfo::default()
                },
                lines: LineTable {
                    files: vec!["t.csl".into()],
                    rows: vec![crate::lines::LineRow {
                        pc: 1,
                        file: 0,
                        line: 7,
                    }],
                },
            }],
            tile_memory: Vec::new(),
        }
    }

    #[test]
    fn elf_round_trip() {
        let img = sample();
        let bytes = img.to_elf().unwrap();
        assert_eq!(Image::from_elf(&bytes).unwrap(), img);
    }

    #[test]
    fn message_passing_needs_wse3() {
        let mut img = sample();
        img.routes.push(ColorConfig {
            x: 0,
            y: 0,
            color: crate::fabric::message::COMM_COLOR,
            rx: vec![],
            tx: vec![],
            switches: None,
            filter: None,
            teardown: false,
            color_swap_x: false,
            color_swap_y: false,
            message_passing: true,
        });
        assert!(img.validate().is_err());
        img.meta.arch = Arch::Wse3;
        assert!(img.validate().is_ok());
        let bytes = img.to_elf().unwrap();
        assert_eq!(Image::from_elf(&bytes).unwrap(), img);
    }

    /// A colour configured outside the rectangle, one that does not exist, or one
    /// configured twice on a PE is rejected by `validate`, which the compiler's linker
    /// also runs (issue 11: such an image once compiled with exit 0 and failed to load).
    #[test]
    fn routes_outside_the_rectangle_are_invalid() {
        let route = |x, y, color| ColorConfig::route(x, y, color, vec![], vec![]);
        let mut img = sample();
        img.routes.push(route(0, 0, 3));
        assert!(img.validate().is_ok());
        for bad in [route(5, 0, 3), route(0, 1, 3), route(0, 0, 24)] {
            let mut img = sample();
            img.routes.push(bad);
            assert!(img.validate().is_err());
        }
        img.routes.push(route(0, 0, 3));
        assert!(img.validate().is_err());
    }

    /// A line table naming a pc past the code fails validation; one whose bytes are
    /// malformed fails to load with an error naming its section.
    #[test]
    fn malformed_line_tables_are_rejected() {
        let mut img = sample();
        img.classes[0].lines.rows[0].pc = 2;
        assert!(img.validate().is_err());
        let img = sample();
        let bytes = img.to_elf().unwrap();
        let table = img.classes[0].lines.encode();
        let at = bytes
            .windows(table.len())
            .position(|w| w == table.as_slice())
            .unwrap();
        // The row's file index (the third word from the end) names no file.
        let mut bad = bytes.clone();
        bad[at + table.len() - 8] = 5;
        let err = Image::from_elf(&bad).unwrap_err();
        assert!(
            matches!(&err, ImageError::BadSection { section, .. } if section == ".csl.lines0"),
            "{err}"
        );
        assert!(err.to_string().contains("file 5"), "{err}");
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(Image::from_elf(b"not an elf").is_err());
        let bytes = sample().to_elf().unwrap();
        for cut in [0, 10, 52, bytes.len() / 2, bytes.len() - 1] {
            assert!(Image::from_elf(&bytes[..cut]).is_err());
        }
    }

    proptest::proptest! {
        #[test]
        fn corrupted_images_never_panic(pos in 0usize..4096, byte in proptest::prelude::any::<u8>()) {
            let mut bytes = sample().to_elf().unwrap();
            let n = bytes.len();
            bytes[pos % n] = byte;
            let _ = Image::from_elf(&bytes);
        }
    }
}
