//! The tokens of CSL and the logos rules that recognise them.
//!
//! Keywords and punctuation are plain logos patterns. Literals are scanned by small
//! callbacks that also decode them (escapes, digit separators, bases), so the parser only
//! ever sees values. A callback that finds a malformed literal returns a [`LexError`] whose
//! span points at the offending part; [`super::lexer`] turns errors into diagnostics and a
//! stand-in token so that parsing can go on.

pub use crate::lexing::{LexError, LexErrorKind};
use crate::lexing::{LexToken, err_at as error_at};
use logos::{Lexer, Logos};
use std::fmt;

/// What [`LexErrorKind::Unterminated`] says of a string literal with no closing `"` on
/// its line.
pub const STRING_LITERAL: &str = "string literal";
/// What [`LexErrorKind::Unterminated`] says of a character literal with no closing `'`.
pub const CHAR_LITERAL: &str = "character literal";

crate::lexing::token_enum! {
/// One token. Identifier and builtin names borrow from the source text; literal values are
/// decoded.
#[derive(Logos, Clone, Debug, PartialEq)]
#[logos(skip r"[ \t\r\n]+")]
// A comment runs to the end of its line, so the greedy repetition is what we want.
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
#[logos(error = LexError)]
pub enum Token<'a> {
    // ---- literals and names ----
    /// `foo`, `_`, `i16` (type names are ordinary identifiers).
    #[regex(r"[A-Za-z_][A-Za-z0-9_]*", |lex| lex.slice())]
    Ident(&'a str),
    /// `@name`; the payload is the name without `@`.
    #[regex(r"@[A-Za-z_][A-Za-z0-9_]*", |lex| lex.slice().get(1..).unwrap_or(""))]
    Builtin(&'a str),
    /// Integer literal: decimal, `0x`, `0o`, `0b`, with `_` separators.
    #[regex(
        r"[0-9][0-9_]*|0x[0-9a-fA-F_]+|0o[0-7_]+|0b[01_]+",
        lex_int,
        priority = 10
    )]
    Int(u128),
    /// Float literal: `1.0`, `1e-5`, `1.5e3`, hex `0x1.8p3`.
    #[regex(
        r"[0-9][0-9_]*(\.[0-9][0-9_]*)?[eE][+-]?[0-9][0-9_]*|[0-9][0-9_]*\.[0-9][0-9_]*|0x[0-9a-fA-F_]+(\.[0-9a-fA-F_]+)?[pP][+-]?[0-9][0-9_]*|0x[0-9a-fA-F_]+\.[0-9a-fA-F_]+",
        lex_float,
        priority = 10
    )]
    Float(f64),
    /// Anything that starts with a digit but is not a valid number (`0x`, `12abc`,
    /// `1.0f`). Never produced: its callback always fails.
    #[regex(r"[0-9][0-9a-zA-Z_]*(\.[0-9][0-9a-zA-Z_]*)?", bad_number, priority = 1)]
    BadNumber,
    /// Character literal `'a'`, `'\n'`, `'\x0a'`, `'\u{3bb}'` (a `comptime_int`).
    #[token("'", lex_char)]
    Char(u128),
    /// String literal with escapes decoded.
    #[token("\"", lex_string)]
    Str(String),

    // ---- keywords ----
    /// `align`
    #[token("align")]
    Align,
    /// `and`
    #[token("and")]
    And,
    /// `anytype`
    #[token("anytype")]
    Anytype,
    /// `break`
    #[token("break")]
    Break,
    /// `comptime`
    #[token("comptime")]
    Comptime,
    /// `const`
    #[token("const")]
    Const,
    /// `continue`
    #[token("continue")]
    Continue,
    /// `else`
    #[token("else")]
    Else,
    /// `enum`
    #[token("enum")]
    Enum,
    /// `export`
    #[token("export")]
    Export,
    /// `extern`
    #[token("extern")]
    Extern,
    /// `false`
    #[token("false")]
    False,
    /// `fn`
    #[token("fn")]
    Fn,
    /// `for`
    #[token("for")]
    For,
    /// `if`
    #[token("if")]
    If,
    /// `inline`
    #[token("inline")]
    Inline,
    /// `layout`
    #[token("layout")]
    Layout,
    /// `linkname`
    #[token("linkname")]
    Linkname,
    /// `linksection`
    #[token("linksection")]
    Linksection,
    /// `or`
    #[token("or")]
    Or,
    /// `param`
    #[token("param")]
    Param,
    /// `return`
    #[token("return")]
    Return,
    /// `struct`
    #[token("struct")]
    Struct,
    /// `switch`
    #[token("switch")]
    Switch,
    /// `task`
    #[token("task")]
    Task,
    /// `true`
    #[token("true")]
    True,
    /// `var`
    #[token("var")]
    Var,
    /// `while`
    #[token("while")]
    While,

    // ---- brackets (the plain ones come from `+ core`) ----
    /// `[*]`, the many-item pointer prefix (one token, as in Zig).
    #[token("[*]")]
    ManyPtr,

    // ---- punctuation (`, ; : .` come from `+ core` and `+ c_like`) ----
    /// `.*` (dereference; one token).
    #[token(".*")]
    DotStar,
    /// `...` (switch ranges).
    #[token("...")]
    Ellipsis,
    /// `=>`
    #[token("=>")]
    FatArrow,
    /// `->` (tensor access).
    #[token("->")]
    Arrow,

    // ---- compound assignment (the other operators come from `+ core` and `+ c_like`) ----
    /// `+=`
    #[token("+=")]
    PlusAssign,
    /// `-=`
    #[token("-=")]
    MinusAssign,
    /// `*=`
    #[token("*=")]
    StarAssign,
    /// `/=`
    #[token("/=")]
    SlashAssign,
    /// `%=`
    #[token("%=")]
    PercentAssign,
    /// `<<=`
    #[token("<<=")]
    ShlAssign,
    /// `>>=`
    #[token(">>=")]
    ShrAssign,
    /// `&=`
    #[token("&=")]
    AmpAssign,
    /// `|=`
    #[token("|=")]
    PipeAssign,
    /// `^=`
    #[token("^=")]
    CaretAssign,
} + core + c_like
}

