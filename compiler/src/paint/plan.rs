//! From evaluated actions to the fabric: the image rectangle, every tile's router
//! configuration (routes, colour swap, message passing), the program and socket bindings
//! of every tile, and the named regions.
//!
//! Rules (also in `README.md` beside this file):
//! * The layout's bounding box from (0, 0) is the image rectangle; tiles in it but in no
//!   region of the layout get no program and no routes. An action on a tile outside the
//!   layout is an error.
//! * Edge suppression `|S` removes side `S` from every route of the `paint()` on the tiles
//!   of the region whose `S` neighbour is not in the region; a route left without inputs
//!   or outputs is dropped.
//! * A route that sends toward a side where the layout has no tile is an error.
//! * Routes of one colour on one tile (from one or several `paint()`s) merge into one
//!   `rx`/`tx` set when that sends every input to exactly the outputs its routes name;
//!   otherwise they need a switch, which is an error.
//! * `colorpair(a b)` on a tile: both colours swap on every axis that a route of `a` or
//!   `b` on that tile receives from, so a wavelet sent as `b` by the neighbour is handled
//!   as `a` here (and the other way round). A socket bound to `a` receives on `a` and
//!   sends on `b`; when both axes swap, the router also swaps what the core sends, so the
//!   socket then sends on `a` and the router turns it into `b`.
//! * `switch(c [POS] ...)` adds positions 1..=3 to colour `c`'s configuration on each
//!   tile of its region, whose position 0 is the tile's `paint()` routes of `c` (required).
//! * `mp()` gives every tile of its region a message-passing configuration for each colour
//!   that any `code()` binds to a socket and that the tile configures no other way;
//!   `mp(c ...)` names the colours instead (painting one of them is an error).

use super::eval::{ActionKind, CodeCall, Evaluated};
use super::region::{Axis, Route, Side, Sides};
use crate::diag::{Diagnostic, codes};
use crate::source::Span;
use crate::tungsten::SocketBinding;
use csl_arch::image::{ColorConfig, SwitchConfig, SwitchPos};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The program placed on one tile.
#[derive(Clone, Debug, PartialEq)]
pub struct TileCode {
    /// Index into [`Floorplan::codes`].
    pub code: usize,
    /// Socket bindings on this tile.
    pub sockets: Vec<(String, SocketBinding)>,
    /// Whether the tile has message passing (`mp()`).
    pub mp: bool,
}

/// A named region.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedRegion {
    /// The name.
    pub name: String,
    /// Its tiles, rows outermost.
    pub tiles: Vec<(u32, u32)>,
    /// The `name()` call.
    pub span: Span,
}

/// A resolved floorplan.
#[derive(Clone, Debug)]
pub struct Floorplan {
    /// Width of the image rectangle.
    pub width: u32,
    /// Height of the image rectangle.
    pub height: u32,
    /// Whether each tile (row-major) belongs to the layout.
    pub in_layout: Vec<bool>,
    /// Router configuration, with the action that caused it.
    pub routes: Vec<(ColorConfig, Span)>,
    /// The program of each tile (row-major), if any.
    pub tiles: Vec<Option<TileCode>>,
    /// The `code()` calls.
    pub codes: Vec<CodeCall>,
    /// The named regions.
    pub names: Vec<NamedRegion>,
}

impl Floorplan {
    /// The configuration of colour `c` at tile `(x, y)`.
    pub fn config(&self, x: u32, y: u32, c: u8) -> Option<&ColorConfig> {
        self.routes
            .iter()
            .map(|(r, _)| r)
            .find(|r| r.x == x && r.y == y && r.color == c)
    }

    /// The program of tile `(x, y)`.
    pub fn tile(&self, x: u32, y: u32) -> Option<&TileCode> {
        if x >= self.width || y >= self.height {
            return None;
        }
        self.tiles
            .get((y * self.width + x) as usize)
            .and_then(Option::as_ref)
    }
}

/// The routes of one colour on one tile.
struct ColorRoutes {
    routes: Vec<Route>,
    span: Span,
}

