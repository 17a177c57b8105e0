//! Value-producing control flow: `switch` (statements and expressions, comptime and
//! runtime), labelled blocks with `break :label value` in runtime code, and the merge of
//! the values such constructs produce.
//!
//! At runtime every way out of an `if`/`switch` arm, a labelled block or an inlined call
//! ends in an [`Arm`]: a block left open plus the value computed there. Once every arm is
//! known, [`Sema::merge_arms`] picks the result type (peer typing, with the context's type
//! for untyped literals), moves each value into one result register and jumps to the join
//! block. If every reachable arm yields the same comptime value, the construct is
//! comptime-known even though it contains runtime code.

use super::eval::{Arm, Env, LoopCtx, Val};
use super::stmt::Flow;
use super::types::{Type, TypeId};
use super::value::Value;
use super::{R, Reported, Sema};
use crate::diag::{Diagnostic, codes};
use crate::ir::{BlockId, Inst, Term};
use crate::source::Span;
use crate::syntax::ast::{Block, ExprId, SwitchCase, SwitchItem};
use csl_arch::isa::{BinOp, CmpOp, NumTy};

/// What a switch is on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SwitchKind {
    Int,
    Enum,
    Bool,
}

/// One case item as an inclusive interval of the scrutinee's numeric values.
struct Item {
    lo: i128,
    hi: i128,
    span: Span,
    case: usize,
}

impl Sema {
    /// The common type of two arms' values.
    fn arm_type(&mut self, a: TypeId, b: TypeId, sa: Span, sb: Span) -> R<TypeId> {
        if a == b {
            return Ok(a);
        }
        let c = &self.types.common;
        let (ci, cf) = (c.comptime_int, c.comptime_float);
        if (a == ci && b == cf) || (a == cf && b == ci) {
            return Ok(cf);
        }
        if (a == ci && self.types.is_numeric(b)) || (a == cf && self.types.is_float(b)) {
            return Ok(b);
        }
        if (b == ci && self.types.is_numeric(a)) || (b == cf && self.types.is_float(a)) {
            return Ok(a);
        }
        let (da, db) = (self.types.display(a), self.types.display(b));
        let mut d = Diagnostic::error(
            codes::TYPE_MISMATCH,
            format!("the branches have different types: {da} and {db}"),
            sb,
            format!("this has type {db}"),
        )
        .with_label(sa, format!("this has type {da}"));
        if self.types.is_numeric(a) && self.types.is_numeric(b) {
            d = d.with_help(format!("convert one of them, e.g. `@as({da}, ...)`"));
        }
        Err(self.report(d))
    }

    /// The arm that ends in the current block with `val`, the value of `e`.
    pub(crate) fn arm_here(&mut self, env: &mut Env, val: Val, e: ExprId) -> Arm {
        Arm {
            block: self.fb(env).cur,
            val,
            span: self.span(env, e),
            reachable: self.fb(env).cur_reachable(),
        }
    }

    /// Joins the arms at `join`: merged into a value ([`Sema::merge_arms`]) when one is
    /// wanted (`want` holds the type hint), or just jumping there otherwise.
    fn join_arms(
        &mut self,
        env: &mut Env,
        arms: Vec<Arm>,
        join: BlockId,
        want: Option<Option<TypeId>>,
        span: Span,
    ) -> R<Val> {
        let Some(hint) = want else {
            for a in arms.iter().filter(|a| a.reachable) {
                self.fb(env).switch_to(a.block);
                self.fb(env).terminate(Term::Jump(join));
            }
            self.fb(env).switch_to(join);
            return Ok(Val::Ct(Value::Void));
        };
        self.merge_arms(env, arms, join, hint, span)
    }

