//! DSD operations (`@fadds`, `@mov16`, `@dfilt`, ...): operand classification, the
//! operation's settings and the `dsd_op` instruction.

use super::DsdVal;
use super::dsr::dsr_key;
use super::settings::SettingVal;
use crate::diag::{Diagnostic, codes};
use crate::ir::{Inst, VReg};
use crate::sema::eval::{Env, Val};
use crate::sema::types::Type;
use crate::sema::value::Value;
use crate::sema::{R, Sema};
use crate::source::Span;
use crate::syntax::ast::{ExprId, ExprKind, InitList};
use csl_arch::dsd::{DsdKind, DsdOpcode, Elem, OperandKind, cfg as opcfg, flags};

/// A DSD operand after analysis.
pub(super) enum Operand {
    Desc(Val),
    Scalar(Val),
    Ptr(Val),
}

/// Placeholder task id for a `.activate = task` whose binding comes later; resolved when
/// the program class is finished.
pub const TASK_ID_PENDING: u8 = 0xfe;

impl Sema {
    /// The task id a value names: a task-id handle, or a task bound in this program.
    pub fn task_id_of_value(&mut self, v: &Value, span: Span) -> R<u8> {
        match v {
            Value::TaskId(_, n) | Value::Color(n) | Value::Queue(true, n) => Ok(*n),
            Value::Task(d) => {
                let f = self.lower_task(*d, span)?;
                match self
                    .prog
                    .as_ref()
                    .and_then(|p| p.tasks.iter().find(|t| t.func == f))
                {
                    Some(t) => Ok(t.id),
                    None => {
                        // Bound later in the comptime block: resolved when the class is done.
                        Ok(TASK_ID_PENDING)
                    }
                }
            }
            _ => Err(self.err(
                codes::TYPE_MISMATCH,
                "expected a task or a task id",
                span,
                "here",
            )),
        }
    }

