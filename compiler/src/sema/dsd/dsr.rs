//! Data structure registers: `@get_dsr`, `@get_xdsr` and `@load_to_dsr`, and the global
//! that holds each DSR's descriptor.

use crate::diag::{Diagnostic, codes};
use crate::ir::Inst;
use crate::sema::eval::{Env, Val};
use crate::sema::types::Type;
use crate::sema::value::Value;
use crate::sema::{R, Sema};
use crate::source::Span;
use crate::syntax::ast::ExprId;
use csl_arch::dsd::{DESC_BYTES, DsdKind, flags};

/// The memory slot shared by the DSR handles of one number and operand class (a FIFO
/// re-typing of a DSR uses the same register).
pub(super) fn dsr_key(kind: u8, n: u8) -> String {
    let class = match kind {
        0 | 3 => "dest",
        1 => "src0",
        _ => "src1",
    };
    format!("dsr:{class}:{n}")
}

impl Sema {
    /// The global holding the descriptor of DSR `(kind, n)` (created on first use).
    pub fn dsr_slot(&mut self, kind: u8, n: u8, span: Span) -> R<crate::ir::GlobalId> {
        let key = crate::sema::ConstKey::Dsr(kind, n);
        if let Some(g) = self.dsd_consts.get(&key) {
            return Ok(*g);
        }
        let p = self.pe_prog("DSRs exist only in PE programs", span, "used here")?;
        let g = p.globals.push(crate::ir::Global {
            name: format!("<{}>", dsr_key(kind, n)),
            size: DESC_BYTES,
            align: 2,
            init: vec![0; DESC_BYTES as usize],
            relocs: Vec::new(),
            span,
            place: crate::ir::GlobalPlace::Auto,
        });
        let ty = self.types.intern(Type::Dsr(kind));
        self.global_types.insert(g, ty);
        self.dsd_consts.insert(key, g);
        Ok(g)
    }

    /// `@get_dsr(kind, n)` and `@get_dsr(dsr_fifo_dest | dsr_fifo_src1, existing_dsr)`.
    pub fn b_get_dsr(&mut self, env: &mut Env, args: &[ExprId], span: Span) -> R<Val> {
        let t = self.eval_type(env, args[0])?;
        let Type::Dsr(kind) = *self.types.get(t) else {
            let d = self.types.display(t);
            let s = self.span(env, args[0]);
            return Err(self.err(
                codes::BUILTIN_ARGS,
                format!("@get_dsr needs a DSR type, found {d}"),
                s,
                "expected dsr_dest, dsr_src0, dsr_src1, dsr_fifo_dest or dsr_fifo_src1",
            ));
        };
        let n = match self.eval_comptime(env, args[1])? {
            Value::Int(n, _) => n,
            Value::Dsr(_, n) if kind >= 3 => i128::from(n),
            _ => {
                let s = self.span(env, args[1]);
                return Err(self.err(
                    codes::BUILTIN_ARGS,
                    "@get_dsr needs a DSR number (or, for FIFO DSRs, an existing DSR)",
                    s,
                    "here",
                ));
            }
        };
        // The hardware has 16 DSRs of each kind, and a program may name any of them: the
        // vendor compiler accepts DSR 0 with `--memcpy` (csl-examples' single-tile-matvec
        // takes DSR 0 of all three files), and our memcpy runtime claims no DSR.
        if !(0..16).contains(&n) {
            let s = self.span(env, args[1]);
            return Err(self.err(
                codes::TASK_ID_RANGE,
                format!("DSR {n} does not exist"),
                s,
                "DSRs are 0 to 15",
            ));
        }
        let _ = span;
        Ok(Val::Ct(Value::Dsr(kind, n as u8)))
    }

    /// Sets (or clears) the `save_address` flag of the descriptor in DSR global `g`.
    fn set_dsr_save_flag(&mut self, env: &mut Env, g: crate::ir::GlobalId, save: bool) {
        use csl_arch::isa::{BinOp, NumTy, Width};
        let fb = self.fb(env);
        let addr = fb.reg();
        fb.emit(Inst::GlobalAddr {
            dst: addr,
            global: g,
            offset: csl_arch::dsd::field::FLAGS,
        });
        let old = fb.reg();
        fb.emit(Inst::Load {
            w: Width::W8,
            dst: old,
            addr,
        });
        let mask = fb.reg();
        let (op, imm) = if save {
            (BinOp::Or, u32::from(flags::SAVE_ADDRESS))
        } else {
            (BinOp::And, u32::from(!flags::SAVE_ADDRESS))
        };
        fb.emit(Inst::Imm { dst: mask, imm });
        let new = fb.reg();
        fb.emit(Inst::Bin {
            op,
            ty: NumTy::U16,
            dst: new,
            a: old,
            b: mask,
        });
        fb.emit(Inst::Store {
            w: Width::W8,
            addr,
            src: new,
        });
    }

    /// `@get_xdsr(n)`.
    pub fn b_get_xdsr(&mut self, env: &mut Env, args: &[ExprId]) -> R<Val> {
        // One extended DSR per microthread.
        let n = self.microthread_arg(env, args[0], "extended DSR", "xdsrs")?;
        Ok(Val::Ct(Value::Xdsr(n)))
    }

