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

use crate::diag::render_all;
use crate::driver::{Options, compile_file};
use csl_arch::Arch;
use csl_arch::image::{Image, TilePatch};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt;
use std::path::{Path, PathBuf};

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

/// Routing positions of one colour on one PE.
type Positions = Vec<Position>;

/// A PE (global coordinates).
type Pe = (u32, u32);

const PROXY_FILE: &str = "sdklayout_stream.csl";
const EMPTY_FILE: &str = "sdklayout_empty.csl";
const LAYOUT_FILE: &str = "sdklayout_layout.csl";

/// The stream proxy: forwards every wavelet from its input colour to its output colour.
const PROXY_SOURCE: &str = "\
// Generated by cslc for an SdkLayout host stream: forwards wavelets from `rx` to `tx`.
param rx: color;
param tx: color;
const in_q = @get_input_queue(2);
const out_q = @get_output_queue(2);
const src = @get_dsd(fabin_dsd, .{.extent = 1, .fabric_color = rx, .input_queue = in_q});
const dst = @get_dsd(fabout_dsd, .{.extent = 1, .fabric_color = tx, .output_queue = out_q});
const fwd_id = @get_local_task_id(30);
task fwd() void {
  @mov32(dst, src, .{.async = true, .activate = fwd});
}
comptime {
  @bind_local_task(fwd, fwd_id);
  @activate(fwd_id);
  @initialize_queue(in_q, .{.color = rx});
  if (@is_arch(\"wse3\")) {
    @initialize_queue(out_q, .{.color = tx});
  }
}
";

/// Union-find over colour names.
#[derive(Default)]
struct Classes {
    ids: HashMap<String, usize>,
    parent: Vec<usize>,
}

impl Classes {
    fn id(&mut self, name: &str) -> usize {
        if let Some(&i) = self.ids.get(name) {
            return i;
        }
        let i = self.parent.len();
        self.parent.push(i);
        self.ids.insert(name.to_string(), i);
        i
    }

    fn find(&mut self, mut i: usize) -> usize {
        while self.parent[i] != i {
            self.parent[i] = self.parent[self.parent[i]];
            i = self.parent[i];
        }
        i
    }

    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            self.parent[b] = a;
        }
    }
}

/// A stream proxy's place and colours.
struct Proxy {
    at: (u32, u32),
    port: usize,
    input: bool,
}

/// The working state of one compilation.
struct Planner<'a> {
    desc: &'a LayoutDesc,
    /// North-west corner of every region.
    origin: Vec<(u32, u32)>,
    /// Rectangle size.
    size: (u32, u32),
    /// Region index of every PE (row-major), if any.
    owner: Vec<Option<usize>>,
    /// Proxy PEs.
    proxies: Vec<Proxy>,
    classes: Classes,
    /// Positions per (PE, colour class).
    config: HashMap<((u32, u32), usize), Positions>,
}

