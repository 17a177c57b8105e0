//! Lexing and syntax-error plumbing that the CSL, Tungsten and Paint front ends share.
//!
//! * [`LexError`]: a lexical error with its span, the error type of the three logos lexers;
//! * [`err`] and [`err_at`] to make one in a logos callback, and the callbacks the Tungsten
//!   and Paint lexers use for what they spell alike: [`radix_digits`] for integer
//!   literals, [`bad_number`], [`unterminated_string`] and [`block_comment`];
//! * [`tokenize`]: the loop that lexes a whole file without failing, over any token type
//!   that says which of its tokens is a comment and what stands in for a literal an error
//!   spoiled ([`LexToken`]);
//! * [`generated_parser!`]: a lalrpop parser module with the lints its code does not meet
//!   allowed;
//! * [`Codes`], [`lex_diag`] and [`syntax_diag`]: lalrpop errors into [`Diagnostic`]s, with
//!   each front end's codes, wording of expected tokens and hints (Tungsten and Paint; CSL
//!   words its own).

use crate::diag::Diagnostic;
use crate::source::{FileId, Span};
use lalrpop_util::ParseError;
use logos::{Lexer, Logos};
use std::fmt;

/// What went wrong while lexing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum LexErrorKind {
    /// A character that starts no token.
    #[default]
    StrayChar,
    /// A malformed number literal, with the reason.
    BadNumber(&'static str),
    /// A comment or a literal without its end, with what it is.
    Unterminated(&'static str),
    /// A character literal that holds no character or more than one.
    BadChar,
    /// An unknown or malformed escape sequence; `in_char` tells the literal kind.
    BadEscape {
        /// The escape is inside a character literal (not a string).
        in_char: bool,
    },
}

/// A lexical error with its byte span. The [`Default`] value (a stray character with an
/// empty span) is what logos produces for unmatched input; [`tokenize`] fills in the span.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LexError {
    /// What went wrong.
    pub kind: LexErrorKind,
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

/// A token with its byte span, as lalrpop wants it.
pub type Spanned<T> = (usize, T, usize);

/// An error of `kind` at the lexer's current token.
pub fn err<'a, T: Logos<'a>>(lex: &Lexer<'a, T>, kind: LexErrorKind) -> LexError {
    err_at(lex, kind, 0, lex.span().len())
}

/// An error of `kind` covering bytes `start..end` of the lexer's current token.
pub fn err_at<'a, T: Logos<'a>>(
    lex: &Lexer<'a, T>,
    kind: LexErrorKind,
    start: usize,
    end: usize,
) -> LexError {
    let base = lex.span().start;
    LexError {
        kind,
        start: base + start,
        end: base + end,
    }
}

/// The radix and digits of an integer literal (`0x`/`0X`: hexadecimal, else decimal).
pub fn radix_digits(text: &str) -> (u32, &str) {
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(h) => (16, h),
        None => (10, text),
    }
}

/// Logos callback for a digit-led word that is no number (`12abc`, `0x`, `1e+`).
pub fn bad_number<'a, T: Logos<'a, Source = str, Error = LexError>>(
    lex: &mut Lexer<'a, T>,
) -> Result<(), LexError> {
    let text = lex.slice();
    let why = if text.eq_ignore_ascii_case("0x") {
        "missing digits after `0x`"
    } else if text.contains(['E', 'e', 'p', 'P']) && text.contains(['+', '-']) {
        "malformed exponent"
    } else {
        "invalid character in number literal"
    };
    Err(err(lex, LexErrorKind::BadNumber(why)))
}

/// Logos callback for a string without its closing quote.
pub fn unterminated_string<'a, T: Logos<'a, Error = LexError>>(
    lex: &mut Lexer<'a, T>,
) -> Result<(), LexError> {
    Err(err(lex, LexErrorKind::Unterminated("string literal")))
}

/// Skips a block comment whose opening the lexer has just read, up to and including
/// `close`; without one, the rest of the text is skipped and the error names `what`.
/// Comments do not nest.
pub fn block_comment<'a, T: Logos<'a, Source = str, Error = LexError>>(
    lex: &mut Lexer<'a, T>,
    close: &str,
    what: &'static str,
) -> Result<(), LexError> {
    let rest = lex.remainder();
    match rest.find(close) {
        Some(i) => {
            lex.bump(i + close.len());
            Ok(())
        }
        None => {
            let e = err(lex, LexErrorKind::Unterminated(what));
            lex.bump(rest.len());
            Err(e)
        }
    }
}

/// What [`tokenize`] needs to know of a token type.
pub trait LexToken<'a>: Logos<'a, Source = str, Error = LexError> + PartialEq {
    /// The comment token, which [`tokenize`] drops (`None` where the lexer skips comments
    /// itself).
    const COMMENT: Option<Self>;
    /// The token that stands in for a malformed number, so that parsing goes on.
    const NUMBER_STAND_IN: Self;

