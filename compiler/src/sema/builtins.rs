//! The `@builtin` table: one row per builtin CSL documents, with its arity, where it may
//! be used, the kinds of its arguments (for the signature in diagnostics) and its handler;
//! the dispatch and arity checks driven by the table; and the implementations of the
//! general builtins (casts, assertions, `@range`, `@import_module`, ...). Other handlers
//! live in `lang_builtins.rs`, `task_builtins.rs`, `layout.rs`, `fabric.rs` and `dsd/`.

use super::eval::{Env, Val};
use super::types::Type;
use super::value::Value;
use super::{Ctx, R, Reported, Sema};
use crate::diag::{Diagnostic, codes};
use crate::ir::Inst;
use crate::source::Span;
use crate::symbol::{Symbol, SymbolMap};
use crate::syntax::ast::{Ast, ExprId, ExprKind, Ident};
use csl_arch::isa::TrapCode;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::OnceLock;

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

/// How many arguments a builtin takes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Arity {
    /// Exactly this many.
    Exactly(usize),
    /// From the first to the second, inclusive.
    Between(usize, usize),
    /// This many or more.
    AtLeast(usize),
    /// One of two counts (`@range(T, stop)` or `@range(T, start, stop, step)`).
    Either(usize, usize),
}

impl Arity {
    /// Whether `n` arguments are accepted.
    pub fn accepts(self, n: usize) -> bool {
        match self {
            Arity::Exactly(k) => n == k,
            Arity::Between(lo, hi) => (lo..=hi).contains(&n),
            Arity::AtLeast(lo) => n >= lo,
            Arity::Either(a, b) => n == a || n == b,
        }
    }

    /// The fewest arguments accepted.
    pub fn min(self) -> usize {
        match self {
            Arity::Exactly(k) | Arity::Between(k, _) | Arity::AtLeast(k) | Arity::Either(k, _) => k,
        }
    }

    /// The most arguments accepted, `None` for variadic builtins.
    pub fn max(self) -> Option<usize> {
        match self {
            Arity::Exactly(k) | Arity::Between(_, k) | Arity::Either(_, k) => Some(k),
            Arity::AtLeast(_) => None,
        }
    }

    /// The count in words: `2`, `1 to 2`, `at least 1`, `2 or 4`.
    pub fn describe(self) -> String {
        match self {
            Arity::Exactly(k) => format!("{k}"),
            Arity::Between(lo, hi) => format!("{lo} to {hi}"),
            Arity::AtLeast(lo) => format!("at least {lo}"),
            Arity::Either(a, b) => format!("{a} or {b}"),
        }
    }
}

/// The kind of one argument, as the signature in diagnostics names it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Arg {
    /// A type.
    Type,
    /// Any value.
    Value,
    /// An integer.
    Int,
    /// A boolean.
    Bool,
    /// A comptime string.
    Str,
    /// An anonymous struct (parameters, settings).
    Struct,
    /// A color.
    Color,
    /// An input or output queue.
    Queue,
    /// A task id.
    TaskId,
    /// A task.
    Task,
    /// A function.
    Fn,
    /// A pointer.
    Ptr,
    /// A range.
    Range,
    /// A data structure descriptor.
    Dsd,
    /// A data structure register.
    Dsr,
}

impl Arg {
    /// The name in signatures.
    pub fn name(self) -> &'static str {
        match self {
            Arg::Type => "type",
            Arg::Value => "value",
            Arg::Int => "int",
            Arg::Bool => "bool",
            Arg::Str => "comptime_string",
            Arg::Struct => "struct",
            Arg::Color => "color",
            Arg::Queue => "queue",
            Arg::TaskId => "task_id",
            Arg::Task => "task",
            Arg::Fn => "fn",
            Arg::Ptr => "pointer",
            Arg::Range => "range",
            Arg::Dsd => "dsd",
            Arg::Dsr => "dsr",
        }
    }
}

/// One call of a builtin, as its handler sees it (arity and context already checked).
pub struct Call<'a> {
    /// Name without `@`.
    pub name: &'static str,
    /// Where the name is.
    pub name_span: Span,
    /// The arguments.
    pub args: &'a [ExprId],
    /// The whole call.
    pub span: Span,
}

