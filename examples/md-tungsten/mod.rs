//! Host side of the MD flagship's second form, written the way a Tungsten user would
//! (`examples/md-tungsten`, issue 17): the router tables and per-PE parameter blobs that
//! `mdlj-tables` writes for `miset`. The fold (which logical cell each PE holds) is the
//! CSL flagship's one definition, [`crate::md::geometry::Geometry`]; the table words are
//! `csl_arch::tables`'s.
//!
//! The padded rectangle is the core (`nx·nzx` × `ny·nzy` PEs at offset (1, 1)) plus the
//! one-tile moat ring, as `mdlj.paint` lays it out.
//!
//! For `mdlj.w` itself: its inputs from a LAMMPS dump ([`atom_inputs`]), the socket groups
//! of its floorplan ([`mdlj_classes_paint`]) and, in [`energy`], the checks of a run
//! (energies against a reference table and the CSL flagship's, the exchange oracle, the
//! overflow flags, cycles per timestep and per phase).

pub mod energy;

use crate::md::device::{bin, cell_frame, expected_exchange};
use crate::md::dump::Dump;
use crate::md::geometry::{Geometry, RANGE};
use csl_arch::fabric::Direction;
use csl_arch::image::{PopMode, SwitchConfig, SwitchPos};
use csl_arch::tables::{
    ROUTER_WORDS_PER_TILE, RouterEntry, SWITCH_WORDS_PER_COLOR, SWITCH_WORDS_PER_TILE,
    encode_switch,
};

/// The x− / x+ lane colour pairs (low lane even, high lane odd; seed 002's plan).
pub const X_COLOURS: [u8; 4] = [0, 1, 2, 3];
/// The y− / y+ lane colour pairs.
pub const Y_COLOURS: [u8; 4] = [4, 5, 6, 7];

/// Words of `paramstruct` (params.w): nx ny nzx nzy ix iy iz izx izy hix hiy nlocal
/// nsample.
pub const PARAM_WORDS: usize = 13;

/// Width and height of the padded rectangle (core plus moat).
pub fn padded(g: &Geometry) -> (usize, usize) {
    (g.width() + 2, g.height() + 2)
}

/// The router entry of a moat tile for one colour: receive from the inward side, send
/// straight back, and swap to the partner colour on that axis (seed 002's
/// `RtoRswap`/`LtoLswap`/`UtoUswap`/`DtoDswap`). Both colours of a pair get the route:
/// under the swap, a wavelet tagged `c` is handled by `c ^ 1`.
fn turnaround(inward: Direction, swap_x: bool) -> RouterEntry {
    RouterEntry {
        rx: vec![inward],
        tx: vec![inward],
        color_swap_x: swap_x,
        color_swap_y: !swap_x,
        ..RouterEntry::default()
    }
}

/// A plain route from `rx` to `tx`.
fn plain(rx: Direction, tx: Direction) -> RouterEntry {
    RouterEntry {
        rx: vec![rx],
        tx: vec![tx],
        ..RouterEntry::default()
    }
}

/// The router words of the moat ring's turnarounds (x colours on the west and east
/// columns, y colours on the north and south rows; corners route nothing: the north-west
/// one runs the barrier origin), into a zeroed `router` table.
fn moat_ring(g: &Geometry, words: &mut [u16]) {
    let (w, h) = padded(g);
    let mut set = |x: usize, y: usize, colours: &[u8], e: &RouterEntry| {
        for &c in colours {
            words[(y * w + x) * ROUTER_WORDS_PER_TILE + usize::from(c)] = e.encode();
        }
    };
    for y in 1..h - 1 {
        set(0, y, &X_COLOURS, &turnaround(Direction::East, true));
        set(w - 1, y, &X_COLOURS, &turnaround(Direction::West, true));
    }
    for x in 1..w - 1 {
        set(x, 0, &Y_COLOURS, &turnaround(Direction::South, false));
        set(x, h - 1, &Y_COLOURS, &turnaround(Direction::North, false));
    }
}

/// The `router` table of the padded rectangle for the moat check, order `y x r`: the
/// moat ring's turnarounds and, on the core's edge tiles (not its corners), the routes
/// of `moatcheck.w`: the low-lane colour of the side from the core out to the moat, its
/// partner from the moat back to the core (west 0/1, east 2/3, north 4/5, south 6/7).
pub fn router_table(g: &Geometry) -> Vec<u16> {
    let (w, h) = padded(g);
    let mut words = vec![0u16; w * h * ROUTER_WORDS_PER_TILE];
    moat_ring(g, &mut words);
    let mut set = |x: usize, y: usize, colours: &[u8], e: &RouterEntry| {
        for &c in colours {
            words[(y * w + x) * ROUTER_WORDS_PER_TILE + usize::from(c)] = e.encode();
        }
    };
    use Direction::{East, North, Ramp, South, West};
    for y in 2..h - 2 {
        set(1, y, &[0], &plain(Ramp, West));
        set(1, y, &[1], &plain(West, Ramp));
        set(w - 2, y, &[2], &plain(Ramp, East));
        set(w - 2, y, &[3], &plain(East, Ramp));
    }
    for x in 2..w - 2 {
        set(x, 1, &[4], &plain(Ramp, North));
        set(x, 1, &[5], &plain(North, Ramp));
        set(x, h - 2, &[6], &plain(Ramp, South));
        set(x, h - 2, &[7], &plain(South, Ramp));
    }
    words
}

/// The `switch` table of the padded rectangle for the moat check, order `y x r n` (no
/// switches).
pub fn switch_table(g: &Geometry) -> Vec<u16> {
    let (w, h) = padded(g);
    vec![0u16; w * h * SWITCH_WORDS_PER_TILE]
}

/// The z− relay's colour (blocks move toward lower z).
pub const Z_MINUS: u8 = 8;
/// The z+ relay's colour (blocks move toward higher z; the reverse force relay's).
pub const Z_PLUS: u8 = 9;
/// The z+ relay's colours in a 1 × n block (towards higher, lower offsets), where z−
/// takes both 8 and 9.
pub const Z_LINE_PLUS: [u8; 2] = [16, 17];

/// Control wavelets of the relay (commands 0, 1, 2, …; `*` = CE-filtered): the x/y
/// burst trailer `(adv*, adv*, rst*)` …
pub const XY_CMD1: u32 = crate::md::switch::CMD1;
/// … then `(adv*)` (the CSL flagship's switch relay sends the same two words).
pub const XY_CMD2: u32 = crate::md::switch::CMD2;
/// The z trailer (and that of an x/y lane whose fold is 1) `(adv*, rst*)` …
pub const Z_CMD1: u32 = 0x0D40_9249;
/// … then `(adv*)`.
pub const Z_CMD2: u32 = 0x0940_9249;
/// The single trailer `(rst*)` of the end PEs of a 1 × n block's z line.
pub const END_CMD: u32 = 0x0980_9249;

/// The exchange oracle of the count relay for core PE (`px`, `py`): the halo counts, the
/// halo cell ids (in the counts' place), and how a failure names the PE.
fn relay_oracle(g: &Geometry, px: usize, py: usize) -> ([u32; 24], [u32; 24], String) {
    let c = g.cell(px, py);
    let counts = expected_exchange(g, &relay_count, c.x, c.y, c.z);
    let id = |x: usize, y: usize, z: usize| relay_id(g, x, y, z);
    let ids = expected_exchange(g, &id, c.x, c.y, c.z);
    let at = format!(
        "PE ({}, {}) (cell {}, {}, {})",
        px + 1,
        py + 1,
        c.x,
        c.y,
        c.z
    );
    (counts, ids, at)
}

/// One relay slot's switch machine. `s` is the slot's place along the ring in the
/// direction the blocks move (0..n), `f` the slots per cell (the fold), `up`/`down` the
/// router ports towards the previous and the next slot. Returns the router entry
/// (position 0) and the switch.
///
/// * `f >= 2` (seed 002's four positions): 0 forward (`up` → `down`), 1 inject ("tail",
///   RAMP → `down`), 2 loopback (RAMP → RAMP), 3 deliver ("head", `up` → RAMP). Slots
///   are cut into segments of `f + 1`: the tail at `s ≡ 0`, the head at `s ≡ f`,
///   forwarders between; a trailing partial segment (`s >= (n / (f+1))·(f+1)`) is all
///   heads. Pop on advance, no ring mode.
/// * `f == 1` (the z chain, and an x/y lane of fold 1, where a cell is one slot): three
///   positions, 0 inject (RAMP → `down`), 1 loopback, 2 deliver (`up` → RAMP); even
///   slots start injecting, odd ones delivering (red/black). Pop on advance.
fn slot_machine(
    s: usize,
    n: usize,
    f: usize,
    up: Direction,
    down: Direction,
) -> (RouterEntry, SwitchConfig) {
    use Direction::Ramp;
    let pos = |rx: Direction, tx: Direction| SwitchPos {
        rx: Some(rx),
        tx: Some(vec![tx]),
    };
    if f >= 2 {
        // The CSL flagship's switch relay starts its machines the same way: one rule.
        let start = crate::md::switch::start_position(s, n, f);
        (
            plain(up, down),
            SwitchConfig {
                positions: [pos(Ramp, down), pos(Ramp, Ramp), pos(up, Ramp)],
                current: start,
                ring_mode: false,
                pop_mode: PopMode::PopOnAdvance,
            },
        )
    } else {
        (
            plain(Ramp, down),
            SwitchConfig {
                positions: [pos(Ramp, Ramp), pos(up, Ramp), SwitchPos::default()],
                current: if s.is_multiple_of(2) { 0 } else { 2 },
                ring_mode: false,
                pop_mode: PopMode::PopOnAdvance,
            },
        )
    }
}

/// Whether the z fold's block has a closed tour of one-hop steps (both sides at least 2):
/// the z chains then run along it, z− on colour 8 and z+ on colour 9. A 1 × n block's z
/// ring is two tracks (`block_line`): its z− relay takes both colours.
pub fn z_chain_local(g: &Geometry) -> bool {
    g.nzx >= 2 && g.nzy >= 2
}

/// A PE's place along its 1 × n block (the lane-corrected offset along the block's long
/// side), for a geometry whose z block is a line.
fn block_line(g: &Geometry, px: usize, py: usize) -> usize {
    let c = g.cell(px, py);
    if g.nzy == 1 { c.izx } else { c.izy }
}