    /// A DSD operation builtin (`@fadds`, `@mov16`, ...).
    pub fn b_dsd_op(
        &mut self,
        env: &mut Env,
        op: DsdOpcode,
        args: &[ExprId],
        span: Span,
    ) -> R<Val> {
        if op == DsdOpcode::Dfilt {
            return self.b_dfilt(env, args, span);
        }
        // A trailing `.{ ... }` is the configuration; so is a trailing comptime struct
        // (`const props = .{ ... }`) one argument past the operands.
        let ast = env.ast.clone();
        let nsrc = op.src_elems().len();
        let (operands, config) = match args.split_last() {
            Some((last, rest))
                if matches!(
                    &ast.exprs[*last].kind,
                    ExprKind::AnonInit(InitList::Fields(_))
                ) || rest.len() == nsrc + 1 =>
            {
                (rest, Some(*last))
            }
            _ => (args, None),
        };
        if operands.len() != nsrc + 1 {
            return Err(self.report(
                Diagnostic::error(codes::BUILTIN_ARGS, format!("`@{}` takes a destination and {nsrc} source{}, but {} operand{} given", op.name(), if nsrc == 1 { "" } else { "s" }, operands.len(), if operands.len() == 1 { " was" } else { "s were" }), span, "wrong number of operands")
                    .with_help("the optional last argument is a configuration struct such as `.{ .async = true }`"),
            ));
        }
        let mut regs: [(OperandKind, Option<VReg>); 4] = [(OperandKind::None, None); 4];
        let mut any_fabric = false;
        let mut queues: [Option<u8>; 3] = [None; 3];
        let mut warned_elem = false;
        let mut dsr_keys = Vec::new();
        // Each operand's descriptor kind and length where known at compile time (`None`
        // for a runtime descriptor; operands that are not descriptors are left out).
        let mut lengths: Vec<OperandLength> = Vec::new();
        for (i, &a) in operands.iter().enumerate() {
            let elem = if i == 0 {
                op.dst_elem()
            } else {
                op.src_elems()[i - 1]
            };
            let aspan = self.span(env, a);
            let v = self.expr(env, a)?;
            if let Val::Ct(Value::Dsr(k, n)) = &v {
                let key = dsr_key(*k, *n);
                // The queue of the fabric DSD the DSR was loaded with (WSE-2: it implies
                // the microthread, as a fabric DSD operand's does).
                if i < 3
                    && let Some(q) = self.dsr_queues.get(&key).copied().flatten()
                {
                    queues[i] = Some(q);
                }
                dsr_keys.push(key);
            }
            let operand = self.classify_operand(v, elem, i == 0, aspan)?;
            let (kind, val) = match operand {
                Operand::Desc(v) => {
                    let known = match &v {
                        // A FIFO's length for the rule is its read or write length,
                        // set at run time, not its capacity.
                        Val::Ct(Value::Dsd(d)) if d.kind != DsdKind::Fifo => {
                            Some((d.kind, op_length_of(d)))
                        }
                        _ => None,
                    };
                    lengths.push((i, known, aspan));
                    if let Val::Ct(Value::Dsd(d)) = &v {
                        if matches!(d.kind, DsdKind::FabIn | DsdKind::FabOut) {
                            any_fabric = true;
                            if i < 3 {
                                queues[i] = Some(d.queue);
                            }
                        }
                        if !warned_elem {
                            warned_elem = self.check_elem(d, elem, op, aspan);
                        }
                        self.check_simd(d, elem, op, aspan)?;
                    } else {
                        let t = self.val_ty(&v);
                        if matches!(self.types.get(t), Type::FabinDsd | Type::FaboutDsd) {
                            any_fabric = true;
                            // A runtime fabric DSD keeps the queue of the descriptor its
                            // variable started with (DSD arithmetic never changes it).
                            if i < 3 {
                                queues[i] = self.static_fabric_queue(env, a);
                            }
                        }
                    }
                    (OperandKind::Desc, v)
                }
                Operand::Scalar(v) => (OperandKind::Scalar, v),
                Operand::Ptr(v) => (OperandKind::Ptr, v),
            };
            self.runtime_only(env, aspan)?;
            let r = self.materialize(env, val, aspan)?;
            regs[i] = (kind, Some(r));
        }
        if any_fabric {
            self.check_lengths(op, &lengths);
        }
        let (mut cfg, mut done, mut ut, mut idx) = (0u8, 0u8, None::<u8>, None);
        let mut done_task = None;
        if let Some(c) = config {
            let Some(fields) = self.settings(env, c)? else {
                let s = self.span(env, c);
                return Err(self.err(
                    codes::BUILTIN_ARGS,
                    format!(
                        "the last argument of `@{}` is not a configuration struct",
                        op.name()
                    ),
                    s,
                    "expected `.{ .name = value, ... }`",
                ));
            };
            for f in &fields {
                let fspan = f.name_span;
                if self.completion_setting(env, f, &mut cfg, &mut done, &mut done_task)? {
                    continue;
                }
                match f.name.as_str() {
                    "index" => {
                        let v = match &f.val {
                            SettingVal::Expr(e) => self.expr(env, *e)?,
                            SettingVal::Ct(v, _) => Val::Ct(v.clone()),
                        };
                        let vspan = self.setting_span(env, &f.val);
                        let u16t = self.types.common.u16;
                        let v = self.coerce_int_to(env, v, u16t, vspan)?;
                        idx = Some(self.materialize(env, v, vspan)?);
                        cfg |= opcfg::HAS_INDEX;
                    }
                    "priority" => {
                        if let Value::Struct(fs) = self.setting_ct(env, &f.val)? {
                            let level = fs
                                .iter()
                                .find(|(_, v)| matches!(v, Value::Bool(true)))
                                .map(|(n, _)| n.as_str());
                            let p = match level {
                                Some("high") => 2,
                                Some("medium") => 1,
                                _ => 0,
                            };
                            cfg |= p << opcfg::PRIORITY_SHIFT;
                        }
                    }
                    "ut_id" => match self.setting_ct(env, &f.val)? {
                        Value::Int(n, _) => ut = Some(n as u8),
                        other => {
                            if let Some(n) = self.ut_of(&other) {
                                ut = Some(n);
                            } else {
                                let vspan = self.setting_span(env, &f.val);
                                return Err(self.err(
                                    codes::TYPE_MISMATCH,
                                    "ut_id must be `@get_ut_id(n)`",
                                    vspan,
                                    "here",
                                ));
                            }
                        }
                    },
                    other => {
                        return Err(self.report(
                            Diagnostic::error(codes::BUILTIN_ARGS, format!("`{other}` is not a DSD operation setting"), fspan, "unknown setting")
                                .with_help("settings are async, activate, unblock, on_control, index, priority, ut_id"),
                        ));
                    }
                }
            }
        }
        if cfg & opcfg::ASYNC != 0
            && !any_fabric
            && regs.iter().all(|(k, _)| *k != OperandKind::Desc)
        {
            return Err(self.err(
                codes::BUILTIN_ARGS,
                "`.async = true` needs a DSD operand",
                span,
                "no DSD operand",
            ));
        }
        // WSE-2: the microthread is implied by the fabric operands' queues (destination
        // first); WSE-3: explicit, defaulting the same way.
        // Without its own configuration, an operation on explicit DSRs uses the one given
        // when a DSR was loaded (`@load_to_dsr(dsr, dsd, .{ .async = true, ... })`).
        // With a configuration of its own that names no completion action (e.g. only
        // `.async = true`), the operation still takes the DSRs' completion action and
        // microthread: the hardware keeps them in the DSR.
        let completion = opcfg::ON_DONE_ACTIVATE | opcfg::ON_DONE_UNBLOCK;
        let from_dsr = dsr_keys
            .iter()
            .filter_map(|k| self.dsr_cfgs.get(k).cloned())
            .find(|c| c.0 != 0 || c.2.is_some() || c.3.is_some());
        if let Some(c) = from_dsr {
            if config.is_none() {
                cfg |= c.0;
                done = c.1;
                done_task = c.2;
            } else if cfg & completion == 0 && done_task.is_none() {
                cfg |= c.0 & completion;
                if c.0 & completion != 0 || c.2.is_some() {
                    done = c.1;
                    done_task = c.2;
                }
            }
            ut = ut.or(c.3);
        }
        let explicit_ut = ut.is_some();
        let ut = ut.or(queues[0]).or(queues[1]).or(queues[2]).unwrap_or(0);
        // Two asynchronous operations issued one after the other (same basic block) on the
        // same microthread would run at the same time on one hardware thread. Operations in
        // different blocks (e.g. the two arms of an `if`) may well be exclusive.
        if cfg & opcfg::ASYNC != 0 && (explicit_ut || queues.iter().any(Option::is_some)) {
            let block = self.fb(env).cur;
            let clash = self
                .fb(env)
                .async_uts
                .iter()
                .find(|(u, _, b)| *u == ut && *b == block)
                .map(|(_, s, _)| *s);
            if let Some(prev) = clash {
                let how = if explicit_ut {
                    "both name it with `.ut_id`"
                } else {
                    "both are implied by the queues of their fabric operands"
                };
                return Err(self.report(
                    Diagnostic::error(
                        codes::BUILTIN_ARGS,
                        format!("two asynchronous operations need microthread {ut}"),
                        span,
                        "second operation here",
                    )
                    .with_label(prev, "first operation here")
                    .with_note(how.to_string())
                    .with_help(
                        "use another queue (WSE-2) or another `.ut_id` (WSE-3) for one of them",
                    ),
                ));
            }
            self.fb(env).async_uts.push((ut, span, block));
        }
        self.fb(env).emit(Inst::DsdOp {
            op,
            operands: regs,
            cfg,
            done,
            done_task,
            ut,
            idx,
        });
        Ok(Val::Ct(Value::Bool(true)))
    }