/// Analyses one builtin call.
pub type Handler = fn(&mut Sema, &mut Env, &Call<'_>) -> R<Val>;

/// One row of the builtin table: everything about one builtin.
pub struct BuiltinInfo {
    /// Name without `@`.
    pub name: &'static str,
    /// How many arguments it takes.
    pub arity: Arity,
    /// Where it may be used.
    pub place: Where,
    /// The kind of each argument; for variadic builtins the last one repeats.
    pub params: &'static [Arg],
    /// The implementation.
    pub handler: Handler,
}

impl BuiltinInfo {
    /// The signature shown in diagnostics, e.g.
    /// `@set_tile_code(int, int[, comptime_string, struct])`.
    pub fn signature(&self) -> String {
        // Arguments from `min` on are optional (bracketed); a variadic one repeats (`...`).
        let optional_from = self.arity.max().map_or(usize::MAX, |_| self.arity.min());
        let mut s = String::new();
        for (i, a) in self.params.iter().enumerate() {
            if i == optional_from {
                s.push('[');
            }
            if i > 0 {
                s.push_str(", ");
            }
            s.push_str(a.name());
        }
        if optional_from < self.params.len() {
            s.push(']');
        }
        if self.arity.max().is_none() {
            s.push_str("...");
        }
        format!("@{}({s})", self.name)
    }
}

/// Builds [`BUILTINS`] from rows `name [| name...], arity, place, [argument kinds], handler;`.
macro_rules! table {
    (@kinds [$($k:ident),*]) => { &[$(Arg::$k),*] };
    ($($($name:literal)|+, $arity:expr, $w:ident, $kinds:tt, $h:expr;)*) => {
        /// Every builtin documented for CSL: adding a builtin is adding a row (or a name to
        /// a row of builtins that share everything else).
        pub const BUILTINS: &[BuiltinInfo] = &[$($(BuiltinInfo {
            name: $name,
            arity: $arity,
            place: Where::$w,
            params: table!(@kinds $kinds),
            handler: $h,
        }),+),*];
    };
}

use Arity::{AtLeast, Between, Either, Exactly};

table! {
    "as", Exactly(2), Any, [Type, Value], |s, e, c| s.b_as(e, c.args, c.span);
    "bitcast", Exactly(2), Any, [Type, Value], |s, e, c| s.b_bitcast(e, c.args, c.span);
    "ptrcast", Exactly(2), Runtime, [Type, Ptr], Sema::b_ptrcast;
    "type_of", Exactly(1), Any, [Value], Sema::b_type_of;
    "is_same_type", Exactly(2), Comptime, [Type, Type], Sema::b_is_same_type;
    "is_comptime", Exactly(0), Any, [], |_, e, _| Ok(Val::Ct(Value::Bool(e.comptime)));
    "is_arch", Exactly(1), Any, [Str], Sema::b_is_arch;
    "fp16", Exactly(0), Any, [], Sema::b_fp16;
    "get_int", Exactly(1), Any, [Value], |s, e, c| s.b_get_int_lang(e, c.args[0]);
    "field", Exactly(2), Any, [Value, Str], Sema::b_field;
    "has_field", Exactly(2), Comptime, [Value, Str], Sema::b_has_field;
    "concat_structs", Exactly(2), Comptime, [Struct, Struct], Sema::b_concat_structs;
    "comptime_assert", Between(1, 2), Comptime, [Bool, Str], Sema::b_comptime_assert;
    "comptime_print", AtLeast(0), Any, [Value], Sema::b_comptime_print;
    "assert", Exactly(1), Any, [Bool], |s, e, c| s.b_assert(e, c.args[0], c.span);
    "strlen", Exactly(1), Comptime, [Str], Sema::b_strlen;
    "strcat", AtLeast(0), Comptime, [Str], Sema::b_strcat;
    "get_array", Exactly(1), Comptime, [Str], Sema::b_get_array;
    "get_string_from_byte", Exactly(1), Comptime, [Int], Sema::b_get_string_from_byte;
    "import_comptime_value",
        Exactly(2), Comptime, [Type, Str], |s, e, c| s.b_import_comptime_value(e, c.args);
    "import_module",
        Between(1, 2), Comptime, [Str, Struct], |s, e, c| s.b_import_module(e, c.args, c.span);
    "zeros", Exactly(1), Any, [Type], Sema::b_zeros;
    "constants", Exactly(2), Any, [Type, Value], Sema::b_constants;
    "dimensions" | "element_count" | "element_type" | "rank",
        Exactly(1), Comptime, [Type], Sema::b_dimensions;
    "range", Either(2, 4), Any, [Type, Int, Int, Int], |s, e, c| s.b_range(e, c.args, c.span);
    "range_start" | "range_stop" | "range_step", Exactly(1), Any, [Range], Sema::b_range_start;
    "random16", Exactly(0), Runtime, [], Sema::unsupported;
    "set_active_prng", Exactly(1), Runtime, [Int], Sema::unsupported;
    "set_rectangle",
        Exactly(2), Layout, [Int, Int], |s, e, c| s.layout_builtin(e, c, Sema::l_set_rectangle);
    "set_tile_code",
        Between(2, 4), Layout, [Int, Int, Str, Struct],
        |s, e, c| s.layout_builtin(e, c, Sema::l_set_tile_code);
    "set_color_config",
        Exactly(4), Layout, [Int, Int, Color, Struct],
        |s, e, c| s.layout_builtin(e, c, Sema::l_set_color_config);
    "export_name",
        Between(2, 3), Layout, [Str, Type, Bool],
        |s, e, c| s.layout_builtin(e, c, Sema::l_export_name);
    "get_rectangle", Exactly(0), Any, [], |s, _, c| s.b_get_rectangle(c.span);
    "get_color", Exactly(1), Any, [Int], Sema::b_get_color;
    "get_data_task_id", Exactly(1), Any, [Value], Sema::b_get_data_task_id;
    "get_local_task_id" | "get_control_task_id", Exactly(1), Any, [Int], Sema::b_get_local_task_id;
    "get_input_queue" | "get_output_queue", Exactly(1), Any, [Int], Sema::b_get_input_queue;
    "get_ut_id", Exactly(1), Any, [Int], Sema::b_get_ut_id;
    "get_filter_id", Exactly(1), Comptime, [Int], Sema::unsupported;
    "bind_data_task" | "bind_local_task" | "bind_control_task",
        Exactly(2), TopComptime, [Task, TaskId], |s, e, c| s.b_bind(e, c.name, c.args, c.span);
    "activate" | "block" | "unblock",
        Exactly(1), TopComptimeOrRuntime, [TaskId],
        |s, e, c| s.b_task_state(e, c.name, c.args[0], c.span);
    "initialize_queue",
        Between(1, 2), TopComptime, [Queue, Struct],
        |s, e, c| s.b_initialize_queue(e, c.args, c.span);
    "set_teardown_handler",
        Exactly(2), TopComptime, [Fn, Color], |s, e, c| s.b_set_teardown_handler(e, c.args, c.span);
    "rpc", Exactly(1), TopComptime, [Color], Sema::unsupported;
    "queue_flush", Exactly(1), Runtime, [Queue], Sema::unsupported;
    "set_empty_queue_handler", Exactly(2), TopComptime, [Fn, Queue], Sema::unsupported;
    "set_control_task_table", Exactly(1), TopComptime, [Value], Sema::unsupported;
    "bind_rotating_tasks", Exactly(4), TopComptime, [Value, Value, Value, Value], Sema::unsupported;
    "set_local_color_config",
        Exactly(2), TopComptime, [Color, Struct],
        |s, e, c| s.b_set_local_color_config(e, c.args, c.span);
    "get_dsd", Exactly(2), Any, [Type, Struct], |s, e, c| s.b_get_dsd(e, c.args, c.span);
    "set_dsd_base_addr", Exactly(2), Any, [Dsd, Value], Sema::b_dsd_modify_named;
    "increment_dsd_offset", Exactly(3), Any, [Dsd, Int, Type], Sema::b_dsd_modify_named;
    "set_dsd_length" | "set_dsd_stride", Exactly(2), Any, [Dsd, Int], Sema::b_dsd_modify_named;
    "allocate_fifo",
        Between(1, 2), Any, [Value, Struct], |s, e, c| s.b_allocate_fifo(e, c.args, c.span);
    "set_fifo_read_length" | "set_fifo_write_length",
        Exactly(2), Runtime, [Dsd, Int], Sema::unsupported;
    "get_dsr", Exactly(2), Comptime, [Type, Int], |s, e, c| s.b_get_dsr(e, c.args, c.span);
    "get_xdsr", Exactly(1), Comptime, [Int], |s, e, c| s.b_get_xdsr(e, c.args);
    "load_to_dsr",
        Between(2, 3), TopComptimeOrRuntime, [Dsr, Dsd, Struct],
        |s, e, c| s.b_load_to_dsr(e, c.args, c.span);
    // A DSD operation (`@fadds`, `@mov16`, ...): its DSD operands, then an optional
    // configuration struct.
    "add16" | "addc16" | "sub16" | "and16" | "or16" | "xor16" | "sll16" | "slr16" | "sar16",
        Between(3, 4), Runtime, [Dsd, Dsd, Dsd, Struct], Sema::b_dsd_op_named;
    "clz" | "ctz" | "popcnt" | "mov16" | "mov32" | "fmovh" | "fmovs" | "fabsh" | "fabss" | "fnegh"
        | "fnegs",
        Between(2, 3), Runtime, [Dsd, Dsd, Struct], Sema::b_dsd_op_named;
    "faddh" | "fadds" | "faddhs" | "fsubh" | "fsubs" | "fmulh" | "fmuls" | "fmaxh" | "fmaxs",
        Between(3, 4), Runtime, [Dsd, Dsd, Dsd, Struct], Sema::b_dsd_op_named;
    "fmach" | "fmacs" | "fmachs",
        Between(4, 5), Runtime, [Dsd, Dsd, Dsd, Dsd, Struct], Sema::b_dsd_op_named;
    "fh2s" | "fs2h" | "fh2xp16" | "fs2xp16" | "xp162fh" | "xp162fs" | "fnormh" | "fnorms",
        Between(2, 3), Runtime, [Dsd, Dsd, Struct], Sema::b_dsd_op_named;
    "fscaleh" | "fscales", Between(3, 4), Runtime, [Dsd, Dsd, Dsd, Struct], Sema::b_dsd_op_named;
    "dfilt", Exactly(2), Runtime, [Dsd, Value], Sema::b_dsd_op_named;
    "map", AtLeast(2), Runtime, [Fn, Value], |s, e, c| s.b_map(e, c.args, c.span);
    "set_config", Between(2, 3), TopComptimeOrRuntime, [Int, Value, Struct], Sema::unsupported;
    "get_config", Between(1, 2), Any, [Int, Struct], Sema::unsupported;
    "set_config_unchecked",
        Between(2, 3), TopComptimeOrRuntime, [Int, Value, Struct], Sema::unsupported;
    "get_config_unchecked", Between(1, 2), Any, [Int, Struct], Sema::unsupported;
    "export_symbol",
        Between(1, 2), TopComptime, [Value, Str], |s, e, c| s.b_export_symbol(e, c.args, c.span);
    "get_symbol_id", Exactly(1), Any, [Value], Sema::unsupported;
    "get_symbol_value", Exactly(2), Runtime, [Type, Int], Sema::unsupported;
    "get_tensor_ptr", Exactly(1), Runtime, [Value], Sema::unsupported;
    "has_exported_tensors", Exactly(0), Comptime, [], Sema::unsupported;
}

/// Looks up a builtin.
pub fn info(name: &str) -> Option<&'static BuiltinInfo> {
    BUILTINS.iter().find(|b| b.name == name)
}

