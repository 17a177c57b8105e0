//! The builtins that name and bind hardware resources: colors, task ids, queues and
//! microthreads (`@get_color`, `@get_local_task_id`, ...), task binding and state
//! (`@bind_local_task`, `@activate`, ...) and `@export_symbol`.

use super::builtins::Call;
use super::eval::{Env, Val};
use super::module::DeclRef;
use super::types::Type;
use super::value::{TaskIdKind, Value};
use super::{R, Reported, Sema, did_you_mean};
use crate::diag::{Diagnostic, codes};
use crate::ir::Inst;
use crate::source::Span;
use crate::symbol::Symbol;
use crate::syntax::ast::{ExprId, ExprKind};
use csl_arch::image::TaskKind;
use std::rc::Rc;

impl Sema {
    /// `@get_color`.
    pub(super) fn b_get_color(&mut self, env: &mut Env, c: &Call<'_>) -> R<Val> {
        let args = c.args;
        let v = self.eval_int_arg_or_rt(env, args[0])?;
        match v {
            Some(i) => {
                if !(0..i128::from(csl_arch::fabric::NUM_COLORS)).contains(&i) {
                    let sp = self.span(env, args[0]);
                    return Err(self.err(
                        codes::TASK_ID_RANGE,
                        format!("color {i} does not exist"),
                        sp,
                        format!(
                            "routable colors are 0 to {}",
                            csl_arch::fabric::NUM_COLORS - 1
                        ),
                    ));
                }
                Ok(Val::Ct(Value::Color(i as u8)))
            }
            None => self.retype_rt(env, args[0], self.types.common.color),
        }
    }

    /// `@get_local_task_id` / `@get_control_task_id`.
    pub(super) fn b_get_local_task_id(&mut self, env: &mut Env, c: &Call<'_>) -> R<Val> {
        let n = c.name;
        let args = c.args;
        let kind = if n == "get_local_task_id" {
            TaskIdKind::Local
        } else {
            TaskIdKind::Control
        };
        let range = if kind == TaskIdKind::Local {
            self.opts.arch.local_task_ids()
        } else {
            self.opts.arch.control_task_ids()
        };
        match self.eval_int_arg_or_rt(env, args[0])? {
            Some(i) => {
                if i < i128::from(*range.start()) || i > i128::from(*range.end()) {
                    let sp = self.span(env, args[0]);
                    let what = if kind == TaskIdKind::Local {
                        "local"
                    } else {
                        "control"
                    };
                    return Err(self.err(
                        codes::TASK_ID_RANGE,
                        format!("{i} is not a valid {what} task id on {}", self.opts.arch),
                        sp,
                        format!(
                            "{what} task ids on {} are {} to {}",
                            self.opts.arch,
                            range.start(),
                            range.end()
                        ),
                    ));
                }
                Ok(Val::Ct(Value::TaskId(kind, i as u8)))
            }
            None => {
                let t = if kind == TaskIdKind::Local {
                    self.types.common.local_task_id
                } else {
                    self.types.common.control_task_id
                };
                self.retype_rt(env, args[0], t)
            }
        }
    }

    /// `@get_data_task_id`.
    pub(super) fn b_get_data_task_id(&mut self, env: &mut Env, c: &Call<'_>) -> R<Val> {
        let args = c.args;
        let v = self.eval_comptime(env, args[0])?;
        let sp = self.span(env, args[0]);
        match (v, self.opts.arch) {
            (Value::Color(c), csl_arch::Arch::Wse2) => {
                Ok(Val::Ct(Value::TaskId(TaskIdKind::Data, c)))
            }
            (Value::Queue(true, q), csl_arch::Arch::Wse3) => {
                Ok(Val::Ct(Value::TaskId(TaskIdKind::Data, q)))
            }
            (_, csl_arch::Arch::Wse2) => Err(self.err(
                codes::BUILTIN_ARGS,
                "on wse2, @get_data_task_id takes a color",
                sp,
                "expected a color",
            )),
            (_, csl_arch::Arch::Wse3) => Err(self.err(
                codes::BUILTIN_ARGS,
                "on wse3, @get_data_task_id takes an input queue",
                sp,
                "expected an input_queue",
            )),
        }
    }

