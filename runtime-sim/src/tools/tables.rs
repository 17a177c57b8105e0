//! `miset`/`miget` of the router and switch tables: the experimental SDK's magic symbols
//! `router` (order `y x r`) and `switch` (order `y x r n`), written and read by name
//! (seed 002). The words are [`csl_arch::tables`]'s; here they are walked over tiles,
//! checked and applied to the image's colour configuration (`Image::routes`).
//!
//! * `symbol=router` / `symbol=switch`: every tile of the image's rectangle, moat ring
//!   included (a Paint image's rectangle is the layout's bounding box from (0, 0)).
//! * `symbol=REGION.router` / `REGION.switch`: the tiles of a named region of the map.
//!
//! A map symbol of the same name (a program global called `router`) wins: the tables are
//! only reached when the map has no such symbol.

use super::ToolError;
use csl_arch::image::{ColorConfig, Image};
use csl_arch::symmap::SymbolMap;
use csl_arch::tables::{
    self, ROUTER_WORDS_PER_TILE, RouterEntry, SWITCH_WORDS_PER_COLOR, config_is_empty,
};
use std::collections::BTreeMap;
use std::path::Path;

/// The table names the experimental SDK reserves.
pub const MAGIC_SYMBOLS: [&str; 2] = ["router", "switch"];

/// Which table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableKind {
    /// One word per colour: `rx`, `tx`, swap, message passing, teardown.
    Router,
    /// Four words per colour: the switch status and positions 1-3.
    Switch,
}

impl TableKind {
    /// The magic symbol name.
    pub fn name(self) -> &'static str {
        match self {
            TableKind::Router => "router",
            TableKind::Switch => "switch",
        }
    }

    /// The table named `name`, if any.
    pub fn from_name(name: &str) -> Option<TableKind> {
        match name {
            "router" => Some(TableKind::Router),
            "switch" => Some(TableKind::Switch),
            _ => None,
        }
    }

    /// The order a data file walks when `order=` is not given (seed 002's).
    pub fn default_order(self) -> &'static str {
        match self {
            TableKind::Router => "y x r",
            TableKind::Switch => "y x r n",
        }
    }

    /// Words per colour.
    pub fn words_per_color(self) -> usize {
        match self {
            TableKind::Router => 1,
            TableKind::Switch => SWITCH_WORDS_PER_COLOR,
        }
    }

    /// Words per tile.
    pub fn words_per_tile(self) -> usize {
        ROUTER_WORDS_PER_TILE * self.words_per_color()
    }

    fn axes(self) -> &'static [TableAxis] {
        match self {
            TableKind::Router => &[TableAxis::Y, TableAxis::X, TableAxis::R],
            TableKind::Switch => &[TableAxis::Y, TableAxis::X, TableAxis::R, TableAxis::N],
        }
    }
}

/// One axis of a table's order string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableAxis {
    /// Rows (`y`).
    Y,
    /// Columns (`x`).
    X,
    /// Colours (`r`, 0..24).
    R,
    /// Switch words of a colour (`n`, 0..4).
    N,
}

impl TableAxis {
    fn letter(self) -> &'static str {
        match self {
            TableAxis::Y => "y",
            TableAxis::X => "x",
            TableAxis::R => "r",
            TableAxis::N => "n",
        }
    }
}

/// Parses a table order: the kind's axes (`y x r`, or `y x r n`), each once, outermost
/// first.
pub fn parse_table_order(kind: TableKind, s: &str) -> Result<Vec<TableAxis>, ToolError> {
    let need = kind.axes();
    let want = || {
        let names: Vec<&str> = need.iter().map(|a| a.letter()).collect();
        format!(
            "the {} table's order names {}, each once, outermost first (default \"{}\")",
            kind.name(),
            names.join(", "),
            kind.default_order()
        )
    };
    let mut axes = Vec::new();
    for t in s.split_whitespace() {
        let Some(a) = need.iter().copied().find(|a| a.letter() == t) else {
            return Err(ToolError::Order(format!("`{t}` in \"{s}\": {}", want())));
        };
        if axes.contains(&a) {
            return Err(ToolError::Order(format!(
                "`{t}` twice in \"{s}\": {}",
                want()
            )));
        }
        axes.push(a);
    }
    if axes.len() != need.len() {
        return Err(ToolError::Order(format!("\"{s}\": {}", want())));
    }
    Ok(axes)
}

/// A table resolved against an image: its tiles and the file order of its words.
#[derive(Clone, Debug)]
pub struct TableTarget {
    /// Which table.
    pub kind: TableKind,
    /// How the symbol was written (`router`, `core.switch`), for messages.
    pub path: String,
    /// The tiles, row by row.
    pub tiles: Vec<(u32, u32)>,
    /// Every (tile index in `tiles`, word index within the tile) in file order.
    pub walk: Vec<(usize, usize)>,
}

