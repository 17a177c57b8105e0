//! The language builtins (reflection, strings, arrays, ranges, casts): operand checks and
//! implementations. Rows of the table in [`super::builtins`] name these handlers.
//!
//! Operand-kind errors (a number where a string is needed, a value where an array type is
//! needed) are `E0502`; type errors of converted values are `E0201`.

use super::builtins::Call;
use super::eval::{Env, Val};
use super::lower::FnBuilder;
use super::types::{Type, TypeId};
use super::value::Value;
use super::{R, Reported, Sema};
use crate::diag::{Diagnostic, codes};
use crate::ir::{Inst, VReg};
use crate::source::Span;
use crate::symbol::Symbol;
use crate::syntax::ast::ExprId;
use csl_arch::NumTy;
use std::rc::Rc;

impl Sema {
    /// `@type_of`.
    pub(crate) fn b_type_of(&mut self, env: &mut Env, c: &Call<'_>) -> R<Val> {
        let args = c.args;
        // The operand is analysed for its type only: code it would emit is dropped.
        let saved_fb = env.fb.take();
        let saved_ct = env.comptime;
        env.fb = Some(FnBuilder::sink());
        env.comptime = false;
        let r = self.expr(env, args[0]);
        env.fb = saved_fb;
        env.comptime = saved_ct;
        let v = r?;
        Ok(Val::Ct(Value::Type(self.val_ty(&v))))
    }

    /// `@field`.
    pub(crate) fn b_field(&mut self, env: &mut Env, c: &Call<'_>) -> R<Val> {
        let args = c.args;
        let span = c.span;
        let f = self.str_arg_kind(env, args[1], "field")?;
        let fspan = self.span(env, args[1]);
        if self.is_place_expr(env, args[0]) {
            let p = self.field_place(env, args[0], &f, fspan, span)?;
            return self.read_place(env, p, span);
        }
        let bv = self.expr(env, args[0])?;
        let bspan = self.span(env, args[0]);
        self.field_of_val(env, bv, bspan, Symbol::intern(&f), fspan, span)
    }

    /// `@has_field`.
    pub(crate) fn b_has_field(&mut self, env: &mut Env, c: &Call<'_>) -> R<Val> {
        let args = c.args;
        let s = self.eval_comptime(env, args[0])?;
        let f = self.str_arg_kind(env, args[1], "has_field")?;
        let names: Vec<String> = match &s {
            Value::Struct(fields) => fields.iter().map(|(n, _)| n.to_string()).collect(),
            Value::Void => Vec::new(),
            Value::Record(t, _) | Value::Type(t) if self.types.struct_def(*t).is_some() => self
                .types
                .struct_def(*t)
                .map(|d| d.fields.iter().map(|(n, _)| n.clone()).collect())
                .unwrap_or_default(),
            other => {
                return Err(self.operand_kind(
                    env,
                    args[0],
                    "has_field",
                    "a struct value or struct type",
                    other,
                ));
            }
        };
        Ok(Val::Ct(Value::Bool(names.iter().any(|x| **x == *f))))
    }

    /// `@concat_structs`.
    pub(crate) fn b_concat_structs(&mut self, env: &mut Env, c: &Call<'_>) -> R<Val> {
        let args = c.args;
        let a = self.anon_struct_arg(env, args[0], "concat_structs")?;
        let b = self.anon_struct_arg(env, args[1], "concat_structs")?;
        let mut out = a.to_vec();
        for (n, v) in b.iter() {
            if out.iter().any(|(m, _)| m == n) {
                let sp = self.span(env, args[1]);
                return Err(self.report(
                    Diagnostic::error(
                        codes::DUPLICATE_DECL,
                        format!("both structs have a field `{n}`"),
                        sp,
                        format!("`{n}` is also in the first struct"),
                    )
                    .with_help("@concat_structs needs disjoint field names"),
                ));
            }
            out.push((*n, v.clone()));
        }
        Ok(Val::Ct(Value::Struct(Rc::new(out))))
    }

