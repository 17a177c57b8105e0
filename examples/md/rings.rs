//! The relay rings of the device program: for every axis, a cyclic sequence of slots (one
//! or two per PE) in which consecutive slots sit on neighbouring PEs, or on the same PE
//! where a fold turns round. Rotating a ring by `hops` slots moves the block of every cell
//! one cell along the axis; the device does exactly that with nearest-neighbour sends.
//!
//! * x (one ring per physical row): slot 0 is an eastward track over the whole row, slot 1
//!   the westward track back; the serpentine fold puts logical x + 1 exactly 2·nzx slots
//!   further along (`hops` = 2·nzx). y is the same with rows and columns swapped.
//! * z (one ring per nzx × nzy block): when the block has a closed tour, the tour itself
//!   (one slot per PE, `hops` = 1); a 1 × n block gets the two-track ring of x inside the
//!   block (`hops` = 2).
//!
//! The tables are built from the geometry and checked here: every home slot is reached
//! from the previous cell's home slot in exactly `hops` steps, so the device needs no
//! geometry of its own.

use super::geometry::{Cell, Geometry};

/// Where a slot's block goes (or comes from) in one hop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Unused slot.
    None = 0,
    /// The east neighbour (x + 1).
    East = 1,
    /// The west neighbour.
    West = 2,
    /// The north neighbour (y − 1).
    North = 3,
    /// The south neighbour (y + 1).
    South = 4,
    /// The other slot of the same PE.
    Local = 5,
    /// An express link of the express relay: a static route along the row (x) or column
    /// (y) that skips the PEs in between, on the PE's express port of this axis.
    Express = 6,
}

/// How the x and y halos travel (z always uses the block's ring).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Relay {
    /// Every PE's CE copies every block that passes it (two slots per PE, 2·nzx hops per
    /// cell shift along x).
    Ce,
    /// One slot per PE; the jump over the other lane's group is a static multi-hop route
    /// through the routers only (nzx hops per cell shift, no passenger blocks). Axes whose
    /// fold is 1 (nzx = 1 or nzy = 1) keep the CE ring.
    Express,
    /// Seed 002's switch machine on every axis (`switch.rs`, DESIGN.md): one send and
    /// one receive per PE and cell shift, the block crossing nzx − 1 (nzy − 1) slots in
    /// the routers along x (y); along z the three-position machine on the block's tour
    /// (DESIGN.md "The z machine") on blocks with a closed tour (not 1 × n blocks, and on
    /// WSE-3 not the block column of the barrier's middle column, which keep the tour over
    /// the channels). An axis whose fold is 1 keeps the CE ring. The default.
    #[default]
    Switch,
    /// The switch machine along x only, express links along y (`--relay switch-x`, the
    /// default before y had the machine).
    SwitchX,
    /// The switch machine along x and y, z on its tour over the channels (`--relay
    /// switch-xy`, the default before z had the machine).
    SwitchXy,
}

impl Relay {
    /// Whether axis `ax` (0 = x, 1 = y) of `g` uses express links.
    pub fn express_on(self, g: &Geometry, ax: usize) -> bool {
        let on = match self {
            Relay::Ce => false,
            Relay::Express => true,
            Relay::SwitchXy | Relay::Switch => false,
            Relay::SwitchX => ax == 1,
        };
        on && [g.nzx, g.nzy, 0][ax] >= 2
    }

    /// Whether axis `ax` of `g` uses the switch machine.
    pub fn switch_on(self, g: &Geometry, ax: usize) -> bool {
        let on = match self {
            Relay::SwitchXy | Relay::Switch => ax < 2,
            Relay::SwitchX => ax == 0,
            _ => false,
        };
        on && [g.nzx, g.nzy, 0][ax] >= 2
    }

    /// Whether z uses the switch machine (`Switch`, where the block has a closed tour).
    pub fn z_machine(self, g: &Geometry) -> bool {
        self == Relay::Switch && g.nzx >= 2 && g.nzy >= 2
    }

    /// Whether the PEs of column `px` run the z machine: on WSE-3 not those of the block
    /// column of the barrier's middle column (`layout.csl` `zm`), whose PEs need all four
    /// channels' input queues.
    pub fn z_machine_at(self, g: &Geometry, arch: csl_arch::Arch, px: usize) -> bool {
        self.z_machine(g) && !(arch == csl_arch::Arch::Wse3 && px / g.nzx == g.width() / 2 / g.nzx)
    }

    /// Whether axis `ax` has one slot per PE (the express and switch relays' rings).
    pub fn one_slot(self, g: &Geometry, ax: usize) -> bool {
        self.express_on(g, ax) || self.switch_on(g, ax)
    }
}

