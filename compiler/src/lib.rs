//! `cslc`: the CSL compiler as a library.
//!
//! Pipeline: [`syntax`] (lex + parse into an AST with spans) → [`sema`] (name resolution,
//! type checking and comptime evaluation, including the layout block, producing a fabric
//! plan and one [`ir::Program`] per distinct (file, params) pair) → [`opt`] (IR → faster IR,
//! unless `-O0`) → [`codegen`] (IR → PE
//! instructions, memory placement) → a [`csl_arch::image::Image`]. [`link`] is the layer
//! below both front ends (program classes, fabric plan, image), and [`fabric_check`] the
//! static route checks it runs on every image; [`driver`] strings the CSL phases together.
//!
//! Architecture invariant: every phase reports problems as [`diag::Diagnostic`] values and
//! never panics on user input; [`driver::compile_file`] always returns, with or without an
//! image.

pub mod codegen;
pub mod diag;
pub mod driver;
pub mod fabric_check;
pub mod ir;
pub mod lexing;
pub mod link;
pub mod opt;
pub mod paint;
pub mod sdklayout;
pub mod sema;
pub mod source;
pub mod stdlib;
pub mod suggest;
pub mod symbol;
pub mod syntax;
pub mod tungsten;

pub use diag::Diagnostic;
pub use driver::{Compilation, Options, compile_file};
pub use source::{FileId, SourceMap, Span};
