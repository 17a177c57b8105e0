//! The `@builtin` table: every builtin CSL documents, with its arity and where it may be
//! used, and the implementations of those this version supports.

use super::eval::{Env, Val};
use super::module::DeclRef;
use super::types::Type;
use super::value::{TaskIdKind, Value};
use super::{Ctx, R, Reported, Sema, did_you_mean};
use crate::diag::{Diagnostic, codes};
use crate::ir::{Inst, Term};
use crate::source::Span;
use crate::syntax::ast::{ExprId, ExprKind, Ident};
use csl_arch::image::TaskKind;
use csl_arch::isa::TrapCode;
use std::collections::BTreeMap;
use std::rc::Rc;

/// Where a builtin may be used.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Where {
    /// Anywhere.
    Any,
    /// Only while evaluating the layout block.
    Layout,
    /// Only in a top-level comptime block of a PE program.
    TopComptime,
    /// In a top-level comptime block (initial state) or at runtime.
    TopComptimeOrRuntime,
    /// Only at runtime.
    Runtime,
    /// Only at comptime.
    Comptime,
}

/// One row of the builtin table: name, min args, max args, where.
pub struct BuiltinInfo {
    /// Name without `@`.
    pub name: &'static str,
    /// Minimum argument count.
    pub min: usize,
    /// Maximum argument count (`usize::MAX` = variadic).
    pub max: usize,
    /// Where it may be used.
    pub place: Where,
}

const N: usize = usize::MAX;

macro_rules! table {
    ($( $name:literal $min:literal $max:tt $w:ident ),* $(,)?) => {
        /// Every builtin documented for CSL.
        pub const BUILTINS: &[BuiltinInfo] = &[ $( BuiltinInfo { name: $name, min: $min, max: table!(@max $max), place: Where::$w } ),* ];
    };
    (@max N) => { N };
    (@max $e:literal) => { $e };
}

