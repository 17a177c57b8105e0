//! The mapping of the logical nx × ny × nz cell grid (one cell per PE) onto the physical
//! (nx·nzx) × (ny·nzy) rectangle, as mdlj does it (shared/spec/mdlj.md §2):
//!
//! * each logical axis is **serpentine-folded**: physical column group `g` (of `nzx`
//!   columns) holds logical x = `jtox(g)` = g/2 for even g, nx−1−(g−1)/2 for odd g, so the
//!   periodic ring x = 0, 1, …, nx−1, 0 is a physical path of hops of at most two groups;
//! * `hix = g % 2` is the lane; within a group the offset `izx` runs west to east on the
//!   low lane and east to west on the high lane; rows likewise with `ny`, `nzy`, `hiy`;
//! * z is folded into each nzx × nzy block: block position (izx, izy) holds cell z =
//!   `zidx[izy][izx]`, a closed tour of the block when one exists (so consecutive z cells are
//!   physical neighbours, including nz−1 → 0), else (a 1 × n block) the same interleave as
//!   the serpentine fold, so consecutive z cells are at most two hops apart.

/// Cells each halo reaches in every direction.
pub const RANGE: usize = 3;

/// Most PEs along either side of the rectangle (a wafer is about 1,000 PEs across).
pub const MAX_SIDE: usize = 4096;

/// A validated decomposition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Cells along x.
    pub nx: usize,
    /// Cells along y.
    pub ny: usize,
    /// z cells folded along x in each block.
    pub nzx: usize,
    /// z cells folded along y in each block.
    pub nzy: usize,
    /// `zidx[izy][izx]`: the z cell at block position (izx, izy).
    zidx: Vec<Vec<usize>>,
}

/// The logical cell of a PE and its place in the folds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    /// Logical x.
    pub x: usize,
    /// Logical y.
    pub y: usize,
    /// Logical z.
    pub z: usize,
    /// Offset within the column group (lane-corrected).
    pub izx: usize,
    /// Offset within the row group (lane-corrected).
    pub izy: usize,
    /// Column lane (0 low, 1 high).
    pub hix: usize,
    /// Row lane.
    pub hiy: usize,
}

fn jtox(n: usize, g: usize) -> usize {
    if g.is_multiple_of(2) {
        g / 2
    } else {
        n - 1 - (g - 1) / 2
    }
}

fn xtoj(n: usize, x: usize) -> usize {
    if 2 * x < n {
        2 * x
    } else {
        2 * (n - 1 - x) + 1
    }
}

/// A closed tour of the a × b grid visiting every cell once, as `order[k] = (i, j)`, when
/// one exists (a·b even and both ≥ 2); else for a 1 × n line the serpentine interleave.
fn block_tour(a: usize, b: usize) -> Option<Vec<(usize, usize)>> {
    if a == 1 || b == 1 {
        let n = a * b;
        let mut order = vec![(0, 0); n];
        for (z, slot) in order.iter_mut().enumerate() {
            let p = xtoj(n, z);
            *slot = if a == 1 { (0, p) } else { (p, 0) };
        }
        return Some(order);
    }
    if a % 2 == 1 && b % 2 == 1 {
        return None;
    }
    // Columns 1.. of the rows snake; column 0 is the way back. Transpose if rows are odd.
    let transpose = b % 2 == 1;
    let (w, h) = if transpose { (b, a) } else { (a, b) };
    let mut order = Vec::with_capacity(w * h);
    for j in 0..h {
        let cols: Vec<usize> = if j % 2 == 0 {
            (1..w).collect()
        } else {
            (1..w).rev().collect()
        };
        for i in cols {
            order.push((i, j));
        }
    }
    for j in (0..h).rev() {
        order.push((0, j));
    }
    Some(if transpose {
        order.into_iter().map(|(i, j)| (j, i)).collect()
    } else {
        order
    })
}

