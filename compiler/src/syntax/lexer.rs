//! Adapter from logos to lalrpop, plus the error-tolerant tokenizer the parser uses.
//!
//! [`Lexer`] is the plain adapter: an iterator of `Result<(start, Token, end), LexError>`
//! in the shape lalrpop expects from an external lexer. The parser does not feed it to
//! lalrpop directly, because lalrpop stops at the first lexer error. Instead [`tokenize`]
//! collects every token and every error up front, replacing each malformed literal with a
//! stand-in token of the right kind so that one bad literal costs one diagnostic.
//! Runs of stray characters are merged into one error.

use super::token::{LexError, LexErrorKind, Token};
use logos::{Logos, SpannedIter};

/// A token with its byte span, as lalrpop wants it.
pub type Spanned<'a> = (usize, Token<'a>, usize);

/// The logos lexer as an iterator of spanned tokens or errors.
pub struct Lexer<'a> {
    inner: SpannedIter<'a, Token<'a>>,
}

impl<'a> Lexer<'a> {
    /// Lexes `text`.
    pub fn new(text: &'a str) -> Lexer<'a> {
        Lexer {
            inner: Token::lexer(text).spanned(),
        }
    }
}

impl<'a> Iterator for Lexer<'a> {
    type Item = Result<Spanned<'a>, LexError>;

