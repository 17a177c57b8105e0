//! The tokens of Tungsten (`.w`) and the logos rules that recognise them.
//!
//! Number literals are decoded by callbacks; a malformed one becomes a [`LexError`] and
//! [`lexing::tokenize`] replaces it with a stand-in token so that parsing goes on. The `:TYPE`
//! suffix of a typed literal (`1.0:hp`) is its own token ([`Token::TypeSuffix`], written
//! without spaces), so that `c ? a : b` keeps its plain `:`. `∞`/`INF`, `∀`/`forall` and
//! the arrow operators `<-` and `<+-` are single tokens.

use super::types::Scalar;
use crate::lexing::{self, LexToken, err};
use logos::{Lexer, Logos};
use std::fmt;

pub use crate::lexing::{LexError, LexErrorKind};

/// A float literal: its value and whether it was written with an exponent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FloatLit {
    /// The value.
    pub value: f64,
    /// Written with `e` or `p` (then it is always `sp` and takes no suffix).
    pub exponent: bool,
    /// The bits of the `sp` nearest to the written value, rounded once from the text (the
    /// f64 `value` rounded again to f32 could differ by one step).
    pub sp: u32,
}

lexing::token_enum! {
/// One token.
#[derive(Logos, Clone, Debug, PartialEq)]
#[logos(skip r"[ \t\r\n\f]+")]
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
#[logos(error = LexError)]
pub enum Token<'a> {
    /// Integer literal (decimal or `0x`).
    #[regex(r"[0-9]+|0[xX][0-9a-fA-F]+", lex_int, priority = 10)]
    Int(u128),
    /// Float literal `1.0`, `2.5e-3`, `1e3`, hex `0x1.8p3`.
    #[regex(
        r"[0-9]+\.[0-9]+([eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+|0[xX][0-9a-fA-F]+(\.[0-9a-fA-F]+)?[pP][+-]?[0-9]+",
        lex_float,
        priority = 10
    )]
    Float(FloatLit),
    /// `/* ... */` (skipped by [`lexing::tokenize`]).
    #[token("/*", |lex| lexing::block_comment(lex, "*/", "block comment"))]
    Comment,
    /// `#pragma ...` to the end of the line; the payload is the text after `#pragma`.
    #[regex(r"#pragma[^\n]*", |lex| lex.slice().get(7..).unwrap_or("").trim(), allow_greedy = true)]
    Pragma(&'a str),
    /// `:sp`, `:u32`, ...: the type suffix of a typed literal.
    #[token(":sp", |_| Scalar::Sp)]
    #[token(":hp", |_| Scalar::Hp)]
    #[token(":xp", |_| Scalar::Xp)]
    #[token(":u16", |_| Scalar::U16)]
    #[token(":s16", |_| Scalar::S16)]
    #[token(":u32", |_| Scalar::U32)]
    #[token(":s32", |_| Scalar::S32)]
    #[token(":u64", |_| Scalar::U64)]
    #[token(":wv", |_| Scalar::Wv)]
    TypeSuffix(Scalar),
    /// A scalar type keyword.
    #[token("sp", |_| Scalar::Sp)]
    #[token("hp", |_| Scalar::Hp)]
    #[token("xp", |_| Scalar::Xp)]
    #[token("u16", |_| Scalar::U16)]
    #[token("s16", |_| Scalar::S16)]
    #[token("u32", |_| Scalar::U32)]
    #[token("s32", |_| Scalar::S32)]
    #[token("u64", |_| Scalar::U64)]
    #[token("wv", |_| Scalar::Wv)]
    Type(Scalar),

    /// `socket`
    #[token("socket")]
    Socket,
    /// `param`
    #[token("param")]
    Param,
    /// `extern`
    #[token("extern")]
    Extern,
    /// `union`
    #[token("union")]
    Union,
    /// `struct`
    #[token("struct")]
    Struct,
    /// `let`
    #[token("let")]
    Let,
    /// `in`
    #[token("in")]
    In,
    /// `forever`
    #[token("forever")]
    Forever,
    /// `dispatch`
    #[token("dispatch")]
    Dispatch,
    /// `wavelet`
    #[token("wavelet")]
    Wavelet,
    /// `parallel`
    #[token("parallel")]
    Parallel,
    /// `if`
    #[token("if")]
    If,
    /// `else`
    #[token("else")]
    Else,
    /// `flip`
    #[token("flip")]
    Flip,
    /// `control`
    #[token("control")]
    Control,
    /// `address`
    #[token("address")]
    Address,
    /// `bitcast`
    #[token("bitcast")]
    Bitcast,
    /// `reinterpret`
    #[token("reinterpret")]
    Reinterpret,
    /// `round`
    #[token("round")]
    Round,
    /// `min`
    #[token("min")]
    Min,
    /// `max`
    #[token("max")]
    Max,
    /// `∞` or `INF`
    #[token("∞")]
    #[token("INF")]
    Inf,
    /// `NAN`
    #[token("NAN")]
    Nan,
    /// `∀` or `forall`
    #[token("∀")]
    #[token("forall")]
    Forall,
    /// `import`
    #[token("import")]
    Import,
    /// `return`
    #[token("return")]
    Return,

    /// `?`
    #[token("?")]
    Question,
    /// `->`
    #[token("->")]
    Arrow,
    /// `<-`
    #[token("<-")]
    LArrow,
    /// `<+-`
    #[token("<+-")]
    AccArrow,
    /// `&&`
    #[token("&&")]
    AndAnd,
    /// `||`
    #[token("||")]
    OrOr,
} + core + c_like + words
}