/// The port of PE `a` towards its neighbour `b` (one hop apart).
fn towards(a: (usize, usize), b: (usize, usize)) -> Option<Direction> {
    match (b.0 as isize - a.0 as isize, b.1 as isize - a.1 as isize) {
        (1, 0) => Some(Direction::East),
        (-1, 0) => Some(Direction::West),
        (0, 1) => Some(Direction::South),
        (0, -1) => Some(Direction::North),
        _ => None,
    }
}

/// The relay's `router` (order `y x r`) and `switch` (order `y x r n`) tables of the
/// padded rectangle: the moat ring's turnarounds; on every core PE, for each lane
/// colour 0–7, either its slot machine ([`slot_machine`]; the PE's own lane) or a plain
/// forward (the other lane's); the z chains, along the block's tour (z− on 8, z+ on 9)
/// when it has one, else on its two tracks ([`z_line_tables`]); and the ping network
/// ([`ping_tables`]).
///
/// Lane colours: 0/1 x− (low lane flows west, high lane east), 2/3 x+ (low east, high
/// west), 4/5 y− (low north, high south), 6/7 y+ (low south, high north). A "+" relay
/// moves each block to the next cell up (a PE hears cells x−1..x−3), a "−" relay down.
/// Along a row the ring slots are the chain indices `nzx·x + izx` (in increasing order
/// for x+, decreasing for x−); the moat turns the low lane's traffic into the high
/// lane's and back.
pub fn relay_tables(g: &Geometry) -> (Vec<u16>, Vec<u16>) {
    use Direction::{East, North, South, West};
    let (w, h) = padded(g);
    let mut router = vec![0u16; w * h * ROUTER_WORDS_PER_TILE];
    let mut switch = vec![0u16; w * h * SWITCH_WORDS_PER_TILE];
    moat_ring(g, &mut router);
    let (cw, ch) = (g.width(), g.height());
    for py in 0..ch {
        for px in 0..cw {
            let tile = (py + 1) * w + px + 1;
            let mut put = |c: u8, e: &RouterEntry, sw: Option<&SwitchConfig>| {
                router[tile * ROUTER_WORDS_PER_TILE + usize::from(c)] = e.encode();
                let at = (tile * ROUTER_WORDS_PER_TILE + usize::from(c)) * SWITCH_WORDS_PER_COLOR;
                switch[at..at + SWITCH_WORDS_PER_COLOR].copy_from_slice(&encode_switch(sw));
            };
            let cell = g.cell(px, py);
            let xchain = g.nzx * cell.x + cell.izx;
            let ychain = g.nzy * cell.y + cell.izy;
            // (colour, the lane that owns it, flows to the +side, a "+" relay)
            for c in 0u8..8 {
                let lane = usize::from(c & 1);
                let plus = matches!(c, 2 | 3 | 6 | 7);
                let forward = matches!(c, 1 | 2 | 5 | 6);
                let (xaxis, own, chain, n, f) = if c < 4 {
                    (true, cell.hix, xchain, cw, g.nzx)
                } else {
                    (false, cell.hiy, ychain, ch, g.nzy)
                };
                let (up, down) = match (xaxis, forward) {
                    (true, true) => (West, East),
                    (true, false) => (East, West),
                    (false, true) => (North, South),
                    (false, false) => (South, North),
                };
                if lane == own {
                    let s = if plus { chain } else { n - 1 - chain };
                    let (e, sw) = slot_machine(s, n, f, up, down);
                    put(c, &e, Some(&sw));
                } else {
                    put(c, &plain(up, down), None);
                }
            }
            if z_chain_local(g) {
                let nz = g.nz();
                let here = (px, py);
                let hi = g.pe(cell.x, cell.y, (cell.z + 1) % nz);
                let lo = g.pe(cell.x, cell.y, (cell.z + nz - 1) % nz);
                if let (Some(to_hi), Some(to_lo)) = (towards(here, hi), towards(here, lo)) {
                    let (e, sw) = slot_machine(nz - 1 - cell.z, nz, 1, to_hi, to_lo);
                    put(Z_MINUS, &e, Some(&sw));
                    let (e, sw) = slot_machine(cell.z, nz, 1, to_lo, to_hi);
                    put(Z_PLUS, &e, Some(&sw));
                }
            }
        }
    }
    if !z_chain_local(g) {
        z_line_tables(g, false, [Z_MINUS, Z_PLUS], &mut router, &mut switch);
        z_line_tables(g, true, Z_LINE_PLUS, &mut router, &mut switch);
    }
    ping_tables(g, &mut router, &mut switch);
    (router, switch)
}

/// The ping network's probe colour (a switch on every core PE).
pub const PING: u8 = 12;
/// The ping network's way back to the origin.
pub const PING_BACK: u8 = 13;
/// The ping network's release colour (a plain broadcast).
pub const PING_RELEASE: u8 = 14;
/// The probe's trailer `(rst*, adv*)`: resets every core PE's switch it passes and
/// hands the way back on from one column to the next.
pub const PING_CMD: u32 = 0x0B80_9249;

/// The barrier network (seed 002's ping, colours 12–15; ours uses 12, 13 and 14; 12 and
/// 13 are the switchable pair on WSE-3). A comb: the **spine** along the north moat row
/// carries the origin's probe (12) and release (14) east and drops a copy into every
/// core column (the **teeth**); the teeth's probes come back along the south moat row,
/// one column after the other, and home along the west moat column (swapped to 13 at the
/// south-west corner).
///
/// * A core PE's colour 12 has a two-position switch: 0 loopback (RAMP → RAMP), 1 pass
///   (north → south and RAMP); start 0, no pop. At a barrier the PE sends `(adv*)`,
///   which its loopback swallows (filtered) while moving it to 1; the probe can pass a PE
///   only then. Its colour 14 is a plain north → south and RAMP.
/// * The origin sends the probe and [`PING_CMD`]; its `rst` puts every core switch back
///   to 0 right behind the probe.
/// * The south moat row merges the teeth without a router ever having two live inputs:
///   each tile but the easternmost has a switch, 0 pass the columns further east
///   (east → west), 1 its own column (north → west), start 0, pop on advance. The last
///   wavelet a column sends is the trailer popped once by its south tile (`(adv*)`),
///   which moves the next tile west from passing to its own column; a tile's own trailer
///   resets it (`rst`, popped). The easternmost tile routes north → west and pops every
///   command (a switch with no positions, always pop).
/// * The origin receives one probe per column: every PE has arrived. It then sends the
///   release on 14, which every core PE receives.
fn ping_tables(g: &Geometry, router: &mut [u16], switch: &mut [u16]) {
    use Direction::{East, North, Ramp, South, West};
    let (w, _) = padded(g);
    let (cw, ch) = (g.width(), g.height());
    let mut set = |x: usize, y: usize, c: u8, e: RouterEntry, sw: Option<SwitchConfig>| {
        let tile = y * w + x;
        router[tile * ROUTER_WORDS_PER_TILE + usize::from(c)] = e.encode();
        let at = (tile * ROUTER_WORDS_PER_TILE + usize::from(c)) * SWITCH_WORDS_PER_COLOR;
        switch[at..at + SWITCH_WORDS_PER_COLOR].copy_from_slice(&encode_switch(sw.as_ref()));
    };
    let multi = |rx: Direction, tx: &[Direction]| RouterEntry {
        rx: vec![rx],
        tx: tx.to_vec(),
        ..RouterEntry::default()
    };
    let one = |rx: Direction, tx: &[Direction]| SwitchPos {
        rx: Some(rx),
        tx: Some(tx.to_vec()),
    };
    let machine = |positions: [SwitchPos; 3], pop_mode: PopMode| SwitchConfig {
        positions,
        current: 0,
        ring_mode: false,
        pop_mode,
    };
    set(0, 0, PING, plain(Ramp, East), None);
    set(0, 0, PING_RELEASE, plain(Ramp, East), None);
    set(0, 0, PING_BACK, plain(South, Ramp), None);
    for x in 1..=cw {
        let spine: &[Direction] = if x < cw { &[East, South] } else { &[South] };
        set(x, 0, PING, multi(West, spine), None);
        set(x, 0, PING_RELEASE, multi(West, spine), None);
        for y in 1..=ch {
            let pass = machine(
                [
                    one(North, &[South, Ramp]),
                    SwitchPos::default(),
                    SwitchPos::default(),
                ],
                PopMode::NoPop,
            );
            set(x, y, PING, plain(Ramp, Ramp), Some(pass));
            let down: &[Direction] = if y < ch { &[South, Ramp] } else { &[Ramp] };
            set(x, y, PING_RELEASE, multi(North, down), None);
        }
        let merge = if x < cw {
            machine(
                [
                    one(North, &[West]),
                    SwitchPos::default(),
                    SwitchPos::default(),
                ],
                PopMode::PopOnAdvance,
            )
        } else {
            machine(Default::default(), PopMode::AlwaysPop)
        };
        let pos0 = if x < cw { East } else { North };
        set(x, ch + 1, PING, plain(pos0, West), Some(merge));
    }
    // Home on 13: the south-west corner swaps 12 to 13 (both colours swap on x).
    set(
        0,
        ch + 1,
        PING,
        RouterEntry {
            color_swap_x: true,
            ..RouterEntry::default()
        },
        None,
    );
    set(
        0,
        ch + 1,
        PING_BACK,
        RouterEntry {
            rx: vec![East],
            tx: vec![North],
            color_swap_x: true,
            ..RouterEntry::default()
        },
        None,
    );
    for y in 1..=ch {
        set(0, y, PING_BACK, plain(South, North), None);
    }
}

