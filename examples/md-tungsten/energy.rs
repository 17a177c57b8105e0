//! The energy check of `mdlj.w` (`mdlj-tables check-energies`): sums the per-PE energy
//! records `miget` reads back (`core.epot`, `core.ekin`, fp32 per frame, order
//! `y x _word`) into one table per run, as the CSL flagship's host does, and compares it
//! with a reference table using the flagship's own comparison and limit
//! ([`crate::md::energies`]); also the device's overflow flags (`core.diag`) and the
//! cycles per timestep from its timestamp records (`core.tstamp`).

use crate::md::device::expected_exchange;
use crate::md::energies::{EnergyRow, compare};
use crate::md::geometry::Geometry;

/// Words of `diag` per PE in `mdlj.w`: overflow flags, atoms owned at the end, most
/// records held, force passes, and the PE's fabric x and y as its coordinate registers
/// (`0x7C46`, `0x7C45`) read them.
pub const DIAG_WORDS: usize = 6;

fn f32_at(words: &[u16], i: usize) -> f64 {
    f64::from(f32::from_bits(
        u32::from(words[2 * i]) | (u32::from(words[2 * i + 1]) << 16),
    ))
}

/// The energy table of a run: frame k's potential (kinetic) energy is the f64 sum over
/// the `npe` PEs of their fp32 `epot[k]` (`ekin[k]`); `every` timesteps per frame.
/// Errors if the records are not `npe` whole arrays of the same length.
pub fn energy_table(
    epot: &[u16],
    ekin: &[u16],
    npe: usize,
    every: u64,
) -> Result<Vec<EnergyRow>, String> {
    if npe == 0 || epot.len() != ekin.len() || !epot.len().is_multiple_of(2 * npe) {
        return Err(format!(
            "{} epot words and {} ekin words are not {npe} PEs' fp32 arrays of one length",
            epot.len(),
            ekin.len()
        ));
    }
    let frames = epot.len() / (2 * npe);
    Ok((0..frames)
        .map(|k| {
            let pot: f64 = (0..npe).map(|p| f32_at(epot, p * frames + k)).sum();
            let kin: f64 = (0..npe).map(|p| f32_at(ekin, p * frames + k)).sum();
            EnergyRow {
                step: k as u64 * every,
                potential: pot,
                kinetic: kin,
                total: pot + kin,
            }
        })
        .collect())
}

/// Checks `diag` (DIAG_WORDS per PE): no overflow flag set and every PE ran the same
/// number of force passes. Returns (atoms owned at the end, most records any PE held,
/// force passes).
pub fn check_diag(diag: &[u16], npe: usize) -> Result<(usize, usize, usize), String> {
    if diag.len() != npe * DIAG_WORDS {
        return Err(format!(
            "{} diag words for {npe} PEs of {DIAG_WORDS}",
            diag.len()
        ));
    }
    let mut atoms = 0;
    let mut most = 0;
    let passes = usize::from(diag[3]);
    for (p, d) in diag.chunks_exact(DIAG_WORDS).enumerate() {
        if d[0] != 0 {
            let what = [
                (1, "more atoms than NLOC"),
                (2, "more records than NMAX"),
                (4, "a block longer than NBUF"),
                (8, "more pairs than NPAIR"),
            ]
            .iter()
            .filter(|(bit, _)| d[0] & bit != 0)
            .map(|(_, w)| *w)
            .collect::<Vec<_>>()
            .join(", ");
            return Err(format!("PE {p} (core order) overflowed: {what}"));
        }
        if usize::from(d[3]) != passes {
            return Err(format!(
                "PE {p} ran {} force passes, PE 0 ran {passes}",
                d[3]
            ));
        }
        atoms += usize::from(d[1]);
        most = most.max(usize::from(d[2]));
    }
    Ok((atoms, most, passes))
}

/// Checks the coordinates every PE of a `w` x `h` core recorded from its row and column
/// ID registers (`diag` words 4 and 5, order `y x _word`): the floorplan puts core PE
/// (px, py) at fabric (px + 1, py + 1), inside the moat ring (`layout.paint`). Returns
/// the PEs checked.
pub fn check_coords(diag: &[u16], w: usize, h: usize) -> Result<usize, String> {
    if diag.len() != w * h * DIAG_WORDS {
        return Err(format!(
            "{} diag words for {w}x{h} PEs of {DIAG_WORDS}",
            diag.len()
        ));
    }
    for py in 0..h {
        for px in 0..w {
            let d = &diag[(py * w + px) * DIAG_WORDS..][..DIAG_WORDS];
            let (x, y) = (usize::from(d[4]), usize::from(d[5]));
            if (x, y) != (px + 1, py + 1) {
                return Err(format!(
                    "core PE ({px}, {py}) read fabric ({x}, {y}) from its coordinate \
                     registers, the floorplan put it at ({}, {})",
                    px + 1,
                    py + 1
                ));
            }
        }
    }
    Ok(w * h)
}