/// Compiles a layout into an image (see the module documentation).
pub fn compile(
    desc: &LayoutDesc,
    opts: &SdkLayoutOptions,
) -> Result<SdkLayoutOutput, SdkLayoutError> {
    let arch = match desc.arch.as_str() {
        "wse2" => Arch::Wse2,
        "wse3" => Arch::Wse3,
        other => return invalid(format!("unknown arch `{other}` (wse2 or wse3)")),
    };
    check(desc)?;
    let origin = place(desc)?;
    let mut p = Planner {
        desc,
        origin,
        size: (0, 0),
        owner: Vec::new(),
        proxies: Vec::new(),
        classes: Classes::default(),
        config: HashMap::new(),
    };
    p.size = rectangle(desc, &p.origin);
    p.owner = vec![None; (p.size.0 * p.size.1) as usize];
    for (r, reg) in desc.regions.iter().enumerate() {
        let (ox, oy) = p.origin[r];
        for y in 0..reg.height {
            for x in 0..reg.width {
                let i = p.index((ox + x, oy + y));
                p.owner[i] = Some(r);
            }
        }
    }
    p.paint()?;
    for (a, b) in &desc.connections {
        let (ca, cb) = (desc.ports[*a].color.clone(), desc.ports[*b].color.clone());
        let (ia, ib) = (p.classes.id(&ca), p.classes.id(&cb));
        p.classes.union(ia, ib);
    }
    p.place_proxies()?;
    p.route_all()?;
    let colors = p.allocate(arch)?;
    let host_color = colors.host;
    let streams: Vec<StreamInfo> = p
        .proxies
        .iter()
        .enumerate()
        .map(|(id, px)| StreamInfo {
            id,
            input: px.input,
            x: px.at.0,
            y: px.at.1,
            color: host_color,
            size: desc.ports[px.port].size,
        })
        .collect();
    let source = p.layout_source(opts, &colors)?;
    std::fs::create_dir_all(&opts.work_dir).map_err(|e| {
        SdkLayoutError::Io(format!("cannot create `{}`: {e}", opts.work_dir.display()))
    })?;
    write(&opts.work_dir.join(PROXY_FILE), PROXY_SOURCE)?;
    write(
        &opts.work_dir.join(EMPTY_FILE),
        "// Generated by cslc: a PE of an SdkLayout that runs no code.\n",
    )?;
    let layout_path = opts.work_dir.join(LAYOUT_FILE);
    write(&layout_path, &source)?;
    let copts = Options {
        arch,
        fabric_dims: p.size,
        fabric_offsets: (0, 0),
        memcpy: false,
        optimize: opts.optimize,
        fuel: crate::driver::DEFAULT_FUEL
            + crate::driver::FUEL_PER_PE * u64::from(p.size.0) * u64::from(p.size.1),
        ..Options::default()
    };
    let comp = compile_file(&layout_path, &copts);
    let rendered = render_all(&comp.diagnostics, &comp.sources, false);
    let Some(mut out) = comp.output else {
        return Err(SdkLayoutError::Compile(rendered));
    };
    p.write_symbols(&mut out.image)?;
    let mut names = BTreeMap::new();
    let ids: Vec<(String, usize)> = p.classes.ids.iter().map(|(n, &i)| (n.clone(), i)).collect();
    for (name, id) in ids {
        let root = p.classes.find(id);
        if let Some(&c) = colors.of_class.get(&root) {
            names.insert(name, c);
        }
    }
    let mut metadata = out.metadata;
    if let Some(m) = metadata.as_object_mut() {
        m.insert(
            "sdklayout".into(),
            serde_json::json!({ "streams": streams, "colors": names }),
        );
    }
    Ok(SdkLayoutOutput {
        image: out.image,
        metadata,
        streams,
        colors: names,
        warnings: rendered,
    })
}

fn write(path: &Path, text: &str) -> Result<(), SdkLayoutError> {
    std::fs::write(path, text)
        .map_err(|e| SdkLayoutError::Io(format!("cannot write `{}`: {e}", path.display())))
}

