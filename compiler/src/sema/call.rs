//! Calls, function and task lowering, and globals.
//!
//! * A call runs at **comptime** when the caller is comptime or the callee returns a
//!   comptime-only type (then every argument must be comptime-known).
//! * Otherwise an `inline fn`, or a function returning an aggregate (array or struct), is
//!   **inlined**: its body is lowered into the caller, with
//!   comptime-known arguments staying comptime inside, and `return` joining like a
//!   labelled block's `break`.
//! * Any other call is a runtime `call` of a **function instance**: one lowered function
//!   per declaration and distinct tuple of comptime arguments (`comptime` parameters,
//!   parameters of comptime-only types, and `anytype` parameters given a comptime-only
//!   value) and `anytype` argument types. A plain function has one instance.
//! * A runtime value of type `*const fn(...) R` is called with `call_ind`.
//! * Aggregates (arrays, structs) and descriptors are passed by address and copied into
//!   the callee's frame, so parameters have value semantics. Returning them works by
//!   inlining (above), which keeps the calling convention free of hidden result
//!   pointers; such functions cannot recurse on runtime values or be called indirectly.

use super::eval::{Arm, Env, INLINE_RETURN, Local, LoopCtx, Val};
use super::lower::FnBuilder;
use super::module::DeclRef;
use super::stmt::Flow;
use super::types::{Type, TypeId};
use super::value::Value;
use super::{Ctx, R, Reported, Sema};
use crate::diag::{Diagnostic, codes};
use crate::ir::{FuncId, Global, GlobalId, Inst, Reloc, Term, VReg};
use crate::source::Span;
use crate::symbol::Symbol;
use crate::syntax::ast::{
    Ast, Block, DeclKind, ExprId, ExprKind, FnDecl, FnParam, InitList, Stmt, StmtKind, SwitchItem,
    UnaryOp,
};
use cranelift_entity::EntityRef;
use std::collections::HashSet;
use std::rc::Rc;

/// Deepest comptime call nesting before we report runaway recursion.
const MAX_COMPTIME_DEPTH: u32 = 200;

/// How one parameter of a function instance is bound.
#[derive(Clone, Debug)]
pub enum ParamBind {
    /// A comptime parameter: its value.
    Ct(Value),
    /// A runtime parameter of this type.
    Rt(TypeId),
}

/// An analysed call argument.
struct Arg {
    name: Symbol,
    val: Val,
    ty: TypeId,
    /// Bound at comptime in every instance.
    comptime: bool,
    span: Span,
}

impl Sema {
    /// `callee(args)`.
    pub fn call(&mut self, env: &mut Env, callee: ExprId, args: &[ExprId], span: Span) -> R<Val> {
        let cspan = self.span(env, callee);
        let cv = self.expr(env, callee)?;
        match cv {
            Val::Ct(Value::Func(d)) => self.call_fn(env, d, args, span),
            Val::Ct(Value::Task(d)) => {
                let ast = self.mods[d.module].ast.clone();
                let decl_span = super::decl_name_span(&ast, d.index).unwrap_or(cspan);
                Err(self.report(
                    Diagnostic::error(
                        codes::BAD_TASK,
                        "tasks cannot be called",
                        cspan,
                        "this is a task",
                    )
                    .with_label(decl_span, "declared as a task here")
                    .with_help("bind it to a task id and start it with `@activate(id)`"),
                ))
            }
            Val::Rt { reg, ty } if self.fn_ptr_sig(ty).is_some() => {
                self.call_indirect(env, reg, ty, args, span, cspan)
            }
            other => {
                let ty = self.val_ty(&other);
                Err(
                    self.err_ty(codes::NOT_CALLABLE, ty, cspan, "not a function", |d| {
                        format!("a value of type {d} cannot be called")
                    }),
                )
            }
        }
    }

    /// The parameter and return types of a function pointer type.
    pub(crate) fn fn_ptr_sig(&self, ty: TypeId) -> Option<(Vec<TypeId>, TypeId)> {
        match self.types.get(ty) {
            Type::Ptr { elem, .. } => match self.types.get(*elem) {
                Type::Fn { params, ret } => Some((params.clone(), *ret)),
                _ => None,
            },
            _ => None,
        }
    }

    fn call_indirect(
        &mut self,
        env: &mut Env,
        fptr: VReg,
        ty: TypeId,
        args: &[ExprId],
        span: Span,
        cspan: Span,
    ) -> R<Val> {
        let Some((ptys, ret)) = self.fn_ptr_sig(ty) else {
            return Err(Reported);
        };
        if ptys.len() != args.len() {
            let d = self.types.display(ty);
            let dg = arg_count("this function pointer", ptys.len(), args.len(), span);
            return Err(self.report(dg.with_label(cspan, format!("this has type {d}"))));
        }
        self.runtime_only(env, cspan)?;
        let mut regs = Vec::new();
        for (&a, &pt) in args.iter().zip(&ptys) {
            let v = self.expr_hint(env, a, Some(pt))?;
            let s = self.span(env, a);
            let v = self.coerce(env, v, pt, s)?;
            regs.push(self.materialize(env, v, s)?);
        }
        Ok(self.emit_call(env, ret, |dst| Inst::CallInd {
            fptr,
            args: regs,
            dst,
        }))
    }