/// Words of `xchg` per PE in `mdlj.w`: the last exchange's 15 halo counts and 9 region
/// starts, in the order of the CSL flagship's exchange oracle.
pub const XCHG_WORDS: usize = 24;

/// The exchange oracle on a run of `mdlj.w`: every PE's `xchg` (order `y x _word` over
/// the core) must be what the CSL flagship's oracle ([`expected_exchange`]) computes
/// from the atoms each cell held at the end (`diag` word 1; the last force pass comes
/// after the last migration, so these are its counts). Returns the PEs checked.
pub fn check_exchange(g: &Geometry, xchg: &[u16], diag: &[u16]) -> Result<usize, String> {
    let (w, h) = (g.width(), g.height());
    if xchg.len() != w * h * XCHG_WORDS || diag.len() != w * h * DIAG_WORDS {
        return Err(format!(
            "{} xchg and {} diag words for {w}x{h} PEs",
            xchg.len(),
            diag.len()
        ));
    }
    let mut owned = vec![0u32; g.nx * g.ny * g.nz()];
    let idx = |x: usize, y: usize, z: usize| (z * g.ny + y) * g.nx + x;
    for py in 0..h {
        for px in 0..w {
            let c = g.cell(px, py);
            owned[idx(c.x, c.y, c.z)] = u32::from(diag[(py * w + px) * DIAG_WORDS + 1]);
        }
    }
    let count = |x: usize, y: usize, z: usize| owned[idx(x, y, z)];
    for py in 0..h {
        for px in 0..w {
            let c = g.cell(px, py);
            let want = expected_exchange(g, &count, c.x, c.y, c.z);
            let got = &xchg[(py * w + px) * XCHG_WORDS..(py * w + px + 1) * XCHG_WORDS];
            if let Some(k) = (0..XCHG_WORDS).find(|&k| u32::from(got[k]) != want[k]) {
                return Err(format!(
                    "PE ({}, {}) (cell {}, {}, {}): exchange word {k} is {}, the oracle says {}",
                    px + 1,
                    py + 1,
                    c.x,
                    c.y,
                    c.z,
                    got[k],
                    want[k]
                ));
            }
        }
    }
    Ok(w * h)
}

/// Cycles per timestep: for each PE the 48-bit timestamp of its last frame minus that
/// of frame 0 (3 words per frame), the slowest PE's, divided by `steps`.
pub fn cycles_per_step(tstamp: &[u16], npe: usize, steps: u64) -> Result<f64, String> {
    if npe == 0 || steps == 0 || !tstamp.len().is_multiple_of(3 * npe) {
        return Err(format!(
            "{} timestamp words are not {npe} PEs' frames of 3 words",
            tstamp.len()
        ));
    }
    let frames = tstamp.len() / (3 * npe);
    let at = |p: usize, k: usize| -> u64 {
        let w = &tstamp[3 * (p * frames + k)..3 * (p * frames + k) + 3];
        u64::from(w[0]) | (u64::from(w[1]) << 16) | (u64::from(w[2]) << 32)
    };
    let span = (0..npe)
        .map(|p| at(p, frames - 1).saturating_sub(at(p, 0)))
        .max()
        .unwrap_or(0);
    Ok(span as f64 / steps as f64)
}

/// The phases of `mdlj.w`'s `prof` record, in its order.
pub const PHASES: [&str; 6] = [
    "halo exchange",
    "pair list and forces",
    "force reduction",
    "integration",
    "migration",
    "barrier",
];

/// Mean cycles per timestep of each phase over the PEs, from `prof` (one u32 per phase
/// per PE, summed over `steps` timesteps).
pub fn phase_means(prof: &[u16], npe: usize, steps: u64) -> Result<Vec<f64>, String> {
    let n = PHASES.len();
    if npe == 0 || steps == 0 || prof.len() != npe * 2 * n {
        return Err(format!(
            "{} prof words are not {npe} PEs' {n} u32 counters",
            prof.len()
        ));
    }
    Ok((0..n)
        .map(|k| {
            let total: f64 = (0..npe)
                .map(|p| {
                    let i = 2 * (p * n + k);
                    f64::from(u32::from(prof[i]) | (u32::from(prof[i + 1]) << 16))
                })
                .sum();
            total / npe as f64 / steps as f64
        })
        .collect())
}