    pub(super) fn ut_of(&self, v: &Value) -> Option<u8> {
        match v {
            Value::Struct(fs) => fs.iter().find(|(n, _)| n == "ut").and_then(|(_, v)| {
                if let Value::Int(n, _) = v {
                    Some(*n as u8)
                } else {
                    None
                }
            }),
            _ => None,
        }
    }

    pub(super) fn classify_operand(
        &mut self,
        v: Val,
        elem: Elem,
        is_dst: bool,
        span: Span,
    ) -> R<Operand> {
        let ty = self.val_ty(&v);
        let t = self.types.get(ty).clone();
        if t.is_dsd() {
            if is_dst && t == Type::FabinDsd {
                return Err(self.err(
                    codes::BUILTIN_ARGS,
                    "a fabin_dsd cannot be a destination",
                    span,
                    "fabric input",
                ));
            }
            if !is_dst && t == Type::FaboutDsd {
                return Err(self.err(
                    codes::BUILTIN_ARGS,
                    "a fabout_dsd cannot be a source",
                    span,
                    "fabric output",
                ));
            }
            return Ok(Operand::Desc(v));
        }
        if let Type::Ptr { elem: pe, .. } = t {
            if self
                .types
                .num_ty(pe)
                .is_some_and(|n| n.size() == elem.bytes())
            {
                return Ok(Operand::Ptr(v));
            }
            let msg = format!(
                "a pointer operand must point to a {}-bit scalar",
                elem.bytes() * 8
            );
            return Err(self.err_with_type(codes::BUILTIN_ARGS, msg, span, ty));
        }
        if is_dst {
            let d = self.types.display(ty);
            return Err(self.report(
                Diagnostic::error(
                    codes::BUILTIN_ARGS,
                    "the destination of a DSD operation must be a DSD or a pointer",
                    span,
                    format!("this has type {d}"),
                )
                .with_help("pass a memory or fabric DSD, or `&variable`"),
            ));
        }
        // A scalar: coerce to the element type.
        let want = match elem {
            Elem::F32 => self.types.common.f32,
            Elem::F16 => self.types.common.f16,
            Elem::W32 => {
                if matches!(t, Type::Int { signed: true, .. }) {
                    self.types.common.i32
                } else {
                    self.types.common.u32
                }
            }
            Elem::I16 => {
                if matches!(t, Type::Int { signed: true, .. }) {
                    self.types.common.i16
                } else {
                    self.types.common.u16
                }
            }
        };
        let ok_int = matches!(elem, Elem::I16 | Elem::W32) && self.types.is_int(ty);
        let ok_float = matches!(elem, Elem::F16 | Elem::F32) && self.types.is_float(ty);
        if !(ok_int || ok_float) {
            let (d, w) = (self.types.display(ty), self.types.display(want));
            let msg = format!("expected a DSD or a {w} scalar, found {d}");
            return Err(self.err(codes::BUILTIN_ARGS, msg, span, "wrong operand"));
        }
        match v {
            Val::Ct(c) => Ok(Operand::Scalar(Val::Ct(self.coerce_value(c, want, span)?))),
            Val::Rt { .. } => {
                if self
                    .types
                    .num_ty(ty)
                    .is_some_and(|n| n.size() == elem.bytes())
                {
                    Ok(Operand::Scalar(v))
                } else {
                    let (d, w) = (self.types.display(ty), self.types.display(want));
                    let msg = format!("expected a {w} scalar, found {d}");
                    Err(self.err(codes::BUILTIN_ARGS, msg, span, "convert it with @as"))
                }
            }
        }
    }

