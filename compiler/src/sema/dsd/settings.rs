//! The configuration argument of DSD builtins (`.{ .async = true, .activate = t }`, or a
//! comptime struct holding such settings) and the completion settings that DSD
//! operations and `@load_to_dsr` share.

use crate::diag::codes;
use crate::sema::eval::Env;
use crate::sema::value::Value;
use crate::sema::{R, Sema};
use crate::source::Span;
use crate::syntax::ast::{ExprId, ExprKind, InitList};
use csl_arch::dsd::cfg as opcfg;

/// A setting of an operation's configuration, written in place (`.{ .async = true }`) or
/// taken from a comptime struct (`const props = .{ ... }; @fmovs(dst, src, props)`).
#[derive(Clone)]
pub(super) enum SettingVal {
    Expr(ExprId),
    Ct(Value, Span),
}

/// A named setting.
pub(super) struct Setting {
    pub(super) name: String,
    pub(super) name_span: Span,
    pub(super) val: SettingVal,
}

impl Sema {
    /// Applies one of the completion settings that DSD operations and `@load_to_dsr`
    /// share (`.async`, `.activate`/`.unblock`, `.on_control`) to `cfg`, `done` and
    /// `done_task`. Returns false when `f` names some other setting.
    pub(super) fn completion_setting(
        &mut self,
        env: &mut Env,
        f: &Setting,
        cfg: &mut u8,
        done: &mut u8,
        done_task: &mut Option<crate::ir::FuncId>,
    ) -> R<bool> {
        match f.name.as_str() {
            "async" => {
                if self.setting_bool(env, &f.val)? {
                    *cfg |= opcfg::ASYNC;
                }
            }
            "activate" | "unblock" => {
                let v = self.setting_ct(env, &f.val)?;
                let vspan = self.setting_span(env, &f.val);
                *cfg |= if f.name == "activate" {
                    opcfg::ON_DONE_ACTIVATE
                } else {
                    opcfg::ON_DONE_UNBLOCK
                };
                match &v {
                    // A task named directly: its id is known once it is bound.
                    Value::Task(d) => *done_task = Some(self.lower_task(*d, vspan)?),
                    other => *done = self.task_id_of_value(other, vspan)?,
                }
            }
            "on_control" => {
                self.setting_ct(env, &f.val)?;
                *cfg |= opcfg::ON_CONTROL_TERMINATE;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The settings of a configuration argument: a struct literal, or any comptime struct
    /// (`None` if `e` is neither).
    pub(super) fn settings(&mut self, env: &mut Env, e: ExprId) -> R<Option<Vec<Setting>>> {
        let ast = env.ast.clone();
        if let ExprKind::AnonInit(InitList::Fields(fields)) = &ast.exprs[e].kind {
            return Ok(Some(
                fields
                    .iter()
                    .map(|f| Setting {
                        name: f.name.name.to_string(),
                        name_span: f.name.span,
                        val: SettingVal::Expr(f.value),
                    })
                    .collect(),
            ));
        }
        let span = self.span(env, e);
        match self.eval_comptime(env, e)? {
            Value::Struct(fs) => Ok(Some(
                fs.iter()
                    .map(|(n, v)| Setting {
                        name: n.to_string(),
                        name_span: span,
                        val: SettingVal::Ct(v.clone(), span),
                    })
                    .collect(),
            )),
            _ => Ok(None),
        }
    }

    pub(super) fn setting_ct(&mut self, env: &mut Env, v: &SettingVal) -> R<Value> {
        match v {
            SettingVal::Expr(e) => self.eval_comptime(env, *e),
            SettingVal::Ct(v, _) => Ok(v.clone()),
        }
    }

    pub(super) fn setting_span(&self, env: &Env, v: &SettingVal) -> Span {
        match v {
            SettingVal::Expr(e) => self.span(env, *e),
            SettingVal::Ct(_, s) => *s,
        }
    }

    pub(super) fn setting_bool(&mut self, env: &mut Env, v: &SettingVal) -> R<bool> {
        match self.setting_ct(env, v)? {
            Value::Bool(b) => Ok(b),
            _ => {
                let s = self.setting_span(env, v);
                Err(self.err(codes::TYPE_MISMATCH, "expected a comptime bool", s, "here"))
            }
        }
    }

    pub(super) fn bool_prop(&mut self, env: &mut Env, e: ExprId) -> R<bool> {
        match self.eval_comptime(env, e)? {
            Value::Bool(b) => Ok(b),
            _ => {
                let s = self.span(env, e);
                Err(self.err(codes::TYPE_MISMATCH, "expected a comptime bool", s, "here"))
            }
        }
    }
}
