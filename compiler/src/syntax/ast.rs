//! The abstract syntax tree of one CSL source file.
//!
//! Expressions live in an arena ([`Ast::exprs`], ids [`ExprId`]); declarations and
//! statements own the ids of their expressions. Types are ordinary expressions (CSL, like
//! Zig, treats types as comptime values), so `[4]f32` is an [`ExprKind::ArrayType`].
//! Every node has a byte [`Span`]. The parser recovers from errors by inserting
//! [`ExprKind::Error`] nodes and [`DeclKind::Error`] / [`StmtKind::Error`] items.

use crate::source::Span;
use crate::symbol::Symbol;
use cranelift_entity::{PrimaryMap, entity_impl};

/// An expression node.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExprId(u32);
entity_impl!(ExprId, "expr");

/// A parsed file.
#[derive(Default)]
pub struct Ast {
    /// Top-level declarations in source order.
    pub decls: Vec<Decl>,
    /// Every expression of the file.
    pub exprs: PrimaryMap<ExprId, Expr>,
}

/// A name with its span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ident {
    /// The text (interned: comparing and copying it is cheap).
    pub name: Symbol,
    /// Where it is written.
    pub span: Span,
}

/// A top-level declaration.
#[derive(Clone, Debug)]
pub struct Decl {
    /// What it is.
    pub kind: DeclKind,
    /// The whole declaration.
    pub span: Span,
}

/// Kinds of top-level declarations.
#[derive(Clone, Debug)]
pub enum DeclKind {
    /// `param NAME [: T] [= default];`
    Param {
        /// Name.
        name: Ident,
        /// Declared type.
        ty: Option<ExprId>,
        /// Default value.
        default: Option<ExprId>,
    },
    /// A global `const` or `var`.
    Var(VarDecl),
    /// A function.
    Fn(FnDecl),
    /// `task NAME(params) [T] { ... }`
    Task(TaskDecl),
    /// A top-level `comptime { ... }` block.
    Comptime(Block),
    /// The `layout { ... }` block.
    Layout(Block),
    /// A declaration that failed to parse (already reported).
    Error,
}

/// `const` or `var`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutability {
    /// `const`.
    Const,
    /// `var`.
    Var,
    /// `comptime var` (statements only).
    ComptimeVar,
}

/// `export` / `extern` storage class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Linkage {
    /// Neither.
    Internal,
    /// `export`.
    Export,
    /// `extern`.
    Extern,
}

/// A variable or constant declaration (global or local).
#[derive(Clone, Debug)]
pub struct VarDecl {
    /// `const`, `var` or `comptime var`.
    pub mutability: Mutability,
    /// `export` / `extern`.
    pub linkage: Linkage,
    /// Name.
    pub name: Ident,
    /// Declared type.
    pub ty: Option<ExprId>,
    /// `align(N)`.
    pub align: Option<ExprId>,
    /// `linksection("...")`.
    pub linksection: Option<ExprId>,
    /// `linkname("...")`.
    pub linkname: Option<ExprId>,
    /// Initialiser.
    pub init: Option<ExprId>,
}

/// A function parameter.
#[derive(Clone, Debug)]
pub struct FnParam {
    /// `comptime` parameter.
    pub is_comptime: bool,
    /// Name (extern declarations may omit names; then it is `_`).
    pub name: Ident,
    /// Type, or `None` for `anytype`.
    pub ty: Option<ExprId>,
    /// The whole parameter.
    pub span: Span,
}

/// A function declaration.
#[derive(Clone, Debug)]
pub struct FnDecl {
    /// `export` / `extern`.
    pub linkage: Linkage,
    /// `inline fn`.
    pub is_inline: bool,
    /// Name.
    pub name: Ident,
    /// Parameters.
    pub params: Vec<FnParam>,
    /// `linkname("...")`.
    pub linkname: Option<ExprId>,
    /// Return type expression.
    pub ret: ExprId,
    /// Body; `None` for `extern fn ...;`.
    pub body: Option<Block>,
}

/// A task declaration.
#[derive(Clone, Debug)]
pub struct TaskDecl {
    /// Name.
    pub name: Ident,
    /// Parameters (data and control tasks take wavelet halves).
    pub params: Vec<FnParam>,
    /// Return type as written (must be `void` if present).
    pub ret: Option<ExprId>,
    /// Body.
    pub body: Block,
}

/// A `{ ... }` block, possibly labelled (`blk: { ... }`).
#[derive(Clone, Debug)]
pub struct Block {
    /// Label.
    pub label: Option<Ident>,
    /// Statements.
    pub stmts: Vec<Stmt>,
    /// From `{` (or the label) to `}`.
    pub span: Span,
}