    /// Emits the call `call(dst)`: `dst` is a new register for the result, or `None` when
    /// `ret` is void.
    fn emit_call(
        &mut self,
        env: &mut Env,
        ret: TypeId,
        call: impl FnOnce(Option<VReg>) -> Inst,
    ) -> Val {
        if ret == self.types.common.void {
            self.fb(env).emit(call(None));
            Val::Ct(Value::Void)
        } else {
            let dst = self.fb(env).reg();
            self.fb(env).emit(call(Some(dst)));
            Val::Rt { reg: dst, ty: ret }
        }
    }

    fn fn_decl(&self, d: DeclRef) -> Option<FnDecl> {
        match self.mods[d.module]
            .ast
            .decls
            .get(d.index as usize)
            .map(|x| &x.kind)
        {
            Some(DeclKind::Fn(f)) => Some(f.clone()),
            _ => None,
        }
    }

    fn call_fn(&mut self, env: &mut Env, d: DeclRef, args: &[ExprId], span: Span) -> R<Val> {
        let Some(f) = self.fn_decl(d) else {
            return Err(Reported);
        };
        if f.params.len() != args.len() {
            let callee = format!("`{}`", f.name.name);
            let dg = arg_count(&callee, f.params.len(), args.len(), span);
            return Err(self.report(dg.with_label(f.name.span, "declared here")));
        }
        // Analyse the arguments in order, binding parameters in a signature environment so
        // later parameter types and the return type can refer to earlier parameters.
        let ast = self.mods[d.module].ast.clone();
        let mut senv = Env::comptime(d.module, ast.clone(), Ctx::Comptime);
        let mut bound: Vec<Arg> = Vec::new();
        for (p, &a) in f.params.iter().zip(args) {
            let aspan = self.span(env, a);
            let declared = match p.ty {
                Some(t) => Some(self.eval_type(&mut senv, t)?),
                None => None,
            };
            let ct_param =
                p.is_comptime || declared.is_some_and(|t| self.types.is_comptime_only(t));
            let v = self.expr_hint(env, a, declared)?;
            if ct_param && matches!(v, Val::Rt { .. }) {
                let why = if p.is_comptime {
                    "declared `comptime` here".to_string()
                } else {
                    let d2 = declared.map_or(String::new(), |t| self.types.display(t));
                    format!("{d2} exists only at comptime")
                };
                return Err(self.report(
                    Diagnostic::error(
                        codes::NOT_COMPTIME,
                        format!("argument `{}` must be known at comptime", p.name.name),
                        aspan,
                        "this is only known at runtime",
                    )
                    .with_label(p.span, why)
                    .with_help("pass a constant, a param or a comptime expression"),
                ));
            }
            let (v, t) = match declared {
                Some(t) => (self.coerce(env, v, t, aspan)?, t),
                None => {
                    let t = self.val_ty(&v);
                    (v, t)
                }
            };
            let comptime = ct_param || (p.ty.is_none() && self.types.is_comptime_only(t));
            match &v {
                Val::Ct(c) if comptime => senv.bind(p.name.name, Local::Value(c.clone())),
                // A stand-in: the signature may use its type (`@type_of(x)`), never its value.
                _ => senv.bind(p.name.name, Local::value(VReg::new(0), t)),
            }
            bound.push(Arg {
                name: p.name.name,
                val: v,
                ty: t,
                comptime,
                span: aspan,
            });
        }
        let ret = self.eval_type(&mut senv, f.ret)?;
        if env.comptime || self.types.is_comptime_only(ret) {
            let mut vals = Vec::new();
            for b in bound {
                match b.val {
                    Val::Ct(c) => vals.push((b.name, c)),
                    Val::Rt { .. } => {
                        let d2 = self.types.display(ret);
                        return Err(self.report(
                            Diagnostic::error(
                                codes::NOT_COMPTIME,
                                "runtime value used at comptime",
                                b.span,
                                "this is only known at runtime",
                            )
                            .with_note(format!(
                                "`{}` returns {d2}, so every call of it runs at comptime",
                                f.name.name
                            )),
                        ));
                    }
                }
            }
            return self.call_comptime(env, d, &f, vals, ret, span);
        }
        // A struct or array result is returned by value: the call is expanded in the
        // caller, so the result lands in the caller's frame (no hidden result pointer in
        // the calling convention).
        if f.is_inline || self.types.is_mem_type(ret) {
            return self.inline_call(env, d, &f, bound, ret, span);
        }
        let binds: Vec<ParamBind> = bound
            .iter()
            .map(|b| match (&b.val, b.comptime) {
                (Val::Ct(c), true) => ParamBind::Ct(c.clone()),
                _ => ParamBind::Rt(b.ty),
            })
            .collect();
        let func = self.fn_instance(d, &f, &binds, ret, span)?;
        let mut regs = Vec::new();
        for b in bound.into_iter().filter(|b| !b.comptime) {
            regs.push(self.materialize(env, b.val, b.span)?);
        }
        Ok(self.emit_call(env, ret, |dst| Inst::Call {
            func,
            args: regs,
            dst,
        }))
    }