#[derive(Default)]
struct TileState {
    routes: BTreeMap<u8, ColorRoutes>,
    pairs: BTreeMap<u8, (u8, Span)>,
    code: Option<(usize, Span)>,
    mp: Vec<(Option<Vec<u8>>, Span)>,
    switches: BTreeMap<u8, (SwitchConfig, Vec<Side>, Span)>,
}

/// The first tile where routes failed to merge: the tile, the earlier routes' action, and
/// what [`merges_exactly`] found.
type Conflict = ((u32, u32), Span, (Side, Sides, Sides));

/// Whether one switch position expresses the routes exactly: every input sends to all of
/// the outputs, and each input's routes name exactly that set.
fn merges_exactly(routes: &[Route]) -> Result<(), (Side, Sides, Sides)> {
    let all_out = routes
        .iter()
        .fold(Sides::default(), |a, r| a.union(r.outputs));
    let all_in = routes
        .iter()
        .fold(Sides::default(), |a, r| a.union(r.inputs));
    for s in all_in.iter() {
        let o = routes
            .iter()
            .filter(|r| r.inputs.has(s))
            .fold(Sides::default(), |a, r| a.union(r.outputs));
        if o != all_out {
            return Err((s, o, all_out));
        }
    }
    Ok(())
}

fn empty_config(x: u32, y: u32, color: u8) -> ColorConfig {
    ColorConfig::route(x, y, color, Vec::new(), Vec::new())
}