/// Looks up a builtin by its interned name: one hash lookup (a layout that places a whole
/// wafer calls builtins millions of times).
pub fn info_sym(name: Symbol) -> Option<&'static BuiltinInfo> {
    static BY_NAME: OnceLock<SymbolMap<usize>> = OnceLock::new();
    let map = BY_NAME.get_or_init(|| {
        // In reverse, so that the first entry of a name wins, as in [`info`].
        let mut m = SymbolMap::default();
        for (i, b) in BUILTINS.iter().enumerate().rev() {
            m.insert(Symbol::intern(b.name), i);
        }
        m
    });
    map.get(&name).and_then(|&i| BUILTINS.get(i))
}

/// The arity diagnostic for a call of `bi` with `n` arguments at `span`.
fn arity_error(bi: &BuiltinInfo, n: usize, span: Span) -> Diagnostic {
    let expected = bi.arity.describe();
    Diagnostic::error(
        codes::BUILTIN_ARGS,
        format!(
            "`@{}` takes {expected} argument{}, but {n} {} given",
            bi.name,
            if expected == "1" { "" } else { "s" },
            if n == 1 { "was" } else { "were" }
        ),
        span,
        "wrong number of arguments",
    )
    .with_help(format!("the signature is `{}`", bi.signature()))
}