impl<'a> LexToken<'a> for Token<'a> {
    /// Comments are skipped by the lexer itself.
    const COMMENT: Option<Self> = None;
    const NUMBER_STAND_IN: Self = Token::Int(0);

    /// A literal of the kind the error spoiled: one bad literal costs one diagnostic.
    fn stand_in(kind: &LexErrorKind) -> Option<Self> {
        Some(match kind {
            LexErrorKind::StrayChar => return None,
            LexErrorKind::Unterminated(CHAR_LITERAL)
            | LexErrorKind::BadChar
            | LexErrorKind::BadEscape { in_char: true } => Token::Char(0),
            LexErrorKind::Unterminated(_) | LexErrorKind::BadEscape { in_char: false } => {
                Token::Str(String::new())
            }
            LexErrorKind::BadNumber(_) => Token::Int(0),
        })
    }
}

impl Token<'_> {
    /// How the token is described in "unexpected ..." messages.
    pub fn describe(&self) -> String {
        match self {
            Token::Ident(name) => format!("identifier '{name}'"),
            Token::Builtin(name) => format!("builtin '@{name}'"),
            Token::Int(_) | Token::BadNumber => "integer literal".to_string(),
            Token::Float(_) => "float literal".to_string(),
            Token::Char(_) => "character literal".to_string(),
            Token::Str(_) => "string literal".to_string(),
            other => format!("token '{other}'"),
        }
    }
}