table! {
    "as" 2 2 Any, "bitcast" 2 2 Any, "ptrcast" 2 2 Runtime, "type_of" 1 1 Any,
    "is_same_type" 2 2 Comptime, "is_comptime" 0 0 Any, "is_arch" 1 1 Any, "fp16" 0 0 Any,
    "get_int" 1 1 Any, "field" 2 2 Any, "has_field" 2 2 Comptime, "concat_structs" 2 2 Comptime,
    "comptime_assert" 1 2 Comptime, "comptime_print" 0 N Any, "assert" 1 1 Any,
    "strlen" 1 1 Comptime, "strcat" 0 N Comptime, "get_array" 1 1 Comptime,
    "get_string_from_byte" 1 1 Comptime, "import_comptime_value" 2 2 Comptime,
    "import_module" 1 2 Comptime, "zeros" 1 1 Any, "constants" 2 2 Any,
    "dimensions" 1 1 Comptime, "element_count" 1 1 Comptime, "element_type" 1 1 Comptime,
    "rank" 1 1 Comptime, "range" 2 4 Any, "range_start" 1 1 Any, "range_stop" 1 1 Any,
    "range_step" 1 1 Any, "random16" 0 0 Runtime, "set_active_prng" 1 1 Runtime,
    "set_rectangle" 2 2 Layout, "set_tile_code" 2 4 Layout, "set_color_config" 4 4 Layout,
    "export_name" 2 3 Layout, "get_rectangle" 0 0 Any,
    "get_color" 1 1 Any, "get_data_task_id" 1 1 Any, "get_local_task_id" 1 1 Any,
    "get_control_task_id" 1 1 Any, "get_input_queue" 1 1 Any, "get_output_queue" 1 1 Any,
    "get_ut_id" 1 1 Any, "get_filter_id" 1 1 Comptime,
    "bind_data_task" 2 2 TopComptime, "bind_local_task" 2 2 TopComptime,
    "bind_control_task" 2 2 TopComptime, "activate" 1 1 TopComptimeOrRuntime,
    "block" 1 1 TopComptimeOrRuntime, "unblock" 1 1 TopComptimeOrRuntime,
    "initialize_queue" 1 2 TopComptime, "set_teardown_handler" 2 2 TopComptime,
    "rpc" 1 1 TopComptime, "queue_flush" 1 1 Runtime, "set_empty_queue_handler" 2 2 TopComptime,
    "set_control_task_table" 1 1 TopComptime, "bind_rotating_tasks" 4 4 TopComptime,
    "set_local_color_config" 2 2 TopComptime,
    "get_dsd" 2 2 Any, "set_dsd_base_addr" 2 2 Any, "increment_dsd_offset" 3 3 Any,
    "set_dsd_length" 2 2 Any, "set_dsd_stride" 2 2 Any, "allocate_fifo" 1 2 Any,
    "set_fifo_read_length" 2 2 Runtime, "set_fifo_write_length" 2 2 Runtime,
    "get_dsr" 2 2 Comptime, "get_xdsr" 1 1 Comptime, "load_to_dsr" 2 3 TopComptimeOrRuntime,
    "add16" 3 4 Runtime, "addc16" 3 4 Runtime, "sub16" 3 4 Runtime, "and16" 3 4 Runtime,
    "or16" 3 4 Runtime, "xor16" 3 4 Runtime, "sll16" 3 4 Runtime, "slr16" 3 4 Runtime,
    "sar16" 3 4 Runtime, "clz" 2 3 Runtime, "ctz" 2 3 Runtime, "popcnt" 2 3 Runtime,
    "mov16" 2 3 Runtime, "mov32" 2 3 Runtime, "fmovh" 2 3 Runtime, "fmovs" 2 3 Runtime,
    "fabsh" 2 3 Runtime, "fabss" 2 3 Runtime, "fnegh" 2 3 Runtime, "fnegs" 2 3 Runtime,
    "faddh" 3 4 Runtime, "fadds" 3 4 Runtime, "faddhs" 3 4 Runtime, "fsubh" 3 4 Runtime,
    "fsubs" 3 4 Runtime, "fmulh" 3 4 Runtime, "fmuls" 3 4 Runtime, "fmaxh" 3 4 Runtime,
    "fmaxs" 3 4 Runtime, "fmach" 4 5 Runtime, "fmacs" 4 5 Runtime, "fmachs" 4 5 Runtime,
    "fh2s" 2 3 Runtime, "fs2h" 2 3 Runtime, "fh2xp16" 2 3 Runtime, "fs2xp16" 2 3 Runtime,
    "xp162fh" 2 3 Runtime, "xp162fs" 2 3 Runtime, "fnormh" 2 3 Runtime, "fnorms" 2 3 Runtime,
    "fscaleh" 3 4 Runtime, "fscales" 3 4 Runtime, "dfilt" 2 2 Runtime, "map" 2 N Runtime,
    "set_config" 2 3 TopComptimeOrRuntime, "get_config" 1 2 Any,
    "set_config_unchecked" 2 3 TopComptimeOrRuntime, "get_config_unchecked" 1 2 Any,
    "export_symbol" 1 2 TopComptime, "get_symbol_id" 1 1 Any, "get_symbol_value" 2 2 Runtime,
    "get_tensor_ptr" 1 1 Runtime, "has_exported_tensors" 0 0 Comptime,
}

/// Looks up a builtin.
pub fn info(name: &str) -> Option<&'static BuiltinInfo> {
    BUILTINS.iter().find(|b| b.name == name)
}

