//! The switch-machine relay (`mdlj --relay switch`, seed 002's relay): the start position
//! of every slot's switch, the order in which a PE sends and receives in one shift, the
//! control words, and a host model of the routers that proves, for a ring of `n` slots
//! with `f` slots per cell, that one shift moves every block exactly `f` slots and brings
//! every switch back to its start.
//!
//! The machine is the one `examples/md-tungsten` fixed and proved on its moat ring (its
//! README, "The relay's switch machine"): four positions, 0 forward (upstream →
//! downstream), 1 inject (RAMP → downstream, the "tail"), 2 loopback (RAMP → RAMP), 3
//! deliver (upstream → RAMP, the "head"); slot `s` starts as tail when `s mod (f+1) = 0`,
//! as head when it is `f`, as forwarder otherwise, and the trailing partial segment
//! (`s >= ⌊n/(f+1)⌋·(f+1)`) starts all heads; pop on advance, no ring mode; after its
//! block a tail sends the CE-filtered trailers `(adv, adv, rst)` and `(adv)`. The device
//! side (`md.csl`, `layout.csl`) puts these switches on the x lanes of every row and the
//! y lanes of every column (slot `nzy·y + izy` of the column, `f` = nzy); how the ring
//! turns round at a line's ends without a moat is in DESIGN.md. Along z (the default
//! `--relay switch`; not with `switch-xy`) the ring is the block's tour (`f` = 1) and the
//! machine has three positions ([`start_position_z`], trailers [`Z_CMD1`] and
//! [`Z_CMD2`]).

use super::geometry::{Cell, Geometry};

/// The first trailer `(adv*, adv*, rst*)` (`*` = CE-filtered: no CE ever sees it).
pub const CMD1: u32 = 0x2B40_9249;
/// The second trailer `(adv*)`.
pub const CMD2: u32 = 0x0940_9249;

/// The z machine's first trailer `(adv*, rst*)`: command 0 `adv*` (3 bits `0b101`: opcode
/// 1, CE filter) in bits 24:22, command 1 `rst*` (`0b110`) in bits 27:25, commands 2 to 7
/// `nop*` (`0b100`: bit 0 and bits 29:28 for command 2, then bits 3:1, 6:4, 9:7, 12:10,
/// 15:13), task id 0: `0b101 << 22 | 0b110 << 25 | 1 | 0x9248` = 0x0D40_9249. x's
/// [`CMD1`] is the same with command 1 `adv*` (`0b101 << 25`) and command 2 `rst*` (bits
/// 29:28 = `0b10`, bit 0 = 1): 0x2B40_9249; [`CMD2`] (`adv*`, then `nop*`) is
/// 0x0940_9249, for both machines.
pub const Z_CMD1: u32 = 0x0D40_9249;
/// The z machine's second trailer `(adv*)`, x's [`CMD2`].
pub const Z_CMD2: u32 = CMD2;

/// The z machine's positions (f = 1: the tour of a block, one slot per PE and cell): 0
/// inject (RAMP → downstream, the "tail"), 1 loopback (RAMP → RAMP), 2 deliver (upstream
/// → RAMP, the "head"). Slot `s` starts as tail when it is even, as head when it is odd.
pub fn start_position_z(s: usize) -> u8 {
    if s.is_multiple_of(2) { 0 } else { 2 }
}

/// The start position of slot `s` of a ring of `n` slots, `f` (>= 2) slots per cell.
pub fn start_position(s: usize, n: usize, f: usize) -> u8 {
    let seg = f + 1;
    if s >= n / seg * seg {
        3
    } else {
        match s % seg {
            0 => 1,
            r if r == f => 3,
            _ => 0,
        }
    }
}

/// Whether slot `s` receives its block before it sends its own (it starts as a head):
/// a PE with synchronous transfers must do them in this order, or its blocked send would
/// hold back the control wavelets that bring its router to "deliver".
pub fn receive_first(s: usize, n: usize, f: usize) -> bool {
    start_position(s, n, f) == 3
}