    /// Runs a call at comptime with every parameter bound to a value.
    fn call_comptime(
        &mut self,
        env: &mut Env,
        d: DeclRef,
        f: &FnDecl,
        args: Vec<(Symbol, Value)>,
        ret_ty: TypeId,
        span: Span,
    ) -> R<Val> {
        let Some(body) = &f.body else {
            return Err(self.err(
                codes::NOT_COMPTIME,
                "extern functions cannot run at comptime",
                span,
                "called at comptime here",
            ));
        };
        if self.depth >= MAX_COMPTIME_DEPTH {
            return Err(self.err(
                codes::COMPTIME_FUEL,
                "comptime recursion is too deep",
                span,
                "called here",
            ));
        }
        self.stack_guard(span, "comptime calls")?;
        let ctx = match env.ctx {
            Ctx::Layout | Ctx::TopComptime => env.ctx,
            _ => Ctx::Comptime,
        };
        let mut cenv = Env::comptime(d.module, self.mods[d.module].ast.clone(), ctx);
        let descr: Vec<String> = args.iter().map(|(_, v)| v.describe(&self.types)).collect();
        for (n, v) in args {
            cenv.bind(n, Local::Value(v));
        }
        cenv.ret_ty = Some(ret_ty);
        self.depth += 1;
        let flow = self.exec_block(&mut cenv, body);
        self.depth -= 1;
        match flow? {
            Flow::Return(Some(v)) => {
                if let Value::Type(t) = v {
                    // A generic type is named after the call that made it: `Pair(i16)`.
                    self.types
                        .name_type(t, &format!("{}({})", f.name.name, descr.join(", ")));
                }
                Ok(Val::Ct(v))
            }
            Flow::Return(None) | Flow::Normal if ret_ty == self.types.common.void => {
                Ok(Val::Ct(Value::Void))
            }
            _ => Err(
                self.err_ty(codes::BAD_RETURN, ret_ty, span, "in this call", |d2| {
                    format!("function returned without a value of type {d2}")
                }),
            ),
        }
    }

    /// Expands a call of an `inline fn` into the caller.
    fn inline_call(
        &mut self,
        env: &mut Env,
        d: DeclRef,
        f: &FnDecl,
        args: Vec<Arg>,
        ret: TypeId,
        span: Span,
    ) -> R<Val> {
        let Some(body) = &f.body else {
            return Err(Reported);
        };
        if self.depth >= MAX_COMPTIME_DEPTH {
            let diag = if f.is_inline {
                Diagnostic::error(
                    codes::COMPTIME_FUEL,
                    "inline calls nest too deeply",
                    span,
                    "called here",
                )
            } else {
                let shown = self.types.display(ret);
                Diagnostic::error(
                    codes::COMPTIME_FUEL,
                    format!(
                        "`{}` returns {shown} by value and recurses on a runtime value",
                        f.name.name
                    ),
                    span,
                    "called here",
                )
                .with_note("calls of functions that return a struct or array are expanded where they are made, so runtime recursion never ends")
                .with_help("return the result through a pointer parameter instead")
            };
            return Err(self.report(diag));
        }
        self.stack_guard(span, "inline calls")?;
        let errors_before = self.diags.iter().filter(|d| d.is_error()).count();
        let Some(fb) = env.fb.take() else {
            return Err(Reported);
        };
        let ast = self.mods[d.module].ast.clone();
        let mut ienv = Env::runtime(d.module, ast.clone(), fb, ret);
        ienv.inline_ret = true;
        ienv.addr_taken = Rc::new(addr_taken_names(&ast, body));
        let exit = self.fb(&mut ienv).block();
        ienv.loops.push(LoopCtx {
            label: Some(Symbol::intern(INLINE_RETURN)),
            exit,
            cont: exit,
            breaks: Some(Vec::new()),
            hint: Some(ret),
        });
        for a in args {
            let _ = self.bind_param(&mut ienv, a.name, a.val, a.ty, a.span);
        }
        self.depth += 1;
        let _ = self.exec_block(&mut ienv, body);
        self.depth -= 1;
        let mut arms: Vec<Arm> = ienv.loops.pop().and_then(|c| c.breaks).unwrap_or_default();
        let void = self.types.common.void;
        let mut result = Ok(());
        if self.fb(&mut ienv).cur_reachable() {
            if ret == void {
                let cur = self.fb(&mut ienv).cur;
                arms.push(Arm {
                    block: cur,
                    val: Val::Ct(Value::Void),
                    span,
                    reachable: true,
                });
            } else {
                result = Err(self.missing_return(body.span, ret));
            }
        }
        // An error in the body leaves its value unknown; do not guess one.
        let failed = self.diags.iter().filter(|d| d.is_error()).count() > errors_before;
        let r = result.and_then(|()| {
            if failed {
                Err(Reported)
            } else {
                self.merge_arms(&mut ienv, arms, exit, Some(ret), span)
            }
        });
        env.fb = ienv.fb.take();
        r
    }