    /// The queue of the fabric DSD a global `var` was initialised with, if `e` names one.
    pub(super) fn static_fabric_queue(&mut self, env: &mut Env, e: ExprId) -> Option<u8> {
        let ExprKind::Ident(name) = &env.ast.exprs[e].kind else {
            return None;
        };
        if env.scopes.iter().flatten().any(|(n, _)| n == name) {
            return None;
        }
        let d = self.lookup_decl(env.module, *name)?;
        let ast = self.mods[d.module].ast.clone();
        let Some(crate::syntax::ast::DeclKind::Var(v)) =
            ast.decls.get(d.index as usize).map(|x| &x.kind)
        else {
            return None;
        };
        let init = v.init?;
        let mut cenv = Env::comptime(d.module, ast.clone(), crate::sema::Ctx::TopComptime);
        let saved = self.diags.len();
        let value = self.eval_comptime(&mut cenv, init);
        self.diags.truncate(saved);
        match value {
            Ok(Value::Dsd(dv)) if matches!(dv.kind, DsdKind::FabIn | DsdKind::FabOut) => {
                Some(dv.queue)
            }
            _ => None,
        }
    }

    /// The [`flags::SIMD_MASK`] bits of a fabric DSD's `.simd_mode = .{ .simd_32 = true }`
    /// (or `.simd_64`, `.simd_32_or_64`): at most one mode, named exactly.
    pub(super) fn simd_mode(&mut self, env: &mut Env, e: ExprId) -> R<u8> {
        let span = self.span(env, e);
        let v = self.eval_comptime(env, e)?;
        let mut chosen: Vec<(&str, u8)> = Vec::new();
        let mut unknown = None;
        match &v {
            Value::Struct(fs) => {
                for (n, v) in fs.iter() {
                    let bits = match n.as_str() {
                        "simd_32" => flags::SIMD_32,
                        "simd_64" => flags::SIMD_64,
                        "simd_32_or_64" => flags::SIMD_MASK,
                        _ => {
                            unknown = Some(format!("`{n}` is not a SIMD mode"));
                            continue;
                        }
                    };
                    match v {
                        Value::Bool(true) => chosen.push((n.as_str(), bits)),
                        Value::Bool(false) => {}
                        _ => unknown = Some(format!("`{n}` must be `true` or `false`")),
                    }
                }
            }
            _ => unknown = Some("not a struct of SIMD modes".to_string()),
        }
        if let Some(label) = unknown {
            return Err(self.report(
                Diagnostic::error(codes::BUILTIN_ARGS, "invalid `simd_mode`", span, label)
                    .with_help("write `.simd_mode = .{ .simd_32 = true }`, `.{ .simd_64 = true }` or `.{ .simd_32_or_64 = true }`"),
            ));
        }
        if chosen.len() > 1 {
            let names: Vec<String> = chosen.iter().map(|(n, _)| format!("`{n}`")).collect();
            return Err(self.report(
                Diagnostic::error(
                    codes::BUILTIN_ARGS,
                    format!("`simd_mode` selects {} modes", names.join(" and ")),
                    span,
                    "more than one mode",
                )
                .with_help("choose one; `.simd_32_or_64 = true` lets each step take one or two wavelets, whichever have arrived"),
            ));
        }
        Ok(chosen.first().map_or(0, |(_, b)| *b))
    }

