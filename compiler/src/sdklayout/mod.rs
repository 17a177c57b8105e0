//! The SdkLayout model: a program described as code regions (a CSL file and its params on
//! a rectangle of PEs), routes painted on them, ports on their edges, connections between
//! ports and host streams into or out of ports, as the vendor's Python `SdkLayout` API
//! builds it. [`compile`] turns a [`LayoutDesc`] into one fabric image through the
//! ordinary CSL pipeline: it places the regions, gives every symbolic colour a physical
//! one, finds a path for every connection, and writes a `layout { ... }` file
//! (`@set_tile_code` and `@set_color_config` per PE) that [`crate::driver::compile_file`]
//! compiles like any other program. Nothing here generates code or links by itself.
//!
//! Choices of ours (the public material leaves them open):
//!
//! * Coordinates are global fabric coordinates: the image rectangle starts at (0, 0) with
//!   no memcpy infrastructure, so `read_symbol(x, y, ...)` names the PE a region placed
//!   at (x, y) occupies. Unplaced regions go to the first free spot in row-major order
//!   that keeps one free PE between them and other regions.
//! * Colours: a `Color` is named; colours joined by a connection become one physical
//!   colour; every such class gets its own colour (so routes of different classes never
//!   meet). Classes whose routers need switch positions get colours that have switches.
//! * Ports on an edge of several PEs connect PE by PE in order along the edge (west to
//!   east, north to south). A route runs only through PEs of no region; where a port PE
//!   has painted routes for the port's colour, the route leaves (enters) it the way the
//!   paint says.
//! * A host stream is served by a one-PE proxy program placed on a free PE next to the
//!   port: an input stream's words enter the proxy's CE input queue from the host (the
//!   simulator's host stream) and the proxy sends them along a route to the port; an
//!   output stream's route ends at the proxy, whose CE output the host collects. The
//!   [`StreamInfo`] list tells the runtime where each stream's proxy is.

use csl_arch::Arch;
use csl_arch::image::Image;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

/// Why a layout could not be compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SdkLayoutError {
    /// The description is inconsistent (unknown names, overlapping regions, bad sizes).
    Invalid(String),
    /// No route, or no colour, could be found.
    Routing(String),
    /// The generated CSL program did not compile (rendered diagnostics).
    Compile(String),
    /// A file could not be read or written.
    Io(String),
}

impl fmt::Display for SdkLayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SdkLayoutError::Invalid(m) => write!(f, "invalid layout: {m}"),
            SdkLayoutError::Routing(m) => write!(f, "layout routing: {m}"),
            SdkLayoutError::Compile(m) => write!(f, "the layout's CSL did not compile:\n{m}"),
            SdkLayoutError::Io(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for SdkLayoutError {}

fn invalid<T>(m: impl Into<String>) -> Result<T, SdkLayoutError> {
    Err(SdkLayoutError::Invalid(m.into()))
}

/// A router port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dir {
    /// The PE's own CE.
    Ramp,
    /// Column x+1.
    East,
    /// Column x-1.
    West,
    /// Row y-1.
    North,
    /// Row y+1.
    South,
}

impl Dir {
    const LINKS: [Dir; 4] = [Dir::East, Dir::West, Dir::North, Dir::South];

    fn bit(self) -> u8 {
        match self {
            Dir::Ramp => 1,
            Dir::East => 2,
            Dir::West => 4,
            Dir::North => 8,
            Dir::South => 16,
        }
    }

    fn csl(self) -> &'static str {
        match self {
            Dir::Ramp => "RAMP",
            Dir::East => "EAST",
            Dir::West => "WEST",
            Dir::North => "NORTH",
            Dir::South => "SOUTH",
        }
    }

    fn opposite(self) -> Dir {
        match self {
            Dir::Ramp => Dir::Ramp,
            Dir::East => Dir::West,
            Dir::West => Dir::East,
            Dir::North => Dir::South,
            Dir::South => Dir::North,
        }
    }

    fn step(self, (x, y): (u32, u32)) -> Option<(u32, u32)> {
        match self {
            Dir::Ramp => Some((x, y)),
            Dir::East => Some((x.checked_add(1)?, y)),
            Dir::West => Some((x.checked_sub(1)?, y)),
            Dir::North => Some((x, y.checked_sub(1)?)),
            Dir::South => Some((x, y.checked_add(1)?)),
        }
    }
}