/// Checks names, sizes and references.
fn check(desc: &LayoutDesc) -> Result<(), SdkLayoutError> {
    let mut names = HashMap::new();
    for (i, r) in desc.regions.iter().enumerate() {
        if names.insert(r.name.as_str(), i).is_some() {
            return invalid(format!("two code regions are named `{}`", r.name));
        }
        if r.width == 0 || r.height == 0 || r.width > 1024 || r.height > 1024 {
            return invalid(format!(
                "code region `{}` is {} x {}: width and height must be 1 to 1024",
                r.name, r.width, r.height
            ));
        }
        let inside = |rect: &RectDesc| {
            rect[0] < rect[2] && rect[1] < rect[3] && rect[2] <= r.width && rect[3] <= r.height
        };
        for prm in &r.params {
            if !inside(&prm.rect) {
                return invalid(format!(
                    "param `{}` of code region `{}` is set on PEs {:?} outside its {} x {} PEs",
                    prm.name, r.name, prm.rect, r.width, r.height
                ));
            }
        }
        for pt in &r.paints {
            if !inside(&pt.rect) {
                return invalid(format!(
                    "color `{}` is painted on PEs {:?} outside code region `{}` ({} x {})",
                    pt.color, pt.rect, r.name, r.width, r.height
                ));
            }
            let all = pt
                .positions
                .iter()
                .chain(pt.edges.iter().flat_map(|e| &e.positions));
            if pt.positions.is_empty() || pt.positions.len() > 4 {
                return invalid(format!(
                    "color `{}` of code region `{}` is painted with {} routing positions (1 to 4)",
                    pt.color,
                    r.name,
                    pt.positions.len()
                ));
            }
            for pos in all {
                if pos.rx.is_empty() || pos.tx.is_empty() {
                    return invalid(format!(
                        "a routing position painted for color `{}` in code region `{}` needs \
                         both inputs and outputs",
                        pt.color, r.name
                    ));
                }
            }
        }
        for s in &r.symbols {
            if s.elem_bytes != 2 && s.elem_bytes != 4 {
                return invalid(format!(
                    "symbol `{}`: elements of {} bytes (2 or 4)",
                    s.name, s.elem_bytes
                ));
            }
            if s.width == 0
                || s.height == 0
                || s.width % r.width != 0
                || s.height % r.height != 0
                || s.data.len() as u64 != u64::from(s.width) * u64::from(s.height)
            {
                return invalid(format!(
                    "symbol `{}` of code region `{}`: a {} x {} matrix of {} elements cannot be \
                     cut into equal blocks for {} x {} PEs",
                    s.name,
                    r.name,
                    s.width,
                    s.height,
                    s.data.len(),
                    r.width,
                    r.height
                ));
            }
        }
    }
    for (i, pt) in desc.ports.iter().enumerate() {
        let Some(r) = desc.regions.get(pt.region) else {
            return invalid(format!(
                "port {i} names code region {} of {}",
                pt.region,
                desc.regions.len()
            ));
        };
        if pt.positions.is_empty() || pt.positions.len() > 4 {
            return invalid(format!(
                "port on color `{}` of code region `{}` has {} routing positions (1 to 4)",
                pt.color,
                r.name,
                pt.positions.len()
            ));
        }
        for pos in &pt.positions {
            let own = if pt.input { &pos.tx } else { &pos.rx };
            if own.is_empty() {
                return invalid(format!(
                    "port on color `{}` of code region `{}`: every routing position needs {}",
                    pt.color,
                    r.name,
                    if pt.input { "outputs" } else { "inputs" }
                ));
            }
            if !pt.input && !pos.tx.is_empty() {
                return invalid(format!(
                    "output port on color `{}` of code region `{}` gives output routes; the \
                     compiler chooses them",
                    pt.color, r.name
                ));
            }
        }
    }
    for &(a, b) in &desc.connections {
        let (Some(pa), Some(pb)) = (desc.ports.get(a), desc.ports.get(b)) else {
            return invalid(format!(
                "a connection names port {a} or {b} of {}",
                desc.ports.len()
            ));
        };
        if pa.input || !pb.input {
            return invalid(format!(
                "connect(a, b) needs an output port a and an input port b (colors `{}` and `{}`)",
                pa.color, pb.color
            ));
        }
        if pa.size != pb.size {
            return invalid(format!(
                "connected ports differ in size: `{}` sends {} wavelets, `{}` expects {}",
                pa.color, pa.size, pb.color, pb.size
            ));
        }
    }
    let mut used = vec![0u32; desc.ports.len()];
    for &(a, b) in &desc.connections {
        used[a] += 1;
        used[b] += 1;
    }
    for s in &desc.streams {
        let Some(u) = used.get_mut(s.port) else {
            return invalid(format!(
                "a stream names port {} of {}",
                s.port,
                desc.ports.len()
            ));
        };
        *u += 1;
    }
    if let Some(i) = used.iter().position(|&u| u > 1) {
        return invalid(format!(
            "port on color `{}` is used by {} connections or streams (at most one)",
            desc.ports[i].color, used[i]
        ));
    }
    Ok(())
}

/// Places unplaced regions and checks that no two overlap.
fn place(desc: &LayoutDesc) -> Result<Vec<(u32, u32)>, SdkLayoutError> {
    let mut boxes: Vec<(u32, u32, u32, u32)> = Vec::new();
    let overlaps = |a: (u32, u32, u32, u32), b: (u32, u32, u32, u32)| {
        a.0 < b.0 + b.2 && b.0 < a.0 + a.2 && a.1 < b.1 + b.3 && b.1 < a.1 + a.3
    };
    let mut origin = vec![(0, 0); desc.regions.len()];
    for (i, r) in desc.regions.iter().enumerate() {
        if let Some((x, y)) = r.place {
            if x > 2048 || y > 2048 {
                return invalid(format!(
                    "code region `{}` is placed at ({x}, {y}), beyond 2048",
                    r.name
                ));
            }
            let b = (x, y, r.width, r.height);
            if let Some(j) = boxes.iter().position(|&o| overlaps(o, b)) {
                let other = desc.regions.iter().filter(|r| r.place.is_some()).nth(j);
                return invalid(format!(
                    "code region `{}` at ({x}, {y}) overlaps code region `{}`",
                    r.name,
                    other.map_or("?", |o| o.name.as_str())
                ));
            }
            boxes.push(b);
            origin[i] = (x, y);
        }
    }
    for (i, r) in desc.regions.iter().enumerate() {
        if r.place.is_some() {
            continue;
        }
        let mut found = None;
        'search: for y in 0..2048u32 {
            for x in 0..2048u32 {
                // One free PE of margin on every side that has room for it.
                let margin = (
                    x.saturating_sub(1),
                    y.saturating_sub(1),
                    r.width + 1 + u32::from(x > 0),
                    r.height + 1 + u32::from(y > 0),
                );
                if !boxes.iter().any(|&o| overlaps(o, margin)) {
                    found = Some((x, y));
                    break 'search;
                }
            }
        }
        let Some((x, y)) = found else {
            return invalid(format!("no room for code region `{}`", r.name));
        };
        boxes.push((x, y, r.width, r.height));
        origin[i] = (x, y);
    }
    Ok(origin)
}

