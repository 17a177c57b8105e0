//! Named struct and enum types: their definitions, literals and field access, and the
//! read-only copies of comptime aggregates that runtime code reads from memory.
//!
//! * A `struct { ... }` or `enum(T) { ... }` expression creates a **nominal** type: its
//!   identity is the definition site plus the resolved structure, so evaluating one
//!   definition twice with the same field types (e.g. a generic `fn P(comptime T: type)
//!   type` called twice with `i16`) gives the same type, and two definitions with identical
//!   fields are different types. The type is named after the first declaration it is bound
//!   to (`S`, `P(i16)`).
//! * Enum members without a value take, left to right, the lowest integer from 0 up that
//!   no member uses (explicit values are reserved first): `{red, white = 4, blue}` is
//!   0, 4, 1.
//! * A comptime struct value is a [`Value::Record`]; at runtime a struct lives in memory
//!   and is handled through its address, like arrays (see
//!   [`TypeStore::is_mem_type`](super::types::TypeStore::is_mem_type)).

use super::eval::{Env, FieldBase, MemBase, MemPlace, Place, Val};
use super::types::{Type, TypeId};
use super::value::Value;
use super::{R, Reported, Sema};
use crate::diag::{Diagnostic, codes};
use crate::ir::{GlobalId, Inst, VReg};
use crate::source::Span;
use crate::symbol::Symbol;
use crate::syntax::ast::{EnumMember, ExprId, Ident, InitList, StructField};
use cranelift_entity::EntityRef;
use std::collections::BTreeSet;
use std::rc::Rc;

impl Sema {
    /// `struct { a: T, b: U = default }`.
    pub(crate) fn struct_type_expr(
        &mut self,
        env: &mut Env,
        e: ExprId,
        fields: &[StructField],
    ) -> R<TypeId> {
        let mut fs: Vec<(String, TypeId)> = Vec::new();
        let mut spans: Vec<Span> = Vec::new();
        let mut defaults = Vec::new();
        for f in fields {
            if let Some(i) = fs.iter().position(|(n, _)| *n == f.name.name) {
                return Err(self.report(Diagnostic::twice(
                    codes::DUPLICATE_DECL,
                    format!("field `{}`", f.name.name),
                    "declared",
                    f.name.span,
                    spans[i],
                )));
            }
            let t = self.eval_type(env, f.ty)?;
            let d = match f.default {
                Some(x) => {
                    let v = self.eval_comptime(env, x)?;
                    let s = self.span(env, x);
                    Some(self.coerce_value(v, t, s)?)
                }
                None => None,
            };
            fs.push((f.name.name.to_string(), t));
            spans.push(f.name.span);
            defaults.push(d);
        }
        let file = self.mods[env.module].file;
        let shape: Vec<String> = fs
            .iter()
            .zip(&defaults)
            .map(|((n, t), d)| {
                format!(
                    "{n}:{}={}",
                    t.index(),
                    d.as_ref()
                        .map_or(String::new(), |v| v.canonical(&self.types))
                )
            })
            .collect();
        let key = format!("struct@{}:{}|{}", file.index(), e.index(), shape.join(","));
        Ok(self.types.struct_type(key, fs, defaults))
    }

