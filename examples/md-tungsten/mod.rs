//! Host side of the MD flagship's second form, written the way a Tungsten user would
//! (`examples/md-tungsten`, issue 17): the router tables and per-PE parameter blobs that
//! `mdlj-tables` writes for `miset`. The fold (which logical cell each PE holds) is the
//! CSL flagship's one definition, [`crate::md::geometry::Geometry`]; the table words are
//! `csl_arch::tables`'s.
//!
//! The padded rectangle is the core (`nx·nzx` × `ny·nzy` PEs at offset (1, 1)) plus the
//! one-tile moat ring, as `mdlj.paint` lays it out.

use crate::md::geometry::Geometry;
use csl_arch::fabric::Direction;
use csl_arch::tables::{ROUTER_WORDS_PER_TILE, RouterEntry, SWITCH_WORDS_PER_TILE};

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

/// The `router` table of the padded rectangle, order `y x r`: the moat ring's
/// turnarounds (x colours on the west and east columns, y colours on the north and south
/// rows; corners route nothing: the north-west one runs the barrier origin). Until the
/// relay's tables exist, the core's edge tiles (not its corners) get the routes of
/// `moatcheck.w`: the low-lane colour of the side from the core out to the moat, its
/// partner from the moat back to the core (west 0/1, east 2/3, north 4/5, south 6/7).
pub fn router_table(g: &Geometry) -> Vec<u16> {
    let (w, h) = padded(g);
    let mut words = vec![0u16; w * h * ROUTER_WORDS_PER_TILE];
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

/// The `switch` table of the padded rectangle, order `y x r n` (no switches yet).
pub fn switch_table(g: &Geometry) -> Vec<u16> {
    let (w, h) = padded(g);
    vec![0u16; w * h * SWITCH_WORDS_PER_TILE]
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