    /// `@strlen`.
    pub(crate) fn b_strlen(&mut self, env: &mut Env, c: &Call<'_>) -> R<Val> {
        let args = c.args;
        let s = self.str_arg_kind(env, args[0], "strlen")?;
        Ok(Val::Ct(Value::Int(
            s.len() as i128,
            self.types.common.comptime_int,
        )))
    }

    /// `@strcat`.
    pub(crate) fn b_strcat(&mut self, env: &mut Env, c: &Call<'_>) -> R<Val> {
        let args = c.args;
        let mut out = String::new();
        for a in args {
            out.push_str(&self.str_arg_kind(env, *a, "strcat")?);
        }
        Ok(Val::Ct(Value::Str(Rc::from(out.as_str()))))
    }

    /// `@get_array`.
    pub(crate) fn b_get_array(&mut self, env: &mut Env, c: &Call<'_>) -> R<Val> {
        let args = c.args;
        let s = self.str_arg_kind(env, args[0], "get_array")?;
        let u8t = self.types.common.u8;
        let at = self.types.intern(Type::Array {
            elem: u8t,
            dims: vec![s.len() as u64],
        });
        Ok(Val::Ct(Value::Array(
            at,
            Rc::new(s.bytes().map(|b| Value::Int(i128::from(b), u8t)).collect()),
        )))
    }

    /// `@get_string_from_byte`.
    pub(crate) fn b_get_string_from_byte(&mut self, env: &mut Env, c: &Call<'_>) -> R<Val> {
        let args = c.args;
        let v = self.eval_comptime(env, args[0])?;
        let sp = self.span(env, args[0]);
        let Value::Int(b, _) = v else {
            return Err(self.operand_kind(env, args[0], "get_string_from_byte", "an integer", &v));
        };
        if !(0..=255).contains(&b) {
            return Err(self.err(
                codes::OUT_OF_RANGE,
                format!("{b} is not a byte"),
                sp,
                "expected 0 to 255",
            ));
        }
        if b > 127 {
            return Err(self.err(
                codes::UNSUPPORTED,
                "strings with bytes above 127 are not supported yet",
                sp,
                "not an ASCII character",
            ));
        }
        let s = String::from(char::from(b as u8));
        Ok(Val::Ct(Value::Str(Rc::from(s.as_str()))))
    }

    /// `@dimensions` / `@element_count` / `@element_type` / `@rank`.
    pub(crate) fn b_dimensions(&mut self, env: &mut Env, c: &Call<'_>) -> R<Val> {
        let n = c.name;
        let args = c.args;
        let v = self.eval_comptime(env, args[0])?;
        let t = match v {
            Value::Type(t) if matches!(self.types.get(t), Type::Array { .. }) => t,
            other => {
                return Err(self.operand_kind(env, args[0], n, "an array type", &other));
            }
        };
        let Type::Array { elem, dims } = self.types.get(t).clone() else {
            return Err(Reported);
        };
        let c = &self.types.common;
        Ok(Val::Ct(match n {
            "element_count" => Value::Int(dims.iter().product::<u64>() as i128, c.u32),
            "rank" => Value::Int(dims.len() as i128, c.u16),
            "element_type" => Value::Type(elem),
            _ => {
                let u32t = c.u32;
                let at = self.types.intern(Type::Array {
                    elem: u32t,
                    dims: vec![dims.len() as u64],
                });
                Value::Array(
                    at,
                    Rc::new(dims.iter().map(|d| Value::Int(*d as i128, u32t)).collect()),
                )
            }
        }))
    }

    /// `@range_start` / `@range_stop` / `@range_step`.
    pub(crate) fn b_range_start(&mut self, env: &mut Env, c: &Call<'_>) -> R<Val> {
        let n = c.name;
        let args = c.args;
        let v = self.eval_comptime(env, args[0])?;
        let Value::Range {
            start,
            stop,
            step,
            elem,
        } = v
        else {
            return Err(self.operand_kind(env, args[0], n, "a @range value", &v));
        };
        let x = match n {
            "range_start" => start,
            "range_stop" => stop,
            _ => step,
        };
        Ok(Val::Ct(Value::Int(x, elem)))
    }