    /// Joins the arms of a value-producing construct at `join` (see the module docs).
    pub(crate) fn merge_arms(
        &mut self,
        env: &mut Env,
        arms: Vec<Arm>,
        join: BlockId,
        hint: Option<TypeId>,
        span: Span,
    ) -> R<Val> {
        let live: Vec<Arm> = arms.into_iter().filter(|a| a.reachable).collect();
        let void = self.types.common.void;
        // With a runtime result type from the context, every arm is coerced to it (and a
        // mismatch is reported at that arm); otherwise the arms' peer type is the result.
        let result_ty = hint.filter(|h| *h != void && !self.types.is_comptime_only(*h));
        let mut acc: Option<(TypeId, Span)> = None;
        for a in &live {
            let t = self.val_ty(&a.val);
            acc = Some(match (acc, result_ty) {
                (_, Some(h)) => (h, a.span),
                (None, None) => (t, a.span),
                (Some((at, s)), None) => (self.arm_type(at, t, s, a.span)?, s),
            });
        }
        let mut ty = acc.map_or(void, |(t, _)| t);
        let same_ct = match live.first() {
            Some(Arm {
                val: Val::Ct(first),
                ..
            }) => {
                let c0 = first.canonical(&self.types);
                live.iter()
                    .all(|a| matches!(&a.val, Val::Ct(v) if v.canonical(&self.types) == c0))
            }
            _ => false,
        };
        if !same_ct && self.types.is_comptime_only(ty) {
            match hint {
                Some(h)
                    if self.types.is_numeric(ty)
                        && self.types.is_numeric(h)
                        && !self.types.is_comptime_only(h) =>
                {
                    ty = h
                }
                _ => {
                    let d = self.types.display(ty);
                    let mut dg = Diagnostic::error(
                        codes::TYPE_MISMATCH,
                        format!(
                            "the branches give different values of type {d}, which has no runtime representation"
                        ),
                        span,
                        "chosen at runtime",
                    );
                    if self.types.is_numeric(ty) {
                        dg = dg.with_help("give the values a type, e.g. `@as(i16, 1)`, or assign the result to a typed variable");
                    }
                    return Err(self.report(dg));
                }
            }
        }
        if ty == void || same_ct {
            for a in &live {
                self.fb(env).switch_to(a.block);
                self.fb(env).terminate(Term::Jump(join));
            }
            self.fb(env).switch_to(join);
            return Ok(match live.into_iter().next() {
                Some(a) if same_ct => a.val,
                _ => Val::Ct(Value::Void),
            });
        }
        let result = self.fb(env).reg();
        let mut failed = false;
        for a in live {
            self.fb(env).switch_to(a.block);
            let r = self
                .coerce(env, a.val, ty, a.span)
                .and_then(|v| self.materialize(env, v, a.span));
            match r {
                Ok(r) => self.fb(env).emit(Inst::Mov {
                    dst: result,
                    src: r,
                }),
                Err(_) => failed = true,
            }
            self.fb(env).terminate(Term::Jump(join));
        }
        self.fb(env).switch_to(join);
        if failed {
            return Err(Reported);
        }
        Ok(Val::Rt { reg: result, ty })
    }

    /// A labelled block in runtime code: `blk: { ... break :blk v; ... }`.
    pub(crate) fn runtime_labelled_block(
        &mut self,
        env: &mut Env,
        block: &Block,
        span: Span,
        hint: Option<TypeId>,
        want_value: bool,
    ) -> R<Val> {
        let label = block.label.as_ref().map(|l| l.name);
        let exit = self.fb(env).block();
        env.loops.push(LoopCtx {
            label,
            exit,
            cont: exit,
            breaks: Some(Vec::new()),
            hint,
        });
        let depth = env.loops.len();
        env.scopes.push(Vec::new());
        for s in &block.stmts {
            if !self.fb(env).cur_reachable() {
                break;
            }
            let _ = self.stmt(env, s);
        }
        env.scopes.pop();
        env.loops.truncate(depth);
        let arms = env.loops.pop().and_then(|c| c.breaks).unwrap_or_default();
        let mut arms: Vec<Arm> = arms;
        if self.fb(env).cur_reachable() {
            let end = Span {
                file: block.span.file,
                start: block.span.end.saturating_sub(1),
                end: block.span.end,
            };
            if want_value
                && arms
                    .iter()
                    .any(|a| a.reachable && !matches!(a.val, Val::Ct(Value::Void)))
            {
                let name = label.map(String::from).unwrap_or_default();
                return Err(self.report(
                    Diagnostic::error(
                        codes::TYPE_MISMATCH,
                        format!("block `{name}` can end without a value"),
                        end,
                        "control reaches the end of the block here",
                    )
                    .with_help(format!("end the block with `break :{name} value;`")),
                ));
            }
            let cur = self.fb(env).cur;
            arms.push(Arm {
                block: cur,
                val: Val::Ct(Value::Void),
                span: end,
                reachable: true,
            });
        }
        self.join_arms(env, arms, exit, want_value.then_some(hint), span)
    }