    /// `@get_input_queue` / `@get_output_queue`.
    pub(super) fn b_get_input_queue(&mut self, env: &mut Env, c: &Call<'_>) -> R<Val> {
        let n = c.name;
        let args = c.args;
        let input = n == "get_input_queue";
        let i = self.eval_int(env, args[0])?;
        let range = if input {
            self.opts.arch.input_queues()
        } else {
            self.opts.arch.output_queues()
        };
        if i < i128::from(*range.start()) || i > i128::from(*range.end()) {
            let sp = self.span(env, args[0]);
            return Err(self.err(
                codes::TASK_ID_RANGE,
                format!("queue {i} does not exist on {}", self.opts.arch),
                sp,
                format!("queues are {} to {}", range.start(), range.end()),
            ));
        }
        Ok(Val::Ct(Value::Queue(input, i as u8)))
    }

    /// The comptime index `e` of a per-microthread resource (a `thing`; `things` in the
    /// label): TASK_ID_RANGE unless it names one of the microthreads.
    pub(super) fn microthread_arg(
        &mut self,
        env: &mut Env,
        e: ExprId,
        thing: &str,
        things: &str,
    ) -> R<u8> {
        let n = self.eval_int(env, e)?;
        let uts = csl_arch::fabric::MICROTHREADS;
        match u8::try_from(n) {
            Ok(i) if i < uts => Ok(i),
            _ => {
                let sp = self.span(env, e);
                let label = format!("{things} are 0 to {}", uts - 1);
                Err(self.err(
                    codes::TASK_ID_RANGE,
                    format!("{thing} {n} does not exist"),
                    sp,
                    label,
                ))
            }
        }
    }

    /// `@get_ut_id`.
    pub(super) fn b_get_ut_id(&mut self, env: &mut Env, c: &Call<'_>) -> R<Val> {
        let i = i128::from(self.microthread_arg(env, c.args[0], "microthread", "microthreads")?);
        let ci = self.types.common.comptime_int;
        Ok(Val::Ct(Value::Struct(Rc::new(vec![(
            "ut".into(),
            Value::Int(i, ci),
        )]))))
    }

    /// A comptime integer argument, or `None` when the argument is a runtime value.
    pub(super) fn eval_int_arg_or_rt(&mut self, env: &mut Env, e: ExprId) -> R<Option<i128>> {
        match self.expr(env, e)? {
            Val::Ct(Value::Int(i, _)) => Ok(Some(i)),
            Val::Ct(other) => {
                let sp = self.span(env, e);
                let t = other.ty(&mut self.types);
                Err(self.err_with_type(codes::TYPE_MISMATCH, "expected an integer", sp, t))
            }
            Val::Rt { .. } => Ok(None),
        }
    }

    pub(super) fn retype_rt(
        &mut self,
        env: &mut Env,
        e: ExprId,
        ty: super::types::TypeId,
    ) -> R<Val> {
        let u16t = self.types.common.u16;
        match self.expr_as(env, e, u16t)? {
            Val::Rt { reg, .. } => Ok(Val::Rt { reg, ty }),
            Val::Ct(_) => Err(Reported),
        }
    }

    /// Resolves an expression naming a top-level declaration (`x` or `module.x`).
    pub(super) fn decl_ref_of(&mut self, env: &mut Env, e: ExprId) -> R<Option<DeclRef>> {
        let ast = env.ast.clone();
        Ok(match &ast.exprs[e].kind {
            ExprKind::Ident(n) => {
                if env.scopes.iter().flatten().any(|(m, _)| m == n) {
                    None
                } else {
                    match self.lookup_decl(env.module, *n) {
                        Some(d) => Some(d),
                        None => {
                            let sp = ast.exprs[e].span;
                            return Err(self.undefined(env, n, sp));
                        }
                    }
                }
            }
            ExprKind::Field { base, name } => match self.expr(env, *base)? {
                Val::Ct(Value::Module(m)) => self.lookup_decl(m, name.name),
                _ => None,
            },
            _ => None,
        })
    }