    /// A fabric DSD in a SIMD mode carries two 16-bit values per wavelet, so only
    /// operations on 16-bit elements can use it.
    pub(super) fn check_simd(
        &mut self,
        d: &DsdVal,
        elem: Elem,
        op: DsdOpcode,
        span: Span,
    ) -> R<()> {
        if matches!(d.kind, DsdKind::FabIn | DsdKind::FabOut)
            && d.flags & flags::SIMD_MASK != 0
            && elem.bytes() != 2
        {
            return Err(self.report(
                Diagnostic::error(
                    codes::BUILTIN_ARGS,
                    format!("`@{}` works on 32-bit elements, but this fabric DSD has a `simd_mode`", op.name()),
                    span,
                    "SIMD fabric DSD",
                )
                .with_note("a SIMD fabric mode packs two 16-bit values into each wavelet")
                .with_help("use a 16-bit operation (such as @mov16, @add16 or @faddh), or drop `simd_mode`"),
            ));
        }
        Ok(())
    }

    /// Warns when the descriptors of a fabric operation have lengths that disagree with
    /// the operation's length (builtins.md §9: the first source with a non-zero length,
    /// else the destination): a memory operand shorter than the operation is read or
    /// written past its end, and a fabric operand of another length sends or receives a
    /// different number of wavelets than it says. A fabric length of 1 (the usual
    /// "extent 1" descriptor whose length the other operand sets) and unbounded lengths
    /// are never reported. Checked only when the deciding operand's length is known.
    fn check_lengths(&mut self, op: DsdOpcode, lengths: &[OperandLength]) {
        // The deciding operand: the first source with a non-zero length, else the
        // destination; give up at the first source whose length is not known.
        let mut decide = None;
        for &(i, known, span) in lengths.iter().filter(|(i, ..)| *i > 0) {
            match known {
                None => return,
                Some((_, 0)) => continue,
                Some((_, len)) => {
                    decide = Some((i, len, span));
                    break;
                }
            }
        }
        let decide = match decide {
            Some(d) => d,
            None => match lengths.iter().find(|(i, ..)| *i == 0) {
                Some(&(0, Some((_, len)), span)) => (0, len, span),
                _ => return,
            },
        };
        let (di, total, dspan) = decide;
        if total == u32::from(csl_arch::dsd::UNBOUNDED_LENGTH) {
            return;
        }
        let role = |i: usize| {
            if i == 0 {
                "the destination".to_string()
            } else {
                format!("source {i}")
            }
        };
        for &(i, known, span) in lengths {
            let Some((kind, len)) = known else { continue };
            if i == di || len == u32::from(csl_arch::dsd::UNBOUNDED_LENGTH) {
                continue;
            }
            let bad = match kind {
                DsdKind::Mem1d | DsdKind::Mem4d => len < total,
                DsdKind::FabIn | DsdKind::FabOut => len != total && len != 1,
                DsdKind::Fifo => false, // never known (see above)
            };
            if !bad {
                continue;
            }
            let what = if matches!(kind, DsdKind::Mem1d | DsdKind::Mem4d) {
                format!(
                    "{} describes {len} elements, so the operation runs past its end",
                    role(i)
                )
            } else {
                format!(
                    "{} says {len} wavelets, but the operation moves {total}",
                    role(i)
                )
            };
            self.report(
                Diagnostic::error(
                    codes::DSD_LENGTH,
                    format!("the operands of `@{}` disagree on its length", op.name()),
                    span,
                    format!("{len} elements"),
                )
                .with_label(dspan, format!("{} sets the length: {total} elements", role(di)))
                .with_note(what)
                .with_help("give both descriptors the same length (e.g. with @set_dsd_length), or an extent of 1 to a fabric descriptor whose length the other operand sets")
                .warning(),
            );
            return;
        }
    }

