//! Expressions: one walker for comptime evaluation and runtime lowering.
//!
//! [`Sema::expr`] returns a [`Val`]: either a comptime [`Value`] or a runtime register.
//! Operations whose operands are all comptime-known fold; otherwise they emit IR into the
//! environment's [`FnBuilder`]. In a comptime environment (no builder) a runtime operand
//! is an error ("runtime value used at comptime").

use super::lower::FnBuilder;
use super::module::{DeclRef, ModId};
use super::types::{Type, TypeId};
use super::value::Value;
use super::{Ctx, R, Reported, Sema, did_you_mean};
use crate::diag::{Diagnostic, codes};
use crate::ir::{Inst, Term, VReg};
use crate::source::Span;
use crate::syntax::ast::{Ast, BinaryOp, DeclKind, ExprId, ExprKind, UnaryOp};
use csl_arch::isa::{BinOp, CmpOp, NumTy, UnOp, Width};
use std::collections::HashSet;
use std::rc::Rc;

/// The most elements an array type may have (far more than fits in a PE).
pub const MAX_ARRAY_ELEMS: u64 = 1 << 20;

/// A local binding.
#[derive(Clone, Debug)]
pub enum Local {
    /// A constant (comptime-known).
    Value(Value),
    /// A `comptime var`, or a `var` inside comptime code.
    CtVar(Value),
    /// A runtime scalar held in a register.
    Reg {
        /// The register.
        reg: VReg,
        /// Its type.
        ty: TypeId,
        /// Whether assignments are allowed.
        mutable: bool,
    },
    /// A local whose declaration failed (already reported): uses are silently errors, so
    /// one mistake is not reported again at every use.
    Poison,
    /// A runtime aggregate in the frame's stack area.
    Frame {
        /// Byte offset in the frame.
        off: u32,
        /// Its type.
        ty: TypeId,
        /// Whether assignments are allowed.
        mutable: bool,
    },
}

/// A runtime loop's (or labelled block's) jump targets.
pub struct LoopCtx {
    /// Label, if any.
    pub label: Option<String>,
    /// Where `break` goes.
    pub exit: crate::ir::BlockId,
    /// Where `continue` goes.
    pub cont: crate::ir::BlockId,
    /// For a labelled block (and an inlined call's body): the `break`s seen so far, whose
    /// values are moved into the result register once the block's type is known. `None`
    /// for loops.
    pub breaks: Option<Vec<Arm>>,
    /// The type the block's value is expected to have, if the context says.
    pub hint: Option<TypeId>,
}

/// One way control reaches the end of a value-producing construct (an `if` or `switch`
/// arm, a `break :label value`): the still-open block it ends in and its value.
pub struct Arm {
    /// The block, left open so the value can be moved into the result register.
    pub block: crate::ir::BlockId,
    /// The value.
    pub val: Val,
    /// Where the value was written.
    pub span: Span,
    /// Whether control can reach the end of the arm.
    pub reachable: bool,
}

/// The label of the block an inlined call's `return` breaks to.
pub const INLINE_RETURN: &str = "<return>";

/// The evaluation environment of one function activation or comptime block.
pub struct Env {
    /// The module whose top-level names are visible.
    pub module: ModId,
    /// That module's AST.
    pub ast: Rc<Ast>,
    /// What kind of context this is.
    pub ctx: Ctx,
    /// Whether evaluation is at comptime (no runtime code may be produced).
    pub comptime: bool,
    /// Block scopes, innermost last.
    pub scopes: Vec<Vec<(String, Local)>>,
    /// The function being lowered (runtime environments only).
    pub fb: Option<FnBuilder>,
    /// Enclosing runtime loops.
    pub loops: Vec<LoopCtx>,
    /// The return type of the current function.
    pub ret_ty: Option<TypeId>,
    /// Labels of enclosing comptime loops (None = unlabelled), for `break` checks.
    pub ct_loops: Vec<Option<String>>,
    /// Labels of enclosing labelled blocks.
    pub ct_labels: Vec<String>,
    /// Names of locals whose address is taken somewhere in the body (they live in the
    /// frame instead of a register).
    pub addr_taken: Rc<HashSet<String>>,
    /// Whether this is an inlined call's body (`return` breaks to [`INLINE_RETURN`]).
    pub inline_ret: bool,
    /// How deeply the expression or statement being analysed is nested in this body
    /// (checked against [`super::SemaOptions::max_nesting`]).
    pub depth: u32,
}

impl Env {
    /// A comptime environment for module `m`.
    pub fn comptime(module: ModId, ast: Rc<Ast>, ctx: Ctx) -> Env {
        Env {
            module,
            ast,
            ctx,
            comptime: true,
            scopes: vec![Vec::new()],
            fb: None,
            loops: Vec::new(),
            ret_ty: None,
            ct_loops: Vec::new(),
            ct_labels: Vec::new(),
            addr_taken: Rc::new(HashSet::new()),
            inline_ret: false,
            depth: 0,
        }
    }

    /// A runtime environment for lowering a function body of module `m` into `fb`.
    pub fn runtime(module: ModId, ast: Rc<Ast>, fb: FnBuilder, ret_ty: TypeId) -> Env {
        let mut env = Env::comptime(module, ast, Ctx::Runtime);
        env.comptime = false;
        env.fb = Some(fb);
        env.ret_ty = Some(ret_ty);
        env
    }

    /// Binds a name in the innermost scope.
    pub fn bind(&mut self, name: &str, l: Local) {
        if let Some(s) = self.scopes.last_mut() {
            s.push((name.to_string(), l));
        }
    }

    fn find(&self, name: &str) -> Option<(usize, usize)> {
        for (si, s) in self.scopes.iter().enumerate().rev() {
            if let Some(li) = s.iter().rposition(|(n, _)| n == name) {
                return Some((si, li));
            }
        }
        None
    }

    /// Every local name in scope.
    pub fn local_names(&self) -> Vec<String> {
        self.scopes
            .iter()
            .flatten()
            .map(|(n, _)| n.clone())
            .collect()
    }
}

/// The result of analysing an expression.
#[derive(Clone, Debug)]
pub enum Val {
    /// Known at compile time.
    Ct(Value),
    /// Computed at runtime into a register.
    Rt {
        /// The register.
        reg: VReg,
        /// The type.
        ty: TypeId,
    },
}

/// Base of a memory place.
#[derive(Clone, Copy, Debug)]
pub enum MemBase {
    /// A global.
    Global(crate::ir::GlobalId),
    /// The frame's stack area.
    Frame(u32),
    /// An address in a register.
    Reg(VReg),
    /// A fixed address.
    Abs(u32),
}

/// Something that can be assigned to or have its address taken.
#[derive(Clone, Debug)]
pub enum Place {
    /// A comptime variable (scope, index) and a path of array indices inside it.
    Ct {
        /// Scope index.
        scope: usize,
        /// Binding index.
        idx: usize,
        /// Element indices into nested arrays.
        path: Vec<usize>,
        /// Type of the designated value.
        ty: TypeId,
    },
    /// A runtime register variable.
    Reg {
        /// Register.
        reg: VReg,
        /// Type.
        ty: TypeId,
        /// Assignable.
        mutable: bool,
    },
    /// Memory.
    Mem {
        /// Base.
        base: MemBase,
        /// Constant byte offset.
        off: u32,
        /// Dynamic byte offset.
        dyn_off: Option<VReg>,
        /// Type of the designated object.
        ty: TypeId,
        /// Assignable.
        mutable: bool,
    },
}

/// The base of a field access: a place, or a value when the base is not a variable.
pub enum FieldBase {
    /// A variable, element or dereference.
    Place(Place),
    /// Any other expression's value.
    Val(Val),
}

impl Sema {
    pub(crate) fn span(&self, env: &Env, e: ExprId) -> Span {
        env.ast.exprs[e].span
    }

    /// Evaluates an expression that must be comptime-known.
    pub fn eval_comptime(&mut self, env: &mut Env, e: ExprId) -> R<Value> {
        let saved = env.comptime;
        env.comptime = true;
        let r = self.expr(env, e);
        env.comptime = saved;
        match r? {
            Val::Ct(v) => Ok(v),
            Val::Rt { .. } => {
                let span = self.span(env, e);
                Err(self.not_comptime(span))
            }
        }
    }

    pub(crate) fn not_comptime(&mut self, span: Span) -> Reported {
        self.report(
            Diagnostic::error(
                codes::NOT_COMPTIME,
                "runtime value used at comptime",
                span,
                "this is only known at runtime",
            )
            .with_help("comptime code can use literals, params, constants and comptime variables"),
        )
    }

    /// Evaluates a type expression.
    pub fn eval_type(&mut self, env: &mut Env, e: ExprId) -> R<TypeId> {
        match self.eval_comptime(env, e)? {
            Value::Type(t) => Ok(t),
            other => {
                let span = self.span(env, e);
                let desc = other.describe(&self.types);
                let ty = other.ty(&mut self.types);
                let tyd = self.types.display(ty);
                Err(self.err(
                    codes::NOT_A_TYPE,
                    "expected a type",
                    span,
                    format!("this is the value {desc} of type {tyd}"),
                ))
            }
        }
    }

    /// Evaluates a comptime integer (any integer type).
    pub fn eval_int(&mut self, env: &mut Env, e: ExprId) -> R<i128> {
        match self.eval_comptime(env, e)? {
            Value::Int(v, _) => Ok(v),
            Value::BigInt(v) => {
                let span = self.span(env, e);
                Err(self.report(
                    Diagnostic::error(
                        codes::OUT_OF_RANGE,
                        format!("integer {v} is too large here"),
                        span,
                        format!("this needs {} bits", v.bits() + 1),
                    )
                    .with_note("comptime_int values are exact at any size, but a count, index, size or address must fit in 128 bits"),
                ))
            }
            other => {
                let span = self.span(env, e);
                let ty = other.ty(&mut self.types);
                let d = self.types.display(ty);
                Err(self.err(
                    codes::TYPE_MISMATCH,
                    "expected an integer",
                    span,
                    format!("this has type {d}"),
                ))
            }
        }
    }

    /// Analyses an expression, counting its nesting against `--max-nesting-depth` so that
    /// a long operator chain is a diagnostic, not a stack overflow.
    pub fn expr(&mut self, env: &mut Env, e: ExprId) -> R<Val> {
        env.depth += 1;
        let r = if env.depth > self.opts.max_nesting {
            let span = self.span(env, e);
            Err(self.too_deep(span))
        } else {
            let span = self.span(env, e);
            match self.stack_guard(span, "expressions") {
                Ok(()) => self.expr_node(env, e),
                Err(r) => Err(r),
            }
        };
        env.depth -= 1;
        r
    }

