//! Static route checks: the colour configuration of a linked fabric as a graph, and the
//! warnings `link` reports from it (codes `E0701`–`E0707`).
//!
//! # The graph
//!
//! A node is one input buffer of one colour of one router — `(tile, colour, port)` for
//! every port the colour accepts in any switch position (`NORTH`, `SOUTH`, `EAST`, `WEST`,
//! or `RAMP` for what the PE's own CE sends) — plus one sink per tile and colour that the
//! router delivers to its CE. An edge `a → b` says that a wavelet in buffer `a` moves into
//! buffer `b` in some switch position, labelled with the lowest such position. Every
//! position a switch can take is a possible hop: a configuration is considered valid if
//! some position is served. Colour swap (`color_swap_x` / `color_swap_y`) is followed the
//! way the simulator's router does it. Colours configured for message passing (WSE-3)
//! route by header, not by configuration, and are left out (a message-passing colour is
//! taken to accept anything and to reach its CE).
//!
//! Nodes are numbered from the sorted configuration list (no hashing), so building the
//! graph and every check is linear in the number of configured (tile, colour) pairs,
//! except the cycle search (Tarjan's strongly connected components, linear in nodes and edges,
//! and iterative, so a route across the whole wafer does not exhaust the stack).
//!
//! # The checks
//!
//! A configuration matters only where wavelets can flow: the checks that blame a sender
//! look only at buffers *live* (reachable from a RAMP input whose CE's program sends on
//! the colour: a fabric output DSD or an output queue on it), and the checks that blame a
//! missing sender look only at buffers *wanted* (from which a CE whose program reads the
//! colour can be reached). So routes a program configures but never uses (e.g. a column
//! of a library's routes on PEs that do not take part) draw no warning.
//!
//! 1. `E0701`: a live colour sent towards a neighbour whose router has no route for it,
//!    or does not accept it from that side in any position (the simulator stops with a
//!    routing error when a wavelet gets there).
//! 2. `E0702`: a wanted colour accepted from a side on which no neighbour sends it.
//! 3. `E0703`: a live route sending off the edge of the rectangle, or a wanted one
//!    accepting from beyond it. The toolchain's host traffic never crosses the edge:
//!    streaming `memcpy` injects and collects wavelets at each PE's RAMP
//!    (`runtime-sim/src/host/memcpy.rs`), copy-mode `memcpy` writes memory, and the
//!    memcpy colours 21–23 cannot be configured by a program compiled with `--memcpy`
//!    (and are skipped here). So every such edge route is reported.
//! 4. `E0704`: a data task bound to a colour that no route of its PE delivers to the CE
//!    (unless the colour is a host stream given to the memcpy library: the host delivers
//!    it). `E0705`: a live colour the router delivers to a CE whose program binds no data
//!    task to it and has no fabric input DSD or input queue on it (programs that bind
//!    control tasks are exempt: control wavelets alone may arrive).
//! 5. `E0706`: two routes delivering one colour to one CE from two sides at once: a
//!    wavelet one CE sends reaches another CE along two paths, so it arrives twice.
//!    (Accepting a colour from two sides is fine in itself: reductions and the
//!    collectives library take partial results from both neighbours.) The backward
//!    search from each side is bounded, so the check stays linear.
//! 6. `E0707`: a strongly connected component of the graph (a cycle of buffers each
//!    waiting for room in the next: wormhole-routing deadlock) that is live (a loop no
//!    CE sends into stays empty and cannot block).
//!
//! The same route written once and applied to thousands of tiles produces one warning,
//! naming the first tile and how many more there are.

use crate::diag::{Diagnostic, codes};
use crate::ir::Program;
use crate::source::Span;
use csl_arch::Arch;
use csl_arch::fabric::{Direction, NUM_COLORS, TEARDOWN_TASK_ID};
use csl_arch::image::{ColorConfig, Meta, Routes, TaskKind};
use petgraph::Direction::{Incoming, Outgoing};
use petgraph::graph::NodeIndex;
use std::collections::HashMap;
use std::fmt::Write as _;

/// Port index of the RAMP (input from the CE).
const RAMP: u8 = 4;
/// Pseudo-port of the sink node: delivery to the CE.
const CE: u8 = 5;
/// Link port bits.
const LINKS: u8 = 0b1111;
/// Most warnings of one compilation; the rest are counted in a final note.
const MAX_FINDINGS: usize = 100;
/// Most cycles reported.
const MAX_CYCLES: usize = 5;

/// What the checks need to know of one program class.
#[derive(Clone, Debug, Default)]
pub struct ProgramFacts {
    /// Colours data tasks are bound to, with where each was bound.
    pub data_tasks: Vec<(u8, Span)>,
    /// Bit `c`: the program reads colour `c` somehow (a data task, a fabric input DSD, an
    /// input queue).
    pub reads: u32,
    /// The program binds control tasks or a teardown handler (its CE may receive control
    /// wavelets only on a colour).
    pub control: bool,
    /// Bit `c`: the program may send on colour `c` (a fabric output DSD, an output queue).
    pub writes: u32,
}

impl ProgramFacts {
    /// The facts of `p` compiled for `arch`: data task ids are colours on WSE-2 and input
    /// queues (bound to colours by `@initialize_queue`) on WSE-3.
    pub fn of(p: &Program, arch: Arch) -> ProgramFacts {
        let mut f = ProgramFacts {
            reads: p.fabric_in,
            writes: p.fabric_out,
            ..ProgramFacts::default()
        };
        for q in &p.input_queues {
            f.reads |= bit(q.color);
        }
        for q in &p.output_queues {
            f.writes |= bit(q.color);
        }
        for t in &p.tasks {
            match t.kind {
                TaskKind::Data => {
                    let color = match arch {
                        Arch::Wse2 => Some(t.id),
                        Arch::Wse3 => p
                            .input_queues
                            .iter()
                            .find(|q| q.queue == t.id)
                            .map(|q| q.color),
                    };
                    if let Some(c) = color.filter(|&c| c < NUM_COLORS) {
                        f.data_tasks.push((c, t.span));
                        f.reads |= bit(c);
                    }
                }
                TaskKind::Control => f.control = true,
                TaskKind::Local => f.control |= t.id == TEARDOWN_TASK_ID,
            }
        }
        f
    }
}

