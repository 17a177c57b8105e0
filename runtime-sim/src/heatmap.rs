//! Heatmaps of a run (`cslsim --heatmap out.png`): the program rectangle as a grid of PE
//! cells coloured by how each PE spent its cycles, with the links between neighbouring
//! routers drawn in the gaps between cells, coloured by use; plus axis labels (PE
//! coordinates, rectangle-relative), a title and a legend. Drawn from the counters of
//! [`RunStats`] (those of `sim_stats.json`) into an RGB image and written as PNG.
//!
//! * **PE cells**: the mix of three colours weighted by the PE's shares of the run's
//!   cycles: light grey for idle, green for busy, red for stalled (a task or microthread
//!   that could not progress). A PE busy all the time is full green; one that did nothing
//!   is light grey.
//! * **Links**: the gap right of a PE holds the two links to its east neighbour (upper
//!   half: eastbound, from it; lower half: westbound, to it); the gap below holds the two
//!   links to its south neighbour (left half: southbound; right half: northbound).
//!   Colour from light grey (no wavelet) to dark blue (the busiest link of the run); the
//!   legend gives that maximum in wavelets per cycle.
//!
//! # Size
//!
//! For a `w` x `h` rectangle, with the pitch `P = clamp(1280 / max(w, h), 8, 40)` pixels
//! per PE (cells are `P - P/4` pixels square, gaps `P/4`):
//! width = [`LEFT`] + `w·P` + [`LEGEND_WIDTH`], height = [`TOP`] + `max(h·P,`
//! [`LEGEND_HEIGHT`]`)` + [`BOTTOM`] ([`layout`]). PE `(x, y)`'s cell starts at
//! `(LEFT + x·P, TOP + y·P)`; row 0 (north) is at the top.
//!
//! Text uses the 8x8 bitmap font of the `font8x8` crate (no font files, no system fonts).

use crate::error::WriteError;
use crate::sim::RunStats;
use font8x8::UnicodeFonts;
use std::path::Path;

/// Left margin (y-axis labels), pixels.
pub const LEFT: u32 = 56;
/// Top margin (title), pixels.
pub const TOP: u32 = 40;
/// Bottom margin (x-axis labels), pixels.
pub const BOTTOM: u32 = 40;
/// Width of the legend right of the grid, pixels.
pub const LEGEND_WIDTH: u32 = 240;
/// Least height of the grid area (room for the legend), pixels.
pub const LEGEND_HEIGHT: u32 = 232;

const WHITE: [u8; 3] = [255, 255, 255];
const BLACK: [u8; 3] = [20, 20, 20];
const GRID_LINE: [u8; 3] = [120, 120, 120];
const IDLE: [u8; 3] = [236, 236, 236];
const BUSY: [u8; 3] = [16, 140, 64];
const STALLED: [u8; 3] = [214, 48, 39];
const LINK_ZERO: [u8; 3] = [222, 222, 230];
const LINK_MAX: [u8; 3] = [25, 50, 170];

/// Where things go in a heatmap of a `w` x `h` rectangle (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Columns of PEs.
    pub w: u32,
    /// Rows of PEs.
    pub h: u32,
    /// Pixels per PE (cell plus gap).
    pub pitch: u32,
    /// Side of a PE cell, pixels.
    pub cell: u32,
    /// Image width, pixels.
    pub width: u32,
    /// Image height, pixels.
    pub height: u32,
}

/// The layout of a heatmap of a `w` x `h` rectangle.
pub fn layout(w: u32, h: u32) -> Layout {
    let pitch = (1280 / w.max(h).max(1)).clamp(8, 40);
    Layout {
        w,
        h,
        pitch,
        cell: pitch - pitch / 4,
        width: LEFT + w.saturating_mul(pitch) + LEGEND_WIDTH,
        height: TOP + h.saturating_mul(pitch).max(LEGEND_HEIGHT) + BOTTOM,
    }
}

impl Layout {
    /// The top-left pixel of PE `(x, y)`'s cell.
    pub fn cell_origin(&self, x: u32, y: u32) -> (u32, u32) {
        (LEFT + x * self.pitch, TOP + y * self.pitch)
    }
}

/// An RGB picture, 8 bits per channel, row-major.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Picture {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width * height` pixels of 3 bytes.
    pub rgb: Vec<u8>,
}

impl Picture {
    fn new(width: u32, height: u32) -> Picture {
        Picture {
            width,
            height,
            rgb: WHITE.repeat(width as usize * height as usize),
        }
    }