/// Compares a run's table with a reference: the worst `compare` value per column must
/// be at most `limit`. Returns the three values.
pub fn within(got: &[EnergyRow], reference: &[EnergyRow], limit: f64) -> Result<[f64; 3], String> {
    let worst = compare(got, reference)?;
    if worst.iter().all(|&w| w <= limit) {
        Ok(worst)
    } else {
        Err(format!(
            "max|dE|/(1+max|ref|): potential {:.2e}, kinetic {:.2e}, total {:.2e} over the \
             limit {limit:.0e}",
            worst[0], worst[1], worst[2]
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(v: &[f32]) -> Vec<u16> {
        v.iter()
            .flat_map(|x| {
                let b = x.to_bits();
                [b as u16, (b >> 16) as u16]
            })
            .collect()
    }

    #[test]
    fn sums_each_frame_over_the_pes() {
        // Two PEs, three frames: PE p frame k holds (p + 1) * (k + 0.5) (epot), k (ekin).
        let pot: Vec<f32> = (0..2)
            .flat_map(|p| (0..3).map(move |k| (p + 1) as f32 * (k as f32 + 0.5)))
            .collect();
        let kin: Vec<f32> = (0..2).flat_map(|_| (0..3).map(|k| k as f32)).collect();
        let t = energy_table(&words(&pot), &words(&kin), 2, 5).unwrap();
        assert_eq!(t.len(), 3);
        for (k, r) in t.iter().enumerate() {
            assert_eq!(r.step, 5 * k as u64);
            assert_eq!(r.potential, 3.0 * (k as f64 + 0.5));
            assert_eq!(r.kinetic, 2.0 * k as f64);
            assert_eq!(r.total, r.potential + r.kinetic);
        }
        assert!(within(&t, &t, 0.0).is_ok());
        let mut off = t.clone();
        off[1].kinetic += 1.0;
        assert!(within(&off, &t, 1e-5).is_err());
        assert!(energy_table(&words(&pot), &words(&kin[1..]), 2, 1).is_err());
    }

    #[test]
    fn the_exchange_oracle_accepts_its_own_words_and_rejects_a_changed_one() {
        let g = Geometry::new(7, 7, 7, 1).unwrap();
        let (w, h) = (g.width(), g.height());
        let owned = |x: usize, y: usize, z: usize| ((x + 2 * y + 3 * z) % 4) as u32;
        let mut diag = vec![0u16; w * h * DIAG_WORDS];
        let mut xchg = Vec::new();
        for py in 0..h {
            for px in 0..w {
                let c = g.cell(px, py);
                diag[(py * w + px) * DIAG_WORDS + 1] = owned(c.x, c.y, c.z) as u16;
                let e = expected_exchange(&g, &owned, c.x, c.y, c.z);
                xchg.extend(e.iter().map(|&v| v as u16));
            }
        }
        assert_eq!(check_exchange(&g, &xchg, &diag), Ok(w * h));
        // One region start off by one, or one cell's count changed, fails.
        let mut bad = xchg.clone();
        bad[5 * XCHG_WORDS + 20] += 1;
        assert!(
            check_exchange(&g, &bad, &diag)
                .unwrap_err()
                .contains("word 20")
        );
        let mut moved = diag.clone();
        moved[3 * DIAG_WORDS + 1] += 1;
        assert!(check_exchange(&g, &xchg, &moved).is_err());
    }

    #[test]
    fn diag_flags_and_timestamps() {
        let ok = [0, 3, 9, 11, 1, 1, 0, 2, 12, 11, 2, 1];
        assert_eq!(check_diag(&ok, 2), Ok((5, 12, 11)));
        assert_eq!(check_coords(&ok, 2, 1), Ok(2));
        assert!(check_coords(&ok, 1, 2).is_err());
        let mut moved = ok;
        moved[10] = 3;
        assert!(
            check_coords(&moved, 2, 1)
                .unwrap_err()
                .contains("core PE (1, 0) read fabric (3, 1)")
        );
        let bad = [0, 3, 9, 11, 1, 1, 2, 2, 12, 11, 2, 1];
        assert!(check_diag(&bad, 2).unwrap_err().contains("NMAX"));
        let pairs = [8, 3, 9, 11, 1, 1, 0, 2, 12, 11, 2, 1];
        assert!(check_diag(&pairs, 2).unwrap_err().contains("NPAIR"));
        let uneven = [0, 3, 9, 11, 1, 1, 0, 2, 12, 10, 2, 1];
        assert!(check_diag(&uneven, 2).is_err());
        // Two PEs, two frames: 100 -> 1100 and 0x1_0000 -> 0x1_0000 + 2000.
        let ts = [100, 0, 0, 1100, 0, 0, 0, 1, 0, 2000, 1, 0];
        assert_eq!(cycles_per_step(&ts, 2, 10), Ok(200.0));
        // Two PEs, phase 2 holds 0x1_0000 + 10 and 30: mean 32,788 over 2 steps.
        let mut prof = vec![0u16; 24];
        prof[4..6].copy_from_slice(&[10, 1]);
        prof[16] = 30;
        let m = phase_means(&prof, 2, 2).unwrap();
        assert_eq!(m[2], (65_536.0 + 10.0 + 30.0) / 4.0);
        assert_eq!(m[0], 0.0);
    }
}