    /// `enum(T) { a, b = 4, c }`.
    pub(crate) fn enum_type_expr(
        &mut self,
        env: &mut Env,
        e: ExprId,
        tag: Option<ExprId>,
        members: &[EnumMember],
        span: Span,
    ) -> R<TypeId> {
        let tag_ty = match tag {
            Some(t) => {
                let ty = self.eval_type(env, t)?;
                if !matches!(self.types.get(ty), Type::Int { .. }) {
                    let d = self.types.display(ty);
                    let s = self.span(env, t);
                    return Err(self.report(
                        Diagnostic::error(codes::TYPE_MISMATCH, format!("the backing type of an enum must be a fixed-width integer type, not {d}"), s, "not a fixed-width integer type")
                            .with_help("use e.g. `enum(u16) { ... }`"),
                    ));
                }
                ty
            }
            // No tag written: the machine word.
            None => self.types.common.u16,
        };
        let mut names: Vec<&Ident> = Vec::new();
        let mut explicit: Vec<Option<(i128, Span)>> = Vec::new();
        for m in members {
            if let Some(prev) = names.iter().find(|n| n.name == m.name.name) {
                return Err(self.report(Diagnostic::twice(
                    codes::DUPLICATE_DECL,
                    format!("enum member `{}`", m.name.name),
                    "declared",
                    m.name.span,
                    prev.span,
                )));
            }
            names.push(&m.name);
            let v = match m.value {
                Some(x) => {
                    let v = self.eval_comptime(env, x)?;
                    let s = self.span(env, x);
                    let Value::Int(i, _) = self.coerce_value(v, tag_ty, s)? else {
                        return Err(Reported);
                    };
                    if let Some((j, Some((_, prev_span)))) = explicit
                        .iter()
                        .enumerate()
                        .find(|(_, p)| p.is_some_and(|(pv, _)| pv == i))
                    {
                        let prev = names[j];
                        let prev_span = *prev_span;
                        return Err(self.report(
                            Diagnostic::error(
                                codes::DUPLICATE_ENUM_VALUE,
                                format!(
                                    "enum members `{}` and `{}` have the same value {i}",
                                    prev.name, m.name.name
                                ),
                                s,
                                format!("`{}` is {i} here", m.name.name),
                            )
                            .with_label(prev_span, format!("`{}` is already {i}", prev.name))
                            .with_help("every member of an enum needs its own value"),
                        ));
                    }
                    Some((i, s))
                }
                None => None,
            };
            explicit.push(v);
        }
        let mut used: BTreeSet<i128> = explicit.iter().flatten().map(|(v, _)| *v).collect();
        let mut next: i128 = 0;
        let mut out = Vec::new();
        for (m, ex) in members.iter().zip(&explicit) {
            let v = match ex {
                Some((v, _)) => *v,
                None => {
                    while used.contains(&next) {
                        next += 1;
                    }
                    used.insert(next);
                    if !self.types.int_fits(tag_ty, next) {
                        let (name, sp) = (m.name.name, m.name.span);
                        return Err(self.err_ty(codes::OUT_OF_RANGE, tag_ty, sp, "no value left for this member", |d| {
                            format!("enum member `{name}` would get the value {next}, which does not fit in {d}")
                        }));
                    }
                    next
                }
            };
            out.push((m.name.name, v));
        }
        let _ = span;
        let file = self.mods[env.module].file;
        let shape: Vec<String> = out.iter().map(|(n, v)| format!("{n}={v}")).collect();
        let key = format!(
            "enum@{}:{}|{}|{}",
            file.index(),
            e.index(),
            tag_ty.index(),
            shape.join(",")
        );
        let out = out.into_iter().map(|(n, v)| (n.to_string(), v)).collect();
        Ok(self.types.enum_type(key, tag_ty, out))
    }

    /// The index and type of a named struct's field.
    pub(crate) fn field_index(&self, ty: TypeId, name: &str) -> Option<(usize, TypeId)> {
        match self.types.get(ty) {
            Type::Struct(_) => self
                .types
                .struct_def(ty)?
                .fields
                .iter()
                .position(|(n, _)| n == name)
                .map(|i| (i, self.types.struct_def(ty).map_or(ty, |d| d.fields[i].1))),
            Type::AnonStruct(fs) => fs.iter().position(|(n, _)| n == name).map(|i| (i, fs[i].1)),
            _ => None,
        }
    }

    fn unknown_field(&mut self, what: &str, names: &[String], name: &str, span: Span) -> Reported {
        let msg = format!("{what} has no field `{name}`");
        let d = unknown_member(msg, span, "unknown field", name, names, "");
        let d = if d.help.is_some() {
            d
        } else if names.is_empty() {
            d.with_note("it has no fields")
        } else {
            d.with_note(format!("its fields are: {}", names.join(", ")))
        };
        self.report(d)
    }

    fn struct_field_names(&self, ty: TypeId) -> Vec<String> {
        match self.types.get(ty) {
            Type::Struct(_) => self
                .types
                .struct_def(ty)
                .map(|d| d.fields.iter().map(|(n, _)| n.clone()).collect())
                .unwrap_or_default(),
            Type::AnonStruct(fs) => fs.iter().map(|(n, _)| n.to_string()).collect(),
            _ => Vec::new(),
        }
    }

