//! The shared machinery of the Tungsten-flow tools `miset`, `simfabric` and `miget`
//! (`src/bin/`; SIMULATOR.md §14 describes them for users).
//!
//! * [`KeyArgs`]: the experimental SDK's `key=value` command lines (unknown keys, repeated
//!   keys, bare words and bad numbers are errors naming the argument).
//! * File I/O with typed errors ([`ToolError`]): images and core files ([`read_image`],
//!   [`write_image`]), symbol maps ([`read_map`]) and data files of 16-bit little-endian
//!   words ([`read_words`], [`write_words`]).
//! * "The memory of tile (x, y)" of an image or core file: its program class's initial
//!   memory (`.data.classN`, zero beyond it) overlaid, in order, with the image's tile
//!   patches (`.csl.tilemem`), i.e. the memory the simulator loads ([`LoadedMemory`]).
//! * [`SymbolTarget`]: a `REGION.SYMBOL` of a map resolved against an image with an
//!   `order`, and the two directions [`set_symbol`] (`miset`) and [`get_symbol`]
//!   (`miget`).
//! * [`tables`]: the router and switch tables by their magic names (`router`, `switch`),
//!   [`TableTarget`], [`set_table`] and [`get_table`].
//! * [`run_fabric`] and [`EndReport`]: a `simfabric` run up to a cycle budget or to
//!   quiescence, and what it left behind (orphan wavelets, blocked tiles).
//! * [`core_image`]: the core-file writer. A core is an image whose tile patches hold, for
//!   every tile whose memory changed, its memory from address 0 to the end of its class's
//!   data (or of its last patch), so `miget` reads a core exactly like an image.
//!
//! Nothing here panics on user input: every failure is a [`ToolError`].

use crate::error::{RoutingError, SimError, Stuck, StuckPlace, Waiting};
use crate::sim::{RunEnd, Simulator};
use csl_arch::fabric::{Arch, PE_MEMORY_BYTES};
use csl_arch::image::{Image, ImageError, TilePatch};
use csl_arch::symmap::{MapRegion, MapSymbol, Order, SymbolMap};
use std::fmt;
use std::path::{Path, PathBuf};

/// The order a data file walks when `order=` is not given.
pub const DEFAULT_ORDER: &str = "y x _word";

pub mod tables;

pub use tables::{MAGIC_SYMBOLS, TableTarget, get_table, set_table};