    fn expr_node(&mut self, env: &mut Env, e: ExprId) -> R<Val> {
        let ast = env.ast.clone();
        let node = &ast.exprs[e];
        let span = node.span;
        let c = &self.types.common;
        match &node.kind {
            ExprKind::Int(v) => Ok(Val::Ct(Value::comptime_int(
                num_bigint::BigInt::from(*v),
                c.comptime_int,
            ))),
            ExprKind::Float(v) => Ok(Val::Ct(Value::Float(*v, c.comptime_float))),
            ExprKind::Str(s) => Ok(Val::Ct(Value::Str(Rc::from(s.as_str())))),
            ExprKind::Bool(b) => Ok(Val::Ct(Value::Bool(*b))),
            ExprKind::Ident(name) => self.ident(env, name, span),
            ExprKind::Builtin { name, args } => self.builtin(env, name, args, span),
            ExprKind::Unary { op, operand } => self.unary(env, *op, *operand, span),
            ExprKind::Binary { op, lhs, rhs } => self.binary(env, *op, *lhs, *rhs, span),
            ExprKind::Call { callee, args } => self.call(env, *callee, args, span),
            ExprKind::Index { .. } | ExprKind::Deref(_) => {
                if let ExprKind::Index { base, indices } = &node.kind
                    && let Some(v) = self.ct_index(env, *base, indices)?
                {
                    return Ok(v);
                }
                let p = self.place(env, e)?;
                self.read_place(env, p, span)
            }
            ExprKind::Field { base, name } => self.field(env, e, *base, name, span),
            ExprKind::AnonInit(list) => self.anon_init(env, list, span),
            ExprKind::TypedInit { ty, init } => self.typed_init(env, *ty, init, span),
            ExprKind::If {
                cond,
                then,
                otherwise,
            } => self.if_expr(env, *cond, *then, *otherwise, span, None),
            ExprKind::Switch { scrutinee, cases } => {
                self.switch(env, *scrutinee, cases, span, true, None)
            }
            ExprKind::Block(block) => self.block_expr(env, block, span, None),
            ExprKind::Comptime(inner) => Ok(Val::Ct(self.eval_comptime(env, *inner)?)),
            ExprKind::ArrayType { dims, elem } => {
                let mut ds = Vec::new();
                let mut count: u64 = 1;
                for d in dims {
                    let v = self.eval_int(env, *d)?;
                    if v < 0 {
                        let s = self.span(env, *d);
                        return Err(self.err(
                            codes::OUT_OF_RANGE,
                            "array extent is negative",
                            s,
                            format!("this is {v}"),
                        ));
                    }
                    count = count.saturating_mul(u64::try_from(v).unwrap_or(u64::MAX));
                    if count > MAX_ARRAY_ELEMS {
                        let s = self.span(env, e);
                        return Err(self.report(
                            Diagnostic::error(codes::OUT_OF_RANGE, "this array type is too large", s, "too many elements")
                                .with_note(format!("an array may have at most {MAX_ARRAY_ELEMS} elements; a PE has only {} bytes of memory", csl_arch::fabric::PE_MEMORY_BYTES)),
                        ));
                    }
                    ds.push(v as u64);
                }
                let elem = self.eval_type(env, *elem)?;
                if matches!(self.types.get(elem), Type::Array { .. }) {
                    let s = self.span(env, e);
                    return Err(self.err(
                        codes::UNSUPPORTED,
                        "arrays of arrays are not allowed",
                        s,
                        "use the comma form `[M, N]T` for a multi-dimensional array",
                    ));
                }
                Ok(Val::Ct(Value::Type(
                    self.types.intern(Type::Array { elem, dims: ds }),
                )))
            }
            ExprKind::PtrType { is_const, elem } => {
                let elem = self.eval_type(env, *elem)?;
                Ok(Val::Ct(Value::Type(self.types.intern(Type::Ptr {
                    elem,
                    is_const: *is_const,
                }))))
            }
            ExprKind::ManyPtrType { is_const, elem } => {
                let elem = self.eval_type(env, *elem)?;
                Ok(Val::Ct(Value::Type(self.types.intern(Type::ManyPtr {
                    elem,
                    is_const: *is_const,
                }))))
            }
            ExprKind::FnType { params, ret } => {
                let mut ps = Vec::new();
                for p in params {
                    ps.push(self.eval_type(env, *p)?);
                }
                let ret = self.eval_type(env, *ret)?;
                Ok(Val::Ct(Value::Type(
                    self.types.intern(Type::Fn { params: ps, ret }),
                )))
            }
            ExprKind::TaskType { params, ret } => {
                for p in params {
                    self.eval_type(env, *p)?;
                }
                self.eval_type(env, *ret)?;
                Ok(Val::Ct(Value::Type(self.types.common.task)))
            }
            ExprKind::StructType(fields) => {
                Ok(Val::Ct(Value::Type(self.struct_type_expr(env, e, fields)?)))
            }
            ExprKind::EnumType { tag, members } => Ok(Val::Ct(Value::Type(
                self.enum_type_expr(env, e, *tag, members, span)?,
            ))),
            ExprKind::TensorAccess {
                vars,
                extents,
                access,
            } => Ok(Val::Ct(
                self.tensor_access(env, vars, extents, *access, span)?,
            )),
            ExprKind::Error => Err(Reported),
        }
    }

    /// Analyses an expression whose value the context expects to have type `hint` (a
    /// variable's declared type, a parameter type, a return type). The hint gives untyped
    /// literals in `if`/`switch` arms and labelled blocks a runtime type, and gives
    /// `.{ ... }` literals their struct or array type; the caller still coerces the result.
    pub fn expr_hint(&mut self, env: &mut Env, e: ExprId, hint: Option<TypeId>) -> R<Val> {
        let Some(h) = hint else {
            return self.expr(env, e);
        };
        let ast = env.ast.clone();
        let node = &ast.exprs[e];
        let span = node.span;
        match &node.kind {
            ExprKind::If {
                cond,
                then,
                otherwise,
            } => self.if_expr(env, *cond, *then, *otherwise, span, hint),
            ExprKind::Switch { scrutinee, cases } => {
                self.switch(env, *scrutinee, cases, span, true, hint)
            }
            ExprKind::Block(block) => self.block_expr(env, block, span, hint),
            ExprKind::AnonInit(list)
                if matches!(self.types.get(h), Type::Struct(_) | Type::Array { .. }) =>
            {
                self.init_list(env, h, list, span)
            }
            _ => self.expr(env, e),
        }
    }

    // ----- names -------------------------------------------------------------------------

    fn ident(&mut self, env: &mut Env, name: &str, span: Span) -> R<Val> {
        if let Some((si, li)) = env.find(name) {
            return match &env.scopes[si][li].1 {
                Local::Value(v) | Local::CtVar(v) => Ok(Val::Ct(v.clone())),
                Local::Reg { reg, ty, .. } => {
                    if env.comptime {
                        return Err(self.not_comptime(span));
                    }
                    Ok(Val::Rt { reg: *reg, ty: *ty })
                }
                Local::Frame { .. } => {
                    let p = self.ident_place(env, name, span)?;
                    self.read_place(env, p, span)
                }
                Local::Poison => Err(Reported),
            };
        }
        if let Some(d) = self.lookup_decl(env.module, name) {
            return self.decl_val(env, d, span);
        }
        if let Some(v) = self.predefined(name) {
            return Ok(Val::Ct(v));
        }
        Err(self.undefined(env, name, span))
    }

    /// Predefined names: builtin types and direction constants.
    fn predefined(&mut self, name: &str) -> Option<Value> {
        if let Some(t) = self.types.builtin_named(name) {
            return Some(Value::Type(t));
        }
        csl_arch::fabric::Direction::from_name(name).map(Value::Dir)
    }

    pub(crate) fn undefined(&mut self, env: &Env, name: &str, span: Span) -> Reported {
        let mut cands = env.local_names();
        cands.extend(self.decl_names(env.module));
        let mut d = Diagnostic::error(
            codes::UNDEFINED_NAME,
            format!("cannot find `{name}` in this scope"),
            span,
            "not declared",
        );
        if let Some(s) = did_you_mean(name, cands.iter().map(String::as_str)) {
            d = d.with_help(format!("a declaration with a similar name exists: `{s}`"));
        }
        self.report(d)
    }

    /// The value of a top-level declaration used in an expression.
    pub fn decl_val(&mut self, env: &mut Env, d: DeclRef, span: Span) -> R<Val> {
        let ast = self.mods[d.module].ast.clone();
        let Some(decl) = ast.decls.get(d.index as usize) else {
            return Err(Reported);
        };
        match &decl.kind {
            DeclKind::Param { .. } => Ok(Val::Ct(self.const_value(d, span)?)),
            DeclKind::Var(v) if v.mutability == crate::syntax::ast::Mutability::Const => {
                Ok(Val::Ct(self.const_value(d, span)?))
            }
            DeclKind::Var(_) if env.comptime => Err(self.var_at_comptime(d, span)),
            DeclKind::Var(_) => {
                let p = self.global_place(env, d, span)?;
                self.read_place(env, p, span)
            }
            DeclKind::Fn(_) => Ok(Val::Ct(Value::Func(d))),
            DeclKind::Task(_) => Ok(Val::Ct(Value::Task(d))),
            _ => Err(Reported),
        }
    }

    /// "runtime variable used at comptime", pointing at the `var` declaration.
    fn var_at_comptime(&mut self, d: DeclRef, span: Span) -> Reported {
        let ast = self.mods[d.module].ast.clone();
        let decl_span = super::decl_name_span(&ast, d.index).unwrap_or(span);
        self.report(
            Diagnostic::error(codes::NOT_COMPTIME, "runtime variable used at comptime", span, "the value of a `var` is only known at runtime")
                .with_label(decl_span, "declared as `var` here")
                .with_help("comptime code can read params, constants and comptime variables, and take the address of a `var`"),
        )
    }

    fn global_place(&mut self, env: &mut Env, d: DeclRef, span: Span) -> R<Place> {
        if env.comptime && env.ctx != Ctx::TopComptime {
            return Err(self.var_at_comptime(d, span));
        }
        let g = self.global_of(d, span)?;
        let ty = self.global_type(g);
        Ok(Place::Mem {
            base: MemBase::Global(g),
            off: 0,
            dyn_off: None,
            ty,
            mutable: true,
        })
    }

    fn ident_place(&mut self, env: &mut Env, name: &str, span: Span) -> R<Place> {
        if let Some((si, li)) = env.find(name) {
            return match &env.scopes[si][li].1 {
                Local::Value(_) => Err(self.assign_const(name, span)),
                Local::CtVar(v) => {
                    let v = v.clone();
                    let ty = v.ty(&mut self.types);
                    Ok(Place::Ct {
                        scope: si,
                        idx: li,
                        path: vec![],
                        ty,
                    })
                }
                // A runtime aggregate held by address (a capture or a parameter).
                Local::Reg { reg, ty, mutable } if self.types.is_mem_type(*ty) => Ok(Place::Mem {
                    base: MemBase::Reg(*reg),
                    off: 0,
                    dyn_off: None,
                    ty: *ty,
                    mutable: *mutable,
                }),
                Local::Reg { reg, ty, mutable } => Ok(Place::Reg {
                    reg: *reg,
                    ty: *ty,
                    mutable: *mutable,
                }),
                Local::Frame { off, ty, mutable } => Ok(Place::Mem {
                    base: MemBase::Frame(*off),
                    off: 0,
                    dyn_off: None,
                    ty: *ty,
                    mutable: *mutable,
                }),
                Local::Poison => Err(Reported),
            };
        }
        if let Some(d) = self.lookup_decl(env.module, name) {
            let ast = self.mods[d.module].ast.clone();
            return match ast.decls.get(d.index as usize).map(|x| &x.kind) {
                Some(DeclKind::Var(v)) if v.mutability != crate::syntax::ast::Mutability::Const => {
                    self.global_place(env, d, span)
                }
                _ => Err(self.assign_const(name, span)),
            };
        }
        Err(self.undefined(env, name, span))
    }

    fn assign_const(&mut self, name: &str, span: Span) -> Reported {
        self.report(
            Diagnostic::error(
                codes::ASSIGN_TO_CONST,
                format!("cannot assign to constant `{name}`"),
                span,
                "this is a constant",
            )
            .with_help("declare it with `var` to make it mutable"),
        )
    }

    // ----- places ------------------------------------------------------------------------