    fn no_fields(&mut self, ty: TypeId, span: Span) -> Reported {
        let msg = format!("a value of type {} has no fields", self.types.display(ty));
        let mut dg = self.diag_with_type(codes::UNKNOWN_MEMBER, msg, span, ty);
        if let Type::Ptr { elem, .. } = self.types.get(ty)
            && !matches!(self.types.get(*elem), Type::Struct(_))
        {
            dg = dg.with_help("dereference the pointer first with `.*`");
        }
        self.report(dg)
    }

    /// `base.name` as a value.
    pub(crate) fn field(
        &mut self,
        env: &mut Env,
        _e: ExprId,
        base: ExprId,
        name: &Ident,
        span: Span,
    ) -> R<Val> {
        if self.is_place_expr(env, base) {
            let p = self.field_place(env, base, &name.name, name.span, span)?;
            return self.read_place(env, p, span);
        }
        let bv = self.expr(env, base)?;
        let bspan = self.span(env, base);
        self.field_of_val(env, bv, bspan, name.name, name.span, span)
    }

    /// A field of an analysed value (a module, a struct value, an enum type, or a runtime
    /// struct or pointer to one).
    pub(crate) fn field_of_val(
        &mut self,
        env: &mut Env,
        bv: Val,
        bspan: Span,
        sym: Symbol,
        nspan: Span,
        span: Span,
    ) -> R<Val> {
        let name = sym.as_str();
        match bv {
            Val::Ct(Value::Module(m)) => {
                let Some(d) = self.lookup_decl(m, sym) else {
                    return Err(self.unknown_member_of_module(m, name, nspan));
                };
                let v = self.decl_val(env, d, span)?;
                self.index_decl(nspan, d, &v);
                Ok(v)
            }
            Val::Ct(Value::Struct(fields)) => match fields.iter().find(|(n, _)| *n == sym) {
                Some((_, v)) => Ok(Val::Ct(v.clone())),
                None => {
                    let mut names: Vec<String> =
                        fields.iter().map(|(n, _)| n.to_string()).collect();
                    names.sort();
                    Err(self.unknown_field("struct", &names, name, nspan))
                }
            },
            Val::Ct(Value::Record(t, vals)) => match self.field_index(t, name) {
                Some((i, _)) => vals.get(i).cloned().map(Val::Ct).ok_or(Reported),
                None => {
                    let names = self.struct_field_names(t);
                    let what = format!("struct {}", self.types.display(t));
                    Err(self.unknown_field(&what, &names, name, nspan))
                }
            },
            Val::Ct(Value::Type(t)) => {
                if let Some(def) = self.types.enum_def(t) {
                    if let Some((_, v)) = def.members.iter().find(|(n, _)| n == name) {
                        return Ok(Val::Ct(Value::Enum(t, *v)));
                    }
                    let names: Vec<String> = def.members.iter().map(|(n, _)| n.clone()).collect();
                    let dname = self.types.display(t);
                    let msg = format!("enum {dname} has no member `{name}`");
                    let prefix = format!("{dname}.");
                    let mut d = unknown_member(msg, nspan, "unknown member", name, &names, &prefix);
                    if d.help.is_none() {
                        d = d.with_note(format!("its members are: {}", names.join(", ")));
                    }
                    return Err(self.report(d));
                }
                Err(
                    self.err_ty(codes::UNKNOWN_MEMBER, t, nspan, "unknown member", |d| {
                        format!("type {d} has no member `{name}`")
                    }),
                )
            }
            other => {
                let p =
                    self.field_place_in(env, FieldBase::Val(other), bspan, name, nspan, span)?;
                self.read_place(env, p, span)
            }
        }
    }

    /// The place of `base.name` where `base` is a place expression.
    pub(crate) fn field_place(
        &mut self,
        env: &mut Env,
        base: ExprId,
        name: &str,
        nspan: Span,
        span: Span,
    ) -> R<Place> {
        let bspan = self.span(env, base);
        let b = if self.is_place_expr(env, base) {
            FieldBase::Place(self.place(env, base)?)
        } else {
            FieldBase::Val(self.expr(env, base)?)
        };
        self.field_place_in(env, b, bspan, name, nspan, span)
    }

