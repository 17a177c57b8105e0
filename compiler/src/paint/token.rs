//! The tokens of Paint (`.paint`) and the logos rules that recognise them.
//!
//! A call is a name written directly before `(` (`rect(`, `union(`): that is one token,
//! [`Token::Call`], so that `x (y)` inside an argument list is two arguments while `x(y)`
//! is a call. `'prog` (a quoted name, as in `code('relay ...)`) is one token, and so is a
//! `"string"` (only `include` uses one). `(* ... *)` comments do not nest.
//! [`lexing::tokenize`] never fails: malformed numbers become stand-in tokens and errors are collected.

use crate::lexing::{self, LexToken, err};
use logos::{Lexer, Logos};
use std::fmt;

pub use crate::lexing::{LexError, LexErrorKind};

lexing::token_enum! {
/// One token.
#[derive(Logos, Clone, Debug, PartialEq)]
#[logos(skip r"[ \t\r\n\f]+")]
#[logos(error = LexError)]
pub enum Token<'a> {
    /// A name directly followed by `(`: the start of a call. The payload is the name.
    #[regex(r"[A-Za-z_][A-Za-z0-9_]*\(", |lex| { let s = lex.slice(); s.get(..s.len() - 1).unwrap_or("") })]
    Call(&'a str),
    /// `'name`: a quoted name (a program in `code()`, a region name in `name()`).
    #[regex(r"'[A-Za-z_][A-Za-z0-9_]*", |lex| lex.slice().get(1..).unwrap_or(""))]
    Quote(&'a str),
    /// Integer literal (decimal or `0x`).
    #[regex(r"[0-9]+|0[xX][0-9a-fA-F]+", lex_int, priority = 10)]
    Int(i64),
    /// Float literal `1.5`, `2.5e-3`, `1e3`.
    #[regex(
        r"[0-9]+\.[0-9]+([eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+",
        lex_float,
        priority = 10
    )]
    Float(f64),
    /// `(* ... *)` (skipped by [`lexing::tokenize`]).
    #[token("(*", |lex| lexing::block_comment(lex, "*)", "comment"))]
    Comment,

    /// `let`
    #[token("let")]
    Let,
    /// `define`
    #[token("define")]
    Define,
    /// `include`
    #[token("include")]
    Include,
} + core + words
}

fn lex_int<'a>(lex: &mut Lexer<'a, Token<'a>>) -> Result<i64, LexError> {
    let (radix, digits) = lexing::radix_digits(lex.slice());
    i64::from_str_radix(digits, radix).map_err(|_| {
        err(
            lex,
            LexErrorKind::BadNumber("integer literal is too large (the limit is 2^63 - 1)"),
        )
    })
}

fn lex_float<'a>(lex: &mut Lexer<'a, Token<'a>>) -> Result<f64, LexError> {
    match lex.slice().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(err(
            lex,
            LexErrorKind::BadNumber("float literal is out of range"),
        )),
    }
}

/// A token with its byte span, as lalrpop wants it.
pub type Spanned<'a> = lexing::Spanned<Token<'a>>;

impl<'a> LexToken<'a> for Token<'a> {
    const COMMENT: Option<Self> = Some(Token::Comment);
    const NUMBER_STAND_IN: Self = Token::Int(0);
}

impl fmt::Display for Token<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Token::Ident(s) => write!(f, "name `{s}`"),
            Token::Call(s) => write!(f, "call `{s}(`"),
            Token::Quote(s) => write!(f, "`'{s}`"),
            Token::Int(v) => write!(f, "integer `{v}`"),
            Token::Float(v) => write!(f, "float `{v}`"),
            Token::Str(s) => write!(f, "string \"{s}\""),
            other => write!(f, "`{}`", spelling(other)),
        }
    }
}

/// The fixed spelling of a punctuation or keyword token.
pub fn spelling(t: &Token<'_>) -> &'static str {
    match t {
        Token::Let => "let",
        Token::Define => "define",
        Token::Include => "include",
        Token::LParen => "(",
        Token::RParen => ")",
        Token::LBracket => "[",
        Token::RBracket => "]",
        Token::Colon => ":",
        Token::Assign => "=",
        Token::Pipe => "|",
        Token::Plus => "+",
        Token::Minus => "-",
        Token::Star => "*",
        Token::Slash => "/",
        Token::Percent => "%",
        _ => "?",
    }
}
