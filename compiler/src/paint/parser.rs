//! The generated Paint parser (`grammar/paint.lalrpop`), the cutting of a file into items,
//! and the conversion of lexical and syntax errors into [`Diagnostic`]s.
//!
//! Paint items have no terminator. [`parse`] lexes the whole file ([`lexing::tokenize`]
//! never fails), then cuts the tokens into items: a token that is first on its line starts a new
//! item when the brackets opened since the item's start are all closed, the previous token
//! does not ask for more (`=`, `:`, an operator, `|`, `(`, `[`, `let`, ...) and the token
//! itself cannot continue an expression (`+`, `-`, `*`, `/`, `%`, `:`, `|`, `)`, `]`). A
//! line that starts with `let`, `define` or `include` always starts an item, so an
//! unclosed bracket costs one item. Each item is parsed on its own, so a syntax error
//! costs that item only (and none is reported for an item after a lexical error, which
//! explains it already). An item with more than [`MAX_COMPLEXITY`] operators and open
//! brackets is refused (the evaluator recurses over it). Never panics.

use super::ast::Item;
use super::token::{LexError, Spanned, Token};
use crate::diag::{Diagnostic, codes};
use crate::lexing::{self, Codes};
use crate::source::{FileId, Span};
use lalrpop_util::ParseError;

lexing::generated_parser!(grammar, "/paint.rs");

/// The most operators plus bracket depth one item may have.
pub const MAX_COMPLEXITY: usize = 256;

/// A span in `file`.
pub(crate) fn sp(file: FileId, start: usize, end: usize) -> Span {
    Span::new(file, start, end.max(start))
}

