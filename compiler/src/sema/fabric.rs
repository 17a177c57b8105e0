//! PE-side fabric configuration builtins: `@initialize_queue` and
//! `@set_local_color_config`, and the parsing of colour configuration structs shared with
//! the layout's `@set_color_config`.

use super::eval::{Env, Val};
use super::value::Value;
use super::{R, Sema};
use crate::diag::{Diagnostic, codes};
use crate::source::Span;
use crate::syntax::ast::ExprId;
use csl_arch::fabric::Direction;
use csl_arch::image::{
    ColorConfig, FilterConfig, FilterKind, PopMode, QueueBinding, SwitchConfig, SwitchPos,
};

impl Sema {
    /// `@initialize_queue(q, .{ .color = c [, .priority = ...] })`.
    pub fn b_initialize_queue(&mut self, env: &mut Env, args: &[ExprId], span: Span) -> R<Val> {
        let q = self.eval_comptime(env, args[0])?;
        let qspan = self.span(env, args[0]);
        let Value::Queue(input, id) = q else {
            return Err(self.err(
                codes::TYPE_MISMATCH,
                "@initialize_queue needs a queue",
                qspan,
                "expected `@get_input_queue(n)` or `@get_output_queue(n)`",
            ));
        };
        let color = match args.get(1) {
            Some(c) => {
                let cfg = self.eval_comptime(env, *c)?;
                match field(&cfg, "color") {
                    Some(Value::Color(c)) => Some(c),
                    Some(_) => {
                        let s = self.span(env, *c);
                        return Err(self.err(
                            codes::TYPE_MISMATCH,
                            "`.color` must be a color",
                            s,
                            "here",
                        ));
                    }
                    None => None,
                }
            }
            None => None,
        };
        let Some(color) = color else {
            if self.opts.arch == csl_arch::Arch::Wse3 {
                return Err(self.err(
                    codes::BUILTIN_ARGS,
                    "on wse3, @initialize_queue needs `.{ .color = c }`",
                    span,
                    "no color given",
                ));
            }
            return Ok(Val::Ct(Value::Void));
        };
        if let Some(p) = self.prog.as_mut() {
            let list = if input {
                &mut p.input_queues
            } else {
                &mut p.output_queues
            };
            if list.iter().any(|b| b.queue == id) {
                return Err(self.err(
                    codes::TASK_ID_TWICE,
                    format!("queue {id} is initialised twice"),
                    span,
                    "again here",
                ));
            }
            list.push(QueueBinding { queue: id, color });
        }
        Ok(Val::Ct(Value::Void))
    }

    /// `@set_local_color_config(color, cfg)`: applies to every PE running this code.
    pub fn b_set_local_color_config(
        &mut self,
        env: &mut Env,
        args: &[ExprId],
        span: Span,
    ) -> R<Val> {
        let c = self.color_arg(env, args[0])?;
        let cfg = self.eval_comptime(env, args[1])?;
        let cspan = self.span(env, args[1]);
        let config = self.color_config(0, 0, c, &cfg, cspan)?;
        if let Some(p) = self.prog.as_mut() {
            if p.local_routes.iter().any(|(r, _)| r.color == c) {
                return Err(self.err(
                    codes::LAYOUT_TILE,
                    format!("color {c} is configured twice in this program"),
                    span,
                    "again here",
                ));
            }
            p.local_routes.push((config, span));
        }
        Ok(Val::Ct(Value::Void))
    }