/// Checks the barrier test (`pingtest.w`, `pingorigin.w`): `core.stamp` holds, per core
/// PE and barrier, the timestamp (3 words) when the PE arrived and when it left; `frame`
/// is the origin's barrier count. Every PE must leave barrier `b` after the last PE
/// arrived at it, and the origin must have counted `barriers`. Returns (the largest
/// arrival spread, the largest wait from the last arrival to a departure) in cycles.
pub fn check_ping(
    g: &Geometry,
    barriers: usize,
    stamps: &[u16],
    frame: &[u16],
) -> Result<(u64, u64), String> {
    let n = g.width() * g.height();
    let per = barriers * 6;
    if stamps.len() != n * per {
        return Err(format!(
            "{} words of core.stamp for {n} PEs x {per}",
            stamps.len()
        ));
    }
    if frame.first().map(|&f| usize::from(f)) != Some(barriers) {
        return Err(format!(
            "the origin counted {frame:?} barriers, expected {barriers}"
        ));
    }
    let t = |pe: usize, b: usize, k: usize| -> u64 {
        let w = &stamps[pe * per + 6 * b + 3 * k..pe * per + 6 * b + 3 * k + 3];
        u64::from(w[0]) | u64::from(w[1]) << 16 | u64::from(w[2]) << 32
    };
    let (mut spread, mut release) = (0, 0);
    for b in 0..barriers {
        let last = (0..n).map(|pe| t(pe, b, 0)).max().unwrap_or(0);
        let first = (0..n).map(|pe| t(pe, b, 0)).min().unwrap_or(0);
        for pe in 0..n {
            let left = t(pe, b, 1);
            if left <= last {
                return Err(format!(
                    "PE ({}, {}) left barrier {b} at cycle {left}, before the last PE arrived ({last})",
                    pe % g.width() + 1,
                    pe / g.width() + 1
                ));
            }
            release = release.max(left - last);
        }
        spread = spread.max(last - first);
    }
    Ok((spread, release))
}

/// The z relays of a geometry whose z block is a 1 × n line (the 7 × 1 fold): the
/// block's z ring runs out along the even offsets and back along the odd ones (the
/// serpentine interleave of `geometry.rs`), so each transfer crosses at most one tile of
/// the other track. Each direction takes two colours, `colours[0]` for the transfers
/// towards higher offsets and `colours[1]` for those towards lower ones: z− ([`Z_MINUS`],
/// `plus` false) 8 and 9, z+ ([`Z_LINE_PLUS`], `plus` true) 16 and 17 (switchable on
/// WSE-3, and free: a Paint image has no memcpy). A PE that sends and receives on one
/// colour gets the three-position machine of a fold of 1 ([`slot_machine`], starting in
/// "inject"); the block's two end PEs receive on one colour and send on the other, with
/// plain routes (RAMP → out, in → RAMP) on each, and end their bursts with one `(rst*)`
/// instead of the z trailer, which resets the next PE's machine; the tiles a transfer
/// crosses forward it.
fn z_line_tables(
    g: &Geometry,
    plus: bool,
    colours: [u8; 2],
    router: &mut [u16],
    switch: &mut [u16],
) {
    let (w, _) = padded(g);
    let (cw, ch) = (g.width(), g.height());
    let nz = g.nz();
    // Per core tile and colour: the port it sends to, the port it receives from,
    // and the (in, out) of a transfer it forwards.
    #[derive(Clone, Copy, Default)]
    struct Role {
        send: Option<Direction>,
        recv: Option<Direction>,
        fwd: Option<(Direction, Direction)>,
    }
    let mut roles = vec![[Role::default(); 2]; cw * ch];
    for py in 0..ch {
        for px in 0..cw {
            let c = g.cell(px, py);
            let to = g.pe(c.x, c.y, (c.z + if plus { 1 } else { nz - 1 }) % nz);
            let k = usize::from(block_line(g, to.0, to.1) < block_line(g, px, py));
            let (dx, dy) = (to.0 as isize - px as isize, to.1 as isize - py as isize);
            let hops = dx.unsigned_abs() + dy.unsigned_abs();
            let step = (dx.signum(), dy.signum());
            let at = |i: usize| {
                (
                    (px as isize + step.0 * i as isize) as usize,
                    (py as isize + step.1 * i as isize) as usize,
                )
            };
            let (Some(out), Some(back)) = (towards(at(0), at(1)), towards(at(1), at(0))) else {
                continue;
            };
            roles[py * cw + px][k].send = Some(out);
            roles[to.1 * cw + to.0][k].recv = Some(back);
            for i in 1..hops {
                let (x, y) = at(i);
                roles[y * cw + x][k].fwd = Some((back, out));
            }
        }
    }
    use Direction::Ramp;
    for py in 0..ch {
        for px in 0..cw {
            let tile = (py + 1) * w + px + 1;
            for (k, r) in roles[py * cw + px].iter().enumerate() {
                let c = usize::from(colours[k]);
                let (e, sw) = match (r.send, r.recv, r.fwd) {
                    (Some(out), Some(from), _) => {
                        let (e, sw) = slot_machine(0, nz, 1, from, out);
                        (e, Some(sw))
                    }
                    (Some(out), None, _) => (plain(Ramp, out), None),
                    (None, Some(from), _) => (plain(from, Ramp), None),
                    (None, None, Some((from, out))) => (plain(from, out), None),
                    (None, None, None) => continue,
                };
                router[tile * ROUTER_WORDS_PER_TILE + c] = e.encode();
                let at = (tile * ROUTER_WORDS_PER_TILE + c) * SWITCH_WORDS_PER_COLOR;
                switch[at..at + SWITCH_WORDS_PER_COLOR]
                    .copy_from_slice(&encode_switch(sw.as_ref()));
            }
        }
    }
}

/// The synthetic atom count the count relay gives cell (x, y, z): 1..=13, varied so
/// that a block from the wrong cell shows.
pub fn relay_count(x: usize, y: usize, z: usize) -> u32 {
    1 + ((3 * x + 5 * y + 7 * z) % 13) as u32
}

/// The count relay's cell id of (x, y, z): `x + nx·(y + ny·z)`.
pub fn relay_id(g: &Geometry, x: usize, y: usize, z: usize) -> u32 {
    (x + g.nx * (y + g.ny * z)) as u32
}

/// `core.params`' `nlocal` for the count relay, order `y x` over the core:
/// [`relay_count`] of each PE's cell.
pub fn relay_counts(g: &Geometry) -> Vec<u16> {
    let mut out = Vec::with_capacity(g.width() * g.height());
    for py in 0..g.height() {
        for px in 0..g.width() {
            let c = g.cell(px, py);
            out.push(relay_count(c.x, c.y, c.z) as u16);
        }
    }
    out
}

/// Words of `core.got` per PE in the count relay (`relay.w`): for each halo (xm, xp, ym,
/// yp, z lines of z+1..z+3) and each cell 1..=3, the relayed count and id; then the nine
/// region starts of the CSL flagship's `diag` (own, xm, x0, xp, z lines, ym, y0, yp,
/// end); then the x-lines of z−1..z−3 that the z+ relay (the reduction's direction)
/// brings, count and id.
pub const RELAY_WORDS: usize = 6 * RANGE * 2 + 9;

/// The x-lines of cells z−1, z−2, z−3 at (x, y) (the z+ relay's halo), from the exchange
/// oracle: the z lines of the PE at z−4 are those of z−3, z−2, z−1.
fn zplus_lines(
    g: &Geometry,
    count: &dyn Fn(usize, usize, usize) -> u32,
    x: usize,
    y: usize,
    z: usize,
) -> [u32; RANGE] {
    let nz = g.nz();
    let e = expected_exchange(g, count, x, y, (z + nz - RANGE - 1) % nz);
    let mut out = [0; RANGE];
    for (k, o) in out.iter_mut().enumerate() {
        *o = e[4 * RANGE + RANGE - 1 - k];
    }
    out
}

/// Checks `core.got` of the count relay against the CSL flagship's exchange oracle
/// ([`expected_exchange`]): the counts and region starts with [`relay_count`] as the
/// atoms per cell, the ids with [`relay_id`] in its place (so every block is checked to
/// come from the right cell, and every z block to be the right x-line), and the z+
/// relay's x-lines ([`zplus_lines`]). Returns the number of words checked.
pub fn check_relay(g: &Geometry, got: &[u16]) -> Result<usize, String> {
    let (w, h) = (g.width(), g.height());
    if got.len() != w * h * RELAY_WORDS {
        return Err(format!(
            "{} words of core.got for {w}x{h} PEs x {RELAY_WORDS}",
            got.len()
        ));
    }
    let halos = 5;
    let names = ["xm", "xp", "ym", "yp", "z-line"];
    let starts = ["own", "xm", "x0", "xp", "z lines", "ym", "y0", "yp", "end"];
    let nstarts = starts.len();
    let mut checked = 0;
    for py in 0..h {
        for px in 0..w {
            let v = &got[(py * w + px) * RELAY_WORDS..(py * w + px + 1) * RELAY_WORDS];
            let c = g.cell(px, py);
            let (counts, ids, at) = relay_oracle(g, px, py);
            for d in 0..halos {
                for k in 0..RANGE {
                    let (gc, gi) = (v[(d * RANGE + k) * 2], v[(d * RANGE + k) * 2 + 1]);
                    let (ec, ei) = (counts[d * RANGE + k], ids[d * RANGE + k]);
                    if u32::from(gc) != ec || u32::from(gi) != ei {
                        return Err(format!(
                            "{at}: {} halo, cell {}: got count {gc} id {gi}, expected count {ec} id {ei}",
                            names[d],
                            k + 1
                        ));
                    }
                    checked += 2;
                }
            }
            for (j, name) in starts.iter().enumerate().take(nstarts) {
                let (gs, es) = (v[5 * RANGE * 2 + j], counts[5 * RANGE + j]);
                if u32::from(gs) != es {
                    return Err(format!(
                        "{at}: region start `{name}` is {gs}, expected {es}"
                    ));
                }
                checked += 1;
            }
            let (zc, zi) = (
                zplus_lines(g, &relay_count, c.x, c.y, c.z),
                zplus_lines(g, &|x, y, z| relay_id(g, x, y, z), c.x, c.y, c.z),
            );
            for k in 0..RANGE {
                let base = 5 * RANGE * 2 + nstarts + 2 * k;
                let (gc, gi) = (v[base], v[base + 1]);
                if u32::from(gc) != zc[k] || u32::from(gi) != zi[k] {
                    return Err(format!(
                        "{at}: z+ relay, x-line of z-{}: got count {gc} id {gi}, expected count {} id {}",
                        k + 1,
                        zc[k],
                        zi[k]
                    ));
                }
                checked += 2;
            }
        }
    }
    Ok(checked)
}

/// Words of `core.burst` per PE in the variable-length bursts of `relay.w`: for x+, x−,
/// y+ and y− and each shift 1..=3, a block of up to [`BURST_MAX`] words as received.
pub const BURST_WORDS: usize = 4 * RANGE * BURST_MAX;

/// The longest block of the bursts: [`relay_count`] is at most 13.
pub const BURST_MAX: usize = 13;

/// Word `j` of cell `id`'s block in the bursts.
pub fn burst_word(id: u32, j: usize) -> u16 {
    (16 * id + j as u32) as u16
}