    pub(super) fn b_export_symbol(&mut self, env: &mut Env, args: &[ExprId], span: Span) -> R<Val> {
        let sp = self.span(env, args[0]);
        let Some(d) = self.decl_ref_of(env, args[0])? else {
            return Err(self.err(
                codes::BAD_EXPORT,
                "@export_symbol needs a global variable or function",
                sp,
                "not a global",
            ));
        };
        let ast = self.mods[d.module].ast.clone();
        let decl_name = match ast.decls.get(d.index as usize).map(|x| &x.kind) {
            Some(crate::syntax::ast::DeclKind::Var(v)) => v.name.name,
            Some(crate::syntax::ast::DeclKind::Fn(f)) => f.name.name,
            _ => {
                return Err(self.err(
                    codes::BAD_EXPORT,
                    "only global variables and functions can be exported",
                    sp,
                    "not exportable",
                ));
            }
        };
        let name = match args.get(1) {
            Some(n) => Symbol::intern(&self.str_arg(env, *n)?),
            None => decl_name,
        };
        let Some(exp) = self.export_names.iter().find(|e| e.name == name).cloned() else {
            if self.lone_module {
                return Ok(Val::Ct(Value::Void));
            }
            let mut dg = Diagnostic::error(
                codes::BAD_EXPORT,
                format!("`{name}` is exported but the layout declares no such name"),
                span,
                "exported here",
            )
            .with_help(format!(
                "declare it in the layout with `@export_name(\"{name}\", ...)`"
            ));
            if let Some(s) = did_you_mean(&name, self.export_names.iter().map(|e| e.name.as_str()))
            {
                dg = dg.with_note(format!("the layout declares a similar name: `{s}`"));
            }
            return Err(self.report(dg));
        };
        let target = match (&exp.kind, ast.decls.get(d.index as usize).map(|x| &x.kind)) {
            (
                csl_arch::image::ExportKind::Tensor { .. },
                Some(crate::syntax::ast::DeclKind::Var(_)),
            ) => {
                let saved = env.comptime;
                let g = self.global_of(d, sp);
                env.comptime = saved;
                crate::ir::ExportTarget::Global(g?)
            }
            (
                csl_arch::image::ExportKind::Func { .. },
                Some(crate::syntax::ast::DeclKind::Fn(_)),
            ) => crate::ir::ExportTarget::Func(self.lower_fn(d, sp)?),
            _ => {
                return Err(self.err(
                    codes::BAD_EXPORT,
                    format!(
                        "`{name}` is declared in the layout as a {} but exported as a {}",
                        if matches!(exp.kind, csl_arch::image::ExportKind::Func { .. }) {
                            "function"
                        } else {
                            "tensor"
                        },
                        if matches!(
                            ast.decls.get(d.index as usize).map(|x| &x.kind),
                            Some(crate::syntax::ast::DeclKind::Fn(_))
                        ) {
                            "function"
                        } else {
                            "variable"
                        }
                    ),
                    sp,
                    "kind differs from @export_name",
                ));
            }
        };
        if let Some(p) = self.prog.as_mut() {
            p.symbols.push(crate::ir::ExportedSymbol {
                name: name.to_string(),
                target,
            });
        }
        Ok(Val::Ct(Value::Void))
    }