/// An edge of a code region.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Edge {
    /// Row 0 of the region.
    Top,
    /// The last row.
    Bottom,
    /// Column 0.
    Left,
    /// The last column.
    Right,
}

impl Edge {
    /// The direction that leaves the region through this edge.
    fn outward(self) -> Dir {
        match self {
            Edge::Top => Dir::North,
            Edge::Bottom => Dir::South,
            Edge::Left => Dir::West,
            Edge::Right => Dir::East,
        }
    }

    fn holds(self, (x, y): (u32, u32), (w, h): (u32, u32)) -> bool {
        match self {
            Edge::Top => y == 0,
            Edge::Bottom => y + 1 == h,
            Edge::Left => x == 0,
            Edge::Right => x + 1 == w,
        }
    }

    /// The region-relative PEs of the edge, west to east or north to south.
    fn pes(self, (w, h): (u32, u32)) -> Vec<(u32, u32)> {
        match self {
            Edge::Top => (0..w).map(|x| (x, 0)).collect(),
            Edge::Bottom => (0..w).map(|x| (x, h - 1)).collect(),
            Edge::Left => (0..h).map(|y| (0, y)).collect(),
            Edge::Right => (0..h).map(|y| (w - 1, y)).collect(),
        }
    }
}

/// One routing position: the inputs it accepts and the outputs it sends to.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    /// Inputs (a port's position may leave them to the compiler).
    #[serde(default)]
    pub rx: Vec<Dir>,
    /// Outputs (likewise).
    #[serde(default)]
    pub tx: Vec<Dir>,
}

/// A region-relative rectangle `[x0, y0, x1, y1)`.
pub type RectDesc = [u32; 4];

/// A param value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "lowercase")]
pub enum ParamValue {
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A colour, by its name.
    Color(String),
}

/// `set_param` on a range of a region's PEs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ParamDesc {
    /// The PEs.
    pub rect: RectDesc,
    /// The param.
    pub name: String,
    /// Its value.
    pub value: ParamValue,
}

/// Positions used instead on the PEs of one edge of the region.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EdgeRouting {
    /// The edge.
    pub edge: Edge,
    /// Its positions.
    pub positions: Vec<Position>,
}

/// `paint` on a range of a region's PEs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PaintDesc {
    /// The PEs.
    pub rect: RectDesc,
    /// The colour's name.
    pub color: String,
    /// Switch positions 0, 1, ...
    pub positions: Vec<Position>,
    /// Edge PEs (of the region) that use other positions.
    #[serde(default)]
    pub edges: Vec<EdgeRouting>,
}

/// Initial contents of an array on every PE of a region: a `height` × `width` host matrix
/// (row-major, one word per element) cut into equal blocks, one per PE, each stored
/// row-major.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SymbolDesc {
    /// The variable.
    pub name: String,
    /// The elements' bit patterns (low 16 bits for 2-byte elements).
    pub data: Vec<u32>,
    /// Bytes per element: 2 or 4.
    pub elem_bytes: u32,
    /// Columns of the host matrix.
    pub width: u32,
    /// Rows of the host matrix.
    pub height: u32,
}

/// A code region.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RegionDesc {
    /// Unique name.
    pub name: String,
    /// The CSL file its PEs run.
    pub file: PathBuf,
    /// Columns.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// North-west PE, if placed.
    #[serde(default)]
    pub place: Option<(u32, u32)>,
    /// Params, in the order they were set (later ones win).
    #[serde(default)]
    pub params: Vec<ParamDesc>,
    /// Routes, in order (a later paint of a PE and colour replaces an earlier one).
    #[serde(default)]
    pub paints: Vec<PaintDesc>,
    /// Initial array contents.
    #[serde(default)]
    pub symbols: Vec<SymbolDesc>,
}

/// A port on a region's edge.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PortDesc {
    /// Index into [`LayoutDesc::regions`].
    pub region: usize,
    /// The colour's name.
    pub color: String,
    /// The edge whose PEs form the port.
    pub edge: Edge,
    /// Whether wavelets enter the region here.
    pub input: bool,
    /// The port PEs' positions (inputs of an input port, outputs of an output port are
    /// left to the compiler).
    pub positions: Vec<Position>,
    /// Wavelets through the port.
    pub size: u32,
}