    /// The token that stands in for the literal an error of `kind` spoiled, if any: by
    /// default [`NUMBER_STAND_IN`](Self::NUMBER_STAND_IN) for a malformed number.
    fn stand_in(kind: &LexErrorKind) -> Option<Self> {
        matches!(kind, LexErrorKind::BadNumber(_)).then_some(Self::NUMBER_STAND_IN)
    }
}

/// Lexes the whole text, never failing: the tokens (comments dropped, a spoiled literal
/// replaced by its [`LexToken::stand_in`], stray characters dropped) and the errors in
/// source order (runs of stray characters merged into one).
pub fn tokenize<'a, T>(text: &'a str) -> (Vec<Spanned<T>>, Vec<LexError>)
where
    T: LexToken<'a>,
    T::Extras: Default,
{
    let mut tokens = Vec::new();
    let mut errors: Vec<LexError> = Vec::new();
    for (result, span) in T::lexer(text).spanned() {
        match result {
            Ok(t) if T::COMMENT.as_ref() == Some(&t) => {}
            Ok(t) => tokens.push((span.start, t, span.end)),
            Err(mut e) => {
                if e.start == e.end {
                    e.start = span.start;
                    e.end = span.end;
                }
                match &e.kind {
                    LexErrorKind::StrayChar => {
                        if let Some(last) = errors.last_mut()
                            && last.kind == LexErrorKind::StrayChar
                            && last.end == e.start
                        {
                            last.end = e.end;
                            continue;
                        }
                    }
                    kind => {
                        if let Some(t) = T::stand_in(kind) {
                            tokens.push((span.start, t, span.end));
                        }
                    }
                }
                errors.push(e);
            }
        }
    }
    (tokens, errors)
}

/// The lalrpop parser generated from `$source` (a path below the build's output
/// directory, as for `lalrpop_mod!`) as module `$name`, with the lints its code does not
/// meet allowed.
macro_rules! generated_parser {
    ($name:ident, $source:literal) => {
        lalrpop_util::lalrpop_mod!(
            #[allow(
                clippy::all,
                clippy::unwrap_used,
                clippy::expect_used,
                clippy::panic,
                clippy::indexing_slicing,
                unused,
                missing_docs
            )]
            $name,
            $source
        );
    };
}
pub(crate) use generated_parser;