impl Sema {
    /// Analyses `@name(args)`.
    pub fn builtin(&mut self, env: &mut Env, name: &Ident, args: &[ExprId], span: Span) -> R<Val> {
        let Some(bi) = info_sym(name.name) else {
            let d = Diagnostic::error(
                codes::UNKNOWN_BUILTIN,
                format!("unknown builtin `@{}`", name.name),
                name.span,
                "no such builtin",
            )
            .with_suggestion(&name.name, BUILTINS.iter().map(|b| b.name), |s| {
                format!("did you mean `@{s}`?")
            });
            return Err(self.report(d));
        };
        self.check_arity(bi, args.len(), span)?;
        self.check_where(env, bi, span)?;
        let call = Call {
            name: bi.name,
            name_span: name.span,
            args,
            span,
        };
        (bi.handler)(self, env, &call)
    }

    /// `@is_same_type`.
    fn b_is_same_type(&mut self, env: &mut Env, c: &Call<'_>) -> R<Val> {
        let args = c.args;
        let a = self.eval_type(env, args[0])?;
        let b = self.eval_type(env, args[1])?;
        Ok(Val::Ct(Value::Bool(a == b)))
    }

    /// `@is_arch`.
    fn b_is_arch(&mut self, env: &mut Env, c: &Call<'_>) -> R<Val> {
        let args = c.args;
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

    /// `@fp16`.
    fn b_fp16(&mut self, _env: &mut Env, _c: &Call<'_>) -> R<Val> {
        let name = self.opts.fp16.clone();
        let t = self
            .types
            .builtin_named(&name)
            .unwrap_or(self.types.common.f16);
        Ok(Val::Ct(Value::Type(t)))
    }

    /// `@comptime_assert`.
    fn b_comptime_assert(&mut self, env: &mut Env, c: &Call<'_>) -> R<Val> {
        let args = c.args;
        let span = c.span;
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
            return Err(self.err(codes::COMPTIME_ASSERT, msg, span, "assertion failed here"));
        }
        Ok(Val::Ct(Value::Void))
    }