    /// Parses a colour configuration struct (`.routes`, `.switches`, `.filter`,
    /// `.teardown`, `.message_passing`; a bare `.{ .rx = ..., .tx = ... }` is accepted as
    /// the routes).
    pub fn color_config(
        &mut self,
        x: u32,
        y: u32,
        color: u8,
        cfg: &Value,
        span: Span,
    ) -> R<ColorConfig> {
        let routes = field(cfg, "routes").unwrap_or_else(|| cfg.clone());
        let rx = self.dirs(field(&routes, "rx"), span, "rx")?;
        let tx = self.dirs(field(&routes, "tx"), span, "tx")?;
        let color_swap_x = matches!(field(&routes, "color_swap_x"), Some(Value::Bool(true)));
        let color_swap_y = matches!(field(&routes, "color_swap_y"), Some(Value::Bool(true)));
        let mut switches = None;
        if let Some(sw) = field(cfg, "switches") {
            if !self.opts.arch.color_has_switch(color) {
                return Err(self.report(
                    Diagnostic::error(
                        codes::TASK_ID_RANGE,
                        format!("color {color} cannot have switches on {}", self.opts.arch),
                        span,
                        "switches configured here",
                    )
                    .with_note(
                        "on wse3, switches exist only for colors 0-9, 12, 13, 16, 17, 20 and 21",
                    ),
                ));
            }
            let mut sc = SwitchConfig::default();
            for (i, name) in ["pos1", "pos2", "pos3"].iter().enumerate() {
                if let Some(p) = field(&sw, name) {
                    if matches!(field(&p, "invalid"), Some(Value::Bool(true))) {
                        continue;
                    }
                    let rx = match field(&p, "rx") {
                        Some(v) => self.dirs(Some(v), span, "rx")?.first().copied(),
                        None => None,
                    };
                    let tx = match field(&p, "tx") {
                        Some(v) => Some(self.dirs(Some(v), span, "tx")?),
                        None => None,
                    };
                    if let Some(slot) = sc.positions.get_mut(i) {
                        *slot = SwitchPos { rx, tx };
                    }
                }
            }
            if let Some(Value::Int(n, _)) = field(&sw, "current_switch_pos") {
                if !(0..=3).contains(&n) {
                    return Err(self.err(
                        codes::OUT_OF_RANGE,
                        format!("switch position {n} does not exist"),
                        span,
                        "positions are 0 to 3",
                    ));
                }
                sc.current = n as u8;
            }
            sc.ring_mode = matches!(field(&sw, "ring_mode"), Some(Value::Bool(true)));
            let pm = field(&sw, "pop_mode").or_else(|| field(&routes, "pop_mode"));
            if let Some(pm) = pm {
                sc.pop_mode = match true_field(&pm).as_deref() {
                    Some("always_pop") => PopMode::AlwaysPop,
                    Some("pop_on_advance") => PopMode::PopOnAdvance,
                    Some("pop_on_advance_nop") => PopMode::PopOnAdvanceNop,
                    _ => PopMode::NoPop,
                };
            }
            switches = Some(sc);
        }
        let filter = match field(cfg, "filter") {
            Some(f) => Some(self.filter_config(&f, span)?),
            None => None,
        };
        let teardown = matches!(field(cfg, "teardown"), Some(Value::Bool(true)));
        let message_passing = matches!(field(cfg, "message_passing"), Some(Value::Bool(true)));
        if message_passing {
            if !self.opts.arch.has_message_passing() {
                let label = "message passing enabled here";
                let dg = self.needs_arch("message passing", csl_arch::Arch::Wse3, span, label);
                let help = "compile with --arch=wse3, or route this color with .rx/.tx";
                return Err(self.report(dg.with_help(help)));
            }
            if !rx.is_empty() || !tx.is_empty() || switches.is_some() || filter.is_some() {
                return Err(self.err(
                    codes::BUILTIN_ARGS,
                    format!("color {color} routes messages by their headers"),
                    span,
                    "message passing takes no .rx, .tx, .switches or .filter",
                ));
            }
        }
        Ok(ColorConfig {
            x,
            y,
            color,
            rx,
            tx,
            switches,
            filter,
            teardown,
            color_swap_x,
            color_swap_y,
            message_passing,
        })
    }