/// The image rectangle: the regions' bounding box from (0, 0) and two more columns and
/// rows, room for stream proxies and routes.
fn rectangle(desc: &LayoutDesc, origin: &[(u32, u32)]) -> (u32, u32) {
    let mut w = 1;
    let mut h = 1;
    for (r, &(x, y)) in desc.regions.iter().zip(origin) {
        w = w.max(x + r.width);
        h = h.max(y + r.height);
    }
    (w + 2, h + 2)
}

/// The physical colours chosen.
struct Colors {
    of_class: HashMap<usize, u8>,
    /// The colour of the proxies' host-side queues.
    host: u8,
}

impl Planner<'_> {
    fn index(&self, (x, y): (u32, u32)) -> usize {
        (y * self.size.0 + x) as usize
    }

    fn inside(&self, (x, y): (u32, u32)) -> bool {
        x < self.size.0 && y < self.size.1
    }

    /// Records every paint.
    fn paint(&mut self) -> Result<(), SdkLayoutError> {
        for reg in &self.desc.regions {
            for prm in &reg.params {
                if let ParamValue::Color(c) = &prm.value {
                    self.classes.id(c);
                }
            }
        }
        for pt in &self.desc.ports {
            self.classes.id(&pt.color);
        }
        for (r, reg) in self.desc.regions.iter().enumerate() {
            let (ox, oy) = self.origin[r];
            for pt in &reg.paints {
                let class = self.classes.id(&pt.color);
                for y in pt.rect[1]..pt.rect[3] {
                    for x in pt.rect[0]..pt.rect[2] {
                        let edge = pt
                            .edges
                            .iter()
                            .find(|e| e.edge.holds((x, y), (reg.width, reg.height)));
                        let positions = edge.map_or(&pt.positions, |e| &e.positions);
                        if positions.is_empty() || positions.len() > 4 {
                            return invalid(format!(
                                "color `{}` of code region `{}`: edge routing has {} positions (1 to 4)",
                                pt.color,
                                reg.name,
                                positions.len()
                            ));
                        }
                        self.config
                            .insert(((ox + x, oy + y), class), positions.clone());
                    }
                }
            }
        }
        Ok(())
    }

    /// Finds a free PE near each streamed port's first PE for its proxy.
    fn place_proxies(&mut self) -> Result<(), SdkLayoutError> {
        for s in &self.desc.streams {
            let port = &self.desc.ports[s.port];
            let reg = &self.desc.regions[port.region];
            let pes = port.edge.pes((reg.width, reg.height));
            if pes.len() != 1 {
                return invalid(format!(
                    "a stream needs a one-PE port, but the port on color `{}` spans {} PEs of \
                     edge {:?} of code region `{}`",
                    port.color,
                    pes.len(),
                    port.edge,
                    reg.name
                ));
            }
            let (ox, oy) = self.origin[port.region];
            let start = (ox + pes[0].0, oy + pes[0].1);
            let first = port.edge.outward();
            let order = [first, Dir::North, Dir::South, Dir::West, Dir::East];
            let mut seen = vec![false; self.owner.len()];
            let mut queue = VecDeque::from([start]);
            seen[self.index(start)] = true;
            let mut found = None;
            while let Some(pe) = queue.pop_front() {
                for d in order {
                    let Some(n) = d.step(pe).filter(|&n| self.inside(n)) else {
                        continue;
                    };
                    let i = self.index(n);
                    if seen[i] {
                        continue;
                    }
                    seen[i] = true;
                    if self.owner[i].is_none() && !self.proxies.iter().any(|p| p.at == n) {
                        found = Some(n);
                        break;
                    }
                    queue.push_back(n);
                }
                if found.is_some() {
                    break;
                }
            }
            let Some(at) = found else {
                return Err(SdkLayoutError::Routing(format!(
                    "no free PE for the stream of port `{}`",
                    port.color
                )));
            };
            self.proxies.push(Proxy {
                at,
                port: s.port,
                input: port.input,
            });
        }
        Ok(())
    }

    /// The global PEs of a port.
    fn port_pes(&self, port: usize) -> Vec<(u32, u32)> {
        let pt = &self.desc.ports[port];
        let reg = &self.desc.regions[pt.region];
        let (ox, oy) = self.origin[pt.region];
        pt.edge
            .pes((reg.width, reg.height))
            .into_iter()
            .map(|(x, y)| (ox + x, oy + y))
            .collect()
    }

    /// Routes every connection and stream.
    fn route_all(&mut self) -> Result<(), SdkLayoutError> {
        let desc = self.desc;
        for &(a, b) in &desc.connections {
            let (src, dst) = (self.port_pes(a), self.port_pes(b));
            if src.len() != dst.len() {
                return invalid(format!(
                    "connected ports `{}` ({} PEs) and `{}` ({} PEs) differ in width",
                    desc.ports[a].color,
                    src.len(),
                    desc.ports[b].color,
                    dst.len()
                ));
            }
            let class = self.class_of(&desc.ports[a].color);
            for (&s, &d) in src.iter().zip(&dst) {
                let out_pos = desc.ports[a].positions.clone();
                let in_pos = desc.ports[b].positions.clone();
                self.route(
                    s,
                    Some(out_pos),
                    d,
                    Some(in_pos),
                    class,
                    &desc.ports[a].color,
                )?;
            }
        }
        for i in 0..self.proxies.len() {
            let (at, port, input) = (
                self.proxies[i].at,
                self.proxies[i].port,
                self.proxies[i].input,
            );
            let pe = self.port_pes(port)[0];
            let pt = &desc.ports[port];
            let class = self.class_of(&pt.color);
            let proxy_pos = |rx: Vec<Dir>, tx: Vec<Dir>| Some(vec![Position { rx, tx }]);
            if input {
                self.route(
                    at,
                    proxy_pos(vec![Dir::Ramp], vec![]),
                    pe,
                    Some(pt.positions.clone()),
                    class,
                    &pt.color,
                )?;
            } else {
                self.route(
                    pe,
                    Some(pt.positions.clone()),
                    at,
                    proxy_pos(vec![], vec![Dir::Ramp]),
                    class,
                    &pt.color,
                )?;
            }
        }
        Ok(())
    }

    fn class_of(&mut self, color: &str) -> usize {
        let id = self.classes.id(color);
        self.classes.find(id)
    }

    /// The painted positions of `pe` for class `class` (by any name of the class).
    fn painted(&mut self, pe: (u32, u32), class: usize) -> Option<Positions> {
        let keys: Vec<((u32, u32), usize)> = self
            .config
            .keys()
            .filter(|(p, _)| *p == pe)
            .copied()
            .collect();
        for k in keys {
            if self.classes.find(k.1) == class {
                return self.config.remove(&k);
            }
        }
        None
    }

    /// Finds a path from `src` to `dst` for colour class `class` and records the routers'
    /// positions along it.
    fn route(
        &mut self,
        src: (u32, u32),
        src_pos: Option<Positions>,
        dst: (u32, u32),
        dst_pos: Option<Positions>,
        class: usize,
        color: &str,
    ) -> Result<(), SdkLayoutError> {
        if src == dst {
            return invalid(format!(
                "a connection on color `{color}` starts and ends on one PE"
            ));
        }
        let src_paint = self.painted(src, class);
        let dst_paint = self.painted(dst, class);
        let exits: u8 = match &src_paint {
            Some(p) => {
                p.iter()
                    .flat_map(|q| &q.tx)
                    .map(|d| d.bit())
                    .fold(0, |a, b| a | b)
                    & !1
            }
            None => 0x1E,
        };
        let entries: u8 = match &dst_paint {
            Some(p) => {
                p.iter()
                    .flat_map(|q| &q.rx)
                    .map(|d| d.bit())
                    .fold(0, |a, b| a | b)
                    & !1
            }
            None => 0x1E,
        };
        // Breadth-first search over free PEs.
        let n = self.owner.len();
        let mut from: Vec<Option<Dir>> = vec![None; n];
        let mut seen = vec![false; n];
        seen[self.index(src)] = true;
        let mut queue = VecDeque::from([src]);
        let mut last = None;
        'bfs: while let Some(pe) = queue.pop_front() {
            for d in Dir::LINKS {
                if pe == src && exits & d.bit() == 0 {
                    continue;
                }
                let Some(q) = d.step(pe).filter(|&q| self.inside(q)) else {
                    continue;
                };
                if q == dst {
                    if entries & d.opposite().bit() != 0 {
                        last = Some((pe, d));
                        break 'bfs;
                    }
                    continue;
                }
                let i = self.index(q);
                if seen[i]
                    || self.owner[i].is_some()
                    || self.proxies.iter().any(|p| p.at == q)
                    || self.config.contains_key(&(q, class))
                {
                    continue;
                }
                seen[i] = true;
                from[i] = Some(d);
                queue.push_back(q);
            }
        }
        let Some((mut pe, mut d)) = last else {
            return Err(SdkLayoutError::Routing(format!(
                "no route for color `{color}` from PE ({}, {}) to PE ({}, {}) through PEs \
                 outside the code regions",
                src.0, src.1, dst.0, dst.1
            )));
        };
        // Walk back: `d` leaves `pe` towards the next PE.
        let entry = d.opposite();
        while pe != src {
            let Some(back) = from[self.index(pe)] else {
                break;
            };
            let pos = vec![Position {
                rx: vec![back.opposite()],
                tx: vec![d],
            }];
            self.config.insert((pe, class), pos);
            d = back;
            pe = back.opposite().step(pe).unwrap_or(src);
        }
        let exit = d;
        // A port's positions with the side the route chose filled in; where the PE is
        // also painted, the paint is kept and must agree with them.
        let fill = |given: Option<Positions>,
                    painted: Option<Positions>,
                    rx: Option<Dir>,
                    tx: Option<Dir>,
                    at: Pe|
         -> Result<Positions, SdkLayoutError> {
            let mut p = given.unwrap_or_default();
            for q in &mut p {
                if let Some(r) = rx
                    && q.rx.is_empty()
                {
                    q.rx.push(r);
                }
                if let Some(t) = tx
                    && q.tx.is_empty()
                {
                    q.tx.push(t);
                }
            }
            let Some(painted) = painted else {
                return Ok(p);
            };
            let mask = |d: &[Dir]| d.iter().fold(0u8, |a, d| a | d.bit());
            let same = |a: &Position, b: &Position| {
                mask(&a.rx) == mask(&b.rx) && mask(&a.tx) == mask(&b.tx)
            };
            if let Some(q) = p.iter().find(|q| !painted.iter().any(|pp| same(q, pp))) {
                return Err(SdkLayoutError::Routing(format!(
                    "the port on color `{color}` at PE ({}, {}) needs the routing position \
                     {:?} -> {:?}, which the paint of that PE does not have",
                    at.0, at.1, q.rx, q.tx
                )));
            }
            Ok(painted)
        };
        let s = fill(src_pos, src_paint, None, Some(exit), src)?;
        let t = fill(dst_pos, dst_paint, Some(entry), None, dst)?;
        self.config.insert((src, class), s);
        self.config.insert((dst, class), t);
        Ok(())
    }

    /// Gives every colour class a physical colour.
    fn allocate(&mut self, arch: Arch) -> Result<Colors, SdkLayoutError> {
        let mut roots: Vec<usize> = Vec::new();
        let mut names: Vec<(String, usize)> = self
            .classes
            .ids
            .iter()
            .map(|(n, &i)| (n.clone(), i))
            .collect();
        names.sort();
        for (_, i) in names {
            let r = self.classes.find(i);
            if !roots.contains(&r) {
                roots.push(r);
            }
        }
        let mut switched = vec![false; self.classes.parent.len()];
        let keys: Vec<((u32, u32), usize)> = self.config.keys().copied().collect();
        for k in keys {
            let r = self.classes.find(k.1);
            if self.config.get(&k).is_some_and(|p| p.len() > 1) {
                switched[r] = true;
            }
        }
        let all: Vec<u8> = (0..csl_arch::fabric::NUM_COLORS).collect();
        let mut free_sw: Vec<u8> = all
            .iter()
            .copied()
            .filter(|&c| arch.color_has_switch(c))
            .collect();
        let mut free_plain: Vec<u8> = all
            .iter()
            .copied()
            .filter(|&c| !arch.color_has_switch(c))
            .collect();
        free_sw.reverse();
        free_plain.reverse();
        let mut of_class = HashMap::new();
        let too_many = || {
            SdkLayoutError::Routing(format!(
                "the layout needs more than the {} routable colors",
                csl_arch::fabric::NUM_COLORS
            ))
        };
        // Classes that need switches first, from the colours that have them.
        for &r in roots.iter().filter(|&&r| switched[r]) {
            let c = free_sw.pop().ok_or_else(|| {
                SdkLayoutError::Routing(format!(
                    "more colors need switch positions than {arch} has colors with switches"
                ))
            })?;
            of_class.insert(r, c);
        }
        for &r in roots.iter().filter(|&&r| !switched[r]) {
            let c = free_plain
                .pop()
                .or_else(|| free_sw.pop())
                .ok_or_else(too_many)?;
            of_class.insert(r, c);
        }
        let host = free_plain
            .pop()
            .or_else(|| free_sw.pop())
            .ok_or_else(too_many)?;
        Ok(Colors { of_class, host })
    }

    fn color_of(&mut self, colors: &Colors, name: &str) -> Result<u8, SdkLayoutError> {
        let r = self.class_of(name);
        colors
            .of_class
            .get(&r)
            .copied()
            .ok_or_else(|| SdkLayoutError::Invalid(format!("color `{name}` has no value")))
    }

    /// The generated `layout { ... }` file.
    fn layout_source(
        &mut self,
        opts: &SdkLayoutOptions,
        colors: &Colors,
    ) -> Result<String, SdkLayoutError> {
        let desc = self.desc;
        let (w, h) = self.size;
        let mut s = String::new();
        s.push_str("// Generated by cslc from an SdkLayout description.\nlayout {\n");
        s.push_str(&format!("  @set_rectangle({w}, {h});\n"));
        let mut code: Vec<Option<String>> = vec![None; (w * h) as usize];
        for (r, reg) in desc.regions.iter().enumerate() {
            let file = if reg.file.is_absolute() {
                reg.file.clone()
            } else {
                opts.base_dir.join(&reg.file)
            };
            if !file.is_file() {
                return invalid(format!(
                    "code region `{}`: cannot find its code file `{}`",
                    reg.name,
                    reg.file.display()
                ));
            }
            let file = file.canonicalize().unwrap_or(file);
            let (ox, oy) = self.origin[r];
            for y in 0..reg.height {
                for x in 0..reg.width {
                    let mut params: Vec<(String, String)> = Vec::new();
                    for prm in &reg.params {
                        let [x0, y0, x1, y1] = prm.rect;
                        if !(x0..x1).contains(&x) || !(y0..y1).contains(&y) {
                            continue;
                        }
                        let text = match &prm.value {
                            ParamValue::Int(i) => i.to_string(),
                            ParamValue::Float(f) => {
                                if !f.is_finite() {
                                    return invalid(format!(
                                        "param `{}` is not a finite number",
                                        prm.name
                                    ));
                                }
                                let t = format!("{f}");
                                if t.contains('.') { t } else { format!("{t}.0") }
                            }
                            ParamValue::Color(c) => {
                                format!("@get_color({})", self.color_of(colors, c)?)
                            }
                        };
                        if !is_ident(&prm.name) {
                            return invalid(format!("`{}` is not a param name", prm.name));
                        }
                        params.retain(|(n, _)| *n != prm.name);
                        params.push((prm.name.clone(), text));
                    }
                    let fields: Vec<String> =
                        params.iter().map(|(n, v)| format!(".{n} = {v}")).collect();
                    let i = self.index((ox + x, oy + y));
                    code[i] = Some(format!(
                        "  @set_tile_code({}, {}, {}, .{{ {} }});\n",
                        ox + x,
                        oy + y,
                        csl_string(&file)?,
                        fields.join(", ")
                    ));
                }
            }
        }
        for k in 0..self.proxies.len() {
            let (at, port, input) = (
                self.proxies[k].at,
                self.proxies[k].port,
                self.proxies[k].input,
            );
            let route = self.color_of(colors, &desc.ports[port].color)?;
            let (rx, tx) = if input {
                (colors.host, route)
            } else {
                (route, colors.host)
            };
            let i = self.index(at);
            code[i] = Some(format!(
                "  @set_tile_code({}, {}, \"{PROXY_FILE}\", .{{ .rx = @get_color({rx}), .tx = @get_color({tx}) }});\n",
                at.0, at.1
            ));
        }
        for y in 0..h {
            for x in 0..w {
                match &code[self.index((x, y))] {
                    Some(c) => s.push_str(c),
                    None => s.push_str(&format!("  @set_tile_code({x}, {y}, \"{EMPTY_FILE}\");\n")),
                }
            }
        }
        let mut configs: Vec<((Pe, u8), Positions)> = Vec::new();
        let entries: Vec<((Pe, usize), Positions)> =
            self.config.iter().map(|(k, v)| (*k, v.clone())).collect();
        for ((pe, class), pos) in entries {
            let r = self.classes.find(class);
            let Some(&c) = colors.of_class.get(&r) else {
                continue;
            };
            if configs.iter().any(|((p, cc), _)| *p == pe && *cc == c) {
                return Err(SdkLayoutError::Routing(format!(
                    "PE ({}, {}) is configured twice for color {c}",
                    pe.0, pe.1
                )));
            }
            configs.push(((pe, c), pos));
        }
        configs.sort_by_key(|((pe, c), _)| (pe.1, pe.0, *c));
        for (((x, y), c), pos) in configs {
            s.push_str(&format!(
                "  @set_color_config({x}, {y}, @get_color({c}), {});\n",
                config_text(&pos, x, y)?
            ));
        }
        s.push_str("}\n");
        Ok(s)
    }

    /// Writes the regions' initial arrays into the image.
    fn write_symbols(&self, image: &mut Image) -> Result<(), SdkLayoutError> {
        for (r, reg) in self.desc.regions.iter().enumerate() {
            let (ox, oy) = self.origin[r];
            for sym in &reg.symbols {
                let bw = sym.width / reg.width;
                let bh = sym.height / reg.height;
                for py in 0..reg.height {
                    for px in 0..reg.width {
                        let (x, y) = (ox + px, oy + py);
                        let i = (y * image.meta.width + x) as usize;
                        let class = image
                            .placement
                            .get(i)
                            .and_then(|&c| image.classes.get(c as usize))
                            .ok_or_else(|| {
                                SdkLayoutError::Invalid(format!("PE ({x}, {y}) has no program"))
                            })?;
                        let g = find_global(&class.info.globals, &sym.name).ok_or_else(|| {
                            SdkLayoutError::Invalid(format!(
                                "set_symbol: the program of code region `{}` (`{}`) has no variable `{}`",
                                reg.name, class.info.name, sym.name
                            ))
                        })?;
                        let bytes_needed =
                            u64::from(bw) * u64::from(bh) * u64::from(sym.elem_bytes);
                        if u64::from(g.size) != bytes_needed {
                            return invalid(format!(
                                "set_symbol: `{}` is {} bytes on PE ({x}, {y}) but its block of the \
                                 matrix is {bh} x {bw} elements of {} bytes ({bytes_needed} bytes)",
                                sym.name, g.size, sym.elem_bytes
                            ));
                        }
                        let mut bytes = Vec::with_capacity(bytes_needed as usize);
                        for row in 0..bh {
                            for col in 0..bw {
                                let gi = (py * bh + row) as usize * sym.width as usize
                                    + (px * bw + col) as usize;
                                let word = sym.data.get(gi).copied().unwrap_or(0);
                                if sym.elem_bytes == 4 {
                                    bytes.extend_from_slice(&word.to_le_bytes());
                                } else {
                                    bytes.extend_from_slice(&(word as u16).to_le_bytes());
                                }
                            }
                        }
                        image.tile_memory.push(TilePatch {
                            x,
                            y,
                            addr: g.addr,
                            bytes,
                        });
                    }
                }
            }
        }
        image.validate().map_err(|e| {
            SdkLayoutError::Invalid(format!(
                "the image with the set symbols is not loadable: {e}"
            ))
        })
    }
}

