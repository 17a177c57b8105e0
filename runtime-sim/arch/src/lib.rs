//! `csl-arch`: the single definition of every fact that both the compiler (`cslc`) and the
//! fabric simulator (`cslsim`) rely on.
//!
//! * [`fabric`]: hardware constants per architecture (memory size, colours, task-id ranges,
//!   memory-mapped registers, reserved resources).
//! * [`alu`]: scalar arithmetic semantics (the simulator executes it, the compiler folds
//!   constants with it).
//! * [`isa`]: the PE instruction set as one declarative table ([`for_each_op!`]) that the
//!   encoder, decoder and disassembler (here) expand. The simulator's interpreter is a
//!   hand-written exhaustive `match` on [`Op`] (`runtime-sim/src/exec.rs`), and the
//!   compiler's instruction selection produces a subset of the opcodes.
//! * [`dsd`]: the in-memory DSD descriptor layout (written by [`dsd::Desc::encode`]) and the
//!   DSD operation table.
//! * [`image`]: the compiled image (an ELF file) and its manifest types.
//! * [`routes`]: the interned colour configuration of an image and its binary section.
//! * [`lines`]: the line table of a program class (instruction → `file:line`), one image
//!   section per class.
//! * [`symmap`]: the symbol map of named regions that `paint` writes and `miset`/`miget`
//!   read.
//! * [`tables`]: the 16-bit words of the router and switch tables that host programs
//!   write by name (`miset symbol=router`/`switch`) and `miget` reads back.
//! * [`suggest`]: "did you mean" suggestions for misspelt names (compiler diagnostics and
//!   the simulator's tools).
//!
//! Architecture invariant: this crate depends on nothing of the compiler or the simulator.

pub mod alu;
pub mod dsd;
pub mod fabric;
pub mod image;
pub mod isa;
pub mod lines;
pub mod routes;
pub mod suggest;
pub mod symmap;
pub mod tables;

pub use fabric::Arch;
pub use isa::{BinOp, CmpOp, DecodeError, NumTy, Op, Reg, UnOp, Width};