/// The reverse relay's partial sum that the PE of cell `id` holds for word `j` of the
/// cell `d` (1..=3) upstream.
pub fn reverse_partial(id: u32, d: usize, j: usize) -> f32 {
    (id + 1) as f32 + 0.5 * j as f32 + 1024.0 * d as f32
}

/// The burst phases in `core.bstamp` order (after the start stamp).
pub const BURST_PHASES: [&str; 7] = ["x+", "x-", "y+", "y-", "reverse x", "reverse y", "z-"];

/// The longest x-line of the z− bursts: seven cells of [`BURST_MAX`].
pub const LINE_MAX: usize = 7 * BURST_MAX;

/// Cell (x, y, z)'s x-line as the z− bursts carry it: the blocks of x−1, x−2, x−3, the
/// cell itself, x+1, x+2, x+3 ([`burst_word`]), periodic in x.
pub fn burst_xline(g: &Geometry, x: usize, y: usize, z: usize) -> Vec<u16> {
    let mut out = Vec::new();
    let xs = (1..=RANGE)
        .map(|d| (x + g.nx - d % g.nx) % g.nx)
        .chain(std::iter::once(x))
        .chain((1..=RANGE).map(|d| (x + d) % g.nx));
    for cx in xs {
        let (id, n) = (relay_id(g, cx, y, z), relay_count(cx, y, z) as usize);
        out.extend((0..n).map(|j| burst_word(id, j)));
    }
    out
}

/// Checks the variable-length bursts and the accumulating reverse relay of `relay.w`
/// (`core.burst`, `core.fx`, `core.fy`, order `y x _word`) against the CSL flagship's
/// exchange oracle: each shift of each direction brought exactly the block of the cell
/// the oracle puts in that halo slot ([`burst_word`], the oracle's count long, nothing
/// after it), and `fx` (`fy`) is the PE's own `id / 4` plus, word by word, the partial
/// sums of the three xp (yp) halo cells for it ([`reverse_partial`]), summed on the
/// host. Returns the number of words checked.
pub fn check_burst(
    g: &Geometry,
    burst: &[u16],
    fx: &[u16],
    fy: &[u16],
    zrec: &[u16],
) -> Result<usize, String> {
    let n = g.width() * g.height();
    if burst.len() != n * BURST_WORDS {
        return Err(format!(
            "{} words of core.burst for {n} PEs x {BURST_WORDS}",
            burst.len()
        ));
    }
    for (name, f) in [("fx", fx), ("fy", fy)] {
        if f.len() != n * 2 * BURST_MAX {
            return Err(format!(
                "{} words of core.{name} for {n} PEs x {}",
                f.len(),
                2 * BURST_MAX
            ));
        }
    }
    if zrec.len() != n * RANGE * LINE_MAX {
        return Err(format!(
            "{} words of core.zrec for {n} PEs x {}",
            zrec.len(),
            RANGE * LINE_MAX
        ));
    }
    let dirs = ["x+", "x-", "y+", "y-"];
    let mut checked = 0;
    for py in 0..g.height() {
        for px in 0..g.width() {
            let pe = py * g.width() + px;
            let c = g.cell(px, py);
            let (counts, ids, at) = relay_oracle(g, px, py);
            let me = relay_id(g, c.x, c.y, c.z);
            let own = relay_count(c.x, c.y, c.z) as usize;
            // Halo d of the oracle: xm, xp, ym, yp; the x+ relay fills xm, and so on.
            for (d, dir) in dirs.iter().enumerate() {
                for k in 0..RANGE {
                    let base = pe * BURST_WORDS + (d * RANGE + k) * BURST_MAX;
                    let (ec, ei) = (counts[d * RANGE + k] as usize, ids[d * RANGE + k]);
                    for j in 0..BURST_MAX {
                        let want = if j < ec { burst_word(ei, j) } else { 0 };
                        let got = burst[base + j];
                        if got != want {
                            return Err(format!(
                                "{at}: {dir} burst, shift {}: word {j} is {got}, expected {want}                                  (cell id {ei}, {ec} words)",
                                k + 1
                            ));
                        }
                        checked += 1;
                    }
                }
            }
            // z−: shift k brings the x-line of z+k+1 (the x-line built from cells' ids
            // directly, not from the oracle).
            for k in 0..RANGE {
                let want = burst_xline(g, c.x, c.y, (c.z + k + 1) % g.nz());
                let got = &zrec[(pe * RANGE + k) * LINE_MAX..(pe * RANGE + k + 1) * LINE_MAX];
                for (j, &w) in got.iter().enumerate() {
                    let e = want.get(j).copied().unwrap_or(0);
                    if w != e {
                        return Err(format!(
                            "{at}: z- burst, shift {}: word {j} is {w}, expected {e} ({} words)",
                            k + 1,
                            want.len()
                        ));
                    }
                    checked += 1;
                }
            }
            // The reverse relays return the xm (ym) halo's sums, so each PE gets those
            // of the PEs whose xm (ym) halo it is: its xp (yp) halo, halo slots 1 and 3.
            for (name, f, up) in [("fx", fx, 1), ("fy", fy, 3)] {
                for j in 0..BURST_MAX {
                    let mut want = 0.25 * me as f32;
                    if j < own {
                        for k in 0..RANGE {
                            want += reverse_partial(ids[up * RANGE + k], k + 1, j);
                        }
                    }
                    let o = pe * 2 * BURST_MAX + 2 * j;
                    let got = f32::from_bits(u32::from(f[o]) | u32::from(f[o + 1]) << 16);
                    if got != want {
                        return Err(format!("{at}: {name}[{j}] is {got}, expected {want}"));
                    }
                    checked += 2;
                }
            }
        }
    }
    Ok(checked)
}

/// The relay's phases in `core.stamp` order (after the start stamp).
pub const RELAY_PHASES: [&str; 6] = ["x+", "x-", "y+", "y-", "z-", "z+"];

/// From `core.stamp` of the count relay (7 timestamps of 3 words per core PE: the start,
/// then the end of each of [`RELAY_PHASES`]): the cycles each phase took, from the last
/// PE to finish the previous phase to the last PE to finish this one (the counter is
/// the fabric's clock, the same on every PE).
pub fn relay_phase_cycles(g: &Geometry, stamps: &[u16]) -> Result<Vec<u64>, String> {
    phase_cycles(g, stamps, RELAY_PHASES.len())
}

/// [`relay_phase_cycles`] of a stamp array of `phases` + 1 timestamps per core PE.
pub fn phase_cycles(g: &Geometry, stamps: &[u16], phases: usize) -> Result<Vec<u64>, String> {
    let n = g.width() * g.height();
    let per = 3 * (phases + 1);
    if stamps.len() != n * per {
        return Err(format!(
            "{} words of core.stamp for {n} PEs x {per}",
            stamps.len()
        ));
    }
    let t = |pe: usize, j: usize| -> u64 {
        let w = &stamps[pe * per + 3 * j..pe * per + 3 * j + 3];
        u64::from(w[0]) | u64::from(w[1]) << 16 | u64::from(w[2]) << 32
    };
    let last = |j: usize| (0..n).map(|pe| t(pe, j)).max().unwrap_or(0);
    let mut out = vec![0u64; phases];
    for (j, o) in out.iter_mut().enumerate() {
        *o = last(j + 1).saturating_sub(last(j));
    }
    Ok(out)
}

/// `lanes.paint` for the relay's floorplan (`relay.paint` includes it): the core's tiles
/// by lane class, `lane00` (hix 0, hiy 0), `lane10`, `lane01`, `lane11`, each a union
/// of the column-group × row-group blocks of that class, in padded coordinates. Paint
/// has no loops, so the host writes the stripes; each class binds its lanes' colours.
pub fn lanes_paint(g: &Geometry) -> String {
    let mut out =
        String::from("(* Written by mdlj-tables: the core's tiles by lane class (hix, hiy). *)\n");
    for (hix, hiy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
        let mut rects = Vec::new();
        for gy in (hiy..g.ny).step_by(2) {
            for gx in (hix..g.nx).step_by(2) {
                rects.push(format!(
                    "rect({} {} {} {})",
                    1 + gx * g.nzx,
                    1 + gy * g.nzy,
                    g.nzx,
                    g.nzy
                ));
            }
        }
        out.push_str(&format!(
            "let lane{hix}{hiy} = union({})\n",
            rects.join(" ")
        ));
    }
    out
}

/// The z sockets of a core PE in `mdlj.w`'s floorplan: the colours its `szm` (z−
/// relay) and `szp` (z+ relay) sockets are bound to, and for each whether a
/// `colorpair` makes it send on the partner colour (a 1 × n block's two end PEs, which
/// receive on one colour and send on the other; README, "The relay's switch machine").
/// Along a tour z− is colour 8 and z+ colour 9; in a 1 × n block (offset q of n) the
/// middle PEs use 9/16 (even q) or 8/17 (odd q), offset 0 receives on 9 and 17 and sends
/// on 8 and 16, offset n − 1 receives on 8 and 16 and sends on 9 and 17.
pub fn z_sockets(g: &Geometry, c: &crate::md::geometry::Cell) -> ([u8; 2], bool) {
    if z_chain_local(g) {
        return ([Z_MINUS, Z_PLUS], false);
    }
    let n = g.nzx * g.nzy;
    let q = if g.nzy == 1 { c.izx } else { c.izy };
    let [p16, p17] = Z_LINE_PLUS;
    if q == 0 {
        ([Z_PLUS, p17], true)
    } else if q == n - 1 {
        ([Z_MINUS, p16], true)
    } else if q % 2 == 0 {
        ([Z_PLUS, p16], false)
    } else {
        ([Z_MINUS, p17], false)
    }
}