/// The switch bits of a PE's ordering word of axis `ax` (0 = x: `icfg[22]`, 1 = y:
/// `icfg[23]`): bit 3 the axis uses the switch machine, bit 4 the forward stream (blocks
/// to x + 1, ring slots `nzx·x + izx` of the row; along y `nzy·y + izy` of the column)
/// receives first, bit 5 the backward stream (slots in the reverse order) does.
///
/// Along z (`ax` 2, `icfg[24]`) the ring is the block's tour, slot `z` forward and
/// `nz − 1 − z` backward, and the machine is the three-position one of
/// [`start_position_z`]: a slot receives first where it starts as a head (odd slots).
pub fn order_bits(g: &Geometry, c: &Cell, ax: usize) -> u32 {
    if ax == 2 {
        let (sf, sb) = (c.z, g.nz() - 1 - c.z);
        let head = |s: usize| u32::from(start_position_z(s) == 2);
        return 8 | (head(sf) << 4) | (head(sb) << 5);
    }
    let (n, f, sf) = if ax == 0 {
        (g.width(), g.nzx, g.nzx * c.x + c.izx)
    } else {
        (g.height(), g.nzy, g.nzy * c.y + c.izy)
    };
    let sb = n - 1 - sf;
    8 | (u32::from(receive_first(sf, n, f)) << 4) | (u32::from(receive_first(sb, n, f)) << 5)
}