/// Resolves the actions into a floorplan. Problems are pushed onto `diags`; `None` when
/// there is no layout.
pub fn resolve(ev: Evaluated, diags: &mut Vec<Diagnostic>) -> Option<Floorplan> {
    let (layout, layout_span) = ev.layout?;
    let bbox = layout.bbox()?;
    let (w, h) = (bbox.x + bbox.w, bbox.y + bbox.h);
    let idx = |x: u32, y: u32| (y * w + x) as usize;
    let mut in_layout = vec![false; (w * h) as usize];
    for (x, y) in layout.tiles() {
        if let Some(slot) = in_layout.get_mut(idx(x, y)) {
            *slot = true;
        }
    }
    let present = |t: Option<(u32, u32)>| -> bool {
        t.is_some_and(|(x, y)| x < w && y < h && in_layout.get(idx(x, y)).copied().unwrap_or(false))
    };
    // Only tiles some action touches have a state (row-major keys).
    let mut tiles: BTreeMap<usize, TileState> = BTreeMap::new();
    let mut names: Vec<NamedRegion> = Vec::new();
    for action in &ev.actions {
        let region_tiles = action.region.tiles();
        if let Some(&(x, y)) = region_tiles.iter().find(|&&t| !present(Some(t))) {
            diags.push(
                Diagnostic::error(
                    codes::PAINT_BAD_REGION,
                    "an action outside the layout",
                    action.span,
                    format!("this region reaches tile ({x}, {y}), which is not part of the layout"),
                )
                .with_label(layout_span, "the layout")
                .with_help("add the region to the layout (the file's last expression)"),
            );
            continue;
        }
        match &action.kind {
            ActionKind::Paint {
                color,
                routes,
                suppress,
            } => {
                let mut off_edge: Option<((u32, u32), Side, Route)> = None;
                let mut off_count = 0usize;
                let mut conflict: Option<Conflict> = None;
                for &(x, y) in &region_tiles {
                    let mut rs = Vec::new();
                    let mut off_here = false;
                    for r in routes {
                        let mut r = *r;
                        for s in suppress.iter() {
                            let n = s.neighbour(x, y);
                            if !n.is_some_and(|(nx, ny)| action.region.contains(nx, ny)) {
                                r.inputs = r.inputs.without(s);
                                r.outputs = r.outputs.without(s);
                            }
                        }
                        if r.inputs.is_empty() || r.outputs.is_empty() {
                            continue;
                        }
                        for s in r.outputs.iter() {
                            if s != Side::C && !present(s.neighbour(x, y)) {
                                if off_edge.is_none() {
                                    off_edge = Some(((x, y), s, r));
                                }
                                off_here = true;
                            }
                        }
                        rs.push(r);
                    }
                    if off_here {
                        off_count += 1;
                        continue;
                    }
                    if rs.is_empty() {
                        continue;
                    }
                    let t = tiles.entry(idx(x, y)).or_default();
                    let entry = t.routes.entry(*color).or_insert(ColorRoutes {
                        routes: Vec::new(),
                        span: action.span,
                    });
                    let mut merged = entry.routes.clone();
                    for r in rs {
                        if !merged.contains(&r) {
                            merged.push(r);
                        }
                    }
                    match merges_exactly(&merged) {
                        Ok(()) => entry.routes = merged,
                        Err(why) => {
                            if conflict.is_none() {
                                conflict = Some(((x, y), entry.span, why));
                            }
                        }
                    }
                }
                if let Some(((x, y), s, r)) = off_edge {
                    let dir = match s {
                        Side::L => "west (L)",
                        Side::R => "east (R)",
                        Side::U => "+y, the router's south (U)",
                        Side::D => "-y, the router's north (D)",
                        Side::C => "the core",
                    };
                    let l = s.letter();
                    diags.push(
                        Diagnostic::error(
                            codes::PAINT_OFF_EDGE,
                            format!("route `{r}` of colour {color} sends where the layout has no tile"),
                            action.span,
                            format!(
                                "on {off_count} tile{} of this region, e.g. ({x}, {y}), which has no neighbour to the {dir}",
                                if off_count == 1 { "" } else { "s" }
                            ),
                        )
                        .with_help(format!(
                            "add `|{l}` inside the brackets to drop the route on the region's {l} edge, e.g. `[{r}|{l}]`, or extend the layout"
                        )),
                    );
                }
                if let Some(((x, y), first, (s, got, all))) = conflict {
                    let mut d = Diagnostic::error(
                        codes::PAINT_ROUTE_CONFLICT,
                        format!("the routes of colour {color} on tile ({x}, {y}) need a switch"),
                        action.span,
                        "these routes do not merge with the tile's other routes of this colour",
                    )
                    .with_note(format!(
                        "one switch position sends every input to every output: merged, input {} would go to {} instead of only {}",
                        s.letter(),
                        all.letters(),
                        got.letters()
                    ))
                    .with_help("paint one position and give the colour a switch for the other (`switch(c [LXC])`, positions taken in turn), use another colour for one of the routes, or drop a route on the tiles that do not need it (edge suppression `|R`)");
                    if first != action.span {
                        d = d.with_label(first, "the tile's earlier routes of this colour");
                    }
                    diags.push(d);
                }
            }
            ActionKind::ColorPair { a, b } => {
                for &(x, y) in &region_tiles {
                    let t = tiles.entry(idx(x, y)).or_default();
                    t.pairs.insert(*a, (*b, action.span));
                }
            }
            ActionKind::Code(i) => {
                let mut twice: Option<((u32, u32), Span)> = None;
                for &(x, y) in &region_tiles {
                    let t = tiles.entry(idx(x, y)).or_default();
                    match t.code {
                        Some((_, first)) => {
                            if twice.is_none() {
                                twice = Some(((x, y), first));
                            }
                        }
                        None => t.code = Some((*i, action.span)),
                    }
                }
                if let Some(((x, y), first)) = twice {
                    diags.push(
                        Diagnostic::error(
                            codes::PAINT_CODE_TWICE,
                            format!("tile ({x}, {y}) gets two programs"),
                            action.span,
                            "second code() here",
                        )
                        .with_label(first, "first code() here")
                        .with_help("a tile runs one program: make the two regions disjoint"),
                    );
                }
            }
            ActionKind::Name(n) => {
                if let Some(&(x, y)) = region_tiles
                    .iter()
                    .find(|&&(x, y)| tiles.get(&idx(x, y)).is_none_or(|t| t.code.is_none()))
                {
                    diags.push(
                        Diagnostic::error(
                            codes::PAINT_NAME,
                            "name() before code()",
                            action.span,
                            format!("tile ({x}, {y}) of this region has no program yet"),
                        )
                        .with_help("put name() after the code() that places the region's program: a name stands for the program's symbols"),
                    );
                    continue;
                }
                if let Some(first) = names.iter().find(|r| r.name == *n) {
                    diags.push(
                        Diagnostic::error(
                            codes::PAINT_NAME,
                            format!("region name `{n}` is used twice"),
                            action.span,
                            "named again here",
                        )
                        .with_label(first.span, "first named here"),
                    );
                    continue;
                }
                names.push(NamedRegion {
                    name: n.clone(),
                    tiles: region_tiles.clone(),
                    span: action.span,
                });
            }
            ActionKind::Mp(cs) => {
                for &(x, y) in &region_tiles {
                    let t = tiles.entry(idx(x, y)).or_default();
                    t.mp.push((cs.clone(), action.span));
                }
            }
            ActionKind::Switch {
                color,
                positions,
                ring,
                pop,
                start,
            } => {
                let mut sw = SwitchConfig {
                    current: *start,
                    ring_mode: *ring,
                    pop_mode: *pop,
                    ..SwitchConfig::default()
                };
                for (slot, (input, outputs)) in sw.positions.iter_mut().zip(positions) {
                    *slot = SwitchPos {
                        rx: Some(input.direction()),
                        tx: Some(outputs.iter().map(Side::direction).collect()),
                    };
                }
                let inputs: Vec<Side> = positions.iter().map(|(i, _)| *i).collect();
                let mut problem: Option<String> = None;
                for &(x, y) in &region_tiles {
                    let off = positions.iter().find_map(|(i, o)| {
                        o.iter()
                            .find(|&s| s != Side::C && !present(s.neighbour(x, y)))
                            .map(|s| (*i, *o, s))
                    });
                    if let Some((i, o, s)) = off {
                        problem.get_or_insert(format!(
                            "position `{}X{}` sends toward {} from tile ({x}, {y}), where the layout has no tile",
                            i.letter(),
                            o.letters(),
                            s.letter()
                        ));
                        continue;
                    }
                    let t = tiles.entry(idx(x, y)).or_default();
                    if t.switches.contains_key(color) {
                        problem.get_or_insert(format!(
                            "colour {color} of tile ({x}, {y}) gets a second switch()"
                        ));
                        continue;
                    }
                    t.switches
                        .insert(*color, (sw.clone(), inputs.clone(), action.span));
                }
                if let Some(p) = problem {
                    diags.push(
                        Diagnostic::error(codes::PAINT_SWITCH, p, action.span, "in this switch()")
                            .with_help("a colour has one switch per tile; its positions may only send to tiles of the layout"),
                    );
                }
            }
        }
    }

    // Router configuration and socket bindings, tile by tile.
    let mut routes: Vec<(ColorConfig, Span)> = Vec::new();
    let mut codes_out: Vec<Option<TileCode>> = vec![None; (w * h) as usize];
    let mut socket_colors: BTreeSet<u8> = BTreeSet::new();
    // One "switch without paint()" error per switch() action.
    let mut unpainted: Vec<Span> = Vec::new();
    for (&i, t) in &tiles {
        let (x, y) = (i as u32 % w, i as u32 / w);
        let mut cfgs: BTreeMap<u8, (ColorConfig, Span)> = BTreeMap::new();
        for (&c, cr) in &t.routes {
            let ins = cr
                .routes
                .iter()
                .fold(Sides::default(), |a, r| a.union(r.inputs));
            let outs = cr
                .routes
                .iter()
                .fold(Sides::default(), |a, r| a.union(r.outputs));
            let mut cfg = empty_config(x, y, c);
            cfg.rx = ins.iter().map(Side::direction).collect();
            cfg.tx = outs.iter().map(Side::direction).collect();
            cfgs.insert(c, (cfg, cr.span));
        }
        for (&c, (sw, _, span)) in &t.switches {
            match cfgs.get_mut(&c) {
                Some((cfg, _)) => cfg.switches = Some(sw.clone()),
                None if unpainted.contains(span) => {}
                None => {
                    unpainted.push(*span);
                    diags.push(
                    Diagnostic::error(
                        codes::PAINT_SWITCH,
                        format!("switch() on colour {c} of tile ({x}, {y}), which no paint() routes there (the first such tile)"),
                        *span,
                        "positions 1 and up of this switch",
                    )
                    .with_help(format!("position 0 is what paint() routes: add e.g. `paint({c} [CXR])` on the same tiles")),
                    );
                }
            }
        }
        let mut both_axes: BTreeSet<u8> = BTreeSet::new();
        for (&a, &(b, span)) in &t.pairs {
            let mut axes = (false, false);
            for c in [a, b] {
                let routed = t
                    .routes
                    .get(&c)
                    .map(|cr| cr.routes.as_slice())
                    .unwrap_or(&[])
                    .iter()
                    .flat_map(|r| r.inputs.iter());
                let switched = t
                    .switches
                    .get(&c)
                    .into_iter()
                    .flat_map(|s| s.1.iter().copied());
                for s in routed.chain(switched) {
                    match s.axis() {
                        Some(Axis::X) => axes.0 = true,
                        Some(Axis::Y) => axes.1 = true,
                        None => {}
                    }
                }
            }
            if !(axes.0 || axes.1) {
                continue;
            }
            if axes.0 && axes.1 {
                both_axes.insert(a);
            }
            for c in [a, b] {
                let e = cfgs.entry(c).or_insert((empty_config(x, y, c), span));
                e.0.color_swap_x |= axes.0;
                e.0.color_swap_y |= axes.1;
            }
        }
        if let Some((ci, _)) = t.code
            && let Some(call) = ev.codes.get(ci)
        {
            let mut socks = Vec::new();
            for (name, c, _) in &call.sockets {
                let tx = match t.pairs.get(c) {
                    Some(_) if both_axes.contains(c) => *c,
                    Some(&(b, _)) => b,
                    None => *c,
                };
                socket_colors.insert(*c);
                socket_colors.insert(tx);
                socks.push((name.clone(), SocketBinding { rx: *c, tx }));
            }
            if let Some(slot) = codes_out.get_mut(i) {
                *slot = Some(TileCode {
                    code: ci,
                    sockets: socks,
                    mp: !t.mp.is_empty(),
                });
            }
        }
        routes.extend(cfgs.into_values());
    }
    // Message passing needs every socket colour of the floorplan.
    let configured: HashMap<(u32, u32, u8), Span> = routes
        .iter()
        .map(|(r, s)| ((r.x, r.y, r.color), *s))
        .collect();
    let mut mp_errors = 0usize;
    let mut mp_cfgs = Vec::new();
    for (&i, t) in &tiles {
        let (x, y) = (i as u32 % w, i as u32 / w);
        let mut wanted: BTreeMap<u8, Span> = BTreeMap::new();
        for (cs, span) in &t.mp {
            match cs {
                None => {
                    for &c in &socket_colors {
                        if !configured.contains_key(&(x, y, c)) {
                            wanted.entry(c).or_insert(*span);
                        }
                    }
                }
                Some(list) => {
                    for &c in list {
                        if let Some(first) = configured.get(&(x, y, c)) {
                            if mp_errors == 0 {
                                diags.push(
                                    Diagnostic::error(
                                        codes::PAINT_MP,
                                        format!("colour {c} of tile ({x}, {y}) is both routed and message-passing"),
                                        *span,
                                        format!("mp() names colour {c}"),
                                    )
                                    .with_label(*first, "which this action configures on the tile")
                                    .with_help("a message-passing colour routes by its headers: do not paint it, or leave it out of mp()"),
                                );
                            }
                            mp_errors += 1;
                            continue;
                        }
                        wanted.insert(c, *span);
                    }
                }
            }
        }
        for (c, span) in wanted {
            let mut cfg = empty_config(x, y, c);
            cfg.message_passing = true;
            mp_cfgs.push((cfg, span));
        }
    }
    routes.extend(mp_cfgs);
    routes.sort_by_key(|(r, _)| (r.y, r.x, r.color));
    Some(Floorplan {
        width: w,
        height: h,
        in_layout,
        routes,
        tiles: codes_out,
        codes: ev.codes,
        names,
    })
}