    /// Analyses an expression as a place (something with an address or a variable slot).
    pub fn place(&mut self, env: &mut Env, e: ExprId) -> R<Place> {
        let ast = env.ast.clone();
        let span = ast.exprs[e].span;
        match &ast.exprs[e].kind {
            ExprKind::Ident(name) => self.ident_place(env, name, span),
            ExprKind::Field { base, name } => {
                if self.is_place_expr(env, *base) {
                    return self.field_place(env, *base, &name.name, name.span, span);
                }
                let bv = self.expr(env, *base)?;
                if let Val::Ct(Value::Module(m)) = bv {
                    let Some(d) = self.lookup_decl(m, &name.name) else {
                        return Err(self.unknown_member_of_module(m, &name.name, name.span));
                    };
                    let mast = self.mods[m].ast.clone();
                    return match mast.decls.get(d.index as usize).map(|x| &x.kind) {
                        Some(DeclKind::Var(v))
                            if v.mutability != crate::syntax::ast::Mutability::Const =>
                        {
                            self.global_place(env, d, span)
                        }
                        _ => Err(self.assign_const(&name.name, span)),
                    };
                }
                let bspan = self.span(env, *base);
                self.field_place_in(env, FieldBase::Val(bv), bspan, &name.name, name.span, span)
            }
            ExprKind::Builtin { name, args } if name.name == "field" && args.len() == 2 => {
                let f = self.str_arg_kind(env, args[1], "field")?;
                let fspan = self.span(env, args[1]);
                self.field_place(env, args[0], &f, fspan, span)
            }
            ExprKind::Index { base, indices } => self.index_place(env, *base, indices, span),
            ExprKind::Deref(p) => {
                let pv = self.expr(env, *p)?;
                let pspan = self.span(env, *p);
                let pty = self.val_ty(&pv);
                let (elem, is_const) = match self.types.get(pty) {
                    Type::Ptr { elem, is_const } => (*elem, *is_const),
                    _ => {
                        let d = self.types.display(pty);
                        return Err(self.err(
                            codes::NOT_A_POINTER,
                            "cannot dereference a value that is not a pointer",
                            pspan,
                            format!("this has type {d}"),
                        ));
                    }
                };
                let base = self.ptr_base(env, pv, pspan)?;
                Ok(Place::Mem {
                    base,
                    off: 0,
                    dyn_off: None,
                    ty: elem,
                    mutable: !is_const,
                })
            }
            _ => Err(self.err(
                codes::BAD_OPERAND,
                "this expression is not assignable",
                span,
                "not a variable, element or dereference",
            )),
        }
    }

    pub(crate) fn ptr_base(&mut self, env: &mut Env, pv: Val, span: Span) -> R<MemBase> {
        Ok(match pv {
            Val::Ct(Value::GlobalPtr { global, offset, .. }) => {
                if offset == 0 {
                    MemBase::Global(global)
                } else {
                    let r = self.emit_global_addr(env, global, offset, span)?;
                    MemBase::Reg(r)
                }
            }
            Val::Ct(Value::AbsPtr { addr, .. }) => MemBase::Abs(addr),
            Val::Rt { reg, .. } => MemBase::Reg(reg),
            Val::Ct(_) => {
                return Err(self.err(
                    codes::NOT_A_POINTER,
                    "not a pointer",
                    span,
                    "expected a pointer",
                ));
            }
        })
    }

    fn index_place(
        &mut self,
        env: &mut Env,
        base: ExprId,
        indices: &[ExprId],
        span: Span,
    ) -> R<Place> {
        let bspan = self.span(env, base);
        // A pointer-valued base ([*]T or *[N]T) is indexed through its value; an array
        // variable through its place.
        let base_place = if self.is_place_expr(env, base) {
            Some(self.place(env, base)?)
        } else {
            None
        };
        let (mbase, off, dyn_off, arr_ty, mutable) = match base_place {
            Some(Place::Mem {
                base,
                off,
                dyn_off,
                ty,
                mutable,
            }) if matches!(self.types.get(ty), Type::Array { .. }) => {
                (base, off, dyn_off, ty, mutable)
            }
            Some(Place::Ct {
                scope,
                idx,
                mut path,
                ty,
            }) => {
                let Type::Array { elem, dims } = self.types.get(ty).clone() else {
                    return Err(self.not_indexable(ty, bspan));
                };
                let flat = self.ct_flat_index(env, &dims, indices, span)?;
                path.push(flat);
                return Ok(Place::Ct {
                    scope,
                    idx,
                    path,
                    ty: elem,
                });
            }
            other => {
                // Not an array place: index through a pointer value (or the address of a
                // runtime array value).
                let pv = match other {
                    Some(p) => self.read_place(env, p, bspan)?,
                    None => self.expr(env, base)?,
                };
                let pty = self.val_ty(&pv);
                match self.types.get(pty).clone() {
                    Type::ManyPtr { elem, is_const } => {
                        let mb = self.ptr_base(env, pv, bspan)?;
                        let esize = self.types.size_of(elem).unwrap_or(0) as u32;
                        if indices.len() != 1 {
                            return Err(self.err(
                                codes::NOT_INDEXABLE,
                                "a [*] pointer takes one index",
                                span,
                                "one index expected",
                            ));
                        }
                        let (coff, dreg) = self.scaled_index(env, indices[0], esize)?;
                        return Ok(Place::Mem {
                            base: mb,
                            off: coff,
                            dyn_off: dreg,
                            ty: elem,
                            mutable: !is_const,
                        });
                    }
                    Type::Ptr { elem, is_const }
                        if matches!(self.types.get(elem), Type::Array { .. }) =>
                    {
                        let mb = self.ptr_base(env, pv, bspan)?;
                        (mb, 0, None, elem, !is_const)
                    }
                    Type::Array { .. } => match pv {
                        Val::Rt { reg, .. } => (MemBase::Reg(reg), 0, None, pty, false),
                        Val::Ct(_) => return Err(self.not_indexable(pty, bspan)),
                    },
                    _ => return Err(self.not_indexable(pty, bspan)),
                }
            }
        };
        let mut idx = Vec::new();
        for &ix in indices {
            let v = self.expr(env, ix)?;
            idx.push((v, self.span(env, ix)));
        }
        self.index_into(env, mbase, off, dyn_off, arr_ty, idx, mutable, span)
    }