/// A host model of one shift on a ring of `n` slots, `f` slots per cell: each link is a
/// FIFO, each router follows SIMULATOR.md §4 (a control wavelet is forwarded with the
/// current position, then its command 0 runs, then it is popped if the position
/// changed; a CE-filtered command never reaches the CE), and each CE does its send
/// (block, `CMD1`, `CMD2`, synchronously: it goes on once its router has taken them) and
/// its receive in the order of [`receive_first`]. Returns, for every slot, the slot
/// whose block it received, or an error naming what went wrong (a deadlock, a control
/// wavelet reaching a CE, a switch not back at its start).
///
/// `f` = 1 is the z machine (the block's tour): three positions ([`start_position_z`]),
/// trailers `(adv*, rst*)` and `(adv*)`.
pub fn march(n: usize, f: usize) -> Result<Vec<usize>, String> {
    use std::collections::VecDeque;
    #[derive(Clone, Debug)]
    enum Wv {
        Data(usize),
        // Remaining commands: true = advance, false = reset.
        Ctrl(Vec<bool>),
    }
    // The z machine (f = 1): 0 inject, 1 loopback, 2 deliver; else the four positions.
    let z = f == 1;
    let last: u8 = if z { 2 } else { 3 };
    let trailer1 = if z {
        vec![true, false]
    } else {
        vec![true, true, false]
    };
    let trailer2 = vec![true];
    let start: Vec<u8> = (0..n)
        .map(|s| {
            if z {
                start_position_z(s)
            } else {
                start_position(s, n, f)
            }
        })
        .collect();
    let head_first = |s: usize| {
        if z {
            s % 2 == 1
        } else {
            receive_first(s, n, f)
        }
    };
    let mut pos = start.clone();
    let mut link: Vec<VecDeque<Wv>> = vec![VecDeque::new(); n];
    let mut ramp: Vec<VecDeque<Wv>> = vec![VecDeque::new(); n];
    let mut got: Vec<Option<usize>> = vec![None; n];
    // Per CE: the events still to do, in order (true = send).
    let mut todo: Vec<VecDeque<bool>> = (0..n)
        .map(|s| {
            if head_first(s) {
                VecDeque::from([false, true])
            } else {
                VecDeque::from([true, false])
            }
        })
        .collect();
    loop {
        let mut progress = false;
        for i in 0..n {
            // The CE.
            match todo[i].front() {
                // A synchronous send: the CE goes on only once its router has taken the
                // block and both trailers.
                Some(true) if ramp[i].is_empty() => {
                    ramp[i].extend([
                        Wv::Data(i),
                        Wv::Ctrl(trailer1.clone()),
                        Wv::Ctrl(trailer2.clone()),
                    ]);
                    todo[i].pop_front();
                    progress = true;
                }
                Some(false) if got[i].is_some() && ramp[i].is_empty() => {
                    todo[i].pop_front();
                    progress = true;
                }
                _ => {}
            }
            // The router: position 0 and 3 take from upstream, 1 and 2 from the RAMP;
            // 0 and 1 send downstream, 2 and 3 to the CE. The z machine: 2 takes from
            // upstream, 0 and 1 from the RAMP; 0 sends downstream, 1 and 2 to the CE.
            let (from_up, to_ce) = if z {
                (pos[i] == 2, pos[i] >= 1)
            } else {
                (matches!(pos[i], 0 | 3), matches!(pos[i], 2 | 3))
            };
            let q = if from_up { &mut link[i] } else { &mut ramp[i] };
            let Some(w) = q.pop_front() else { continue };
            progress = true;
            let out = match w {
                Wv::Data(v) => Wv::Data(v),
                Wv::Ctrl(mut cmds) => {
                    let old = pos[i];
                    match cmds.first() {
                        Some(true) if pos[i] < last => pos[i] += 1,
                        Some(false) => pos[i] = 0,
                        _ => {}
                    }
                    if pos[i] != old {
                        cmds.remove(0);
                    }
                    Wv::Ctrl(cmds)
                }
            };
            match (to_ce, out) {
                (true, Wv::Data(v)) => {
                    if got[i].replace(v).is_some() {
                        return Err(format!("n {n} f {f}: slot {i} received two blocks"));
                    }
                }
                // Every command is CE-filtered: dropped at the RAMP.
                (true, Wv::Ctrl(_)) => {}
                (false, Wv::Ctrl(c)) if c.is_empty() => {}
                (false, w) => link[(i + 1) % n].push_back(w),
            }
        }
        if !progress {
            break;
        }
    }
    if let Some(i) = (0..n).find(|&i| !todo[i].is_empty()) {
        return Err(format!("n {n} f {f}: slot {i} is stuck (deadlock)"));
    }
    if let Some(i) = (0..n).find(|&i| !link[i].is_empty() || !ramp[i].is_empty()) {
        return Err(format!("n {n} f {f}: wavelets left at slot {i}"));
    }
    if let Some(i) = (0..n).find(|&i| pos[i] != start[i]) {
        return Err(format!(
            "n {n} f {f}: the switch of slot {i} ended at {} (started at {})",
            pos[i], start[i]
        ));
    }
    Ok(got.into_iter().map(|g| g.unwrap_or(usize::MAX)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_shift_moves_every_block_one_cell_and_brings_every_switch_home() {
        // Every x and y ring length the tests and benchmarks use (W = nx·nzx, H = ny·nzy:
        // 8×4, 8×2, 7×7, 7×2, 16×4, 8×4 along y too), odd and even, with and without a
        // partial segment, and more.
        for f in 2..=7 {
            for nx in 7..=17 {
                let n = nx * f;
                let got = march(n, f).unwrap_or_else(|e| panic!("{e}"));
                for (i, &g) in got.iter().enumerate() {
                    assert_eq!(g, (i + n - f) % n, "n {n} f {f}: slot {i}");
                }
            }
        }
    }

    #[test]
    fn one_z_shift_moves_every_block_one_slot_and_brings_every_switch_home() {
        // The z machine (f = 1) on every tour length a block can have (nzx·nzy, even) and
        // on odd rings too: every slot receives the block of the slot before it.
        for n in 2..=40 {
            let got = march(n, 1).unwrap_or_else(|e| panic!("{e}"));
            for (i, &g) in got.iter().enumerate() {
                assert_eq!(g, (i + n - 1) % n, "z ring of {n}: slot {i}");
            }
        }
    }

    /// A copy of `layout.csl`'s `tour_dir`: the direction (0 east, 1 west, 2 north, 3
    /// south) from block position (izx, izy) of an nzx × nzy block on lanes (hix, hiy)
    /// to the next (`fwd`) or previous cell of the block's tour (geometry.rs `block_tour`).
    fn layout_tour_dir(
        izx: usize,
        izy: usize,
        nzx: usize,
        nzy: usize,
        hix: bool,
        hiy: bool,
        fwd: bool,
    ) -> u8 {
        let tr = nzy % 2 == 1;
        let (i, j, w, h) = if tr {
            (izy, izx, nzy, nzx)
        } else {
            (izx, izy, nzx, nzy)
        };
        // 0 +i, 1 -i, 2 +j, 3 -j
        let m = if fwd {
            if i >= 1 && j % 2 == 0 {
                if i < w - 1 { 0 } else { 2 }
            } else if i >= 1 {
                if i > 1 {
                    1
                } else if j < h - 1 {
                    2
                } else {
                    1
                }
            } else if j > 0 {
                3
            } else {
                0
            }
        } else if i >= 1 && j % 2 == 0 {
            if i > 1 || j == 0 { 1 } else { 3 }
        } else if i >= 1 {
            if i < w - 1 { 0 } else { 3 }
        } else if j < h - 1 {
            2
        } else {
            0
        };
        // Along block x (izx) or block y (izy), and which way.
        let along_x = (m < 2) != tr;
        let plus = m % 2 == 0;
        if along_x {
            if plus != hix { 0 } else { 1 }
        } else if plus != hiy {
            3
        } else {
            2
        }
    }

    /// A copy of `layout.csl`'s `tour_z`: the z index of block position (izx, izy).
    fn layout_tour_z(izx: usize, izy: usize, nzx: usize, nzy: usize) -> usize {
        let (i, j, w, h) = if nzy % 2 == 1 {
            (izy, izx, nzy, nzx)
        } else {
            (izx, izy, nzx, nzy)
        };
        if i == 0 {
            (w - 1) * h + (h - 1 - j)
        } else if j % 2 == 0 {
            j * (w - 1) + i - 1
        } else {
            j * (w - 1) + w - 1 - i
        }
    }

    #[test]
    fn the_z_tour_routes_join_every_slot_to_the_next_one() {
        // Every PE's forward machine sends toward the PE of cell z + 1 and hears the PE
        // of z − 1 (the backward machine the reverse), on blocks of every lane (mirrored
        // along x, y or both), transposed tours (nzy odd) and not.
        for (nx, ny, nzx, nzy) in [
            (8, 8, 4, 2),
            (8, 8, 2, 4),
            (16, 16, 4, 4),
            (7, 7, 2, 4),
            (7, 8, 4, 3),
            (8, 7, 2, 5),
            (7, 7, 6, 3),
            (8, 8, 6, 2),
            (7, 7, 3, 4),
        ] {
            let g = Geometry::new(nx, ny, nzx, nzy).expect("geometry");
            let nz = g.nz();
            for py in 0..g.height() {
                for px in 0..g.width() {
                    let c = g.cell(px, py);
                    assert_eq!(
                        layout_tour_z(c.izx, c.izy, nzx, nzy),
                        c.z,
                        "{nzx}x{nzy} ({px}, {py})"
                    );
                    for (fwd, z) in [(true, (c.z + 1) % nz), (false, (c.z + nz - 1) % nz)] {
                        let d =
                            layout_tour_dir(c.izx, c.izy, nzx, nzy, c.hix == 1, c.hiy == 1, fwd);
                        let (qx, qy) = match d {
                            0 => (px + 1, py),
                            1 => (px.wrapping_sub(1), py),
                            2 => (px, py.wrapping_sub(1)),
                            _ => (px, py + 1),
                        };
                        assert_eq!(
                            g.pe(c.x, c.y, z),
                            (qx, qy),
                            "{nx}x{ny} {nzx}x{nzy}: PE ({px}, {py}) cell z {} fwd {fwd}",
                            c.z
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn z_order_bits_follow_the_start_positions() {
        let g = Geometry::new(8, 8, 4, 2).expect("geometry");
        for py in 0..g.height() {
            for px in 0..g.width() {
                let c = g.cell(px, py);
                let b = order_bits(&g, &c, 2);
                assert_eq!(b & 8, 8);
                assert_eq!(b & 16 != 0, c.z % 2 == 1, "{px},{py}");
                assert_eq!(b & 32 != 0, (g.nz() - 1 - c.z) % 2 == 1, "{px},{py}");
            }
        }
    }

    /// `layout.csl`'s switch roles of column `px` along a row of `nx` cells folded `nzx`
    /// (or, the same formulas with y's names, of row `py` along a column of `ny` cells
    /// folded `nzy`): the ring slot in the forward and backward shift, and whether the
    /// machine of each stream is on the low lane's colour.
    fn layout_roles(nx: usize, nzx: usize, px: usize) -> ([usize; 2], [bool; 2]) {
        let w = nx * nzx;
        let (gx, ox) = (px / nzx, px % nzx);
        let xev = gx % 2 == 0;
        let izx = if xev { ox } else { nzx - 1 - ox };
        let lx = if xev { gx / 2 } else { nx - 1 - (gx - 1) / 2 };
        let sf = nzx * lx + izx;
        let (wend, eend) = (px == 0, px == w - 1);
        let m_f_lo = if wend {
            true
        } else if eend {
            false
        } else {
            xev
        };
        let m_b_lo = if wend {
            false
        } else if eend {
            true
        } else {
            xev
        };
        ([sf, w - 1 - sf], [m_f_lo, m_b_lo])
    }

    /// Follows a burst from every PE of a line (a row: `ax` 0, or a column: `ax` 1) of `g`
    /// through the routers `layout.csl` configures: plain forwards in the colour's flow,
    /// the colour swap at the two end PEs, up to the first router that has its machine on
    /// the handling colour. That must be the PE of the next ring slot, and the slots must
    /// be the geometry's (`nzx·x + izx` along a row, `nzy·y + izy` along a column).
    fn check_line_routes(g: &Geometry, ax: usize) {
        let (nx, nzx) = if ax == 0 {
            (g.nx, g.nzx)
        } else {
            (g.ny, g.nzy)
        };
        let w = nx * nzx;
        let roles: Vec<_> = (0..w).map(|p| layout_roles(nx, nzx, p)).collect();
        for (p, (slots, _)) in roles.iter().enumerate() {
            let want = if ax == 0 {
                let c = g.cell(p, 0);
                nzx * c.x + c.izx
            } else {
                let c = g.cell(0, p);
                nzx * c.y + c.izy
            };
            assert_eq!(slots[0], want, "axis {ax} {nx}x{nzx}: PE {p}");
        }
        for st in 0..2 {
            // The low lane's colour flows east in the forward shift, west in the
            // backward one; the high lane's the other way.
            let lo_east = st == 0;
            let flows_east = |lo: bool| lo == lo_east;
            for px in 0..w {
                let (slots, lanes) = roles[px];
                let mut lo = lanes[st];
                // A machine sends downstream: inward at the ends, else in its flow.
                let mut east = if px == 0 {
                    true
                } else if px == w - 1 {
                    false
                } else {
                    flows_east(lo)
                };
                let mut q = px;
                let next = loop {
                    q = if east { q + 1 } else { q - 1 };
                    if q == 0 || q == w - 1 {
                        // Both colours of the pair swap here.
                        lo = !lo;
                    }
                    if roles[q].1[st] == lo {
                        break q;
                    }
                    assert!(
                        q != 0 && q != w - 1,
                        "axis {ax} {nx}x{nzx} stream {st}: a burst from {px} dies at the end PE {q}"
                    );
                    east = flows_east(lo);
                };
                assert_eq!(
                    roles[next].0[st],
                    (slots[st] + 1) % w,
                    "axis {ax} {nx}x{nzx} stream {st}: PE {px} (slot {}) reaches PE {next}",
                    slots[st]
                );
            }
        }
    }

    #[test]
    fn the_row_routes_join_every_slot_to_the_next_one() {
        for (nx, nzx, nzy) in [
            (8, 4, 2),
            (8, 2, 4),
            (7, 7, 1),
            (7, 2, 4),
            (16, 4, 4),
            (9, 3, 4),
            (7, 5, 2),
            (10, 6, 2),
        ] {
            check_line_routes(&Geometry::new(nx, 8, nzx, nzy).expect("geometry"), 0);
        }
    }

    #[test]
    fn the_column_routes_join_every_slot_to_the_next_one() {
        // The y lanes (layout.csl's y formulas are x's with ny, nzy, py): odd and even
        // ny, folds 2 to 7, with and without a partial segment (ny·nzy mod (nzy + 1)).
        for (ny, nzx, nzy) in [
            (8, 4, 2),
            (8, 2, 4),
            (7, 1, 7),
            (7, 4, 2),
            (16, 4, 4),
            (9, 4, 3),
            (7, 2, 5),
            (10, 2, 6),
            (11, 4, 2),
        ] {
            check_line_routes(&Geometry::new(8, ny, nzx, nzy).expect("geometry"), 1);
        }
    }

    #[test]
    fn order_bits_follow_the_start_positions_on_both_axes() {
        // A PE receives first exactly where its slot starts as a head, for the forward
        // slot and for the backward (reversed) one; the bit of the other axis's geometry
        // must not leak in (a 2 × 4 fold makes the two axes differ).
        let g = Geometry::new(8, 8, 2, 4).expect("geometry");
        let (w, h) = (g.width(), g.height());
        let mut heads = [0usize; 2];
        for py in 0..h {
            for px in 0..w {
                let c = g.cell(px, py);
                for (ax, n, f, s) in [(0, w, 2, 2 * c.x + c.izx), (1, h, 4, 4 * c.y + c.izy)] {
                    let b = order_bits(&g, &c, ax);
                    assert_eq!(b & 8, 8);
                    assert_eq!(
                        b & 16 != 0,
                        start_position(s, n, f) == 3,
                        "{px},{py} axis {ax}"
                    );
                    assert_eq!(
                        b & 32 != 0,
                        start_position(n - 1 - s, n, f) == 3,
                        "{px},{py} axis {ax}"
                    );
                    heads[ax] += usize::from(b & 16 != 0);
                }
            }
        }
        // Rows of 16 slots in segments of 3 (5 heads and a partial segment of 1 head),
        // columns of 32 slots in segments of 5 (6 heads and 2 in the partial segment).
        assert_eq!(heads, [6 * h, 8 * w]);
    }

    #[test]
    fn start_positions_by_hand() {
        // n = 32, f = 4: segments of 5, the last two slots a partial segment.
        let p: Vec<u8> = (0..32).map(|s| start_position(s, 32, 4)).collect();
        assert_eq!(&p[..10], &[1, 0, 0, 0, 3, 1, 0, 0, 0, 3]);
        assert_eq!(&p[28..], &[0, 3, 3, 3]);
    }

    #[test]
    fn control_words_are_the_trailers() {
        use csl_arch::fabric::control;
        for (w, cmds) in [
            (CMD1, vec![0u8, 0, 1]),
            (CMD2, vec![0]),
            (Z_CMD1, vec![0, 1]),
            (Z_CMD2, vec![0]),
        ] {
            for (k, &c) in cmds.iter().enumerate() {
                let want = if c == 0 {
                    control::SWITCH_ADV
                } else {
                    control::SWITCH_RST
                };
                assert_eq!(control::command(w, k) & 3, want, "{w:#x} command {k}");
                assert_ne!(
                    control::command(w, k) & control::CE_FILTER,
                    0,
                    "{w:#x} command {k}"
                );
            }
            for k in cmds.len()..control::MAX_CMDS {
                assert_eq!(
                    control::command(w, k),
                    control::NOP | control::CE_FILTER,
                    "{w:#x} command {k}"
                );
            }
        }
    }
}
