//! The Tungsten syntax tree, built by the grammar (`grammar/tungsten.lalrpop`). Every node
//! carries its span; nodes own their children (the parser bounds nesting depth, so the
//! recursive walks over it stay shallow).

use super::types::Scalar;
use crate::source::Span;

/// A name with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    /// The name.
    pub name: String,
    /// Where.
    pub span: Span,
}

/// A written type.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeKind {
    /// `sp`, `xp`, ...
    Scalar(Scalar),
    /// `union NAME`
    Union(Ident),
    /// `struct NAME`
    Struct(Ident),
}

/// A written type with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeRef {
    /// What.
    pub kind: TypeKind,
    /// Where.
    pub span: Span,
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `-`
    Neg,
    /// `!`
    Not,
    /// `~`
    BitNot,
    /// `&` (only in `address(&a + k)`)
    AddrOf,
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum BinOp {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
    Shl,
    Shr,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    BitAnd,
    BitXor,
    BitOr,
    And,
    Or,
}

impl BinOp {
    /// The spelling.
    pub fn spelling(self) -> &'static str {
        match self {
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::BitAnd => "&",
            BinOp::BitXor => "^",
            BinOp::BitOr => "|",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }
}

/// An expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// What.
    pub kind: ExprKind,
    /// Where.
    pub span: Span,
}

/// The kinds of expressions.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// An integer literal.
    Int(u128),
    /// A float literal (`exponent`: written with `e`/`p`).
    Float {
        /// Value.
        value: f64,
        /// Written with an exponent.
        exponent: bool,
        /// The nearest `sp`, rounded once from the text.
        sp: u32,
    },
    /// `e:T` (only valid on a literal).
    Typed(Box<Expr>, Scalar, Span),
    /// `∞`
    Inf,
    /// `NAN`
    Nan,
    /// A name.
    Name(Ident),
    /// `a[i]`, or `s[]` (a socket read) when the index is missing.
    Index(Box<Expr>, Option<Box<Expr>>),
    /// `a.f`
    Member(Box<Expr>, Ident),
    /// `f(args)`
    Call(Ident, Vec<Expr>),
    /// A unary operation.
    Unary(UnOp, Box<Expr>),
    /// A binary operation.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `c ? a : b`
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `(T)e`
    Cast(TypeRef, Box<Expr>),
    /// `min(a, b)`
    Min(Box<Expr>, Box<Expr>),
    /// `max(a, b)`
    Max(Box<Expr>, Box<Expr>),
    /// `round(x, mode)`
    Round(Box<Expr>, Box<Expr>),
    /// `bitcast(T, e)` / `reinterpret(T, e)`
    Bitcast(TypeRef, Box<Expr>),
    /// `control(w)` (only as the value of a send)
    Control(Box<Expr>),
    /// A placeholder after a syntax error.
    Error,
}

/// One dimension of an array declaration: `[8]` or `[n=8]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Dim {
    /// The `n` of `[n=8]`.
    pub name: Option<Ident>,
    /// The length.
    pub len: Expr,
}

/// An initialiser.
#[derive(Clone, Debug, PartialEq)]
pub enum Init {
    /// `= e`
    Expr(Expr),
    /// `= {a, b, ...}` (nested braces flattened)
    List(Vec<Expr>, Span),
}

/// A variable declaration (file scope or local).
#[derive(Clone, Debug, PartialEq)]
pub struct VarDecl {
    /// `extern`
    pub is_extern: bool,
    /// `param`
    pub is_param: bool,
    /// Element type.
    pub ty: TypeRef,
    /// Name.
    pub name: Ident,
    /// Array dimensions, outermost first.
    pub dims: Vec<Dim>,
    /// `address(e)`
    pub address: Option<Expr>,
    /// Initialiser.
    pub init: Option<Init>,
    /// The whole declaration.
    pub span: Span,
}

/// A range `[lo, hi)` or `[lo, hi]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Range {
    /// Start.
    pub lo: Expr,
    /// End (`ExprKind::Inf` for `∞`).
    pub hi: Expr,
    /// `]`: the end is included.
    pub closed: bool,
}

/// The head of a loop statement.
#[derive(Clone, Debug, PartialEq)]
pub enum LoopHead {
    /// `i in [a, b)`
    In(Ident, Box<Range>),
    /// `∀i`
    Forall(Ident),
    /// `forever`
    Forever,
}

/// An arm of `forever dispatch(s) { ... }`.
#[derive(Clone, Debug, PartialEq)]
pub enum Arm {
    /// `wavelet(T v) { ... }` (type and name optional).
    Wavelet(Option<(TypeRef, Ident)>, Vec<Stmt>, Span),
    /// `control() { ... }`
    Control(Vec<Stmt>, Span),
}

/// Assignment forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssignOp {
    /// `<-` or `=`
    Set,
    /// `<+-`
    Acc,
}

/// A statement.
#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    /// What.
    pub kind: StmtKind,
    /// Where.
    pub span: Span,
}

/// The kinds of statements.
#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// A declaration.
    Decl(VarDecl),
    /// `lhs <- rhs;`, `lhs = rhs;`, `lhs <+- rhs;`
    Assign(Expr, AssignOp, Expr),
    /// `e;`
    Expr(Expr),
    /// `{ ... }`
    Block(Vec<Stmt>),
    /// `parallel { ... }`
    Parallel(Vec<Stmt>),
    /// `if (c) a else b`
    If(Expr, Box<Stmt>, Option<Box<Stmt>>),
    /// A loop.
    Loop(LoopHead, Box<Stmt>),
    /// `let i in [a, b);`
    Let(Ident, Range),
    /// `forever dispatch(s) { arms }`
    Dispatch(Ident, Vec<Arm>),
    /// `flip s[];`
    Flip(Ident),
    /// `return [e];`
    Return(Option<Expr>),
    /// `;`
    Empty,
    /// A placeholder after a syntax error.
    Error,
}

/// A function parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// Type (the element type of an array parameter).
    pub ty: TypeRef,
    /// Name.
    pub name: Ident,
    /// Array dimensions, outermost first (`sp x[8]`: the caller passes an array of that
    /// type by reference); empty for a scalar.
    pub dims: Vec<Dim>,
}

/// A top-level item.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// `import "f.w";`
    Import(String, Span),
    /// `#pragma text`
    Pragma(String, Span),
    /// `socket a, b;`
    Sockets(Vec<Ident>),
    /// A file-scope variable or param.
    Var(VarDecl),
    /// `union NAME { ... };` or `struct NAME { ... };`
    Aggregate {
        /// Union or struct.
        is_union: bool,
        /// Name.
        name: Ident,
        /// Fields.
        fields: Vec<VarDecl>,
        /// Whole item.
        span: Span,
    },
    /// `name(T a) -> T { ... }`
    Func {
        /// Name.
        name: Ident,
        /// Parameters.
        params: Vec<Param>,
        /// Return type (`None`: void).
        ret: Option<TypeRef>,
        /// Body.
        body: Vec<Stmt>,
        /// Whole item.
        span: Span,
    },
    /// The entry block (`{ ... }` or `parallel { ... }`).
    Entry(Stmt),
    /// A placeholder after a syntax error.
    Error,
}
