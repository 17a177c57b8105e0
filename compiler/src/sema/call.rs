//! Calls, function and task lowering, and globals.
//!
//! A call runs at comptime when the caller is comptime, or the callee has `comptime`
//! parameters or returns a comptime-only type; otherwise the callee is lowered (once per
//! program) and a `call` instruction is emitted.

use super::eval::{Env, Local, Val};
use super::lower::FnBuilder;
use super::module::DeclRef;
use super::stmt::Flow;
use super::types::{Type, TypeId};
use super::value::Value;
use super::{Ctx, R, Reported, Sema};
use crate::diag::{Diagnostic, codes};
use crate::ir::{FuncId, Global, GlobalId, Inst, Reloc, Term};
use crate::source::Span;
use crate::syntax::ast::{DeclKind, ExprId, FnParam};
use cranelift_entity::EntityRef;

/// Deepest comptime call nesting before we report runaway recursion.
const MAX_COMPTIME_DEPTH: u32 = 200;

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
                    Diagnostic::error(codes::BAD_TASK, "tasks cannot be called", cspan, "this is a task")
                        .with_label(decl_span, "declared as a task here")
                        .with_help("bind it to a task id and start it with `@activate(id)`"),
                ))
            }
            other => {
                let ty = self.val_ty(&other);
                let d = self.types.display(ty);
                Err(self.err(codes::NOT_CALLABLE, format!("a value of type {d} cannot be called"), cspan, "not a function"))
            }
        }
    }

    fn fn_decl(&self, d: DeclRef) -> Option<crate::syntax::ast::FnDecl> {
        match self.mods[d.module].ast.decls.get(d.index as usize).map(|x| &x.kind) {
            Some(DeclKind::Fn(f)) => Some(f.clone()),
            _ => None,
        }
    }

    fn call_fn(&mut self, env: &mut Env, d: DeclRef, args: &[ExprId], span: Span) -> R<Val> {
        let Some(f) = self.fn_decl(d) else { return Err(Reported) };
        if f.params.len() != args.len() {
            return Err(self.report(
                Diagnostic::error(
                    codes::ARG_COUNT,
                    format!("`{}` takes {} argument{}, but {} {} given", f.name.name, f.params.len(), plural(f.params.len()), args.len(), if args.len() == 1 { "was" } else { "were" }),
                    span,
                    "wrong number of arguments",
                )
                .with_label(f.name.span, "declared here"),
            ));
        }
        let generic = f.params.iter().any(|p| p.is_comptime || p.ty.is_none());
        let ret_comptime = {
            let mut cenv = Env::comptime(d.module, self.mods[d.module].ast.clone(), Ctx::Comptime);
            // A return type that depends on parameters cannot be evaluated yet; such a
            // function is generic and runs at comptime.
            let saved = self.diags.len();
            match self.eval_type(&mut cenv, f.ret) {
                Ok(t) => self.types.is_comptime_only(t),
                Err(_) => {
                    self.diags.truncate(saved);
                    true
                }
            }
        };
        if env.comptime || generic || ret_comptime {
            return self.call_comptime(env, d, &f.params, f.ret, f.body.as_ref(), args, span);
        }
        let func = self.lower_fn(d, span)?;
        let (ptys, ret) = self.sigs.get(&func).cloned().ok_or(Reported)?;
        let mut regs = Vec::new();
        for (a, pt) in args.iter().zip(ptys) {
            let v = self.expr(env, *a)?;
            let s = self.span(env, *a);
            let v = self.coerce(env, v, pt, s)?;
            regs.push(self.materialize(env, v, s)?);
        }
        if ret == self.types.common.void {
            self.fb(env).emit(Inst::Call { func, args: regs, dst: None });
            Ok(Val::Ct(Value::Void))
        } else {
            let dst = self.fb(env).reg();
            self.fb(env).emit(Inst::Call { func, args: regs, dst: Some(dst) });
            Ok(Val::Rt { reg: dst, ty: ret })
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn call_comptime(
        &mut self,
        env: &mut Env,
        d: DeclRef,
        params: &[FnParam],
        ret: ExprId,
        body: Option<&crate::syntax::ast::Block>,
        args: &[ExprId],
        span: Span,
    ) -> R<Val> {
        let Some(body) = body else {
            return Err(self.err(codes::NOT_COMPTIME, "extern functions cannot run at comptime", span, "called at comptime here"));
        };
        if self.depth >= MAX_COMPTIME_DEPTH {
            return Err(self.err(codes::COMPTIME_FUEL, "comptime recursion is too deep", span, "called here"));
        }
        let ctx = match env.ctx {
            Ctx::Layout | Ctx::TopComptime => env.ctx,
            _ => Ctx::Comptime,
        };
        let mut cenv = Env::comptime(d.module, self.mods[d.module].ast.clone(), ctx);
        for (p, a) in params.iter().zip(args) {
            let v = self.eval_comptime(env, *a)?;
            let v = match p.ty {
                Some(t) => {
                    let t = self.eval_type(&mut cenv, t)?;
                    let s = self.span(env, *a);
                    self.coerce_value(v, t, s)?
                }
                None => v,
            };
            cenv.bind(&p.name.name, Local::Value(v));
        }
        let ret_ty = self.eval_type(&mut cenv, ret)?;
        cenv.ret_ty = Some(ret_ty);
        self.depth += 1;
        let flow = self.exec_block(&mut cenv, body);
        self.depth -= 1;
        match flow? {
            Flow::Return(Some(v)) => Ok(Val::Ct(v)),
            Flow::Return(None) | Flow::Normal if ret_ty == self.types.common.void => Ok(Val::Ct(Value::Void)),
            _ => {
                let d2 = self.types.display(ret_ty);
                Err(self.err(codes::BAD_RETURN, format!("function returned without a value of type {d2}"), span, "in this call"))
            }
        }
    }

    /// Lowers a runtime function (once per program) and returns its id.
    pub fn lower_fn(&mut self, d: DeclRef, span: Span) -> R<FuncId> {
        if let Some(&f) = self.mods[d.module].funcs.get(&d.index) {
            return Ok(f);
        }
        let Some(f) = self.fn_decl(d) else { return Err(Reported) };
        let Some(body) = f.body.clone() else {
            return Err(self.err(codes::UNSUPPORTED, "extern functions are not supported yet", f.name.span, "declared extern here"));
        };
        if self.prog.is_none() {
            return Err(self.err(
                codes::BUILTIN_CONTEXT,
                "runtime functions can only be called from PE code",
                span,
                "called here",
            ));
        }
        let ast = self.mods[d.module].ast.clone();
        let mut cenv = Env::comptime(d.module, ast.clone(), Ctx::Comptime);
        let mut ptys = Vec::new();
        for p in &f.params {
            let Some(t) = p.ty else { return Err(Reported) };
            let t = self.eval_type(&mut cenv, t)?;
            if self.types.num_ty(t).is_none() {
                let dsp = self.types.display(t);
                return Err(self.err(codes::UNSUPPORTED, format!("parameters of type {dsp} are not supported in runtime functions yet"), p.span, "here"));
            }
            ptys.push(t);
        }
        let ret = self.eval_type(&mut cenv, f.ret)?;
        if ret != self.types.common.void && self.types.num_ty(ret).is_none() {
            let dsp = self.types.display(ret);
            let s = ast.exprs[f.ret].span;
            return Err(self.err(codes::UNSUPPORTED, format!("returning {dsp} from a runtime function is not supported yet"), s, "here"));
        }
        let name = self.qualified(d.module, &f.name.name);
        let func = self.reserve_func(&name, f.name.span);
        self.mods[d.module].funcs.insert(d.index, func);
        self.sigs.insert(func, (ptys.clone(), ret));
        self.lower_body(d, name, &f.params, &ptys, ret, &body, func, f.name.span)?;
        Ok(func)
    }

    /// Lowers a task body (once per program).
    pub fn lower_task(&mut self, d: DeclRef, span: Span) -> R<FuncId> {
        if let Some(&f) = self.mods[d.module].funcs.get(&d.index) {
            return Ok(f);
        }
        let ast = self.mods[d.module].ast.clone();
        let Some(DeclKind::Task(t)) = ast.decls.get(d.index as usize).map(|x| x.kind.clone()) else {
            return Err(Reported);
        };
        if self.prog.is_none() {
            return Err(self.err(codes::BUILTIN_CONTEXT, "tasks exist only in PE programs", span, "used here"));
        }
        let void = self.types.common.void;
        if let Some(r) = t.ret {
            let mut cenv = Env::comptime(d.module, ast.clone(), Ctx::Comptime);
            let rt = self.eval_type(&mut cenv, r)?;
            if rt != void {
                let s = ast.exprs[r].span;
                return Err(self.report(
                    Diagnostic::error(codes::BAD_TASK, "a task cannot return a value", s, "tasks return `void`")
                        .with_help("tasks run to completion and have nobody to return to; store results in globals"),
                ));
            }
        }
        let mut cenv = Env::comptime(d.module, ast.clone(), Ctx::Comptime);
        let mut ptys = Vec::new();
        for p in &t.params {
            let Some(ty) = p.ty else { return Err(Reported) };
            ptys.push(self.eval_type(&mut cenv, ty)?);
        }
        let name = self.qualified(d.module, &t.name.name);
        let func = self.reserve_func(&name, t.name.span);
        self.mods[d.module].funcs.insert(d.index, func);
        self.sigs.insert(func, (ptys.clone(), void));
        self.lower_body(d, name, &t.params, &ptys, void, &t.body, func, t.name.span)?;
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
        ptys: &[TypeId],
        ret: TypeId,
        body: &crate::syntax::ast::Block,
        func: FuncId,
        span: Span,
    ) -> R<()> {
        let ast = self.mods[d.module].ast.clone();
        let mut env = Env::comptime(d.module, ast, Ctx::Runtime);
        env.comptime = false;
        env.fb = Some(FnBuilder::new(name, params.len() as u32, span));
        env.ret_ty = Some(ret);
        for (i, (p, t)) in params.iter().zip(ptys).enumerate() {
            let reg = self.fb(&mut env).param(i as u32);
            env.bind(&p.name.name, Local::Reg { reg, ty: *t, mutable: false });
        }
        let _ = self.exec_block(&mut env, body);
        let void = self.types.common.void;
        let fb = self.fb(&mut env);
        if ret == void {
            fb.terminate(Term::Ret(None));
        } else if fb.cur_reachable() {
            let end = Span { file: body.span.file, start: body.span.end.saturating_sub(1), end: body.span.end };
            let d2 = self.types.display(ret);
            self.report(
                Diagnostic::error(codes::BAD_RETURN, format!("missing return value of type {d2}"), end, "control reaches the end of the function here")
                    .with_help("add a `return` statement"),
            );
        }
        let Some(fb) = env.fb.take() else { return Err(Reported) };
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
        if self.prog.is_none() {
            return Err(self.err(codes::BUILTIN_CONTEXT, "runtime variables exist only in PE programs", span, "used here"));
        }
        let ast = self.mods[d.module].ast.clone();
        let Some(DeclKind::Var(v)) = ast.decls.get(d.index as usize).map(|x| x.kind.clone()) else {
            return Err(Reported);
        };
        let mut cenv = Env::comptime(d.module, ast.clone(), Ctx::Comptime);
        let declared = match v.ty {
            Some(t) => Some(self.eval_type(&mut cenv, t)?),
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
            (None, None) => return Err(self.err(codes::NOT_A_TYPE, "a variable needs a type or an initial value", v.name.span, "here")),
        };
        let (Some(size), Some(align)) = (self.types.size_of(ty), self.types.align_of(ty)) else {
            let dsp = self.types.display(ty);
            return Err(self.err(
                codes::NOT_COMPTIME,
                format!("a runtime variable cannot have the comptime-only type {dsp}"),
                v.name.span,
                "declared here",
            ));
        };
        let mut bytes = vec![0u8; size as usize];
        let mut relocs = Vec::new();
        if let Some(val) = &init {
            self.value_bytes(val, ty, &mut bytes, 0, &mut relocs, v.name.span)?;
        }
        let name = self.qualified(d.module, &v.name.name);
        let g = match self.prog.as_mut() {
            Some(p) => p.globals.push(Global { name, size: size as u32, align: align as u32, init: bytes, relocs, span: v.name.span }),
            None => return Err(Reported),
        };
        self.mods[d.module].globals.insert(d.index, g);
        self.global_types.insert(g, ty);
        Ok(g)
    }

    /// The type of a global.
    pub fn global_type(&self, g: GlobalId) -> TypeId {
        self.global_types.get(&g).copied().unwrap_or(self.types.common.void)
    }

    /// Serialises a comptime value of type `ty` into `out` at `off`.
    fn value_bytes(&mut self, v: &Value, ty: TypeId, out: &mut [u8], off: usize, relocs: &mut Vec<Reloc>, span: Span) -> R<()> {
        match (v, self.types.get(ty).clone()) {
            (Value::Array(_, elems), Type::Array { elem, .. }) => {
                let esize = self.types.size_of(elem).unwrap_or(0) as usize;
                for (i, e) in elems.iter().enumerate() {
                    self.value_bytes(e, elem, out, off + i * esize, relocs, span)?;
                }
                Ok(())
            }
            (Value::Dsd(d), _) => {
                let (bytes, reloc) = d.encode();
                if let Some(dst) = out.get_mut(off..off + bytes.len()) {
                    dst.copy_from_slice(&bytes);
                }
                if let Some((at, g, addend)) = reloc {
                    relocs.push(Reloc { offset: off as u32 + at, target: g, addend });
                }
                Ok(())
            }
            (Value::GlobalPtr { global, offset, .. }, _) => {
                relocs.push(Reloc { offset: off as u32, target: *global, addend: *offset });
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

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
