//! `cslsim`: the fabric simulator and host runtime for images compiled by `cslc`.
//!
//! * [`host`]: [`SdkRuntime`], the Rust mirror of the vendor host API (load, launch,
//!   memcpy) — the usual entry point.
//! * [`sim`]: [`Simulator`], the program rectangle of PEs and routers and the global clock.
//! * [`router`]: one PE's router (routes, switches, filters, colour swap, teardown).
//! * [`pe`]: one PE's state; `ce`: its per-cycle behaviour (task picker, microthreads);
//!   `decode` (instructions pre-decoded at load), `exec` and [`alu`]: the interpreter;
//!   `dsd`: the DSD engine.
//! * [`class`]: program classes checked and prepared for execution.
//! * [`params`]: [`SimParams`], the modelling parameters (SIMULATOR.md).
//! * [`error`]: [`SimError`] (faults, routing errors, deadlocks, the cycle limit).
//! * [`dist`]: distributed runs (strips of rows per rank; MPI with the `mpi` feature).
//! * `par`: the threads of the step ([`default_threads`], `CSLSIM_THREADS`).
//! * [`trace`]: instruction and wavelet traces; [`mod@bench`]: synthetic workloads.
//! * [`perfetto`]: timelines for ui.perfetto.dev (`--perfetto`); [`heatmap`]: PNG pictures
//!   of per-PE activity and link use (`--heatmap`).
//!
//! Architecture invariant: this crate depends on `csl-arch`, never on the compiler.

pub use csl_arch::alu;
pub mod bench;
mod ce;
pub mod class;
mod decode;
pub mod dist;
mod dsd;
pub mod error;
mod exec;
pub mod heatmap;
pub mod host;
pub mod mem;
#[cfg(feature = "mpi")]
pub mod mpi;
mod par;
pub mod params;
pub mod pe;
pub mod perfetto;
mod ring;
pub mod router;
pub mod sim;
mod stats;
pub mod tools;
pub mod trace;
mod worklist;

pub use error::{
    FaultKind, PeLoc, RoutingError, SimError, Stuck, StuckPlace, StuckWhy, WaitOn, WaitReason,
    Waiting, WriteError,
};
pub use host::{
    DEFAULT_MAX_CYCLES, HostError, MEMCPY_BOUNDS_ENV, MemcpyDataType, MemcpyOrder, Region,
    SdkRuntime, Transfer,
};
pub use par::{THREADS_ENV, default_threads};
pub use params::{SimParams, TIMING_ENV, Timing};
pub use pe::Pe;
pub use perfetto::{PeRect, PerfettoConfig};
pub use router::Router;
pub use sim::{PeStats, RunEnd, RunStats, Simulator};
pub use trace::{TraceFilter, Tracer};