/// `mdlj-classes.paint`, included by `mdlj.paint`: the core's tiles grouped by the
/// colours their sockets need (x and y lane, [`z_sockets`]), one `code('mdlj ...)` per
/// group with those bindings, and the `colorpair`s of a 1 × n block's end PEs. Paint
/// has no loops or intersections, so the host writes the groups (as row runs); the
/// colour names (`xm`, `xmh`, ..., `z8`, `z9`, `z16`, `z17`, `comb`, `go`) and the
/// capacities `NLOC`, `NMAX`, `NFRAMES` are mdlj.paint's.
pub fn mdlj_classes_paint(g: &Geometry) -> String {
    use std::collections::BTreeMap;
    // (hix, hiy, z colours, colorpair) -> tiles
    type Class = (usize, usize, [u8; 2], bool);
    let mut groups: BTreeMap<Class, Vec<(usize, usize)>> = BTreeMap::new();
    for py in 0..g.height() {
        for px in 0..g.width() {
            let c = g.cell(px, py);
            let (z, pair) = z_sockets(g, &c);
            groups
                .entry((c.hix, c.hiy, z, pair))
                .or_default()
                .push((px + 1, py + 1));
        }
    }
    let mut out = String::from(
        "(* Written by mdlj-tables: the core's tiles by the colours of their sockets. *)\n",
    );
    let h = |hi: usize| if hi == 1 { "h" } else { "" };
    for (k, ((hix, hiy, z, pair), tiles)) in groups.iter().enumerate() {
        // Runs of consecutive tiles along each row.
        let mut rects = Vec::new();
        let mut i = 0;
        while i < tiles.len() {
            let (x0, y0) = tiles[i];
            let mut j = i + 1;
            while j < tiles.len() && tiles[j] == (x0 + (j - i), y0) {
                j += 1;
            }
            rects.push(format!("rect({x0} {y0} {} 1)", j - i));
            i = j;
        }
        let name = format!("class{k}");
        out.push_str(&format!("let {name} = union({})\n", rects.join(" ")));
        out.push_str(&format!(
            "{name} : code('mdlj [sxm:xm{x} sxp:xp{x} sym:ym{y} syp:yp{y} szm:z{} szp:z{} \
             ping:comb release:go NLOC:NLOC NMAX:NMAX NFRAMES:NFRAMES])\n",
            z[0],
            z[1],
            x = h(*hix),
            y = h(*hiy)
        ));
        if *pair {
            for c in z {
                out.push_str(&format!("{name} : colorpair(z{c} z{})\n", c ^ 1));
            }
        }
    }
    out
}

/// `core.params` for every core PE, order `y x _word`: the fold of each PE (`nlocal`
/// given per PE in the same order, `nsample` for all).
pub fn params_blob(g: &Geometry, nlocal: &[u16], nsample: u16) -> Result<Vec<u16>, String> {
    let n = g.width() * g.height();
    if nlocal.len() != n {
        return Err(format!(
            "{} atom counts for {n} PEs ({}x{})",
            nlocal.len(),
            g.width(),
            g.height()
        ));
    }
    let mut out = Vec::with_capacity(n * PARAM_WORDS);
    for py in 0..g.height() {
        for px in 0..g.width() {
            let c = g.cell(px, py);
            let fields = [
                g.nx, g.ny, g.nzx, g.nzy, c.x, c.y, c.z, c.izx, c.izy, c.hix, c.hiy,
            ];
            out.extend(fields.iter().map(|&v| v as u16));
            out.push(nlocal[py * g.width() + px]);
            out.push(nsample);
        }
    }
    Ok(out)
}

/// Words of `fparamstruct` per PE: 23 fp32 values (dt, rcut, rscale, rhoscale, niter,
/// ninner, invmass\[2\], box\[3\], boxinv\[3\], cell\[3\]\[2\], center\[3\]).
pub const FPARAM_WORDS: usize = 46;

/// Seed 002's physics constants (hard-coded in its `make-inputbin.py`, spec §1 and §5):
/// dt, rcut, niter (outer iterations) and ninner.
pub const PHYSICS: (f64, f64, f64, f64) = (0.001, 2.5, 10.0, 1.0);

/// seed 002's NLOCMAX (`ecalc.py`): owned atoms a PE can hold.
pub const NLOCMAX: usize = 20;

/// The per-PE inputs of `mdlj.w` from a dump, each order `y x _word` over the core.
pub struct AtomInputs {
    /// Atoms each PE owns at start (`paramstruct.nlocal`).
    pub nlocal: Vec<u16>,
    /// `fparamstruct` ([`FPARAM_WORDS`] per PE).
    pub fparams: Vec<u16>,
    /// `pos[nmax][4]`: (x, y, z, id) per owned atom, the id as a float, negative for type
    /// 1; unused slots 0.
    pub posin: Vec<u16>,
    /// `vel[nlocmax][3]` per owned atom; unused slots 0.
    pub velin: Vec<u16>,
    /// The `pos` slots per PE the halo exchange needs at most (the largest `end` region
    /// start of the CSL flagship's exchange oracle over the dump's counts).
    pub nmax_needed: usize,
}

fn f32_words(v: f64) -> [u16; 2] {
    let b = (v as f32).to_bits();
    [b as u16, (b >> 16) as u16]
}

/// `fparams.bin`, `posin.bin` and `velin.bin` (and the counts for `params.bin`) from a
/// dump, binned into cells by the CSL flagship's rule ([`bin`]) and its cell frames
/// ([`cell_frame`]), so both forms start from the same atoms in the same slots. `nmax`
/// of `None` takes the exchange's need. Errors: the box shorter than the halo range or
/// twice the cutoff, a cell with more than `nlocmax` atoms, `nmax` too small.
pub fn atom_inputs(
    d: &Dump,
    g: &Geometry,
    nlocmax: usize,
    nmax: Option<usize>,
) -> Result<AtomInputs, String> {
    let (dt, rcut, niter, ninner) = PHYSICS;
    let b = d.box_len();
    g.check_cutoff(b, rcut)?;
    if let Some(k) = (0..3).find(|&k| b[k] < 2.0 * rcut) {
        return Err(format!(
            "the box ({:.4} along axis {k}) is shorter than twice the cutoff {rcut}",
            b[k]
        ));
    }
    let cells = bin(d, g);
    let idx = |x: usize, y: usize, z: usize| (z * g.ny + y) * g.nx + x;
    let count = |x: usize, y: usize, z: usize| cells[idx(x, y, z)].len() as u32;
    let mut need = 0usize;
    for z in 0..g.nz() {
        for y in 0..g.ny {
            for x in 0..g.nx {
                need = need.max(expected_exchange(g, &count, x, y, z)[5 * RANGE + 8] as usize);
            }
        }
    }
    let nmax = nmax.unwrap_or(need);
    if nmax < need {
        return Err(format!(
            "NMAX {nmax} is smaller than the {need} position slots the halo exchange needs"
        ));
    }
    let n = g.width() * g.height();
    let mut out = AtomInputs {
        nlocal: Vec::with_capacity(n),
        fparams: Vec::with_capacity(n * FPARAM_WORDS),
        posin: vec![0; n * nmax * 8],
        velin: vec![0; n * nlocmax * 6],
        nmax_needed: need,
    };
    for py in 0..g.height() {
        for px in 0..g.width() {
            let p = py * g.width() + px;
            let c = g.cell(px, py);
            let mine = &cells[idx(c.x, c.y, c.z)];
            if mine.len() > nlocmax {
                return Err(format!(
                    "cell ({}, {}, {}) holds {} atoms but NLOCMAX is {nlocmax}",
                    c.x,
                    c.y,
                    c.z,
                    mine.len()
                ));
            }
            out.nlocal.push(mine.len() as u16);
            let (centre, width) = cell_frame(d, g, (c.x, c.y, c.z));
            let mut f = vec![dt, rcut, 1.0, 1.0, niter, ninner, 1.0, 1.0];
            f.extend(b);
            f.extend(b.map(|v| 1.0 / v));
            for w in width {
                f.extend([-0.5 * w, 0.5 * w]);
            }
            f.extend(centre);
            out.fparams.extend(f.iter().flat_map(|&v| f32_words(v)));
            for (slot, &i) in mine.iter().enumerate() {
                let a = &d.atoms[i];
                let id = if a.typ == 1 {
                    -f64::from(a.id)
                } else {
                    f64::from(a.id)
                };
                let at = (p * nmax + slot) * 8;
                for (k, v) in [a.pos[0], a.pos[1], a.pos[2], id].into_iter().enumerate() {
                    out.posin[at + 2 * k..at + 2 * k + 2].copy_from_slice(&f32_words(v));
                }
                let at = (p * nlocmax + slot) * 6;
                for (k, v) in a.vel.into_iter().enumerate() {
                    out.velin[at + 2 * k..at + 2 * k + 2].copy_from_slice(&f32_words(v));
                }
            }
        }
    }
    Ok(out)
}

/// Checks `core.got` of the moat check (3 words per core PE, order `y x _word`): every
/// core edge tile but the corners got back `x + 100·y` (its Paint coordinates) through
/// the moat, and every core tile reports `ix + 100·iy`, its logical cell from
/// `core.params`. Returns the number of turnarounds checked.
pub fn check_moat(g: &Geometry, got: &[u16]) -> Result<usize, String> {
    let (w, h) = (g.width(), g.height());
    if got.len() != w * h * 3 {
        return Err(format!(
            "{} words of core.got for {w}x{h} PEs x 3",
            got.len()
        ));
    }
    let mut turned = 0;
    for py in 0..h {
        for px in 0..w {
            let v = &got[(py * w + px) * 3..(py * w + px) * 3 + 3];
            let (x, y) = (px + 1, py + 1);
            let c = g.cell(px, py);
            if usize::from(v[2]) != c.x + 100 * c.y {
                return Err(format!(
                    "PE ({x}, {y}) reports cell {} for logical ({}, {})",
                    v[2], c.x, c.y
                ));
            }
            let edge_x = px == 0 || px == w - 1;
            let edge_y = py == 0 || py == h - 1;
            if edge_x != edge_y {
                if usize::from(v[0]) != x + 100 * y {
                    return Err(format!(
                        "PE ({x}, {y}) got {} back through the moat, expected {}",
                        v[0],
                        x + 100 * y
                    ));
                }
                turned += 1;
            }
        }
    }
    Ok(turned)
}

#[cfg(test)]
mod tests {
    use super::*;

    use csl_arch::fabric::control;
    use std::collections::VecDeque;