/// A statement.
#[derive(Clone, Debug)]
pub struct Stmt {
    /// What it is.
    pub kind: StmtKind,
    /// The whole statement.
    pub span: Span,
}

/// Assignment operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssignOp {
    /// `=`
    Assign,
    /// `op=` for the given binary operator.
    Compound(BinaryOp),
}

/// Kinds of statements.
#[derive(Clone, Debug)]
pub enum StmtKind {
    /// `const`/`var`/`comptime var` declaration.
    Local(VarDecl),
    /// An expression evaluated for its effect, e.g. a call or a `switch`.
    Expr(ExprId),
    /// `target op= value;`
    Assign {
        /// Operator.
        op: AssignOp,
        /// Left-hand side.
        target: ExprId,
        /// Right-hand side.
        value: ExprId,
    },
    /// `if (cond) then [else otherwise]`.
    If {
        /// Condition.
        cond: ExprId,
        /// Then branch (a block, or a single statement wrapped in a block).
        then: Block,
        /// Else branch (a block; `else if` is a block holding one `If`).
        otherwise: Option<Block>,
    },
    /// `[label:] while (cond) [: (cont)] body`.
    While {
        /// Label.
        label: Option<Ident>,
        /// Condition.
        cond: ExprId,
        /// Continue statement, run after every iteration.
        cont: Option<Box<Stmt>>,
        /// Body.
        body: Block,
    },
    /// `[label:] for (iter) |capture[, index]| body`.
    For {
        /// Label.
        label: Option<Ident>,
        /// What to iterate: an array or a `@range`.
        iter: ExprId,
        /// Element capture.
        capture: Ident,
        /// Index capture.
        index: Option<Ident>,
        /// Body.
        body: Block,
    },
    /// `break [:label] [value];`
    Break {
        /// Target label.
        label: Option<Ident>,
        /// Value for a labelled block.
        value: Option<ExprId>,
    },
    /// `continue [:label];`
    Continue {
        /// Target label.
        label: Option<Ident>,
    },
    /// `return [value];`
    Return(Option<ExprId>),
    /// A nested block.
    Block(Block),
    /// `comptime { ... }` inside a function.
    Comptime(Block),
    /// A statement that failed to parse (already reported).
    Error,
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `&`
    BitAnd,
    /// `|`
    BitOr,
    /// `^`
    BitXor,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `and` (short-circuit)
    And,
    /// `or` (short-circuit)
    Or,
}

impl BinaryOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::Shl => "<<",
            BinaryOp::Shr => ">>",
            BinaryOp::BitAnd => "&",
            BinaryOp::BitOr => "|",
            BinaryOp::BitXor => "^",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::And => "and",
            BinaryOp::Or => "or",
        }
    }
}

/// Prefix operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    /// `-x`
    Neg,
    /// `!x`
    Not,
    /// `~x`
    BitNot,
    /// `&x`
    AddrOf,
}

/// A switch case.
#[derive(Clone, Debug)]
pub struct SwitchCase {
    /// Items; empty means `else`.
    pub items: Vec<SwitchItem>,
    /// The body: an expression (possibly a block expression or an assignment wrapped as a
    /// block).
    pub body: ExprId,
    /// The whole case.
    pub span: Span,
}

/// One item of a switch case.
#[derive(Clone, Debug)]
pub enum SwitchItem {
    /// A single value.
    Value(ExprId),
    /// An inclusive range `a...b`.
    Range(ExprId, ExprId),
}

/// An expression node.
#[derive(Clone, Debug)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where.
    pub span: Span,
}

/// A field initialiser `.name = value`.
#[derive(Clone, Debug)]
pub struct FieldInit {
    /// Field name.
    pub name: Ident,
    /// Value.
    pub value: ExprId,
}

/// Contents of an initialiser list: `{ .a = 1, .b = 2 }` or `{ 1, 2, 3 }`.
#[derive(Clone, Debug)]
pub enum InitList {
    /// Named fields (also used for `{}`).
    Fields(Vec<FieldInit>),
    /// Positional elements.
    Elems(Vec<ExprId>),
}

/// A field of a `struct { ... }` type expression.
#[derive(Clone, Debug)]
pub struct StructField {
    /// Name.
    pub name: Ident,
    /// Type.
    pub ty: ExprId,
    /// Default value.
    pub default: Option<ExprId>,
}