impl Sema {
    /// Analyses `@name(args)`.
    pub fn builtin(&mut self, env: &mut Env, name: &Ident, args: &[ExprId], span: Span) -> R<Val> {
        let Some(bi) = info(&name.name) else {
            let mut d = Diagnostic::error(
                codes::UNKNOWN_BUILTIN,
                format!("unknown builtin `@{}`", name.name),
                name.span,
                "no such builtin",
            );
            if let Some(s) = did_you_mean(&name.name, BUILTINS.iter().map(|b| b.name)) {
                d = d.with_help(format!("did you mean `@{s}`?"));
            }
            return Err(self.report(d));
        };
        if args.len() < bi.min || args.len() > bi.max {
            let expected = if bi.min == bi.max {
                format!("{}", bi.min)
            } else if bi.max == N {
                format!("at least {}", bi.min)
            } else {
                format!("{} to {}", bi.min, bi.max)
            };
            return Err(self.err(
                codes::BUILTIN_ARGS,
                format!(
                    "`@{}` takes {expected} argument{}, but {} {} given",
                    bi.name,
                    if expected == "1" { "" } else { "s" },
                    args.len(),
                    if args.len() == 1 { "was" } else { "were" }
                ),
                span,
                "wrong number of arguments",
            ));
        }
        self.check_where(env, bi, span)?;
        let n = bi.name;
        match n {
            _ if super::lang_builtins::is_lang_builtin(n) => self.lang_builtin(env, n, args, span),
            "as" => self.b_as(env, args, span),
            "bitcast" => self.b_bitcast(env, args, span),
            "is_same_type" => {
                let a = self.eval_type(env, args[0])?;
                let b = self.eval_type(env, args[1])?;
                Ok(Val::Ct(Value::Bool(a == b)))
            }
            "is_comptime" => Ok(Val::Ct(Value::Bool(env.comptime))),
            "is_arch" => {
                let s = self.str_arg(env, args[0])?;
                if s.as_ref() != "wse2" && s.as_ref() != "wse3" {
                    let sp = self.span(env, args[0]);
                    return Err(self.err(
                        codes::BUILTIN_ARGS,
                        format!("unknown architecture {s:?}"),
                        sp,
                        "expected \"wse2\" or \"wse3\"",
                    ));
                }
                Ok(Val::Ct(Value::Bool(s.as_ref() == self.opts.arch.name())))
            }
            "fp16" => {
                let name = self.opts.fp16.clone();
                let t = self
                    .types
                    .builtin_named(&name)
                    .unwrap_or(self.types.common.f16);
                Ok(Val::Ct(Value::Type(t)))
            }
            "comptime_assert" => {
                let c = self.eval_comptime(env, args[0])?;
                let sp = self.span(env, args[0]);
                let b = self.types.common.bool_;
                let Value::Bool(ok) = self.coerce_value(c, b, sp)? else {
                    return Err(Reported);
                };
                if !ok {
                    let msg = match args.get(1) {
                        Some(m) => self.str_arg(env, *m)?.to_string(),
                        None => "comptime assertion failed".into(),
                    };
                    return Err(self.err(
                        codes::COMPTIME_ASSERT,
                        msg,
                        span,
                        "assertion failed here",
                    ));
                }
                Ok(Val::Ct(Value::Void))
            }
            "comptime_print" => {
                let mut parts = Vec::new();
                for a in args {
                    let v = self.eval_comptime(env, *a)?;
                    parts.push(match v {
                        Value::Str(s) => s.to_string(),
                        other => other.describe(&self.types),
                    });
                }
                self.prints.push(parts.join(" "));
                Ok(Val::Ct(Value::Void))
            }
            "assert" => self.b_assert(env, args[0], span),
            "import_module" => self.b_import_module(env, args, span),
            "zeros" => {
                let t = self.eval_type(env, args[0])?;
                let z = self.zero_value(t, span)?;
                Ok(Val::Ct(z))
            }
            "constants" => {
                let t = self.eval_type(env, args[0])?;
                let Type::Array { elem, dims } = self.types.get(t).clone() else {
                    let sp = self.span(env, args[0]);
                    return Err(self.err(
                        codes::BUILTIN_ARGS,
                        "@constants needs an array type",
                        sp,
                        "not an array type",
                    ));
                };
                let v = self.eval_comptime(env, args[1])?;
                let sp = self.span(env, args[1]);
                let v = self.coerce_value(v, elem, sp)?;
                let n: u64 = dims.iter().product();
                Ok(Val::Ct(Value::Array(t, Rc::new(vec![v; n as usize]))))
            }
            "range" => self.b_range(env, args, span),
            "set_rectangle" | "set_tile_code" | "set_color_config" | "export_name"
            | "get_rectangle" => self.layout_builtin(env, n, args, span),
            "get_color" => {
                let v = self.eval_int_arg_or_rt(env, args[0])?;
                match v {
                    Some(i) => {
                        if !(0..i128::from(csl_arch::fabric::NUM_COLORS)).contains(&i) {
                            let sp = self.span(env, args[0]);
                            return Err(self.err(
                                codes::TASK_ID_RANGE,
                                format!("color {i} does not exist"),
                                sp,
                                "routable colors are 0 to 23",
                            ));
                        }
                        Ok(Val::Ct(Value::Color(i as u8)))
                    }
                    None => self.retype_rt(env, args[0], self.types.common.color),
                }
            }
            "get_local_task_id" | "get_control_task_id" => {
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
            "get_data_task_id" => {
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
            "get_input_queue" | "get_output_queue" => {
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
            "bind_local_task" | "bind_data_task" | "bind_control_task" => {
                self.b_bind(env, n, args, span)
            }
            "activate" | "block" | "unblock" => self.b_task_state(env, n, args[0], span),
            "export_symbol" => self.b_export_symbol(env, args, span),
            "initialize_queue" => self.b_initialize_queue(env, args, span),
            "set_local_color_config" => self.b_set_local_color_config(env, args, span),
            "get_dsd" => self.b_get_dsd(env, args, span),
            "set_dsd_base_addr" | "increment_dsd_offset" | "set_dsd_length" | "set_dsd_stride" => {
                self.b_dsd_modify(env, n, args, span)
            }
            "allocate_fifo" => self.b_allocate_fifo(env, args, span),
            "map" => self.b_map(env, args, span),
            "set_teardown_handler" => self.b_set_teardown_handler(env, args, span),
            "get_dsr" => self.b_get_dsr(env, args, span),
            "get_xdsr" => self.b_get_xdsr(env, args),
            "load_to_dsr" => self.b_load_to_dsr(env, args, span),
            "get_ut_id" => {
                let i = self.eval_int(env, args[0])?;
                let uts = csl_arch::fabric::MICROTHREADS;
                if !(0..i128::from(uts)).contains(&i) {
                    let sp = self.span(env, args[0]);
                    return Err(self.err(
                        codes::TASK_ID_RANGE,
                        format!("microthread {i} does not exist"),
                        sp,
                        format!("microthreads are 0 to {}", uts - 1),
                    ));
                }
                let ci = self.types.common.comptime_int;
                Ok(Val::Ct(Value::Struct(Rc::new(vec![(
                    "ut".into(),
                    Value::Int(i, ci),
                )]))))
            }
            op if csl_arch::dsd::DsdOpcode::from_name(op).is_some() => {
                match csl_arch::dsd::DsdOpcode::from_name(op) {
                    Some(o) => self.b_dsd_op(env, o, args, span),
                    None => Err(Reported),
                }
            }
            _ => Err(self.err(
                codes::UNSUPPORTED,
                format!("`@{n}` is not supported by this version of cslc yet"),
                name.span,
                "not supported yet",
            )),
        }
    }

    fn check_where(&mut self, env: &Env, bi: &BuiltinInfo, span: Span) -> R<()> {
        let ok = match bi.place {
            Where::Any => true,
            Where::Layout => env.ctx == Ctx::Layout,
            Where::TopComptime => env.ctx == Ctx::TopComptime,
            Where::TopComptimeOrRuntime => env.ctx == Ctx::TopComptime || !env.comptime,
            Where::Runtime => !env.comptime,
            Where::Comptime => true,
        };
        if ok {
            return Ok(());
        }
        let (msg, help) = match bi.place {
            Where::Layout => (
                "can only be used in the layout block",
                "move it into `layout { ... }` of the top-level file",
            ),
            Where::TopComptime => (
                "can only be used in a top-level comptime block",
                "move it into a top-level `comptime { ... }` block",
            ),
            Where::TopComptimeOrRuntime => (
                "can only be used at runtime or in a top-level comptime block",
                "call it from a function, a task or a top-level comptime block",
            ),
            _ => (
                "can only be used at runtime",
                "call it from a function or a task",
            ),
        };
        Err(self.report(
            Diagnostic::error(
                codes::BUILTIN_CONTEXT,
                format!("`@{}` {msg}", bi.name),
                span,
                "not allowed here",
            )
            .with_help(help),
        ))
    }

    fn str_arg(&mut self, env: &mut Env, e: ExprId) -> R<Rc<str>> {
        match self.eval_comptime(env, e)? {
            Value::Str(s) => Ok(s),
            other => {
                let sp = self.span(env, e);
                let t = other.ty(&mut self.types);
                let d = self.types.display(t);
                Err(self.err(
                    codes::TYPE_MISMATCH,
                    "expected a comptime_string",
                    sp,
                    format!("this has type {d}"),
                ))
            }
        }
    }

    fn struct_arg(&mut self, env: &mut Env, e: ExprId) -> R<Rc<Vec<(String, Value)>>> {
        match self.eval_comptime(env, e)? {
            Value::Struct(f) => Ok(f),
            Value::Void => Ok(Rc::new(Vec::new())),
            other => {
                let sp = self.span(env, e);
                let t = other.ty(&mut self.types);
                let d = self.types.display(t);
                Err(self.err(
                    codes::TYPE_MISMATCH,
                    "expected a struct",
                    sp,
                    format!("this has type {d}"),
                ))
            }
        }
    }

    /// A comptime integer argument, or `None` when the argument is a runtime value.
    fn eval_int_arg_or_rt(&mut self, env: &mut Env, e: ExprId) -> R<Option<i128>> {
        match self.expr(env, e)? {
            Val::Ct(Value::Int(i, _)) => Ok(Some(i)),
            Val::Ct(other) => {
                let sp = self.span(env, e);
                let t = other.ty(&mut self.types);
                let d = self.types.display(t);
                Err(self.err(
                    codes::TYPE_MISMATCH,
                    "expected an integer",
                    sp,
                    format!("this has type {d}"),
                ))
            }
            Val::Rt { .. } => Ok(None),
        }
    }

    fn retype_rt(&mut self, env: &mut Env, e: ExprId, ty: super::types::TypeId) -> R<Val> {
        let v = self.expr(env, e)?;
        let sp = self.span(env, e);
        let u16t = self.types.common.u16;
        let v = self.coerce(env, v, u16t, sp)?;
        match v {
            Val::Rt { reg, .. } => Ok(Val::Rt { reg, ty }),
            Val::Ct(_) => Err(Reported),
        }
    }

    /// The all-zero value of a type.
    pub fn zero_value(&mut self, t: super::types::TypeId, span: Span) -> R<Value> {
        Ok(match self.types.get(t).clone() {
            Type::Array { elem, dims } => {
                let z = self.zero_value(elem, span)?;
                let n: u64 = dims.iter().product();
                Value::Array(t, Rc::new(vec![z; n as usize]))
            }
            Type::Int { .. } | Type::ComptimeInt => Value::Int(0, t),
            Type::F16 | Type::F32 | Type::ComptimeFloat => Value::Float(0.0, t),
            Type::Bool => Value::Bool(false),
            _ => {
                let d = self.types.display(t);
                return Err(self.err(
                    codes::BUILTIN_ARGS,
                    format!("@zeros cannot build a value of type {d}"),
                    span,
                    "needs a numeric or array type",
                ));
            }
        })
    }

    fn b_as(&mut self, env: &mut Env, args: &[ExprId], span: Span) -> R<Val> {
        let t = self.eval_type(env, args[0])?;
        let v = self.expr(env, args[1])?;
        let vspan = self.span(env, args[1]);
        let vt = self.val_ty(&v);
        if matches!(self.types.get(t), Type::Enum(_)) || matches!(self.types.get(vt), Type::Enum(_))
        {
            return self.as_enum(env, t, v, vspan);
        }
        let target = self.types.get(t).clone();
        let numeric_like = |s: &Sema, ty| s.types.is_numeric(ty) || ty == s.types.common.bool_;
        if !numeric_like(self, t) || !numeric_like(self, vt) {
            if vt == t {
                return Ok(v);
            }
            let (a, b) = (self.types.display(vt), self.types.display(t));
            return Err(self.err(
                codes::TYPE_MISMATCH,
                format!("@as cannot convert {a} to {b}"),
                vspan,
                format!("this has type {a}"),
            ));
        }
        match v {
            Val::Ct(c) => {
                let r = match (c, &target) {
                    (Value::BigInt(b), Type::ComptimeInt) => Value::BigInt(b),
                    (Value::BigInt(b), Type::Bool) => {
                        Value::Bool(b.sign() != num_bigint::Sign::NoSign)
                    }
                    (Value::BigInt(b), Type::Int { .. }) => {
                        let d = self.types.display(t);
                        return Err(self.err(
                            codes::OUT_OF_RANGE,
                            format!("{b} does not fit in {d}"),
                            vspan,
                            "out of range",
                        ));
                    }
                    (Value::BigInt(b), _) => Value::Float(
                        self.round_checked(super::eval::bigint_to_f64(&b), t, vspan)?,
                        t,
                    ),
                    (Value::Int(i, _), Type::Int { .. }) => {
                        if !self.types.int_fits(t, i) {
                            let d = self.types.display(t);
                            return Err(self.err(
                                codes::OUT_OF_RANGE,
                                format!("{i} does not fit in {d}"),
                                vspan,
                                "out of range",
                            ));
                        }
                        Value::Int(i, t)
                    }
                    (Value::Int(i, _), Type::ComptimeInt) => Value::Int(i, t),
                    (Value::Int(i, _), Type::Bool) => Value::Bool(i != 0),
                    (Value::Int(i, _), _) => {
                        Value::Float(self.round_checked(i as f64, t, vspan)?, t)
                    }
                    (Value::Float(f, _), Type::Int { .. } | Type::ComptimeInt) => {
                        let i = f.trunc();
                        // `as i128` saturates: check the range first (2^127 is exact in f64).
                        let in_i128 = (-(2f64.powi(127))..2f64.powi(127)).contains(&i);
                        if !in_i128
                            && matches!(target, Type::ComptimeInt)
                            && let Some(b) = super::eval::bigint_from_f64(i)
                        {
                            // Exact: every finite f64 is an integer times a power of two.
                            Value::comptime_int(b, t)
                        } else if !in_i128 || !self.types.int_fits(t, i as i128) {
                            let d = self.types.display(t);
                            let shown = if f.abs() >= 1e15 {
                                format!("{f:e}")
                            } else {
                                format!("{f}")
                            };
                            return Err(self.err(
                                codes::OUT_OF_RANGE,
                                format!("{shown} does not fit in {d}"),
                                vspan,
                                "out of range",
                            ));
                        } else {
                            Value::Int(i as i128, t)
                        }
                    }
                    (Value::Float(f, _), Type::Bool) => Value::Bool(f != 0.0),
                    (Value::Float(f, _), _) => Value::Float(self.round_checked(f, t, vspan)?, t),
                    (Value::Bool(b), Type::Bool) => Value::Bool(b),
                    (Value::Bool(b), Type::Int { .. } | Type::ComptimeInt) => {
                        Value::Int(i128::from(b), t)
                    }
                    (Value::Bool(b), _) => Value::Float(f64::from(u8::from(b)), t),
                    _ => return Err(Reported),
                };
                Ok(Val::Ct(r))
            }
            Val::Rt { reg, ty } => {
                let (Some(to), Some(from)) = (self.types.num_ty(t), self.types.num_ty(ty)) else {
                    let d = self.types.display(t);
                    return Err(self.err(
                        codes::TYPE_MISMATCH,
                        format!("{d} has no runtime representation"),
                        span,
                        "here",
                    ));
                };
                if to == from {
                    return Ok(Val::Rt { reg, ty: t });
                }
                let dst = self.fb(env).reg();
                self.fb(env).emit(Inst::Conv {
                    to,
                    from,
                    dst,
                    src: reg,
                });
                Ok(Val::Rt { reg: dst, ty: t })
            }
        }
    }

    fn b_bitcast(&mut self, env: &mut Env, args: &[ExprId], _span: Span) -> R<Val> {
        let t = self.eval_type(env, args[0])?;
        let v = self.expr(env, args[1])?;
        let vspan = self.span(env, args[1]);
        let vt = self.val_ty(&v);
        let tsize = self.types.num_ty(t).map(|n| n.size());
        let vsize = self.types.num_ty(vt).map(|n| n.size());
        let is_ptr = matches!(self.types.get(t), Type::Ptr { .. } | Type::ManyPtr { .. });
        if is_ptr {
            return match v {
                Val::Ct(Value::Int(i, _)) if (0..=0xffff).contains(&i) => {
                    Ok(Val::Ct(Value::AbsPtr {
                        addr: i as u32,
                        ty: t,
                    }))
                }
                Val::Ct(Value::Int(i, _)) => Err(self.err(
                    codes::OUT_OF_RANGE,
                    format!("address {i} is outside the 16-bit address space"),
                    vspan,
                    "out of range",
                )),
                Val::Rt { reg, ty } if self.types.int_info(ty).is_some() => {
                    Ok(Val::Rt { reg, ty: t })
                }
                Val::Rt { reg, ty }
                    if matches!(self.types.get(ty), Type::Ptr { .. } | Type::ManyPtr { .. }) =>
                {
                    Ok(Val::Rt { reg, ty: t })
                }
                _ => {
                    let d = self.types.display(vt);
                    Err(self.err(
                        codes::TYPE_MISMATCH,
                        format!("cannot bitcast {d} to a pointer"),
                        vspan,
                        "expected an integer address",
                    ))
                }
            };
        }
        if tsize.is_none() || tsize != vsize {
            let (a, b) = (self.types.display(vt), self.types.display(t));
            let size = |x: Option<u32>| {
                x.map_or("no runtime size".to_string(), |n| {
                    format!("{n} byte{}", if n == 1 { "" } else { "s" })
                })
            };
            return Err(self.report(
                Diagnostic::error(
                    codes::TYPE_MISMATCH,
                    format!("@bitcast from {a} to {b} changes the size"),
                    vspan,
                    format!("this has type {a} ({})", size(vsize)),
                )
                .with_note(format!(
                    "{b} has {}; @bitcast only reinterprets bits of the same width",
                    size(tsize)
                ))
                .with_help("convert the value with `@as` instead"),
            ));
        }
        match v {
            Val::Rt { reg, .. } => Ok(Val::Rt { reg, ty: t }),
            Val::Ct(c) => {
                let bits = self.scalar_bits(&c, vspan)?;
                Ok(Val::Ct(self.value_from_bits(bits, t)))
            }
        }
    }

    fn value_from_bits(&mut self, bits: u32, t: super::types::TypeId) -> Value {
        match self.types.get(t).clone() {
            Type::F32 => Value::Float(f64::from(f32::from_bits(bits)), t),
            Type::F16 => Value::Float(half::f16::from_bits(bits as u16).to_f64(), t),
            Type::Bool => Value::Bool(bits != 0),
            Type::Int { signed, bits: w } => {
                Value::Int(super::eval::wrap_int(i128::from(bits), signed, w), t)
            }
            _ => Value::Int(i128::from(bits), t),
        }
    }

    fn b_assert(&mut self, env: &mut Env, e: ExprId, span: Span) -> R<Val> {
        let c = self.expr(env, e)?;
        let sp = self.span(env, e);
        let b = self.types.common.bool_;
        match self.coerce(env, c, b, sp)? {
            Val::Ct(Value::Bool(true)) => Ok(Val::Ct(Value::Void)),
            Val::Ct(_) => {
                if env.comptime {
                    Err(self.err(
                        codes::COMPTIME_ASSERT,
                        "assertion failed",
                        span,
                        "this is false",
                    ))
                } else {
                    self.fb(env).emit(Inst::Trap {
                        code: TrapCode::AssertFailed,
                    });
                    Ok(Val::Ct(Value::Void))
                }
            }
            Val::Rt { reg, .. } => {
                let fail = self.fb(env).block();
                let ok = self.fb(env).block();
                self.fb(env).terminate(Term::Branch {
                    cond: reg,
                    then: ok,
                    otherwise: fail,
                });
                self.fb(env).switch_to(fail);
                self.fb(env).emit(Inst::Trap {
                    code: TrapCode::AssertFailed,
                });
                self.fb(env).terminate(Term::Jump(ok));
                self.fb(env).switch_to(ok);
                Ok(Val::Ct(Value::Void))
            }
        }
    }

    fn b_range(&mut self, env: &mut Env, args: &[ExprId], span: Span) -> R<Val> {
        if args.len() == 3 {
            return Err(self.err(
                codes::BUILTIN_ARGS,
                "@range takes (T, stop) or (T, start, stop, step)",
                span,
                "3 arguments given",
            ));
        }
        let elem = self.eval_type(env, args[0])?;
        if !self.types.is_int(elem) {
            let d = self.types.display(elem);
            let sp = self.span(env, args[0]);
            return Err(self.err(
                codes::TYPE_MISMATCH,
                format!("@range needs an integer type, found {d}"),
                sp,
                "here",
            ));
        }
        let mut ints = Vec::new();
        for &a in &args[1..] {
            let v = self.eval_comptime(env, a)?;
            let sp = self.span(env, a);
            let Value::Int(i, _) = self.coerce_value(v, elem, sp)? else {
                return Err(Reported);
            };
            ints.push(i);
        }
        let (start, stop, step) = if ints.len() == 1 {
            (0, ints[0], 1)
        } else {
            (ints[0], ints[1], ints[2])
        };
        if step == 0 {
            return Err(self.err(
                codes::BUILTIN_ARGS,
                "@range step must not be zero",
                span,
                "step is zero",
            ));
        }
        Ok(Val::Ct(Value::Range {
            start,
            stop,
            step,
            elem,
        }))
    }

    fn b_import_module(&mut self, env: &mut Env, args: &[ExprId], span: Span) -> R<Val> {
        let path = self.str_arg(env, args[0])?;
        let params = match args.get(1) {
            Some(p) => self.struct_arg(env, *p)?,
            None => Rc::new(Vec::new()),
        };
        let from = self.mods[env.module].file;
        let sp = self.span(env, args[0]);
        let file = self.load_module_file(&path, from, sp)?;
        let map: BTreeMap<String, Value> = params.iter().cloned().collect();
        let prefix = {
            let stem = path
                .trim_start_matches('<')
                .trim_end_matches('>')
                .trim_end_matches(".csl");
            let stem = stem.rsplit('/').next().unwrap_or(stem).to_string();
            let parent = self.mods[env.module].prefix.clone();
            let n = self.mods.len();
            if parent.is_empty() {
                format!("{stem}#{n}")
            } else {
                format!("{parent}.{stem}#{n}")
            }
        };
        self.check_import(file, &map, env.module, span)?;
        let m = self.instantiate(file, map, prefix, Some((env.module, span)));
        // A field that names no param of the module is probably a typo.
        let ast = self.mods[m].ast.clone();
        let declared: Vec<&str> = ast
            .decls
            .iter()
            .filter_map(|d| match &d.kind {
                crate::syntax::ast::DeclKind::Param { name, .. } => Some(name.name.as_str()),
                _ => None,
            })
            .collect();
        let pspan = args.get(1).map_or(span, |p| self.span(env, *p));
        for (name, _) in params.iter() {
            if !declared.contains(&name.as_str()) {
                let mut d = Diagnostic::error(
                    codes::UNKNOWN_PARAM,
                    format!("module `{path}` has no param `{name}`"),
                    pspan,
                    "in these params",
                )
                .with_note("the value is ignored")
                .warning();
                if let Some(s) = did_you_mean(name, declared.iter().copied()) {
                    d = d.with_help(format!("did you mean `{s}`?"));
                }
                self.report(d);
            }
        }
        Ok(Val::Ct(Value::Module(m)))
    }

    /// Resolves an expression naming a top-level declaration (`x` or `module.x`).
    fn decl_ref_of(&mut self, env: &mut Env, e: ExprId) -> R<Option<DeclRef>> {
        let ast = env.ast.clone();
        Ok(match &ast.exprs[e].kind {
            ExprKind::Ident(n) => {
                if env.scopes.iter().flatten().any(|(m, _)| m == n) {
                    None
                } else {
                    match self.lookup_decl(env.module, n) {
                        Some(d) => Some(d),
                        None => {
                            let sp = ast.exprs[e].span;
                            return Err(self.undefined(env, n, sp));
                        }
                    }
                }
            }
            ExprKind::Field { base, name } => match self.expr(env, *base)? {
                Val::Ct(Value::Module(m)) => self.lookup_decl(m, &name.name),
                _ => None,
            },
            _ => None,
        })
    }

    fn b_export_symbol(&mut self, env: &mut Env, args: &[ExprId], span: Span) -> R<Val> {
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
            Some(crate::syntax::ast::DeclKind::Var(v)) => v.name.name.clone(),
            Some(crate::syntax::ast::DeclKind::Fn(f)) => f.name.name.clone(),
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
            Some(n) => self.str_arg(env, *n)?.to_string(),
            None => decl_name,
        };
        let Some(exp) = self.export_names.iter().find(|e| e.name == name).cloned() else {
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
            p.symbols.push(crate::ir::ExportedSymbol { name, target });
        }
        Ok(Val::Ct(Value::Void))
    }

    fn b_bind(&mut self, env: &mut Env, n: &str, args: &[ExprId], span: Span) -> R<Val> {
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
            return Err(self.report(
                Diagnostic::error(
                    codes::TASK_ID_TWICE,
                    format!("task id {num} is bound twice"),
                    span,
                    "bound again here",
                )
                .with_label(prev, "first bound here"),
            ));
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

    fn b_task_state(&mut self, env: &mut Env, n: &str, arg: ExprId, span: Span) -> R<Val> {
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
                    let d = self.types.display(ty);
                    return Err(self.err(
                        codes::TYPE_MISMATCH,
                        format!("@{n} needs a task id, found {d}"),
                        sp,
                        "not a task id",
                    ));
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
