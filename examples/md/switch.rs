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
//! turns round at a line's ends without a moat is in DESIGN.md.

use super::geometry::{Cell, Geometry};

/// The first trailer `(adv*, adv*, rst*)` (`*` = CE-filtered: no CE ever sees it).
pub const CMD1: u32 = 0x2B40_9249;
/// The second trailer `(adv*)`.
pub const CMD2: u32 = 0x0940_9249;

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
pub fn order_bits(g: &Geometry, c: &Cell, ax: usize) -> u32 {
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
pub fn march(n: usize, f: usize) -> Result<Vec<usize>, String> {
    use std::collections::VecDeque;
    #[derive(Clone, Debug)]
    enum Wv {
        Data(usize),
        // Remaining commands: true = advance, false = reset.
        Ctrl(Vec<bool>),
    }
    let trailer1 = vec![true, true, false];
    let trailer2 = vec![true];
    let start: Vec<u8> = (0..n).map(|s| start_position(s, n, f)).collect();
    let mut pos = start.clone();
    let mut link: Vec<VecDeque<Wv>> = vec![VecDeque::new(); n];
    let mut ramp: Vec<VecDeque<Wv>> = vec![VecDeque::new(); n];
    let mut got: Vec<Option<usize>> = vec![None; n];
    // Per CE: the events still to do, in order (true = send).
    let mut todo: Vec<VecDeque<bool>> = (0..n)
        .map(|s| {
            if receive_first(s, n, f) {
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
            // 0 and 1 send downstream, 2 and 3 to the CE.
            let from_up = matches!(pos[i], 0 | 3);
            let to_ce = matches!(pos[i], 2 | 3);
            let q = if from_up { &mut link[i] } else { &mut ramp[i] };
            let Some(w) = q.pop_front() else { continue };
            progress = true;
            let out = match w {
                Wv::Data(v) => Wv::Data(v),
                Wv::Ctrl(mut cmds) => {
                    let old = pos[i];
                    match cmds.first() {
                        Some(true) if pos[i] < 3 => pos[i] += 1,
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
        for (w, cmds) in [(CMD1, vec![0u8, 0, 1]), (CMD2, vec![0])] {
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
        }
    }
}