    /// The place of field `name` of a struct place or value (through one pointer).
    pub(crate) fn field_place_in(
        &mut self,
        env: &mut Env,
        b: FieldBase,
        bspan: Span,
        name: &str,
        nspan: Span,
        span: Span,
    ) -> R<Place> {
        let place = match b {
            FieldBase::Place(p) => p,
            FieldBase::Val(v) => match v {
                Val::Rt { reg, ty } if matches!(self.types.get(ty), Type::Struct(_)) => {
                    Place::mem(MemBase::Reg(reg), ty, false)
                }
                Val::Rt { ty, .. }
                | Val::Ct(Value::GlobalPtr { ty, .. })
                | Val::Ct(Value::AbsPtr { ty, .. })
                    if matches!(self.types.get(ty), Type::Ptr { elem, .. } if matches!(self.types.get(*elem), Type::Struct(_))) =>
                {
                    let Type::Ptr { elem, is_const } = self.types.get(ty).clone() else {
                        return Err(Reported);
                    };
                    let base = self.ptr_base(env, v, bspan)?;
                    Place::mem(base, elem, !is_const)
                }
                Val::Ct(c @ (Value::Record(..) | Value::Struct(_))) => {
                    // A constant: only reading is possible, and `field_of_val` does that.
                    let t = c.ty(&mut self.types);
                    if self.field_index(t, name).is_none() {
                        let names = self.struct_field_names(t);
                        let what = format!("struct {}", self.types.display(t));
                        return Err(self.unknown_field(&what, &names, name, nspan));
                    }
                    return Err(self.report(
                        Diagnostic::error(
                            codes::ASSIGN_TO_CONST,
                            format!("cannot assign to field `{name}` of a constant"),
                            span,
                            "part of a constant",
                        )
                        .with_help("declare the struct with `var` to change its fields"),
                    ));
                }
                other => {
                    let t = self.val_ty(&other);
                    return Err(self.no_fields(t, bspan));
                }
            },
        };
        match place {
            Place::Mem(m) => match self.types.get(m.ty).clone() {
                Type::Struct(_) => {
                    let Some((i, fty)) = self.field_index(m.ty, name) else {
                        let names = self.struct_field_names(m.ty);
                        let what = format!("struct {}", self.types.display(m.ty));
                        return Err(self.unknown_field(&what, &names, name, nspan));
                    };
                    let offset = self
                        .types
                        .struct_layout(m.ty)
                        .and_then(|l| l.offsets.get(i).copied())
                        .unwrap_or(0) as u32;
                    Ok(Place::Mem(MemPlace {
                        off: m.off + offset,
                        ty: fty,
                        ..m
                    }))
                }
                Type::Ptr { elem, .. } if matches!(self.types.get(elem), Type::Struct(_)) => {
                    let pv = self.read_place(env, Place::Mem(m), bspan)?;
                    self.field_place_in(env, FieldBase::Val(pv), bspan, name, nspan, span)
                }
                _ => Err(self.no_fields(m.ty, bspan)),
            },
            Place::Reg { reg, ty, .. } => {
                if matches!(self.types.get(ty), Type::Ptr { elem, .. } if matches!(self.types.get(*elem), Type::Struct(_)))
                {
                    return self.field_place_in(
                        env,
                        FieldBase::Val(Val::Rt { reg, ty }),
                        bspan,
                        name,
                        nspan,
                        span,
                    );
                }
                Err(self.no_fields(ty, bspan))
            }
            Place::Ct {
                scope,
                idx,
                mut path,
                ty,
            } => match self.field_index(ty, name) {
                Some((i, fty)) => {
                    path.push(i);
                    Ok(Place::Ct {
                        scope,
                        idx,
                        path,
                        ty: fty,
                    })
                }
                None if matches!(self.types.get(ty), Type::Struct(_) | Type::AnonStruct(_)) => {
                    let names = self.struct_field_names(ty);
                    let what = format!("struct {}", self.types.display(ty));
                    Err(self.unknown_field(&what, &names, name, nspan))
                }
                None => Err(self.no_fields(ty, bspan)),
            },
        }
    }