/// A host stream.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StreamDesc {
    /// Index into [`LayoutDesc::ports`].
    pub port: usize,
}

/// A whole layout.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LayoutDesc {
    /// `wse2` or `wse3`.
    pub arch: String,
    /// The regions.
    #[serde(default)]
    pub regions: Vec<RegionDesc>,
    /// The ports.
    #[serde(default)]
    pub ports: Vec<PortDesc>,
    /// `(output port, input port)` pairs.
    #[serde(default)]
    pub connections: Vec<(usize, usize)>,
    /// Host streams.
    #[serde(default)]
    pub streams: Vec<StreamDesc>,
}

/// Where the runtime finds a host stream.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamInfo {
    /// Index into [`LayoutDesc::streams`].
    pub id: usize,
    /// Host to device.
    pub input: bool,
    /// The proxy PE (global coordinates).
    pub x: u32,
    /// See `x`.
    pub y: u32,
    /// The colour of the proxy's CE queue the host feeds or drains.
    pub color: u8,
    /// The port's size in wavelets.
    pub size: u32,
}

/// What [`compile`] produced.
pub struct SdkLayoutOutput {
    /// The image.
    pub image: Image,
    /// `out.json`'s contents.
    pub metadata: serde_json::Value,
    /// The host streams.
    pub streams: Vec<StreamInfo>,
    /// Physical colour of every named colour.
    pub colors: BTreeMap<String, u8>,
    /// Rendered compiler warnings (empty when there were none).
    pub warnings: String,
}

/// Options of [`compile`].
#[derive(Clone, Debug)]
pub struct SdkLayoutOptions {
    /// Region files given by relative paths are found from here.
    pub base_dir: PathBuf,
    /// Where the generated CSL files are written (created if missing).
    pub work_dir: PathBuf,
    /// Run the IR optimiser.
    pub optimize: bool,
}

/// A code region of an [`SdkLayout`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegionId(pub usize);

/// A port of an [`SdkLayout`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortId(pub usize);

/// A host stream of an [`SdkLayout`]: its index in [`SdkLayoutOutput::streams`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamId(pub usize);

impl Position {
    /// A position receiving from `rx` and sending to `tx`.
    pub fn new(rx: &[Dir], tx: &[Dir]) -> Position {
        Position {
            rx: rx.to_vec(),
            tx: tx.to_vec(),
        }
    }
}

/// The Python `SdkLayout` API in Rust: builds a [`LayoutDesc`] call by call (the same
/// calls, with region and port handles instead of objects) and compiles it. Problems
/// are found by [`SdkLayout::compile`], which checks the whole description.
#[derive(Clone, Debug)]
pub struct SdkLayout {
    desc: LayoutDesc,
}

impl SdkLayout {
    /// An empty layout for `arch`.
    pub fn new(arch: Arch) -> SdkLayout {
        SdkLayout {
            desc: LayoutDesc {
                arch: arch.name().to_string(),
                regions: Vec::new(),
                ports: Vec::new(),
                connections: Vec::new(),
                streams: Vec::new(),
            },
        }
    }

    /// A region running the CSL file `file` on `width` x `height` PEs.
    pub fn create_code_region(
        &mut self,
        file: impl Into<PathBuf>,
        name: &str,
        width: u32,
        height: u32,
    ) -> RegionId {
        self.desc.regions.push(RegionDesc {
            name: name.to_string(),
            file: file.into(),
            width,
            height,
            place: None,
            params: Vec::new(),
            paints: Vec::new(),
            symbols: Vec::new(),
        });
        RegionId(self.desc.regions.len() - 1)
    }

    fn region(&mut self, r: RegionId) -> Option<&mut RegionDesc> {
        self.desc.regions.get_mut(r.0)
    }

    fn whole(&self, r: RegionId) -> RectDesc {
        self.desc
            .regions
            .get(r.0)
            .map_or([0, 0, 0, 0], |g| [0, 0, g.width, g.height])
    }

    /// Puts the region's north-west PE at global `(x, y)`.
    pub fn place(&mut self, r: RegionId, x: u32, y: u32) {
        if let Some(g) = self.region(r) {
            g.place = Some((x, y));
        }
    }