impl fmt::Display for Token<'_> {
    /// The token as written (literals are shown by kind).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Token::Ident(name) => name,
            Token::Builtin(name) => return write!(f, "@{name}"),
            Token::Int(v) => return write!(f, "{v}"),
            Token::Float(v) => return write!(f, "{v}"),
            Token::Char(_) => "character literal",
            Token::Str(_) => "string literal",
            Token::BadNumber => "number",
            Token::Align => "align",
            Token::And => "and",
            Token::Anytype => "anytype",
            Token::Break => "break",
            Token::Comptime => "comptime",
            Token::Const => "const",
            Token::Continue => "continue",
            Token::Else => "else",
            Token::Enum => "enum",
            Token::Export => "export",
            Token::Extern => "extern",
            Token::False => "false",
            Token::Fn => "fn",
            Token::For => "for",
            Token::If => "if",
            Token::Inline => "inline",
            Token::Layout => "layout",
            Token::Linkname => "linkname",
            Token::Linksection => "linksection",
            Token::Or => "or",
            Token::Param => "param",
            Token::Return => "return",
            Token::Struct => "struct",
            Token::Switch => "switch",
            Token::Task => "task",
            Token::True => "true",
            Token::Var => "var",
            Token::While => "while",
            Token::LParen => "(",
            Token::RParen => ")",
            Token::LBracket => "[",
            Token::RBracket => "]",
            Token::ManyPtr => "[*]",
            Token::LBrace => "{",
            Token::RBrace => "}",
            Token::Comma => ",",
            Token::Semi => ";",
            Token::Colon => ":",
            Token::Dot => ".",
            Token::DotStar => ".*",
            Token::Ellipsis => "...",
            Token::FatArrow => "=>",
            Token::Arrow => "->",
            Token::Plus => "+",
            Token::Minus => "-",
            Token::Star => "*",
            Token::Slash => "/",
            Token::Percent => "%",
            Token::Shl => "<<",
            Token::Shr => ">>",
            Token::Amp => "&",
            Token::Pipe => "|",
            Token::Caret => "^",
            Token::Tilde => "~",
            Token::Bang => "!",
            Token::EqEq => "==",
            Token::NotEq => "!=",
            Token::Lt => "<",
            Token::Le => "<=",
            Token::Gt => ">",
            Token::Ge => ">=",
            Token::Assign => "=",
            Token::PlusAssign => "+=",
            Token::MinusAssign => "-=",
            Token::StarAssign => "*=",
            Token::SlashAssign => "/=",
            Token::PercentAssign => "%=",
            Token::ShlAssign => "<<=",
            Token::ShrAssign => ">>=",
            Token::AmpAssign => "&=",
            Token::PipeAssign => "|=",
            Token::CaretAssign => "^=",
        };
        f.write_str(s)
    }
}

// ---- literal callbacks ----

/// The value of an integer literal (its syntax is already checked by the regex).
fn lex_int<'a>(lex: &mut Lexer<'a, Token<'a>>) -> Result<u128, LexError> {
    let text = lex.slice();
    let (radix, digits) = split_radix(text);
    let digits: String = digits.chars().filter(|&c| c != '_').collect();
    if digits.is_empty() {
        return Err(error_at(
            lex,
            LexErrorKind::BadNumber("missing digits after the base prefix"),
            0,
            text.len(),
        ));
    }
    u128::from_str_radix(&digits, radix).map_err(|_| {
        error_at(
            lex,
            LexErrorKind::BadNumber("integer literal is too large: a literal has at most 128 bits (build larger comptime_int values with `<<` and `*`)"),
            0,
            text.len(),
        )
    })
}

/// Splits off a `0x` / `0o` / `0b` prefix.
fn split_radix(text: &str) -> (u32, &str) {
    if let Some(rest) = text.strip_prefix("0x") {
        (16, rest)
    } else if let Some(rest) = text.strip_prefix("0o") {
        (8, rest)
    } else if let Some(rest) = text.strip_prefix("0b") {
        (2, rest)
    } else {
        (10, text)
    }
}

/// The value of a float literal (syntax already checked by the regex).
fn lex_float<'a>(lex: &mut Lexer<'a, Token<'a>>) -> Result<f64, LexError> {
    let text: String = lex.slice().chars().filter(|&c| c != '_').collect();
    let value = match text.strip_prefix("0x") {
        Some(hex) => hex_float(hex),
        None => text.parse::<f64>().ok(),
    };
    match value {
        Some(v) if v.is_finite() => Ok(v),
        _ => Err(error_at(
            lex,
            LexErrorKind::BadNumber("float literal is out of range"),
            0,
            lex.slice().len(),
        )),
    }
}

/// Parses the part of a hex float after `0x`: `h+[.h+][p[+-]d+]`.
fn hex_float(text: &str) -> Option<f64> {
    let (mantissa, exp) = match text.find(['p', 'P']) {
        Some(i) => (text.get(..i)?, text.get(i + 1..)?.parse::<i32>().ok()?),
        None => (text, 0),
    };
    hex_scaled(mantissa, exp)
}