/// Everything the checks read.
pub struct CheckInput<'a> {
    /// Geometry and target.
    pub meta: &'a Meta,
    /// Class of each tile, row-major.
    pub placement: &'a [u32],
    /// Every colour configuration of the image.
    pub routes: &'a Routes,
    /// Where each of `routes` was written (same length, or shorter: missing ones unknown).
    pub spans: &'a [Option<Span>],
    /// Facts of each class.
    pub programs: &'a [ProgramFacts],
    /// Bit `c`: colour `c` is a host stream colour (the host reaches CEs on it directly).
    pub host_streams: u32,
}

fn bit(c: u8) -> u32 {
    1u32.checked_shl(u32::from(c)).unwrap_or(0)
}

fn opposite(d: u8) -> u8 {
    csl_arch::fabric::Direction::opposite_index(d)
}

fn dir_name(d: u8) -> &'static str {
    Direction::ALL
        .get(usize::from(d))
        .map_or("CE", |d| d.name())
}

fn dir_mask(ds: &[Direction]) -> u8 {
    ds.iter().fold(0, |m, d| m | (1 << d.index()))
}

/// One colour of one router, as the checks see it.
#[derive(Clone, Copy)]
struct Cfg {
    tile: u32,
    color: u8,
    /// Switch positions 0..=3 as (rx, tx) port masks (`None`: invalid position).
    pos: [Option<(u8, u8)>; 4],
    rx_any: u8,
    tx_any: u8,
    swap_x: bool,
    swap_y: bool,
    mp: bool,
    /// Index into the input routes.
    route: u32,
}

impl Cfg {
    /// A placeholder (overwritten before use).
    const EMPTY: Cfg = Cfg {
        tile: 0,
        color: 0,
        pos: [None; 4],
        rx_any: 0,
        tx_any: 0,
        swap_x: false,
        swap_y: false,
        mp: false,
        route: 0,
    };

    /// The configuration `cfg` (its place is set by the caller: `tile` and `route` are 0).
    fn new(cfg: &ColorConfig) -> Cfg {
        let pos0 = (dir_mask(&cfg.rx), dir_mask(&cfg.tx));
        let mut pos = [Some(pos0), None, None, None];
        if let Some(sw) = &cfg.switches {
            // Positions compose as in the simulator's router: a side a position leaves
            // out is the one of the position before it.
            let mut prev = pos0;
            for (i, p) in sw.positions.iter().enumerate() {
                if p.is_valid()
                    && let Some(slot) = pos.get_mut(i + 1)
                {
                    let r = (
                        p.rx.map_or(prev.0, |d| 1 << d.index()),
                        p.tx.as_deref().map_or(prev.1, dir_mask),
                    );
                    *slot = Some(r);
                    prev = r;
                }
            }
        }
        let (rx_any, tx_any) = pos
            .iter()
            .flatten()
            .fold((0, 0), |(a, b), &(r, t)| (a | r, b | t));
        Cfg {
            tile: 0,
            color: cfg.color,
            pos,
            rx_any,
            tx_any,
            swap_x: cfg.color_swap_x,
            swap_y: cfg.color_swap_y,
            mp: cfg.message_passing,
            route: 0,
        }
    }

    /// Whether wavelets arriving on `port` are swapped to the paired colour.
    fn swaps(&self, port: u8) -> bool {
        match port {
            0 | 1 => self.swap_y,
            2 | 3 => self.swap_x,
            _ => self.swap_x && self.swap_y,
        }
    }

    /// Mask of the graph nodes this configuration has: its input ports and, as bit
    /// [`CE`], delivery to the CE.
    fn node_mask(&self) -> u8 {
        if self.mp {
            0
        } else {
            self.rx_any | ((self.tx_any >> RAMP & 1) << CE)
        }
    }
}

/// The configured colours of a rectangle, indexed by tile.
struct Fabric {
    width: u32,
    height: u32,
    cfgs: Vec<Cfg>,
    /// `cfgs[start[t]..start[t + 1]]` are the configurations of tile `t`.
    start: Vec<u32>,
}

impl Fabric {
    fn new(meta: &Meta, routes: &Routes) -> Fabric {
        let (width, height) = (meta.width.max(1), meta.height);
        let tiles = width as usize * height as usize;
        // Each distinct configuration is analysed once.
        let shared: Vec<Cfg> = routes.configs().iter().map(Cfg::new).collect();
        let kept = |r: &csl_arch::routes::PlacedRoute| {
            let c = shared.get(r.config as usize)?;
            (r.x < width && r.y < height && c.color < NUM_COLORS)
                .then(|| (r.y.saturating_mul(width).saturating_add(r.x), c))
        };
        // Sorted by (tile, colour) without a copy of the list: counted by tile, placed at
        // each tile's cursor, then each tile's few sorted by colour.
        let mut start = vec![0u32; tiles + 1];
        for r in routes.placed() {
            if let Some((tile, _)) = kept(r)
                && let Some(s) = start.get_mut(tile as usize + 1)
            {
                *s += 1;
            }
        }
        for i in 1..start.len() {
            start[i] += start[i - 1];
        }
        let total = start.last().copied().unwrap_or(0) as usize;
        let mut cfgs: Vec<Cfg> = vec![Cfg::EMPTY; total];
        let mut next = start.clone();
        for (i, r) in routes.placed().iter().enumerate() {
            if let Some((tile, c)) = kept(r)
                && let Some(n) = next.get_mut(tile as usize)
                && let Some(slot) = cfgs.get_mut(*n as usize)
            {
                *slot = Cfg {
                    tile,
                    route: i as u32,
                    ..*c
                };
                *n += 1;
            }
        }
        drop(next);
        for t in start.windows(2) {
            if let Some(tile) = cfgs.get_mut(t[0] as usize..t[1] as usize)
                && !tile.is_sorted_by_key(|c| c.color)
            {
                tile.sort_by_key(|c| c.color);
            }
        }
        Fabric {
            width,
            height,
            cfgs,
            start,
        }
    }