    /// `.{ ... }` without a known type: a comptime anonymous struct or tuple.
    pub(crate) fn anon_init(&mut self, env: &mut Env, list: &InitList, _span: Span) -> R<Val> {
        let mut fields = Vec::new();
        let n = match list {
            InitList::Fields(fs) => fs.len(),
            InitList::Elems(es) => es.len(),
        };
        fields.reserve_exact(n);
        for i in 0..n {
            let (name, nspan, e) = match list {
                InitList::Fields(fs) => match fs.get(i) {
                    Some(f) => (f.name.name, Some(f.name.span), f.value),
                    None => break,
                },
                InitList::Elems(es) => match es.get(i) {
                    Some(e) => (tuple_field(i), None, *e),
                    None => break,
                },
            };
            if let Some(ns) = nspan
                && fields.iter().any(|(n, _): &(Symbol, Value)| *n == name)
            {
                return Err(self.err(
                    codes::DUPLICATE_DECL,
                    format!("field `{name}` is given twice"),
                    ns,
                    "repeated",
                ));
            }
            let v = match self.expr(env, e)? {
                Val::Ct(v) => v,
                Val::Rt { .. } => {
                    let s = self.span(env, e);
                    return Err(self.report(
                        Diagnostic::error(codes::NOT_COMPTIME, "an anonymous struct literal must be known at comptime", s, "this is only known at runtime")
                            .with_help("give the literal a struct type, e.g. `S{ ... }`, or assign it to a variable of a struct type"),
                    ));
                }
            };
            fields.push((name, v));
        }
        Ok(Val::Ct(Value::Struct(Rc::new(fields))))
    }

    /// `T{ ... }`.
    pub(crate) fn typed_init(
        &mut self,
        env: &mut Env,
        ty: ExprId,
        init: &InitList,
        span: Span,
    ) -> R<Val> {
        let t = self.eval_type(env, ty)?;
        self.init_list(env, t, init, span)
    }

    /// An initialiser list of a known struct or array type. Comptime-known elements give
    /// a comptime value; otherwise the value is built in a frame temporary.
    pub(crate) fn init_list(
        &mut self,
        env: &mut Env,
        t: TypeId,
        init: &InitList,
        span: Span,
    ) -> R<Val> {
        match (self.types.get(t).clone(), init) {
            (Type::Array { elem, dims }, InitList::Elems(es)) => {
                let n: u64 = dims.iter().product();
                if es.len() as u64 != n {
                    let d = self.types.display(t);
                    let mut dg = Diagnostic::error(
                        codes::TYPE_MISMATCH,
                        format!("expected {n} elements, found {}", es.len()),
                        span,
                        format!("{d} has {n} elements"),
                    );
                    if dims.len() > 1 {
                        dg = dg.with_note(
                            "a multi-dimensional array literal lists every element, row by row",
                        );
                    }
                    return Err(self.report(dg));
                }
                let mut vals = Vec::new();
                for e in es {
                    let v = self.expr_hint(env, *e, Some(elem))?;
                    let s = self.span(env, *e);
                    vals.push((self.coerce(env, v, elem, s)?, s));
                }
                if let Some(out) = all_ct(&vals) {
                    return Ok(Val::Ct(Value::Array(t, Rc::new(out))));
                }
                let esize = self.types.size_of(elem).unwrap_or(0) as u32;
                self.build_temp(
                    env,
                    t,
                    span,
                    vals.into_iter()
                        .enumerate()
                        .map(|(i, (v, s))| (i as u32 * esize, elem, v, s))
                        .collect(),
                )
            }
            (Type::Array { dims, .. }, InitList::Fields(fs))
                if fs.is_empty() && dims.iter().product::<u64>() == 0 =>
            {
                Ok(Val::Ct(Value::Array(t, Rc::new(Vec::new()))))
            }
            (Type::Struct(_), InitList::Fields(fs)) => {
                let Some(def) = self.types.struct_def(t).cloned() else {
                    return Err(Reported);
                };
                let mut given: Vec<Option<(Val, Span)>> = vec![None; def.fields.len()];
                let mut given_at: Vec<Option<Span>> = vec![None; def.fields.len()];
                for f in fs {
                    let Some((i, fty)) = self.field_index(t, &f.name.name) else {
                        let names = self.struct_field_names(t);
                        let what = format!("struct {}", self.types.display(t));
                        return Err(self.unknown_field(&what, &names, &f.name.name, f.name.span));
                    };
                    if let Some(prev) = given_at[i] {
                        return Err(self.report(Diagnostic::twice(
                            codes::DUPLICATE_DECL,
                            format!("field `{}`", f.name.name),
                            "given",
                            f.name.span,
                            prev,
                        )));
                    }
                    let v = self.expr_hint(env, f.value, Some(fty))?;
                    let s = self.span(env, f.value);
                    let v = self.coerce(env, v, fty, s)?;
                    given[i] = Some((v, s));
                    given_at[i] = Some(f.name.span);
                }
                let mut missing = Vec::new();
                let mut vals = Vec::new();
                for (i, g) in given.into_iter().enumerate() {
                    match (g, &def.defaults[i]) {
                        (Some(v), _) => vals.push(v),
                        (None, Some(d)) => vals.push((Val::Ct(d.clone()), span)),
                        (None, None) => missing.push(def.fields[i].0.clone()),
                    }
                }
                if !missing.is_empty() {
                    return Err(self.missing_fields(t, &missing, span));
                }
                if let Some(out) = all_ct(&vals) {
                    return Ok(Val::Ct(Value::Record(t, Rc::new(out))));
                }
                let offsets = self
                    .types
                    .struct_layout(t)
                    .map(|l| l.offsets)
                    .unwrap_or_default();
                let items = vals
                    .into_iter()
                    .enumerate()
                    .map(|(i, (v, s))| {
                        (
                            offsets.get(i).copied().unwrap_or(0) as u32,
                            def.fields[i].1,
                            v,
                            s,
                        )
                    })
                    .collect();
                self.build_temp(env, t, span, items)
            }
            _ => {
                let d = self.types.display(t);
                let help = match self.types.get(t) {
                    Type::Struct(_) => {
                        "initialise a struct with named fields: `S{ .a = 1, .b = 2 }`"
                    }
                    Type::Array { .. } => "list the elements: `[3]i16{ 1, 2, 3 }`",
                    _ => "only struct and array types have initialiser lists",
                };
                Err(self.report(
                    Diagnostic::error(
                        codes::TYPE_MISMATCH,
                        format!("cannot initialise {d} with this list"),
                        span,
                        "here",
                    )
                    .with_help(help),
                ))
            }
        }
    }