    /// `@ptrcast`.
    pub(crate) fn b_ptrcast(&mut self, env: &mut Env, c: &Call<'_>) -> R<Val> {
        let args = c.args;
        let span = c.span;
        let t = self.eval_type(env, args[0])?;
        let tspan = self.span(env, args[0]);
        let elem = match self.types.get(t) {
            Type::Ptr { elem, .. } | Type::ManyPtr { elem, .. } => *elem,
            _ => {
                return Err(self.arg_ty_err(t, tspan, "expected a pointer type", |d| {
                    format!("`@ptrcast` expects a pointer type, found the type {d}")
                }));
            }
        };
        if self.types.is_comptime_only(elem) {
            return Err(self.arg_ty_err(elem, tspan, "comptime-only pointee", |d| {
                format!("cannot point to the comptime-only type {d}")
            }));
        }
        let (v, vt) = self.expr_typed(env, args[1])?;
        if !matches!(self.types.get(vt), Type::Ptr { .. } | Type::ManyPtr { .. }) {
            let d = self.types.display(vt);
            let vspan = self.span(env, args[1]);
            return Err(self.report(
                Diagnostic::error(
                    codes::BUILTIN_ARGS,
                    format!("`@ptrcast` expects a pointer, found a value of type {d}"),
                    vspan,
                    "expected a pointer",
                )
                .with_help("to turn an address into a pointer, use `@bitcast`"),
            ));
        }
        let _ = span;
        Ok(match v {
            Val::Rt { reg, .. } => Val::Rt { reg, ty: t },
            Val::Ct(Value::GlobalPtr { global, offset, .. }) => Val::Ct(Value::GlobalPtr {
                global,
                offset,
                ty: t,
            }),
            Val::Ct(Value::AbsPtr { addr, .. }) => Val::Ct(Value::AbsPtr { addr, ty: t }),
            Val::Ct(_) => return Err(Reported),
        })
    }

    /// A `comptime_string` operand of builtin `@b`.
    pub(crate) fn str_arg_kind(&mut self, env: &mut Env, e: ExprId, b: &str) -> R<Rc<str>> {
        match self.eval_comptime(env, e)? {
            Value::Str(s) => Ok(s),
            other => Err(self.operand_kind(env, e, b, "a comptime_string", &other)),
        }
    }

    fn anon_struct_arg(
        &mut self,
        env: &mut Env,
        e: ExprId,
        b: &str,
    ) -> R<Rc<Vec<(Symbol, Value)>>> {
        match self.eval_comptime(env, e)? {
            Value::Struct(f) => Ok(f),
            Value::Void => Ok(Rc::new(Vec::new())),
            other => Err(self.operand_kind(env, e, b, "an anonymous struct `.{ ... }`", &other)),
        }
    }

    /// "`@b` expects X, found a value of type T".
    pub(crate) fn operand_kind(
        &mut self,
        env: &Env,
        e: ExprId,
        b: &str,
        want: &str,
        found: &Value,
    ) -> Reported {
        let sp = self.span(env, e);
        let t = found.ty(&mut self.types);
        let d = self.types.display(t);
        let what = match found {
            Value::Type(ft) => format!("the type {}", self.types.display(*ft)),
            _ => format!("a value of type {d}"),
        };
        self.report(Diagnostic::error(
            codes::BUILTIN_ARGS,
            format!("`@{b}` expects {want}, found {what}"),
            sp,
            format!("expected {want}"),
        ))
    }