/// The value of the hex mantissa `h+[.h+]` times 2^`exp` (`None` for a non-hex digit);
/// the hex floats of CSL and of Tungsten share it.
pub(crate) fn hex_scaled(mantissa: &str, exp: i32) -> Option<f64> {
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut value = 0.0f64;
    for c in int_part.chars() {
        value = value * 16.0 + f64::from(c.to_digit(16)?);
    }
    let mut scale = 1.0 / 16.0;
    for c in frac_part.chars() {
        value += f64::from(c.to_digit(16)?) * scale;
        scale /= 16.0;
    }
    Some(value * 2f64.powi(exp))
}

/// Explains why a digit-led word is not a number. Always an error.
fn bad_number<'a>(lex: &mut Lexer<'a, Token<'a>>) -> Result<(), LexError> {
    let text = lex.slice();
    let (radix, digits) = split_radix(text);
    let reason = if digits.is_empty() || digits.starts_with('.') {
        "missing digits after the base prefix"
    } else if digits.contains('.') && radix != 10 {
        "only decimal and hexadecimal floats are allowed"
    } else {
        match radix {
            16 => "invalid digit in hexadecimal literal",
            8 => "invalid digit in octal literal",
            2 => "invalid digit in binary literal",
            _ => "invalid character in number literal",
        }
    };
    Err(error_at(
        lex,
        LexErrorKind::BadNumber(reason),
        0,
        text.len(),
    ))
}

/// Outcome of decoding one escape sequence starting at a backslash.
enum Escape {
    /// A decoded character and the length of the escape in bytes.
    Ok(char, usize),
    /// A malformed escape of the given length in bytes.
    Bad(usize),
}

/// Decodes the escape at the start of `s` (which begins with `\`).
fn escape(s: &str) -> Escape {
    let mut chars = s.chars();
    chars.next(); // the backslash
    let Some(c) = chars.next() else {
        return Escape::Bad(1);
    };
    let simple = match c {
        'n' => Some('\n'),
        't' => Some('\t'),
        'r' => Some('\r'),
        '\\' => Some('\\'),
        '"' => Some('"'),
        '\'' => Some('\''),
        '0' => Some('\0'),
        _ => None,
    };
    if let Some(v) = simple {
        return Escape::Ok(v, 2);
    }
    match c {
        'x' => {
            let hex = s
                .get(2..4)
                .filter(|h| h.chars().all(|c| c.is_ascii_hexdigit()));
            match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                Some(b) => Escape::Ok(char::from(b), 4),
                // Cover `\x` plus whatever hex digits follow.
                None => Escape::Bad(
                    2 + s
                        .get(2..)
                        .map_or(0, |r| r.chars().take_while(char::is_ascii_hexdigit).count()),
                ),
            }
        }
        'u' => {
            let Some(body) = s.get(2..).and_then(|r| r.strip_prefix('{')) else {
                return Escape::Bad(2);
            };
            let Some(close) = body.find('}') else {
                return Escape::Bad(3 + body.chars().take_while(char::is_ascii_hexdigit).count());
            };
            let digits = body.get(..close).unwrap_or("");
            let len = 4 + close;
            if digits.is_empty()
                || digits.len() > 6
                || !digits.chars().all(|c| c.is_ascii_hexdigit())
            {
                return Escape::Bad(len);
            }
            match u32::from_str_radix(digits, 16)
                .ok()
                .and_then(char::from_u32)
            {
                Some(v) => Escape::Ok(v, len),
                None => Escape::Bad(len),
            }
        }
        other => Escape::Bad(1 + other.len_utf8()),
    }
}