    /// The place of an element of the array of type `arr_ty` at `base + off (+ dyn_off)`.
    /// Row-major: offset = ((i0 * d1 + i1) * d2 + i2) * esize.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn index_into(
        &mut self,
        env: &mut Env,
        mbase: MemBase,
        off: u32,
        dyn_off: Option<VReg>,
        arr_ty: TypeId,
        idx: Vec<(Val, Span)>,
        mutable: bool,
        span: Span,
    ) -> R<Place> {
        let Type::Array { elem, dims } = self.types.get(arr_ty).clone() else {
            return Err(self.not_indexable(arr_ty, span));
        };
        if idx.len() != dims.len() {
            return Err(self.rank_mismatch(dims.len(), idx.len(), span));
        }
        let esize = self.types.size_of(elem).unwrap_or(0) as u32;
        let mut const_part: i128 = 0;
        let mut dyn_part: Option<VReg> = None;
        for (k, (v, ispan)) in idx.into_iter().enumerate() {
            let stride: u64 = dims[k + 1..].iter().product::<u64>() * u64::from(esize);
            match v {
                Val::Ct(Value::Int(i, _)) => {
                    if i < 0 || i as u128 >= u128::from(dims[k]) {
                        return Err(self.err(
                            codes::COMPTIME_INDEX,
                            format!("index {i} is out of range for an extent of {}", dims[k]),
                            ispan,
                            "out of range",
                        ));
                    }
                    const_part += i * stride as i128;
                }
                other => {
                    let r = self.index_to_u16(env, other, ispan)?;
                    let scaled = self.mul_const_u16(env, r, stride as u32);
                    dyn_part = Some(match dyn_part {
                        None => scaled,
                        Some(prev) => self.emit_bin(env, BinOp::Add, NumTy::U16, prev, scaled),
                    });
                }
            }
        }
        let dyn_off = match (dyn_off, dyn_part) {
            (Some(a), Some(b)) => Some(self.emit_bin(env, BinOp::Add, NumTy::U16, a, b)),
            (a, b) => a.or(b),
        };
        Ok(Place::Mem {
            base: mbase,
            off: off + const_part as u32,
            dyn_off,
            ty: elem,
            mutable,
        })
    }

    /// Whether an expression designates a variable (rather than a constant or a
    /// computed value), so that indexing it goes through its storage.
    pub(crate) fn is_place_expr(&mut self, env: &mut Env, e: ExprId) -> bool {
        let ast = env.ast.clone();
        match &ast.exprs[e].kind {
            ExprKind::Ident(n) => match env.find(n) {
                Some((si, li)) => !matches!(env.scopes[si][li].1, Local::Value(_) | Local::Poison),
                None => self
                    .lookup_decl(env.module, n)
                    .is_some_and(|d| self.is_var_decl(d)),
            },
            ExprKind::Field { base, .. } if self.is_place_expr(env, *base) => true,
            ExprKind::Builtin { name, args } if name.name == "field" && args.len() == 2 => {
                self.is_place_expr(env, args[0])
            }
            ExprKind::Field { base, name } => match &ast.exprs[*base].kind {
                ExprKind::Ident(_) => {
                    let saved = self.diags.len();
                    let r = self.expr(env, *base);
                    match r {
                        Ok(Val::Ct(Value::Module(m))) => self
                            .lookup_decl(m, &name.name)
                            .is_some_and(|d| self.is_var_decl(d)),
                        _ => {
                            self.diags.truncate(saved);
                            false
                        }
                    }
                }
                _ => false,
            },
            // Indexing a comptime array held by a local constant gives a value, not a
            // place (so `a[0].x` is evaluated at comptime).
            ExprKind::Index { base, .. } => match &ast.exprs[*base].kind {
                ExprKind::Ident(n) => !matches!(
                    env.find(n).map(|(si, li)| &env.scopes[si][li].1),
                    Some(Local::Value(Value::Array(..)))
                ),
                _ => true,
            },
            ExprKind::Deref(_) => true,
            _ => false,
        }
    }

    fn is_var_decl(&self, d: DeclRef) -> bool {
        matches!(
            self.mods[d.module].ast.decls.get(d.index as usize).map(|x| &x.kind),
            Some(DeclKind::Var(v)) if v.mutability != crate::syntax::ast::Mutability::Const
        )
    }

    fn scaled_index(&mut self, env: &mut Env, ix: ExprId, esize: u32) -> R<(u32, Option<VReg>)> {
        let v = self.expr(env, ix)?;
        let ispan = self.span(env, ix);
        match v {
            Val::Ct(Value::Int(i, _)) if i >= 0 => Ok((i as u32 * esize, None)),
            other => {
                let r = self.index_to_u16(env, other, ispan)?;
                Ok((0, Some(self.mul_const_u16(env, r, esize))))
            }
        }
    }

    fn not_indexable(&mut self, ty: TypeId, span: Span) -> Reported {
        let d = self.types.display(ty);
        self.err(
            codes::NOT_INDEXABLE,
            format!("cannot index a value of type {d}"),
            span,
            "not an array or [*] pointer",
        )
    }

    fn ct_flat_index(
        &mut self,
        env: &mut Env,
        dims: &[u64],
        indices: &[ExprId],
        span: Span,
    ) -> R<usize> {
        if indices.len() != dims.len() {
            return Err(self.rank_mismatch(dims.len(), indices.len(), span));
        }
        let mut flat: u64 = 0;
        for (k, &ix) in indices.iter().enumerate() {
            let i = self.eval_int(env, ix)?;
            if i < 0 || i as u128 >= u128::from(dims[k]) {
                let s = self.span(env, ix);
                return Err(self.err(
                    codes::COMPTIME_INDEX,
                    format!("index {i} is out of range for an extent of {}", dims[k]),
                    s,
                    "out of range",
                ));
            }
            flat = flat * dims[k] + i as u64;
        }
        Ok(flat as usize)
    }

    /// Indexing a comptime array or tuple with comptime indices.
    fn ct_index(&mut self, env: &mut Env, base: ExprId, indices: &[ExprId]) -> R<Option<Val>> {
        // Only when the base is comptime-known without side effects: a literal, a constant,
        // a comptime variable.
        let ast = env.ast.clone();
        let is_ct_base = match &ast.exprs[base].kind {
            ExprKind::Ident(n) => match env.find(n) {
                Some((si, li)) => matches!(env.scopes[si][li].1, Local::Value(_) | Local::CtVar(_)),
                None => self.lookup_decl(env.module, n).is_some_and(|d| {
                    let a = self.mods[d.module].ast.clone();
                    matches!(
                        a.decls.get(d.index as usize).map(|x| &x.kind),
                        Some(DeclKind::Param { .. })
                            | Some(DeclKind::Var(crate::syntax::ast::VarDecl {
                                mutability: crate::syntax::ast::Mutability::Const,
                                ..
                            }))
                    )
                }),
            },
            ExprKind::Field { .. } => !self.is_place_expr(env, base),
            ExprKind::Builtin { .. } | ExprKind::AnonInit(_) | ExprKind::TypedInit { .. } => true,
            _ => false,
        };
        if !is_ct_base {
            return Ok(None);
        }
        let bv = match self.expr(env, base)? {
            Val::Ct(v) => v,
            Val::Rt { .. } => return Ok(None),
        };
        let span = self.span(env, base);
        match bv {
            Value::Array(t, elems) => {
                let Type::Array { dims, .. } = self.types.get(t).clone() else {
                    return Ok(None);
                };
                let mut idx = Vec::new();
                for &i in indices {
                    let v = self.expr(env, i)?;
                    idx.push((v, self.span(env, i)));
                }
                if idx.iter().all(|(v, _)| matches!(v, Val::Ct(_))) {
                    let flat = self.ct_flat_index_vals(&dims, &idx, span)?;
                    return Ok(elems.get(flat).cloned().map(Val::Ct));
                }
                // A runtime index into a constant array: the array is placed in memory as
                // read-only data.
                if env.comptime {
                    let s = idx
                        .iter()
                        .find(|(v, _)| matches!(v, Val::Rt { .. }))
                        .map_or(span, |(_, s)| *s);
                    return Err(self.not_comptime(s));
                }
                let addr = self.const_addr(env, &Value::Array(t, elems), span)?;
                let p = self.index_into(env, MemBase::Reg(addr), 0, None, t, idx, false, span)?;
                self.read_place(env, p, span).map(Some)
            }
            Value::Struct(fields) => {
                if indices.len() != 1 {
                    return Ok(None);
                }
                let i = self.eval_int(env, indices[0])?;
                match fields.get(i as usize) {
                    Some((_, v)) if i >= 0 => Ok(Some(Val::Ct(v.clone()))),
                    _ => {
                        let s = self.span(env, indices[0]);
                        Err(self.err(
                            codes::COMPTIME_INDEX,
                            format!(
                                "index {i} is out of range for a tuple of {} elements",
                                fields.len()
                            ),
                            s,
                            "out of range",
                        ))
                    }
                }
            }
            _ => Ok(None),
        }
    }

    /// The flat row-major position of comptime indices.
    fn ct_flat_index_vals(&mut self, dims: &[u64], idx: &[(Val, Span)], span: Span) -> R<usize> {
        if idx.len() != dims.len() {
            return Err(self.rank_mismatch(dims.len(), idx.len(), span));
        }
        let mut flat: u64 = 0;
        for (k, (v, s)) in idx.iter().enumerate() {
            let i = match v {
                Val::Ct(Value::Int(i, _)) => *i,
                // Beyond 128 bits: out of bounds whatever the extent.
                Val::Ct(Value::BigInt(b)) => {
                    return Err(self.err(
                        codes::COMPTIME_INDEX,
                        format!("index {b} is out of range for an extent of {}", dims[k]),
                        *s,
                        "out of range",
                    ));
                }
                other => {
                    let t = self.val_ty(other);
                    let d = self.types.display(t);
                    return Err(self.err(
                        codes::TYPE_MISMATCH,
                        "array index must be an integer",
                        *s,
                        format!("this has type {d}"),
                    ));
                }
            };
            if i < 0 || i as u128 >= u128::from(dims[k]) {
                return Err(self.err(
                    codes::COMPTIME_INDEX,
                    format!("index {i} is out of range for an extent of {}", dims[k]),
                    *s,
                    "out of range",
                ));
            }
            flat = flat * dims[k] + i as u64;
        }
        Ok(flat as usize)
    }

    fn rank_mismatch(&mut self, rank: usize, given: usize, span: Span) -> Reported {
        let help = if rank > 1 && given == 1 {
            format!(
                "index every dimension at once, e.g. `a[i, j]`; the array has {rank} dimensions"
            )
        } else {
            format!("give one index per dimension ({rank})")
        };
        self.report(
            Diagnostic::error(
                codes::NOT_INDEXABLE,
                format!(
                    "array of rank {rank} indexed with {given} ind{}",
                    if given == 1 { "ex" } else { "ices" }
                ),
                span,
                "wrong number of indices",
            )
            .with_help(help),
        )
    }

    /// Reads a place as a value. A runtime aggregate or descriptor is read as its address
    /// (see [`TypeStore::is_mem_type`](super::types::TypeStore::is_mem_type)).
    pub fn read_place(&mut self, env: &mut Env, p: Place, span: Span) -> R<Val> {
        match p {
            Place::Ct {
                scope, idx, path, ..
            } => {
                let Some((_, Local::CtVar(v))) = env.scopes.get(scope).and_then(|s| s.get(idx))
                else {
                    return Err(Reported);
                };
                let mut v = v.clone();
                for i in path {
                    v = match v {
                        Value::Array(_, elems) | Value::Record(_, elems) => {
                            elems.get(i).cloned().ok_or(Reported)?
                        }
                        Value::Struct(fields) => {
                            fields.get(i).map(|(_, v)| v.clone()).ok_or(Reported)?
                        }
                        _ => return Err(Reported),
                    };
                }
                Ok(Val::Ct(v))
            }
            Place::Reg { reg, ty, .. } => Ok(Val::Rt { reg, ty }),
            Place::Mem {
                base,
                off,
                dyn_off,
                ty,
                ..
            } => {
                if env.comptime {
                    return Err(self.not_comptime(span));
                }
                if self.types.is_mem_type(ty) {
                    let addr = self.place_addr(env, base, off, dyn_off, span)?;
                    return Ok(Val::Rt { reg: addr, ty });
                }
                let Some(nt) = self.types.num_ty(ty) else {
                    let d = self.types.display(ty);
                    return Err(self.err(
                        codes::UNSUPPORTED,
                        format!("a value of type {d} cannot be loaded into a register"),
                        span,
                        "index it, or take its address with `&`",
                    ));
                };
                let addr = self.place_addr(env, base, off, dyn_off, span)?;
                let dst = self.fb(env).reg();
                self.fb(env).emit(Inst::Load {
                    w: nt.width(),
                    dst,
                    addr,
                });
                Ok(Val::Rt { reg: dst, ty })
            }
        }
    }

    /// Writes a value to a place (the value is coerced to the place's type). Aggregates
    /// and descriptors are copied.
    pub fn write_place(
        &mut self,
        env: &mut Env,
        p: Place,
        v: Val,
        span: Span,
        target_span: Span,
    ) -> R<()> {
        match p {
            Place::Ct {
                scope,
                idx,
                path,
                ty,
            } => {
                let Val::Ct(v) = v else {
                    return Err(self.report(
                        Diagnostic::error(
                            codes::NOT_COMPTIME,
                            "runtime value stored in a comptime variable",
                            span,
                            "only known at runtime",
                        )
                        .with_label(target_span, "this is a comptime variable")
                        .with_help("declare the variable with `var` to hold runtime values"),
                    ));
                };
                let v = self.coerce_value(v, ty, span)?;
                let Some((_, Local::CtVar(slot))) =
                    env.scopes.get_mut(scope).and_then(|s| s.get_mut(idx))
                else {
                    return Err(Reported);
                };
                set_path(slot, &path, v);
                Ok(())
            }
            Place::Reg { reg, ty, mutable } => {
                if !mutable {
                    return Err(self.err(
                        codes::ASSIGN_TO_CONST,
                        "cannot assign to a constant",
                        target_span,
                        "this is a constant",
                    ));
                }
                let v = self.coerce(env, v, ty, span)?;
                let src = self.materialize(env, v, span)?;
                self.fb(env).emit(Inst::Mov { dst: reg, src });
                Ok(())
            }
            Place::Mem {
                base,
                off,
                dyn_off,
                ty,
                mutable,
            } => {
                if !mutable {
                    return Err(self.err(
                        codes::ASSIGN_TO_CONST,
                        "cannot assign to a read-only location",
                        target_span,
                        "this is a constant or is reached through a `*const` pointer",
                    ));
                }
                if env.comptime {
                    return Err(self.not_comptime(target_span));
                }
                let v = self.coerce(env, v, ty, span)?;
                if self.types.is_mem_type(ty) {
                    let src = self.materialize(env, v, span)?;
                    let dst = self.place_addr(env, base, off, dyn_off, span)?;
                    self.emit_copy(env, dst, src, ty);
                    return Ok(());
                }
                let Some(nt) = self.types.num_ty(ty) else {
                    let d = self.types.display(ty);
                    return Err(self.err(
                        codes::NOT_COMPTIME,
                        format!("a value of type {d} exists only at comptime"),
                        target_span,
                        "cannot be stored in memory",
                    ));
                };
                let src = self.materialize(env, v, span)?;
                let addr = self.place_addr(env, base, off, dyn_off, span)?;
                self.fb(env).emit(Inst::Store {
                    w: nt.width(),
                    addr,
                    src,
                });
                Ok(())
            }
        }
    }

    /// Copies a runtime value of memory type `ty` from address `src` to address `dst` (one
    /// `copy` instruction).
    pub(crate) fn emit_copy(&mut self, env: &mut Env, dst: VReg, src: VReg, ty: TypeId) {
        // Objects larger than the 16-bit address space cannot exist in PE memory (placing
        // them is reported), so the byte count always fits.
        let size = self.types.size_of(ty).unwrap_or(0);
        let bytes = u16::try_from(size).unwrap_or(u16::MAX);
        self.fb(env).emit(Inst::Copy { dst, src, bytes });
    }

    pub(crate) fn place_addr(
        &mut self,
        env: &mut Env,
        base: MemBase,
        off: u32,
        dyn_off: Option<VReg>,
        span: Span,
    ) -> R<VReg> {
        let b = match base {
            MemBase::Global(g) => self.emit_global_addr(env, g, off, span)?,
            MemBase::Frame(f) => {
                let dst = self.fb(env).reg();
                self.fb(env).emit(Inst::FrameAddr { dst, off: f + off });
                dst
            }
            MemBase::Abs(a) => self.imm(env, a + off),
            MemBase::Reg(r) => {
                if off == 0 {
                    r
                } else {
                    let k = self.imm(env, off);
                    self.emit_bin(env, BinOp::Add, NumTy::U16, r, k)
                }
            }
        };
        Ok(match dyn_off {
            Some(d) => self.emit_bin(env, BinOp::Add, NumTy::U16, b, d),
            None => b,
        })
    }

    fn emit_global_addr(
        &mut self,
        env: &mut Env,
        global: crate::ir::GlobalId,
        offset: u32,
        span: Span,
    ) -> R<VReg> {
        if env.comptime && env.ctx != Ctx::TopComptime {
            return Err(self.not_comptime(span));
        }
        let dst = self.fb(env).reg();
        self.fb(env).emit(Inst::GlobalAddr {
            dst,
            global,
            offset,
        });
        Ok(dst)
    }

    /// The function builder (callers check `env.comptime` first).
    ///
    /// A comptime environment gets a throw-away builder: anything emitted there yields a
    /// runtime value that the comptime caller then rejects with a diagnostic.
    pub fn fb<'e>(&self, env: &'e mut Env) -> &'e mut FnBuilder {
        env.fb.get_or_insert_with(FnBuilder::sink)
    }

    // ----- small emitters ------------------------------------------------------------------

    pub(crate) fn imm(&mut self, env: &mut Env, v: u32) -> VReg {
        let dst = self.fb(env).reg();
        self.fb(env).emit(Inst::Imm { dst, imm: v });
        dst
    }

    pub(crate) fn emit_bin(
        &mut self,
        env: &mut Env,
        op: BinOp,
        ty: NumTy,
        a: VReg,
        b: VReg,
    ) -> VReg {
        let dst = self.fb(env).reg();
        self.fb(env).emit(Inst::Bin { op, ty, dst, a, b });
        dst
    }

    fn mul_const_u16(&mut self, env: &mut Env, r: VReg, k: u32) -> VReg {
        if k == 1 {
            return r;
        }
        let kr = self.imm(env, k);
        self.emit_bin(env, BinOp::Mul, NumTy::U16, r, kr)
    }

    /// Converts an index value to a u16 register.
    fn index_to_u16(&mut self, env: &mut Env, v: Val, span: Span) -> R<VReg> {
        let ty = self.val_ty(&v);
        if !self.types.is_int(ty) {
            let d = self.types.display(ty);
            return Err(self.err(
                codes::TYPE_MISMATCH,
                "array index must be an integer",
                span,
                format!("this has type {d}"),
            ));
        }
        if env.comptime {
            return Err(self.not_comptime(span));
        }
        let r = self.materialize(env, v, span)?;
        let from = self.types.num_ty(ty).unwrap_or(NumTy::U16);
        if from == NumTy::U16 {
            return Ok(r);
        }
        let dst = self.fb(env).reg();
        self.fb(env).emit(Inst::Conv {
            to: NumTy::U16,
            from,
            dst,
            src: r,
        });
        Ok(dst)
    }

    /// The type of a [`Val`].
    pub fn val_ty(&mut self, v: &Val) -> TypeId {
        match v {
            Val::Ct(v) => v.ty(&mut self.types),
            Val::Rt { ty, .. } => *ty,
        }
    }

    /// Puts a scalar value into a register.
    pub fn materialize(&mut self, env: &mut Env, v: Val, span: Span) -> R<VReg> {
        let v = match v {
            Val::Rt { reg, .. } => return Ok(reg),
            Val::Ct(v) => v,
        };
        if env.comptime {
            return Err(self.not_comptime(span));
        }
        let bits = match &v {
            Value::GlobalPtr { global, offset, .. } => {
                return self.emit_global_addr(env, *global, *offset, span);
            }
            Value::Dsd(d) => {
                let d = d.clone();
                return self.dsd_const_addr(env, &d, span);
            }
            Value::Dsr(k, n) => {
                let g = self.dsr_slot(*k, *n, span)?;
                let dst = self.fb(env).reg();
                self.fb(env).emit(Inst::GlobalAddr {
                    dst,
                    global: g,
                    offset: 0,
                });
                return Ok(dst);
            }
            Value::Func(d) => {
                let f = self.lower_fn(*d, span)?;
                let dst = self.fb(env).reg();
                self.fb(env).emit(Inst::FuncAddr { dst, func: f });
                return Ok(dst);
            }
            Value::Array(..) | Value::Record(..) => return self.const_addr(env, &v, span),
            other => self.scalar_bits(other, span)?,
        };
        Ok(self.imm(env, bits))
    }

    /// The 32-bit register image of a comptime scalar.
    pub fn scalar_bits(&mut self, v: &Value, span: Span) -> R<u32> {
        Ok(match v {
            Value::Bool(b) => u32::from(*b),
            Value::Enum(t, i) => {
                let tag = self
                    .types
                    .enum_def(*t)
                    .map_or(self.types.common.u16, |d| d.tag);
                return self.scalar_bits(&Value::Int(*i, tag), span);
            }
            Value::Int(i, t) => {
                if *t == self.types.common.comptime_int {
                    return Err(self.err(
                        codes::TYPE_MISMATCH,
                        "an untyped integer has no runtime representation",
                        span,
                        "give it a type, e.g. `@as(i16, ...)`",
                    ));
                }
                let (_, bits) = self.types.int_info(*t).unwrap_or((false, 32));
                if bits > 32 {
                    return Err(self.err(
                        codes::UNSUPPORTED,
                        "64-bit integers are not supported at runtime",
                        span,
                        "use a 32-bit type",
                    ));
                }
                let mask: u64 = if bits >= 32 {
                    0xffff_ffff
                } else {
                    (1u64 << bits) - 1
                };
                ((*i as i64 as u64) & mask) as u32
            }
            Value::Float(f, t) => match self.types.get(*t) {
                Type::F32 => (*f as f32).to_bits(),
                Type::F16 => u32::from(half::f16::from_f64(*f).to_bits()),
                _ => {
                    return Err(self.err(
                        codes::TYPE_MISMATCH,
                        "an untyped float has no runtime representation",
                        span,
                        "give it a type, e.g. `@as(f32, ...)`",
                    ));
                }
            },
            Value::Color(c) => u32::from(*c),
            Value::Dir(d) => u32::from(d.index()),
            Value::TaskId(_, n) | Value::Queue(_, n) => u32::from(*n),
            Value::AbsPtr { addr, .. } => *addr,
            other => {
                let ty = other.ty(&mut self.types);
                let d = self.types.display(ty);
                return Err(self.err(
                    codes::NOT_COMPTIME,
                    format!("a value of type {d} exists only at comptime"),
                    span,
                    "used in runtime code here",
                ));
            }
        })
    }

    // ----- coercion ----------------------------------------------------------------------

    /// Coerces a comptime value to `ty` (range-checked), or reports a type mismatch.
    pub fn coerce_value(&mut self, v: Value, ty: TypeId, span: Span) -> R<Value> {
        let vt = v.ty(&mut self.types);
        if vt == ty {
            return Ok(v);
        }
        let target = self.types.get(ty).clone();
        let ok = match (&v, &target) {
            (_, Type::ComptimeStruct) if matches!(v, Value::Struct(_) | Value::Record(..)) => {
                Some(v.clone())
            }
            (Value::Struct(fields), Type::Struct(_)) => {
                return self.anon_to_record(fields.clone(), ty, span);
            }
            (Value::Void, Type::Struct(_)) => {
                return self.anon_to_record(Rc::new(Vec::new()), ty, span);
            }
            (Value::Func(d), Type::Fn { .. }) => return self.coerce_func(*d, ty, ty, span),
            (Value::Func(d), Type::Ptr { elem, .. })
                if matches!(self.types.get(*elem), Type::Fn { .. }) =>
            {
                return self.coerce_func(*d, *elem, ty, span);
            }
            (Value::Int(i, _), Type::Int { .. }) => {
                if !self.types.int_fits(ty, *i) {
                    let d = self.types.display(ty);
                    return Err(self.report(
                        Diagnostic::error(
                            codes::OUT_OF_RANGE,
                            format!("integer {i} does not fit in {d}"),
                            span,
                            format!("out of range for {d}"),
                        )
                        .with_help(int_range_help(&self.types, ty)),
                    ));
                }
                Some(Value::Int(*i, ty))
            }
            (Value::Int(i, _), Type::ComptimeInt) => Some(Value::Int(*i, ty)),
            (Value::BigInt(b), Type::Int { .. }) => {
                let d = self.types.display(ty);
                return Err(self.report(
                    Diagnostic::error(
                        codes::OUT_OF_RANGE,
                        format!("integer {b} does not fit in {d}"),
                        span,
                        format!("out of range for {d}"),
                    )
                    .with_help(int_range_help(&self.types, ty)),
                ));
            }
            (Value::BigInt(b), Type::F16 | Type::F32 | Type::ComptimeFloat) => {
                let f = bigint_to_f64(b);
                Some(Value::Float(self.round_checked(f, ty, span)?, ty))
            }
            (Value::Int(i, t), Type::F16 | Type::F32 | Type::ComptimeFloat)
                if *t == self.types.common.comptime_int =>
            {
                Some(Value::Float(self.round_checked(*i as f64, ty, span)?, ty))
            }
            (Value::Float(f, t), Type::F16 | Type::F32)
                if *t == self.types.common.comptime_float =>
            {
                Some(Value::Float(self.round_checked(*f, ty, span)?, ty))
            }
            (Value::Float(f, _), Type::ComptimeFloat) => Some(Value::Float(*f, ty)),
            (Value::Array(_, elems), Type::Array { elem, dims }) => {
                let n: u64 = dims.iter().product();
                if elems.len() as u64 == n {
                    let mut out = Vec::with_capacity(elems.len());
                    for e in elems.iter() {
                        out.push(self.coerce_value(e.clone(), *elem, span)?);
                    }
                    Some(Value::Array(ty, Rc::new(out)))
                } else {
                    None
                }
            }
            (Value::Struct(fields), Type::Array { elem, dims })
                if fields
                    .iter()
                    .enumerate()
                    .all(|(i, (n, _))| *n == i.to_string()) =>
            {
                let n: u64 = dims.iter().product();
                if fields.len() as u64 == n {
                    let mut out = Vec::with_capacity(fields.len());
                    for (_, e) in fields.iter() {
                        out.push(self.coerce_value(e.clone(), *elem, span)?);
                    }
                    Some(Value::Array(ty, Rc::new(out)))
                } else {
                    None
                }
            }
            (Value::GlobalPtr { global, offset, .. }, _) if self.ptr_coercible(vt, ty) => {
                Some(Value::GlobalPtr {
                    global: *global,
                    offset: *offset,
                    ty,
                })
            }
            (Value::AbsPtr { addr, .. }, _) if self.ptr_coercible(vt, ty) => {
                Some(Value::AbsPtr { addr: *addr, ty })
            }
            (Value::Task(_), Type::LocalTaskId | Type::DataTaskId | Type::ControlTaskId) => None,
            _ => None,
        };
        match ok {
            Some(v) => Ok(v),
            None => Err(self.mismatch(ty, vt, span)),
        }
    }

    pub(crate) fn mismatch(&mut self, expected: TypeId, found: TypeId, span: Span) -> Reported {
        let e = self.types.display(expected);
        let f = self.types.display(found);
        let mut d = Diagnostic::error(
            codes::TYPE_MISMATCH,
            format!("expected {e}, found {f}"),
            span,
            format!("this has type {f}"),
        );
        let (te, tf) = (self.types.get(expected), self.types.get(found));
        if self.types.is_numeric(expected) && self.types.is_numeric(found) {
            d = d.with_help(format!("convert explicitly with `@as({e}, ...)`"));
        } else if found == self.types.common.void {
            d = d.with_note(
                "this expression produces no value (a call of a `void` function, or a statement)",
            );
        } else if expected == self.types.common.bool_ && self.types.is_numeric(found) {
            d = d.with_help("numbers are not conditions; compare explicitly, e.g. `x != 0`");
        } else if matches!((te, tf), (Type::Struct(_), Type::Struct(_))) {
            d = d.with_note("struct types are nominal: two definitions are different types even when their fields match");
        } else if matches!((te, tf), (Type::Enum(_), _)) && self.types.is_int(found)
            || matches!((te, tf), (_, Type::Enum(_))) && self.types.is_int(expected)
        {
            d = d.with_help(format!(
                "convert between enums and integers with `@as({e}, ...)`"
            ));
        }
        self.report(d)
    }

    fn ptr_coercible(&self, from: TypeId, to: TypeId) -> bool {
        match (self.types.get(from), self.types.get(to)) {
            // *[N]T (or *[M, N]T, flattened row-major) -> [*]T
            (
                Type::Ptr { elem, is_const: fc },
                Type::ManyPtr {
                    elem: te,
                    is_const: tc,
                },
            ) => {
                matches!(self.types.get(*elem), Type::Array { elem: ae, dims } if ae == te && !dims.is_empty())
                    && (*tc || !*fc)
            }
            (
                Type::Ptr { elem, is_const: fc },
                Type::Ptr {
                    elem: te,
                    is_const: tc,
                },
            ) => elem == te && (*tc || !*fc),
            (
                Type::ManyPtr { elem, is_const: fc },
                Type::ManyPtr {
                    elem: te,
                    is_const: tc,
                },
            ) => elem == te && (*tc || !*fc),
            _ => false,
        }
    }

    /// Coerces a value (comptime or runtime) to `ty`.
    pub fn coerce(&mut self, _env: &mut Env, v: Val, ty: TypeId, span: Span) -> R<Val> {
        match v {
            Val::Ct(v) => Ok(Val::Ct(self.coerce_value(v, ty, span)?)),
            Val::Rt { reg, ty: vt } => {
                if vt == ty || self.ptr_coercible(vt, ty) {
                    Ok(Val::Rt { reg, ty })
                } else {
                    Err(self.mismatch(ty, vt, span))
                }
            }
        }
    }

    // ----- operators ---------------------------------------------------------------------

    fn unary(&mut self, env: &mut Env, op: UnaryOp, operand: ExprId, span: Span) -> R<Val> {
        if op == UnaryOp::AddrOf {
            return self.addr_of(env, operand, span);
        }
        let v = self.expr(env, operand)?;
        let ty = self.val_ty(&v);
        let ospan = self.span(env, operand);
        let ok = match op {
            UnaryOp::Neg => self.types.is_numeric(ty),
            UnaryOp::Not => ty == self.types.common.bool_,
            UnaryOp::BitNot => matches!(self.types.get(ty), Type::Int { .. }),
            UnaryOp::AddrOf => true,
        };
        if !ok {
            let d = self.types.display(ty);
            let sym = match op {
                UnaryOp::Neg => "-",
                UnaryOp::Not => "!",
                UnaryOp::BitNot => "~",
                UnaryOp::AddrOf => "&",
            };
            return Err(self.err(
                codes::BAD_OPERAND,
                format!("operator `{sym}` cannot be applied to {d}"),
                ospan,
                format!("this has type {d}"),
            ));
        }
        match v {
            Val::Ct(c) => Ok(Val::Ct(match (op, c) {
                (UnaryOp::Neg, Value::BigInt(b)) => Value::comptime_int(-(*b).clone(), ty),
                (UnaryOp::BitNot, Value::BigInt(b)) => Value::comptime_int(!(*b).clone(), ty),
                (UnaryOp::Neg, Value::Int(i, t)) => {
                    let Some(r) = i.checked_neg() else {
                        // Only a comptime_int reaches the 128-bit edge.
                        return Ok(Val::Ct(Value::comptime_int(
                            -num_bigint::BigInt::from(i),
                            t,
                        )));
                    };
                    if !self.types.int_fits(t, r) {
                        let d = self.types.display(t);
                        return Err(self.err(
                            codes::OUT_OF_RANGE,
                            format!("negation overflows {d}"),
                            span,
                            "result out of range",
                        ));
                    }
                    Value::Int(r, t)
                }
                (UnaryOp::Neg, Value::Float(f, t)) => Value::Float(-f, t),
                (UnaryOp::Not, Value::Bool(b)) => Value::Bool(!b),
                (UnaryOp::BitNot, Value::Int(i, t)) => match self.types.int_info(t) {
                    Some((signed, bits)) => Value::Int(wrap_int(!i, signed, bits), t),
                    // comptime_int: `~x` is `-x - 1`, exactly.
                    None => Value::Int(!i, t),
                },
                _ => return Err(Reported),
            })),
            Val::Rt { reg, ty } => {
                let nt = self.types.num_ty(ty).unwrap_or(NumTy::U16);
                let uop = match op {
                    UnaryOp::Neg => UnOp::Neg,
                    UnaryOp::Not => UnOp::LNot,
                    _ => UnOp::Not,
                };
                let dst = self.fb(env).reg();
                self.fb(env).emit(Inst::Un {
                    op: uop,
                    ty: nt,
                    dst,
                    a: reg,
                });
                Ok(Val::Rt { reg: dst, ty })
            }
        }
    }

    fn addr_of(&mut self, env: &mut Env, operand: ExprId, span: Span) -> R<Val> {
        let ospan = self.span(env, operand);
        // `&f` of a function is the function itself.
        if let ExprKind::Ident(n) = &env.ast.exprs[operand].kind
            && env.find(n).is_none()
            && let Some(d) = self.lookup_decl(env.module, n)
            && let Some(DeclKind::Fn(f)) = self.mods[d.module]
                .ast
                .decls
                .get(d.index as usize)
                .map(|x| &x.kind)
        {
            if f.is_inline {
                let fspan = f.name.span;
                return Err(self.inline_fn_address(ospan, fspan));
            }
            return Ok(Val::Ct(Value::Func(d)));
        }
        if !self.is_place_expr(env, operand) {
            // A named constant gets a read-only copy in memory; a temporary has no address.
            let named = matches!(
                env.ast.exprs[operand].kind,
                ExprKind::Ident(_) | ExprKind::Field { .. } | ExprKind::Index { .. }
            );
            let v = self.expr(env, operand)?;
            return match v {
                Val::Ct(Value::Func(d)) => Ok(Val::Ct(Value::Func(d))),
                Val::Ct(c) if named => {
                    let ty = c.ty(&mut self.types);
                    if self.types.size_of(ty).is_none() || self.types.is_comptime_only(ty) {
                        let d = self.types.display(ty);
                        return Err(self.err(
                            codes::NOT_COMPTIME,
                            format!(
                                "a value of type {d} exists only at comptime and has no address"
                            ),
                            ospan,
                            "comptime-only",
                        ));
                    }
                    let g = self.const_global(&c, ty, ospan)?;
                    let pty = self.types.intern(Type::Ptr {
                        elem: ty,
                        is_const: true,
                    });
                    Ok(Val::Ct(Value::GlobalPtr {
                        global: g,
                        offset: 0,
                        ty: pty,
                    }))
                }
                _ => Err(self.report(
                    Diagnostic::error(
                        codes::BAD_OPERAND,
                        "cannot take the address of a temporary value",
                        ospan,
                        "this value is not stored anywhere",
                    )
                    .with_help("store it in a `var` first and take the address of that"),
                )),
            };
        }
        let saved = env.comptime;
        // Taking the address of a global is fine in comptime code: the address is a
        // link-time constant.
        if env.ctx != Ctx::Layout {
            env.comptime = false;
        }
        let p = self.place(env, operand);
        env.comptime = saved;
        match p? {
            Place::Mem {
                base,
                off,
                dyn_off,
                ty,
                mutable,
            } => {
                let pty = self.types.intern(Type::Ptr {
                    elem: ty,
                    is_const: !mutable,
                });
                match (base, dyn_off) {
                    (MemBase::Global(g), None) => Ok(Val::Ct(Value::GlobalPtr {
                        global: g,
                        offset: off,
                        ty: pty,
                    })),
                    (MemBase::Abs(a), None) => Ok(Val::Ct(Value::AbsPtr {
                        addr: a + off,
                        ty: pty,
                    })),
                    _ => {
                        if env.comptime {
                            return Err(self.not_comptime(span));
                        }
                        let r = self.place_addr(env, base, off, dyn_off, span)?;
                        Ok(Val::Rt { reg: r, ty: pty })
                    }
                }
            }
            Place::Ct { .. } => Err(self.report(
                Diagnostic::error(
                    codes::NOT_COMPTIME,
                    "a comptime variable has no address",
                    ospan,
                    "exists only while compiling",
                )
                .with_help("declare it with `var` to give it storage at runtime"),
            )),
            Place::Reg { .. } => Err(self.report(
                Diagnostic::error(
                    codes::BAD_OPERAND,
                    "cannot take the address of this value",
                    ospan,
                    "held in a register, not in memory",
                )
                .with_help("copy it into a local `var` and take the address of that"),
            )),
        }
    }

    pub(crate) fn inline_fn_address(&mut self, use_span: Span, decl_span: Span) -> Reported {
        self.report(
            Diagnostic::error(
                codes::BAD_OPERAND,
                "an `inline fn` has no address",
                use_span,
                "used as a function pointer here",
            )
            .with_label(decl_span, "declared `inline` here")
            .with_help("remove `inline` to call it through a pointer"),
        )
    }

    fn binary(
        &mut self,
        env: &mut Env,
        op: BinaryOp,
        lhs: ExprId,
        rhs: ExprId,
        span: Span,
    ) -> R<Val> {
        if matches!(op, BinaryOp::And | BinaryOp::Or) {
            return self.short_circuit(env, op, lhs, rhs, span);
        }
        let l = self.expr(env, lhs)?;
        let r = self.expr(env, rhs)?;
        let lspan = self.span(env, lhs);
        let rspan = self.span(env, rhs);
        self.binary_vals(env, op, l, r, span, lspan, rspan)
    }

    /// Applies a binary operator to two analysed operands.
    #[allow(clippy::too_many_arguments)]
    pub fn binary_vals(
        &mut self,
        env: &mut Env,
        op: BinaryOp,
        l: Val,
        r: Val,
        span: Span,
        lspan: Span,
        rspan: Span,
    ) -> R<Val> {
        let lt = self.val_ty(&l);
        let rt = self.val_ty(&r);
        let is_shift = matches!(op, BinaryOp::Shl | BinaryOp::Shr);
        // Shifts: the result has the left operand's type; the amount must be unsigned.
        let ty = if is_shift {
            if let Some((true, _)) = self.types.int_info(rt) {
                let d = self.types.display(rt);
                return Err(self.report(
                    Diagnostic::error(
                        codes::BAD_OPERAND,
                        "shift amount must be unsigned",
                        rspan,
                        format!("this has type {d}"),
                    )
                    .with_help("convert it with `@as(u16, ...)`"),
                ));
            }
            if !self.types.is_int(lt) || !self.types.is_int(rt) {
                let d = self
                    .types
                    .display(if self.types.is_int(lt) { rt } else { lt });
                return Err(self.err(
                    codes::BAD_OPERAND,
                    format!("cannot shift a value of type {d}"),
                    span,
                    "shifts need integers",
                ));
            }
            lt
        } else {
            self.peer_type(lt, rt, &l, &r, op, lspan, rspan)?
        };
        let is_cmp = matches!(
            op,
            BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
        );
        self.check_operator(op, ty, span)?;
        match (l, r) {
            (Val::Ct(a), Val::Ct(b)) => {
                let a = if is_shift {
                    a
                } else {
                    self.coerce_value(a, ty, lspan)?
                };
                let b = if is_shift {
                    b
                } else {
                    self.coerce_value(b, ty, rspan)?
                };
                Ok(Val::Ct(self.fold_binary(op, a, b, ty, span, rspan)?))
            }
            (l, r) => {
                if env.comptime {
                    let s = if matches!(l, Val::Rt { .. }) {
                        lspan
                    } else {
                        rspan
                    };
                    return Err(self.not_comptime(s));
                }
                let (lv, rv) = if is_shift {
                    let rv = match r {
                        Val::Ct(Value::Int(i, t)) if t == self.types.common.comptime_int => {
                            Val::Ct(Value::Int(i, lt))
                        }
                        other => other,
                    };
                    (l, rv)
                } else {
                    (
                        self.coerce(env, l, ty, lspan)?,
                        self.coerce(env, r, ty, rspan)?,
                    )
                };
                let a = self.materialize(env, lv, lspan)?;
                let b = self.materialize(env, rv, rspan)?;
                let Some(nt) = self.types.num_ty(ty) else {
                    let d = self.types.display(ty);
                    return Err(self.err(
                        codes::BAD_OPERAND,
                        format!(
                            "operator `{}` is not available at runtime for {d}",
                            op.symbol()
                        ),
                        span,
                        "here",
                    ));
                };
                let dst = self.fb(env).reg();
                if is_cmp {
                    let cop = match op {
                        BinaryOp::Eq => CmpOp::Eq,
                        BinaryOp::Ne => CmpOp::Ne,
                        BinaryOp::Lt => CmpOp::Lt,
                        BinaryOp::Le => CmpOp::Le,
                        BinaryOp::Gt => CmpOp::Gt,
                        _ => CmpOp::Ge,
                    };
                    self.fb(env).emit(Inst::Cmp {
                        op: cop,
                        ty: nt,
                        dst,
                        a,
                        b,
                    });
                    Ok(Val::Rt {
                        reg: dst,
                        ty: self.types.common.bool_,
                    })
                } else {
                    let bop = arith_op(op);
                    self.fb(env).emit(Inst::Bin {
                        op: bop,
                        ty: nt,
                        dst,
                        a,
                        b,
                    });
                    Ok(Val::Rt { reg: dst, ty })
                }
            }
        }
    }

    /// The common type of two operands (comptime literals adopt the other side's type).
    #[allow(clippy::too_many_arguments)]
    fn peer_type(
        &mut self,
        lt: TypeId,
        rt: TypeId,
        l: &Val,
        r: &Val,
        op: BinaryOp,
        lspan: Span,
        rspan: Span,
    ) -> R<TypeId> {
        if lt == rt {
            return Ok(lt);
        }
        let c = &self.types.common;
        let (ci, cf) = (c.comptime_int, c.comptime_float);
        let l_ct_num = (lt == ci || lt == cf) && matches!(l, Val::Ct(_));
        let r_ct_num = (rt == ci || rt == cf) && matches!(r, Val::Ct(_));
        if (lt == ci && rt == cf) || (lt == cf && rt == ci) {
            return Ok(cf);
        }
        if l_ct_num && self.types.is_numeric(rt) && !(lt == cf && self.types.is_int(rt)) {
            return Ok(rt);
        }
        if r_ct_num && self.types.is_numeric(lt) && !(rt == cf && self.types.is_int(lt)) {
            return Ok(lt);
        }
        let ld = self.types.display(lt);
        let rd = self.types.display(rt);
        let both_fixed = self.types.is_numeric(lt) && self.types.is_numeric(rt);
        let msg = if both_fixed {
            format!(
                "mixed-type arithmetic: `{}` between {ld} and {rd}",
                op.symbol()
            )
        } else {
            format!("operator `{}` cannot combine {ld} and {rd}", op.symbol())
        };
        let mut d = Diagnostic::error(
            codes::TYPE_MISMATCH,
            msg,
            rspan,
            format!("this has type {rd}"),
        )
        .with_label(lspan, format!("this has type {ld}"));
        if both_fixed {
            d = d.with_help(format!("CSL never converts between fixed-width types implicitly; convert one side, e.g. `@as({ld}, ...)`"));
        } else {
            let (le, re) = (
                matches!(self.types.get(lt), Type::Enum(_)),
                matches!(self.types.get(rt), Type::Enum(_)),
            );
            if (le && self.types.is_numeric(rt)) || (re && self.types.is_numeric(lt)) {
                let (e, n) = if le {
                    (ld.clone(), rd.clone())
                } else {
                    (rd.clone(), ld.clone())
                };
                d = d.with_help(format!(
                    "compare with a member such as `{e}.<member>`, or convert with `@as({}, ...)`",
                    if n.starts_with("comptime") {
                        e.clone()
                    } else {
                        n
                    }
                ));
            }
        }
        Err(self.report(d))
    }

    fn check_operator(&mut self, op: BinaryOp, ty: TypeId, span: Span) -> R<()> {
        let t = self.types.get(ty).clone();
        let numeric = self.types.is_numeric(ty);
        let int = self.types.is_int(ty);
        let ok = match op {
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div => numeric,
            BinaryOp::Rem
            | BinaryOp::Shl
            | BinaryOp::Shr
            | BinaryOp::BitAnd
            | BinaryOp::BitOr
            | BinaryOp::BitXor => int,
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => numeric,
            BinaryOp::Eq | BinaryOp::Ne => {
                numeric
                    || matches!(
                        t,
                        Type::Bool
                            | Type::ComptimeString
                            | Type::Color
                            | Type::Direction
                            | Type::DataTaskId
                            | Type::LocalTaskId
                            | Type::ControlTaskId
                            | Type::InputQueue
                            | Type::OutputQueue
                            | Type::UtId
                            | Type::Type
                            | Type::Ptr { .. }
                            | Type::ManyPtr { .. }
                            | Type::Enum(_)
                    )
            }
            BinaryOp::And | BinaryOp::Or => matches!(t, Type::Bool),
        };
        if ok {
            Ok(())
        } else {
            let d = self.types.display(ty);
            let mut dg = Diagnostic::error(
                codes::BAD_OPERAND,
                format!("operator `{}` cannot be applied to {d}", op.symbol()),
                span,
                format!("operands have type {d}"),
            );
            if matches!(t, Type::Enum(_)) {
                let tag = self
                    .types
                    .enum_def(ty)
                    .map_or("u16".to_string(), |e| self.types.display(e.tag));
                dg = dg.with_help(format!("enums support only `==` and `!=`; for arithmetic convert with `@as({tag}, ...)`"));
            }
            Err(self.report(dg))
        }
    }

    /// A binary operation on `comptime_int` operands of which at least one, or the
    /// result, is beyond 128 bits: computed exactly, up to [`MAX_COMPTIME_INT_BITS`].
    fn fold_big(
        &mut self,
        op: BinaryOp,
        a: &Value,
        b: &Value,
        ty: TypeId,
        span: Span,
        rspan: Span,
    ) -> R<Value> {
        use BinaryOp::*;
        use num_bigint::{BigInt, Sign};
        let (Some(x), Some(y)) = (a.as_bigint(), b.as_bigint()) else {
            return Err(Reported);
        };
        let r: BigInt = match op {
            Eq => return Ok(Value::Bool(x == y)),
            Ne => return Ok(Value::Bool(x != y)),
            Lt => return Ok(Value::Bool(x < y)),
            Le => return Ok(Value::Bool(x <= y)),
            Gt => return Ok(Value::Bool(x > y)),
            Ge => return Ok(Value::Bool(x >= y)),
            Add => x + y,
            Sub => x - y,
            Mul => x * y,
            Div | Rem if y.sign() == Sign::NoSign => {
                return Err(self.err(
                    codes::COMPTIME_DIV_ZERO,
                    "division by zero at comptime",
                    rspan,
                    "this is zero",
                ));
            }
            // Truncating, as for i128 (the remainder has the dividend's sign).
            Div => x / y,
            Rem => x % y,
            // Two's complement of infinite width.
            BitAnd => x & y,
            BitOr => x | y,
            BitXor => x ^ y,
            Shl | Shr => {
                if y.sign() == Sign::Minus {
                    return Err(self.err(
                        codes::OUT_OF_RANGE,
                        "negative shift amount",
                        rspan,
                        "must be non-negative",
                    ));
                }
                let n = usize::try_from(&y)
                    .ok()
                    .filter(|n| *n <= MAX_COMPTIME_INT_BITS as usize);
                if op == Shl && ty != self.types.common.comptime_int {
                    // A fixed-width left operand with a huge comptime amount.
                    let d = self.types.display(ty);
                    return Err(self.err(
                        codes::OUT_OF_RANGE,
                        format!("shift amount {y} is too large for {d}"),
                        rspan,
                        "too large",
                    ));
                }
                match (op, n) {
                    // Shifting right by more than the width leaves the sign.
                    (Shr, None) => BigInt::from(if x.sign() == Sign::Minus { -1 } else { 0 }),
                    (Shr, Some(n)) => x >> n,
                    (_, None) => return Err(self.ct_int_range(span, MAX_COMPTIME_INT_BITS)),
                    (_, Some(n)) => x << n,
                }
            }
            _ => return Err(Reported),
        };
        if r.bits() > MAX_COMPTIME_INT_BITS {
            return Err(self.ct_int_range(span, MAX_COMPTIME_INT_BITS));
        }
        Ok(Value::comptime_int(r, ty))
    }

    fn fold_binary(
        &mut self,
        op: BinaryOp,
        a: Value,
        b: Value,
        ty: TypeId,
        span: Span,
        rspan: Span,
    ) -> R<Value> {
        use BinaryOp::*;
        let cmp = |o: std::cmp::Ordering| -> bool {
            match op {
                Eq => o.is_eq(),
                Ne => o.is_ne(),
                Lt => o.is_lt(),
                Le => o.is_le(),
                Gt => o.is_gt(),
                _ => o.is_ge(),
            }
        };
        if matches!(a, Value::BigInt(_)) || matches!(b, Value::BigInt(_)) {
            return self.fold_big(op, &a, &b, ty, span, rspan);
        }
        Ok(match (a, b) {
            (Value::Int(x, xt), Value::Int(y, yt)) => match op {
                Eq | Ne | Lt | Le | Gt | Ge => Value::Bool(cmp(x.cmp(&y))),
                _ => {
                    let r = match op {
                        Add => x.checked_add(y),
                        Sub => x.checked_sub(y),
                        Mul => x.checked_mul(y),
                        Div | Rem => {
                            if y == 0 {
                                return Err(self.err(
                                    codes::COMPTIME_DIV_ZERO,
                                    "division by zero at comptime",
                                    rspan,
                                    "this is zero",
                                ));
                            }
                            if op == Div {
                                x.checked_div(y)
                            } else {
                                x.checked_rem(y)
                            }
                        }
                        BitAnd => Some(x & y),
                        BitOr => Some(x | y),
                        BitXor => Some(x ^ y),
                        Shl | Shr => {
                            if y < 0
                                || (yt != self.types.common.comptime_int
                                    && !self.types.int_fits(yt, y))
                            {
                                return Err(self.err(
                                    codes::OUT_OF_RANGE,
                                    "negative shift amount",
                                    rspan,
                                    "must be non-negative",
                                ));
                            }
                            if let Some((_, bits)) = self.types.int_info(ty)
                                && y >= i128::from(bits)
                            {
                                // The machine shifts by the amount modulo the width; a
                                // comptime-known amount that large is a mistake.
                                let d = self.types.display(ty);
                                return Err(self.report(
                                    Diagnostic::error(
                                        codes::OUT_OF_RANGE,
                                        format!("shift amount {y} is too large for {d}"),
                                        rspan,
                                        format!("must be less than {bits}"),
                                    )
                                    .with_help(format!("shift a {d} by 0 to {} bits", bits - 1)),
                                ));
                            }
                            match (op, self.types.int_info(ty)) {
                                // Fixed width: the bits shifted out are lost, as at run time.
                                (Shl, Some((signed, bits))) => {
                                    Some(wrap_int(wrap_int(x, false, bits) << y, signed, bits))
                                }
                                // comptime_int: exact (beyond 128 bits below).
                                (Shl, None) => exact_shl(x, y),
                                _ => Some(x >> y.min(127)),
                            }
                        }
                        _ => None,
                    };
                    match r {
                        Some(r) if self.types.int_fits(ty, r) => Value::Int(r, ty),
                        // A comptime_int beyond 128 bits: exactly, in a big integer.
                        None if ty == self.types.common.comptime_int => {
                            let (a, b) = (Value::Int(x, xt), Value::Int(y, yt));
                            return self.fold_big(op, &a, &b, ty, span, rspan);
                        }
                        _ => {
                            let d = self.types.display(ty);
                            return Err(self.err(
                                codes::OUT_OF_RANGE,
                                format!("comptime arithmetic overflows {d}"),
                                span,
                                "overflows",
                            ));
                        }
                    }
                }
            },
            (Value::Float(x, _), Value::Float(y, _)) => match op {
                Eq | Ne | Lt | Le | Gt | Ge => {
                    Value::Bool(x.partial_cmp(&y).is_some_and(cmp) || (op == Ne && x.is_nan()))
                }
                Add | Sub | Mul | Div => {
                    let r = match op {
                        Add => x + y,
                        Sub => x - y,
                        Mul => x * y,
                        _ => x / y,
                    };
                    let tt = self.types.get(ty).clone();
                    Value::Float(round_to(&tt, r), ty)
                }
                _ => return Err(Reported),
            },
            (Value::Bool(x), Value::Bool(y)) => Value::Bool(if op == Eq { x == y } else { x != y }),
            (a, b) => {
                let eq = a.canonical(&self.types) == b.canonical(&self.types);
                match op {
                    Eq => Value::Bool(eq),
                    Ne => Value::Bool(!eq),
                    _ => return Err(Reported),
                }
            }
        })
    }

    fn short_circuit(
        &mut self,
        env: &mut Env,
        op: BinaryOp,
        lhs: ExprId,
        rhs: ExprId,
        span: Span,
    ) -> R<Val> {
        let l = self.expr(env, lhs)?;
        let lspan = self.span(env, lhs);
        let bool_ = self.types.common.bool_;
        let l = self.coerce(env, l, bool_, lspan)?;
        match l {
            Val::Ct(Value::Bool(b)) => {
                // The skipped operand is not even analysed.
                if (op == BinaryOp::And && !b) || (op == BinaryOp::Or && b) {
                    return Ok(Val::Ct(Value::Bool(b)));
                }
                let r = self.expr(env, rhs)?;
                let rspan = self.span(env, rhs);
                self.coerce(env, r, bool_, rspan)
            }
            Val::Ct(_) => Err(Reported),
            Val::Rt { reg, .. } => {
                let result = self.fb(env).reg();
                self.fb(env).emit(Inst::Mov {
                    dst: result,
                    src: reg,
                });
                let rhs_b = self.fb(env).block();
                let join = self.fb(env).block();
                let term = if op == BinaryOp::And {
                    Term::Branch {
                        cond: reg,
                        then: rhs_b,
                        otherwise: join,
                    }
                } else {
                    Term::Branch {
                        cond: reg,
                        then: join,
                        otherwise: rhs_b,
                    }
                };
                self.fb(env).terminate(term);
                self.fb(env).switch_to(rhs_b);
                let r = self.expr(env, rhs)?;
                let rspan = self.span(env, rhs);
                let r = self.coerce(env, r, bool_, rspan)?;
                let rr = self.materialize(env, r, span)?;
                self.fb(env).emit(Inst::Mov {
                    dst: result,
                    src: rr,
                });
                self.fb(env).terminate(Term::Jump(join));
                self.fb(env).switch_to(join);
                Ok(Val::Rt {
                    reg: result,
                    ty: bool_,
                })
            }
        }
    }

    // ----- fields, initialisers ----------------------------------------------------------

    pub(crate) fn unknown_member_of_module(
        &mut self,
        m: ModId,
        name: &str,
        span: Span,
    ) -> Reported {
        let names = self.decl_names(m);
        let mut d = Diagnostic::error(
            codes::UNKNOWN_MEMBER,
            format!("module has no member `{name}`"),
            span,
            "unknown member",
        );
        if let Some(s) = did_you_mean(name, names.iter().map(String::as_str)) {
            d = d.with_help(format!("did you mean `{s}`?"));
        }
        self.report(d)
    }

    /// `if (c) a else b` as an expression. A runtime condition evaluates both arms in
    /// their own blocks and merges their values (see [`Sema::merge_arms`]).
    pub(crate) fn if_expr(
        &mut self,
        env: &mut Env,
        cond: ExprId,
        then: ExprId,
        otherwise: ExprId,
        span: Span,
        hint: Option<TypeId>,
    ) -> R<Val> {
        let c = self.expr(env, cond)?;
        let cspan = self.span(env, cond);
        let bool_ = self.types.common.bool_;
        let c = self.coerce(env, c, bool_, cspan)?;
        match c {
            Val::Ct(Value::Bool(b)) => self.expr_hint(env, if b { then } else { otherwise }, hint),
            Val::Ct(_) => Err(Reported),
            Val::Rt { reg, .. } => {
                let tb = self.fb(env).block();
                let eb = self.fb(env).block();
                let join = self.fb(env).block();
                self.fb(env).terminate(Term::Branch {
                    cond: reg,
                    then: tb,
                    otherwise: eb,
                });
                let mut arms = Vec::new();
                for (blk, e) in [(tb, then), (eb, otherwise)] {
                    self.fb(env).switch_to(blk);
                    let v = self.expr_hint(env, e, hint)?;
                    let reachable = self.fb(env).cur_reachable();
                    let block = self.fb(env).cur;
                    arms.push(Arm {
                        block,
                        val: v,
                        span: self.span(env, e),
                        reachable,
                    });
                }
                self.merge_arms(env, arms, join, hint, span)
            }
        }
    }
}