/// A logos token enum (the attributes and `enum Token<'a> { ... }` as written, its last
/// variant with a trailing comma) with the tokens the front ends share added after the
/// variants written out: `+ core` adds `( ) [ ] : = |` and `+ - * / %`; `+ c_like` adds
/// `{ } , ; .`, `& ^ ~ !`, the shifts and the comparisons; `+ words` adds `Ident`, plain
/// (escape-free) string literals `Str` and the never-produced error tokens `BadNumber`
/// and `BadStr` (Tungsten and Paint; CSL decodes escapes and has its own).
macro_rules! token_enum {
    ($(#[$($m:tt)*])* $v:vis enum $n:ident<$lt:lifetime> { $($body:tt)* } $(+ $group:ident)*) => {
        $crate::lexing::token_enum!(@add $lt [$(#[$($m)*])* $v enum $n<$lt>] [$($body)*] $($group)*);
    };
    (@add $lt:lifetime $head:tt $body:tt core $($rest:ident)*) => {
        $crate::lexing::token_enum!(@tokens $lt $head $body [$($rest)*]
            "(" LParen ")" RParen "[" LBracket "]" RBracket ":" Colon "=" Assign "|" Pipe
            "+" Plus "-" Minus "*" Star "/" Slash "%" Percent);
    };
    (@add $lt:lifetime $head:tt $body:tt c_like $($rest:ident)*) => {
        $crate::lexing::token_enum!(@tokens $lt $head $body [$($rest)*]
            "{" LBrace "}" RBrace "," Comma ";" Semi "." Dot "&" Amp "^" Caret "~" Tilde
            "!" Bang "<<" Shl ">>" Shr "==" EqEq "!=" NotEq "<" Lt "<=" Le ">" Gt ">=" Ge);
    };
    (@add $lt:lifetime $head:tt [$($body:tt)*] words $($rest:ident)*) => {
        $crate::lexing::token_enum!(@add $lt $head [$($body)*
            /// A name.
            #[regex(r"[A-Za-z_][A-Za-z0-9_]*", |lex| lex.slice())]
            Ident(&$lt str),
            /// A digit-led word that is no number (`12abc`, `0x`). Never produced.
            #[regex(
                r"[0-9][0-9a-zA-Z_]*(\.[0-9a-zA-Z_]*)?",
                $crate::lexing::bad_number,
                priority = 1
            )]
            BadNumber,
            /// A string literal without escapes (`import "f.w";`, `include "f.paint"`).
            #[regex(r#""[^"\n]*""#, |lex| { let s = lex.slice(); s.get(1..s.len() - 1).unwrap_or("") })]
            Str(&$lt str),
            /// A string without its closing quote. Never produced.
            #[regex(r#""[^"\n]*"#, $crate::lexing::unterminated_string)]
            BadStr,
        ] $($rest)*);
    };
    // Each `"text" Name` pair becomes a variant documented as its text.
    (@tokens $lt:lifetime $head:tt [$($body:tt)*] [$($rest:ident)*] $($t:tt $name:ident)*) => {
        $crate::lexing::token_enum!(@add $lt $head
            [$($body)* $(#[doc = concat!("`", $t, "`")] #[token($t)] $name,)*] $($rest)*);
    };
    (@add $lt:lifetime [$($head:tt)*] [$($body:tt)*]) => {
        $($head)* { $($body)* }
    };
}
pub(crate) use token_enum;

/// A front end's diagnostic codes for lexical and syntax errors.
pub struct Codes {
    /// A character that starts no token (also lalrpop's invalid token).
    pub stray_char: &'static str,
    /// A malformed number literal.
    pub bad_number: &'static str,
    /// A comment or string without its end.
    pub unterminated: &'static str,
    /// The input ended in the middle of a construct.
    pub unexpected_eof: &'static str,
    /// An unexpected or extra token.
    pub unexpected_token: &'static str,
    /// A note for stray characters (how comments are written, say).
    pub stray_note: Option<&'static str>,
    /// Words an `expected` list of lalrpop terminal names.
    pub describe_expected: fn(&[String]) -> String,
}

/// The `expected` terminal names of a lalrpop error as a diagnostic shows them: a token
/// class (one of `classes`, such as "identifier") as it is, any other terminal quoted.
pub fn shown_names(expected: &[String], classes: &[&str]) -> Vec<String> {
    expected
        .iter()
        .map(|e| {
            let inner = e.trim_matches('"');
            if classes.contains(&inner) {
                inner.to_string()
            } else {
                format!("'{inner}'")
            }
        })
        .collect()
}

/// The diagnostic for a lexical error.
pub fn lex_diag(codes: &Codes, file: FileId, e: &LexError) -> Diagnostic {
    let span = Span::new(file, e.start, e.end);
    match &e.kind {
        LexErrorKind::StrayChar => {
            let d = Diagnostic::error(
                codes.stray_char,
                "unexpected character",
                span,
                "this starts no token",
            );
            match codes.stray_note {
                Some(n) => d.with_note(n),
                None => d,
            }
        }
        LexErrorKind::BadNumber(why) => {
            Diagnostic::error(codes.bad_number, "malformed number literal", span, *why)
        }
        LexErrorKind::Unterminated(what) => Diagnostic::error(
            codes.unterminated,
            format!("unterminated {what}"),
            span,
            "starts here and never ends",
        ),
        // Only CSL has character literals and escapes, and it words its own diagnostics.
        LexErrorKind::BadChar => Diagnostic::error(
            codes.unterminated,
            "malformed character literal",
            span,
            "a character literal holds exactly one character",
        ),
        LexErrorKind::BadEscape { .. } => Diagnostic::error(
            codes.unterminated,
            "invalid escape sequence",
            span,
            "unknown escape",
        ),
    }
}

/// The diagnostic for a lalrpop error, where `tokens` are the tokens that were parsed. The front end shapes the two errors where it has
/// more to say: `eof(span, label, location)` for an unexpected end, where `span` is the
/// last token before it and `label` says what was expected after it; and
/// `unexpected(start, token, end, expected)` for an unexpected token.
pub fn syntax_diag<T: fmt::Display>(
    codes: &Codes,
    file: FileId,
    text: &str,
    tokens: &[Spanned<T>],
    e: ParseError<usize, T, LexError>,
    eof: impl FnOnce(Span, String, usize) -> Diagnostic,
    unexpected: impl FnOnce(usize, T, usize, &[String]) -> Diagnostic,
) -> Diagnostic {
    match e {
        ParseError::InvalidToken { location } => Diagnostic::error(
            codes.stray_char,
            "invalid token",
            Span::new(file, location, location),
            "not part of any token",
        ),
        ParseError::UnrecognizedEof { location, expected } => {
            let before = tokens.iter().rev().find(|t| t.2 <= location);
            let at = location.min(text.len());
            let span = match before {
                Some((s, _, e)) => Span::new(file, *s, *e),
                None => Span::new(file, at, at),
            };
            eof(span, (codes.describe_expected)(&expected), location)
        }
        ParseError::UnrecognizedToken {
            token: (s, t, e),
            expected,
        } => unexpected(s, t, e, &expected),
        ParseError::ExtraToken { token: (s, t, e) } => Diagnostic::error(
            codes.unexpected_token,
            format!("unexpected {t}"),
            Span::new(file, s, e),
            "extra token",
        ),
        ParseError::User { error } => lex_diag(codes, file, &error),
    }
}