    fn next(&mut self) -> Option<Self::Item> {
        let (result, span) = self.inner.next()?;
        Some(match result {
            Ok(token) => Ok((span.start, token, span.end)),
            Err(mut error) => {
                // logos' default error has no span of its own.
                if error.start == error.end {
                    error.start = span.start;
                    error.end = span.end;
                }
                Err(error)
            }
        })
    }
}

/// Lexes the whole text, never failing: returns the tokens (malformed literals replaced by
/// stand-ins, stray characters dropped) and the errors in source order.
pub fn tokenize(text: &str) -> (Vec<Spanned<'_>>, Vec<LexError>) {
    let mut tokens = Vec::new();
    let mut errors: Vec<LexError> = Vec::new();
    for (result, span) in Token::lexer(text).spanned() {
        let error = match result {
            Ok(token) => {
                tokens.push((span.start, token, span.end));
                continue;
            }
            Err(error) => error,
        };
        let stand_in = match error.kind {
            LexErrorKind::StrayChar => {
                // Merge with an adjacent stray character.
                if let Some(last) = errors.last_mut()
                    && last.kind == LexErrorKind::StrayChar
                    && last.end == span.start
                {
                    last.end = span.end;
                } else {
                    errors.push(LexError {
                        kind: LexErrorKind::StrayChar,
                        start: span.start,
                        end: span.end,
                    });
                }
                continue;
            }
            LexErrorKind::UnterminatedString | LexErrorKind::BadEscape { in_char: false } => {
                Token::Str(String::new())
            }
            LexErrorKind::UnterminatedChar
            | LexErrorKind::BadChar
            | LexErrorKind::BadEscape { in_char: true } => Token::Char(0),
            LexErrorKind::BadNumber(_) => Token::Int(0),
        };
        tokens.push((span.start, stand_in, span.end));
        errors.push(error);
    }
    (tokens, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(text: &str) -> Vec<Token<'_>> {
        let (tokens, errors) = tokenize(text);
        assert!(
            errors.is_empty(),
            "unexpected errors {errors:?} for {text:?}"
        );
        tokens.into_iter().map(|(_, t, _)| t).collect()
    }

    fn errs(text: &str) -> Vec<LexError> {
        tokenize(text).1
    }

    #[test]
    fn keywords_idents_and_builtins() {
        assert_eq!(
            toks("const x_1 = @import_module(constx); // comment\n"),
            vec![
                Token::Const,
                Token::Ident("x_1"),
                Token::Assign,
                Token::Builtin("import_module"),
                Token::LParen,
                Token::Ident("constx"),
                Token::RParen,
                Token::Semi,
            ]
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(
            toks("0 42 1_000 0x1F 0b1010 0o17 1.5 1e-5 1.5e3 0x1.8p1 2E+2"),
            vec![
                Token::Int(0),
                Token::Int(42),
                Token::Int(1000),
                Token::Int(31),
                Token::Int(10),
                Token::Int(15),
                Token::Float(1.5),
                Token::Float(1e-5),
                Token::Float(1500.0),
                Token::Float(3.0),
                Token::Float(200.0),
            ]
        );
        // `0x1e-5` is hex 0x1e minus 5, not a float.
        assert_eq!(
            toks("0x1e-5"),
            vec![Token::Int(30), Token::Minus, Token::Int(5)]
        );
        // Ranges and field access after numbers.
        assert_eq!(
            toks("1...5"),
            vec![Token::Int(1), Token::Ellipsis, Token::Int(5)]
        );
    }

    #[test]
    fn bad_numbers() {
        for text in [
            "0x",
            "12abc",
            "0b102",
            "1.0f",
            "0o9",
            "999999999999999999999999999999999999999999",
        ] {
            let e = errs(text);
            assert_eq!(e.len(), 1, "{text}");
            assert!(
                matches!(e[0].kind, LexErrorKind::BadNumber(_)),
                "{text}: {e:?}"
            );
            assert_eq!((e[0].start, e[0].end), (0, text.len()), "{text}");
        }
        // The stand-in keeps the parser going.
        assert_eq!(tokenize("x = 0x;").0.len(), 4);
    }

    #[test]
    fn punctuation() {
        assert_eq!(
            toks("a.* [*]T .{ } => -> ... <<= >>= |i|"),
            vec![
                Token::Ident("a"),
                Token::DotStar,
                Token::ManyPtr,
                Token::Ident("T"),
                Token::Dot,
                Token::LBrace,
                Token::RBrace,
                Token::FatArrow,
                Token::Arrow,
                Token::Ellipsis,
                Token::ShlAssign,
                Token::ShrAssign,
                Token::Pipe,
                Token::Ident("i"),
                Token::Pipe,
            ]
        );
    }

    #[test]
    fn strings_and_chars() {
        assert_eq!(
            toks(r#""a\n\t\"\\\x41\u{3bb}" 'a' '\n' '\x0a' '\u{3bb}' '\''"#),
            vec![
                Token::Str("a\n\t\"\\A\u{3bb}".to_string()),
                Token::Char(97),
                Token::Char(10),
                Token::Char(10),
                Token::Char(0x3bb),
                Token::Char(39),
            ]
        );
        assert_eq!(toks(r#""λ""#), vec![Token::Str("λ".to_string())]);
    }

    #[test]
    fn string_errors() {
        let e = errs("x = \"abc\ny");
        assert_eq!(
            e,
            vec![LexError {
                kind: LexErrorKind::UnterminatedString,
                start: 4,
                end: 5
            }]
        );
        let e = errs(r#"x = "a\qb";"#);
        assert_eq!(
            e,
            vec![LexError {
                kind: LexErrorKind::BadEscape { in_char: false },
                start: 6,
                end: 8
            }]
        );
        let e = errs(r"'\z'");
        assert_eq!(
            e,
            vec![LexError {
                kind: LexErrorKind::BadEscape { in_char: true },
                start: 1,
                end: 3
            }]
        );
        assert_eq!(errs("'a")[0].kind, LexErrorKind::UnterminatedChar);
        assert_eq!(errs("''")[0].kind, LexErrorKind::BadChar);
        assert_eq!(errs("'ab'")[0].kind, LexErrorKind::BadChar);
        assert_eq!(
            errs("\"\\x4\"")[0].kind,
            LexErrorKind::BadEscape { in_char: false }
        );
        assert_eq!(
            errs("\"\\u{110000}\"")[0].kind,
            LexErrorKind::BadEscape { in_char: false }
        );
        assert_eq!(errs("\"abc\\")[0].kind, LexErrorKind::UnterminatedString);
    }

    #[test]
    fn stray_characters_are_merged() {
        let (tokens, e) = tokenize("a $$ b # λ");
        assert_eq!(tokens.len(), 2);
        assert_eq!(
            e,
            vec![
                LexError {
                    kind: LexErrorKind::StrayChar,
                    start: 2,
                    end: 4
                },
                LexError {
                    kind: LexErrorKind::StrayChar,
                    start: 7,
                    end: 8
                },
                LexError {
                    kind: LexErrorKind::StrayChar,
                    start: 9,
                    end: 11
                },
            ]
        );
    }

    #[test]
    fn adapter_reports_errors_with_spans() {
        let items: Vec<_> = Lexer::new("a $ b").collect();
        assert_eq!(items.len(), 3);
        assert_eq!(
            items[1],
            Err(LexError {
                kind: LexErrorKind::StrayChar,
                start: 2,
                end: 3
            })
        );
    }
}
