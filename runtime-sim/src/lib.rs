//! `cslsim`: the fabric simulator and host runtime for images compiled by `cslc`.
//!
//! * [`host`]: [`SdkRuntime`], the Rust mirror of the vendor host API (load, launch,
//!   memcpy) — the usual entry point.
//! * [`sim`]: [`Simulator`], the program rectangle of PEs and the global clock.
//! * [`pe`]: one PE's state and the task picker; `exec` and [`alu`]: the interpreter.
//! * [`class`]: program classes checked and prepared for execution.
//! * [`error`]: [`SimError`] (faults, deadlocks, the cycle limit).
//!
//! Architecture invariant: this crate depends on `csl-arch`, never on the compiler.

pub mod alu;
pub mod class;
pub mod error;
mod exec;
pub mod host;
pub mod pe;
pub mod sim;

pub use error::{FaultKind, PeLoc, SimError, WaitReason, Waiting};
pub use host::{DEFAULT_MAX_CYCLES, HostError, MemcpyDataType, MemcpyOrder, SdkRuntime};
pub use pe::Pe;
pub use sim::{PeStats, RunEnd, RunStats, Simulator};