    /// Index of the configuration of `color` at `tile`.
    fn at(&self, tile: u32, color: u8) -> Option<usize> {
        let lo = *self.start.get(tile as usize)? as usize;
        let hi = *self.start.get(tile as usize + 1)? as usize;
        (lo..hi).find(|&i| self.cfgs.get(i).is_some_and(|c| c.color == color))
    }

    fn xy(&self, tile: u32) -> (u32, u32) {
        (tile % self.width, tile / self.width)
    }

    /// The tile next to `tile` towards `d`, if inside the rectangle.
    fn neighbour(&self, tile: u32, d: u8) -> Option<u32> {
        let (x, y) = self.xy(tile);
        match d {
            0 if y > 0 => Some(tile - self.width),
            1 if y + 1 < self.height => Some(tile + self.width),
            2 if x + 1 < self.width => Some(tile + 1),
            3 if x > 0 => Some(tile - 1),
            _ => None,
        }
    }

    /// The configurations at `tile` that take a wavelet of colour `tag` arriving on `port`
    /// (colour swap, as the simulator's router computes it), and whether the wavelet has
    /// nowhere to go (a handler missing or not accepting `port`).
    /// (Two at most, so no list is allocated: this runs for every hop of every route.)
    fn handlers(&self, tile: u32, tag: u8, port: u8) -> ([Option<usize>; 2], bool) {
        let swaps = |c: u8| {
            self.at(tile, c)
                .and_then(|i| self.cfgs.get(i))
                .is_some_and(|g| g.swaps(port))
        };
        let pair = tag ^ 1;
        let colors = [
            (!swaps(tag)).then_some(tag),
            (pair < NUM_COLORS && swaps(pair)).then_some(pair),
        ];
        let mut out = [None, None];
        let mut lost = colors.iter().all(Option::is_none);
        for (slot, h) in out.iter_mut().zip(colors) {
            let Some(h) = h else { continue };
            match self.at(tile, h) {
                Some(i)
                    if self
                        .cfgs
                        .get(i)
                        .is_some_and(|g| g.mp || g.rx_any >> port & 1 == 1) =>
                {
                    *slot = Some(i)
                }
                _ => lost = true,
            }
        }
        (out, lost)
    }
}

/// A node of the route graph: one input buffer (or the CE sink) of one configuration.
#[derive(Clone, Copy, Debug)]
struct Chan {
    /// Index into [`Fabric::cfgs`].
    cfg: u32,
    /// Port 0..=4, or [`CE`].
    port: u8,
}

/// A directed graph in compressed adjacency form (each node's successors, and its
/// predecessors, in one slice of a shared array): a whole wafer has tens of millions of
/// nodes and edges, and a search visits them in a few linear passes. A node's neighbours
/// are listed most recently added edge first (as `petgraph`'s linked lists list them, so
/// that the searches visit nodes, and report cycles, in the order they always have).
struct Graph {
    /// Node weights.
    chans: Vec<Chan>,
    /// Every edge `(from, to, switch position)` in the order added (kept for [`dot`] only).
    edges: Vec<(u32, u32, u8)>,
    /// `out[out_start[v]..out_start[v + 1]]`: the successors of `v`.
    out_start: Vec<u32>,
    out: Vec<u32>,
    /// `inc[in_start[v]..in_start[v + 1]]`: the predecessors of `v`.
    in_start: Vec<u32>,
    inc: Vec<u32>,
}

impl Graph {
    /// The graph of nodes `chans` and `edges` (in the order added); `keep_edges` keeps
    /// the edge list itself.
    fn new(chans: Vec<Chan>, edges: Vec<(u32, u32, u8)>, keep_edges: bool) -> Graph {
        let n = chans.len();
        let adjacency = |end: fn(&(u32, u32, u8)) -> (u32, u32)| {
            let mut start = vec![0u32; n + 1];
            for e in &edges {
                if let Some(s) = start.get_mut(end(e).0 as usize + 1) {
                    *s += 1;
                }
            }
            for i in 1..start.len() {
                start[i] += start[i - 1];
            }
            // Filled from the last edge added, so each list is newest first.
            let mut list = vec![0u32; start.last().copied().unwrap_or(0) as usize];
            let mut next = start.clone();
            for e in edges.iter().rev() {
                let (a, b) = end(e);
                if let Some(k) = next.get_mut(a as usize)
                    && let Some(slot) = list.get_mut(*k as usize)
                {
                    *slot = b;
                    *k += 1;
                }
            }
            (start, list)
        };
        let (out_start, out) = adjacency(|&(a, b, _)| (a, b));
        let (in_start, inc) = adjacency(|&(a, b, _)| (b, a));
        Graph {
            chans,
            edges: if keep_edges { edges } else { Vec::new() },
            out_start,
            out,
            in_start,
            inc,
        }
    }

    fn node_count(&self) -> usize {
        self.chans.len()
    }

    fn node_indices(&self) -> impl Iterator<Item = NodeIndex> + use<> {
        (0..self.chans.len()).map(NodeIndex::new)
    }

    fn node_weight(&self, v: NodeIndex) -> Option<&Chan> {
        self.chans.get(v.index())
    }

    /// The successors (`Outgoing`) or predecessors (`Incoming`) of `v`, as node numbers.
    fn adjacent(&self, v: NodeIndex, dir: petgraph::Direction) -> &[u32] {
        let (start, list) = match dir {
            Outgoing => (&self.out_start, &self.out),
            Incoming => (&self.in_start, &self.inc),
        };
        let lo = start.get(v.index()).copied().unwrap_or(0) as usize;
        let hi = start.get(v.index() + 1).copied().unwrap_or(0) as usize;
        list.get(lo..hi).unwrap_or(&[])
    }

