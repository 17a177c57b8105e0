//! Name resolution from the syntax tree alone: which local binding (a `const`/`var` in a
//! block, a function parameter, a `for` capture, a tensor-access variable) or top-level
//! declaration a name refers to. The compiler's index resolves what analysis reached;
//! this covers local names (the index does not record their definitions) and code that
//! analysis never visited (lazy analysis skips unreached functions).

use cslc::source::Span;
use cslc::syntax::ast::{Ast, Block, DeclKind, ExprId, ExprKind, InitList, StmtKind};

/// A name bound in part of the file.
#[derive(Clone, Debug)]
pub struct Binding {
    /// The name.
    pub name: String,
    /// The defining occurrence.
    pub def: Span,
    /// Byte range where the binding is visible.
    pub visible: (u32, u32),
}

/// Every local binding of the file.
pub fn local_bindings(ast: &Ast) -> Vec<Binding> {
    let mut w = Walker {
        ast,
        out: Vec::new(),
        depth: 0,
    };
    for d in &ast.decls {
        match &d.kind {
            DeclKind::Param { ty, default, .. } => {
                w.opt_expr(*ty);
                w.opt_expr(*default);
            }
            DeclKind::Var(v) => {
                w.opt_expr(v.ty);
                w.opt_expr(v.init);
            }
            DeclKind::Fn(f) => {
                if let Some(body) = &f.body {
                    for p in &f.params {
                        w.bind(&p.name.name, p.name.span, body.span);
                    }
                    w.block(body);
                }
                w.expr(f.ret);
            }
            DeclKind::Task(t) => {
                for p in &t.params {
                    w.bind(&p.name.name, p.name.span, t.body.span);
                }
                w.block(&t.body);
            }
            DeclKind::Comptime(b) | DeclKind::Layout(b) => w.block(b),
            DeclKind::Error => {}
        }
    }
    w.out
}

/// The binding that the name `name` at byte `offset` refers to: the visible local
/// binding declared last, else the top-level declaration of that name.
pub fn resolve(ast: &Ast, locals: &[Binding], name: &str, offset: u32) -> Option<Span> {
    let local = locals
        .iter()
        .filter(|b| b.name == name && b.visible.0 <= offset && offset <= b.visible.1)
        .max_by_key(|b| b.def.start);
    if let Some(b) = local {
        return Some(b.def);
    }
    top_level(ast, name)
}

/// The name span of the top-level declaration `name`.
pub fn top_level(ast: &Ast, name: &str) -> Option<Span> {
    ast.decls.iter().find_map(|d| {
        let n = match &d.kind {
            DeclKind::Param { name, .. } => name,
            DeclKind::Var(v) => &v.name,
            DeclKind::Fn(f) => &f.name,
            DeclKind::Task(t) => &t.name,
            _ => return None,
        };
        (n.name == name).then_some(n.span)
    })
}

/// The identifier (name and span) at byte `offset`: a name expression, a declared name,
/// or the member name of a field access (`m.name`, with the base expression).
pub fn ident_at(ast: &Ast, offset: u32) -> Option<IdentAt> {
    let inside = |s: Span| s.start <= offset && offset <= s.end;
    let mut best: Option<IdentAt> = None;
    let mut consider = |cand: IdentAt| {
        if best
            .as_ref()
            .is_none_or(|b| cand.span.end - cand.span.start < b.span.end - b.span.start)
        {
            best = Some(cand);
        }
    };
    for (_, e) in ast.exprs.iter() {
        match &e.kind {
            ExprKind::Ident(n) if inside(e.span) => consider(IdentAt {
                name: n.to_string(),
                span: e.span,
                base: None,
            }),
            ExprKind::Field { base, name } if inside(name.span) => consider(IdentAt {
                name: name.name.to_string(),
                span: name.span,
                base: Some(*base),
            }),
            _ => {}
        }
    }
    for b in local_bindings(ast) {
        if inside(b.def) {
            consider(IdentAt {
                name: b.name.clone(),
                span: b.def,
                base: None,
            });
        }
    }
    for d in &ast.decls {
        let n = match &d.kind {
            DeclKind::Param { name, .. } => name,
            DeclKind::Var(v) => &v.name,
            DeclKind::Fn(f) => &f.name,
            DeclKind::Task(t) => &t.name,
            _ => continue,
        };
        if inside(n.span) {
            consider(IdentAt {
                name: n.name.to_string(),
                span: n.span,
                base: None,
            });
        }
    }
    best
}

/// An identifier found by [`ident_at`].
#[derive(Clone, Debug)]
pub struct IdentAt {
    /// The name.
    pub name: String,
    /// Where it is.
    pub span: Span,
    /// For a field access, the base expression.
    pub base: Option<ExprId>,
}

/// Deepest nesting walked (the parser bounds nesting too; this keeps the walk's stack
/// small whatever the input).
const MAX_DEPTH: u32 = 500;

struct Walker<'a> {
    ast: &'a Ast,
    out: Vec<Binding>,
    depth: u32,
}

