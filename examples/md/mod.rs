//! Host side of the molecular-dynamics flagship (`mdlj`): reading LAMMPS dumps, the
//! reference integrator that checks the device's physics, and energy tables.
//!
//! The device program (CSL, one cell per PE) is not written yet; see `examples/md/README.md`.

pub mod dump;
pub mod energies;
pub mod geometry;
pub mod reference;