    /// Sets a param on the PEs `[x0, y0, x1, y1)` of the region.
    pub fn set_param_range(&mut self, r: RegionId, rect: RectDesc, name: &str, value: ParamValue) {
        if let Some(g) = self.region(r) {
            g.params.push(ParamDesc {
                rect,
                name: name.to_string(),
                value,
            });
        }
    }

    /// Sets a param on every PE of the region.
    pub fn set_param_all(&mut self, r: RegionId, name: &str, value: ParamValue) {
        let rect = self.whole(r);
        self.set_param_range(r, rect, name, value);
    }

    /// Routes `color` on the PEs `[x0, y0, x1, y1)` of the region (`edges`: other
    /// positions on some edges of the region).
    pub fn paint_range(
        &mut self,
        r: RegionId,
        rect: RectDesc,
        color: &str,
        positions: Vec<Position>,
        edges: Vec<EdgeRouting>,
    ) {
        if let Some(g) = self.region(r) {
            g.paints.push(PaintDesc {
                rect,
                color: color.to_string(),
                positions,
                edges,
            });
        }
    }

    /// Routes `color` on every PE of the region.
    pub fn paint_all(
        &mut self,
        r: RegionId,
        color: &str,
        positions: Vec<Position>,
        edges: Vec<EdgeRouting>,
    ) {
        let rect = self.whole(r);
        self.paint_range(r, rect, color, positions, edges);
    }

    /// Initial contents of array `name` on every PE: a `height` x `width` matrix of
    /// `elem_bytes`-byte elements cut into equal blocks (see [`SymbolDesc`]).
    pub fn set_symbol_all(
        &mut self,
        r: RegionId,
        name: &str,
        data: Vec<u32>,
        elem_bytes: u32,
        width: u32,
        height: u32,
    ) {
        if let Some(g) = self.region(r) {
            g.symbols.push(SymbolDesc {
                name: name.to_string(),
                data,
                elem_bytes,
                width,
                height,
            });
        }
    }

    fn port(
        &mut self,
        r: RegionId,
        color: &str,
        edge: Edge,
        input: bool,
        positions: Vec<Position>,
        size: u32,
    ) -> PortId {
        self.desc.ports.push(PortDesc {
            region: r.0,
            color: color.to_string(),
            edge,
            input,
            positions,
            size,
        });
        PortId(self.desc.ports.len() - 1)
    }

    /// A port where `size` wavelets of `color` enter the region through the PEs of
    /// `edge`; `positions` give the outputs (the compiler picks the inputs).
    pub fn create_input_port(
        &mut self,
        r: RegionId,
        color: &str,
        edge: Edge,
        positions: Vec<Position>,
        size: u32,
    ) -> PortId {
        self.port(r, color, edge, true, positions, size)
    }

    /// A port where `size` wavelets of `color` leave the region through the PEs of
    /// `edge`; `positions` give the inputs (the compiler picks the outputs).
    pub fn create_output_port(
        &mut self,
        r: RegionId,
        color: &str,
        edge: Edge,
        positions: Vec<Position>,
        size: u32,
    ) -> PortId {
        self.port(r, color, edge, false, positions, size)
    }

    /// Routes the wavelets of an output port to an input port.
    pub fn connect(&mut self, out: PortId, input: PortId) {
        self.desc.connections.push((out.0, input.0));
    }

    /// A host stream into an input port, or out of an output port.
    pub fn create_stream(&mut self, port: PortId) -> StreamId {
        self.desc.streams.push(StreamDesc { port: port.0 });
        StreamId(self.desc.streams.len() - 1)
    }

    /// The description built so far.
    pub fn description(&self) -> &LayoutDesc {
        &self.desc
    }

    /// Compiles the layout ([`compile`]).
    pub fn compile(&self, opts: &SdkLayoutOptions) -> Result<SdkLayoutOutput, SdkLayoutError> {
        compile(&self.desc, opts)
    }
}

/// Reads a description from JSON text.
pub fn parse(json: &str) -> Result<LayoutDesc, SdkLayoutError> {
    serde_json::from_str(json)
        .map_err(|e| SdkLayoutError::Invalid(format!("the layout description is malformed: {e}")))
}

mod check;
mod plan;

pub use plan::compile;
