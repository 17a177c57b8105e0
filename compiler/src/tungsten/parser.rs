//! The generated Tungsten parser (`grammar/tungsten.lalrpop`) and the conversion of lexical
//! and syntax errors into [`Diagnostic`]s.
//!
//! [`parse`] lexes the whole file first ([`lexing::tokenize`] never fails), cuts the token
//! stream off where brackets nest deeper than [`MAX_NESTING`] (so the recursive walks over
//! the tree stay within the stack), then runs the parser, which recovers at item and
//! statement boundaries. Never panics.

use super::ast::Item;
use super::token::{LexError, Spanned, Token, spelling};
use crate::diag::{Diagnostic, codes};
use crate::lexing::{self, Codes};
use crate::source::{FileId, Span};
use lalrpop_util::{ErrorRecovery, ParseError};

lexing::generated_parser!(grammar, "/tungsten.rs");

/// The deepest bracket nesting accepted.
pub const MAX_NESTING: usize = 200;

/// A span in `file`.
pub(crate) fn sp(file: FileId, start: usize, end: usize) -> Span {
    Span::new(file, start, end)
}

/// Parses one file into items and diagnostics.
pub fn parse(file: FileId, text: &str) -> (Vec<Item>, Vec<Diagnostic>) {
    let (mut tokens, lex_errors) = lexing::tokenize::<Token>(text);
    let mut diags: Vec<Diagnostic> = lex_errors
        .iter()
        .map(|e| lexing::lex_diag(&CODES, file, e))
        .collect();
    // Bound the nesting depth: open brackets plus, per bracket level, the operators,
    // `if`s and loop heads since the last `;` or `,` of that level.
    let mut chains: Vec<usize> = vec![0];
    let mut total = 0usize;
    let mut cut = None;
    for (i, (s, t, e)) in tokens.iter().enumerate() {
        match t {
            Token::LParen | Token::LBracket | Token::LBrace => {
                chains.push(0);
                total += 1;
            }
            Token::RParen | Token::RBracket | Token::RBrace => {
                if chains.len() > 1 {
                    let c = chains.pop().unwrap_or(0);
                    total = total.saturating_sub(c + 1);
                }
            }
            Token::Semi | Token::Comma => {
                if let Some(c) = chains.last_mut() {
                    total = total.saturating_sub(*c);
                    *c = 0;
                }
            }
            Token::Ident(_)
            | Token::Int(_)
            | Token::Float(_)
            | Token::Type(_)
            | Token::TypeSuffix(_)
            | Token::Str(_)
            | Token::Pragma(_) => {}
            _ => {
                if let Some(c) = chains.last_mut() {
                    *c += 1;
                    total += 1;
                }
            }
        }
        if total > MAX_NESTING {
            diags.push(
                Diagnostic::error(
                    codes::TUNG_TOO_DEEP,
                    "nesting too deep",
                    sp(file, *s, *e),
                    format!("more than {MAX_NESTING} levels of brackets and operators"),
                )
                .with_note("the rest of the file is not parsed"),
            );
            cut = Some(i);
            break;
        }
    }
    if let Some(i) = cut {
        tokens.truncate(i);
    }
    let mut recovered: Vec<ErrorRecovery<usize, Token<'_>, LexError>> = Vec::new();
    let input = tokens.iter().cloned().map(Ok::<Spanned<'_>, LexError>);
    let result = grammar::FileParser::new().parse(file, &mut recovered, input);
    let mut errors: Vec<ParseError<usize, Token<'_>, LexError>> =
        recovered.into_iter().map(|r| r.error).collect();
    let items = match result {
        Ok(items) => items,
        Err(e) => {
            errors.push(e);
            Vec::new()
        }
    };
    let mut last_start: Option<usize> = None;
    for e in errors {
        // The input cut off for nesting ends early; that is reported already.
        if cut.is_some() && matches!(e, ParseError::UnrecognizedEof { .. }) {
            continue;
        }
        let Some(d) = parse_diag(file, text, &tokens, e) else {
            continue;
        };
        let start = d.primary.as_ref().map(|l| l.span.start as usize);
        // One report per place; errors right behind a lexical error are its consequence.
        if start.is_some() && start == last_start {
            continue;
        }
        if let Some(s) = start
            && lex_errors.iter().any(|l| l.end <= s && s <= l.end + 1)
        {
            continue;
        }
        last_start = start;
        diags.push(d);
    }
    (items, diags)
}

/// Tungsten's codes for lexical and syntax errors.
const CODES: Codes = Codes {
    stray_char: codes::TUNG_STRAY_CHAR,
    bad_number: codes::TUNG_BAD_NUMBER,
    unterminated: codes::TUNG_UNTERMINATED,
    unexpected_eof: codes::TUNG_UNEXPECTED_EOF,
    unexpected_token: codes::TUNG_UNEXPECTED_TOKEN,
    stray_note: None,
    describe_expected,
};

/// Describes an `expected` list of terminal names.
fn describe_expected(expected: &[String]) -> String {
    let classes = [
        "identifier",
        "integer literal",
        "float literal",
        "string literal",
        "pragma",
        "type suffix",
        "type",
    ];
    let names = lexing::shown_names(expected, &classes);
    if names.is_empty() {
        return "unexpected here".into();
    }
    if names.len() > 6 {
        let starts_expr = names.iter().any(|n| n == "integer literal");
        return if starts_expr {
            "expected an expression or statement".into()
        } else {
            format!("expected one of {} and more", names[..5].join(", "))
        };
    }
    match names.len() {
        1 => format!("expected {}", names[0]),
        _ => {
            let (last, rest) = names
                .split_last()
                .map_or((String::new(), &[][..]), |(l, r)| (l.clone(), r));
            format!("expected {} or {last}", rest.join(", "))
        }
    }
}

fn parse_diag(
    file: FileId,
    text: &str,
    tokens: &[Spanned<'_>],
    e: ParseError<usize, Token<'_>, LexError>,
) -> Option<Diagnostic> {
    let eof = |span, label: String, _| {
        Diagnostic::error(
            CODES.unexpected_eof,
            "unexpected end of file",
            span,
            format!("{label} after this"),
        )
    };
    let unexpected = |s: usize, t: Token<'_>, e: usize, expected: &[String]| {
        let label = describe_expected(expected);
        let missing_semi = expected.iter().any(|x| x == "\";\"")
            && text.get(..s).is_some_and(|b| {
                b.trim_end_matches([' ', '\t', '\r']).ends_with('\n')
                    || b.trim_end().len() < b.len() && b[b.trim_end().len()..].contains('\n')
            });
        if missing_semi && let Some((ps, _, pe)) = tokens.iter().rev().find(|x| x.2 <= s) {
            return Diagnostic::error(
                CODES.unexpected_token,
                "missing ';'",
                sp(file, *ps, *pe),
                "expected ';' after this",
            )
            .with_note(format!("the next line starts with {t}"));
        }
        let mut d = Diagnostic::error(
            CODES.unexpected_token,
            format!("unexpected {t}"),
            sp(file, s, e),
            label,
        );
        let c_type = |t: &Token<'_>| matches!(t, Token::Ident(n) if matches!(*n, "float" | "int" | "double" | "short" | "unsigned" | "char" | "long" | "bool"));
        let before = tokens.iter().rev().find(|x| x.2 <= s).map(|x| &x.1);
        if c_type(&t) || before.is_some_and(c_type) {
            d = d.with_help("Tungsten's types are sp, hp, xp, s16, u16, s32, u32");
        }
        if matches!(t, Token::Colon) {
            d = d.with_note(format!(
                "a typed literal is written without spaces, as in `1.0:hp`; `{}` alone is the ternary's",
                spelling(&Token::Colon)
            ));
        }
        d
    };
    Some(lexing::syntax_diag(
        &CODES, file, text, tokens, e, eof, unexpected,
    ))
}