    pub(crate) fn b_get_int_lang(&mut self, env: &mut Env, e: ExprId) -> R<Val> {
        let v = self.expr(env, e)?;
        let u16t = self.types.common.u16;
        match v {
            Val::Ct(Value::Color(c))
            | Val::Ct(Value::TaskId(_, c))
            | Val::Ct(Value::Queue(_, c)) => Ok(Val::Ct(Value::Int(i128::from(c), u16t))),
            Val::Ct(Value::Int(i, t)) => Ok(Val::Ct(Value::Int(i, t))),
            Val::Ct(Value::Enum(t, i)) => {
                let tag = self.types.enum_def(t).map_or(u16t, |d| d.tag);
                Ok(Val::Ct(Value::Int(i, tag)))
            }
            Val::Rt { reg, ty } if matches!(self.types.get(ty), Type::Enum(_)) => {
                let tag = self.types.enum_def(ty).map_or(u16t, |d| d.tag);
                Ok(Val::Rt { reg, ty: tag })
            }
            Val::Rt { reg, ty } if self.types.int_info(ty).is_some() => Ok(Val::Rt { reg, ty }),
            Val::Rt { reg, ty } if self.types.get(ty).is_id() => Ok(Val::Rt { reg, ty: u16t }),
            other => {
                let sp = self.span(env, e);
                let t = self.val_ty(&other);
                Err(self.arg_ty_err(
                    t,
                    sp,
                    "expected a color, task id, queue, enum or integer",
                    |d| format!("`@get_int` does not accept {d}"),
                ))
            }
        }
    }

    /// `@as cannot convert FROM to TO`, at the operand (`span`) of type `from`.
    pub(crate) fn as_mismatch(&self, from: TypeId, to: TypeId, span: Span) -> Diagnostic {
        let (a, b) = (self.types.display(from), self.types.display(to));
        let msg = format!("@as cannot convert {a} to {b}");
        let label = format!("this has type {a}");
        Diagnostic::error(codes::TYPE_MISMATCH, msg, span, label)
    }

    /// `@as` where the target or the operand is an enum.
    pub(crate) fn as_enum(&mut self, env: &mut Env, t: TypeId, v: Val, vspan: Span) -> R<Val> {
        let vt = self.val_ty(&v);
        if vt == t {
            return Ok(v);
        }
        let (te, ve) = (
            self.types.enum_def(t).cloned(),
            self.types.enum_def(vt).cloned(),
        );
        if te.is_some() && ve.is_some() {
            let b = self.types.display(t);
            let help = format!("convert through an integer: `@as({b}, @as(u16, x))`");
            return Err(self.report(self.as_mismatch(vt, t, vspan).with_help(help)));
        }
        if let Some(def) = te {
            // Number -> enum.
            if !self.types.is_int(vt) {
                let (a, b) = (self.types.display(vt), self.types.display(t));
                return Err(self.err(
                    codes::TYPE_MISMATCH,
                    format!("@as cannot convert {a} to {b}"),
                    vspan,
                    "expected an integer",
                ));
            }
            return match v {
                Val::Ct(Value::Int(i, _)) => {
                    if !def.members.iter().any(|(_, m)| *m == i) {
                        let d = self.types.display(t);
                        let vals: Vec<String> = def
                            .members
                            .iter()
                            .map(|(n, m)| format!("{n} = {m}"))
                            .collect();
                        return Err(self.report(
                            Diagnostic::error(
                                codes::OUT_OF_RANGE,
                                format!("{d} has no member with the value {i}"),
                                vspan,
                                "no such member",
                            )
                            .with_note(format!("its members are: {}", vals.join(", "))),
                        ));
                    }
                    Ok(Val::Ct(Value::Enum(t, i)))
                }
                Val::Rt { reg, ty } => {
                    let conv = self.conv_reg(env, reg, ty, def.tag)?;
                    Ok(Val::Rt { reg: conv, ty: t })
                }
                Val::Ct(_) => Err(Reported),
            };
        }
        let Some(def) = ve else { return Err(Reported) };
        // Enum -> number.
        if !self.types.is_numeric(t) {
            return Err(self.report(self.as_mismatch(vt, t, vspan)));
        }
        match v {
            Val::Ct(Value::Enum(_, i)) => {
                if self.types.is_float(t) {
                    let tt = self.types.get(t).clone();
                    return Ok(Val::Ct(Value::Float(
                        super::eval::round_to(&tt, i as f64),
                        t,
                    )));
                }
                if !self.types.int_fits(t, i) {
                    return Err(self.does_not_fit(i, t, vspan));
                }
                Ok(Val::Ct(Value::Int(i, t)))
            }
            Val::Rt { reg, .. } => {
                let r = self.conv_reg(env, reg, def.tag, t)?;
                Ok(Val::Rt { reg: r, ty: t })
            }
            Val::Ct(_) => Err(Reported),
        }
    }