impl TableTarget {
    /// Resolves `path` if it names a table (`router`, `switch`, `REGION.router`, ...) that
    /// the map does not list as a program symbol; `Ok(None)` otherwise. `order` is the
    /// `order=` argument, if given.
    pub fn resolve(
        map: &SymbolMap,
        image: &Image,
        path: &str,
        order: Option<&str>,
    ) -> Result<Option<TableTarget>, ToolError> {
        let (region, name) = match path.split_once('.') {
            Some((r, n)) => (Some(r), n),
            None => (None, path),
        };
        let Some(kind) = TableKind::from_name(name) else {
            return Ok(None);
        };
        if region.is_some() && map.lookup(path).is_ok() {
            return Ok(None);
        }
        let (w, h) = (image.meta.width, image.meta.height);
        super::check_map_fits(map, image)?;
        let tiles: Vec<(u32, u32)> = match region {
            None => (0..h).flat_map(|y| (0..w).map(move |x| (x, y))).collect(),
            Some(r) => {
                let Some(reg) = map.regions.iter().find(|g| g.name == r) else {
                    let names: Vec<&str> = map.regions.iter().map(|g| g.name.as_str()).collect();
                    return Err(ToolError::Symbol(format!(
                        "the map has no region `{r}` (for `{path}`); its regions are: {}; or \
                         give `symbol={name}` for every tile of the image",
                        if names.is_empty() {
                            "(none)".to_string()
                        } else {
                            names.join(", ")
                        }
                    )));
                };
                if let Some((x, y)) = reg.tiles.iter().find(|&&(x, y)| x >= w || y >= h) {
                    return Err(ToolError::Symbol(format!(
                        "region `{r}` has tile ({x}, {y}), outside the image's {w}x{h} rectangle"
                    )));
                }
                reg.tiles.clone()
            }
        };
        let axes = parse_table_order(kind, order.unwrap_or(kind.default_order()))?;
        let walk = walk(kind, &tiles, &axes);
        Ok(Some(TableTarget {
            kind,
            path: path.to_string(),
            tiles,
            walk,
        }))
    }

    /// Number of 16-bit words a data file for this table holds.
    pub fn file_words(&self) -> usize {
        self.walk.len()
    }
}

/// The walk of `axes` over `tiles` (sorted row by row): rows and columns are the distinct
/// ones in increasing order; tiles the set lacks are skipped.
fn walk(kind: TableKind, tiles: &[(u32, u32)], axes: &[TableAxis]) -> Vec<(usize, usize)> {
    let mut rows: Vec<u32> = tiles.iter().map(|t| t.1).collect();
    rows.dedup();
    let mut cols: Vec<u32> = tiles.iter().map(|t| t.0).collect();
    cols.sort_unstable();
    cols.dedup();
    let extent = |a: TableAxis| match a {
        TableAxis::Y => rows.len(),
        TableAxis::X => cols.len(),
        TableAxis::R => ROUTER_WORDS_PER_TILE,
        TableAxis::N => kind.words_per_color(),
    };
    let total: usize = axes.iter().map(|&a| extent(a)).product();
    let mut out = Vec::with_capacity(total);
    let mut idx = vec![0usize; axes.len()];
    for _ in 0..total {
        let (mut y, mut x, mut r, mut n) = (0, 0, 0, 0);
        for (&a, &i) in axes.iter().zip(&idx) {
            match a {
                TableAxis::Y => y = rows[i],
                TableAxis::X => x = cols[i],
                TableAxis::R => r = i,
                TableAxis::N => n = i,
            }
        }
        if let Ok(t) = tiles.binary_search_by(|t| (t.1, t.0).cmp(&(y, x))) {
            out.push((t, r * kind.words_per_color() + n));
        }
        // Next index, innermost axis fastest.
        for k in (0..axes.len()).rev() {
            idx[k] += 1;
            if idx[k] < extent(axes[k]) {
                break;
            }
            idx[k] = 0;
        }
    }
    out
}

