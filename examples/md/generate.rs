//! Input generators for larger runs: periodic replicas of a dump (same density, and the
//! energies scale exactly with the number of copies, which makes an independent check),
//! and a face-centred cubic lattice with Maxwell–Boltzmann velocities.

use super::dump::{Atom, Dump};

/// The dump repeated `k` times along each axis (k³ copies, ids renumbered copy by copy).
pub fn replicate(d: &Dump, k: usize) -> Dump {
    let b = d.box_len();
    let n = d.atoms.len() as u32;
    let mut atoms = Vec::with_capacity(d.atoms.len() * k * k * k);
    let mut copy = 0u32;
    for i in 0..k {
        for j in 0..k {
            for l in 0..k {
                let shift = [i as f64 * b[0], j as f64 * b[1], l as f64 * b[2]];
                atoms.extend(d.atoms.iter().map(|a| Atom {
                    id: a.id + copy * n,
                    typ: a.typ,
                    pos: [
                        a.pos[0] + shift[0],
                        a.pos[1] + shift[1],
                        a.pos[2] + shift[2],
                    ],
                    vel: a.vel,
                }));
                copy += 1;
            }
        }
    }
    let kf = k as f64;
    Dump {
        timestep: d.timestep,
        lo: d.lo,
        hi: [
            d.lo[0] + kf * b[0],
            d.lo[1] + kf * b[1],
            d.lo[2] + kf * b[2],
        ],
        atoms,
    }
}

/// The input generator's random numbers ([`SplitMix64`](crate::SplitMix64)).
struct Rng(crate::SplitMix64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0.next_f64()
    }

    /// A standard normal deviate (Box–Muller).
    fn normal(&mut self) -> f64 {
        let u = self.next().max(f64::MIN_POSITIVE);
        let v = self.next();
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// An fcc lattice of `cells`³ unit cells (4·cells³ atoms, type 1) at number density
/// `density`, velocities drawn at temperature `temperature` (unit masses) with the total
/// momentum removed.
pub fn fcc(cells: usize, density: f64, temperature: f64, seed: u64) -> Dump {
    let n = 4 * cells * cells * cells;
    let side = (n as f64 / density).cbrt();
    let a = side / cells as f64;
    let basis = [
        [0.0, 0.0, 0.0],
        [0.5, 0.5, 0.0],
        [0.5, 0.0, 0.5],
        [0.0, 0.5, 0.5],
    ];
    let mut rng = Rng(crate::SplitMix64(seed));
    let mut atoms = Vec::with_capacity(n);
    for i in 0..cells {
        for j in 0..cells {
            for k in 0..cells {
                for off in &basis {
                    let s = temperature.sqrt();
                    atoms.push(Atom {
                        id: atoms.len() as u32 + 1,
                        typ: 1,
                        pos: [
                            (i as f64 + off[0] + 0.25) * a,
                            (j as f64 + off[1] + 0.25) * a,
                            (k as f64 + off[2] + 0.25) * a,
                        ],
                        vel: [s * rng.normal(), s * rng.normal(), s * rng.normal()],
                    });
                }
            }
        }
    }
    for k in 0..3 {
        let mean = atoms.iter().map(|a| a.vel[k]).sum::<f64>() / n as f64;
        for at in &mut atoms {
            at.vel[k] -= mean;
        }
    }
    Dump {
        timestep: 0,
        lo: [0.0; 3],
        hi: [side; 3],
        atoms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replicas_keep_the_density_and_fcc_has_the_asked_density() {
        let d = fcc(3, 0.1, 1.0, 7);
        assert_eq!(d.atoms.len(), 108);
        let b = d.box_len();
        assert!((108.0 / (b[0] * b[1] * b[2]) - 0.1).abs() < 1e-12);
        let r = replicate(&d, 2);
        assert_eq!(r.atoms.len(), 864);
        let rb = r.box_len();
        assert!((864.0 / (rb[0] * rb[1] * rb[2]) - 0.1).abs() < 1e-12);
        let mut ids: Vec<u32> = r.atoms.iter().map(|a| a.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), 864);
        let p: f64 = d.atoms.iter().map(|a| a.vel[0]).sum();
        assert!(p.abs() < 1e-9);
    }
}