/// One PE's part of one axis's ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingPart {
    /// Hops per one-cell shift.
    pub hops: u32,
    /// Which slot holds this PE's own cell.
    pub home: u32,
    /// For slots 0 and 1: toward the next slot of the forward rotation; `prev` points
    /// toward the previous slot (where a forward hop receives from).
    pub next: [Dir; 2],
    /// See `next`.
    pub prev: [Dir; 2],
    /// Whether this PE sends before it receives in a hop (else it receives first).
    /// Consecutive PEs of a ring have opposite values, except at most one pair of a ring
    /// of odd length; one stream at a time, that leaves no cycle of waits.
    pub send_first: bool,
    /// Whether every link of the ring joins a PE that sends first to one that receives
    /// first (a ring of even length, or the checkerboard): then a PE may send (and
    /// receive) both streams' blocks at once.
    pub alternating: bool,
    /// The PE (index `py * width + px`) at the other end of slot 0's next link (for the
    /// host's own checks).
    pub next_pe: [usize; 2],
}

impl RingPart {
    /// The ordering word of `icfg` (22 + axis): bit 0 send first, bit 1 alternating,
    /// bit 2 one slot per PE (slot 1 unused).
    pub fn order_word(&self) -> u32 {
        let single = self.next[1] == Dir::None && self.prev[1] == Dir::None;
        u32::from(self.send_first) | (u32::from(self.alternating) << 1) | (u32::from(single) << 2)
    }

    /// The six words of `icfg` the device reads for this axis.
    pub fn words(&self) -> [u32; 6] {
        [
            self.hops,
            self.home,
            self.next[0] as u32,
            self.prev[0] as u32,
            self.next[1] as u32,
            self.prev[1] as u32,
        ]
    }
}

const EMPTY: RingPart = RingPart {
    hops: 0,
    home: 0,
    next: [Dir::None; 2],
    prev: [Dir::None; 2],
    send_first: false,
    alternating: false,
    next_pe: [0; 2],
};

/// A slot: (px, py, slot index).
type Slot = (usize, usize, usize);

fn dir(from: Slot, to: Slot, express: bool) -> Result<Dir, String> {
    let (dx, dy) = (
        to.0 as isize - from.0 as isize,
        to.1 as isize - from.1 as isize,
    );
    match (dx, dy) {
        (0, d) | (d, 0) if express && d.abs() > 1 => Ok(Dir::Express),
        (0, 0) if from.2 != to.2 => Ok(Dir::Local),
        (1, 0) => Ok(Dir::East),
        (-1, 0) => Ok(Dir::West),
        (0, 1) => Ok(Dir::South),
        (0, -1) => Ok(Dir::North),
        _ => Err(format!(
            "ring slots {from:?} and {to:?} are not neighbours (internal error in the ring tables)"
        )),
    }
}

/// The two-track ring over `pes` (a straight line of neighbouring PEs).
fn two_track(pes: &[(usize, usize)]) -> Vec<Slot> {
    let mut ring: Vec<Slot> = pes.iter().map(|&(x, y)| (x, y, 0)).collect();
    ring.extend(pes.iter().rev().map(|&(x, y)| (x, y, 1)));
    ring
}

/// Records the ring's directions in `parts` (axis `ax`) and finds each cell's home slot:
/// `cells[k]` is the PE of the k-th cell along the axis.
fn install(
    parts: &mut [[RingPart; 3]],
    width: usize,
    ax: usize,
    ring: &[Slot],
    hops: usize,
    cells: &[(usize, usize)],
    express: bool,
) -> Result<(), String> {
    let n = ring.len();
    if hops * cells.len() != n {
        return Err(format!(
            "a ring of {n} slots cannot shift {} cells by {hops} slots",
            cells.len()
        ));
    }
    for (i, &s) in ring.iter().enumerate() {
        let next = ring[(i + 1) % n];
        let prev = ring[(i + n - 1) % n];
        let p = &mut parts[s.1 * width + s.0][ax];
        p.hops = hops as u32;
        p.next[s.2] = dir(s, next, express)?;
        p.prev[s.2] = dir(s, prev, express)?;
        p.next_pe[s.2] = next.1 * width + next.0;
        // One slot per PE (express): alternate along the ring; else the checkerboard.
        p.send_first = if express {
            i % 2 == 0
        } else {
            (s.0 + s.1) % 2 == 0
        };
        p.alternating = !express || n.is_multiple_of(2);
    }
    // The home of cell 0 is one of its PE's slots; the rest follow every `hops` slots.
    let start =
        ring.iter()
            .enumerate()
            .filter(|(_, s)| (s.0, s.1) == cells[0])
            .map(|(i, _)| i)
            .find(|&i0| {
                cells.iter().enumerate().all(|(k, &pe)| {
                    (ring[(i0 + k * hops) % n].0, ring[(i0 + k * hops) % n].1) == pe
                })
            })
            .ok_or_else(|| {
                format!(
                    "no consistent home slots on the axis-{ax} ring through {:?}",
                    cells[0]
                )
            })?;
    for k in 0..cells.len() {
        let s = ring[(start + k * hops) % n];
        parts[s.1 * width + s.0][ax].home = s.2 as u32;
    }
    Ok(())
}

