//! `cslc`: the CSL compiler as a library.
//!
//! Pipeline: [`syntax`] (lex + parse into an AST with spans) → [`sema`] (name resolution,
//! type checking and comptime evaluation, including the layout block, producing a fabric
//! plan and one IR program per distinct (file, params) pair) → [`codegen`] (IR → PE
//! instructions, memory placement) → an [`csl_arch::image::Image`].
//!
//! Architecture invariant: every phase reports problems as [`diag::Diagnostic`] values and
//! never panics on user input; [`compile`] always returns, with or without an image.

pub mod diag;
pub mod source;
pub mod syntax;

pub use diag::Diagnostic;
pub use source::{FileId, SourceMap, Span};