fn arith_op(op: BinaryOp) -> BinOp {
    match op {
        BinaryOp::Add => BinOp::Add,
        BinaryOp::Sub => BinOp::Sub,
        BinaryOp::Mul => BinOp::Mul,
        BinaryOp::Div => BinOp::Div,
        BinaryOp::Rem => BinOp::Rem,
        BinaryOp::Shl => BinOp::Shl,
        BinaryOp::Shr => BinOp::Shr,
        BinaryOp::BitAnd => BinOp::And,
        BinaryOp::BitOr => BinOp::Or,
        _ => BinOp::Xor,
    }
}

/// The largest `comptime_int` the compiler computes, in bits: a bound on memory and time
/// (a chain of squarings would otherwise double the size at each step), far beyond any
/// value a program can store.
pub const MAX_COMPTIME_INT_BITS: u64 = 1 << 16;

/// `x << y` exactly in `i128`, or `None` if the result does not fit (`y` >= 0).
pub fn exact_shl(x: i128, y: i128) -> Option<i128> {
    if x == 0 {
        return Some(0);
    }
    let y = u32::try_from(y).ok().filter(|&y| y < 128)?;
    let r = x << y;
    (r >> y == x).then_some(r)
}

/// Wraps an integer to a fixed width.
pub fn wrap_int(v: i128, signed: bool, bits: u8) -> i128 {
    if bits >= 127 {
        return v;
    }
    let m = 1i128 << bits;
    let r = v.rem_euclid(m);
    if signed && r >= m / 2 { r - m } else { r }
}