/// `miset` of a table: decodes every word (any bad word is an error naming the tile and
/// colour, and nothing changes), then rewrites the tiles' colour configuration: the
/// router table sets position 0's ports, swap, message passing and teardown; the switch
/// table sets the switch. Filters stay. A colour left with nothing configured is dropped.
pub fn set_table(
    image: &mut Image,
    target: &TableTarget,
    words: &[u16],
    file: &Path,
) -> Result<(), ToolError> {
    let data_err = |reason: String| ToolError::Data {
        path: file.to_path_buf(),
        reason,
    };
    if words.len() != target.file_words() {
        return Err(data_err(format!(
            "holds {} 16-bit words, but `{}` needs {} tiles x {} colours x {} words = {} \
             words ({} bytes)",
            words.len(),
            target.path,
            target.tiles.len(),
            ROUTER_WORDS_PER_TILE,
            target.kind.words_per_color(),
            target.file_words(),
            2 * target.file_words()
        )));
    }
    let per = target.kind.words_per_tile();
    let mut per_tile = vec![vec![0u16; per]; target.tiles.len()];
    for (&(t, w), &v) in target.walk.iter().zip(words) {
        if let Some(slot) = per_tile.get_mut(t).and_then(|p| p.get_mut(w)) {
            *slot = v;
        }
    }
    let arch = image.meta.arch;
    let mut routes = image.routes.to_vec();
    let mut index: BTreeMap<(u32, u32, u8), usize> = routes
        .iter()
        .enumerate()
        .map(|(i, r)| ((r.x, r.y, r.color), i))
        .collect();
    // Decode everything first, so a bad word leaves the image untouched.
    let mut updates: Vec<((u32, u32, u8), Update)> = Vec::new();
    for (&(x, y), tile_words) in target.tiles.iter().zip(&per_tile) {
        for c in 0..ROUTER_WORDS_PER_TILE {
            let color = c as u8;
            let at = |e: tables::TableError| {
                data_err(format!("`{}` of tile ({x}, {y}): {e}", target.path))
            };
            let u = match target.kind {
                TableKind::Router => {
                    Update::Router(RouterEntry::decode(tile_words[c], color, arch).map_err(at)?)
                }
                TableKind::Switch => {
                    let mut four = [0u16; SWITCH_WORDS_PER_COLOR];
                    four.copy_from_slice(
                        &tile_words[c * SWITCH_WORDS_PER_COLOR..(c + 1) * SWITCH_WORDS_PER_COLOR],
                    );
                    Update::Switch(tables::decode_switch(four, color, arch).map_err(at)?)
                }
            };
            updates.push(((x, y, color), u));
        }
    }
    for ((x, y, color), u) in updates {
        let i = match index.get(&(x, y, color)) {
            Some(&i) => i,
            None if u.is_empty() => continue,
            None => {
                routes.push(ColorConfig::route(x, y, color, Vec::new(), Vec::new()));
                index.insert((x, y, color), routes.len() - 1);
                routes.len() - 1
            }
        };
        if let Some(cfg) = routes.get_mut(i) {
            match u {
                Update::Router(e) => e.apply(cfg),
                Update::Switch(s) => cfg.switches = s,
            }
        }
    }
    routes.retain(|c| !config_is_empty(c));
    routes.sort_by_key(|c| (c.y, c.x, c.color));
    image.routes = routes.into();
    Ok(())
}

enum Update {
    Router(RouterEntry),
    Switch(Option<csl_arch::image::SwitchConfig>),
}

impl Update {
    fn is_empty(&self) -> bool {
        match self {
            Update::Router(e) => e.is_empty(),
            Update::Switch(s) => s.is_none(),
        }
    }
}

/// `miget` of a table: the words of the target's tiles in its file order, encoded from
/// the image's colour configuration (a core's is the image's: the configuration at load).
pub fn get_table(image: &Image, target: &TableTarget) -> Vec<u16> {
    let configs: BTreeMap<(u32, u32, u8), &ColorConfig> = image
        .routes
        .iter()
        .map(|r| ((r.x, r.y, r.color), r.shared()))
        .collect();
    let per = target.kind.words_per_color();
    let tile_words: Vec<Vec<u16>> = target
        .tiles
        .iter()
        .map(|&(x, y)| {
            (0..ROUTER_WORDS_PER_TILE)
                .flat_map(|c| {
                    let cfg = configs.get(&(x, y, c as u8)).copied();
                    match target.kind {
                        TableKind::Router => {
                            vec![cfg.map_or(0, |cfg| RouterEntry::of(cfg).encode())]
                        }
                        TableKind::Switch => {
                            tables::encode_switch(cfg.and_then(|c| c.switches.as_ref())).to_vec()
                        }
                    }
                })
                .collect()
        })
        .collect();
    debug_assert!(
        tile_words
            .iter()
            .all(|t| t.len() == per * ROUTER_WORDS_PER_TILE)
    );
    target
        .walk
        .iter()
        .map(|&(t, w)| {
            tile_words
                .get(t)
                .and_then(|v| v.get(w))
                .copied()
                .unwrap_or(0)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_walk_tables_by_hand() {
        let tiles = [(0, 0), (1, 0)];
        let yxr = parse_table_order(TableKind::Router, "y x r").unwrap();
        let w = walk(TableKind::Router, &tiles, &yxr);
        assert_eq!(w.len(), 48);
        assert_eq!(&w[..2], &[(0, 0), (0, 1)]);
        assert_eq!(w[24], (1, 0));
        let ryx = parse_table_order(TableKind::Router, "r y x").unwrap();
        let w = walk(TableKind::Router, &tiles, &ryx);
        assert_eq!(&w[..3], &[(0, 0), (1, 0), (0, 1)]);
        let nrxy = parse_table_order(TableKind::Switch, "n r x y").unwrap();
        let w = walk(TableKind::Switch, &tiles, &nrxy);
        // Innermost y (one row), then x: tile 0 word 0, tile 1 word 0, tile 0 colour 1 ...
        assert_eq!(&w[..3], &[(0, 0), (1, 0), (0, 4)]);
        assert_eq!(w[48], (0, 1));
    }

    #[test]
    fn bad_table_orders_are_errors() {
        for (k, o) in [
            (TableKind::Router, "y x"),
            (TableKind::Router, "y x r n"),
            (TableKind::Router, "y x _word"),
            (TableKind::Switch, "y x r"),
            (TableKind::Switch, "y x r r"),
        ] {
            assert!(
                matches!(parse_table_order(k, o), Err(ToolError::Order(_))),
                "{o}"
            );
        }
    }
}