impl Geometry {
    /// Checks a decomposition: every axis needs 2·RANGE+1 cells so the halo does not wrap
    /// onto itself, and the z fold must have a tour.
    pub fn new(nx: usize, ny: usize, nzx: usize, nzy: usize) -> Result<Geometry, String> {
        if nx == 0 || ny == 0 || nzx == 0 || nzy == 0 {
            return Err("every dimension must be at least 1".into());
        }
        // One PE per cell: the rectangle must fit a wafer-sized fabric.
        for (name, side) in [
            ("width nx·nzx (--nx, --nzx)", nx.checked_mul(nzx)),
            ("height ny·nzy (--ny, --nzy)", ny.checked_mul(nzy)),
        ] {
            if side.is_none_or(|s| s > MAX_SIDE) {
                return Err(format!(
                    "the rectangle's {name} is over {MAX_SIDE} PEs, larger than any fabric"
                ));
            }
        }
        let nz = nzx * nzy;
        for (name, n) in [("nx", nx), ("ny", ny), ("nz = nzx·nzy", nz)] {
            if n < 2 * RANGE + 1 {
                return Err(format!(
                    "{name} = {n}: the halo relay reaches {RANGE} cells each way, so every axis needs at least {} cells",
                    2 * RANGE + 1
                ));
            }
        }
        let Some(tour) = block_tour(nzx, nzy) else {
            return Err(format!(
                "a {nzx} × {nzy} block has no closed tour: make nzx or nzy even, or one of them 1"
            ));
        };
        let mut zidx = vec![vec![0; nzx]; nzy];
        for (z, (i, j)) in tour.into_iter().enumerate() {
            zidx[j][i] = z;
        }
        Ok(Geometry {
            nx,
            ny,
            nzx,
            nzy,
            zidx,
        })
    }

    /// Cells along z.
    pub fn nz(&self) -> usize {
        self.nzx * self.nzy
    }

    /// Physical width of the rectangle.
    pub fn width(&self) -> usize {
        self.nx * self.nzx
    }

    /// Physical height of the rectangle.
    pub fn height(&self) -> usize {
        self.ny * self.nzy
    }

    /// Rejects a cell size the relay cannot serve: RANGE cells must cover the cutoff.
    pub fn check_cutoff(&self, box_len: [f64; 3], rcut: f64) -> Result<(), String> {
        for (k, n) in [self.nx, self.ny, self.nz()].into_iter().enumerate() {
            let width = box_len[k] / n as f64;
            if (RANGE as f64) * width < rcut {
                return Err(format!(
                    "cells along axis {k} are {width:.4} wide: {RANGE} cells ({:.4}) do not reach the cutoff {rcut}; use fewer cells",
                    RANGE as f64 * width
                ));
            }
        }
        Ok(())
    }

    /// Which halo cells can hold a partner within the cutoff, packed for the device's
    /// pair list (`icfg[25]`, md.csl `build_pairs`). Cells `o = (ox, oy, oz)` apart are at
    /// least `Σ (max(|o_k| − 1, 0) · w_k)²` apart squared (every atom lies in its cell; no
    /// axis has fewer than 2·RANGE+1 cells, so |o_k| ≤ RANGE is the minimum image). A
    /// cell pair whose bound exceeds the cutoff by more than 1 % (far beyond f32
    /// rounding) holds no pair, and the device skips it: the list keeps the same pairs in
    /// the same order. For a y-line cell `d` = 0..RANGE cells from the PE's own (nibble
    /// `d`): bits 0–1 how many x+ cells (1..kx) and bits 2–3 how many z+ x-lines
    /// (1..kz) to search (an x-line holds cells of every x offset, so a z line counts as
    /// x offset 0); bits 16–17: how many y+ cells the own atoms search.
    pub fn pair_reach(&self, box_len: [f64; 3], rcut: f64) -> u32 {
        let n = [self.nx, self.ny, self.nz()];
        let w: [f64; 3] = std::array::from_fn(|k| box_len[k] / n[k] as f64);
        let limit = (1.01 * rcut) * (1.01 * rcut);
        let near = |o: [usize; 3]| {
            let d2: f64 = (0..3)
                .map(|k| (o[k].saturating_sub(1) as f64 * w[k]).powi(2))
                .sum();
            d2 <= limit
        };
        let reach = |f: &dyn Fn(usize) -> [usize; 3]| {
            (1..=RANGE).take_while(|&o| near(f(o))).count() as u32
        };
        let mut code = 0;
        for d in 0..=RANGE {
            let kx = reach(&|o| [o, d, 0]);
            let kz = reach(&|o| [0, d, o]);
            code |= (kx | kz << 2) << (4 * d);
        }
        code | reach(&|o| [0, o, 0]) << 16
    }