fn find_global<'a>(
    globals: &'a [csl_arch::image::GlobalInfo],
    name: &str,
) -> Option<&'a csl_arch::image::GlobalInfo> {
    let last = |n: &str| -> String {
        let n = n.rsplit("::").next().unwrap_or(n);
        n.rsplit('.').next().unwrap_or(n).to_string()
    };
    globals.iter().find(|g| g.name == name).or_else(|| {
        let mut tail = globals.iter().filter(|g| last(&g.name) == name);
        let first = tail.next();
        if tail.next().is_some() { None } else { first }
    })
}

fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn csl_string(p: &Path) -> Result<String, SdkLayoutError> {
    let s = p.to_str().ok_or_else(|| {
        SdkLayoutError::Invalid(format!("the path `{}` is not valid UTF-8", p.display()))
    })?;
    if s.contains('"') || s.contains('\\') || s.contains('\n') {
        return invalid(format!(
            "the path `{s}` has a character CSL strings cannot hold"
        ));
    }
    Ok(format!("\"{s}\""))
}

fn dirs_text(d: &[Dir]) -> String {
    let names: Vec<&str> = d.iter().map(|d| d.csl()).collect();
    format!(".{{ {} }}", names.join(", "))
}

/// `@set_color_config`'s struct for the positions of one colour on one PE.
fn config_text(pos: &[Position], x: u32, y: u32) -> Result<String, SdkLayoutError> {
    let Some(first) = pos.first() else {
        return Err(SdkLayoutError::Routing(format!(
            "PE ({x}, {y}): a colour with no routes"
        )));
    };
    let mut s = format!(
        ".{{ .routes = .{{ .rx = {}, .tx = {} }}",
        dirs_text(&first.rx),
        dirs_text(&first.tx)
    );
    if pos.len() > 1 {
        let mut sw = Vec::new();
        for (i, p) in pos.iter().enumerate().skip(1) {
            let rx = match p.rx.as_slice() {
                [d] => *d,
                _ => {
                    return Err(SdkLayoutError::Routing(format!(
                        "PE ({x}, {y}): switch position {i} must have exactly one input, not {:?}",
                        p.rx
                    )));
                }
            };
            sw.push(format!(
                ".pos{i} = .{{ .rx = {}, .tx = {} }}",
                rx.csl(),
                dirs_text(&p.tx)
            ));
        }
        s.push_str(&format!(", .switches = .{{ {} }}", sw.join(", ")));
    }
    s.push_str(" }");
    Ok(s)
}