    /// `@load_to_dsr(dsr, dsd[, config])`: in a top-level comptime block the DSR's initial
    /// contents, at runtime a copy; the configuration (async, completion, microthread,
    /// `save_address`) applies to the operations that use the DSR.
    pub fn b_load_to_dsr(&mut self, env: &mut Env, args: &[ExprId], span: Span) -> R<Val> {
        let dspan = self.span(env, args[0]);
        let dsr = |v| match v {
            Value::Dsr(kind, n) => Some((kind, n)),
            _ => None,
        };
        let what = (
            codes::BUILTIN_ARGS,
            "@load_to_dsr needs a DSR from @get_dsr",
            "not a DSR",
        );
        let (kind, n) = self.comptime_arg(env, args[0], dsr, what)?;
        let vspan = self.span(env, args[1]);
        let (v, vt) = self.expr_typed(env, args[1])?;
        if !self.types.get(vt).is_dsd() {
            return Err(self.arg_ty_err(vt, vspan, "not a DSD", |d| {
                format!("@load_to_dsr needs a DSD, found {d}")
            }));
        }
        match (kind, self.types.get(vt)) {
            (0, Type::FabinDsd) => {
                return Err(self.err(
                    codes::BUILTIN_ARGS,
                    "a fabin_dsd cannot be loaded into a dsr_dest",
                    vspan,
                    "fabric input",
                ));
            }
            (1 | 2, Type::FaboutDsd) => {
                return Err(self.err(
                    codes::BUILTIN_ARGS,
                    "a fabout_dsd cannot be loaded into a source DSR",
                    vspan,
                    "fabric output",
                ));
            }
            _ => {}
        }
        let (mut c, mut done, mut done_task, mut ut, mut save) = (0u8, 0u8, None, None, false);
        if let Some(cfg) = args.get(2) {
            let Some(fields) = self.settings(env, *cfg)? else {
                let s = self.span(env, *cfg);
                return Err(self.err(
                    codes::BUILTIN_ARGS,
                    "the configuration must be `.{ .name = value, ... }`",
                    s,
                    "here",
                ));
            };
            for f in &fields {
                if self.completion_setting(env, f, &mut c, &mut done, &mut done_task)? {
                    continue;
                }
                match f.name.as_str() {
                    "ut_id" => {
                        let fv = self.setting_ct(env, &f.val)?;
                        ut = self.ut_of(&fv);
                    }
                    "save_address" => save = self.setting_bool(env, &f.val)?,
                    "single_step" => {
                        self.setting_bool(env, &f.val)?;
                    }
                    other => {
                        return Err(self.report(
                            Diagnostic::error(codes::BUILTIN_ARGS, format!("`{other}` is not a @load_to_dsr setting"), f.name_span, "unknown setting")
                                .with_help("settings are async, activate, unblock, on_control, ut_id, save_address, single_step"),
                        ));
                    }
                }
            }
        }
        self.dsr_cfgs
            .insert(dsr_key(kind, n), (c, done, done_task, ut));
        let queue = match &v {
            Val::Ct(Value::Dsd(d)) if matches!(d.kind, DsdKind::FabIn | DsdKind::FabOut) => {
                Some(d.queue)
            }
            Val::Ct(_) => None,
            _ if matches!(self.types.get(vt), Type::FabinDsd | Type::FaboutDsd) => {
                self.static_fabric_queue(env, args[1])
            }
            _ => None,
        };
        self.dsr_queues.insert(dsr_key(kind, n), queue);
        let g = self.dsr_slot(kind, n, dspan)?;
        if env.comptime {
            // Initial contents of the DSR.
            let Val::Ct(Value::Dsd(d)) = v else {
                return Err(self.not_comptime(vspan));
            };
            let mut d = (*d).clone();
            if save {
                d.flags |= flags::SAVE_ADDRESS;
            }
            let (bytes, relocs) = d.encode_init();
            if let Some(p) = self.prog.as_mut() {
                p.globals[g].init = bytes;
                p.globals[g].relocs = relocs;
            }
            return Ok(Val::Ct(Value::Void));
        }
        let runtime_value = !matches!(v, Val::Ct(_));
        let v = match (v, save) {
            (Val::Ct(Value::Dsd(d)), true) => {
                let mut d = (*d).clone();
                d.flags |= flags::SAVE_ADDRESS;
                Val::Ct(Value::Dsd(std::rc::Rc::new(d)))
            }
            (v, _) => v,
        };
        let src = self.materialize(env, v, vspan)?;
        let dst = self.global_addr(env, g, 0);
        self.fb(env).emit(Inst::Copy {
            dst,
            src,
            bytes: DESC_BYTES as u16,
        });
        if runtime_value {
            // A DSD held in a variable: the DSR's copy gets the `save_address` flag here.
            self.set_dsr_save_flag(env, g, save);
        }
        let _ = span;
        Ok(Val::Ct(Value::Void))
    }
}