    /// The axes along which the pair list's records can span less than half the box, so
    /// that the device's check for whether the minimum image is needed (md.csl
    /// `check_wrap`) can succeed: bit k of the result, placed at bits 20–22 of
    /// `icfg[25]`. The records (x+ halo, z+ x-lines, y-line) span 2·RANGE + 1 cells along
    /// x and y and RANGE + 1 along z; an axis is marked when twice that is less than its
    /// cells. The device checks the positions themselves on every pass; this only spares
    /// it a check that cannot succeed.
    pub fn min_image_checks(&self) -> u32 {
        let span = [2 * RANGE + 1, 2 * RANGE + 1, RANGE + 1];
        let n = [self.nx, self.ny, self.nz()];
        (0..3)
            .filter(|&k| 2 * span[k] < n[k])
            .fold(0, |code, k| code | 1 << k)
    }

    /// The axes along which the device may take the minimum image from per-record image
    /// shifts (md.csl `image_shifts`; bits 24–26 of `icfg[25]`, with the minimum-image
    /// check's bits): every record of the pair list lies within RANGE + 1/2 cells of the
    /// PE's cell centre, so two records of a row are within RANGE + 1 cells of each
    /// other; where that is under half the axis (at least 2·(RANGE + 1) + 1 cells), the
    /// minimum image of their difference is the difference of their images exactly.
    pub fn image_shifts(&self) -> u32 {
        let n = [self.nx, self.ny, self.nz()];
        (0..3)
            .filter(|&k| n[k] > 2 * (RANGE + 1))
            .fold(0, |code, k| code | 1 << k)
    }

    /// Whether the device should narrow each atom's search to the cells within its own
    /// reach (md.csl `reach_of`; bit 23 of `icfg[25]`): where every cell is at least 0.6
    /// cutoffs wide, a cell two away is out of reach of most atoms of a cell, and the
    /// test costs less than the rows it cuts. (lj108's cells, half a cutoff wide, lose
    /// almost nothing to it.)
    pub fn atom_reach(&self, box_len: [f64; 3], rcut: f64) -> bool {
        let n = [self.nx, self.ny, self.nz()];
        (0..3).all(|k| box_len[k] / n[k] as f64 >= 0.6 * rcut)
    }

    /// The logical cell of physical PE (px, py).
    pub fn cell(&self, px: usize, py: usize) -> Cell {
        let (gx, ox) = (px / self.nzx, px % self.nzx);
        let (gy, oy) = (py / self.nzy, py % self.nzy);
        let (hix, hiy) = (gx % 2, gy % 2);
        let izx = if hix == 0 { ox } else { self.nzx - 1 - ox };
        let izy = if hiy == 0 { oy } else { self.nzy - 1 - oy };
        Cell {
            x: jtox(self.nx, gx),
            y: jtox(self.ny, gy),
            z: self.zidx[izy][izx],
            izx,
            izy,
            hix,
            hiy,
        }
    }