    fn filter_config(&mut self, f: &Value, span: Span) -> R<FilterConfig> {
        let kind =
            match field(f, "kind").and_then(|k| true_field(&k)).as_deref() {
                Some("range") => FilterKind::Range,
                Some("counter") => FilterKind::Counter,
                Some("sparse_counter") => FilterKind::SparseCounter,
                _ => return Err(self.err(
                    codes::BUILTIN_ARGS,
                    "a filter needs `.kind = .{ .range = true }` (or .counter, .sparse_counter)",
                    span,
                    "here",
                )),
            };
        let num = |name: &str| match field(f, name) {
            Some(Value::Int(n, _)) => n.clamp(0, i128::from(u16::MAX)) as u16,
            _ => 0,
        };
        let flag = |name: &str| matches!(field(f, name), Some(Value::Bool(true)));
        Ok(FilterConfig {
            kind,
            count_data: flag("count_data"),
            count_control: flag("count_control"),
            init_counter: num("init_counter"),
            limit1: num("limit1"),
            limit2: match field(f, "limit2") {
                Some(Value::Int(n, _)) => Some(n.clamp(0, i128::from(u16::MAX)) as u16),
                _ => None,
            },
            max_counter: num("max_counter"),
            filter_control: flag("filter_control"),
            min_idx: num("min_idx"),
            max_idx: num("max_idx"),
        })
    }

    fn dirs(&mut self, v: Option<Value>, span: Span, what: &str) -> R<Vec<Direction>> {
        let Some(v) = v else { return Ok(Vec::new()) };
        let items: Vec<Value> = match v {
            Value::Dir(d) => return Ok(vec![d]),
            Value::Struct(fs) => fs.iter().map(|(_, v)| v.clone()).collect(),
            Value::Array(_, e) => e.to_vec(),
            _ => {
                return Err(self.err(
                    codes::TYPE_MISMATCH,
                    format!("`.{what}` must list directions"),
                    span,
                    "expected e.g. `.{ WEST, RAMP }`",
                ));
            }
        };
        let mut out = Vec::new();
        for i in items {
            match i {
                Value::Dir(d) => out.push(d),
                _ => {
                    return Err(self.err(
                        codes::TYPE_MISMATCH,
                        format!("`.{what}` must list directions"),
                        span,
                        "expected NORTH, SOUTH, EAST, WEST or RAMP",
                    ));
                }
            }
        }
        Ok(out)
    }
}

fn field(v: &Value, name: &str) -> Option<Value> {
    match v {
        Value::Struct(f) => f.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()),
        _ => None,
    }
}

/// The name of the field set to `true` in `.{ .name = true }`.
fn true_field(v: &Value) -> Option<String> {
    match v {
        Value::Struct(f) => f
            .iter()
            .find(|(_, v)| matches!(v, Value::Bool(true)))
            .map(|(n, _)| n.to_string()),
        _ => None,
    }
}

impl Sema {
    /// Evaluates a comptime colour argument.
    pub(crate) fn color_arg(&mut self, env: &mut Env, e: ExprId) -> R<u8> {
        let color = |v| match v {
            Value::Color(c) => Some(c),
            _ => None,
        };
        let what = (codes::TYPE_MISMATCH, "expected a color", "not a color");
        self.comptime_arg(env, e, color, what)
    }

    /// `@set_teardown_handler(f, color)`: `f` runs when `color` enters teardown.
    pub fn b_set_teardown_handler(&mut self, env: &mut Env, args: &[ExprId], span: Span) -> R<Val> {
        let fspan = self.span(env, args[0]);
        let d = self.func_arg(env, args[0], "@set_teardown_handler needs a function")?;
        let c = self.color_arg(env, args[1])?;
        if let Some((_, _, prev)) = self.teardown_handlers.iter().find(|(_, col, _)| *col == c) {
            let p = *prev;
            return Err(self.report(
                Diagnostic::error(
                    codes::TASK_ID_TWICE,
                    format!("color {c} has two teardown handlers"),
                    span,
                    "second handler here",
                )
                .with_label(p, "first handler here"),
            ));
        }
        let f = self.lower_fn(d, fspan)?;
        if self.sigs.get(&f).is_some_and(|(p, _)| !p.is_empty()) {
            return Err(self.err(
                codes::BUILTIN_ARGS,
                "a teardown handler takes no parameters",
                fspan,
                "has parameters",
            ));
        }
        self.teardown_handlers.push((f, c, span));
        Ok(Val::Ct(Value::Void))
    }