    /// Warns when a memory DSD's elements differ in size from the operation's: legal (the
    /// operation reads the memory with its own element size), but usually a mistake.
    /// Returns whether it warned.
    pub(super) fn check_elem(&mut self, d: &DsdVal, elem: Elem, op: DsdOpcode, span: Span) -> bool {
        if matches!(d.kind, DsdKind::Mem1d | DsdKind::Mem4d | DsdKind::Fifo)
            && d.elem_bytes != elem.bytes()
        {
            self.report(
                Diagnostic::error(
                    codes::BUILTIN_ARGS,
                    format!("`@{}` works on {}-bit elements, but this DSD describes {}-bit elements", op.name(), elem.bytes() * 8, d.elem_bytes * 8),
                    span,
                    "element size differs",
                )
                .with_note(format!("the operation will read and write {}-bit words at the DSD's addresses", elem.bytes() * 8))
                .with_help("use the operation for this element type (e.g. @fadds for f32, @faddh for f16, @mov16 for 16-bit integers)")
                .warning(),
            );
            return true;
        }
        false
    }

    /// `@dfilt(fabin_dsd, .{ .async = true, ... })`: drop data wavelets on the input until
    /// the DSD's extent of control wavelets has passed.
    pub(super) fn b_dfilt(&mut self, env: &mut Env, args: &[ExprId], span: Span) -> R<Val> {
        let ast = env.ast.clone();
        let aspan = self.span(env, args[0]);
        let (v, vt) = self.expr_typed(env, args[0])?;
        let input = matches!(
            self.types.get(vt),
            Type::FabinDsd | Type::Dsr(2) | Type::Dsr(4)
        );
        if !input {
            return Err(self.arg_ty_err(vt, aspan, "not a fabric input", |d| {
                format!("@dfilt filters a fabin_dsd (or a dsr_src1 holding one), found {d}")
            }));
        }
        let queue = match &v {
            Val::Ct(Value::Dsd(d)) => Some(d.queue),
            _ => None,
        };
        let cspan = self.span(env, args[1]);
        let ExprKind::AnonInit(InitList::Fields(fields)) = &ast.exprs[args[1]].kind else {
            return Err(self.err(
                codes::BUILTIN_ARGS,
                "@dfilt needs a configuration `.{ .async = true, ... }`",
                cspan,
                "here",
            ));
        };
        let (mut cfg, mut done, mut done_task, mut ut) = (0u8, 0u8, None, None);
        for f in fields {
            match f.name.name.as_str() {
                "async" => {
                    if self.bool_prop(env, f.value)? {
                        cfg |= opcfg::ASYNC;
                    }
                }
                "activate" | "unblock" => {
                    let fv = self.eval_comptime(env, f.value)?;
                    let s = self.span(env, f.value);
                    cfg |= if f.name.name == "activate" {
                        opcfg::ON_DONE_ACTIVATE
                    } else {
                        opcfg::ON_DONE_UNBLOCK
                    };
                    match &fv {
                        Value::Task(d) => done_task = Some(self.lower_task(*d, s)?),
                        other => done = self.task_id_of_value(other, s)?,
                    }
                }
                "ut_id" => {
                    let fv = self.eval_comptime(env, f.value)?;
                    ut = self.ut_of(&fv);
                }
                "priority" => {
                    self.eval_comptime(env, f.value)?;
                }
                other => {
                    return Err(self.report(
                        Diagnostic::error(codes::BUILTIN_ARGS, format!("`{other}` is not allowed in a @dfilt configuration"), f.name.span, "not allowed")
                            .with_note("@dfilt takes .async (which must be true), .activate or .unblock, .ut_id and .priority"),
                    ));
                }
            }
        }
        if cfg & opcfg::ASYNC == 0 {
            return Err(self.err(
                codes::BUILTIN_ARGS,
                "@dfilt must be asynchronous",
                cspan,
                "add `.async = true`",
            ));
        }
        self.runtime_only(env, span)?;
        let r = self.materialize(env, v, aspan)?;
        let ut = ut.or(queue).unwrap_or(0);
        let operands = [
            (OperandKind::None, None),
            (OperandKind::Desc, Some(r)),
            (OperandKind::None, None),
            (OperandKind::None, None),
        ];
        self.fb(env).emit(Inst::DsdOp {
            op: DsdOpcode::Dfilt,
            operands,
            cfg,
            done,
            done_task,
            ut,
            idx: None,
        });
        Ok(Val::Ct(Value::Void))
    }
}

/// One descriptor operand of a DSD operation: its position (0 the destination), its kind
/// and length when known at compile time, and where it was written.
type OperandLength = (usize, Option<(DsdKind, u32)>, Span);

/// The length a compile-time descriptor contributes to the operation-length rule: a mem4d
/// descriptor's product of extents, otherwise its length field.
fn op_length_of(d: &DsdVal) -> u32 {
    match d.kind {
        DsdKind::Mem4d => d.extents.iter().map(|&e| u32::from(e)).product(),
        _ => u32::from(d.length),
    }
}