/// The ring along one row or column `line` of PEs and the hops between ring neighbours:
/// with express links, one slot per PE in the order of `key` (the cell's coordinate on the
/// axis, then its sub-cell), `nz` hops apart; otherwise the two-track ring, `2 * nz` apart.
fn line_ring(
    g: &Geometry,
    line: &[(usize, usize)],
    express: bool,
    nz: usize,
    key: impl Fn(&Cell) -> (usize, usize),
) -> (Vec<Slot>, usize) {
    if express {
        let mut order = line.to_vec();
        order.sort_by_key(|&(px, py)| key(&g.cell(px, py)));
        (order.into_iter().map(|(x, y)| (x, y, 0)).collect(), nz)
    } else {
        (two_track(line), 2 * nz)
    }
}

/// The ring parts of every PE, indexed `py * width + px`, for axes x, y, z.
pub fn build(g: &Geometry, relay: Relay) -> Result<Vec<[RingPart; 3]>, String> {
    let (w, h) = (g.width(), g.height());
    let mut parts = vec![[EMPTY; 3]; w * h];
    let nz = g.nz();
    let (ex, ey) = (relay.one_slot(g, 0), relay.one_slot(g, 1));
    for py in 0..h {
        let row: Vec<(usize, usize)> = (0..w).map(|px| (px, py)).collect();
        // Cell (x, izx) at ring position x·nzx + izx.
        let (ring, hops) = line_ring(g, &row, ex, g.nzx, |c| (c.x, c.izx));
        // Each (y, z) of the row is one logical x ring.
        for px in 0..w {
            let c = g.cell(px, py);
            if c.x != 0 {
                continue;
            }
            let cells: Vec<_> = (0..g.nx).map(|x| g.pe(x, c.y, c.z)).collect();
            install(&mut parts, w, 0, &ring, hops, &cells, ex)?;
        }
    }
    for px in 0..w {
        let col: Vec<(usize, usize)> = (0..h).map(|py| (px, py)).collect();
        let (ring, hops) = line_ring(g, &col, ey, g.nzy, |c| (c.y, c.izy));
        for py in 0..h {
            let c = g.cell(px, py);
            if c.y != 0 {
                continue;
            }
            let cells: Vec<_> = (0..g.ny).map(|y| g.pe(c.x, y, c.z)).collect();
            install(&mut parts, w, 1, &ring, hops, &cells, ey)?;
        }
    }
    for y in 0..g.ny {
        for x in 0..g.nx {
            let cells: Vec<_> = (0..nz).map(|z| g.pe(x, y, z)).collect();
            if g.nzx >= 2 && g.nzy >= 2 {
                let ring: Vec<Slot> = cells.iter().map(|&(px, py)| (px, py, 0)).collect();
                install(&mut parts, w, 2, &ring, 1, &cells, false)?;
            } else {
                // A straight block: its PEs from one end to the other.
                let mut line = cells.clone();
                line.sort();
                install(&mut parts, w, 2, &two_track(&line), 2, &cells, false)?;
            }
        }
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Simulates the rotation on the host: after `hops`·k hops every home slot holds the
    /// block of the cell k behind.
    fn check(g: &Geometry, relay: Relay) {
        let parts = build(g, relay).expect("rings");
        let w = g.width();
        for ax in 0..3 {
            // Blocks are labelled by the cell that owns them.
            let mut state: Vec<[Option<(usize, usize, usize)>; 2]> = vec![[None; 2]; parts.len()];
            for py in 0..g.height() {
                for px in 0..w {
                    let c = g.cell(px, py);
                    state[py * w + px][parts[py * w + px][ax].home as usize] =
                        Some((c.x, c.y, c.z));
                }
            }
            let hops = parts[0][ax].hops as usize;
            for _ in 0..hops {
                let mut next = vec![[None; 2]; parts.len()];
                for py in 0..g.height() {
                    for px in 0..w {
                        let here = py * w + px;
                        for (s, &d) in parts[here][ax].next.iter().enumerate() {
                            let (tx, ty, ts, back) = match d {
                                Dir::None => continue,
                                Dir::East => (px + 1, py, s, Dir::West),
                                Dir::West => (px - 1, py, s, Dir::East),
                                Dir::South => (px, py + 1, s, Dir::North),
                                Dir::North => (px, py - 1, s, Dir::South),
                                Dir::Local => (px, py, 1 - s, Dir::Local),
                                Dir::Express => {
                                    let t = parts[here][ax].next_pe[s];
                                    (t % w, t / w, s, Dir::Express)
                                }
                            };
                            // The receiving slot must expect it from here.
                            assert_eq!(parts[ty * w + tx][ax].prev[ts], back);
                            next[ty * w + tx][ts] = state[here][s];
                        }
                    }
                }
                state = next;
            }
            for py in 0..g.height() {
                for px in 0..w {
                    let c = g.cell(px, py);
                    let want = match ax {
                        0 => ((c.x + g.nx - 1) % g.nx, c.y, c.z),
                        1 => (c.x, (c.y + g.ny - 1) % g.ny, c.z),
                        _ => (c.x, c.y, (c.z + g.nz() - 1) % g.nz()),
                    };
                    let home = parts[py * w + px][ax].home as usize;
                    assert_eq!(
                        state[py * w + px][home],
                        Some(want),
                        "axis {ax} at ({px},{py})"
                    );
                }
            }
        }
    }

    #[test]
    fn rings_shift_one_cell() {
        for relay in [
            Relay::Ce,
            Relay::Express,
            Relay::SwitchX,
            Relay::SwitchXy,
            Relay::Switch,
        ] {
            for (nx, ny, nzx, nzy) in GEOMETRIES {
                check(&Geometry::new(nx, ny, nzx, nzy).expect("geometry"), relay);
            }
        }
    }

    /// The express routes `layout.csl` configures (its formulas, copied) carry exactly
    /// the ring's express links: every link starts at a source, crosses only forwarders of
    /// its colour and ends at a destination, and no router has two roles on one colour.
    #[test]
    #[allow(clippy::needless_range_loop)] // `ax` picks the axis of the geometry too
    fn layout_express_routes_match_the_rings() {
        for (nx, ny, nzx, nzy) in GEOMETRIES {
            let g = Geometry::new(nx, ny, nzx, nzy).expect("geometry");
            let parts = build(&g, Relay::Express).expect("rings");
            let w = g.width();
            for ax in 0..2 {
                if !Relay::Express.express_on(&g, ax) {
                    continue;
                }
                let (n, m, len) = if ax == 0 {
                    (g.nx, g.nzx, g.width())
                } else {
                    (g.ny, g.nzy, g.height())
                };
                // Roles along one row (x) or column (y), from the ring: per position,
                // (source of +, pass +, destination of +, source of −, pass −, dest −),
                // where + is the forward link toward higher coordinates.
                let mut want = vec![[false; 6]; len];
                for p in 0..len {
                    let pe = if ax == 0 { p } else { p * w };
                    let part = &parts[pe][ax];
                    if part.next[0] != Dir::Express {
                        continue;
                    }
                    let t = part.next_pe[0];
                    let q = if ax == 0 { t % w } else { t / w };
                    let (lo, hi, k) = if q > p { (p, q, 0) } else { (q, p, 3) };
                    assert!(!want[p][k], "two sources at {p}");
                    want[p][k] = true;
                    assert!(!want[q][k + 2]);
                    want[q][k + 2] = true;
                    for between in &mut want[lo + 1..hi] {
                        assert!(!between[k + 1]);
                        between[k + 1] = true;
                    }
                }
                for (p, wv) in want.iter().enumerate() {
                    let got = layout_roles(n, m, p);
                    assert_eq!(
                        got, *wv,
                        "axis {ax} position {p} of {nx}x{ny} ({nzx}x{nzy})"
                    );
                    // One role per colour.
                    assert!(wv[..3].iter().filter(|&&b| b).count() <= 1);
                    assert!(wv[3..].iter().filter(|&&b| b).count() <= 1);
                }
            }
        }
    }

    /// `layout.csl`'s role formulas for position `p` of an axis of `n` cells folded by `m`.
    fn layout_roles(n: usize, m: usize, p: usize) -> [bool; 6] {
        let (g, o) = (p / m, p % m);
        let even = g % 2 == 0;
        let last = g == n - 1 && o == m - 1;
        [
            even && o == m - 1 && g != n - 1,
            !even && !last,
            (even && g >= 2 && o == 0) || (n.is_multiple_of(2) && last),
            (!even && o == 0) || (n % 2 == 1 && last),
            even && ((g == 0 && o >= 1) || (g >= 2 && !last)),
            (!even && o == m - 1 && (n % 2 == 1 || g + 3 <= n)) || (g == 0 && o == 0),
        ]
    }

    const GEOMETRIES: [(usize, usize, usize, usize); 10] = [
        (8, 8, 4, 2),
        (8, 8, 2, 4),
        (7, 7, 7, 1),
        (7, 9, 1, 7),
        (9, 7, 4, 4),
        (7, 8, 2, 5),
        (16, 16, 4, 4),
        (7, 7, 3, 4),
        (9, 11, 3, 4),
        (7, 7, 2, 4),
    ];
}