    /// `break [:label] [value]` in runtime code.
    pub(crate) fn runtime_break(
        &mut self,
        env: &mut Env,
        label: Option<&str>,
        value: Option<ExprId>,
        span: Span,
    ) -> R<Flow> {
        let found = env.loops.iter().rposition(|l| match label {
            Some(n) => l.label.as_deref() == Some(n),
            None => l.breaks.is_none(),
        });
        let Some(i) = found else {
            let (msg, lbl) = match label {
                Some(n) => (
                    format!("`break` to unknown label `{n}`"),
                    "no enclosing loop or block has this label",
                ),
                None => (
                    "`break` outside a loop".to_string(),
                    "no enclosing loop here",
                ),
            };
            let mut d = Diagnostic::error(codes::BREAK_OUTSIDE_LOOP, msg, span, lbl);
            let labels: Vec<String> = env
                .loops
                .iter()
                .filter_map(|l| l.label.map(String::from))
                .filter(|n| n != super::eval::INLINE_RETURN)
                .collect();
            if let Some(n) = label
                && let Some(s) = super::did_you_mean(n, labels.iter().map(String::as_str))
            {
                d = d.with_help(format!("did you mean `:{s}`?"));
            }
            if label.is_none()
                && let Some(b) = env
                    .loops
                    .iter()
                    .rev()
                    .find_map(|l| l.label.filter(|n| n != super::eval::INLINE_RETURN))
            {
                d = d.with_help(format!(
                    "an unlabelled `break` leaves a loop; to leave the block write `break :{b}`"
                ));
            }
            return Err(self.report(d));
        };
        if env.loops[i].breaks.is_none() {
            if let Some(v) = value {
                let s = self.span(env, v);
                return Err(self.err(
                    codes::TYPE_MISMATCH,
                    "a `break` out of a loop cannot carry a value",
                    s,
                    "remove this value",
                ));
            }
            let exit = env.loops[i].exit;
            self.fb(env).terminate_and_continue(Term::Jump(exit));
            return Ok(Flow::Normal);
        }
        let hint = env.loops[i].hint;
        let (val, vspan) = match value {
            Some(e) => (self.expr_hint(env, e, hint)?, self.span(env, e)),
            None => (Val::Ct(Value::Void), span),
        };
        let reachable = self.fb(env).cur_reachable();
        let block = self.fb(env).cur;
        if let Some(b) = env.loops.get_mut(i).and_then(|l| l.breaks.as_mut()) {
            b.push(Arm {
                block,
                val,
                span: vspan,
                reachable,
            });
        }
        // The arm's block stays open until the block's type is known; code after the break
        // goes to a fresh, unreachable block.
        let next = self.fb(env).block();
        self.fb(env).switch_to(next);
        Ok(Flow::Normal)
    }