    fn missing_fields(&mut self, t: TypeId, missing: &[String], span: Span) -> Reported {
        let d = self.types.display(t);
        let list: Vec<String> = missing.iter().map(|m| format!("`{m}`")).collect();
        let (msg, help) = if missing.len() == 1 {
            (
                format!(
                    "missing field {} in a literal of struct {d}",
                    list.join(", ")
                ),
                format!("add `.{} = ...`", missing[0]),
            )
        } else {
            (
                format!(
                    "missing fields {} in a literal of struct {d}",
                    list.join(", ")
                ),
                "give every field without a default a value".to_string(),
            )
        };
        self.report(
            Diagnostic::error(codes::MISSING_FIELD, msg, span, "not every field is set")
                .with_help(help),
        )
    }

    /// A runtime aggregate built in a fresh frame slot from (offset, type, value) parts.
    fn build_temp(
        &mut self,
        env: &mut Env,
        t: TypeId,
        span: Span,
        items: Vec<(u32, TypeId, Val, Span)>,
    ) -> R<Val> {
        if env.comptime {
            let s = items
                .iter()
                .find(|(_, _, v, _)| matches!(v, Val::Rt { .. }))
                .map_or(span, |i| i.3);
            return Err(self.not_comptime(s));
        }
        let size = self.types.size_of(t).unwrap_or(0) as u32;
        let align = self.types.align_of(t).unwrap_or(1) as u32;
        let off = self.fb(env).frame_slot(size, align);
        for (o, ty, v, s) in items {
            let p = Place::Mem(MemPlace {
                off: o,
                ..MemPlace::at(MemBase::Frame(off), ty, true)
            });
            self.write_place(env, p, v, s, s)?;
        }
        let dst = self.fb(env).reg();
        self.fb(env).emit(Inst::FrameAddr { dst, off });
        Ok(Val::Rt { reg: dst, ty: t })
    }