    /// The colour of pixel `(x, y)` (white outside the picture).
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 3] {
        if x >= self.width || y >= self.height {
            return WHITE;
        }
        let i = 3 * (y as usize * self.width as usize + x as usize);
        match self.rgb.get(i..i + 3) {
            Some(&[r, g, b]) => [r, g, b],
            _ => WHITE,
        }
    }

    fn put(&mut self, x: u32, y: u32, c: [u8; 3]) {
        if x >= self.width || y >= self.height {
            return;
        }
        let i = 3 * (y as usize * self.width as usize + x as usize);
        if let Some(p) = self.rgb.get_mut(i..i + 3) {
            p.copy_from_slice(&c);
        }
    }

    fn fill(&mut self, x: u32, y: u32, w: u32, h: u32, c: [u8; 3]) {
        for yy in y..y.saturating_add(h).min(self.height) {
            for xx in x..x.saturating_add(w).min(self.width) {
                self.put(xx, yy, c);
            }
        }
    }

    /// An outline one pixel wide.
    fn frame(&mut self, x: u32, y: u32, w: u32, h: u32, c: [u8; 3]) {
        if w == 0 || h == 0 {
            return;
        }
        self.fill(x, y, w, 1, c);
        self.fill(x, y + h - 1, w, 1, c);
        self.fill(x, y, 1, h, c);
        self.fill(x + w - 1, y, 1, h, c);
    }

    /// `s` in the 8x8 font, its top-left corner at `(x, y)`.
    fn text(&mut self, x: u32, y: u32, s: &str, c: [u8; 3]) {
        for (k, ch) in s.chars().enumerate() {
            let Some(glyph) = font8x8::BASIC_FONTS.get(ch) else {
                continue;
            };
            let gx = x + 8 * k as u32;
            for (row, bits) in glyph.iter().enumerate() {
                for col in 0..8u32 {
                    if bits >> col & 1 == 1 {
                        self.put(gx + col, y + row as u32, c);
                    }
                }
            }
        }
    }

    /// A horizontal bar from colour `a` to colour `b`.
    fn gradient(&mut self, x: u32, y: u32, w: u32, h: u32, a: [u8; 3], b: [u8; 3]) {
        for i in 0..w {
            let t = f64::from(i) / f64::from(w.saturating_sub(1).max(1));
            self.fill(x + i, y, 1, h, mix(&[(a, 1.0 - t), (b, t)]));
        }
        self.frame(x, y, w, h, GRID_LINE);
    }

    /// Writes the picture as a PNG file.
    pub fn write_png(&self, path: &Path) -> Result<(), WriteError> {
        let err = |source| WriteError {
            path: path.to_path_buf(),
            source,
        };
        let png_err = |e: png::EncodingError| match e {
            png::EncodingError::IoError(e) => err(e),
            other => err(std::io::Error::other(other.to_string())),
        };
        let file = std::fs::File::create(path).map_err(err)?;
        let mut enc = png::Encoder::new(std::io::BufWriter::new(file), self.width, self.height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc.write_header().map_err(png_err)?;
        w.write_image_data(&self.rgb).map_err(png_err)?;
        w.finish().map_err(png_err)
    }
}

/// The weighted mean of colours (weights summing to 1).
fn mix(parts: &[([u8; 3], f64)]) -> [u8; 3] {
    let mut out = [0u8; 3];
    for (k, o) in out.iter_mut().enumerate() {
        let v: f64 = parts
            .iter()
            .map(|(c, w)| f64::from(c.get(k).copied().unwrap_or(0)) * w)
            .sum();
        *o = v.round().clamp(0.0, 255.0) as u8;
    }
    out
}

/// The colour of a PE that was busy for share `busy` and stalled for share `stalled` of
/// the run's cycles (idle for the rest).
pub fn pe_colour(busy: f64, stalled: f64) -> [u8; 3] {
    let b = busy.clamp(0.0, 1.0);
    let s = stalled.clamp(0.0, 1.0 - b);
    mix(&[(BUSY, b), (STALLED, s), (IDLE, 1.0 - b - s)])
}

/// The colour of a link used `t` of the busiest link's rate (0..=1).
fn link_colour(t: f64) -> [u8; 3] {
    let t = t.clamp(0.0, 1.0);
    mix(&[(LINK_ZERO, 1.0 - t), (LINK_MAX, t)])
}

/// Link ports in [`crate::sim::PeStats::wavelets_sent`] order.
const NORTH: usize = 0;
const SOUTH: usize = 1;
const EAST: usize = 2;
const WEST: usize = 3;