impl Sema {
    /// Rounds the comptime number `v` to the float type `ty`, reporting a finite value
    /// that becomes infinite (too large for the type) instead of silently storing `inf`.
    pub(crate) fn round_checked(&mut self, v: f64, ty: TypeId, span: Span) -> R<f64> {
        let r = round_to(self.types.get(ty), v);
        if v.is_finite() && !r.is_finite() {
            let d = self.types.display(ty);
            let max = match self.types.get(ty) {
                Type::F16 => "65504",
                _ => "about 3.4e38",
            };
            return Err(self.report(
                Diagnostic::error(
                    codes::OUT_OF_RANGE,
                    format!("{v:e} does not fit in {d}"),
                    span,
                    format!("out of range for {d}"),
                )
                .with_help(format!("the largest finite {d} is {max}")),
            ));
        }
        Ok(r)
    }
}

/// Rounds a float to the precision of a float type.
pub fn round_to(t: &Type, v: f64) -> f64 {
    match t {
        Type::F32 => v as f32 as f64,
        Type::F16 => half::f16::from_f64(v).to_f64(),
        _ => v,
    }
}

fn int_range_help(types: &super::types::TypeStore, ty: TypeId) -> String {
    match types.int_info(ty) {
        Some((true, bits)) => format!(
            "{} holds {} to {}",
            types.display(ty),
            -(1i128 << (bits - 1)),
            (1i128 << (bits - 1)) - 1
        ),
        Some((false, bits)) => format!("{} holds 0 to {}", types.display(ty), (1i128 << bits) - 1),
        None => String::new(),
    }
}