    fn neighbors_directed(
        &self,
        v: NodeIndex,
        dir: petgraph::Direction,
    ) -> impl Iterator<Item = NodeIndex> + '_ {
        self.adjacent(v, dir)
            .iter()
            .map(|&w| NodeIndex::new(w as usize))
    }

    fn neighbors(&self, v: NodeIndex) -> impl Iterator<Item = NodeIndex> + '_ {
        self.neighbors_directed(v, Outgoing)
    }
}

/// The route graph of a fabric.
struct RouteGraph {
    graph: Graph,
    /// First node of each configuration.
    base: Vec<u32>,
}

impl RouteGraph {
    fn node(&self, fabric: &Fabric, cfg: usize, port: u8) -> Option<NodeIndex> {
        let mask = fabric.cfgs.get(cfg)?.node_mask();
        if mask >> port & 1 == 0 {
            return None;
        }
        let below = (mask & ((1u8 << port) - 1)).count_ones();
        Some(NodeIndex::new((*self.base.get(cfg)? + below) as usize))
    }

    /// The graph of `fabric`; `keep_edges` keeps the list of edges (for [`dot`]).
    fn build(fabric: &Fabric, keep_edges: bool) -> RouteGraph {
        let mut base = Vec::with_capacity(fabric.cfgs.len());
        let mut n = 0u32;
        for c in &fabric.cfgs {
            base.push(n);
            n += c.node_mask().count_ones();
        }
        let mut chans = Vec::with_capacity(n as usize);
        for (i, c) in fabric.cfgs.iter().enumerate() {
            let mask = c.node_mask();
            for port in 0..=CE {
                if mask >> port & 1 == 1 {
                    chans.push(Chan {
                        cfg: i as u32,
                        port,
                    });
                }
            }
        }
        let mut rg = RouteGraph {
            graph: Graph::new(Vec::new(), Vec::new(), false),
            base,
        };
        let mut all: Vec<(u32, u32, u8)> = Vec::with_capacity(n as usize);
        let mut edges: Vec<(NodeIndex, NodeIndex, u8)> = Vec::new();
        let mut targets: Vec<NodeIndex> = Vec::new();
        for (i, c) in fabric.cfgs.iter().enumerate() {
            if c.mp {
                continue;
            }
            edges.clear();
            for (p, &(rx, tx)) in c
                .pos
                .iter()
                .enumerate()
                .filter_map(|(p, r)| r.as_ref().map(|r| (p as u8, r)))
            {
                targets.clear();
                for d in 0..4u8 {
                    if tx >> d & 1 == 0 {
                        continue;
                    }
                    let Some(n) = fabric.neighbour(c.tile, d) else {
                        continue;
                    };
                    let q = opposite(d);
                    for h in fabric.handlers(n, c.color, q).0.into_iter().flatten() {
                        if let Some(t) = rg.node(fabric, h, q) {
                            targets.push(t);
                        }
                    }
                }
                if tx >> RAMP & 1 == 1
                    && let Some(t) = rg.node(fabric, i, CE)
                {
                    targets.push(t);
                }
                for r in 0..=RAMP {
                    if rx >> r & 1 == 0 {
                        continue;
                    }
                    let Some(from) = rg.node(fabric, i, r) else {
                        continue;
                    };
                    for &t in &targets {
                        if !edges.iter().any(|&(a, b, _)| a == from && b == t) {
                            edges.push((from, t, p));
                        }
                    }
                }
            }
            all.extend(
                edges
                    .iter()
                    .map(|&(a, b, p)| (a.index() as u32, b.index() as u32, p)),
            );
        }
        rg.graph = Graph::new(chans, all, keep_edges);
        rg
    }
}

/// Where wavelets can flow: the buffers CEs that send on a colour feed, and the buffers
/// whose wavelets can reach a CE that reads them.
struct Flow {
    /// Per node: a RAMP input buffer whose CE's program sends on the colour.
    source: Vec<bool>,
    /// Per node: reachable from a source.
    live: Vec<bool>,
    /// Per node: a CE sink whose program reads the colour can be reached from it.
    wanted: Vec<bool>,
}

impl Flow {
    fn new<'f>(
        g: &RouteGraph,
        fabric: &Fabric,
        facts_at: &impl Fn(u32) -> Option<&'f ProgramFacts>,
    ) -> Flow {
        let n = g.graph.node_count();
        let mut source = vec![false; n];
        let mut sinks = Vec::new();
        for v in g.graph.node_indices() {
            let Some(ch) = g.graph.node_weight(v) else {
                continue;
            };
            let Some(c) = fabric.cfgs.get(ch.cfg as usize) else {
                continue;
            };
            let facts = facts_at(c.tile);
            if ch.port == RAMP
                && facts.is_some_and(|f| f.writes & bit(c.color) != 0)
                && let Some(s) = source.get_mut(v.index())
            {
                *s = true;
            }
            if ch.port == CE && facts.is_some_and(|f| f.control || f.reads & bit(c.color) != 0) {
                sinks.push(v);
            }
        }
        let starts: Vec<NodeIndex> = g
            .graph
            .node_indices()
            .filter(|v| source.get(v.index()) == Some(&true))
            .collect();
        let live = reach(g, starts, Outgoing);
        let wanted = reach(g, sinks, Incoming);
        Flow {
            source,
            live,
            wanted,
        }
    }
}

/// The nodes reachable from `starts` (themselves included) along edges in direction `dir`.
fn reach(g: &RouteGraph, starts: Vec<NodeIndex>, dir: petgraph::Direction) -> Vec<bool> {
    let mut seen = vec![false; g.graph.node_count()];
    for v in &starts {
        if let Some(s) = seen.get_mut(v.index()) {
            *s = true;
        }
    }
    let mut stack = starts;
    while let Some(v) = stack.pop() {
        for w in g.graph.neighbors_directed(v, dir) {
            if let Some(s) = seen.get_mut(w.index())
                && !*s
            {
                *s = true;
                stack.push(w);
            }
        }
    }
    seen
}

