//! Expressions: one walker for comptime evaluation and runtime lowering.
//!
//! [`Sema::expr`] returns a [`Val`]: either a comptime [`Value`] or a runtime register.
//! Operations whose operands are all comptime-known fold; otherwise they emit IR into the
//! environment's [`FnBuilder`]. In a comptime environment (no builder) a runtime operand
//! is an error ("runtime value used at comptime").
//!
//! This module holds the environment and value types and the expression dispatch; its
//! submodules hold places ([`place`]), indexing ([`index`]), coercions ([`coerce`]) and the
//! unary ([`unary`]) and binary ([`binary`]) operators.

mod binary;
mod coerce;
mod index;
mod place;
mod unary;

pub use coerce::{
    MAX_COMPTIME_INT_BITS, bigint_from_f64, bigint_to_f64, exact_shl, round_to, width_of, wrap_int,
};

use super::lower::FnBuilder;
use super::module::{DeclRef, ModId};
use super::types::{Type, TypeId};
use super::value::Value;
use super::{Ctx, R, Reported, Sema};
use crate::diag::{Diagnostic, codes};
use crate::ir::{Inst, VReg};
use crate::source::Span;
use crate::symbol::Symbol;
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
    pub label: Option<Symbol>,
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
    pub scopes: Vec<Vec<(Symbol, Local)>>,
    /// The function being lowered (runtime environments only).
    pub fb: Option<FnBuilder>,
    /// Enclosing runtime loops.
    pub loops: Vec<LoopCtx>,
    /// The return type of the current function.
    pub ret_ty: Option<TypeId>,
    /// Labels of enclosing comptime loops (None = unlabelled), for `break` checks.
    pub ct_loops: Vec<Option<Symbol>>,
    /// Labels of enclosing labelled blocks.
    pub ct_labels: Vec<Symbol>,
    /// Names of locals whose address is taken somewhere in the body (they live in the
    /// frame instead of a register).
    pub addr_taken: Rc<HashSet<Symbol>>,
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
    pub fn bind(&mut self, name: Symbol, l: Local) {
        if let Some(s) = self.scopes.last_mut() {
            s.push((name, l));
        }
    }

    fn find(&self, name: Symbol) -> Option<(usize, usize)> {
        for (si, s) in self.scopes.iter().enumerate().rev() {
            if let Some(li) = s.iter().rposition(|(n, _)| *n == name) {
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
            .map(|(n, _)| n.to_string())
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
    Mem(MemPlace),
}

/// An object in memory: its address is `base` plus a constant and an optional dynamic
/// byte offset.
#[derive(Clone, Copy, Debug)]
pub struct MemPlace {
    /// Base.
    pub base: MemBase,
    /// Constant byte offset.
    pub off: u32,
    /// Dynamic byte offset.
    pub dyn_off: Option<VReg>,
    /// Type of the designated object.
    pub ty: TypeId,
    /// Assignable.
    pub mutable: bool,
}

impl MemPlace {
    /// The object of type `ty` at `base` itself (no offset).
    pub fn at(base: MemBase, ty: TypeId, mutable: bool) -> MemPlace {
        MemPlace {
            base,
            off: 0,
            dyn_off: None,
            ty,
            mutable,
        }
    }
}

impl Place {
    /// [`MemPlace::at`] as a place.
    pub fn mem(base: MemBase, ty: TypeId, mutable: bool) -> Place {
        Place::Mem(MemPlace::at(base, ty, mutable))
    }
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

    /// Stops with [`Sema::not_comptime`] at `span` when analysing comptime code: what is
    /// there happens only at run time.
    pub(crate) fn runtime_only(&mut self, env: &Env, span: Span) -> R<()> {
        if env.comptime {
            return Err(self.not_comptime(span));
        }
        Ok(())
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
                Err(self.err_with_type(codes::TYPE_MISMATCH, "expected an integer", span, ty))
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
                Ok(()) => self.expr_node(env, e, None),
                Err(r) => Err(r),
            }
        };
        env.depth -= 1;
        r
    }

    /// Analyses expression `e`; `hint` is the type the arms of an `if`, `switch` or
    /// labelled block should take (see [`Sema::expr_hint`]).
    fn expr_node(&mut self, env: &mut Env, e: ExprId, hint: Option<TypeId>) -> R<Val> {
        let ast = env.ast.clone();
        let node = &ast.exprs[e];
        let span = node.span;
        let c = &self.types.common;
        match &node.kind {
            // Literals that fit in `i128` (all but the largest) need no big integer.
            ExprKind::Int(v) => Ok(Val::Ct(match i128::try_from(*v) {
                Ok(i) => Value::Int(i, c.comptime_int),
                Err(_) => Value::comptime_int(num_bigint::BigInt::from(*v), c.comptime_int),
            })),
            ExprKind::Float(v) => Ok(Val::Ct(Value::Float(*v, c.comptime_float))),
            ExprKind::Str(s) => Ok(Val::Ct(Value::Str(Rc::from(s.as_str())))),
            ExprKind::Bool(b) => Ok(Val::Ct(Value::Bool(*b))),
            ExprKind::Ident(name) => self.ident(env, *name, span),
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
            } => self.if_expr(env, *cond, *then, *otherwise, span, hint),
            ExprKind::Switch { scrutinee, cases } => {
                self.switch(env, *scrutinee, cases, span, true, hint)
            }
            ExprKind::Block(block) => self.block_expr(env, block, span, hint),
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
                Ok(Val::Ct(Value::Type(self.types.ptr(elem, *is_const))))
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
            ExprKind::If { .. } | ExprKind::Switch { .. } | ExprKind::Block(_) => {
                self.expr_node(env, e, hint)
            }
            ExprKind::AnonInit(list)
                if matches!(self.types.get(h), Type::Struct(_) | Type::Array { .. }) =>
            {
                self.init_list(env, h, list, span)
            }
            _ => self.expr(env, e),
        }
    }

    // ----- names -------------------------------------------------------------------------

    fn ident(&mut self, env: &mut Env, name: Symbol, span: Span) -> R<Val> {
        if self.index.is_none() {
            return self.ident_val(env, name, span);
        }
        let r = self.ident_val(env, name, span);
        if let Ok(v) = &r {
            let def = match env.find(name) {
                Some(_) => None,
                None => self
                    .lookup_decl(env.module, name)
                    .and_then(|d| super::decl_name_span(&self.mods[d.module].ast, d.index)),
            };
            self.index_val(span, def, v);
        }
        r
    }

    fn ident_val(&mut self, env: &mut Env, name: Symbol, span: Span) -> R<Val> {
        if let Some((si, li)) = env.find(name) {
            return match &env.scopes[si][li].1 {
                Local::Value(v) | Local::CtVar(v) => Ok(Val::Ct(v.clone())),
                Local::Reg { reg, ty, .. } => {
                    self.runtime_only(env, span)?;
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
        if let Some(v) = self.predefined(&name) {
            return Ok(Val::Ct(v));
        }
        Err(self.undefined(env, &name, span))
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
        let d = Diagnostic::error(
            codes::UNDEFINED_NAME,
            format!("cannot find `{name}` in this scope"),
            span,
            "not declared",
        )
        .with_suggestion(name, cands.iter().map(String::as_str), |s| {
            format!("a declaration with a similar name exists: `{s}`")
        });
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
        self.fb(env).bin(op, ty, dst, a, b);
        dst
    }

    pub(crate) fn unknown_member_of_module(
        &mut self,
        m: ModId,
        name: &str,
        span: Span,
    ) -> Reported {
        let names = self.decl_names(m);
        let msg = format!("module has no member `{name}`");
        let d = super::structs::unknown_member(msg, span, "unknown member", name, &names, "");
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
        let bool_ = self.types.common.bool_;
        match self.expr_as(env, cond, bool_)? {
            Val::Ct(Value::Bool(b)) => self.expr_hint(env, if b { then } else { otherwise }, hint),
            Val::Ct(_) => Err(Reported),
            Val::Rt { reg, .. } => {
                let tb = self.fb(env).block();
                let eb = self.fb(env).block();
                let join = self.fb(env).block();
                self.fb(env).branch(reg, tb, eb);
                let mut arms = Vec::new();
                for (blk, e) in [(tb, then), (eb, otherwise)] {
                    self.fb(env).switch_to(blk);
                    let v = self.expr_hint(env, e, hint)?;
                    arms.push(self.arm_here(env, v, e));
                }
                self.merge_arms(env, arms, join, hint, span)
            }
        }
    }
}