/// Scans a string literal after its opening `"`, decoding escapes.
///
/// Stops at the closing quote, or before a newline / the end of input (unterminated).
/// A bad escape is reported after the whole literal is consumed, so lexing resumes after
/// the closing quote.
fn lex_string<'a>(lex: &mut Lexer<'a, Token<'a>>) -> Result<String, LexError> {
    let rest = lex.remainder();
    let mut value = String::new();
    let mut bad: Option<(usize, usize)> = None;
    let mut i = 0;
    loop {
        let Some(c) = rest.get(i..).and_then(|r| r.chars().next()) else {
            lex.bump(i);
            return Err(error_at(
                lex,
                LexErrorKind::Unterminated(STRING_LITERAL),
                0,
                1,
            ));
        };
        match c {
            '"' => {
                lex.bump(i + 1);
                return match bad {
                    Some((s, e)) => Err(error_at(
                        lex,
                        LexErrorKind::BadEscape { in_char: false },
                        s + 1,
                        e + 1,
                    )),
                    None => Ok(value),
                };
            }
            '\n' => {
                lex.bump(i);
                return Err(error_at(
                    lex,
                    LexErrorKind::Unterminated(STRING_LITERAL),
                    0,
                    1,
                ));
            }
            '\\' => {
                match escape(rest.get(i..).unwrap_or("")) {
                    Escape::Ok(v, len) => {
                        value.push(v);
                        i += len;
                    }
                    Escape::Bad(len) => {
                        // Never step over a newline: the literal would swallow the next line.
                        let len = rest.get(i..).map_or(1, |r| clamp_to_line(r, len));
                        bad.get_or_insert((i, i + len));
                        i += len;
                    }
                }
            }
            c => {
                value.push(c);
                i += c.len_utf8();
            }
        }
    }
}

/// Shortens `len` so that `s[..len]` does not include a newline, and never below one byte,
/// always ending on a character boundary.
fn clamp_to_line(s: &str, len: usize) -> usize {
    let mut end = 0;
    for (idx, c) in s.char_indices() {
        if idx >= len || (c == '\n' && idx > 0) {
            break;
        }
        end = idx + c.len_utf8();
    }
    end.max(1)
}

/// Scans a character literal after its opening `'`.
fn lex_char<'a>(lex: &mut Lexer<'a, Token<'a>>) -> Result<u128, LexError> {
    let rest = lex.remainder();
    let Some(first) = rest.chars().next() else {
        return Err(error_at(
            lex,
            LexErrorKind::Unterminated(CHAR_LITERAL),
            0,
            1,
        ));
    };
    let (value, len) = match first {
        '\n' => {
            return Err(error_at(
                lex,
                LexErrorKind::Unterminated(CHAR_LITERAL),
                0,
                1,
            ));
        }
        '\'' => {
            lex.bump(1);
            return Err(error_at(lex, LexErrorKind::BadChar, 0, 2));
        }
        '\\' => match escape(rest) {
            Escape::Ok(v, len) => (Some(v), len),
            Escape::Bad(len) => (None, clamp_to_line(rest, len)),
        },
        c => (Some(c), c.len_utf8()),
    };
    let after = rest.get(len..).unwrap_or("");
    if after.starts_with('\'') {
        lex.bump(len + 1);
        return match value {
            Some(v) => Ok(u128::from(u32::from(v))),
            None => Err(error_at(
                lex,
                LexErrorKind::BadEscape { in_char: true },
                1,
                1 + len,
            )),
        };
    }
    // No closing quote right after one character: `'ab'` (too long) or `'a` (unterminated).
    let line = after.split('\n').next().unwrap_or("");
    match line.find('\'') {
        Some(close) => {
            lex.bump(len + close + 1);
            Err(error_at(lex, LexErrorKind::BadChar, 0, len + close + 2))
        }
        None => {
            lex.bump(len);
            Err(error_at(
                lex,
                LexErrorKind::Unterminated(CHAR_LITERAL),
                0,
                1,
            ))
        }
    }
}

/// Every keyword, as spelled in source. Each lexes as its own token, never as an
/// identifier (checked by a test in `syntax/tests.rs`).
pub const KEYWORDS: &[&str] = &[
    "align",
    "and",
    "anytype",
    "break",
    "comptime",
    "const",
    "continue",
    "else",
    "enum",
    "export",
    "extern",
    "false",
    "fn",
    "for",
    "if",
    "inline",
    "layout",
    "linkname",
    "linksection",
    "or",
    "param",
    "return",
    "struct",
    "switch",
    "task",
    "true",
    "var",
    "while",
];
