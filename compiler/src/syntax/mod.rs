//! Syntax: tokens, lexer, parser and the AST.
//!
//! [`parse`] turns source text into an [`ast::Ast`] plus diagnostics; it never fails
//! outright.

pub mod ast;
pub mod lexer;
pub mod parser;
pub mod token;

#[cfg(test)]
mod tests;

use crate::diag::Diagnostic;
use crate::source::FileId;

/// Lexes and parses one file. Never panics and never fails: syntax errors become
/// diagnostics and `Error` nodes in the AST.
pub fn parse(file: FileId, text: &str) -> (ast::Ast, Vec<Diagnostic>) {
    parser::parse(file, text)
}