fn lex_int<'a>(lex: &mut Lexer<'a, Token<'a>>) -> Result<u128, LexError> {
    let (radix, digits) = lexing::radix_digits(lex.slice());
    u128::from_str_radix(digits, radix)
        .ok()
        .filter(|&v| v < 1u128 << 64)
        .ok_or_else(|| {
            err(
                lex,
                LexErrorKind::BadNumber("integer literal is too large (the limit is 2^64 - 1)"),
            )
        })
}

fn lex_float<'a>(lex: &mut Lexer<'a, Token<'a>>) -> Result<FloatLit, LexError> {
    let text = lex.slice();
    let hex = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X"));
    let exponent = match hex {
        Some(_) => true,
        None => text.contains(['e', 'E']),
    };
    if hex.map_or(text.contains('E'), |h| h.contains('P')) {
        return Err(err(
            lex,
            LexErrorKind::BadNumber(
                "exponent markers are lower case: write `e` (or `p` in a hex float)",
            ),
        ));
    }
    let value = match hex {
        Some(h) => hex_float(h),
        None => text.parse::<f64>().ok(),
    };
    let sp = match hex {
        // A hex float's digits are exact in f64 (up to 13 of them), so one rounding.
        Some(_) => value.map(|v| (v as f32).to_bits()),
        None => text.parse::<f32>().ok().map(f32::to_bits),
    };
    match (value, sp) {
        (Some(value), Some(sp)) if value.is_finite() => Ok(FloatLit {
            value,
            exponent,
            sp,
        }),
        _ => Err(err(
            lex,
            LexErrorKind::BadNumber("float literal is out of range"),
        )),
    }
}

/// Parses the part of a hex float after `0x`: `h+[.h+]p[+-]d+`.
fn hex_float(text: &str) -> Option<f64> {
    let i = text.find(['p', 'P'])?;
    let (mantissa, exp) = (text.get(..i)?, text.get(i + 1..)?.parse::<i32>().ok()?);
    crate::syntax::token::hex_scaled(mantissa, exp.clamp(-2000, 2000))
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
            Token::Ident(s) => write!(f, "identifier `{s}`"),
            Token::Int(v) => write!(f, "integer literal `{v}`"),
            Token::Float(v) => write!(f, "float literal `{}`", v.value),
            Token::Str(s) => write!(f, "string \"{s}\""),
            Token::Pragma(_) => f.write_str("`#pragma`"),
            Token::TypeSuffix(t) => write!(f, "`:{}`", t.name()),
            Token::Type(t) => write!(f, "`{}`", t.name()),
            other => write!(f, "`{}`", spelling(other)),
        }
    }
}

