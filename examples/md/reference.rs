//! The reference integrator: O(N²) velocity Verlet for U(r) = 0.1·r⁻¹² with a hard,
//! unshifted cutoff, minimum-image periodic boundaries, unit masses. Generic over the
//! float type so the same code gives an f64 oracle and an f32 model of the device's
//! rounding.

use super::dump::Dump;
use super::energies::EnergyRow;

/// Floating-point operations the integrator needs.
pub trait Real:
    Copy
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
{
    /// From f64.
    fn of(v: f64) -> Self;
    /// To f64.
    fn to(self) -> f64;
    /// Round to the nearest integer.
    fn round(self) -> Self;
}

impl Real for f64 {
    fn of(v: f64) -> Self {
        v
    }
    fn to(self) -> f64 {
        self
    }
    fn round(self) -> Self {
        f64::round(self)
    }
}

impl Real for f32 {
    fn of(v: f64) -> Self {
        v as f32
    }
    fn to(self) -> f64 {
        f64::from(self)
    }
    fn round(self) -> Self {
        f32::round(self)
    }
}

/// Integrator settings.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// Time step.
    pub dt: f64,
    /// Cutoff radius.
    pub rcut: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            dt: 0.001,
            rcut: 2.5,
        }
    }
}

/// Positions, velocities and box of a simulation in precision `T`.
pub struct System<T: Real> {
    pos: Vec<[T; 3]>,
    vel: Vec<[T; 3]>,
    force: Vec<[T; 3]>,
    boxl: [T; 3],
    potential: T,
}

impl<T: Real> System<T> {
    /// Loads a dump.
    pub fn from_dump(d: &Dump) -> System<T> {
        let b = d.box_len();
        System {
            pos: d.atoms.iter().map(|a| a.pos.map(T::of)).collect(),
            vel: d.atoms.iter().map(|a| a.vel.map(T::of)).collect(),
            force: vec![[T::of(0.0); 3]; d.atoms.len()],
            boxl: b.map(T::of),
            potential: T::of(0.0),
        }
    }

    /// Recomputes forces and the potential energy.
    fn forces(&mut self, p: &Params) {
        let zero = T::of(0.0);
        let rc2 = T::of(p.rcut * p.rcut);
        let n = self.pos.len();
        self.force.iter_mut().for_each(|f| *f = [zero; 3]);
        let mut u = zero;
        for i in 0..n {
            for j in i + 1..n {
                let d: [T; 3] = std::array::from_fn(|k| {
                    let dk = self.pos[i][k] - self.pos[j][k];
                    dk - self.boxl[k] * (dk / self.boxl[k]).round()
                });
                let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                if r2 < rc2 {
                    let ir2 = T::of(1.0) / r2;
                    let ir6 = ir2 * ir2 * ir2;
                    let ir12 = ir6 * ir6;
                    u = u + T::of(0.1) * ir12;
                    let f = T::of(1.2) * ir12 * ir2;
                    for (k, dk) in d.iter().enumerate() {
                        self.force[i][k] = self.force[i][k] + f * *dk;
                        self.force[j][k] = self.force[j][k] - f * *dk;
                    }
                }
            }
        }
        self.potential = u;
    }

    /// Positions (not wrapped into the box), in input order.
    pub fn positions(&self) -> &[[T; 3]] {
        &self.pos
    }

    /// Velocities, in input order.
    pub fn velocities(&self) -> &[[T; 3]] {
        &self.vel
    }

    fn kinetic(&self) -> T {
        let mut k = T::of(0.0);
        for v in &self.vel {
            k = k + v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
        }
        T::of(0.5) * k
    }

    fn row(&self, step: u64) -> EnergyRow {
        let (p, k) = (self.potential.to(), self.kinetic().to());
        EnergyRow {
            step,
            potential: p,
            kinetic: k,
            total: p + k,
        }
    }

    /// Runs `steps` velocity-Verlet steps and returns the energies at steps 0..=steps.
    pub fn run(&mut self, steps: u64, p: &Params) -> Vec<EnergyRow> {
        let half = T::of(0.5 * p.dt);
        let dt = T::of(p.dt);
        self.forces(p);
        let mut rows = vec![self.row(0)];
        for s in 1..=steps {
            for (v, f) in self.vel.iter_mut().zip(&self.force) {
                for k in 0..3 {
                    v[k] = v[k] + half * f[k];
                }
            }
            for (x, v) in self.pos.iter_mut().zip(&self.vel) {
                for k in 0..3 {
                    x[k] = x[k] + dt * v[k];
                }
            }
            self.forces(p);
            for (v, f) in self.vel.iter_mut().zip(&self.force) {
                for k in 0..3 {
                    v[k] = v[k] + half * f[k];
                }
            }
            rows.push(self.row(s));
        }
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::md::energies;

    /// The errors (potential, kinetic, total) of 10 steps of lj108 with `T` and `p`
    /// against the shared reference.
    fn errors<T: Real>(p: &Params) -> [f64; 3] {
        let reference = energies::parse(include_str!("data/lj108_10.tsv")).unwrap();
        let d = Dump::parse(include_str!("data/lj108.dump")).unwrap();
        let rows = System::<T>::from_dump(&d).run(10, p);
        energies::compare(&rows, &reference).unwrap()
    }

    #[test]
    fn f64_integrator_reproduces_the_shared_reference() {
        let err = errors::<f64>(&Params::default());
        assert!(err.iter().all(|&e| e < 1e-12), "{err:?}");
    }

    #[test]
    fn f32_integrator_passes_the_check_with_room() {
        let err = errors::<f32>(&Params::default());
        assert!(err.iter().all(|&e| e < 1e-5), "{err:?}");
    }

    #[test]
    fn a_wrong_cutoff_fails_the_check() {
        let err = errors::<f64>(&Params {
            dt: 0.001,
            rcut: 2.0,
        });
        assert!(err.iter().any(|&e| e > 1e-5), "{err:?}");
    }
}