fn set_path(slot: &mut Value, path: &[usize], v: Value) {
    match path.split_first() {
        None => *slot = v,
        Some((&i, rest)) => match slot {
            Value::Array(_, elems) | Value::Record(_, elems) => {
                if let Some(e) = Rc::make_mut(elems).get_mut(i) {
                    set_path(e, rest, v);
                }
            }
            Value::Struct(fields) => {
                if let Some((_, e)) = Rc::make_mut(fields).get_mut(i) {
                    set_path(e, rest, v);
                }
            }
            _ => {}
        },
    }
}

/// Width of a load or store for a scalar type.
pub fn width_of(n: NumTy) -> Width {
    n.width()
}

/// A big integer as the nearest `f64` (infinite beyond its range).
pub fn bigint_to_f64(b: &num_bigint::BigInt) -> f64 {
    // Decimal text parses correctly rounded, and overflows to infinity.
    b.to_string().parse().unwrap_or(f64::INFINITY)
}

/// An integral, finite `f64` exactly as a big integer (`None` for NaN and infinities).
pub fn bigint_from_f64(f: f64) -> Option<num_bigint::BigInt> {
    if !f.is_finite() || f.fract() != 0.0 {
        return None;
    }
    let bits = f.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64;
    if exp == 0 {
        // Zero or subnormal: an integral one is zero.
        return Some(num_bigint::BigInt::from(0));
    }
    let mant = num_bigint::BigInt::from((bits & ((1u64 << 52) - 1)) | (1u64 << 52));
    let shift = exp - 1075;
    let mag = if shift >= 0 {
        mant << shift as usize
    } else {
        mant >> (-shift) as usize
    };
    Some(if f < 0.0 { -mag } else { mag })
}