    /// `@comptime_print`.
    fn b_comptime_print(&mut self, env: &mut Env, c: &Call<'_>) -> R<Val> {
        let args = c.args;
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

    /// `@zeros`.
    fn b_zeros(&mut self, env: &mut Env, c: &Call<'_>) -> R<Val> {
        let args = c.args;
        let span = c.span;
        let t = self.eval_type(env, args[0])?;
        let z = self.zero_value(t, span)?;
        Ok(Val::Ct(z))
    }

    /// `@constants`.
    fn b_constants(&mut self, env: &mut Env, c: &Call<'_>) -> R<Val> {
        let args = c.args;
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

    /// Reports every call of a known builtin with a wrong number of arguments in a freshly
    /// parsed file, whether or not analysis ever reaches it (a function never called, an
    /// unused constant, a branch folded away).
    pub(crate) fn check_builtin_arities(&mut self, ast: &Ast) {
        for e in ast.exprs.values() {
            if let ExprKind::Builtin { name, args } = &e.kind
                && let Some(bi) = info_sym(name.name)
                && !bi.arity.accepts(args.len())
            {
                self.report(arity_error(bi, args.len(), e.span));
            }
        }
    }

    /// Evaluates the builtin argument `e` at comptime and takes what `pick` finds in its
    /// value; any other value is the error `code` with message `msg`, labelled `label` at
    /// the argument.
    pub(crate) fn comptime_arg<T>(
        &mut self,
        env: &mut Env,
        e: ExprId,
        pick: impl FnOnce(Value) -> Option<T>,
        (code, msg, label): (&'static str, &str, &str),
    ) -> R<T> {
        let span = self.span(env, e);
        match pick(self.eval_comptime(env, e)?) {
            Some(v) => Ok(v),
            None => Err(self.err(code, msg, span, label)),
        }
    }

    /// BUILTIN_ARGS at `span`, labelled `label`: an argument of type `ty` that the builtin
    /// does not take (see [`Sema::err_ty`]).
    pub(crate) fn arg_ty_err(
        &mut self,
        ty: super::types::TypeId,
        span: Span,
        label: &str,
        msg: impl FnOnce(&str) -> String,
    ) -> Reported {
        self.err_ty(codes::BUILTIN_ARGS, ty, span, label, msg)
    }

    /// The function that the comptime argument `e` names; otherwise BUILTIN_ARGS `msg`.
    pub(crate) fn func_arg(
        &mut self,
        env: &mut Env,
        e: ExprId,
        msg: &str,
    ) -> R<super::module::DeclRef> {
        let what = (codes::BUILTIN_ARGS, msg, "not a function");
        self.comptime_arg(env, e, Value::into_func, what)
    }

    /// Stops the analysis of a call of `bi` with `n` arguments if its arity does not accept
    /// them. The diagnostic was given when the file was parsed
    /// ([`Sema::check_builtin_arities`]); it is given here only if that one was dropped
    /// (speculative analysis discards its diagnostics).
    pub(crate) fn check_arity(&mut self, bi: &BuiltinInfo, n: usize, span: Span) -> R<()> {
        if bi.arity.accepts(n) {
            return Ok(());
        }
        let reported = self.diags.iter().any(|d| {
            d.code == codes::BUILTIN_ARGS && d.primary.as_ref().is_some_and(|l| l.span == span)
        });
        if reported {
            return Err(Reported);
        }
        Err(self.report(arity_error(bi, n, span)))
    }

    /// A builtin CSL documents that this version does not implement.
    fn unsupported(&mut self, _env: &mut Env, c: &Call<'_>) -> R<Val> {
        Err(self.err(
            codes::UNSUPPORTED,
            format!("`@{}` is not supported by this version of cslc yet", c.name),
            c.name_span,
            "not supported yet",
        ))
    }

    /// A DSD operation named by the call (`@fadds`, `@mov16`, ...).
    fn b_dsd_op_named(&mut self, env: &mut Env, c: &Call<'_>) -> R<Val> {
        match csl_arch::dsd::DsdOpcode::from_name(c.name) {
            Some(o) => self.b_dsd_op(env, o, c.args, c.span),
            None => self.unsupported(env, c),
        }
    }

    /// `@set_dsd_base_addr`, `@increment_dsd_offset`, `@set_dsd_length`, `@set_dsd_stride`.
    fn b_dsd_modify_named(&mut self, env: &mut Env, c: &Call<'_>) -> R<Val> {
        self.b_dsd_modify(env, c.name, c.args, c.span)
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

    /// A comptime string argument.
    pub(super) fn str_arg(&mut self, env: &mut Env, e: ExprId) -> R<Rc<str>> {
        match self.eval_comptime(env, e)? {
            Value::Str(s) => Ok(s),
            other => {
                let sp = self.span(env, e);
                let t = other.ty(&mut self.types);
                Err(self.err_with_type(codes::TYPE_MISMATCH, "expected a comptime_string", sp, t))
            }
        }
    }

    fn struct_arg(
        &mut self,
        env: &mut Env,
        e: ExprId,
    ) -> R<Rc<Vec<(crate::symbol::Symbol, Value)>>> {
        match self.eval_comptime(env, e)? {
            Value::Struct(f) => Ok(f),
            Value::Void => Ok(Rc::new(Vec::new())),
            other => {
                let sp = self.span(env, e);
                let t = other.ty(&mut self.types);
                Err(self.err_with_type(codes::TYPE_MISMATCH, "expected a struct", sp, t))
            }
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
                return Err(
                    self.arg_ty_err(t, span, "needs a numeric or array type", |d| {
                        format!("@zeros cannot build a value of type {d}")
                    }),
                );
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
            return Err(self.report(self.as_mismatch(vt, t, vspan)));
        }
        match v {
            Val::Ct(c) => {
                let r = match (c, &target) {
                    (Value::BigInt(b), Type::ComptimeInt) => Value::BigInt(b),
                    (Value::BigInt(b), Type::Bool) => {
                        Value::Bool(b.sign() != num_bigint::Sign::NoSign)
                    }
                    (Value::BigInt(b), Type::Int { .. }) => {
                        return Err(self.does_not_fit(b, t, vspan));
                    }
                    (Value::BigInt(b), _) => Value::Float(
                        self.round_checked(super::eval::bigint_to_f64(&b), t, vspan)?,
                        t,
                    ),
                    (Value::Int(i, _), Type::Int { .. }) => {
                        if !self.types.int_fits(t, i) {
                            return Err(self.does_not_fit(i, t, vspan));
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
                            let shown = if f.abs() >= 1e15 {
                                format!("{f:e}")
                            } else {
                                format!("{f}")
                            };
                            return Err(self.does_not_fit(shown, t, vspan));
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
                    return Err(self.err_ty(codes::TYPE_MISMATCH, t, span, "here", |d| {
                        format!("{d} has no runtime representation")
                    }));
                };
                if to == from {
                    return Ok(Val::Rt { reg, ty: t });
                }
                let dst = self.emit_conv(env, reg, from, to);
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
                _ => Err(self.err_ty(
                    codes::TYPE_MISMATCH,
                    vt,
                    vspan,
                    "expected an integer address",
                    |d| format!("cannot bitcast {d} to a pointer"),
                )),
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
        let b = self.types.common.bool_;
        match self.expr_as(env, e, b)? {
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
                self.fb(env).branch(reg, ok, fail);
                self.fb(env).switch_to(fail);
                self.fb(env).emit(Inst::Trap {
                    code: TrapCode::AssertFailed,
                });
                self.fb(env).jump_to(ok);
                Ok(Val::Ct(Value::Void))
            }
        }
    }

    /// `@range` over a type that is not an integer type.
    pub(super) fn range_not_int(&mut self, elem: super::types::TypeId, span: Span) -> Reported {
        let d = self.types.display(elem);
        self.err(
            codes::TYPE_MISMATCH,
            format!("@range needs an integer type, found {d}"),
            span,
            "here",
        )
    }

    /// `(start, stop, step)` from the integer arguments of `@range(T, stop)` or
    /// `@range(T, start, stop, step)`; a zero step is an error at `span` with `label`.
    pub(super) fn range_bounds(
        &mut self,
        ints: &[i128],
        span: Span,
        label: &str,
    ) -> R<(i128, i128, i128)> {
        let (start, stop, step) = match *ints {
            [stop] => (0, stop, 1),
            [start, stop, step] => (start, stop, step),
            _ => return Err(Reported),
        };
        if step == 0 {
            return Err(self.err(
                codes::BUILTIN_ARGS,
                "@range step must not be zero",
                span,
                label,
            ));
        }
        Ok((start, stop, step))
    }

    fn b_range(&mut self, env: &mut Env, args: &[ExprId], span: Span) -> R<Val> {
        let elem = self.eval_type(env, args[0])?;
        if !self.types.is_int(elem) {
            let sp = self.span(env, args[0]);
            return Err(self.range_not_int(elem, sp));
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
        let (start, stop, step) = self.range_bounds(&ints, span, "step is zero")?;
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
        let map: BTreeMap<String, Value> = params
            .iter()
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect();
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
        if path.starts_with("<memcpy/") {
            // The memcpy library's stream colours reach the CEs from the host directly:
            // the static route checks must not expect routes for them.
            for (name, v) in &map {
                if (name.starts_with("MEMCPYH2D_") || name.starts_with("MEMCPYD2H_"))
                    && let Value::Color(c) = v
                {
                    self.host_streams |= 1u32.checked_shl(u32::from(*c)).unwrap_or(0);
                }
            }
        }
        let m = self.instantiate(file, map, prefix, Some((env.module, span)));
        // A field that names no param of the module is probably a typo.
        let ast = self.mods[m].ast.clone();
        let declared = ast.param_names();
        let pspan = args.get(1).map_or(span, |p| self.span(env, *p));
        for (name, _) in params.iter() {
            if !declared.contains(&name.as_str()) {
                let d = Diagnostic::error(
                    codes::UNKNOWN_PARAM,
                    format!("module `{path}` has no param `{name}`"),
                    pspan,
                    "in these params",
                )
                .with_note("the value is ignored")
                .warning()
                .with_suggestion(name, declared.iter().copied(), |s| {
                    format!("did you mean `{s}`?")
                });
                self.report(d);
            }
        }
        Ok(Val::Ct(Value::Module(m)))
    }
}
