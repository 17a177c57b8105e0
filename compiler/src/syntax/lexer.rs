//! The error-tolerant tokenizer the parser uses: [`crate::lexing::tokenize`] over the CSL
//! [`Token`]s. lalrpop stops at the first lexer error, so [`tokenize`] collects every token
//! and every error up front, replacing each malformed literal with a stand-in token of the
//! right kind ([`Token`]'s [`LexToken::stand_in`](crate::lexing::LexToken::stand_in)) so
//! that one bad literal costs one diagnostic. Runs of stray characters are merged into one
//! error.

use super::token::{LexError, Token};
use crate::lexing;

/// A token with its byte span, as lalrpop wants it.
pub type Spanned<'a> = lexing::Spanned<Token<'a>>;

/// Lexes the whole text, never failing: returns the tokens (malformed literals replaced by
/// stand-ins, stray characters dropped) and the errors in source order.
pub fn tokenize(text: &str) -> (Vec<Spanned<'_>>, Vec<LexError>) {
    lexing::tokenize(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::token::{CHAR_LITERAL, LexErrorKind, STRING_LITERAL};

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
                kind: LexErrorKind::Unterminated(STRING_LITERAL),
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
        assert_eq!(errs("'a")[0].kind, LexErrorKind::Unterminated(CHAR_LITERAL));
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
        assert_eq!(
            errs("\"abc\\")[0].kind,
            LexErrorKind::Unterminated(STRING_LITERAL)
        );
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
}