/// What a warning is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Kind {
    NoReceiver,
    NoSender,
    OffEdgeSend,
    OffEdgeReceive,
    TaskUnreached,
    Unread,
    Merge,
}

/// One warning, aggregated over every tile where it recurs with the same spans.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    kind: Kind,
    color: u8,
    /// A direction (or a side mask for [`Kind::Merge`]).
    dir: u8,
    span: Option<Span>,
    other_span: Option<Span>,
    /// `other_span` is where the other PE's data task is bound (it has no route).
    other_is_task: bool,
}

struct Finding {
    key: Key,
    tile: u32,
    other: Option<u32>,
    count: u32,
}

#[derive(Default)]
struct Findings {
    index: HashMap<Key, usize>,
    list: Vec<Finding>,
}

impl Findings {
    fn add(&mut self, key: Key, tile: u32, other: Option<u32>) {
        if let Some(&i) = self.index.get(&key) {
            if let Some(f) = self.list.get_mut(i) {
                f.count += 1;
            }
            return;
        }
        self.index.insert(key.clone(), self.list.len());
        self.list.push(Finding {
            key,
            tile,
            other,
            count: 1,
        });
    }
}

/// Runs every check and returns the warnings.
pub fn check(input: &CheckInput<'_>) -> Vec<Diagnostic> {
    let fabric = Fabric::new(input.meta, input.routes);
    let span_of = |cfg: usize| -> Option<Span> {
        let r = fabric.cfgs.get(cfg)?.route;
        input.spans.get(r as usize).copied().flatten()
    };
    // Colours reserved for the memcpy infrastructure are its business.
    let reserved: u32 = if input.meta.memcpy {
        csl_arch::fabric::MEMCPY_RESERVED_COLORS
            .iter()
            .fold(0, |m, &c| m | bit(c))
    } else {
        0
    };
    let graph = RouteGraph::build(&fabric, false);
    let facts_at = |tile: u32| {
        input
            .placement
            .get(tile as usize)
            .and_then(|&k| input.programs.get(k as usize))
    };
    let flow = Flow::new(&graph, &fabric, &facts_at);
    let is = |v: &[bool], n: Option<NodeIndex>| n.is_some_and(|n| v.get(n.index()) == Some(&true));
    let mut found = Findings::default();
    let mut budget = UPSTREAM_BUDGET_PER_NODE
        .saturating_mul(graph.graph.node_count())
        .saturating_add(1 << 16);
    for (i, c) in fabric.cfgs.iter().enumerate() {
        if c.mp || reserved & bit(c.color) != 0 {
            continue;
        }
        let span = span_of(i);
        // Whether wavelets a CE sends can reach this router's colour at all.
        let live = (0..=RAMP).any(|r| is(&flow.live, graph.node(&fabric, i, r)));
        // A finding about this colour's side `dir`.
        let key = |kind, dir, other_span| Key {
            kind,
            color: c.color,
            dir,
            span,
            other_span,
            other_is_task: false,
        };
        // 1 and 3: where every position sends.
        for d in 0..4u8 {
            if !live || c.tx_any >> d & 1 == 0 {
                continue;
            }
            match fabric.neighbour(c.tile, d) {
                None => found.add(key(Kind::OffEdgeSend, d, None), c.tile, None),
                Some(n) => {
                    if fabric.handlers(n, c.color, opposite(d)).1 {
                        let mut k =
                            key(Kind::NoReceiver, d, fabric.at(n, c.color).and_then(span_of));
                        if fabric.at(n, c.color).is_none() {
                            // The receiver's end is its data task, if it has one.
                            k.other_span = facts_at(n).and_then(|f| {
                                f.data_tasks.iter().find(|t| t.0 == c.color).map(|t| t.1)
                            });
                            k.other_is_task = k.other_span.is_some();
                        }
                        found.add(k, c.tile, Some(n));
                    }
                }
            }
        }
        // 2 and 3: where every position receives from; 5: two senders into the CE.
        let mut fed = 0u8;
        for r in 0..4u8 {
            if c.rx_any >> r & 1 == 0 {
                continue;
            }
            // Only a side whose wavelets would go on to a CE that reads them matters.
            let wanted = is(&flow.wanted, graph.node(&fabric, i, r));
            let Some(n) = fabric.neighbour(c.tile, r) else {
                if wanted {
                    found.add(key(Kind::OffEdgeReceive, r, None), c.tile, None);
                }
                continue;
            };
            let s = if c.swaps(r) { c.color ^ 1 } else { c.color };
            let sender = fabric.at(n, s);
            let sends = sender
                .and_then(|j| fabric.cfgs.get(j))
                .is_some_and(|g| g.mp || g.tx_any >> opposite(r) & 1 == 1);
            if sends {
                fed |= 1 << r;
            } else if wanted {
                found.add(
                    key(Kind::NoSender, r, sender.and_then(span_of)),
                    c.tile,
                    Some(n),
                );
            }
        }
        if c.tx_any >> RAMP & 1 == 1
            && (fed & LINKS).count_ones() >= 2
            && let Some((sides, src)) = duplicate(&graph, &fabric, &flow, i, fed, &mut budget)
        {
            let key = Key {
                kind: Kind::Merge,
                color: c.color,
                dir: sides,
                span,
                other_span: fabric
                    .cfgs
                    .get(src)
                    .and_then(|_| span_of(src))
                    .filter(|s| Some(*s) != span),
                other_is_task: false,
            };
            found.add(key, c.tile, fabric.cfgs.get(src).map(|g| g.tile));
        }
        // 4b: delivered to a CE that does not read it.
        if is(&flow.live, graph.node(&fabric, i, CE)) && input.host_streams & bit(c.color) == 0 {
            let read = facts_at(c.tile).is_some_and(|f| f.control || f.reads & bit(c.color) != 0);
            if !read {
                let key = Key {
                    kind: Kind::Unread,
                    color: c.color,
                    dir: RAMP,
                    span,
                    other_span: None,
                    other_is_task: false,
                };
                found.add(key, c.tile, None);
            }
        }
    }
    // 4a: data tasks no route feeds.
    for (t, &k) in input.placement.iter().enumerate() {
        let Some(facts) = input.programs.get(k as usize) else {
            continue;
        };
        let t = t as u32;
        for &(c, task_span) in &facts.data_tasks {
            if (input.host_streams | reserved) & bit(c) != 0 {
                continue;
            }
            let cfg = fabric.at(t, c);
            let delivered = cfg
                .and_then(|i| fabric.cfgs.get(i))
                .is_some_and(|g| g.mp || g.tx_any >> RAMP & 1 == 1);
            if !delivered {
                let key = Key {
                    kind: Kind::TaskUnreached,
                    color: c,
                    dir: RAMP,
                    span: Some(task_span),
                    other_span: cfg.and_then(span_of),
                    other_is_task: false,
                };
                found.add(key, t, None);
            }
        }
    }
    let mut out = Vec::new();
    found.list.sort_by_key(|f| (f.key.kind as u8, f.tile));
    let total = found.list.len();
    for f in found.list.iter().take(MAX_FINDINGS) {
        out.push(render(&fabric, f));
    }
    // 6: cycles.
    let cycles = cycles(&graph, &flow);
    for cyc in cycles.iter().take(MAX_CYCLES) {
        out.push(render_cycle(&fabric, &graph, cyc, &span_of));
    }
    let left = total.saturating_sub(MAX_FINDINGS) + cycles.len().saturating_sub(MAX_CYCLES);
    if left > 0
        && let Some(last) = out.last_mut()
    {
        last.notes.push(format!(
            "{left} more route warning(s) of this compilation are not shown"
        ));
    }
    out
}