/// A member of an `enum(T) { ... }` type expression.
#[derive(Clone, Debug)]
pub struct EnumMember {
    /// Name.
    pub name: Ident,
    /// Explicit value.
    pub value: Option<ExprId>,
}

/// Kinds of expressions.
#[derive(Clone, Debug)]
pub enum ExprKind {
    /// Integer or character literal (`comptime_int`).
    Int(u128),
    /// Float literal (`comptime_float`).
    Float(f64),
    /// String literal with escapes already decoded (`comptime_string`).
    Str(String),
    /// `true` / `false`.
    Bool(bool),
    /// A name.
    Ident(Symbol),
    /// `@name(args)`.
    Builtin {
        /// Name without the `@`.
        name: Ident,
        /// Arguments.
        args: Vec<ExprId>,
    },
    /// Prefix operator.
    Unary {
        /// Operator.
        op: UnaryOp,
        /// Operand.
        operand: ExprId,
    },
    /// Infix operator.
    Binary {
        /// Operator.
        op: BinaryOp,
        /// Left.
        lhs: ExprId,
        /// Right.
        rhs: ExprId,
    },
    /// `callee(args)`.
    Call {
        /// Callee.
        callee: ExprId,
        /// Arguments.
        args: Vec<ExprId>,
    },
    /// `base[i]` or `base[i, j]`.
    Index {
        /// Indexed value.
        base: ExprId,
        /// One index per dimension.
        indices: Vec<ExprId>,
    },
    /// `base.name`.
    Field {
        /// Struct, module or pointer.
        base: ExprId,
        /// Field name.
        name: Ident,
    },
    /// `base.*`.
    Deref(ExprId),
    /// `.{ ... }`: anonymous struct or tuple.
    AnonInit(InitList),
    /// `T{ ... }`: typed struct or array initialiser.
    TypedInit {
        /// The type expression.
        ty: ExprId,
        /// The list.
        init: InitList,
    },
    /// `if (cond) a else b` as an expression.
    If {
        /// Condition.
        cond: ExprId,
        /// Value if true.
        then: ExprId,
        /// Value if false.
        otherwise: ExprId,
    },
    /// `switch (x) { ... }`.
    Switch {
        /// Scrutinee.
        scrutinee: ExprId,
        /// Cases in order.
        cases: Vec<SwitchCase>,
    },
    /// A block used as an expression, e.g. `blk: { ... break :blk v; }` or `{}`.
    Block(Block),
    /// `comptime expr`.
    Comptime(ExprId),
    /// `[N]T` or `[M, N]T`.
    ArrayType {
        /// Extents, outermost first.
        dims: Vec<ExprId>,
        /// Element type.
        elem: ExprId,
    },
    /// `*T` / `*const T`.
    PtrType {
        /// `const` pointee.
        is_const: bool,
        /// Pointee type.
        elem: ExprId,
    },
    /// `[*]T` / `[*]const T`.
    ManyPtrType {
        /// `const` pointee.
        is_const: bool,
        /// Element type.
        elem: ExprId,
    },
    /// `fn(T1, T2) R`.
    FnType {
        /// Parameter types.
        params: Vec<ExprId>,
        /// Return type.
        ret: ExprId,
    },
    /// `task() void`: the type of a task passed as a value (a module parameter bound to a
    /// task, activated through `.activate = t`).
    TaskType {
        /// Parameter types.
        params: Vec<ExprId>,
        /// Return type.
        ret: ExprId,
    },
    /// `struct { a: T, b: U = default }`.
    StructType(Vec<StructField>),
    /// `enum(T) { a, b = 4 }`.
    EnumType {
        /// Backing integer type.
        tag: Option<ExprId>,
        /// Members in order.
        members: Vec<EnumMember>,
    },
    /// `|i, j|{M, N} -> A[i, j]`.
    TensorAccess {
        /// Index variables.
        vars: Vec<Ident>,
        /// Extents, one per variable.
        extents: Vec<ExprId>,
        /// The accessed expression (an index expression over the variables).
        access: ExprId,
    },
    /// An expression that failed to parse (already reported).
    Error,
}

impl Ast {
    /// The names of the file's top-level params, in order.
    pub fn param_names(&self) -> Vec<&str> {
        self.decls
            .iter()
            .filter_map(|d| match &d.kind {
                DeclKind::Param { name, .. } => Some(name.name.as_str()),
                _ => None,
            })
            .collect()
    }

    /// Adds an expression to the arena.
    pub fn expr(&mut self, kind: ExprKind, span: Span) -> ExprId {
        self.exprs.push(Expr { kind, span })
    }
}
