//! Syntax: tokens, lexer, parser and the AST.
//!
//! [`parse`] turns source text into an [`ast::Ast`] plus diagnostics; it never fails
//! outright.

pub mod ast;