    /// Coerces an anonymous struct value to the named struct type `ty` (comptime).
    pub(crate) fn anon_to_record(
        &mut self,
        fields: Rc<Vec<(Symbol, Value)>>,
        ty: TypeId,
        span: Span,
    ) -> R<Value> {
        let Some(def) = self.types.struct_def(ty).cloned() else {
            return Err(Reported);
        };
        let mut out: Vec<Option<Value>> = vec![None; def.fields.len()];
        for (n, v) in fields.iter() {
            let Some((i, fty)) = self.field_index(ty, n) else {
                let names = self.struct_field_names(ty);
                let what = format!("struct {}", self.types.display(ty));
                return Err(self.unknown_field(&what, &names, n, span));
            };
            out[i] = Some(self.coerce_value(v.clone(), fty, span)?);
        }
        let mut missing = Vec::new();
        let mut vals = Vec::new();
        for (i, v) in out.into_iter().enumerate() {
            match (v, &def.defaults[i]) {
                (Some(v), _) => vals.push(v),
                (None, Some(d)) => vals.push(d.clone()),
                (None, None) => missing.push(def.fields[i].0.clone()),
            }
        }
        if !missing.is_empty() {
            return Err(self.missing_fields(ty, &missing, span));
        }
        Ok(Value::Record(ty, Rc::new(vals)))
    }

    /// A read-only global holding comptime value `v` of type `ty` (one per distinct
    /// value and program).
    pub(crate) fn const_global(&mut self, v: &Value, ty: TypeId, span: Span) -> R<GlobalId> {
        // Keyed in `dsd_consts`, which the driver clears for every program.
        let key = crate::sema::ConstKey::Value(ty, v.canonical(&self.types));
        if let Some(&g) = self.dsd_consts.get(&key) {
            return Ok(g);
        }
        let (Some(size), Some(align)) = (self.types.size_of(ty), self.types.align_of(ty)) else {
            return Err(self.comptime_only(ty, span, "used in runtime code here"));
        };
        let mut bytes = vec![0u8; size as usize];
        let mut relocs = Vec::new();
        self.value_bytes(v, ty, &mut bytes, 0, &mut relocs, span)?;
        let n = self.dsd_consts.len();
        let p = self.pe_prog(
            "constants in memory exist only in PE programs",
            span,
            "used here",
        )?;
        let g = p.globals.push(crate::ir::Global {
            name: format!("<const{n}>"),
            size: size as u32,
            align: align as u32,
            init: bytes,
            relocs,
            span,
            place: crate::ir::GlobalPlace::Auto,
        });
        self.global_types.insert(g, ty);
        self.dsd_consts.insert(key, g);
        Ok(g)
    }

    /// The address of a read-only copy of a comptime aggregate.
    pub(crate) fn const_addr(&mut self, env: &mut Env, v: &Value, span: Span) -> R<VReg> {
        let ty = v.ty(&mut self.types);
        self.runtime_only(env, span)?;
        let g = self.const_global(v, ty, span)?;
        Ok(self.global_addr(env, g, 0))
    }
}

/// The name of field `i` of a tuple (`0`, `1`, ...), interned once per index.
pub(crate) fn tuple_field(i: usize) -> Symbol {
    thread_local! {
        static NAMES: std::cell::RefCell<Vec<Symbol>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    NAMES.with(|names| {
        let mut names = names.borrow_mut();
        while names.len() <= i {
            let n = names.len();
            names.push(Symbol::intern(&n.to_string()));
        }
        names[i]
    })
}

/// The values of `vals` when every one is known at comptime.
fn all_ct(vals: &[(Val, Span)]) -> Option<Vec<Value>> {
    let ct = |(v, _): &(Val, Span)| match v {
        Val::Ct(c) => Some(c.clone()),
        Val::Rt { .. } => None,
    };
    vals.iter().map(ct).collect()
}

/// UNKNOWN_MEMBER `msg` at `span`, labelled `label`, for the member `name`, with the help
/// "did you mean `{prefix}{s}`?" when one of `names` is close to it.
pub(super) fn unknown_member(
    msg: String,
    span: Span,
    label: &str,
    name: &str,
    names: &[String],
    prefix: &str,
) -> Diagnostic {
    Diagnostic::error(codes::UNKNOWN_MEMBER, msg, span, label).with_suggestion(
        name,
        names.iter().map(String::as_str),
        |s| format!("did you mean `{prefix}{s}`?"),
    )
}