/// Most nodes one backward search of [`duplicate`] visits; a larger upstream tree is not
/// examined (no warning).
const MAX_UPSTREAM: usize = 4096;
/// Nodes all backward searches of [`duplicate`] may visit together, per node of the
/// graph (plus a constant): once spent, the remaining candidates are not examined, so the
/// check stays linear even when every PE merges two large upstream trees.
const UPSTREAM_BUDGET_PER_NODE: usize = 8;

/// The CE sources (RAMP input buffers) upstream of `start`, or `None` if there are more
/// than [`MAX_UPSTREAM`] nodes upstream.
fn upstream_sources(
    g: &RouteGraph,
    flow: &Flow,
    start: NodeIndex,
    budget: &mut usize,
) -> Option<Vec<NodeIndex>> {
    let mut seen = std::collections::HashSet::from([start]);
    let mut stack = vec![start];
    let mut sources = Vec::new();
    while let Some(v) = stack.pop() {
        if flow.source.get(v.index()) == Some(&true) {
            sources.push(v);
        }
        for w in g.graph.neighbors_directed(v, Incoming) {
            if seen.insert(w) {
                *budget = budget.checked_sub(1)?;
                if seen.len() > MAX_UPSTREAM {
                    return None;
                }
                stack.push(w);
            }
        }
    }
    Some(sources)
}

/// Whether configuration `cfg`, which delivers its colour to the CE and accepts it from
/// the link sides `fed` (where neighbours send it), gets one CE's wavelets from two sides:
/// the two sides and the configuration index of that CE's route.
fn duplicate(
    g: &RouteGraph,
    fabric: &Fabric,
    flow: &Flow,
    cfg: usize,
    fed: u8,
    budget: &mut usize,
) -> Option<(u8, usize)> {
    let mut seen: Vec<(u8, Vec<NodeIndex>)> = Vec::new();
    for r in 0..4u8 {
        if fed >> r & 1 == 0 {
            continue;
        }
        let node = g.node(fabric, cfg, r)?;
        let srcs = upstream_sources(g, flow, node, budget)?;
        for (side, other) in &seen {
            if let Some(&s) = srcs.iter().find(|s| other.contains(s)) {
                let src = g.graph.node_weight(s)?.cfg as usize;
                return Some((1 << side | 1 << r, src));
            }
        }
        seen.push((r, srcs));
    }
    None
}

/// One cycle through each strongly connected component of more than one node that a CE
/// sending on it can feed (a loop nothing enters stays empty), smallest first node first.
fn cycles(g: &RouteGraph, flow: &Flow) -> Vec<Vec<NodeIndex>> {
    let mut sccs: Vec<Vec<NodeIndex>> = loops(&g.graph)
        .into_iter()
        .filter(|s| s.iter().any(|n| flow.live.get(n.index()) == Some(&true)))
        .collect();
    for s in &mut sccs {
        s.sort();
    }
    sccs.sort();
    sccs.into_iter().map(|s| cycle_in(&g.graph, &s)).collect()
}

