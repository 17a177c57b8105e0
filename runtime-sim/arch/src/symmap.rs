//! The symbol map (`.map` file) that `paint` writes next to an image and that `miset` and
//! `miget` read: which tiles each named region (`name('g)` in Paint) covers, and where each
//! of its program's symbols lives in PE memory. One definition of the format, used by the
//! writer and both readers.
//!
//! # Format (text, one entry per line, `#` starts a comment line)
//!
//! ```text
//! # csl symbol map 1
//! fabric 34 18 wse3
//! region core rect 1 1 32 16
//! region odd tiles 1,1 3,1
//! symbol core.pos0 addr=0x0100 bytes=160 elem=sp order="y x _word"
//! ```
//!
//! * `fabric W H ARCH`: the image's rectangle.
//! * `region NAME rect X Y W H` or `region NAME tiles X,Y ...`: the tiles, listed row by
//!   row (rows outermost).
//! * `symbol REGION.NAME addr=A bytes=N elem=T order="..."`: a symbol of the region's
//!   program at byte address `A`, `N` bytes long, of element type `T` (a Tungsten type
//!   name). `order` is the default walk for `miset`/`miget` (a shell script can scrape it).
//!
//! Data files walk the region's tiles in the order an `order` string gives (see
//! [`Order`]), each tile contributing the symbol's 16-bit little-endian words.

use std::fmt::Write as _;

/// The first line of every map.
pub const MAP_HEADER: &str = "# csl symbol map 1";

/// A parsed symbol map.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SymbolMap {
    /// Width of the image's rectangle.
    pub width: u32,
    /// Height of the image's rectangle.
    pub height: u32,
    /// Architecture name (`wse2`, `wse3`).
    pub arch: String,
    /// Named regions.
    pub regions: Vec<MapRegion>,
    /// Symbols of the named regions.
    pub symbols: Vec<MapSymbol>,
}

/// A named set of tiles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapRegion {
    /// The name given with `name('g)`.
    pub name: String,
    /// Tiles `(x, y)`, sorted by row, then column.
    pub tiles: Vec<(u32, u32)>,
}

impl MapRegion {
    /// The bounding box `(x, y, w, h)` if the tiles fill it exactly.
    pub fn as_rect(&self) -> Option<(u32, u32, u32, u32)> {
        let x0 = self.tiles.iter().map(|t| t.0).min()?;
        let y0 = self.tiles.iter().map(|t| t.1).min()?;
        let x1 = self.tiles.iter().map(|t| t.0).max()?;
        let y1 = self.tiles.iter().map(|t| t.1).max()?;
        let (w, h) = (x1 - x0 + 1, y1 - y0 + 1);
        (u64::from(w) * u64::from(h) == self.tiles.len() as u64).then_some((x0, y0, w, h))
    }

    /// Distinct rows, in order.
    pub fn rows(&self) -> Vec<u32> {
        let mut r: Vec<u32> = self.tiles.iter().map(|t| t.1).collect();
        r.sort_unstable();
        r.dedup();
        r
    }

    /// Distinct columns, in order.
    pub fn cols(&self) -> Vec<u32> {
        let mut c: Vec<u32> = self.tiles.iter().map(|t| t.0).collect();
        c.sort_unstable();
        c.dedup();
        c
    }
}

/// One symbol of a region's program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapSymbol {
    /// Region name.
    pub region: String,
    /// Symbol name in the program.
    pub name: String,
    /// Byte address.
    pub addr: u32,
    /// Size in bytes.
    pub bytes: u32,
    /// Element type name.
    pub elem: String,
}

impl MapSymbol {
    /// Size in 16-bit words (rounded up).
    pub fn words(&self) -> u32 {
        self.bytes.div_ceil(2)
    }
}

/// One axis of an `order` string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    /// Rows of the region (`y`).
    Y,
    /// Columns of the region (`x`).
    X,
    /// The symbol's 16-bit words (`_word`).
    Word,
}

/// A walk over (row, column, word): `order="y x _word"` is rows outermost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Order(pub [Axis; 3]);