    /// The physical PE of logical cell (x, y, z).
    pub fn pe(&self, x: usize, y: usize, z: usize) -> (usize, usize) {
        let (gx, gy) = (xtoj(self.nx, x), xtoj(self.ny, y));
        let (mut izx, mut izy) = (0, 0);
        for (j, row) in self.zidx.iter().enumerate() {
            if let Some(i) = row.iter().position(|&v| v == z) {
                (izx, izy) = (i, j);
            }
        }
        let ox = if gx % 2 == 0 { izx } else { self.nzx - 1 - izx };
        let oy = if gy % 2 == 0 { izy } else { self.nzy - 1 - izy };
        (gx * self.nzx + ox, gy * self.nzy + oy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hops(a: (usize, usize), b: (usize, usize)) -> usize {
        a.0.abs_diff(b.0) + a.1.abs_diff(b.1)
    }

    fn check(g: &Geometry) {
        let mut seen = std::collections::HashSet::new();
        for py in 0..g.height() {
            for px in 0..g.width() {
                let c = g.cell(px, py);
                assert!(seen.insert((c.x, c.y, c.z)), "cell mapped twice");
                assert_eq!(g.pe(c.x, c.y, c.z), (px, py));
                // Logical neighbours are physically close: z within a block, x/y two groups.
                let zn = g.pe(c.x, c.y, (c.z + 1) % g.nz());
                assert!(hops((px, py), zn) <= 2, "z neighbour too far");
                let xn = g.pe((c.x + 1) % g.nx, c.y, c.z);
                assert!(
                    xn.1 == py && xn.0.abs_diff(px) <= 2 * g.nzx + g.nzx,
                    "x neighbour too far"
                );
                let yn = g.pe(c.x, (c.y + 1) % g.ny, c.z);
                assert!(
                    yn.0 == px && yn.1.abs_diff(py) <= 3 * g.nzy,
                    "y neighbour too far"
                );
            }
        }
        assert_eq!(seen.len(), g.nx * g.ny * g.nz());
    }

    #[test]
    fn seed_configuration_and_others_are_bijective_and_local() {
        for (nx, ny, nzx, nzy) in [
            (8, 8, 4, 2),
            (8, 8, 2, 4),
            (7, 7, 7, 1),
            (16, 16, 4, 4),
            (7, 9, 1, 8),
        ] {
            check(&Geometry::new(nx, ny, nzx, nzy).unwrap());
        }
    }

    #[test]
    fn the_seed_block_is_a_closed_tour() {
        let g = Geometry::new(8, 8, 4, 2).unwrap();
        // Consecutive z cells, nz-1 -> 0 included, are physical neighbours.
        for z in 0..8 {
            assert_eq!(hops(g.pe(0, 0, z), g.pe(0, 0, (z + 1) % 8)), 1);
        }
    }

    #[test]
    fn geometries_the_relay_cannot_serve_are_rejected() {
        assert!(Geometry::new(6, 8, 4, 2).is_err());
        assert!(Geometry::new(8, 8, 3, 3).is_err());
        // Sides beyond any fabric, and products that overflow, are errors, not huge
        // allocations (issue 11).
        assert!(Geometry::new(8, 8, 1 << 20, 2).is_err());
        assert!(Geometry::new(usize::MAX, 8, 2, 4).is_err());
        let g = Geometry::new(8, 8, 4, 2).unwrap();
        assert!(g.check_cutoff([10.26; 3], 2.5).is_ok());
        // lj108: cells 1.2825 wide, cutoff 2.5. Cells 3 apart along any axis are at least
        // 2.565 apart; cells (1, 2, 2) apart at least 1.81: only offset 3 is skipped.
        assert_eq!(g.pair_reach([10.2599; 3], 2.5), 0x0002_0AAA);
        // 4,000 atoms (16 cells of 2.137): also every pair of 2-cell offsets (3.02 apart).
        let g = Geometry::new(16, 16, 4, 4).unwrap();
        assert_eq!(g.pair_reach([34.1995; 3], 2.5), 0x0002_05AA);
        // A cutoff the halo just covers (3 cells of 1) skips nothing.
        let g = Geometry::new(8, 8, 4, 2).unwrap();
        assert_eq!(g.pair_reach([8.0; 3], 3.0), 0x0003_FFFF);
        // The minimum-image check: never on lj108's 8 cells, on every axis of 16.
        assert_eq!(g.min_image_checks(), 0);
        assert_eq!(Geometry::new(16, 16, 4, 4).unwrap().min_image_checks(), 7);
        assert_eq!(Geometry::new(15, 14, 2, 5).unwrap().min_image_checks(), 5);
        // The records' image shifts: on axes of 9 cells or more.
        assert_eq!(g.image_shifts(), 0);
        assert_eq!(Geometry::new(16, 16, 4, 4).unwrap().image_shifts(), 7);
        assert_eq!(Geometry::new(9, 8, 2, 4).unwrap().image_shifts(), 1);
        // The atoms' own reach: on 4,000 atoms' cells (2.14 wide), not on lj108's (1.28).
        assert!(!g.atom_reach([10.2599; 3], 2.5));
        assert!(
            Geometry::new(16, 16, 4, 4)
                .unwrap()
                .atom_reach([34.1995; 3], 2.5)
        );
        assert!(
            Geometry::new(16, 16, 4, 4)
                .unwrap()
                .check_cutoff([10.26; 3], 2.5)
                .is_err()
        );
    }
}