    /// Binds a runtime parameter (or an inlined call's argument) in a function body:
    /// comptime values stay comptime, aggregates are copied into the frame, scalars whose
    /// address is taken live in the frame, other scalars in a register.
    fn bind_param(
        &mut self,
        env: &mut Env,
        name: Symbol,
        val: Val,
        ty: TypeId,
        span: Span,
    ) -> R<()> {
        match val {
            Val::Ct(c) => env.bind(name, Local::Value(c)),
            Val::Rt { reg, .. } if self.types.is_mem_type(ty) => {
                let size = self.types.size_of(ty).unwrap_or(0) as u32;
                let align = self.types.align_of(ty).unwrap_or(1) as u32;
                let off = self.fb(env).frame_slot(size, align);
                let dst = self.fb(env).reg();
                self.fb(env).emit(Inst::FrameAddr { dst, off });
                self.emit_copy(env, dst, reg, ty);
                env.bind(
                    name,
                    Local::Frame {
                        off,
                        ty,
                        mutable: false,
                    },
                );
            }
            Val::Rt { reg, .. } if env.addr_taken.contains(&name) => {
                let Some(nt) = self.types.num_ty(ty) else {
                    return Err(Reported);
                };
                let size = nt.size();
                let off = self.fb(env).frame_slot(size, size.max(1));
                let dst = self.fb(env).reg();
                self.fb(env).emit(Inst::FrameAddr { dst, off });
                self.fb(env).emit(Inst::Store {
                    w: nt.width(),
                    addr: dst,
                    src: reg,
                });
                env.bind(
                    name,
                    Local::Frame {
                        off,
                        ty,
                        mutable: false,
                    },
                );
            }
            Val::Rt { reg, .. } => {
                let copy = self.fb(env).copy(reg);
                env.bind(name, Local::value(copy, ty));
            }
        }
        let _ = span;
        Ok(())
    }

    /// The lowered instance of function `d` for these parameter bindings (once per
    /// program and distinct bindings).
    fn fn_instance(
        &mut self,
        d: DeclRef,
        f: &FnDecl,
        binds: &[ParamBind],
        ret: TypeId,
        span: Span,
    ) -> R<FuncId> {
        let generic = binds.iter().any(|b| matches!(b, ParamBind::Ct(_)))
            || f.params.iter().any(|p| p.ty.is_none());
        let key: Vec<String> = binds
            .iter()
            .map(|b| match b {
                ParamBind::Ct(v) => v.canonical(&self.types),
                ParamBind::Rt(t) => format!("rt:{}", t.index()),
            })
            .collect();
        let key = key.join(";");
        let cached = if generic {
            self.mods[d.module]
                .mono
                .get(&(d.index, key.clone()))
                .copied()
        } else {
            self.mods[d.module].funcs.get(&d.index).copied()
        };
        if let Some(func) = cached {
            return Ok(func);
        }
        let Some(body) = f.body.clone() else {
            return Err(self.err(
                codes::UNSUPPORTED,
                "extern functions are not supported yet",
                f.name.span,
                "declared extern here",
            ));
        };
        self.pe_prog(
            "runtime functions can only be called from PE code",
            span,
            "called here",
        )?;
        let ast = self.mods[d.module].ast.clone();
        let mut ptys = Vec::new();
        for (p, b) in f.params.iter().zip(binds) {
            if let ParamBind::Rt(t) = b {
                let t = *t;
                if self.types.is_comptime_only(t)
                    || (self.types.num_ty(t).is_none() && !self.types.is_mem_type(t))
                    || self.types.size_of(t).is_none()
                {
                    let dsp = self.types.display(t);
                    return Err(self.report(
                        Diagnostic::error(
                            codes::NOT_COMPTIME,
                            format!("a runtime parameter cannot have type {dsp}"),
                            p.span,
                            "declared here",
                        )
                        .with_help("mark the parameter `comptime`, or pass a runtime value"),
                    ));
                }
                ptys.push(t);
            }
        }
        if ret != self.types.common.void && self.types.num_ty(ret).is_none() {
            let dsp = self.types.display(ret);
            let s = ast.exprs[f.ret].span;
            return Err(self.report(
                Diagnostic::error(
                    codes::UNSUPPORTED,
                    format!(
                        "`{}` returns {dsp} by value, so it can only be called directly",
                        f.name.name
                    ),
                    span,
                    "used as a function value here",
                )
                .with_label(s, "returned by value here")
                .with_note("calls of functions that return a struct or array are expanded in place; such a function has no address and cannot be exported")
                .with_help("call it directly, or pass a pointer to where the result should go"),
            ));
        }
        let mut name = self.qualified(d.module, &f.name.name);
        if generic {
            let parts: Vec<String> = binds
                .iter()
                .map(|b| match b {
                    ParamBind::Ct(v) => v.describe(&self.types),
                    ParamBind::Rt(t) => self.types.display(*t),
                })
                .collect();
            name = format!("{name}({})", parts.join(", "));
        }
        let func = self.reserve_func(&name, f.name.span);
        if generic {
            self.mods[d.module].mono.insert((d.index, key), func);
        } else {
            self.mods[d.module].funcs.insert(d.index, func);
        }
        self.sigs.insert(func, (ptys, ret));
        if generic {
            // An instance may create further instances (recursion on comptime arguments).
            self.stack_guard(span, "generic function instances")?;
        }
        let before = self.diags.len();
        let shown = name.clone();
        let r = self.lower_body(
            d,
            name,
            &f.params,
            binds,
            ret,
            &body,
            func,
            f.name.span,
            true,
        );
        if generic {
            // Errors inside an instance point back at the call that created it.
            for dg in self.diags.iter_mut().skip(before).filter(|x| x.is_error()) {
                dg.secondary.push(crate::diag::Label {
                    span,
                    message: format!("in the instance `{shown}` made for this call"),
                });
            }
        }
        r?;
        Ok(func)
    }