    /// `switch (x) { ... }`. A comptime scrutinee selects one case, and only that case's
    /// body is analysed; a runtime one lowers to a chain of comparisons.
    pub fn switch(
        &mut self,
        env: &mut Env,
        scrutinee: ExprId,
        cases: &[SwitchCase],
        span: Span,
        want_value: bool,
        hint: Option<TypeId>,
    ) -> R<Val> {
        let sv = self.expr(env, scrutinee)?;
        let sspan = self.span(env, scrutinee);
        let sty = self.val_ty(&sv);
        let kind = match self.types.get(sty) {
            Type::Int { .. } => SwitchKind::Int,
            Type::Enum(_) => SwitchKind::Enum,
            Type::Bool => SwitchKind::Bool,
            Type::ComptimeInt => {
                return Err(self.report(
                    Diagnostic::error(
                        codes::TYPE_MISMATCH,
                        "switch on an untyped integer",
                        sspan,
                        "this is a comptime_int",
                    )
                    .with_help("give it a fixed-width type with `@as(u16, ...)`"),
                ));
            }
            _ => {
                let d = self.types.display(sty);
                let msg = format!("cannot switch on a value of type {d}");
                let help = "switch on a fixed-width integer, a bool or an enum";
                let dg = self.diag_with_type(codes::TYPE_MISMATCH, msg, sspan, sty);
                return Err(self.report(dg.with_help(help)));
            }
        };
        let items = self.switch_items(env, cases, sty, kind)?;
        self.check_overlaps(&items)?;
        if !cases.iter().any(|c| c.items.is_empty()) {
            self.check_exhaustive(&items, sty, kind, span)?;
        }
        match sv {
            Val::Ct(v) => {
                let n = switch_num(&v).ok_or(Reported)?;
                let body = match items.iter().find(|it| it.lo <= n && n <= it.hi) {
                    Some(it) => cases.get(it.case).map(|c| c.body),
                    None => cases.iter().find(|c| c.items.is_empty()).map(|c| c.body),
                };
                match body {
                    Some(b) => self.expr_hint(env, b, hint),
                    None => Err(Reported),
                }
            }
            Val::Rt { reg, ty } => {
                let nt = self.types.num_ty(ty).unwrap_or(NumTy::U16);
                let join = self.fb(env).block();
                let mut arms = Vec::new();
                let mut failed = false;
                for (ci, case) in cases
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| !c.items.is_empty())
                {
                    let body_b = self.fb(env).block();
                    for it in items.iter().filter(|it| it.case == ci) {
                        let next = self.fb(env).block();
                        let c = if it.lo == it.hi {
                            let k = self.switch_imm(env, sty, it.lo, it.span)?;
                            let c = self.fb(env).reg();
                            self.fb(env).emit(Inst::Cmp {
                                op: CmpOp::Eq,
                                ty: nt,
                                dst: c,
                                a: reg,
                                b: k,
                            });
                            c
                        } else {
                            let lo = self.switch_imm(env, sty, it.lo, it.span)?;
                            let hi = self.switch_imm(env, sty, it.hi, it.span)?;
                            let (c1, c2) = (self.fb(env).reg(), self.fb(env).reg());
                            self.fb(env).emit(Inst::Cmp {
                                op: CmpOp::Ge,
                                ty: nt,
                                dst: c1,
                                a: reg,
                                b: lo,
                            });
                            self.fb(env).emit(Inst::Cmp {
                                op: CmpOp::Le,
                                ty: nt,
                                dst: c2,
                                a: reg,
                                b: hi,
                            });
                            self.emit_bin(env, BinOp::And, NumTy::Bool, c1, c2)
                        };
                        self.fb(env).branch(c, body_b, next);
                        self.fb(env).switch_to(next);
                    }
                    let fallthrough = self.fb(env).cur;
                    self.fb(env).switch_to(body_b);
                    match self.expr_hint(env, case.body, hint) {
                        Ok(v) => {
                            arms.push(self.arm_here(env, v, case.body));
                        }
                        Err(_) => failed = true,
                    }
                    self.fb(env).switch_to(fallthrough);
                }
                match cases.iter().find(|c| c.items.is_empty()) {
                    Some(c) => match self.expr_hint(env, c.body, hint) {
                        Ok(v) => {
                            arms.push(self.arm_here(env, v, c.body));
                        }
                        Err(_) => failed = true,
                    },
                    // Exhaustive without `else`: no value gets here.
                    None => self.fb(env).terminate(Term::Unreachable),
                }
                if failed {
                    for a in arms.iter().filter(|a| a.reachable) {
                        self.fb(env).switch_to(a.block);
                        self.fb(env).terminate(Term::Jump(join));
                    }
                    self.fb(env).switch_to(join);
                    return Err(Reported);
                }
                self.join_arms(env, arms, join, want_value.then_some(hint), span)
            }
        }
    }

    fn switch_imm(
        &mut self,
        env: &mut Env,
        sty: TypeId,
        n: i128,
        span: Span,
    ) -> R<crate::ir::VReg> {
        let v = match self.types.get(sty) {
            Type::Enum(_) => Value::Enum(sty, n),
            Type::Bool => Value::Bool(n != 0),
            _ => Value::Int(n, sty),
        };
        self.materialize(env, Val::Ct(v), span)
    }

    /// Evaluates every case item (all are comptime) to an interval.
    fn switch_items(
        &mut self,
        env: &mut Env,
        cases: &[SwitchCase],
        sty: TypeId,
        kind: SwitchKind,
    ) -> R<Vec<Item>> {
        let mut items = Vec::new();
        for (ci, case) in cases.iter().enumerate() {
            for item in &case.items {
                match item {
                    SwitchItem::Value(e) => {
                        let v = self.eval_comptime(env, *e)?;
                        let s = self.span(env, *e);
                        let v = self.coerce_value(v, sty, s)?;
                        let n = switch_num(&v).ok_or(Reported)?;
                        items.push(Item {
                            lo: n,
                            hi: n,
                            span: s,
                            case: ci,
                        });
                    }
                    SwitchItem::Range(a, b) => {
                        let (sa, sb) = (self.span(env, *a), self.span(env, *b));
                        let s = Span {
                            file: sa.file,
                            start: sa.start,
                            end: sb.end,
                        };
                        if kind != SwitchKind::Int {
                            let d = self.types.display(sty);
                            let help = if kind == SwitchKind::Enum {
                                "list the members instead, separated by commas"
                            } else {
                                "list the values instead"
                            };
                            return Err(self.report(
                                Diagnostic::error(
                                    codes::TYPE_MISMATCH,
                                    format!("a range case needs an integer scrutinee, not {d}"),
                                    s,
                                    "range case here",
                                )
                                .with_help(help),
                            ));
                        }
                        let va = self.eval_comptime(env, *a)?;
                        let va = self.coerce_value(va, sty, sa)?;
                        let vb = self.eval_comptime(env, *b)?;
                        let vb = self.coerce_value(vb, sty, sb)?;
                        let (Some(lo), Some(hi)) = (switch_num(&va), switch_num(&vb)) else {
                            return Err(Reported);
                        };
                        if lo > hi {
                            return Err(self.report(
                                Diagnostic::error(
                                    codes::OUT_OF_RANGE,
                                    format!("the range {lo}...{hi} is empty"),
                                    s,
                                    "the start is above the end",
                                )
                                .with_help(format!("write it as {hi}...{lo}")),
                            ));
                        }
                        items.push(Item {
                            lo,
                            hi,
                            span: s,
                            case: ci,
                        });
                    }
                }
            }
        }
        Ok(items)
    }

    fn check_overlaps(&mut self, items: &[Item]) -> R<()> {
        let mut order: Vec<&Item> = items.iter().collect();
        order.sort_by_key(|it| (it.lo, it.span.start));
        for w in order.windows(2) {
            let (a, b) = (w[0], w[1]);
            if b.lo <= a.hi {
                // Report at the later one in source order.
                let (first, again) = if a.span.start <= b.span.start {
                    (a, b)
                } else {
                    (b, a)
                };
                let (lo, hi) = (a.lo.max(b.lo), a.hi.min(b.hi));
                let what = if lo == hi {
                    format!("the value {lo} already has a case")
                } else {
                    format!("the values {lo}...{hi} already have a case")
                };
                return Err(self.report(
                    Diagnostic::error(
                        codes::DUPLICATE_CASE,
                        format!("duplicate switch case: {what}"),
                        again.span,
                        "covered again here",
                    )
                    .with_label(first.span, "first covered here")
                    .with_help("every value may appear in only one case; remove one of them"),
                ));
            }
        }
        Ok(())
    }

    fn check_exhaustive(
        &mut self,
        items: &[Item],
        sty: TypeId,
        kind: SwitchKind,
        span: Span,
    ) -> R<()> {
        let covered = |n: i128| items.iter().any(|it| it.lo <= n && n <= it.hi);
        let note = match kind {
            SwitchKind::Enum => {
                let members = self
                    .types
                    .enum_def(sty)
                    .map(|d| d.members.clone())
                    .unwrap_or_default();
                let missing: Vec<String> = members
                    .iter()
                    .filter(|(_, v)| !covered(*v))
                    .map(|(n, _)| format!("`{n}`"))
                    .collect();
                if missing.is_empty() {
                    return Ok(());
                }
                format!("not handled: {}", missing.join(", "))
            }
            SwitchKind::Bool => {
                let missing: Vec<&str> = [(0, "false"), (1, "true")]
                    .iter()
                    .filter(|(v, _)| !covered(*v))
                    .map(|(_, n)| *n)
                    .collect();
                if missing.is_empty() {
                    return Ok(());
                }
                format!("not handled: {}", missing.join(", "))
            }
            SwitchKind::Int => {
                let Some((signed, bits)) = self.types.int_info(sty) else {
                    return Ok(());
                };
                let (min, max) = if signed {
                    (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
                } else {
                    (0, (1i128 << bits) - 1)
                };
                let mut sorted: Vec<(i128, i128)> = items.iter().map(|it| (it.lo, it.hi)).collect();
                sorted.sort();
                let mut next = min;
                for (lo, hi) in sorted {
                    if lo > next {
                        break;
                    }
                    next = next.max(hi.saturating_add(1));
                }
                if next > max {
                    return Ok(());
                }
                format!("for example, {next} is not handled")
            }
        };
        let d = self.types.display(sty);
        let help = if kind == SwitchKind::Enum {
            "add the missing members, or an `else => ...` case"
        } else {
            "add an `else => ...` case"
        };
        Err(self.report(
            Diagnostic::error(
                codes::NON_EXHAUSTIVE,
                format!("switch on {d} is not exhaustive"),
                span,
                "some values have no case",
            )
            .with_note(note)
            .with_help(help),
        ))
    }
}

/// The numeric value a switch compares.
fn switch_num(v: &Value) -> Option<i128> {
    match v {
        Value::Int(i, _) | Value::Enum(_, i) => Some(*i),
        Value::Bool(b) => Some(i128::from(*b)),
        _ => None,
    }
}
