//! The Paint syntax tree, built by the grammar (`grammar/paint.lalrpop`). Every node
//! carries its span; nodes own their children (the parser bounds nesting depth, so the
//! recursive walks over it stay shallow).

use crate::source::Span;

/// A name with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    /// The name.
    pub name: String,
    /// Where.
    pub span: Span,
}

/// Binary operators (integer or float arithmetic).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (integers: truncating)
    Div,
    /// `%` (integers: the sign of the dividend)
    Rem,
}

impl BinOp {
    /// The spelling.
    pub fn spelling(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
        }
    }
}

/// One element of a bracket list `[ ... ]`.
#[derive(Clone, Debug, PartialEq)]
pub enum BracketItem {
    /// A bare word: a route (`CXR`) or a lone side letter (`R`).
    Word(Ident),
    /// `|`
    Bar(Span),
    /// `NAME:value` (a socket binding or param override in `code()`).
    Bind(Ident, Expr),
}

/// Expression kinds.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// An integer literal.
    Int(i64),
    /// A float literal.
    Float(f64),
    /// A variable or command-line global.
    Name(String),
    /// `'name`
    Quote(String),
    /// `"text"`
    Str(String),
    /// `f(a b c)`: a builtin, an action or a Paint function.
    Call(Ident, Vec<Expr>),
    /// `[ ... ]`
    Bracket(Vec<BracketItem>),
    /// `-e`
    Neg(Box<Expr>),
    /// `a op b`
    Binary(BinOp, Box<Expr>, Box<Expr>),
}

/// An expression with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// What.
    pub kind: ExprKind,
    /// Where.
    pub span: Span,
}

/// One top-level item of a Paint file.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// `let x = e`
    Let(Ident, Expr),
    /// `define f(a b) = e`
    Define {
        /// The function's name.
        name: Ident,
        /// Its parameters.
        params: Vec<Ident>,
        /// Its body.
        body: Expr,
    },
    /// `include "f.paint"`
    Include(String, Span),
    /// `R : action(...)`
    Action {
        /// The region.
        region: Expr,
        /// The action call.
        action: Expr,
    },
    /// A bare expression: the layout if it is the file's last, or an action call
    /// `paint(R c [...])`.
    Expr(Expr),
}