/// Why a tool failed. Every variant displays as one line.
#[derive(Debug)]
pub enum ToolError {
    /// A bad command line (unknown key, bare word, missing key, bad number...).
    Usage(String),
    /// A file could not be read.
    Read {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A file could not be written.
    Write {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A file is not a valid image (or core), or an image could not be encoded.
    Image {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        source: ImageError,
    },
    /// A file is not a valid symbol map.
    Map {
        /// The file.
        path: PathBuf,
        /// What is wrong (names the line).
        reason: String,
    },
    /// A data file has the wrong size or shape.
    Data {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The symbol cannot be used: not in the map, a reserved name, or outside the image.
    Symbol(String),
    /// A bad `order=` string.
    Order(String),
    /// The simulation failed (a fault or a routing error).
    Sim(SimError),
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolError::Usage(m) | ToolError::Symbol(m) => f.write_str(m),
            ToolError::Read { path, source } => {
                write!(f, "cannot read `{}`: {source}", path.display())
            }
            ToolError::Write { path, source } => {
                write!(f, "cannot write `{}`: {source}", path.display())
            }
            ToolError::Image { path, source } => write!(f, "`{}`: {source}", path.display()),
            ToolError::Map { path, reason } => {
                write!(f, "symbol map `{}`: {reason}", path.display())
            }
            ToolError::Data { path, reason } => {
                write!(f, "data file `{}`: {reason}", path.display())
            }
            ToolError::Order(m) => write!(f, "bad order=: {m}"),
            ToolError::Sim(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ToolError {}

// ---------------------------------------------------------------------------------------
// key=value arguments

/// A parsed `key=value` command line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyArgs {
    /// `(key, value)` in command-line order; each key at most once.
    pairs: Vec<(String, String)>,
}

/// The process's arguments without the program name; an argument that is not UTF-8 is
/// an error.
pub fn process_args() -> Result<Vec<String>, ToolError> {
    std::env::args_os()
        .skip(1)
        .map(|a| {
            a.into_string().map_err(|a| {
                ToolError::Usage(format!(
                    "argument `{}` is not valid UTF-8",
                    a.to_string_lossy()
                ))
            })
        })
        .collect()
}

/// The `main` of a tool called `name`: reads the arguments, prints `help` when asked, runs
/// `run`, and turns an error into one `NAME: error: ...` line and exit status 1.
pub fn tool_main(
    name: &str,
    help: &str,
    run: impl FnOnce(&[String]) -> Result<std::process::ExitCode, ToolError>,
) -> std::process::ExitCode {
    let result = process_args().and_then(|args| {
        if wants_help(&args) {
            print!("{help}");
            Ok(std::process::ExitCode::SUCCESS)
        } else {
            run(&args)
        }
    });
    // In a rank of an MPI run, the error ends the whole job (`crate::dist::exit_error`).
    result.unwrap_or_else(|e| crate::dist::exit_error(1, &format!("{name}: error: {e}")))
}

/// Whether the command line asks for help (`--help`, `-h` or `help`).
pub fn wants_help(args: &[String]) -> bool {
    args.iter()
        .any(|a| a == "--help" || a == "-h" || a == "help")
}

impl KeyArgs {
    /// Parses `args` (without the program name), accepting only the keys in `keys`.
    pub fn parse(args: &[String], keys: &[&str]) -> Result<KeyArgs, ToolError> {
        let list = || {
            keys.iter()
                .map(|k| format!("{k}="))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut pairs: Vec<(String, String)> = Vec::new();
        for a in args {
            let Some((k, v)) = a.split_once('=') else {
                return Err(ToolError::Usage(format!(
                    "unexpected argument `{a}`: arguments are KEY=VALUE, with keys {} (see --help)",
                    list()
                )));
            };
            if !keys.contains(&k) {
                let hint = csl_arch::suggest::closest(k, keys.iter().copied(), 2)
                    .map(|s| format!("did you mean `{s}=`? "))
                    .unwrap_or_default();
                return Err(ToolError::Usage(format!(
                    "unknown key `{k}=` in `{a}`; {hint}the keys are {} (see --help)",
                    list()
                )));
            }
            if pairs.iter().any(|(p, _)| p == k) {
                return Err(ToolError::Usage(format!("`{k}=` is given twice")));
            }
            if v.is_empty() {
                return Err(ToolError::Usage(format!("`{k}=` has no value")));
            }
            pairs.push((k.to_string(), v.to_string()));
        }
        Ok(KeyArgs { pairs })
    }

    /// The value of `key`, if given.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The value of a required key; `what` names the value in the error (`FILE`, `N`).
    pub fn require(&self, key: &str, what: &str) -> Result<&str, ToolError> {
        self.get(key)
            .ok_or_else(|| ToolError::Usage(format!("missing `{key}={what}` (see --help)")))
    }

    /// The value of `key` as a path, if given.
    pub fn path(&self, key: &str) -> Option<PathBuf> {
        self.get(key).map(PathBuf::from)
    }

    /// The value of `key` as a non-negative integer (decimal, or hexadecimal with `0x`;
    /// `_` separators allowed), if given.
    pub fn number(&self, key: &str) -> Result<Option<u64>, ToolError> {
        let Some(v) = self.get(key) else {
            return Ok(None);
        };
        let clean: String = v.chars().filter(|&c| c != '_').collect();
        let parsed = match clean
            .strip_prefix("0x")
            .or_else(|| clean.strip_prefix("0X"))
        {
            Some(h) => u64::from_str_radix(h, 16),
            None => clean.parse(),
        };
        parsed.map(Some).map_err(|_| {
            ToolError::Usage(format!(
                "`{key}={v}` is not a number (give a non-negative integer, decimal or 0x hex)"
            ))
        })
    }
}

// ---------------------------------------------------------------------------------------
// Files

fn read_file(path: &Path) -> Result<Vec<u8>, ToolError> {
    std::fs::read(path).map_err(|source| ToolError::Read {
        path: path.to_path_buf(),
        source,
    })
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), ToolError> {
    std::fs::write(path, bytes).map_err(|source| ToolError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads an image or core file.
pub fn read_image(path: &Path) -> Result<Image, ToolError> {
    let bytes = read_file(path)?;
    Image::from_elf(&bytes).map_err(|source| ToolError::Image {
        path: path.to_path_buf(),
        source,
    })
}

/// Writes an image or core file.
pub fn write_image(path: &Path, image: &Image) -> Result<(), ToolError> {
    let bytes = image.to_elf().map_err(|source| ToolError::Image {
        path: path.to_path_buf(),
        source,
    })?;
    write_file(path, &bytes)
}

/// Reads a symbol map (`.map`).
pub fn read_map(path: &Path) -> Result<SymbolMap, ToolError> {
    let bytes = read_file(path)?;
    let text = String::from_utf8(bytes).map_err(|_| ToolError::Map {
        path: path.to_path_buf(),
        reason: "not UTF-8 text (give the `.map` file that `paint` wrote)".into(),
    })?;
    SymbolMap::parse(&text).map_err(|reason| ToolError::Map {
        path: path.to_path_buf(),
        reason,
    })
}

/// Reads a data file of 16-bit little-endian words.
pub fn read_words(path: &Path) -> Result<Vec<u16>, ToolError> {
    let bytes = read_file(path)?;
    if bytes.len() % 2 != 0 {
        return Err(ToolError::Data {
            path: path.to_path_buf(),
            reason: format!(
                "{} bytes is not a whole number of 16-bit words",
                bytes.len()
            ),
        });
    }
    Ok(bytes
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect())
}

/// Writes a data file of 16-bit little-endian words.
pub fn write_words(path: &Path, words: &[u16]) -> Result<(), ToolError> {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    write_file(path, &bytes)
}

// ---------------------------------------------------------------------------------------
// Memory of a tile at load

/// The memory every tile of an image starts with: its class's initial memory (zero past
/// its end) overlaid, in order, with the image's tile patches.
#[derive(Clone, Debug)]
pub struct LoadedMemory<'a> {
    image: &'a Image,
    /// Per tile (row-major), the indices of its patches in `image.tile_memory`, in order.
    patches: Vec<Vec<usize>>,
}

impl<'a> LoadedMemory<'a> {
    /// Indexes the patches of a validated image (`Image::from_elf` validates).
    pub fn new(image: &'a Image) -> LoadedMemory<'a> {
        let mut patches = vec![Vec::new(); image.placement.len()];
        for (n, p) in image.tile_memory.iter().enumerate() {
            if let Some(i) = tile_index(image, p.x, p.y)
                && let Some(list) = patches.get_mut(i)
            {
                list.push(n);
            }
        }
        LoadedMemory { image, patches }
    }

    /// The initial memory of the class tile `(x, y)` runs (empty outside the rectangle).
    fn class_data(&self, x: u32, y: u32) -> &'a [u8] {
        tile_index(self.image, x, y)
            .and_then(|i| self.image.placement.get(i))
            .and_then(|&c| self.image.classes.get(c as usize))
            .map_or(&[], |c| c.data.as_slice())
    }

    fn tile_patches(&self, x: u32, y: u32) -> impl Iterator<Item = &'a TilePatch> + '_ {
        let image = self.image;
        tile_index(image, x, y)
            .and_then(|i| self.patches.get(i))
            .into_iter()
            .flatten()
            .filter_map(move |&n| image.tile_memory.get(n))
    }

    /// Bytes `addr .. addr + len` of tile `(x, y)`'s memory (bytes past PE memory read 0).
    pub fn read(&self, x: u32, y: u32, addr: u32, len: usize) -> Vec<u8> {
        let mut out = vec![0u8; len];
        let start = addr as usize;
        let mut overlay = |src_start: usize, src: &[u8]| {
            // Copy the part of `src` (placed at `src_start`) that overlaps the window.
            let lo = start.max(src_start);
            let hi = (start + len).min(src_start + src.len());
            if lo < hi
                && let (Some(dst), Some(s)) = (
                    out.get_mut(lo - start..hi - start),
                    src.get(lo - src_start..hi - src_start),
                )
            {
                dst.copy_from_slice(s);
            }
        };
        overlay(0, self.class_data(x, y));
        for p in self.tile_patches(x, y) {
            overlay(p.addr as usize, &p.bytes);
        }
        out
    }

    /// The bytes of tile `(x, y)` a core file keeps: from address 0 to the end of its
    /// class's initial memory or of its last-ending patch, whichever is later.
    pub fn extent(&self, x: u32, y: u32) -> usize {
        self.tile_patches(x, y)
            .map(|p| p.addr as usize + p.bytes.len())
            .fold(self.class_data(x, y).len(), usize::max)
            .min(PE_MEMORY_BYTES as usize)
    }
}

/// Checks that a symbol map describes the image's rectangle.
pub(crate) fn check_map_fits(map: &SymbolMap, image: &Image) -> Result<(), ToolError> {
    let (w, h) = (image.meta.width, image.meta.height);
    if (map.width, map.height) != (w, h) {
        return Err(ToolError::Symbol(format!(
            "the map describes a {}x{} rectangle but the image's is {w}x{h}; give the map \
             `paint` wrote with this image",
            map.width, map.height
        )));
    }
    Ok(())
}

fn tile_index(image: &Image, x: u32, y: u32) -> Option<usize> {
    (x < image.meta.width && y < image.meta.height)
        .then(|| y as usize * image.meta.width as usize + x as usize)
}

/// The memory of tile `(x, y)` at load, from address 0 to [`LoadedMemory::extent`].
pub fn tile_memory(image: &Image, x: u32, y: u32) -> Result<Vec<u8>, ToolError> {
    if tile_index(image, x, y).is_none() {
        return Err(ToolError::Symbol(format!(
            "tile ({x}, {y}) is outside the image's {}x{} rectangle",
            image.meta.width, image.meta.height
        )));
    }
    let m = LoadedMemory::new(image);
    Ok(m.read(x, y, 0, m.extent(x, y)))
}

// ---------------------------------------------------------------------------------------
// Symbols

/// A `REGION.SYMBOL` resolved against a map and an image, with the file order of its
/// words.
#[derive(Clone, Debug)]
pub struct SymbolTarget {
    /// The region.
    pub region: MapRegion,
    /// The symbol.
    pub symbol: MapSymbol,
    /// Every (tile, word index) in file order.
    pub walk: Vec<((u32, u32), u32)>,
}

impl SymbolTarget {
    /// Resolves `path` (`REGION.SYMBOL`) with order string `order`, checking the map
    /// against the image: same rectangle, every tile of the region inside it, the symbol
    /// inside PE memory. The reserved names [`MAGIC_SYMBOLS`] (when the map has no
    /// program symbol of that name) are an error: they are tables ([`TableTarget`]).
    pub fn resolve(
        map: &SymbolMap,
        image: &Image,
        path: &str,
        order: &str,
    ) -> Result<SymbolTarget, ToolError> {
        let order = Order::parse(order).map_err(ToolError::Order)?;
        let name = path.split_once('.').map_or(path, |(_, n)| n);
        if map.lookup(path).is_err() && MAGIC_SYMBOLS.contains(&name) {
            return Err(ToolError::Symbol(format!(
                "symbol `{path}` names the {name} table, not a program symbol: resolve it \
                 with `tables::TableTarget`"
            )));
        }
        let (region, symbol) = map.lookup(path).map_err(ToolError::Symbol)?;
        let (w, h) = (image.meta.width, image.meta.height);
        check_map_fits(map, image)?;
        if let Some((x, y)) = region.tiles.iter().find(|&&(x, y)| x >= w || y >= h) {
            return Err(ToolError::Symbol(format!(
                "region `{}` has tile ({x}, {y}), outside the image's {w}x{h} rectangle",
                region.name
            )));
        }
        if u64::from(symbol.addr) + u64::from(symbol.bytes) > u64::from(PE_MEMORY_BYTES) {
            return Err(ToolError::Symbol(format!(
                "symbol `{path}` (byte 0x{:x}, {} bytes) runs past the {PE_MEMORY_BYTES} bytes \
                 of PE memory",
                symbol.addr, symbol.bytes
            )));
        }
        if symbol.bytes == 0 {
            return Err(ToolError::Symbol(format!(
                "symbol `{path}` is empty (0 bytes)"
            )));
        }
        let walk = order.walk(region, symbol.words());
        Ok(SymbolTarget {
            region: region.clone(),
            symbol: symbol.clone(),
            walk,
        })
    }

    /// Number of 16-bit words a data file for this symbol holds.
    pub fn file_words(&self) -> usize {
        self.walk.len()
    }

    /// The error for a data file of `got` words.
    fn size_error(&self, file: &Path, got: usize) -> ToolError {
        let path = format!("{}.{}", self.symbol.region, self.symbol.name);
        ToolError::Data {
            path: file.to_path_buf(),
            reason: format!(
                "holds {got} 16-bit words, but `{path}` needs {} tiles x {} words = {} words \
                 ({} bytes)",
                self.region.tiles.len(),
                self.symbol.words(),
                self.file_words(),
                2 * self.file_words()
            ),
        }
    }
}

/// `miset`: writes `words` (in the target's file order) into the symbol on every tile of
/// its region, as one tile patch per tile appended to `image` (earlier patches of the same
/// tile that the new one covers entirely are dropped). `file` names the data file in the
/// size error.
pub fn set_symbol(
    image: &mut Image,
    target: &SymbolTarget,
    words: &[u16],
    file: &Path,
) -> Result<(), ToolError> {
    if words.len() != target.file_words() {
        return Err(target.size_error(file, words.len()));
    }
    let n = target.symbol.words() as usize;
    let bytes = target.symbol.bytes as usize;
    let addr = target.symbol.addr;
    // Per tile of the region (in the region's row-major order), the symbol's words.
    let mut per_tile: Vec<Vec<u16>> = vec![vec![0; n]; target.region.tiles.len()];
    for (&((x, y), w), &value) in target.walk.iter().zip(words) {
        let Ok(t) = target
            .region
            .tiles
            .binary_search_by(|t| (t.1, t.0).cmp(&(y, x)))
        else {
            continue;
        };
        if let Some(slot) = per_tile.get_mut(t).and_then(|v| v.get_mut(w as usize)) {
            *slot = value;
        }
    }
    // Earlier patches of the region's tiles that the new ones cover entirely, in one pass
    // (a pass per tile made a whole-wafer `miset` quadratic: 6 minutes for 732,600 tiles).
    // Every new patch spans `addr .. addr + bytes` (`2 n >= bytes`).
    let end = addr as usize + bytes;
    let tiles = &target.region.tiles;
    image.tile_memory.retain(|p| {
        let covered = p.addr >= addr && p.addr as usize + p.bytes.len() <= end;
        !(covered
            && tiles
                .binary_search_by(|t| (t.1, t.0).cmp(&(p.y, p.x)))
                .is_ok())
    });
    image.tile_memory.reserve(tiles.len());
    for (&(x, y), values) in tiles.iter().zip(per_tile) {
        let mut b: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        b.truncate(bytes);
        image.tile_memory.push(TilePatch {
            x,
            y,
            addr,
            bytes: b,
        });
    }
    Ok(())
}

/// `miget`: the symbol on every tile of the target's region, in its file order, as the
/// tiles' memory at load (class data and tile patches). An odd-sized symbol's last word
/// has a zero high byte.
pub fn get_symbol(image: &Image, target: &SymbolTarget) -> Vec<u16> {
    let mem = LoadedMemory::new(image);
    let bytes = target.symbol.bytes as usize;
    let values: Vec<Vec<u8>> = target
        .region
        .tiles
        .iter()
        .map(|&(x, y)| {
            let mut b = mem.read(x, y, target.symbol.addr, bytes);
            b.resize(2 * target.symbol.words() as usize, 0);
            b
        })
        .collect();
    target
        .walk
        .iter()
        .map(|&((x, y), w)| {
            let t = target
                .region
                .tiles
                .binary_search_by(|t| (t.1, t.0).cmp(&(y, x)))
                .ok();
            let at = 2 * w as usize;
            t.and_then(|t| values.get(t))
                .and_then(|b| b.get(at..at + 2))
                .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// simfabric

/// How a [`run_fabric`] run stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Nothing could move any more (the vendor's "no data movement").
    Quiescent,
    /// The cycle budget ran out while the fabric was still active.
    Budget,
    /// A PE faulted, or the fabric could not carry a wavelet.
    Failed(SimError),
}

/// What a run left behind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EndReport {
    /// Every non-empty router input buffer and CE input queue, with (up to
    /// [`EndReport::SHOWN_PAYLOADS`]) payloads of its oldest wavelets (`true`: control).
    pub left: Vec<(Stuck, Vec<(u32, bool)>)>,
    /// Tiles held by a synchronous operation, an asynchronous one that cannot send, or a
    /// task waiting for a busy microthread.
    pub blocked: Vec<Waiting>,
    /// Asynchronous operations still waiting for input (a "server" receive that is
    /// legitimately idle, or a `parallel` block that never completed).
    pub waiting_input: Vec<Waiting>,
}

impl EndReport {
    /// Payloads shown per buffer.
    pub const SHOWN_PAYLOADS: usize = 4;

    /// Collects the report of a simulator that stopped.
    pub fn collect(sim: &Simulator) -> EndReport {
        let (blocked, stuck) = sim.blocked_report(false);
        let (all_waits, _) = sim.blocked_report(true);
        let waiting_input = all_waits
            .into_iter()
            .filter(|w| !blocked.contains(w))
            .collect();
        let left = stuck
            .into_iter()
            .map(|s| {
                let payloads = payloads(sim, &s);
                (s, payloads)
            })
            .collect();
        EndReport {
            left,
            blocked,
            waiting_input,
        }
    }

    /// Total wavelets left in buffers.
    pub fn wavelets_left(&self) -> u64 {
        self.left.iter().map(|(s, _)| u64::from(s.count)).sum()
    }

    /// The report's lines (without a tool prefix), for stderr and the log. `stop` decides
    /// the wording: after quiescence what is left is orphaned; at the budget it may still
    /// be on its way.
    pub fn lines(&self, stop: &Stop) -> Vec<String> {
        let mut out = Vec::new();
        if !self.left.is_empty() {
            let tiles = {
                let mut t: Vec<_> = self.left.iter().map(|(s, _)| s.pe).collect();
                t.sort();
                t.dedup();
                t.len()
            };
            out.push(match stop {
                Stop::Quiescent => format!(
                    "warning: {} orphan wavelet(s) on {tiles} tile(s) were never consumed (a \
                     send nobody receives: a later receive on the colour would read a stale \
                     wavelet)",
                    self.wavelets_left()
                ),
                _ => format!(
                    "warning: {} wavelet(s) on {tiles} tile(s) were still in buffers when the \
                     run stopped",
                    self.wavelets_left()
                ),
            });
            for (s, p) in &self.left {
                let label = if matches!(stop, Stop::Quiescent) {
                    "orphan"
                } else {
                    "queued"
                };
                let mut line = format!("  {label}: {s}");
                if !p.is_empty() {
                    let shown: Vec<String> = p
                        .iter()
                        .map(|&(d, c)| {
                            if c {
                                format!("control 0x{d:08x}")
                            } else {
                                format!("0x{d:08x}")
                            }
                        })
                        .collect();
                    let more = if s.count as usize > p.len() {
                        ", ..."
                    } else {
                        ""
                    };
                    line.push_str(&format!(" (oldest first: {}{more})", shown.join(", ")));
                }
                out.push(line);
            }
        }
        if !self.blocked.is_empty() {
            out.push(format!(
                "warning: {} wait(s) on tiles still blocked in a send or receive",
                self.blocked.len()
            ));
            for w in &self.blocked {
                out.push(format!("  blocked: {}: {}", w.pe, w.reason));
            }
        }
        if !self.waiting_input.is_empty() {
            out.push(format!(
                "note: {} asynchronous receive(s) still wait for input (fine for a server \
                 receive; otherwise a parallel block never completed)",
                self.waiting_input.len()
            ));
            for w in &self.waiting_input {
                out.push(format!("  waiting: {}: {}", w.pe, w.reason));
            }
        }
        out
    }
}

/// Payloads of the oldest wavelets of a buffer named in a [`Stuck`] entry.
fn payloads(sim: &Simulator, s: &Stuck) -> Vec<(u32, bool)> {
    let (x, y) = (s.pe.rel.x, s.pe.rel.y);
    let ring = match s.place {
        StuckPlace::RouterInput(d) => sim
            .router(x, y)
            .and_then(|r| r.color(s.color))
            .and_then(|cs| cs.rings.get(usize::from(d.index()))),
        StuckPlace::CeInput { queue } => {
            let b = match (sim.arch(), queue) {
                (Arch::Wse3, Some(q)) => usize::from(q),
                _ => usize::from(s.color),
            };
            sim.pe(x, y).and_then(|pe| pe.inq.get(b))
        }
        StuckPlace::HostPath => None,
    };
    let Some(ring) = ring else {
        return Vec::new();
    };
    (0..EndReport::SHOWN_PAYLOADS)
        .filter_map(|i| ring.nth(i))
        .map(|w| (w.data, w.is_ctrl()))
        .collect()
}

/// One `simfabric` run.
#[derive(Clone, Debug)]
pub struct FabricRun {
    /// The simulator in its final state.
    pub sim: Simulator,
    /// Why it stopped.
    pub stop: Stop,
    /// What it left behind (empty after a failure).
    pub report: EndReport,
}

/// Loads `image` and runs it until nothing can move or the clock reaches `cycles`, on
/// `threads` threads (`None`: the default, [`crate::default_threads`]; the result is the
/// same for every number). Fails only if the image cannot be loaded (`path` names it in
/// the error); faults and routing errors are [`Stop::Failed`] so the caller can still
/// write the core.
pub fn run_fabric(
    image: &Image,
    path: &Path,
    cycles: u64,
    threads: Option<usize>,
) -> Result<FabricRun, ToolError> {
    run_fabric_recorded(image, path, cycles, threads, None)
}

/// [`run_fabric`], recording timelines of the PEs `perfetto` selects
/// ([`Simulator::perfetto_trace`] then has them; the run is the same).
pub fn run_fabric_recorded(
    image: &Image,
    path: &Path,
    cycles: u64,
    threads: Option<usize>,
    perfetto: Option<crate::perfetto::PerfettoConfig>,
) -> Result<FabricRun, ToolError> {
    let mut sim = Simulator::new(image).map_err(|source| ToolError::Image {
        path: path.to_path_buf(),
        source,
    })?;
    if let Some(t) = threads {
        sim.set_threads(t);
    }
    // Under `mpirun -n R` (feature `mpi`) this process steps its strip of rows.
    crate::dist::join_mpi(&mut sim).map_err(|e| ToolError::Usage(e.to_string()))?;
    sim.set_perfetto(perfetto);
    let stop = match sim.run_until(|_| false, cycles) {
        Ok(RunEnd::Idle | RunEnd::Condition) => Stop::Quiescent,
        Err(SimError::CycleLimit { .. }) => Stop::Budget,
        Err(e) => Stop::Failed(e),
    };
    if matches!(stop, Stop::Failed(_)) && sim.rank().is_some() {
        // Every rank failed alike (the ranks agree on faults and routing errors; no
        // interrupt is set here): the gather below is safe.
        crate::dist::mark_shared_failure();
    }
    sim.gather();
    let report = match stop {
        Stop::Failed(_) => EndReport::default(),
        _ => EndReport::collect(&sim),
    };
    Ok(FabricRun { sim, stop, report })
}

/// A hint for errors whose cause a Tungsten user knows by another name.
pub fn sim_error_hint(e: &SimError) -> Option<&'static str> {
    match e {
        SimError::Routing {
            kind: RoutingError::MessagePassingOff { .. },
            ..
        } => Some(
            "the vendor fabric drops such messages silently; enable message passing on every \
             tile of the path with mp() in the Paint file",
        ),
        SimError::Routing {
            kind: RoutingError::OffEdge { .. },
            ..
        } => Some("the wavelet would leave the fabric; check the routes painted on edge tiles"),
        _ => None,
    }
}

/// The core file of a run: `image` with its tile patches replaced, per tile, by one patch
/// holding the tile's final memory from address 0 to [`LoadedMemory::extent`] when that
/// differs from its memory at load, and by its original patches otherwise.
pub fn core_image(image: &Image, sim: &Simulator) -> Image {
    let loaded = LoadedMemory::new(image);
    let mut patches = Vec::new();
    for y in 0..image.meta.height {
        for x in 0..image.meta.width {
            let end = loaded.extent(x, y);
            let before = loaded.read(x, y, 0, end);
            let after = sim.pe(x, y).and_then(|pe| pe.read_memory(0, end));
            if after.as_ref().is_none_or(|a| *a == before) {
                patches.extend(loaded.tile_patches(x, y).cloned());
            } else {
                patches.push(TilePatch {
                    x,
                    y,
                    addr: 0,
                    bytes: after.unwrap_or_default(),
                });
            }
        }
    }
    let mut core = image.clone();
    core.tile_memory = patches;
    core
}

/// The default core path: `STEM-sim.core` next to the image.
pub fn default_core_path(image: &Path) -> PathBuf {
    let stem = image
        .file_stem()
        .map_or_else(|| "image".into(), |s| s.to_string_lossy().into_owned());
    image.with_file_name(format!("{stem}-sim.core"))
}