/// Parses one file into items (each with its span) and diagnostics.
pub fn parse(file: FileId, text: &str) -> (Vec<(Item, Span)>, Vec<Diagnostic>) {
    let (tokens, lex_errors) = lexing::tokenize::<Token>(text);
    let mut diags: Vec<Diagnostic> = lex_errors
        .iter()
        .map(|e| lexing::lex_diag(&CODES, file, e))
        .collect();
    let mut items = Vec::new();
    let mut prev_end = 0usize;
    for chunk in chunks(text, &tokens) {
        let Some(first) = chunk.first() else {
            continue;
        };
        let last_end = chunk.last().map_or(first.2, |t| t.2);
        // A lexical error since the previous item already explains what is wrong here.
        let lex_broken = lex_errors
            .iter()
            .any(|l| l.start >= prev_end && l.start <= last_end);
        prev_end = last_end;
        let span = sp(file, first.0, last_end);
        let complexity = complexity(chunk);
        if complexity > MAX_COMPLEXITY {
            diags.push(
                Diagnostic::error(
                    codes::PAINT_TOO_DEEP,
                    "item too complex",
                    sp(file, first.0, first.2),
                    format!("this item has more than {MAX_COMPLEXITY} operators and brackets"),
                )
                .with_help("split it with `let` bindings"),
            );
            continue;
        }
        let input = chunk.iter().cloned().map(Ok::<Spanned<'_>, LexError>);
        match grammar::ItemParser::new().parse(file, input) {
            Ok(item) => items.push((item, span)),
            Err(e) => {
                if lex_broken {
                    continue;
                }
                if let Some(d) = parse_diag(file, text, chunk, e) {
                    diags.push(d);
                }
            }
        }
    }
    (items, diags)
}

/// Whether the token is a binary operator, `=` or `:`: it joins what stands on either side
/// of it, so a line break next to it does not end the item.
fn joins(t: &Token<'_>) -> bool {
    matches!(
        t,
        Token::Assign
            | Token::Colon
            | Token::Plus
            | Token::Minus
            | Token::Star
            | Token::Slash
            | Token::Percent
            | Token::Pipe
    )
}

/// Whether the token asks for more after it (so a line break after it continues the item).
fn wants_more(t: &Token<'_>) -> bool {
    joins(t)
        || matches!(
            t,
            Token::LParen
                | Token::LBracket
                | Token::Call(_)
                | Token::Let
                | Token::Define
                | Token::Include
        )
}

/// Whether the token continues the item when it starts a line.
fn continues(t: &Token<'_>) -> bool {
    joins(t) || matches!(t, Token::RParen | Token::RBracket)
}

/// Cuts the tokens into items (see the module documentation).
fn chunks<'t, 'a>(text: &str, tokens: &'t [Spanned<'a>]) -> Vec<&'t [Spanned<'a>]> {
    let mut out = Vec::new();
    let mut start = 0usize;
    let mut depth = 0usize;
    for (i, (s, t, _)) in tokens.iter().enumerate() {
        if i > start {
            let prev = tokens.get(i - 1);
            let gap = prev.and_then(|p| text.get(p.2..*s)).unwrap_or("");
            let line_start = gap.contains('\n');
            let keyword = matches!(t, Token::Let | Token::Define | Token::Include);
            let split = line_start
                && (keyword
                    || (depth == 0 && !prev.is_some_and(|p| wants_more(&p.1)) && !continues(t)));
            if split {
                if let Some(c) = tokens.get(start..i) {
                    out.push(c);
                }
                start = i;
                depth = 0;
            }
        }
        match t {
            Token::LParen | Token::LBracket | Token::Call(_) => depth += 1,
            Token::RParen | Token::RBracket => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    if let Some(c) = tokens.get(start..)
        && !c.is_empty()
    {
        out.push(c);
    }
    out
}

/// Operators plus the deepest bracket nesting of an item.
fn complexity(chunk: &[Spanned<'_>]) -> usize {
    let mut depth = 0usize;
    let mut max_depth = 0usize;
    let mut ops = 0usize;
    for (_, t, _) in chunk {
        match t {
            Token::LParen | Token::LBracket | Token::Call(_) => {
                depth += 1;
                max_depth = max_depth.max(depth);
            }
            Token::RParen | Token::RBracket => depth = depth.saturating_sub(1),
            Token::Plus | Token::Minus | Token::Star | Token::Slash | Token::Percent => ops += 1,
            _ => {}
        }
    }
    ops + max_depth
}

/// Paint's codes for lexical and syntax errors.
const CODES: Codes = Codes {
    stray_char: codes::PAINT_STRAY_CHAR,
    bad_number: codes::PAINT_BAD_NUMBER,
    unterminated: codes::PAINT_UNTERMINATED,
    unexpected_eof: codes::PAINT_UNEXPECTED_EOF,
    unexpected_token: codes::PAINT_UNEXPECTED_TOKEN,
    stray_note: Some("Paint comments are written `(* ... *)`"),
    describe_expected,
};

/// Describes an `expected` list of terminal names.
fn describe_expected(expected: &[String]) -> String {
    let classes = ["name", "call", "quoted name", "integer", "float", "string"];
    let names = lexing::shown_names(expected, &classes);
    if names.is_empty() {
        return "unexpected here".into();
    }
    if names.iter().any(|n| n == "integer") && names.iter().any(|n| n == "call") {
        let extra: Vec<&String> = names
            .iter()
            .filter(|n| {
                !matches!(
                    n.as_str(),
                    "name"
                        | "call"
                        | "quoted name"
                        | "integer"
                        | "float"
                        | "string"
                        | "'('"
                        | "'['"
                        | "'-'"
                )
            })
            .collect();
        return if extra.is_empty() {
            "expected a value".into()
        } else if extra.len() <= 3 {
            format!(
                "expected a value or {}",
                extra
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        } else {
            "expected a value or an operator".into()
        };
    }
    match names.split_last() {
        Some((only, [])) => format!("expected {only}"),
        Some((last, rest)) => format!("expected {} or {last}", rest.join(", ")),
        None => "unexpected here".into(),
    }
}

fn parse_diag(
    file: FileId,
    text: &str,
    chunk: &[Spanned<'_>],
    e: ParseError<usize, Token<'_>, LexError>,
) -> Option<Diagnostic> {
    let eof = |span, label: String, location: usize| {
        let at_eof = text.get(location..).is_none_or(|r| r.trim().is_empty());
        Diagnostic::error(
            CODES.unexpected_eof,
            if at_eof {
                "unexpected end of file"
            } else {
                "unexpected end of line"
            },
            span,
            format!("{label} after this"),
        )
        .with_note("a Paint item ends at the end of its line unless a bracket is open or the line ends in an operator")
    };
    let unexpected = |s: usize, t: Token<'_>, e: usize, expected: &[String]| {
        let mut d = Diagnostic::error(
            CODES.unexpected_token,
            format!("unexpected {t}"),
            sp(file, s, e),
            describe_expected(expected),
        );
        if matches!(t, Token::Minus) {
            d = d.with_note(
                "arguments are separated by spaces, so an argument cannot start with `-`; write `(-1)`",
            );
        }
        if matches!(t, Token::LParen)
            && let Some((_, Token::Ident(name), pe)) = chunk.iter().rev().find(|x| x.2 <= s)
            && *pe < s
        {
            d = d.with_help(format!(
                "a call is written without a space before `(`: `{name}(...)`"
            ));
        }
        d
    };
    Some(lexing::syntax_diag(
        &CODES, file, text, chunk, e, eof, unexpected,
    ))
}