    /// mdlj-classes.paint puts every core tile in exactly one group, and the colours it
    /// binds (with the colorpairs) are relay.w's z cases: tours 8/8 and 9/9; in a
    /// 1 x n block offset 0 receives on 9 and 17 and sends on 8 and 16, the last offset
    /// the other way round, even offsets 9/9 and 16/16, odd ones 8/8 and 17/17.
    #[test]
    fn mdlj_classes_bind_the_z_cases_of_relay_w() {
        for (nx, ny, nzx, nzy) in [(8, 8, 4, 2), (8, 8, 7, 1), (7, 7, 1, 7), (7, 7, 2, 4)] {
            let g = Geometry::new(nx, ny, nzx, nzy).unwrap();
            let text = mdlj_classes_paint(&g);
            let mut seen = vec![None; g.width() * g.height()];
            let mut cur: Vec<(usize, usize)> = Vec::new();
            let mut pairs: Vec<(usize, u8, u8)> = Vec::new();
            let mut binds: Vec<[u8; 4]> = Vec::new();
            for line in text.lines().skip(1) {
                let num = |s: &str| -> usize {
                    s.trim_matches(|c: char| !c.is_ascii_digit())
                        .parse()
                        .unwrap()
                };
                if line.starts_with("let ") {
                    cur.clear();
                    for r in line.split("rect(").skip(1) {
                        let v: Vec<usize> = r.split_whitespace().take(3).map(num).collect();
                        for x in v[0]..v[0] + v[2] {
                            cur.push((x, v[1]));
                        }
                    }
                } else if line.contains(": code(") {
                    let col = |k: &str| -> u8 {
                        let w = line.split_whitespace().find(|w| w.starts_with(k)).unwrap();
                        num(&w[k.len()..]) as u8
                    };
                    let (m, p) = (col("szm:z"), col("szp:z"));
                    binds.push([m, m, p, p]);
                    for &(x, y) in &cur {
                        let i = (y - 1) * g.width() + (x - 1);
                        assert!(seen[i].is_none(), "tile ({x}, {y}) twice");
                        seen[i] = Some(binds.len() - 1);
                    }
                } else if line.contains(": colorpair(") {
                    let v: Vec<u8> = line.split("z").skip(1).map(|w| num(w) as u8).collect();
                    pairs.push((binds.len() - 1, v[0], v[1]));
                }
            }
            for &(b, a, t) in &pairs {
                let e = &mut binds[b];
                if e[0] == a {
                    e[1] = t;
                }
                if e[2] == a {
                    e[3] = t;
                }
            }
            let n = nzx * nzy;
            for py in 0..g.height() {
                for px in 0..g.width() {
                    let c = g.cell(px, py);
                    let got = binds[seen[py * g.width() + px].expect("every tile")];
                    let q = if nzy == 1 { c.izx } else { c.izy };
                    let want = if nzx != 1 && nzy != 1 {
                        [8, 8, 9, 9]
                    } else if q == 0 {
                        [9, 8, 17, 16]
                    } else if q == n - 1 {
                        [8, 9, 16, 17]
                    } else if q % 2 == 0 {
                        [9, 9, 16, 16]
                    } else {
                        [8, 8, 17, 17]
                    };
                    assert_eq!(got, want, "{nx}x{ny} {nzx}x{nzy}: PE ({px}, {py})");
                }
            }
        }
    }