    /// With teardown handlers registered, binds the teardown task id to a generated task
    /// that calls the handler of every colour in teardown.
    pub fn build_teardown_task(&mut self) {
        use crate::ir::{Inst, Term};
        use csl_arch::isa::{BinOp, CmpOp, NumTy, Width};
        let Some((_, _, first_span)) = self.teardown_handlers.first().copied() else {
            return;
        };
        let id = csl_arch::fabric::TEARDOWN_TASK_ID;
        if let Some(prev) = self.bound_ids.get(&id).copied() {
            self.report(
                Diagnostic::error(
                    codes::TASK_ID_TWICE,
                    format!(
                        "task id {id} (the teardown task) is bound, but teardown handlers are set"
                    ),
                    first_span,
                    "teardown handler here",
                )
                .with_label(prev, "task bound here")
                .with_help(
                    "use either @set_teardown_handler or a task bound to the teardown task id",
                ),
            );
            return;
        }
        let mut fb = super::lower::FnBuilder::new("<teardown>".into(), 0, first_span);
        // pending = low word | high word << 16
        let (lo_a, hi_a, lo, hi, sh, pending) =
            (fb.reg(), fb.reg(), fb.reg(), fb.reg(), fb.reg(), fb.reg());
        fb.emit(Inst::Imm {
            dst: lo_a,
            imm: csl_arch::fabric::mmio::TEARDOWN_PENDING,
        });
        fb.emit(Inst::Imm {
            dst: hi_a,
            imm: csl_arch::fabric::mmio::TEARDOWN_PENDING + 2,
        });
        fb.emit(Inst::Load {
            w: Width::W16,
            dst: lo,
            addr: lo_a,
        });
        fb.emit(Inst::Load {
            w: Width::W16,
            dst: hi,
            addr: hi_a,
        });
        fb.emit(Inst::Imm { dst: sh, imm: 16 });
        fb.bin(BinOp::Shl, NumTy::U32, hi, hi, sh);
        fb.bin(BinOp::Or, NumTy::U32, pending, lo, hi);
        let one = fb.reg();
        fb.emit(Inst::Imm { dst: one, imm: 1 });
        for (f, c, _) in self.teardown_handlers.clone() {
            let (cr, bit, test) = (fb.reg(), fb.reg(), fb.reg());
            fb.emit(Inst::Imm {
                dst: cr,
                imm: u32::from(c),
            });
            fb.bin(BinOp::Shr, NumTy::U32, bit, pending, cr);
            fb.bin(BinOp::And, NumTy::U32, bit, bit, one);
            let zero = fb.reg();
            fb.emit(Inst::Imm { dst: zero, imm: 0 });
            fb.emit(Inst::Cmp {
                op: CmpOp::Ne,
                ty: NumTy::U32,
                dst: test,
                a: bit,
                b: zero,
            });
            let call_b = fb.block();
            let next = fb.block();
            fb.branch(test, call_b, next);
            fb.switch_to(call_b);
            fb.emit(Inst::Call {
                func: f,
                args: Vec::new(),
                dst: None,
            });
            fb.jump_to(next);
        }
        fb.terminate(Term::Ret(None));
        let func = fb.finish();
        if let Some(p) = self.prog.as_mut() {
            let fid = p.functions.push(func);
            p.tasks.push(crate::ir::TaskBind {
                id,
                kind: csl_arch::image::TaskKind::Local,
                func: fid,
                args: csl_arch::image::WaveletArgs::None,
                span: first_span,
            });
        }
    }
}