impl Order {
    /// Parses an order string: the three names `y`, `x` and `_word` (also `word`), each once,
    /// outermost first, separated by spaces.
    pub fn parse(s: &str) -> Result<Order, String> {
        let mut axes = Vec::new();
        for t in s.split_whitespace() {
            let a = match t {
                "y" => Axis::Y,
                "x" => Axis::X,
                "_word" | "word" => Axis::Word,
                other => {
                    return Err(format!(
                        "order names `{other}`; an order is `y`, `x` and `_word`, each once, outermost first (e.g. \"y x _word\")"
                    ));
                }
            };
            if axes.contains(&a) {
                return Err(format!("order names `{t}` twice"));
            }
            axes.push(a);
        }
        match axes.as_slice() {
            [a, b, c] => Ok(Order([*a, *b, *c])),
            _ => Err(format!(
                "order \"{s}\" has {} axes; it needs `y`, `x` and `_word` (e.g. \"y x _word\")",
                axes.len()
            )),
        }
    }

    /// Every (tile, word index) of the walk over `region` for a symbol of `words` words,
    /// in file order. Tiles missing from a non-rectangular region are skipped.
    pub fn walk(&self, region: &MapRegion, words: u32) -> Vec<((u32, u32), u32)> {
        let rows = region.rows();
        let cols = region.cols();
        let word_ix: Vec<u32> = (0..words).collect();
        let extent = |a: Axis| match a {
            Axis::Y => rows.len(),
            Axis::X => cols.len(),
            Axis::Word => word_ix.len(),
        };
        let [a0, a1, a2] = self.0;
        let mut out = Vec::new();
        for i in 0..extent(a0) {
            for j in 0..extent(a1) {
                for k in 0..extent(a2) {
                    let (mut y, mut x, mut w) = (0, 0, 0);
                    for (axis, n) in [(a0, i), (a1, j), (a2, k)] {
                        match axis {
                            Axis::Y => y = rows[n],
                            Axis::X => x = cols[n],
                            Axis::Word => w = word_ix[n],
                        }
                    }
                    if region
                        .tiles
                        .binary_search_by(|t| (t.1, t.0).cmp(&(y, x)))
                        .is_ok()
                    {
                        out.push(((x, y), w));
                    }
                }
            }
        }
        out
    }
}