    /// lj108 on the seed's fold: every atom lands in exactly one PE's slots, with its
    /// id, coordinates and velocity, inside that PE's cell (checked with the cell's
    /// frame from fparams, not with the binning rule), and the fparams are the seed's.
    #[test]
    fn atom_inputs_place_every_lj108_atom_once() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("md/data/lj108.dump");
        let text = std::fs::read_to_string(path).expect("lj108.dump");
        let d = Dump::parse(&text).expect("parses");
        for (nzx, nzy) in [(4, 2), (2, 4), (7, 1)] {
            let g = Geometry::new(8, 8, nzx, nzy).expect("geometry");
            let a = atom_inputs(&d, &g, NLOCMAX, None).expect("inputs");
            let nmax = a.nmax_needed;
            let f = |w: &[u16], i: usize| {
                f32::from_bits(u32::from(w[2 * i]) | u32::from(w[2 * i + 1]) << 16)
            };
            let mut seen = vec![0; d.atoms.len()];
            let b = d.box_len();
            for p in 0..g.width() * g.height() {
                let fp = &a.fparams[p * FPARAM_WORDS..(p + 1) * FPARAM_WORDS];
                assert_eq!(f(fp, 0), 0.001);
                assert_eq!(f(fp, 1), 2.5);
                assert_eq!(
                    (f(fp, 4), f(fp, 5), f(fp, 6), f(fp, 7)),
                    (10.0, 1.0, 1.0, 1.0)
                );
                for slot in 0..nmax {
                    let pos = &a.posin[(p * nmax + slot) * 8..(p * nmax + slot + 1) * 8];
                    if slot >= usize::from(a.nlocal[p]) {
                        assert!(pos.iter().all(|&w| w == 0), "PE {p} slot {slot} unused");
                        continue;
                    }
                    let id = f(pos, 3);
                    let k = d
                        .atoms
                        .iter()
                        .position(|at| at.id as f32 == id.abs())
                        .expect("an id");
                    let at = &d.atoms[k];
                    assert_eq!(id < 0.0, at.typ == 1, "sign of the id is the type");
                    seen[k] += 1;
                    for (ax, &len) in b.iter().enumerate() {
                        assert_eq!(f(pos, ax), at.pos[ax] as f32);
                        let vel = &a.velin[(p * NLOCMAX + slot) * 6..];
                        assert_eq!(f(vel, ax), at.vel[ax] as f32);
                        // Inside the cell: centre ± half width, up to a periodic image.
                        let (lo, hi) = (f(fp, 14 + 2 * ax), f(fp, 15 + 2 * ax));
                        let centre = f64::from(f(fp, 20 + ax));
                        let mut r = at.pos[ax] - centre;
                        r -= len * (r / len).round();
                        assert!(
                            r >= f64::from(lo) - 1e-5 && r <= f64::from(hi) + 1e-5,
                            "atom {} axis {ax}: {r} outside [{lo}, {hi}]",
                            at.id
                        );
                        assert_eq!(f(fp, 8 + ax), len as f32);
                    }
                }
            }
            assert!(seen.iter().all(|&s| s == 1), "every atom exactly once");
            assert_eq!(a.nlocal.iter().map(|&n| usize::from(n)).sum::<usize>(), 108);
        }
    }

    #[test]
    fn control_words_say_what_the_readme_says() {
        let cmds = |w: u32| -> Vec<u8> { (0..8).map(|i| control::command(w, i)).collect() };
        let (adv, rst, nop) = (
            control::SWITCH_ADV | control::CE_FILTER,
            control::SWITCH_RST | control::CE_FILTER,
            control::CE_FILTER,
        );
        assert_eq!(cmds(XY_CMD1), [adv, adv, rst, nop, nop, nop, nop, nop]);
        assert_eq!(cmds(XY_CMD2), [adv, nop, nop, nop, nop, nop, nop, nop]);
        assert_eq!(cmds(Z_CMD1), [adv, rst, nop, nop, nop, nop, nop, nop]);
        assert_eq!(Z_CMD2, XY_CMD2);
        assert_eq!(cmds(END_CMD), [rst, nop, nop, nop, nop, nop, nop, nop]);
        assert!(
            [XY_CMD1, XY_CMD2, Z_CMD1, END_CMD]
                .iter()
                .all(|&w| control::task_id(w) == 0)
        );
    }

    /// A host model of one relay ring of `n` slots, `f` slots per cell, run for
    /// `shifts` shifts: the routers follow SIMULATOR.md §4 (a control wavelet is
    /// forwarded with the current position, then command 0 runs, then pop on advance;
    /// the CE gets the unpopped copy unless command 0 is CE-filtered), each link is a
    /// FIFO (the plain forwarders and the moat between two slots execute nothing), and
    /// each CE queues a shift's block and its two control wavelets once it has received
    /// the previous shift's block. Returns each slot's received blocks (the slot index
    /// the block started from) and whether every switch ended where it started.
    fn march(n: usize, f: usize, shifts: usize) -> (Vec<Vec<usize>>, bool) {
        use Direction::{North as Up, Ramp, South as Down};
        #[derive(Clone, Copy)]
        enum Wv {
            Data(usize),
            Ctrl(u32),
        }
        let cmd1 = if f >= 2 { XY_CMD1 } else { Z_CMD1 };
        let machines: Vec<_> = (0..n).map(|s| slot_machine(s, n, f, Up, Down)).collect();
        let route = |i: usize, pos: u8| -> (Direction, Direction) {
            let (e, sw) = &machines[i];
            if pos == 0 {
                return (e.rx[0], e.tx[0]);
            }
            let p = &sw.positions[usize::from(pos) - 1];
            (p.rx.unwrap(), p.tx.as_ref().unwrap()[0])
        };
        let mut pos: Vec<u8> = machines.iter().map(|m| m.1.current).collect();
        let mut upq: Vec<VecDeque<Wv>> = vec![VecDeque::new(); n];
        let mut rampq: Vec<VecDeque<Wv>> = vec![VecDeque::new(); n];
        let mut got: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut block: Vec<usize> = (0..n).collect();
        let mut sent = vec![0; n];
        loop {
            let mut progress = false;
            for i in 0..n {
                if sent[i] < shifts && sent[i] == got[i].len() {
                    rampq[i].extend([Wv::Data(block[i]), Wv::Ctrl(cmd1), Wv::Ctrl(XY_CMD2)]);
                    sent[i] += 1;
                    progress = true;
                }
                let (rx, tx) = route(i, pos[i]);
                let q = if rx == Ramp {
                    &mut rampq[i]
                } else {
                    &mut upq[i]
                };
                let Some(w) = q.pop_front() else { continue };
                progress = true;
                let mut fwd = w;
                if let Wv::Ctrl(c) = w {
                    let sw = &machines[i].1;
                    assert_eq!(sw.pop_mode, PopMode::PopOnAdvance);
                    let old = pos[i];
                    match control::command(c, 0) & 3 {
                        control::SWITCH_ADV => {
                            let next = usize::from(old) + 1;
                            if next <= 3 && sw.positions[next - 1].is_valid() {
                                pos[i] = next as u8;
                            } else if sw.ring_mode {
                                pos[i] = 0;
                            }
                        }
                        control::SWITCH_RST => pos[i] = 0,
                        _ => {}
                    }
                    if pos[i] != old {
                        fwd = Wv::Ctrl(control::pop(c));
                    }
                    if tx == Ramp {
                        assert!(
                            control::command(c, 0) & control::CE_FILTER != 0,
                            "slot {i} of {n} (f {f}): a control wavelet reaches the CE"
                        );
                        continue;
                    }
                }
                match (tx, fwd) {
                    (Ramp, Wv::Data(v)) => {
                        got[i].push(v);
                        block[i] = v;
                    }
                    (Ramp, Wv::Ctrl(_)) => unreachable!(),
                    (_, w) => upq[(i + 1) % n].push_back(w),
                }
            }
            if !progress {
                break;
            }
        }
        let home = pos.iter().zip(&machines).all(|(&p, m)| p == m.1.current);
        (got, home)
    }

    #[test]
    fn the_switch_machine_moves_every_block_one_cell_per_shift() {
        // (slots, slots per cell): the seed's x (32, 4) and y (16, 2) rings, the 2x4
        // fold's (16, 2) and (32, 4), the 7x1 fold's x (56, 7) and y (8, 1), z tours
        // (8, 1), odd rings, and rings with and without a trailing partial segment.
        for (n, f) in [
            (32, 4),
            (16, 2),
            (56, 7),
            (8, 1),
            (7, 1),
            (9, 1),
            (15, 2),
            (21, 3),
            (20, 4),
            (48, 6),
            (24, 3),
            (14, 2),
        ] {
            let (got, home) = march(n, f, RANGE);
            assert!(home, "n {n} f {f}: a switch did not return to its start");
            for (i, g) in got.iter().enumerate() {
                let want: Vec<usize> = (1..=RANGE).map(|k| (i + RANGE * n - k * f) % n).collect();
                assert_eq!(g, &want, "n {n} f {f}: slot {i}");
            }
        }
    }

    #[test]
    fn relay_tables_give_every_core_lane_colour_a_machine_or_a_forward() {
        let g = Geometry::new(8, 8, 4, 2).unwrap();
        let (router, switch) = relay_tables(&g);
        let (w, h) = padded(&g);
        let word = |x: usize, y: usize, c: usize| router[(y * w + x) * 24 + c];
        let status = |x: usize, y: usize, c: usize| switch[((y * w + x) * 24 + c) * 4];
        // Moat unchanged.
        assert_eq!(word(0, 5, 2), 0x0004 | 0x0080 | 0x0400);
        // Core (1, 1): PE (0, 0), x = 0, izx = 0, hix = 0: chain 0. On colour 2 (x+,
        // low lane, flows east) it is a tail (start 1); colour 0 (x-: slot 31 of 32, in
        // the trailing partial segment) a head (start 3); colours 1 and 3 plain
        // forwards (W->E and E->W).
        assert_eq!(word(1, 1, 2), 0x0008 | 0x0080); // rx W, tx E
        assert_eq!(status(1, 1, 2), 0x8000 | 1 | 2 << 3);
        assert_eq!(status(1, 1, 0), 0x8000 | 3 | 2 << 3);
        assert_eq!(word(1, 1, 1), 0x0008 | 0x0080);
        assert_eq!(status(1, 1, 1), 0);
        assert_eq!(word(1, 1, 3), 0x0004 | 0x0100);
        // z: every core tile has both chains, the moat none.
        for y in 0..h {
            for x in 0..w {
                let core = (1..w - 1).contains(&x) && (1..h - 1).contains(&y);
                for c in [8, 9] {
                    assert_eq!(status(x, y, c) != 0, core, "({x}, {y}) colour {c}");
                }
                if core {
                    assert!((0..10).all(|c| word(x, y, c) != 0));
                }
            }
        }
        // A 1 x 7 block's z line: the end PEs plain (offset 0 receives on 9 from the
        // east and sends on 8 east), the others a machine on one colour and a forward
        // on the other.
        let g = Geometry::new(8, 8, 7, 1).unwrap();
        let (router, switch) = relay_tables(&g);
        let (w, _) = padded(&g);
        let word = |x: usize, y: usize, c: usize| router[(y * w + x) * 24 + c];
        let status = |x: usize, y: usize, c: usize| switch[((y * w + x) * 24 + c) * 4];
        assert_eq!(word(1, 1, 9), 0x0004 | 0x0200); // rx E, tx RAMP
        assert_eq!(word(1, 1, 8), 0x0010 | 0x0080); // rx RAMP, tx E
        assert_eq!((status(1, 1, 8), status(1, 1, 9)), (0, 0));
        // Offset 1 (z = 6): machine on 8 (receives from offset 0), forwards 9 E -> W.
        assert_eq!(word(2, 1, 8), 0x0010 | 0x0080);
        assert_eq!(status(2, 1, 8), 0x8000 | 2 << 3);
        assert_eq!(word(2, 1, 9), 0x0004 | 0x0100);
        // Offset 6 (z = 3), the east end: receives on 8 from the west, sends on 9 west.
        assert_eq!(word(7, 1, 8), 0x0008 | 0x0200);
        assert_eq!(word(7, 1, 9), 0x0010 | 0x0100);
        // The next block is a high lane: offsets run west, offset 0 at column 14.
        assert_eq!(word(14, 1, 8), 0x0010 | 0x0100);
        // z+ mirrors it on 16 (towards higher offsets) and 17: offset 0 sends on 16 east,
        // receives on 17 from the east; offset 2 (z = 1) a machine on 16.
        assert_eq!(word(1, 1, 16), 0x0010 | 0x0080);
        assert_eq!(word(1, 1, 17), 0x0004 | 0x0200);
        assert_eq!(status(3, 1, 16), 0x8000 | 2 << 3);
    }

    #[test]
    fn the_relay_check_accepts_exactly_the_oracle() {
        for (nx, ny, nzx, nzy) in [(8, 8, 4, 2), (7, 7, 7, 1)] {
            let g = Geometry::new(nx, ny, nzx, nzy).unwrap();
            let (w, h) = (g.width(), g.height());
            let mut got = vec![0u16; w * h * RELAY_WORDS];
            for py in 0..h {
                for px in 0..w {
                    let c = g.cell(px, py);
                    let e = expected_exchange(&g, &relay_count, c.x, c.y, c.z);
                    let id = |x: usize, y: usize, z: usize| relay_id(&g, x, y, z);
                    let i = expected_exchange(&g, &id, c.x, c.y, c.z);
                    let v = &mut got[(py * w + px) * RELAY_WORDS..];
                    for k in 0..15 {
                        v[2 * k] = e[k] as u16;
                        v[2 * k + 1] = i[k] as u16;
                    }
                    for j in 0..9 {
                        v[30 + j] = e[15 + j] as u16;
                    }
                    // z+ lines by hand: the x-line sums at z-1..z-3.
                    let nz = g.nz();
                    let line = |f: &dyn Fn(usize, usize, usize) -> u32, zz: usize| -> u32 {
                        (0..=6)
                            .map(|d| f((c.x + g.nx + d - 3) % g.nx, c.y, zz))
                            .sum()
                    };
                    for k in 1..=3 {
                        let zz = (c.z + nz - k) % nz;
                        v[39 + 2 * (k - 1)] = line(&relay_count, zz) as u16;
                        v[40 + 2 * (k - 1)] = line(&id, zz) as u16;
                    }
                }
            }
            assert_eq!(check_relay(&g, &got), Ok(w * h * RELAY_WORDS));
            let mut bad = got.clone();
            bad[RELAY_WORDS + 42] += 1; // PE 1's z+ line of z-2, id
            assert!(check_relay(&g, &bad).unwrap_err().contains("z-2"));
            let mut bad = got.clone();
            bad[RELAY_WORDS + 7] ^= 1; // PE 1's xp id, cell 1
            assert!(
                check_relay(&g, &bad)
                    .unwrap_err()
                    .contains("xp halo, cell 1")
            );
            let mut bad = got.clone();
            bad[RELAY_WORDS + 33] += 1; // PE 1's xp start
            assert!(check_relay(&g, &bad).unwrap_err().contains("`xp`"));
            assert!(check_relay(&g, &got[1..]).is_err());
        }
    }

    #[test]
    fn the_ping_comb_words_by_hand() {
        let g = Geometry::new(8, 8, 4, 2).unwrap();
        let (router, switch) = relay_tables(&g);
        let (w, h) = padded(&g);
        let word = |x: usize, y: usize, c: u8| router[(y * w + x) * 24 + usize::from(c)];
        let sw = |x: usize, y: usize, c: u8| {
            let i = ((y * w + x) * 24 + usize::from(c)) * 4;
            [switch[i], switch[i + 1], switch[i + 2], switch[i + 3]]
        };
        // Origin: 12 and 14 RAMP -> E, 13 S -> RAMP (rx bit 1 = S, tx bit 4 = RAMP).
        assert_eq!(word(0, 0, PING), 0x0010 | 0x0080);
        assert_eq!(word(0, 0, PING_RELEASE), 0x0010 | 0x0080);
        assert_eq!(word(0, 0, PING_BACK), 0x0002 | 0x0200);
        // Spine: W -> E + S, the last column W -> S.
        assert_eq!(word(5, 0, PING), 0x0008 | 0x0080 | 0x0040);
        assert_eq!(word(32, 0, PING_RELEASE), 0x0008 | 0x0040);
        // A core PE: loopback, position 1 N -> S + RAMP, no pop, start 0; release
        // N -> S + RAMP (the bottom row N -> RAMP).
        assert_eq!(word(7, 3, PING), 0x0010 | 0x0200);
        assert_eq!(
            sw(7, 3, PING),
            [0x8000, 0x0001 | 0x0400 | 0x0040 | 0x0200, 0, 0]
        );
        assert_eq!(word(7, 3, PING_RELEASE), 0x0001 | 0x0040 | 0x0200);
        assert_eq!(word(7, 16, PING_RELEASE), 0x0001 | 0x0200);
        // South row: E -> W, position 1 N -> W, pop on advance; the last column N -> W,
        // always pop, no positions.
        assert_eq!(word(7, h - 1, PING), 0x0004 | 0x0100);
        assert_eq!(
            sw(7, h - 1, PING),
            [0x8000 | 2 << 3, 0x0001 | 0x0400 | 0x0100, 0, 0]
        );
        assert_eq!(word(32, h - 1, PING), 0x0001 | 0x0100);
        assert_eq!(sw(32, h - 1, PING), [0x8000 | 1 << 3, 0, 0, 0]);
        // Home: the corner swaps, the west column S -> N on 13.
        assert_eq!(word(0, h - 1, PING), 0x0400);
        assert_eq!(word(0, h - 1, PING_BACK), 0x0004 | 0x0020 | 0x0400);
        assert_eq!(word(0, 9, PING_BACK), 0x0002 | 0x0020);
        // Every core PE has the three colours.
        for y in 1..h - 1 {
            for x in 1..w - 1 {
                assert!([PING, PING_RELEASE].iter().all(|&c| word(x, y, c) != 0));
                assert_eq!(word(x, y, PING_BACK), 0);
            }
        }
        assert_eq!(
            (0..8)
                .map(|i| control::command(PING_CMD, i))
                .collect::<Vec<_>>(),
            [6, 5, 4, 4, 4, 4, 4, 4]
        );
    }

    #[test]
    fn the_ping_comb_reaches_every_core_pe_once_and_every_tooth_comes_home() {
        // Follow colour 12 from the origin through the tables: a core PE in its pass
        // position, a south-row tile in either position, then 13 home. Every core PE is
        // reached from exactly one neighbour, every path ends at the origin's RAMP, and
        // the release (14) reaches every core PE's RAMP once.
        use csl_arch::tables::decode_switch;
        for (nx, ny, nzx, nzy) in [(8, 8, 4, 2), (7, 7, 1, 7)] {
            let g = Geometry::new(nx, ny, nzx, nzy).unwrap();
            let (router, switch) = relay_tables(&g);
            let (w, h) = padded(&g);
            let arch = csl_arch::Arch::Wse3;
            let outs = |(x, y): (usize, usize), c: u8, inject: bool| -> (Vec<Direction>, bool) {
                let i = (y * w + x) * 24 + usize::from(c);
                let e = RouterEntry::decode(router[i], c, arch).unwrap();
                let sw =
                    decode_switch(switch[i * 4..i * 4 + 4].try_into().unwrap(), c, arch).unwrap();
                // The positions that take a wavelet from a neighbour (not the RAMP).
                let mut positions = vec![(e.rx.clone(), e.tx.clone())];
                if let Some(s) = sw {
                    for p in s.positions.iter().filter(|p| p.is_valid()) {
                        let rx = p.rx.map_or(e.rx.clone(), |r| vec![r]);
                        positions.push((rx, p.tx.clone().unwrap_or(e.tx.clone())));
                    }
                }
                let mut tx: Vec<Direction> = Vec::new();
                for (rx, t) in positions {
                    if rx.iter().any(|&r| (r == Direction::Ramp) == inject) {
                        tx.extend(
                            t.into_iter()
                                .filter(|d| !tx.contains(d))
                                .collect::<Vec<_>>(),
                        );
                    }
                }
                let ramp = tx.contains(&Direction::Ramp);
                tx.retain(|&d| d != Direction::Ramp);
                (tx, ramp)
            };
            let step = |(x, y): (usize, usize), d: Direction| match d {
                Direction::East => (x + 1, y),
                Direction::West => (x - 1, y),
                Direction::South => (x, y + 1),
                Direction::North => (x, y - 1),
                Direction::Ramp => (x, y),
            };
            let core = |(x, y): (usize, usize)| (1..w - 1).contains(&x) && (1..h - 1).contains(&y);
            for (colour, home) in [(PING, true), (PING_RELEASE, false)] {
                let mut reached = std::collections::HashMap::new();
                let mut delivered = 0;
                let mut todo = vec![((0, 0), colour, true)];
                while let Some((at, c, first)) = todo.pop() {
                    let (tx, ramp) = outs(at, c, first);
                    if ramp && !first {
                        if core(at) {
                            delivered += 1;
                        } else {
                            assert!(home && at == (0, 0) && c == PING_BACK, "{at:?} {c}");
                            delivered += 1;
                        }
                    }
                    for d in tx {
                        let next = step(at, d);
                        // The south-west corner swaps 12 to 13.
                        let j = (next.1 * w + next.0) * 24;
                        let c = if c == PING && router[j + usize::from(PING_BACK)] & 0x0400 != 0 {
                            PING_BACK
                        } else {
                            c
                        };
                        if core(next) {
                            *reached.entry(next).or_insert(0) += 1;
                        }
                        todo.push((next, c, false));
                        assert!(todo.len() < 10 * w * h, "the comb loops");
                    }
                }
                let n = g.width() * g.height();
                assert_eq!(reached.len(), n, "colour {colour}");
                assert!(reached.values().all(|&k| k == 1), "colour {colour}");
                // Each core PE's RAMP once; for the probe also the origin, once per
                // column (the south row passes every column's stream home).
                let want = if home { n + g.width() } else { n };
                assert_eq!(delivered, want, "colour {colour}");
            }
        }
    }

    #[test]
    fn the_ping_check_wants_every_departure_after_the_last_arrival() {
        let g = Geometry::new(7, 7, 7, 1).unwrap();
        let n = g.width() * g.height();
        let mut stamps = vec![0u16; n * 2 * 6];
        for pe in 0..n {
            for b in 0..2 {
                let arrive = 1000 * b as u32 + pe as u32 % 50;
                let leave = 1000 * b as u32 + 100 + pe as u32 % 7;
                let at = pe * 12 + 6 * b;
                stamps[at] = arrive as u16;
                stamps[at + 3] = leave as u16;
            }
        }
        assert_eq!(check_ping(&g, 2, &stamps, &[2]), Ok((49, 57)));
        assert!(
            check_ping(&g, 2, &stamps, &[1])
                .unwrap_err()
                .contains("counted")
        );
        let mut bad = stamps.clone();
        bad[5 * 12 + 6 + 3] = 1049; // PE 5 leaves barrier 1 when PE 49 arrives
        assert!(
            check_ping(&g, 2, &bad, &[2])
                .unwrap_err()
                .contains("barrier 1")
        );
        assert!(check_ping(&g, 2, &stamps[1..], &[2]).is_err());
    }

    #[test]
    fn lane_classes_cover_the_core_once() {
        let g = Geometry::new(8, 8, 7, 1).unwrap();
        let p = lanes_paint(&g);
        assert_eq!(p.matches("rect(").count(), 64);
        assert!(p.contains("let lane10 = union(rect(8 1 7 1) rect(22 1 7 1)"));
    }

    #[test]
    fn moat_words_by_hand() {
        let g = Geometry::new(8, 8, 4, 2).unwrap();
        assert_eq!(padded(&g), (34, 18));
        let t = router_table(&g);
        let at = |x: usize, y: usize, c: usize| t[(y * 34 + x) * 24 + c];
        // West column: rx E (bit 2), tx E (bit 2+5), swap x (bit 10).
        assert_eq!(at(0, 5, 2), 0x0004 | 0x0080 | 0x0400);
        // East column: W (bit 3).
        assert_eq!(at(33, 1, 1), 0x0008 | 0x0100 | 0x0400);
        // North row: S (bit 1), swap y (bit 11); south row: N (bit 0).
        assert_eq!(at(7, 0, 6), 0x0002 | 0x0040 | 0x0800);
        assert_eq!(at(7, 17, 4), 0x0001 | 0x0020 | 0x0800);
        // No y colours on the east column, no x colours on the rows, corners and core
        // empty, colours 8 and up untouched.
        assert_eq!(at(33, 1, 4), 0);
        assert_eq!(at(7, 0, 0), 0);
        assert_eq!(at(0, 0, 0), 0);
        assert_eq!(at(5, 5, 2), 0);
        // The core's edge tiles: the moat check's routes (core = bit 4).
        assert_eq!(at(1, 5, 0), 0x0010 | 0x0100);
        assert_eq!(at(1, 5, 1), 0x0008 | 0x0200);
        assert_eq!(at(32, 5, 2), 0x0010 | 0x0080);
        assert_eq!(at(7, 16, 7), 0x0002 | 0x0200);
        assert_eq!(at(1, 1, 0), 0);
        assert!((0..34 * 18).all(|i| t[i * 24 + 8..(i + 1) * 24].iter().all(|&w| w == 0)));
        // Every moat tile that is not a corner has exactly four configured colours, every
        // core edge tile but the corners two.
        let count = |k: usize| {
            t.chunks(24)
                .filter(|c| c.iter().filter(|&&w| w != 0).count() == k)
                .count()
        };
        assert_eq!(count(4), 2 * 32 + 2 * 16);
        assert_eq!(count(2), 2 * 30 + 2 * 14);
    }

    #[test]
    fn params_follow_the_fold() {
        let g = Geometry::new(8, 8, 4, 2).unwrap();
        let n = 32 * 16;
        let nlocal: Vec<u16> = (0..n as u16).map(|i| i % 5).collect();
        let p = params_blob(&g, &nlocal, 1).unwrap();
        assert_eq!(p.len(), n * PARAM_WORDS);
        // PE (4, 0): group 1 (odd: high lane, x = nx-1 = 7), offset 0 reversed: izx 3;
        // z = zidx[0][3] of the 4x2 tour.
        let pe = &p[4 * PARAM_WORDS..5 * PARAM_WORDS];
        assert_eq!(&pe[..4], &[8, 8, 4, 2]);
        assert_eq!((pe[4], pe[5], pe[7], pe[9], pe[10]), (7, 0, 3, 1, 0));
        assert_eq!((pe[11], pe[12]), (4, 1));
        // Every logical cell exactly once.
        let mut cells: Vec<(u16, u16, u16)> =
            p.chunks(PARAM_WORDS).map(|c| (c[4], c[5], c[6])).collect();
        cells.sort_unstable();
        cells.dedup();
        assert_eq!(cells.len(), 512);
        assert!(params_blob(&g, &nlocal[1..], 1).is_err());
    }

    #[test]
    fn the_moat_check_accepts_exactly_the_expected_words() {
        let g = Geometry::new(7, 7, 1, 7).unwrap();
        let (w, h) = (g.width(), g.height());
        let mut got = vec![0u16; w * h * 3];
        for py in 0..h {
            for px in 0..w {
                let c = g.cell(px, py);
                let v = &mut got[(py * w + px) * 3..];
                v[0] = ((px + 1) + 100 * (py + 1)) as u16;
                v[1] = (px + 1) as u16;
                v[2] = (c.x + 100 * c.y) as u16;
            }
        }
        // 7 x 49: edges without corners = 2 * 47 + 2 * 5.
        assert_eq!(check_moat(&g, &got), Ok(104));
        let mut bad = got.clone();
        bad[(3 * w) * 3] += 1; // west edge tile (1, 4): its turnaround
        assert!(
            check_moat(&g, &bad)
                .unwrap_err()
                .contains("through the moat")
        );
        let mut bad = got.clone();
        bad[(2 * w + 2) * 3 + 2] += 1; // an interior tile's cell
        assert!(check_moat(&g, &bad).unwrap_err().contains("reports cell"));
        assert!(check_moat(&g, &got[1..]).is_err());
    }
}