    pub(super) fn b_bind(&mut self, env: &mut Env, n: &str, args: &[ExprId], span: Span) -> R<Val> {
        let tspan = self.span(env, args[0]);
        let task = self.eval_comptime(env, args[0])?;
        let Value::Task(d) = task else {
            return Err(self.err(
                codes::BAD_TASK,
                format!("@{n} needs a task"),
                tspan,
                "not a task",
            ));
        };
        let ispan = self.span(env, args[1]);
        let id = self.eval_comptime(env, args[1])?;
        let (kind, want) = match n {
            "bind_local_task" => (TaskKind::Local, TaskIdKind::Local),
            "bind_data_task" => (TaskKind::Data, TaskIdKind::Data),
            _ => (TaskKind::Control, TaskIdKind::Control),
        };
        let num = match id {
            Value::TaskId(k, num) if k == want => num,
            other => {
                let t = other.ty(&mut self.types);
                let d2 = self.types.display(t);
                let w = match want {
                    TaskIdKind::Local => "local_task_id",
                    TaskIdKind::Data => "data_task_id",
                    TaskIdKind::Control => "control_task_id",
                };
                return Err(self.err(
                    codes::TYPE_MISMATCH,
                    format!("expected {w}, found {d2}"),
                    ispan,
                    format!("this has type {d2}"),
                ));
            }
        };
        let ast = self.mods[d.module].ast.clone();
        if let Some(crate::syntax::ast::DeclKind::Task(t)) =
            ast.decls.get(d.index as usize).map(|x| &x.kind)
        {
            let bad = match kind {
                TaskKind::Local => !t.params.is_empty(),
                TaskKind::Data => t.params.is_empty(),
                TaskKind::Control => t.params.len() > 1,
            };
            if bad {
                let what = match kind {
                    TaskKind::Local => "a local task takes no parameters",
                    TaskKind::Data => "a data task takes the wavelet as its parameter(s)",
                    TaskKind::Control => "a control task takes at most one parameter",
                };
                return Err(self.report(
                    Diagnostic::error(codes::BAD_TASK, what, tspan, "bound here")
                        .with_label(t.name.span, "declared here"),
                ));
            }
        }
        if self.opts.memcpy {
            let reserved = match kind {
                TaskKind::Local => {
                    csl_arch::fabric::MEMCPY_RESERVED_LOCAL_TASKS.contains(&num)
                        || num == csl_arch::fabric::TEARDOWN_TASK_ID
                }
                TaskKind::Data => {
                    self.opts.arch == csl_arch::Arch::Wse2
                        && csl_arch::fabric::MEMCPY_RESERVED_COLORS.contains(&num)
                }
                TaskKind::Control => csl_arch::fabric::MEMCPY_RESERVED_CONTROL_TASKS.contains(&num),
            };
            if reserved {
                return Err(self.report(
                    Diagnostic::error(codes::TASK_ID_RANGE, format!("task id {num} is reserved by the memcpy infrastructure"), ispan, "reserved")
                        .with_note("with --memcpy, colors 21-23, local task ids 27-30 and control task ids 33-37 belong to memcpy")
                        .with_help("pick another id"),
                ));
            }
        }
        if let Some(prev) = self.bound_ids.get(&num).copied() {
            return Err(self.report(Diagnostic::twice(
                codes::TASK_ID_TWICE,
                format!("task id {num}"),
                "bound",
                span,
                prev,
            )));
        }
        self.bound_ids.insert(num, span);
        let func = self.lower_task(d, span)?;
        let ptys = self
            .sigs
            .get(&func)
            .map(|(p, _)| p.clone())
            .unwrap_or_default();
        let sizes: Vec<Option<u32>> = ptys
            .iter()
            .map(|t| self.types.num_ty(*t).map(|n| n.size()))
            .collect();
        let wavelet_args = match sizes.as_slice() {
            [] => csl_arch::image::WaveletArgs::None,
            [Some(4)] => csl_arch::image::WaveletArgs::Word,
            [Some(2)] => csl_arch::image::WaveletArgs::Low16,
            [Some(2), Some(2)] => csl_arch::image::WaveletArgs::Pair16,
            _ => {
                return Err(self.report(
                    Diagnostic::error(codes::BAD_TASK, "a wavelet-triggered task takes one 32-bit parameter, or one or two 16-bit parameters", tspan, "bound here")
                        .with_note("the 32-bit wavelet is split evenly across the parameters: (data, index) for two 16-bit halves"),
                ));
            }
        };
        if let Some(p) = self.prog.as_mut() {
            p.tasks.push(crate::ir::TaskBind {
                id: num,
                kind,
                func,
                args: wavelet_args,
                span,
            });
        }
        Ok(Val::Ct(Value::Void))
    }

    pub(super) fn b_task_state(
        &mut self,
        env: &mut Env,
        n: &str,
        arg: ExprId,
        span: Span,
    ) -> R<Val> {
        let v = self.expr(env, arg)?;
        let sp = self.span(env, arg);
        let id_of = |v: &Value| match v {
            Value::TaskId(_, i) | Value::Color(i) | Value::Queue(true, i) => Some(*i),
            _ => None,
        };
        if env.comptime {
            let Val::Ct(c) = v else {
                return Err(self.not_comptime(sp));
            };
            let Some(id) = id_of(&c) else {
                return Err(self.err(
                    codes::TYPE_MISMATCH,
                    format!("@{n} needs a task id"),
                    sp,
                    "not a task id",
                ));
            };
            if let Some(p) = self.prog.as_mut() {
                let bit = 1u64 << (id & 63);
                match n {
                    "activate" => p.initially_active |= bit,
                    "block" => p.initially_blocked |= bit,
                    _ => p.initially_blocked &= !bit,
                }
            }
            return Ok(Val::Ct(Value::Void));
        }
        let reg = match v {
            Val::Ct(c) => match id_of(&c) {
                Some(id) => self.imm(env, u32::from(id)),
                None => {
                    return Err(self.err(
                        codes::TYPE_MISMATCH,
                        format!("@{n} needs a task id"),
                        sp,
                        "not a task id",
                    ));
                }
            },
            Val::Rt { reg, ty } => {
                let ok = matches!(
                    self.types.get(ty),
                    Type::LocalTaskId
                        | Type::DataTaskId
                        | Type::ControlTaskId
                        | Type::Color
                        | Type::InputQueue
                );
                if !ok {
                    return Err(
                        self.err_ty(codes::TYPE_MISMATCH, ty, sp, "not a task id", |d| {
                            format!("@{n} needs a task id, found {d}")
                        }),
                    );
                }
                reg
            }
        };
        let inst = match n {
            "activate" => Inst::Activate { id: reg },
            "block" => Inst::Block { id: reg },
            _ => Inst::Unblock { id: reg },
        };
        self.fb(env).emit(inst);
        let _ = span;
        Ok(Val::Ct(Value::Void))
    }
}