/// The strongly connected components of `g` of more than one node, by Tarjan's
/// algorithm without recursion (a route can cross the whole wafer), keeping no list for
/// the millions of single nodes.
fn loops(g: &Graph) -> Vec<Vec<NodeIndex>> {
    const UNSEEN: u32 = u32::MAX;
    let n = g.node_count();
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<NodeIndex> = Vec::new();
    let mut calls: Vec<(NodeIndex, std::slice::Iter<'_, u32>)> = Vec::new();
    let mut next = 0u32;
    let mut out = Vec::new();
    let mut enter = |v: NodeIndex,
                     index: &mut [u32],
                     low: &mut [u32],
                     on_stack: &mut [bool],
                     stack: &mut Vec<NodeIndex>| {
        if let (Some(i), Some(l), Some(o)) = (
            index.get_mut(v.index()),
            low.get_mut(v.index()),
            on_stack.get_mut(v.index()),
        ) {
            (*i, *l, *o) = (next, next, true);
        }
        next += 1;
        stack.push(v);
    };
    for root in g.node_indices() {
        if index.get(root.index()) != Some(&UNSEEN) {
            continue;
        }
        enter(root, &mut index, &mut low, &mut on_stack, &mut stack);
        calls.push((root, g.adjacent(root, Outgoing).iter()));
        while let Some((v, it)) = calls.last_mut() {
            let v = *v;
            if let Some(&w) = it.next() {
                let w = NodeIndex::new(w as usize);
                match index.get(w.index()).copied() {
                    Some(UNSEEN) => {
                        enter(w, &mut index, &mut low, &mut on_stack, &mut stack);
                        calls.push((w, g.adjacent(w, Outgoing).iter()));
                    }
                    Some(iw) if on_stack.get(w.index()) == Some(&true) => {
                        if let Some(l) = low.get_mut(v.index()) {
                            *l = (*l).min(iw);
                        }
                    }
                    _ => {}
                }
                continue;
            }
            calls.pop();
            let lv = low.get(v.index()).copied().unwrap_or(0);
            if let Some((u, _)) = calls.last()
                && let Some(l) = low.get_mut(u.index())
            {
                *l = (*l).min(lv);
            }
            if index.get(v.index()) == Some(&lv) {
                let mut comp = Vec::new();
                while let Some(w) = stack.pop() {
                    if let Some(o) = on_stack.get_mut(w.index()) {
                        *o = false;
                    }
                    comp.push(w);
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    out.push(comp);
                }
            }
        }
    }
    out
}

/// A shortest cycle through the first node of the component `scc` (sorted), found by a
/// breadth-first search that stays inside it.
fn cycle_in(g: &Graph, scc: &[NodeIndex]) -> Vec<NodeIndex> {
    let Some(&start) = scc.first() else {
        return Vec::new();
    };
    let mut prev: HashMap<NodeIndex, NodeIndex> = HashMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for w in g.neighbors(v) {
            if w == start {
                let mut path = vec![v];
                let mut cur = v;
                while cur != start {
                    match prev.get(&cur) {
                        Some(&p) => {
                            path.push(p);
                            cur = p;
                        }
                        None => break,
                    }
                }
                path.reverse();
                return path;
            }
            if scc.binary_search(&w).is_ok() && !prev.contains_key(&w) {
                prev.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    scc.to_vec()
}

fn at(fabric: &Fabric, tile: u32) -> String {
    let (x, y) = fabric.xy(tile);
    format!("({x}, {y})")
}

fn more(count: u32) -> String {
    match count {
        0 | 1 => String::new(),
        2 => " (and 1 more PE)".into(),
        n => format!(" (and {} more PEs)", n - 1),
    }
}

/// `w` with the route of PE `pe` for color `c` pointed at (`span`, `label`), or, without a
/// span, a note that `pe` configures none.
fn at_route(w: Diagnostic, span: Option<Span>, label: String, pe: &str, c: u8) -> Diagnostic {
    match span {
        Some(s) => w.with_label(s, label),
        None => w.with_note(no_route(pe, c)),
    }
}

fn no_route(pe: &str, c: u8) -> String {
    format!("PE {pe} configures no route for color {c}")
}

fn warn(code: &'static str, msg: String, span: Option<Span>, label: &str) -> Diagnostic {
    match span {
        Some(s) => Diagnostic::error(code, msg, s, label).warning(),
        None => Diagnostic::global(code, msg).warning(),
    }
}

fn sides(mask: u8) -> String {
    (0..4u8)
        .filter(|d| mask >> d & 1 == 1)
        .map(dir_name)
        .collect::<Vec<_>>()
        .join(" and ")
}

fn render(fabric: &Fabric, f: &Finding) -> Diagnostic {
    let k = &f.key;
    let c = k.color;
    let here = at(fabric, f.tile);
    let there = f.other.map(|t| at(fabric, t)).unwrap_or_default();
    let d = dir_name(k.dir);
    let n = more(f.count);
    let opp = dir_name(opposite(k.dir));
    match k.kind {
        Kind::NoReceiver => {
            let mut w = warn(
                codes::ROUTE_NO_RECEIVER,
                format!("color {c} is sent {d} from PE {here} into PE {there}, which has no route for it from the {opp}{n}"),
                k.span,
                format!("PE {here} sends color {c} {d} here").as_str(),
            );
            w = match k.other_span {
                Some(s) if k.other_is_task => w
                    .with_label(s, format!("PE {there}'s data task for color {c} is bound here"))
                    .with_note(no_route(&there, c)),
                s => at_route(w, s, format!("PE {there}'s route for color {c} does not accept it from the {opp} in any switch position"), &there, c),
            };
            w.with_note("a wavelet that gets there stops the fabric with a routing error")
                .with_help(format!("let PE {there} accept color {c} from the {opp}, or stop sending it {d}"))
        }
        Kind::NoSender => {
            let w = warn(
                codes::ROUTE_NO_SENDER,
                format!("PE {here} accepts color {c} from the {d}, but PE {there} never sends it {opp}{n}"),
                k.span,
                format!("accepts color {c} from the {d} here").as_str(),
            );
            at_route(w, k.other_span, format!("PE {there}'s route for the color does not send {opp} in any switch position"), &there, c)
                .with_note("nothing ever arrives on that side; a receiver waiting for it waits forever")
        }
        Kind::OffEdgeSend | Kind::OffEdgeReceive => {
            let send = k.kind == Kind::OffEdgeSend;
            let (msg, label) = if send {
                (
                    format!("PE {here} sends color {c} {d}, off the edge of the rectangle{n}"),
                    format!("sends color {c} {d} here"),
                )
            } else {
                (
                    format!("PE {here} accepts color {c} from the {d}, beyond the edge of the rectangle{n}"),
                    format!("accepts color {c} from the {d} here"),
                )
            };
            warn(codes::ROUTE_OFF_EDGE, msg, k.span, &label)
                .with_note(if send {
                    "no router beyond the rectangle takes it: the simulator stops with a routing error when a wavelet gets there"
                } else {
                    "nothing beyond the rectangle sends on this color: host streams reach the PEs through their RAMP, not across the edge"
                })
                .with_help("configure the PEs at the edge separately")
        }
        Kind::TaskUnreached => {
            let w = warn(
                codes::ROUTE_TASK_UNREACHED,
                format!("a data task of PE {here} is bound to color {c}, but no route delivers color {c} to that PE's CE{n}"),
                k.span,
                "data task bound here",
            );
            at_route(w, k.other_span, format!("PE {here}'s route for color {c} does not lead to the CE (RAMP)"), &here, c)
                .with_note("the task never runs")
                .with_help(format!("route color {c} to the CE (RAMP) at PE {here}"))
        }
        Kind::Unread => warn(
            codes::ROUTE_UNREAD,
            format!("color {c} is delivered to the CE of PE {here}, but its program does not read it{n}"),
            k.span,
            format!("delivers color {c} to the RAMP here").as_str(),
        )
        .with_note("the program binds no data task to the color and has no fabric input DSD or input queue on it; wavelets pile up and then block the route")
        .with_help(format!("read color {c} in that PE's program (a data task, a fabric input DSD, an input queue), or stop delivering it to the CE (RAMP)")),
        Kind::Merge => {
            let w = warn(
                codes::ROUTE_MERGE,
                format!("PE {here} gets every wavelet PE {there}'s CE sends on color {c} twice, from the {}{n}", sides(k.dir)),
                k.span,
                format!("delivers color {c} to the CE from the {} here", sides(k.dir)).as_str(),
            );
            let w = match k.other_span {
                Some(s) => w.with_label(s, format!("PE {there} sends color {c} here; its routes reach PE {here} both ways")),
                None => w.with_note(format!("PE {there}'s CE sends the color; its routes reach PE {here} both ways")),
            };
            w.with_note("the two copies arrive at the CE in no fixed order")
                .with_help("send each wavelet along one path only, or accept only one of the sides")
        }
    }
}

fn render_cycle(
    fabric: &Fabric,
    g: &RouteGraph,
    cycle: &[NodeIndex],
    span_of: &impl Fn(usize) -> Option<Span>,
) -> Diagnostic {
    let hops: Vec<(u32, u8, u8, usize)> = cycle
        .iter()
        .filter_map(|&n| {
            let ch = g.graph.node_weight(n)?;
            let c = fabric.cfgs.get(ch.cfg as usize)?;
            Some((c.tile, c.color, ch.port, ch.cfg as usize))
        })
        .collect();
    let mut colors: Vec<u8> = hops.iter().map(|h| h.1).collect();
    colors.sort_unstable();
    colors.dedup();
    let colors = colors
        .iter()
        .map(u8::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let mut path: Vec<String> = hops
        .iter()
        .take(8)
        .map(|&(t, c, p, _)| format!("{} c{c} from {}", at(fabric, t), dir_name(p)))
        .collect();
    if hops.len() > 8 {
        path.push(format!("... {} more", hops.len() - 8));
    }
    let first = hops.first().copied();
    let span = first.and_then(|h| span_of(h.3));
    let mut d = warn(
        codes::ROUTE_CYCLE,
        format!(
            "the routes of color(s) {colors} form a cycle of {} router buffers starting at PE {}",
            hops.len(),
            first.map(|h| at(fabric, h.0)).unwrap_or_default()
        ),
        span,
        "this route is part of the cycle",
    );
    let mut labelled: Vec<Span> = span.into_iter().collect();
    for h in &hops {
        if let Some(s) = span_of(h.3)
            && !labelled.contains(&s)
            && labelled.len() < 4
        {
            d = d.with_label(
                s,
                format!("PE {} continues the cycle here", at(fabric, h.0)),
            );
            labelled.push(s);
        }
    }
    d.with_note(format!("the cycle: {}", path.join(" -> ")))
        .with_note("each buffer waits for room in the next: once all of them are full, no wavelet on the cycle can move (deadlock)")
        .with_help("break the cycle: let one PE on it take the color to its CE only, or use a second color for part of the loop")
}

/// The route graph in Graphviz format: every (tile, colour, input port) buffer and CE
/// sink, an edge per hop labelled with the lowest switch position taking it (`p0` ..
/// `p3`), limited to `color` if given (edges that change colour by colour swap are kept
/// when either end has it).
pub fn dot(meta: &Meta, routes: &Routes, color: Option<u8>) -> String {
    let fabric = Fabric::new(meta, routes);
    let g = RouteGraph::build(&fabric, true);
    let keep = |n: NodeIndex| {
        g.graph
            .node_weight(n)
            .and_then(|ch| fabric.cfgs.get(ch.cfg as usize))
            .is_some_and(|c| color.is_none_or(|k| k == c.color))
    };
    let name = |n: NodeIndex| -> String {
        match g
            .graph
            .node_weight(n)
            .and_then(|ch| Some((fabric.cfgs.get(ch.cfg as usize)?, ch.port)))
        {
            Some((c, p)) => {
                let (x, y) = fabric.xy(c.tile);
                format!("\"{x},{y} c{} {}\"", c.color, dir_name(p))
            }
            None => format!("\"?{}\"", n.index()),
        }
    };
    let mut s = String::from("digraph routes {\n  node [shape=box, fontname=monospace];\n");
    let _ = writeln!(
        s,
        "  // nodes: \"X,Y cC PORT\" = the input buffer of colour C at PE (X, Y) for wavelets from PORT; \"X,Y cC CE\" = delivery to the CE"
    );
    for n in g.graph.node_indices() {
        if keep(n) {
            let shape = match g.graph.node_weight(n) {
                Some(ch) if ch.port == CE => " [shape=ellipse]",
                _ => "",
            };
            let _ = writeln!(s, "  {}{shape};", name(n));
        }
    }
    for &(a, b, p) in &g.graph.edges {
        let (a, b) = (NodeIndex::new(a as usize), NodeIndex::new(b as usize));
        if !keep(a) && !keep(b) {
            continue;
        }
        let style = if p > 0 { ", style=dashed" } else { "" };
        let _ = writeln!(s, "  {} -> {} [label=\"p{p}\"{style}];", name(a), name(b));
    }
    s.push_str("}\n");
    s
}