/// The heatmap of a run over a `w` x `h` rectangle (`stats.pes` row-major over it).
pub fn render(stats: &RunStats, w: u32, h: u32) -> Picture {
    let l = layout(w, h);
    let mut pic = Picture::new(l.width, l.height);
    let cycles = stats.cycles.max(1) as f64;
    let at = |x: u32, y: u32| {
        stats
            .pes
            .get(y as usize * w as usize + x as usize)
            .filter(|p| p.pe.rel.x == x && p.pe.rel.y == y)
    };
    let sent = |x: u32, y: u32, d: usize| {
        at(x, y)
            .and_then(|p| p.wavelets_sent.get(d).copied())
            .unwrap_or(0)
    };
    // The busiest link sets the top of the link scale.
    let mut max_link = 0u64;
    for p in &stats.pes {
        for d in [NORTH, SOUTH, EAST, WEST] {
            max_link = max_link.max(p.wavelets_sent.get(d).copied().unwrap_or(0));
        }
    }
    let link = |n: u64| {
        link_colour(if max_link == 0 {
            0.0
        } else {
            n as f64 / max_link as f64
        })
    };
    let (p, c) = (l.pitch, l.cell);
    let gap = p - c;
    for y in 0..h {
        for x in 0..w {
            let (cx, cy) = l.cell_origin(x, y);
            let colour = at(x, y).map_or(IDLE, |s| {
                pe_colour(
                    s.busy_cycles as f64 / cycles,
                    s.stalled_cycles as f64 / cycles,
                )
            });
            pic.fill(cx, cy, c, c, colour);
            if c >= 10 {
                pic.frame(cx, cy, c, c, GRID_LINE);
            }
            if x + 1 < w {
                let half = c / 2;
                pic.fill(cx + c, cy, gap, half, link(sent(x, y, EAST)));
                pic.fill(cx + c, cy + half, gap, c - half, link(sent(x + 1, y, WEST)));
            }
            if y + 1 < h {
                let half = c / 2;
                pic.fill(cx, cy + c, half, gap, link(sent(x, y, SOUTH)));
                pic.fill(
                    cx + half,
                    cy + c,
                    c - half,
                    gap,
                    link(sent(x, y + 1, NORTH)),
                );
            }
        }
    }
    // Axes: PE coordinates, thinned out where the labels would overlap.
    let digits = |v: u32| v.to_string().len() as u32;
    let kx = (digits(w.saturating_sub(1)) * 8 + 4).div_ceil(p).max(1);
    let ky = 12u32.div_ceil(p).max(1);
    let below = TOP + h * p + 4;
    for x in (0..w).step_by(kx as usize) {
        let s = x.to_string();
        let tx = (LEFT + x * p + c / 2).saturating_sub(4 * s.len() as u32);
        pic.text(tx, below, &s, BLACK);
    }
    for y in (0..h).step_by(ky as usize) {
        let s = y.to_string();
        let ty = (TOP + y * p + c / 2).saturating_sub(4);
        pic.text(LEFT.saturating_sub(6 + 8 * s.len() as u32), ty, &s, BLACK);
    }
    pic.text(LEFT + (w * p) / 2, below + 16, "x", BLACK);
    pic.text(8, TOP + (h * p) / 2, "y", BLACK);
    pic.text(
        8,
        12,
        &format!("cslsim: {w}x{h} PEs, {} cycles", stats.cycles),
        BLACK,
    );
    // Legend.
    let lx = LEFT + w * p + 24;
    let mut ly = TOP;
    pic.text(lx, ly, "PE: share of cycles", BLACK);
    ly += 14;
    pic.gradient(lx, ly, 160, 12, IDLE, BUSY);
    ly += 16;
    pic.text(lx, ly, "idle", BLACK);
    pic.text(lx + 160 - 32, ly, "busy", BLACK);
    ly += 14;
    pic.gradient(lx, ly, 160, 12, IDLE, STALLED);
    ly += 16;
    pic.text(lx, ly, "idle", BLACK);
    pic.text(lx + 160 - 56, ly, "stalled", BLACK);
    ly += 24;
    pic.text(lx, ly, "links: wavelets/cycle", BLACK);
    ly += 14;
    pic.gradient(lx, ly, 160, 12, LINK_ZERO, LINK_MAX);
    ly += 16;
    pic.text(lx, ly, "0", BLACK);
    let top = format!("{:.3}", max_link as f64 / cycles);
    pic.text(lx + 160 - 8 * top.len() as u32, ly, &top, BLACK);
    ly += 14;
    pic.text(lx, ly, "gap right: top E, bot. W", BLACK);
    ly += 12;
    pic.text(lx, ly, "gap below: left S, rt. N", BLACK);
    ly += 24;
    let total = |f: fn(&crate::sim::PeStats) -> u64| stats.pes.iter().map(f).sum::<u64>();
    let all = (cycles * stats.pes.len().max(1) as f64).max(1.0);
    pic.text(lx, ly, "all PE-cycles:", BLACK);
    ly += 12;
    for (name, v) in [
        ("busy", total(|s| s.busy_cycles)),
        ("stalled", total(|s| s.stalled_cycles)),
        ("idle", total(|s| s.idle_cycles)),
    ] {
        pic.text(
            lx,
            ly,
            &format!("  {name:<8}{:5.1}%", 100.0 * v as f64 / all),
            BLACK,
        );
        ly += 12;
    }
    pic
}
