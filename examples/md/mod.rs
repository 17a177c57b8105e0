//! Host side of the molecular-dynamics flagship (`mdlj`): reading LAMMPS dumps, the
//! reference integrator that checks the device's physics, and energy tables.
//!
//! The device program is `md.csl` (one cell per PE) with `layout.csl`; `device.rs` runs it.

pub mod device;
pub mod dump;
pub mod energies;
pub mod generate;
pub mod geometry;
pub mod reference;
pub mod rings;
pub mod switch;