    /// The runtime function of a non-generic `fn` (for function pointers and exports).
    pub fn lower_fn(&mut self, d: DeclRef, span: Span) -> R<FuncId> {
        if let Some(&f) = self.mods[d.module].funcs.get(&d.index) {
            return Ok(f);
        }
        let Some(f) = self.fn_decl(d) else {
            return Err(Reported);
        };
        if f.is_inline {
            return Err(self.inline_fn_address(span, f.name.span));
        }
        let Some((ptys, ret)) = self.plain_sig(d, &f)? else {
            return Err(self.report(
                Diagnostic::error(codes::NOT_COMPTIME, format!("generic function `{}` has no address", f.name.name), span, "used as a runtime function here")
                    .with_label(f.name.span, "it has comptime or `anytype` parameters")
                    .with_help("call it instead; each call with different comptime arguments makes its own copy"),
            ));
        };
        let binds: Vec<ParamBind> = ptys.into_iter().map(ParamBind::Rt).collect();
        self.fn_instance(d, &f, &binds, ret, span)
    }

    /// The parameter and return types of a function without comptime parameters, or
    /// `None` for a generic one.
    pub(crate) fn plain_sig(&mut self, d: DeclRef, f: &FnDecl) -> R<Option<(Vec<TypeId>, TypeId)>> {
        if f.params.iter().any(|p| p.is_comptime || p.ty.is_none()) {
            return Ok(None);
        }
        let mut cenv = Env::comptime(d.module, self.mods[d.module].ast.clone(), Ctx::Comptime);
        let mut ptys = Vec::new();
        for p in &f.params {
            let Some(t) = p.ty else { return Ok(None) };
            let t = self.eval_type(&mut cenv, t)?;
            if self.types.is_comptime_only(t) {
                return Ok(None);
            }
            ptys.push(t);
        }
        let ret = self.eval_type(&mut cenv, f.ret)?;
        Ok(Some((ptys, ret)))
    }

    /// Coerces function `d` to the function type `fty` (the target type is `target`, the
    /// function type itself or a pointer to it), checking the signature.
    pub(crate) fn coerce_func(
        &mut self,
        d: DeclRef,
        fty: TypeId,
        target: TypeId,
        span: Span,
    ) -> R<Value> {
        let Some(f) = self.fn_decl(d) else {
            return Err(Reported);
        };
        let Type::Fn { params, ret } = self.types.get(fty).clone() else {
            return Err(Reported);
        };
        let is_ptr = fty != target;
        if is_ptr && f.is_inline {
            return Err(self.inline_fn_address(span, f.name.span));
        }
        let sig = self.plain_sig(d, &f)?;
        let ok = sig.as_ref().is_some_and(|(p, r)| *p == params && *r == ret);
        if ok {
            return Ok(Value::Func(d));
        }
        let want = self.types.display(fty);
        let found = match &sig {
            Some((p, r)) => {
                let t = self.types.intern(Type::Fn {
                    params: p.clone(),
                    ret: *r,
                });
                self.types.display(t)
            }
            None => "a generic function".to_string(),
        };
        Err(self.report(
            Diagnostic::error(
                codes::TYPE_MISMATCH,
                format!(
                    "expected {}, found `{}` of type {found}",
                    self.types.display(target),
                    f.name.name
                ),
                span,
                format!("this is {found}"),
            )
            .with_label(f.name.span, "declared here")
            .with_note(format!(
                "the parameter and return types must match {want} exactly"
            )),
        ))
    }

    /// Lowers a task body (once per program).
    pub fn lower_task(&mut self, d: DeclRef, span: Span) -> R<FuncId> {
        if let Some(&f) = self.mods[d.module].funcs.get(&d.index) {
            return Ok(f);
        }
        let ast = self.mods[d.module].ast.clone();
        let Some(DeclKind::Task(t)) = ast.decls.get(d.index as usize).map(|x| x.kind.clone())
        else {
            return Err(Reported);
        };
        self.pe_prog("tasks exist only in PE programs", span, "used here")?;
        let void = self.types.common.void;
        // The type the body is checked against: a wrong return type is reported, and the
        // body is still checked (against what it declares, so its `return`s are not
        // reported again) so that binding the task and the rest of the program are too.
        let mut body_ret = void;
        if let Some(r) = t.ret {
            let mut cenv = Env::comptime(d.module, ast.clone(), Ctx::Comptime);
            let rt = self.eval_type(&mut cenv, r)?;
            if rt != void {
                body_ret = rt;
                let s = ast.exprs[r].span;
                self.report(
                    Diagnostic::error(codes::BAD_TASK, "a task cannot return a value", s, "tasks return `void`")
                        .with_help("tasks run to completion and have nobody to return to; store results in globals"),
                );
            }
        }
        let mut cenv = Env::comptime(d.module, ast.clone(), Ctx::Comptime);
        let mut ptys = Vec::new();
        for p in &t.params {
            let Some(ty) = p.ty else {
                return Err(self.err(
                    codes::BAD_TASK,
                    "task parameters need a type",
                    p.span,
                    "`anytype` is not allowed here",
                ));
            };
            let ty = self.eval_type(&mut cenv, ty)?;
            if self.types.num_ty(ty).is_none() {
                return Err(self.err_ty(
                    codes::BAD_TASK,
                    ty,
                    p.span,
                    "tasks receive wavelet halves: 16- or 32-bit scalars",
                    |dsp| format!("a task parameter cannot have type {dsp}"),
                ));
            }
            ptys.push(ty);
        }
        let name = self.qualified(d.module, &t.name.name);
        let func = self.reserve_func(&name, t.name.span);
        self.mods[d.module].funcs.insert(d.index, func);
        self.sigs.insert(func, (ptys.clone(), void));
        let binds: Vec<ParamBind> = ptys.iter().map(|t| ParamBind::Rt(*t)).collect();
        self.lower_body(
            d,
            name,
            &t.params,
            &binds,
            body_ret,
            &t.body,
            func,
            t.name.span,
            body_ret == void,
        )?;
        Ok(func)
    }