    fn conv_reg(
        &mut self,
        env: &mut Env,
        reg: crate::ir::VReg,
        from: TypeId,
        to: TypeId,
    ) -> R<crate::ir::VReg> {
        let (Some(f), Some(t)) = (self.types.num_ty(from), self.types.num_ty(to)) else {
            return Err(Reported);
        };
        if f == t {
            return Ok(reg);
        }
        Ok(self.emit_conv(env, reg, f, t))
    }

    /// Emits the conversion of `src` from `from` to `to` into a new register.
    pub(crate) fn emit_conv(&mut self, env: &mut Env, src: VReg, from: NumTy, to: NumTy) -> VReg {
        let dst = self.fb(env).reg();
        self.fb(env).emit(Inst::Conv { to, from, dst, src });
        dst
    }

    /// `@import_comptime_value(T, "file.json")`.
    pub(crate) fn b_import_comptime_value(&mut self, env: &mut Env, args: &[ExprId]) -> R<Val> {
        let t = self.eval_type(env, args[0])?;
        let path = self.str_arg_kind(env, args[1], "import_comptime_value")?;
        let sp = self.span(env, args[1]);
        let from = self.mods[env.module].file;
        let file = self.load_file(&path, from, sp, "JSON file")?;
        let text = self.sources.get(file).text.clone();
        let json: serde_json::Value = match serde_json::from_str(&text) {
            Ok(j) => j,
            Err(e) => {
                return Err(self.err(
                    codes::BUILTIN_ARGS,
                    format!("`{path}` is not valid JSON"),
                    sp,
                    e.to_string(),
                ));
            }
        };
        let v = self.json_value(&json, t, sp, &path)?;
        Ok(Val::Ct(v))
    }