impl SymbolMap {
    /// Writes the map as text.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "{MAP_HEADER}");
        let _ = writeln!(s, "fabric {} {} {}", self.width, self.height, self.arch);
        for r in &self.regions {
            match r.as_rect() {
                Some((x, y, w, h)) => {
                    let _ = writeln!(s, "region {} rect {x} {y} {w} {h}", r.name);
                }
                None => {
                    let tiles: Vec<String> =
                        r.tiles.iter().map(|(x, y)| format!("{x},{y}")).collect();
                    let _ = writeln!(s, "region {} tiles {}", r.name, tiles.join(" "));
                }
            }
        }
        for m in &self.symbols {
            let _ = writeln!(
                s,
                "symbol {}.{} addr=0x{:04x} bytes={} elem={} order=\"y x _word\"",
                m.region, m.name, m.addr, m.bytes, m.elem
            );
        }
        s
    }

    /// Parses a map written by [`SymbolMap::to_text`]. Errors name the line.
    pub fn parse(text: &str) -> Result<SymbolMap, String> {
        let mut map = SymbolMap::default();
        let mut saw_header = false;
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            let at = |why: String| format!("line {}: {why}", n + 1);
            if line == MAP_HEADER {
                saw_header = true;
                continue;
            }
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            let num = |s: &str| -> Result<u32, String> {
                let r = match s.strip_prefix("0x") {
                    Some(h) => u32::from_str_radix(h, 16),
                    None => s.parse(),
                };
                r.map_err(|_| at(format!("`{s}` is not a number")))
            };
            match words.as_slice() {
                ["fabric", w, h, arch] => {
                    map.width = num(w)?;
                    map.height = num(h)?;
                    map.arch = (*arch).to_string();
                }
                ["region", name, "rect", x, y, w, h] => {
                    let (x, y, w, h) = (num(x)?, num(y)?, num(w)?, num(h)?);
                    if u64::from(w) * u64::from(h) > 1 << 24 {
                        return Err(at("region too large".into()));
                    }
                    let tiles = (y..y.saturating_add(h))
                        .flat_map(|yy| (x..x.saturating_add(w)).map(move |xx| (xx, yy)))
                        .collect();
                    map.regions.push(MapRegion {
                        name: (*name).to_string(),
                        tiles,
                    });
                }
                ["region", name, "tiles", rest @ ..] => {
                    let mut tiles = Vec::new();
                    for t in rest {
                        let (x, y) = t
                            .split_once(',')
                            .ok_or_else(|| at(format!("`{t}` is not a tile `X,Y`")))?;
                        tiles.push((num(x)?, num(y)?));
                    }
                    tiles.sort_by_key(|&(x, y)| (y, x));
                    tiles.dedup();
                    map.regions.push(MapRegion {
                        name: (*name).to_string(),
                        tiles,
                    });
                }
                ["symbol", path, fields @ ..] => {
                    let (region, name) = path
                        .split_once('.')
                        .ok_or_else(|| at(format!("`{path}` is not `REGION.SYMBOL`")))?;
                    let mut sym = MapSymbol {
                        region: region.to_string(),
                        name: name.to_string(),
                        addr: 0,
                        bytes: 0,
                        elem: String::new(),
                    };
                    for f in fields {
                        match f.split_once('=') {
                            Some(("addr", v)) => sym.addr = num(v)?,
                            Some(("bytes", v)) => sym.bytes = num(v)?,
                            Some(("elem", v)) => sym.elem = v.to_string(),
                            // The order string is advice for scripts; it may hold spaces.
                            _ => {}
                        }
                    }
                    map.symbols.push(sym);
                }
                _ => return Err(at(format!("cannot read `{line}`"))),
            }
        }
        if !saw_header {
            return Err(format!(
                "not a symbol map (its first line is not `{MAP_HEADER}`); give the `.map` file that `paint` wrote"
            ));
        }
        Ok(map)
    }

    /// Finds `REGION.SYMBOL`. The error lists what the map does have.
    pub fn lookup(&self, path: &str) -> Result<(&MapRegion, &MapSymbol), String> {
        let Some((region, name)) = path.split_once('.') else {
            return Err(format!(
                "symbol `{path}` is not of the form REGION.SYMBOL (e.g. core.pos0)"
            ));
        };
        let Some(r) = self.regions.iter().find(|r| r.name == region) else {
            let names: Vec<&str> = self.regions.iter().map(|r| r.name.as_str()).collect();
            return Err(format!(
                "the map has no region `{region}`; its regions are: {}",
                if names.is_empty() {
                    "(none: name one with name('g) in Paint)".to_string()
                } else {
                    names.join(", ")
                }
            ));
        };
        let Some(s) = self
            .symbols
            .iter()
            .find(|s| s.region == region && s.name == name)
        else {
            let names: Vec<&str> = self
                .symbols
                .iter()
                .filter(|s| s.region == region)
                .map(|s| s.name.as_str())
                .collect();
            return Err(format!(
                "region `{region}` has no symbol `{name}`; its symbols are: {}",
                names.join(", ")
            ));
        };
        Ok((r, s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> SymbolMap {
        SymbolMap {
            width: 4,
            height: 3,
            arch: "wse3".into(),
            regions: vec![
                MapRegion {
                    name: "core".into(),
                    tiles: vec![(1, 1), (2, 1)],
                },
                MapRegion {
                    name: "odd".into(),
                    tiles: vec![(0, 0), (2, 2)],
                },
            ],
            symbols: vec![MapSymbol {
                region: "core".into(),
                name: "pos".into(),
                addr: 0x100,
                bytes: 8,
                elem: "sp".into(),
            }],
        }
    }

    #[test]
    fn text_round_trips() {
        let m = sample();
        assert_eq!(SymbolMap::parse(&m.to_text()), Ok(m));
    }

    #[test]
    fn lookup_explains_misses() {
        let m = sample();
        assert!(m.lookup("core.pos").is_ok());
        assert!(m.lookup("core.nope").unwrap_err().contains("pos"));
        assert!(m.lookup("none.pos").unwrap_err().contains("core"));
        assert!(m.lookup("nodot").is_err());
    }

    #[test]
    fn orders_walk_rows_outermost() {
        let m = sample();
        let r = &m.regions[0];
        let o = Order::parse("y x _word").unwrap();
        assert_eq!(
            o.walk(r, 2),
            vec![((1, 1), 0), ((1, 1), 1), ((2, 1), 0), ((2, 1), 1)]
        );
        let o = Order::parse("_word x y").unwrap();
        assert_eq!(
            o.walk(r, 2),
            vec![((1, 1), 0), ((2, 1), 0), ((1, 1), 1), ((2, 1), 1)]
        );
        assert!(Order::parse("y y _word").is_err());
        assert!(Order::parse("y x").is_err());
        assert!(Order::parse("y x z").is_err());
    }

    #[test]
    fn bad_text_is_an_error() {
        assert!(SymbolMap::parse("garbage").is_err());
        assert!(SymbolMap::parse(&format!("{MAP_HEADER}\nregion a rect x 1 1 1")).is_err());
    }
}