    fn reserve_func(&mut self, name: &str, span: Span) -> FuncId {
        let placeholder = FnBuilder::new(name.to_string(), 0, span).finish();
        match self.prog.as_mut() {
            Some(p) => p.functions.push(placeholder),
            None => FuncId::new(0),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn lower_body(
        &mut self,
        d: DeclRef,
        name: String,
        params: &[FnParam],
        binds: &[ParamBind],
        ret: TypeId,
        body: &Block,
        func: FuncId,
        span: Span,
        check_end: bool,
    ) -> R<()> {
        let ast = self.mods[d.module].ast.clone();
        let nparams = binds
            .iter()
            .filter(|b| matches!(b, ParamBind::Rt(_)))
            .count() as u32;
        let mut env = Env::runtime(
            d.module,
            ast.clone(),
            FnBuilder::new(name, nparams, span),
            ret,
        );
        env.addr_taken = Rc::new(addr_taken_names(&ast, body));
        let mut i = 0;
        for (p, b) in params.iter().zip(binds) {
            match b {
                ParamBind::Ct(v) => {
                    env.bind(p.name.name, Local::Value(v.clone()));
                    self.index_local(&env, &p.name.name, p.name.span);
                }
                ParamBind::Rt(t) => {
                    let reg = self.fb(&mut env).param(i);
                    i += 1;
                    let _ =
                        self.bind_param(&mut env, p.name.name, Val::Rt { reg, ty: *t }, *t, p.span);
                    self.index_local(&env, &p.name.name, p.name.span);
                }
            }
        }
        let _ = self.exec_block(&mut env, body);
        let void = self.types.common.void;
        let fb = self.fb(&mut env);
        if ret == void || !check_end {
            fb.terminate(Term::Ret(None));
        } else if fb.cur_reachable() {
            self.missing_return(body.span, ret);
        }
        let Some(fb) = env.fb.take() else {
            return Err(Reported);
        };
        let function = fb.finish();
        if let Some(p) = self.prog.as_mut() {
            p.functions[func] = function;
        }
        Ok(())
    }

    /// The global created for a `var` declaration (once per program).
    pub fn global_of(&mut self, d: DeclRef, span: Span) -> R<GlobalId> {
        if let Some(&g) = self.mods[d.module].globals.get(&d.index) {
            return Ok(g);
        }
        self.pe_prog(
            "runtime variables exist only in PE programs",
            span,
            "used here",
        )?;
        let ast = self.mods[d.module].ast.clone();
        let Some(DeclKind::Var(v)) = ast.decls.get(d.index as usize).map(|x| x.kind.clone()) else {
            return Err(Reported);
        };
        if !self.globals_in_progress.insert(d) {
            return Err(self.report(
                Diagnostic::error(
                    codes::CYCLIC_DECL,
                    format!("the initial value of `{}` depends on itself", v.name.name),
                    span,
                    "used here while it is being evaluated",
                )
                .with_label(v.name.span, "declared here")
                .with_help("give the variable an explicit type, or break the cycle"),
            ));
        }
        let result = self.create_global(d, &v, &ast);
        self.globals_in_progress.remove(&d);
        if self.index.is_some()
            && let Ok(g) = result
            && let Some(&ty) = self.global_types.get(&g)
        {
            let def = super::decl_name_span(&self.mods[d.module].ast, d.index);
            self.index_ty(v.name.span, def, ty);
        }
        result
    }

    /// Creates the global of `var` declaration `d`. With a declared type the global is
    /// reserved before its initialiser runs, so the initialiser may take its address.
    fn create_global(
        &mut self,
        d: DeclRef,
        v: &crate::syntax::ast::VarDecl,
        ast: &std::rc::Rc<crate::syntax::ast::Ast>,
    ) -> R<GlobalId> {
        let mut cenv = Env::comptime(d.module, ast.clone(), Ctx::Comptime);
        let declared = match v.ty {
            Some(t) => Some(self.eval_type(&mut cenv, t)?),
            None => None,
        };
        let name = self.qualified(d.module, &v.name.name);
        let reserve = |this: &mut Self, ty: super::types::TypeId| -> R<GlobalId> {
            let (Some(size), Some(align)) = (this.types.size_of(ty), this.types.align_of(ty))
            else {
                return Err(this.comptime_only_var(ty, v.name.span, true));
            };
            let g = match this.prog.as_mut() {
                Some(p) => p.globals.push(Global {
                    name: name.clone(),
                    size: size as u32,
                    align: align as u32,
                    init: vec![0u8; size as usize],
                    relocs: Vec::new(),
                    span: v.name.span,
                    place: crate::ir::GlobalPlace::Auto,
                }),
                None => return Err(Reported),
            };
            this.mods[d.module].globals.insert(d.index, g);
            this.global_types.insert(g, ty);
            Ok(g)
        };
        let early = match declared {
            Some(t) => Some(reserve(self, t)?),
            None => None,
        };
        let init = match v.init {
            Some(e) => {
                // Initialisers may take addresses of other globals.
                cenv.ctx = Ctx::TopComptime;
                let val = self.eval_comptime(&mut cenv, e)?;
                let s = ast.exprs[e].span;
                Some(match declared {
                    Some(t) => self.coerce_value(val, t, s)?,
                    None => val,
                })
            }
            None => None,
        };
        let ty = match (declared, &init) {
            (Some(t), _) => t,
            (None, Some(v)) => v.ty(&mut self.types),
            (None, None) => {
                return Err(self.err(
                    codes::NOT_A_TYPE,
                    "a variable needs a type or an initial value",
                    v.name.span,
                    "here",
                ));
            }
        };
        let g = match early {
            Some(g) => g,
            None => reserve(self, ty)?,
        };
        if let Some(val) = &init {
            let size = self.types.size_of(ty).unwrap_or(0) as usize;
            let mut bytes = vec![0u8; size];
            let mut relocs = Vec::new();
            self.value_bytes(val, ty, &mut bytes, 0, &mut relocs, v.name.span)?;
            if let Some(p) = self.prog.as_mut() {
                p.globals[g].init = bytes;
                p.globals[g].relocs = relocs;
            }
        }
        Ok(g)
    }

    /// BAD_RETURN: control reaches the end (the last character of `body`) of a function
    /// that returns `ret`.
    fn missing_return(&mut self, body: Span, ret: TypeId) -> Reported {
        let end = Span {
            file: body.file,
            start: body.end.saturating_sub(1),
            end: body.end,
        };
        let d = self.types.display(ret);
        let msg = format!("missing return value of type {d}");
        let label = "control reaches the end of the function here";
        let dg = Diagnostic::error(codes::BAD_RETURN, msg, end, label);
        self.report(dg.with_help("add a `return` statement"))
    }

    /// "a runtime variable cannot have the comptime-only type T".
    pub(crate) fn comptime_only_var(&mut self, ty: TypeId, span: Span, is_var: bool) -> Reported {
        let d = self.types.display(ty);
        if !self.types.is_comptime_only(ty) {
            let help = if matches!(self.types.get(ty), Type::Int { bits: 64, .. }) {
                "use a 32-bit integer type"
            } else {
                "use a scalar, array, struct or pointer type"
            };
            let msg = format!("runtime variables of type {d} are not supported yet");
            let dg = self.diag_with_type(codes::UNSUPPORTED, msg, span, ty);
            return self.report(dg.with_help(help));
        }
        let (msg, label, help) = if ty == self.types.common.type_ {
            (
                "a runtime variable cannot hold a type".to_string(),
                "this holds a type".to_string(),
                "types exist only at comptime: name one with `const T = ...;`",
            )
        } else {
            (
                format!("a runtime variable cannot have the comptime-only type {d}"),
                format!("this would have type {d}"),
                "declare it `const` or `comptime var`, or give it a runtime type",
            )
        };
        let mut dg = Diagnostic::error(codes::NOT_COMPTIME, msg, span, label);
        if is_var {
            dg = dg.with_help(help);
        }
        self.report(dg)
    }

    /// The type of a global.
    pub fn global_type(&self, g: GlobalId) -> TypeId {
        self.global_types
            .get(&g)
            .copied()
            .unwrap_or(self.types.common.void)
    }

    /// Serialises a comptime value of type `ty` into `out` at `off`.
    pub(crate) fn value_bytes(
        &mut self,
        v: &Value,
        ty: TypeId,
        out: &mut [u8],
        off: usize,
        relocs: &mut Vec<Reloc>,
        span: Span,
    ) -> R<()> {
        match (v, self.types.get(ty).clone()) {
            (Value::Array(_, elems), Type::Array { elem, .. }) => {
                let esize = self.types.size_of(elem).unwrap_or(0) as usize;
                for (i, e) in elems.iter().enumerate() {
                    self.value_bytes(e, elem, out, off + i * esize, relocs, span)?;
                }
                Ok(())
            }
            (Value::Record(_, vals), Type::Struct(_)) => {
                let Some(def) = self.types.struct_def(ty).cloned() else {
                    return Err(Reported);
                };
                let offsets = self
                    .types
                    .struct_layout(ty)
                    .map(|l| l.offsets)
                    .unwrap_or_default();
                for ((v, (_, fty)), o) in vals.iter().zip(&def.fields).zip(offsets) {
                    self.value_bytes(v, *fty, out, off + o as usize, relocs, span)?;
                }
                Ok(())
            }
            (Value::Dsd(d), _) => {
                let (bytes, reloc) = d.encode();
                if let Some(dst) = out.get_mut(off..off + bytes.len()) {
                    dst.copy_from_slice(&bytes);
                }
                if let Some((at, g, addend)) = reloc {
                    relocs.push(Reloc {
                        offset: off as u32 + at,
                        target: g,
                        addend,
                    });
                }
                Ok(())
            }
            (Value::GlobalPtr { global, offset, .. }, _) => {
                relocs.push(Reloc {
                    offset: off as u32,
                    target: *global,
                    addend: *offset,
                });
                Ok(())
            }
            (Value::Func(d), _) => {
                let f = self.lower_fn(*d, span)?;
                let bytes = (f.index() as u16).to_le_bytes();
                if let Some(dst) = out.get_mut(off..off + 2) {
                    dst.copy_from_slice(&bytes);
                }
                Ok(())
            }
            (other, _) => {
                let bits = self.scalar_bits(other, span)?;
                let n = self.types.size_of(ty).unwrap_or(0) as usize;
                if let Some(dst) = out.get_mut(off..off + n) {
                    dst.copy_from_slice(&bits.to_le_bytes()[..n.min(4)]);
                }
                Ok(())
            }
        }
    }
}

/// `n` `noun`s: "1 argument", "2 arguments".
pub(super) fn counted(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// ARG_COUNT: `callee` takes `want` arguments but was given `got`.
fn arg_count(callee: &str, want: usize, got: usize, span: Span) -> Diagnostic {
    let was = if got == 1 { "was" } else { "were" };
    let msg = format!(
        "{callee} takes {}, but {got} {was} given",
        counted(want, "argument")
    );
    Diagnostic::error(codes::ARG_COUNT, msg, span, "wrong number of arguments")
}

/// Names whose address is taken (`&x`, `&x.f`, `&x[i]`) anywhere in a body.
pub(crate) fn addr_taken_names(ast: &Ast, body: &Block) -> HashSet<Symbol> {
    let mut out = HashSet::new();
    let mut exprs: Vec<ExprId> = Vec::new();
    let mut blocks: Vec<&Block> = vec![body];
    while let Some(b) = blocks.pop() {
        for s in &b.stmts {
            stmt_children(s, &mut exprs, &mut blocks);
        }
        while let Some(e) = exprs.pop() {
            let Some(node) = ast.exprs.get(e) else {
                continue;
            };
            if let ExprKind::Unary {
                op: UnaryOp::AddrOf,
                operand,
            } = &node.kind
            {
                let mut root = *operand;
                loop {
                    match ast.exprs.get(root).map(|n| &n.kind) {
                        Some(ExprKind::Field { base, .. }) | Some(ExprKind::Index { base, .. }) => {
                            root = *base
                        }
                        Some(ExprKind::Ident(n)) => {
                            out.insert(*n);
                            break;
                        }
                        _ => break,
                    }
                }
            }
            expr_children(&node.kind, &mut exprs, &mut blocks);
        }
    }
    out
}

fn stmt_children<'a>(s: &'a Stmt, exprs: &mut Vec<ExprId>, blocks: &mut Vec<&'a Block>) {
    match &s.kind {
        StmtKind::Local(v) => exprs.extend(v.init),
        StmtKind::Expr(e) | StmtKind::Return(Some(e)) => exprs.push(*e),
        StmtKind::Assign { target, value, .. } => exprs.extend([*target, *value]),
        StmtKind::If {
            cond,
            then,
            otherwise,
        } => {
            exprs.push(*cond);
            blocks.push(then);
            blocks.extend(otherwise.iter());
        }
        StmtKind::While {
            cond, cont, body, ..
        } => {
            exprs.push(*cond);
            if let Some(c) = cont {
                stmt_children(c, exprs, blocks);
            }
            blocks.push(body);
        }
        StmtKind::For { iter, body, .. } => {
            exprs.push(*iter);
            blocks.push(body);
        }
        StmtKind::Break { value: Some(v), .. } => exprs.push(*v),
        StmtKind::Block(b) | StmtKind::Comptime(b) => blocks.push(b),
        _ => {}
    }
}

fn expr_children<'a>(k: &'a ExprKind, exprs: &mut Vec<ExprId>, blocks: &mut Vec<&'a Block>) {
    match k {
        ExprKind::Builtin { args, .. } => exprs.extend(args.iter().copied()),
        ExprKind::Unary { operand, .. } => exprs.push(*operand),
        ExprKind::Binary { lhs, rhs, .. } => exprs.extend([*lhs, *rhs]),
        ExprKind::Call { callee, args } => {
            exprs.push(*callee);
            exprs.extend(args.iter().copied());
        }
        ExprKind::Index { base, indices } => {
            exprs.push(*base);
            exprs.extend(indices.iter().copied());
        }
        ExprKind::Field { base, .. } | ExprKind::Deref(base) | ExprKind::Comptime(base) => {
            exprs.push(*base)
        }
        ExprKind::AnonInit(l) | ExprKind::TypedInit { init: l, .. } => match l {
            InitList::Fields(fs) => exprs.extend(fs.iter().map(|f| f.value)),
            InitList::Elems(es) => exprs.extend(es.iter().copied()),
        },
        ExprKind::If {
            cond,
            then,
            otherwise,
        } => exprs.extend([*cond, *then, *otherwise]),
        ExprKind::Switch { scrutinee, cases } => {
            exprs.push(*scrutinee);
            for c in cases {
                exprs.push(c.body);
                for it in &c.items {
                    match it {
                        SwitchItem::Value(v) => exprs.push(*v),
                        SwitchItem::Range(a, b) => exprs.extend([*a, *b]),
                    }
                }
            }
        }
        ExprKind::Block(b) => blocks.push(b),
        _ => {}
    }
}