    fn json_value(&mut self, j: &serde_json::Value, t: TypeId, span: Span, path: &str) -> R<Value> {
        let d = self.types.display(t);
        let bad = |s: &mut Sema, what: &str| -> Reported {
            s.err(
                codes::TYPE_MISMATCH,
                format!("`{path}`: expected {d}, found {what}"),
                span,
                "while importing this file",
            )
        };
        match (self.types.get(t).clone(), j) {
            (Type::Bool, serde_json::Value::Bool(b)) => Ok(Value::Bool(*b)),
            (Type::Int { .. } | Type::ComptimeInt, serde_json::Value::Number(n)) => {
                match n.as_i64() {
                    Some(i) => self.coerce_value(
                        Value::Int(i128::from(i), self.types.common.comptime_int),
                        t,
                        span,
                    ),
                    None => Err(bad(self, "a non-integer number")),
                }
            }
            (Type::F16 | Type::F32 | Type::ComptimeFloat, serde_json::Value::Number(n)) => {
                let f = n.as_f64().unwrap_or(0.0);
                let cf = self.types.common.comptime_float;
                self.coerce_value(Value::Float(f, cf), t, span)
            }
            (Type::Color, serde_json::Value::Number(n)) => match n.as_u64() {
                Some(c) if c < u64::from(csl_arch::fabric::NUM_COLORS) => Ok(Value::Color(c as u8)),
                _ => Err(bad(self, "a number that is not a color")),
            },
            (Type::ComptimeString, serde_json::Value::String(s)) => {
                Ok(Value::Str(Rc::from(s.as_str())))
            }
            (Type::Array { elem, dims }, serde_json::Value::Array(_)) => {
                let mut flat = Vec::new();
                flatten(j, &mut flat);
                let n: u64 = dims.iter().product();
                if flat.len() as u64 != n {
                    return Err(bad(self, &format!("{} elements", flat.len())));
                }
                let mut out = Vec::new();
                for x in flat {
                    out.push(self.json_value(x, elem, span, path)?);
                }
                Ok(Value::Array(t, Rc::new(out)))
            }
            (Type::ComptimeStruct, serde_json::Value::Object(m)) => {
                let mut out = Vec::new();
                for (k, v) in m {
                    // Keys are written `name:type`.
                    let (name, tyname) = k.split_once(':').unwrap_or((k.as_str(), ""));
                    let val = if tyname.trim().is_empty() {
                        self.json_infer(v, span, path)?
                    } else {
                        let Some(ft) = self.types.builtin_named(tyname.trim()) else {
                            return Err(self.err(
                                codes::TYPE_MISMATCH,
                                format!(
                                    "`{path}`: unknown type `{}` in the key `{k}`",
                                    tyname.trim()
                                ),
                                span,
                                "while importing this file",
                            ));
                        };
                        self.json_value(v, ft, span, path)?
                    };
                    out.push((Symbol::intern(name.trim()), val));
                }
                Ok(Value::Struct(Rc::new(out)))
            }
            (Type::Struct(_), serde_json::Value::Object(m)) => {
                let Some(def) = self.types.struct_def(t).cloned() else {
                    return Err(Reported);
                };
                let mut fields = Vec::new();
                for (k, v) in m {
                    let name = k.split_once(':').map_or(k.as_str(), |(n, _)| n).trim();
                    let Some((_, ft)) = def.fields.iter().find(|(n, _)| n == name) else {
                        return Err(bad(self, &format!("the unknown field `{name}`")));
                    };
                    fields.push((Symbol::intern(name), self.json_value(v, *ft, span, path)?));
                }
                self.anon_to_record(Rc::new(fields), t, span)
            }
            (_, other) => {
                let what = match other {
                    serde_json::Value::Null => "null",
                    serde_json::Value::Bool(_) => "a boolean",
                    serde_json::Value::Number(_) => "a number",
                    serde_json::Value::String(_) => "a string",
                    serde_json::Value::Array(_) => "an array",
                    serde_json::Value::Object(_) => "an object",
                };
                Err(bad(self, what))
            }
        }
    }
}

impl Sema {
    /// A JSON value without a declared type: numbers become `comptime_int` or
    /// `comptime_float`, arrays tuples, objects anonymous structs.
    fn json_infer(&mut self, j: &serde_json::Value, span: Span, path: &str) -> R<Value> {
        let c = &self.types.common;
        Ok(match j {
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i128::from(i), c.comptime_int),
                None => Value::Float(n.as_f64().unwrap_or(0.0), c.comptime_float),
            },
            serde_json::Value::String(s) => Value::Str(Rc::from(s.as_str())),
            serde_json::Value::Array(a) => {
                let mut out = Vec::new();
                for (i, x) in a.iter().enumerate() {
                    out.push((
                        super::structs::tuple_field(i),
                        self.json_infer(x, span, path)?,
                    ));
                }
                Value::Struct(Rc::new(out))
            }
            serde_json::Value::Object(_) => {
                let t = self.types.common.comptime_struct;
                return self.json_value(j, t, span, path);
            }
            serde_json::Value::Null => {
                return Err(self.err(
                    codes::TYPE_MISMATCH,
                    format!("`{path}`: null has no CSL value"),
                    span,
                    "while importing this file",
                ));
            }
        })
    }
}

fn flatten<'a>(j: &'a serde_json::Value, out: &mut Vec<&'a serde_json::Value>) {
    match j {
        serde_json::Value::Array(a) => a.iter().for_each(|x| flatten(x, out)),
        other => out.push(other),
    }
}