/// The fixed spelling of a punctuation or keyword token.
pub fn spelling(t: &Token<'_>) -> &'static str {
    match t {
        Token::Socket => "socket",
        Token::Param => "param",
        Token::Extern => "extern",
        Token::Union => "union",
        Token::Struct => "struct",
        Token::Let => "let",
        Token::In => "in",
        Token::Forever => "forever",
        Token::Dispatch => "dispatch",
        Token::Wavelet => "wavelet",
        Token::Parallel => "parallel",
        Token::If => "if",
        Token::Else => "else",
        Token::Flip => "flip",
        Token::Control => "control",
        Token::Address => "address",
        Token::Bitcast => "bitcast",
        Token::Reinterpret => "reinterpret",
        Token::Round => "round",
        Token::Min => "min",
        Token::Max => "max",
        Token::Inf => "∞",
        Token::Nan => "NAN",
        Token::Forall => "∀",
        Token::Import => "import",
        Token::Return => "return",
        Token::LParen => "(",
        Token::RParen => ")",
        Token::LBracket => "[",
        Token::RBracket => "]",
        Token::LBrace => "{",
        Token::RBrace => "}",
        Token::Comma => ",",
        Token::Semi => ";",
        Token::Colon => ":",
        Token::Question => "?",
        Token::Dot => ".",
        Token::Arrow => "->",
        Token::LArrow => "<-",
        Token::AccArrow => "<+-",
        Token::Assign => "=",
        Token::Plus => "+",
        Token::Minus => "-",
        Token::Star => "*",
        Token::Slash => "/",
        Token::Percent => "%",
        Token::Amp => "&",
        Token::Pipe => "|",
        Token::Caret => "^",
        Token::Tilde => "~",
        Token::Bang => "!",
        Token::Shl => "<<",
        Token::Shr => ">>",
        Token::EqEq => "==",
        Token::NotEq => "!=",
        Token::Lt => "<",
        Token::Le => "<=",
        Token::Gt => ">",
        Token::Ge => ">=",
        Token::AndAnd => "&&",
        Token::OrOr => "||",
        _ => "?",
    }
}

/// Every keyword that is not a type name, as spelled in source, with one line on what it
/// does (editors show it). Each lexes as its own token, never as a name (checked by a test
/// in `tests.rs`).
pub const KEYWORDS: &[(&str, &str)] = &[
    (
        "socket",
        "`socket a, b;` declares sockets; socket i uses input queue i and output queue i",
    ),
    (
        "param",
        "`T param NAME = value;` a compile-time constant that Paint's `code()` may override",
    ),
    (
        "extern",
        "`extern T name[..] address(..);` an alias that `miset` and `miget` reach by name",
    ),
    (
        "union",
        "`union NAME { ... };` fields sharing one place in memory; `union NAME x;` declares one",
    ),
    (
        "struct",
        "`struct NAME { ... };` fields laid out in order, in 16-bit words",
    ),
    (
        "let",
        "`let i in [0, N);` names a range for later `∀i` loops",
    ),
    (
        "in",
        "`i in [a, b) S` runs S for each i from a up to b (excluded)",
    ),
    ("forever", "`forever S` repeats S without end"),
    (
        "dispatch",
        "`forever dispatch(s) { wavelet(T v) { ... } }` runs the arm once per wavelet arriving on s",
    ),
    (
        "wavelet",
        "the arm of a dispatch that runs for each data wavelet; `wavelet(T v)` binds its value",
    ),
    (
        "parallel",
        "`parallel { ... }` runs the socket statements in it concurrently and waits for all",
    ),
    ("if", "`if (c) S else S`"),
    ("else", "`if (c) S else S`"),
    (
        "flip",
        "`flip tx[];` directly after a send: its last wavelet advances the tile's own input switch",
    ),
    (
        "control",
        "`tx[] <- control(w);` sends w as a control wavelet (eight 3-bit commands and a task id)",
    ),
    (
        "address",
        "`T name[1] address(0x7C45);` places a variable at a fixed address (hardware registers)",
    ),
    ("bitcast", "`bitcast(T, e)` reads the bits of e as type T"),
    (
        "reinterpret",
        "`reinterpret(T, e)` reads the bits of e as type T",
    ),
    (
        "round",
        "`round(x, mode)` rounds in the given mode; `round(x, 1)` truncates as C does",
    ),
    ("min", "`min(a, b)` the smaller of a and b"),
    ("max", "`max(a, b)` the larger of a and b"),
    (
        "INF",
        "infinity, as a range bound (`[0, INF)`) or a float value; also written `∞`",
    ),
    ("NAN", "a quiet not-a-number float value"),
    (
        "forall",
        "`∀i S` (or `forall i S`) runs S over the range `let` gave i, with no loop-carried dependence",
    ),
    (
        "import",
        "`import \"f.w\";` includes a file once (its directory first, then the library directories)",
    ),
    (
        "return",
        "`return e;` leaves a function with a value (`return;` in a void function)",
    ),
];