impl Walker<'_> {
    fn bind(&mut self, name: &str, def: Span, region: Span) {
        self.out.push(Binding {
            name: name.to_string(),
            def,
            visible: (region.start, region.end),
        });
    }

    fn block(&mut self, b: &Block) {
        if self.depth > MAX_DEPTH {
            return;
        }
        self.depth += 1;
        for s in &b.stmts {
            self.stmt(&s.kind, s.span, b.span);
        }
        self.depth -= 1;
    }

    fn stmt(&mut self, kind: &StmtKind, span: Span, block: Span) {
        match kind {
            StmtKind::Local(v) => {
                self.opt_expr(v.ty);
                self.opt_expr(v.init);
                let region = Span {
                    file: span.file,
                    start: span.end,
                    end: block.end,
                };
                self.bind(&v.name.name, v.name.span, region);
            }
            StmtKind::Expr(e) | StmtKind::Return(Some(e)) => self.expr(*e),
            StmtKind::Assign { target, value, .. } => {
                self.expr(*target);
                self.expr(*value);
            }
            StmtKind::If {
                cond,
                then,
                otherwise,
            } => {
                self.expr(*cond);
                self.block(then);
                if let Some(o) = otherwise {
                    self.block(o);
                }
            }
            StmtKind::While {
                cond, cont, body, ..
            } => {
                self.expr(*cond);
                if let Some(c) = cont {
                    self.stmt(&c.kind, c.span, body.span);
                }
                self.block(body);
            }
            StmtKind::For {
                iter,
                capture,
                index,
                body,
                ..
            } => {
                self.expr(*iter);
                self.bind(&capture.name, capture.span, body.span);
                if let Some(i) = index {
                    self.bind(&i.name, i.span, body.span);
                }
                self.block(body);
            }
            StmtKind::Break { value, .. } => self.opt_expr(*value),
            StmtKind::Block(b) | StmtKind::Comptime(b) => self.block(b),
            StmtKind::Return(None) | StmtKind::Continue { .. } | StmtKind::Error => {}
        }
    }

    fn opt_expr(&mut self, e: Option<ExprId>) {
        if let Some(e) = e {
            self.expr(e);
        }
    }

    fn exprs(&mut self, es: &[ExprId]) {
        for e in es {
            self.expr(*e);
        }
    }

    fn expr(&mut self, e: ExprId) {
        if self.depth > MAX_DEPTH {
            return;
        }
        let Some(node) = self.ast.exprs.get(e) else {
            return;
        };
        self.depth += 1;
        match &node.kind {
            ExprKind::Builtin { args, .. } => self.exprs(args),
            ExprKind::Unary { operand, .. } => self.expr(*operand),
            ExprKind::Binary { lhs, rhs, .. } => {
                self.expr(*lhs);
                self.expr(*rhs);
            }
            ExprKind::Call { callee, args } => {
                self.expr(*callee);
                self.exprs(args);
            }
            ExprKind::Index { base, indices } => {
                self.expr(*base);
                self.exprs(indices);
            }
            ExprKind::Field { base, .. } => self.expr(*base),
            ExprKind::Deref(x) | ExprKind::Comptime(x) => self.expr(*x),
            ExprKind::AnonInit(list) => self.init(list),
            ExprKind::TypedInit { ty, init } => {
                self.expr(*ty);
                self.init(init);
            }
            ExprKind::If {
                cond,
                then,
                otherwise,
            } => {
                self.expr(*cond);
                self.expr(*then);
                self.expr(*otherwise);
            }
            ExprKind::Switch { scrutinee, cases } => {
                self.expr(*scrutinee);
                for c in cases {
                    for item in &c.items {
                        match item {
                            cslc::syntax::ast::SwitchItem::Value(v) => self.expr(*v),
                            cslc::syntax::ast::SwitchItem::Range(a, b) => {
                                self.expr(*a);
                                self.expr(*b);
                            }
                        }
                    }
                    self.expr(c.body);
                }
            }
            ExprKind::Block(b) => self.block(b),
            ExprKind::ArrayType { dims, elem } => {
                self.exprs(dims);
                self.expr(*elem);
            }
            ExprKind::PtrType { elem, .. } | ExprKind::ManyPtrType { elem, .. } => self.expr(*elem),
            ExprKind::FnType { params, ret } | ExprKind::TaskType { params, ret } => {
                self.exprs(params);
                self.expr(*ret);
            }
            ExprKind::StructType(fields) => {
                for f in fields {
                    self.expr(f.ty);
                    self.opt_expr(f.default);
                }
            }
            ExprKind::EnumType { tag, members } => {
                self.opt_expr(*tag);
                for m in members {
                    self.opt_expr(m.value);
                }
            }
            ExprKind::TensorAccess {
                vars,
                extents,
                access,
            } => {
                self.exprs(extents);
                let region = self.ast.exprs.get(*access).map_or(node.span, |x| x.span);
                for v in vars {
                    self.bind(&v.name, v.span, region);
                }
                self.expr(*access);
            }
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Str(_)
            | ExprKind::Bool(_)
            | ExprKind::Ident(_)
            | ExprKind::Error => {}
        }
        self.depth -= 1;
    }

    fn init(&mut self, list: &InitList) {
        match list {
            InitList::Fields(fs) => {
                for f in fs {
                    self.expr(f.value);
                }
            }
            InitList::Elems(es) => self.exprs(es),
        }
    }
}
