//! `@get_dsd` and the builtins that derive descriptors from descriptors
//! (`@set_dsd_base_addr`, `@increment_dsd_offset`, `@set_dsd_length`, `@set_dsd_stride`)
//! or build FIFOs (`@allocate_fifo`).

use super::{DsdBase, DsdVal};
use crate::diag::{Diagnostic, codes};
use crate::ir::{Inst, VReg};
use crate::sema::eval::{Env, Val};
use crate::sema::types::Type;
use crate::sema::value::Value;
use crate::sema::{R, Reported, Sema};
use crate::source::Span;
use crate::syntax::ast::{ExprId, ExprKind, InitList};
use csl_arch::dsd::{DESC_BYTES, DsdField, DsdKind, flags};
use std::rc::Rc;

impl Sema {
    /// `@get_dsd(kind, .{ ... })`.
    pub fn b_get_dsd(&mut self, env: &mut Env, args: &[ExprId], span: Span) -> R<Val> {
        let kind_ty = self.eval_type(env, args[0])?;
        let kspan = self.span(env, args[0]);
        let kind = match self.types.get(kind_ty) {
            Type::Mem1dDsd => DsdKind::Mem1d,
            Type::Mem4dDsd => DsdKind::Mem4d,
            Type::FabinDsd => DsdKind::FabIn,
            Type::FaboutDsd => DsdKind::FabOut,
            _ => {
                return Err(self.arg_ty_err(
                    kind_ty,
                    kspan,
                    "expected mem1d_dsd, mem4d_dsd, fabin_dsd or fabout_dsd",
                    |d| format!("@get_dsd cannot build a {d}"),
                ));
            }
        };
        let ast = env.ast.clone();
        let ExprKind::AnonInit(InitList::Fields(fields)) = &ast.exprs[args[1]].kind else {
            let s = self.span(env, args[1]);
            return Err(self.err(
                codes::BUILTIN_ARGS,
                "@get_dsd needs a struct of properties",
                s,
                "expected `.{ .name = value, ... }`",
            ));
        };
        let mut d = DsdVal {
            ty: kind_ty,
            kind,
            flags: 0,
            queue: 0,
            color: 0,
            base: DsdBase::None,
            elem_bytes: 4,
            length: 0,
            stride: 1,
            extents: Vec::new(),
            strides: Vec::new(),
            fifo_tasks: (0xff, 0xff),
            zero: 0,
        };
        // Runtime-valued properties, applied after the comptime descriptor is built.
        let mut rt_length: Option<(Val, Span)> = None;
        let mut rt_base: Option<(Val, Span)> = None;
        let mut offset: i128 = 0;
        let mut explicit_strides: Option<Vec<i128>> = None;
        let mut explicit_extents: Option<Vec<i128>> = None;
        for f in fields {
            let fname = f.name.name.as_str();
            let fspan = f.name.span;
            match (kind, fname) {
                (DsdKind::Mem1d | DsdKind::Mem4d, "tensor_access") => {
                    self.dsd_tensor_access(env, f.value, &mut d, span)?;
                }
                (DsdKind::Mem1d | DsdKind::Mem4d, "base_address") => {
                    let v = self.expr(env, f.value)?;
                    let vspan = self.span(env, f.value);
                    match v {
                        Val::Ct(Value::GlobalPtr {
                            global,
                            offset: o,
                            ty,
                        }) => {
                            d.elem_bytes = self.pointee_elem_bytes(ty);
                            d.base = DsdBase::Global(global, i64::from(o));
                        }
                        Val::Ct(Value::AbsPtr { addr, ty }) => {
                            d.elem_bytes = self.pointee_elem_bytes(ty);
                            d.base = DsdBase::Abs(addr);
                        }
                        Val::Rt { ty, .. }
                            if matches!(
                                self.types.get(ty),
                                Type::Ptr { .. } | Type::ManyPtr { .. }
                            ) =>
                        {
                            d.elem_bytes = self.pointee_elem_bytes(ty);
                            rt_base = Some((v, vspan));
                        }
                        other => {
                            let t = self.val_ty(&other);
                            let ds = self.types.display(t);
                            return Err(self.err(
                                codes::BUILTIN_ARGS,
                                "base_address must be a pointer",
                                vspan,
                                format!("this has type {ds}; write `&array`"),
                            ));
                        }
                    }
                }
                (DsdKind::Mem1d | DsdKind::FabIn | DsdKind::FabOut, "extent") => {
                    let v = self.expr(env, f.value)?;
                    let vspan = self.span(env, f.value);
                    match v {
                        Val::Ct(Value::Int(n, _)) => {
                            d.length = self.u16_prop(n, vspan, "extent")?
                        }
                        Val::Ct(_) => {
                            return Err(self.err(
                                codes::BUILTIN_ARGS,
                                "extent must be an integer",
                                vspan,
                                "not an integer",
                            ));
                        }
                        rt => rt_length = Some((rt, vspan)),
                    }
                }
                (DsdKind::Mem4d, "extent") => explicit_extents = Some(self.int_list(env, f.value)?),
                (DsdKind::Mem4d, "stride") => explicit_strides = Some(self.int_list(env, f.value)?),
                (DsdKind::Mem1d, "stride") => {
                    let n = self.eval_int(env, f.value)?;
                    let vspan = self.span(env, f.value);
                    d.stride = i16::try_from(n).map_err(|_| {
                        self.err(
                            codes::OUT_OF_RANGE,
                            format!("stride {n} does not fit in i16"),
                            vspan,
                            "out of range",
                        )
                    })?;
                }
                (DsdKind::Mem1d | DsdKind::Mem4d, "offset") => {
                    offset = self.eval_int(env, f.value)?
                }
                (DsdKind::Mem1d | DsdKind::Mem4d | DsdKind::FabOut, "wavelet_index_offset") => {
                    if self.bool_prop(env, f.value)? {
                        d.flags |= flags::WAVELET_INDEX_OFFSET;
                    }
                }
                (DsdKind::FabIn | DsdKind::FabOut, "fabric_color") => {
                    match self.eval_comptime(env, f.value)? {
                        Value::Color(c) => {
                            d.color = c;
                            if let Some(p) = self.prog.as_mut() {
                                let bit = 1u32.checked_shl(u32::from(c)).unwrap_or(0);
                                if kind == DsdKind::FabIn {
                                    p.fabric_in |= bit;
                                } else {
                                    p.fabric_out |= bit;
                                }
                            }
                        }
                        _ => {
                            let s = self.span(env, f.value);
                            return Err(self.err(
                                codes::TYPE_MISMATCH,
                                "fabric_color must be a color",
                                s,
                                "expected `@get_color(n)` or a color param",
                            ));
                        }
                    }
                }
                (DsdKind::FabIn, "input_queue") | (DsdKind::FabOut, "output_queue") => {
                    match self.eval_comptime(env, f.value)? {
                        Value::Queue(input, q) if input == (kind == DsdKind::FabIn) => d.queue = q,
                        _ => {
                            let s = self.span(env, f.value);
                            let want = if kind == DsdKind::FabIn {
                                "an input_queue"
                            } else {
                                "an output_queue"
                            };
                            return Err(self.err(
                                codes::TYPE_MISMATCH,
                                format!("{fname} must be {want}"),
                                s,
                                "wrong kind of queue",
                            ));
                        }
                    }
                }
                (DsdKind::FabOut, "control") => {
                    if self.bool_prop(env, f.value)? {
                        d.flags |= flags::CONTROL;
                    }
                }
                (DsdKind::FabOut, "advance_switch") => {
                    if self.bool_prop(env, f.value)? {
                        d.flags |= flags::ADVANCE_SWITCH;
                    }
                }
                (DsdKind::FabIn | DsdKind::FabOut, "control_transform") => {
                    if self.bool_prop(env, f.value)? {
                        d.flags |= flags::CONTROL_TRANSFORM;
                    }
                }
                (DsdKind::FabIn | DsdKind::FabOut, "simd_mode") => {
                    d.flags |= self.simd_mode(env, f.value)?;
                }
                (DsdKind::FabOut, "zero") => {
                    let v = self.eval_comptime(env, f.value)?;
                    let fs = match v {
                        Value::Struct(fs) => fs,
                        _ => Default::default(),
                    };
                    let mut ok = !fs.is_empty();
                    for (n, v) in fs.iter() {
                        let bit = match n.as_str() {
                            "first_source" => csl_arch::dsd::fab_zero::FIRST,
                            "second_source" => csl_arch::dsd::fab_zero::SECOND,
                            _ => {
                                ok = false;
                                0
                            }
                        };
                        if matches!(v, Value::Bool(true)) {
                            d.zero |= bit;
                        }
                    }
                    if !ok {
                        let s = self.span(env, f.value);
                        return Err(self.report(
                            Diagnostic::error(
                                codes::BUILTIN_ARGS,
                                "`.zero` must name `first_source` or `second_source`",
                                s,
                                "not a source of the operation",
                            )
                            .with_help(
                                "`.zero = .{ .first_source = true }` clears the operation's first memory source as its elements are sent",
                            ),
                        ));
                    }
                }
                (DsdKind::FabIn, "priority") => {
                    self.eval_comptime(env, f.value)?;
                }
                _ => {
                    let kd = self.types.display(kind_ty);
                    return Err(self.report(
                        Diagnostic::error(
                            codes::BUILTIN_ARGS,
                            format!("`{fname}` is not a property of {kd}"),
                            fspan,
                            "unknown property",
                        )
                        .with_help(known_props(kind)),
                    ));
                }
            }
        }
        // Fold offsets and explicit mem4d shapes.
        if offset != 0 {
            if let DsdBase::Global(_, o) = &mut d.base {
                *o += (offset * i128::from(d.elem_bytes)) as i64;
            } else if let DsdBase::Abs(a) = &mut d.base {
                *a = (i128::from(*a) + offset * i128::from(d.elem_bytes)) as u32;
            }
        }
        if kind == DsdKind::Mem4d && d.extents.is_empty() {
            let (Some(ext), Some(st)) = (explicit_extents, explicit_strides.or(Some(Vec::new())))
            else {
                return Err(self.err(
                    codes::BUILTIN_ARGS,
                    "a mem4d_dsd needs `tensor_access` or `extent`",
                    span,
                    "here",
                ));
            };
            // `extent` is listed outermost first, `stride` innermost first.
            d.extents = ext.iter().rev().map(|&e| e as u16).collect();
            d.strides = if st.is_empty() {
                vec![1; ext.len()]
            } else {
                st.iter().map(|&s| s as i16).collect()
            };
        }
        if matches!(kind, DsdKind::Mem1d | DsdKind::Mem4d)
            && d.base == DsdBase::None
            && rt_base.is_none()
        {
            return Err(self.err(
                codes::BUILTIN_ARGS,
                "a memory DSD needs `base_address` or `tensor_access`",
                span,
                "here",
            ));
        }
        if rt_base.is_none() && rt_length.is_none() {
            return Ok(Val::Ct(Value::Dsd(Rc::new(d))));
        }
        // Some properties are runtime values: build the descriptor in the frame.
        if env.comptime {
            let s = rt_length
                .as_ref()
                .or(rt_base.as_ref())
                .map_or(span, |x| x.1);
            return Err(self.not_comptime(s));
        }
        let ty = d.ty;
        let addr = self.dsd_temp_copy(env, Val::Ct(Value::Dsd(Rc::new(d))), span, true)?;
        if let Some((v, s)) = rt_base {
            let r = self.materialize(env, v, s)?;
            self.fb(env).emit(Inst::DsdSet {
                field: DsdField::Base,
                desc: addr,
                val: r,
            });
        }
        if let Some((v, s)) = rt_length {
            let u16t = self.types.common.u16;
            let v = self.coerce_int_to(env, v, u16t, s)?;
            let r = self.materialize(env, v, s)?;
            self.fb(env).emit(Inst::DsdSet {
                field: DsdField::Length,
                desc: addr,
                val: r,
            });
        }
        Ok(Val::Rt { reg: addr, ty })
    }

    pub(super) fn coerce_int_to(
        &mut self,
        env: &mut Env,
        v: Val,
        ty: crate::sema::types::TypeId,
        s: Span,
    ) -> R<Val> {
        let vt = self.val_ty(&v);
        if vt == ty || matches!(v, Val::Ct(_)) {
            return self.coerce(env, v, ty, s);
        }
        let (Some(from), Some(to)) = (self.types.num_ty(vt), self.types.num_ty(ty)) else {
            return Err(self.mismatch(ty, vt, s));
        };
        if !self.types.is_int(vt) {
            return Err(self.mismatch(ty, vt, s));
        }
        let Val::Rt { reg, .. } = v else {
            return Err(Reported);
        };
        let dst = self.emit_conv(env, reg, from, to);
        Ok(Val::Rt { reg: dst, ty })
    }

    /// Returns the address of a descriptor that the caller may change in place, holding
    /// `v`'s value:
    ///
    /// * a fresh temporary (the result of another DSD builtin, used nowhere else) is
    ///   reused as it is, unless it is a call site's global copy and the change is relative;
    /// * a constant descriptor that the caller only changes with absolute field writes
    ///   (`absolute`) gets a global copy of its own for this call site, initialised at
    ///   load time: writing the same fields again on every execution gives the same
    ///   descriptor, so no copy is needed at run time (not for FIFOs, whose descriptor
    ///   holds state, nor with `.save_address`, which writes the descriptor back);
    /// * anything else is copied into a new frame slot.
    pub(super) fn dsd_temp_copy(
        &mut self,
        env: &mut Env,
        v: Val,
        span: Span,
        absolute: bool,
    ) -> R<VReg> {
        if let Val::Rt { reg, .. } = v
            && let Some(slot) = self.fb(env).fresh.get(&reg).copied()
            && (slot.is_some() || absolute)
        {
            return Ok(reg);
        }
        if let Val::Ct(Value::Dsd(d)) = &v
            && absolute
            && d.kind != DsdKind::Fifo
            && d.flags & flags::SAVE_ADDRESS == 0
            && !env.comptime
        {
            let g = self.dsd_global(d, span, false)?;
            let dst = self.global_addr(env, g, 0);
            self.fb(env).fresh.insert(dst, None);
            return Ok(dst);
        }
        let src = self.materialize(env, v, span)?;
        let off = self.fb(env).frame_slot(DESC_BYTES, 2);
        let dst = self.fb(env).reg();
        self.fb(env).emit(Inst::FrameAddr { dst, off });
        self.fb(env).emit(Inst::Copy {
            dst,
            src,
            bytes: DESC_BYTES as u16,
        });
        self.fb(env).fresh.insert(dst, Some(off));
        Ok(dst)
    }

    pub(super) fn u16_prop(&mut self, n: i128, span: Span, what: &str) -> R<u16> {
        u16::try_from(n).map_err(|_| {
            self.err(
                codes::OUT_OF_RANGE,
                format!("{what} {n} does not fit in u16"),
                span,
                "out of range",
            )
        })
    }

    pub(super) fn int_list(&mut self, env: &mut Env, e: ExprId) -> R<Vec<i128>> {
        match self.eval_comptime(env, e)? {
            Value::Int(i, _) => Ok(vec![i]),
            Value::Struct(fs) => fs
                .iter()
                .map(|(_, v)| match v {
                    Value::Int(i, _) => Ok(*i),
                    _ => {
                        let s = self.span(env, e);
                        Err(self.err(codes::TYPE_MISMATCH, "expected integers", s, "here"))
                    }
                })
                .collect(),
            _ => {
                let s = self.span(env, e);
                Err(self.err(
                    codes::TYPE_MISMATCH,
                    "expected a tuple of integers",
                    s,
                    "here",
                ))
            }
        }
    }

    pub(super) fn pointee_elem_bytes(&self, ptr_ty: crate::sema::types::TypeId) -> u32 {
        let elem = match self.types.get(ptr_ty) {
            Type::Ptr { elem, .. } | Type::ManyPtr { elem, .. } => *elem,
            _ => return 4,
        };
        let elem = match self.types.get(elem) {
            Type::Array { elem, .. } => *elem,
            _ => elem,
        };
        self.types.size_of(elem).map_or(4, |s| s as u32)
    }

    /// `.tensor_access = |i, j|{M, N} -> A[...]` (or a constant holding such a value):
    /// fills base, length/stride or extents/strides from the comptime struct the tensor
    /// access evaluates to (see `sema/tensor.rs`).
    pub(super) fn dsd_tensor_access(
        &mut self,
        env: &mut Env,
        e: ExprId,
        d: &mut DsdVal,
        span: Span,
    ) -> R<()> {
        let espan = self.span(env, e);
        // The array's address is a link-time constant: allow taking it from comptime code.
        let saved = env.ctx;
        if env.ctx == crate::sema::Ctx::Comptime {
            env.ctx = crate::sema::Ctx::TopComptime;
        }
        let v = self.eval_comptime(env, e);
        env.ctx = saved;
        let v = v?;
        let get = |name: &str| match &v {
            Value::Struct(f) => f.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()),
            _ => None,
        };
        let ints = |v: Option<Value>| -> Option<Vec<i128>> {
            match v? {
                Value::Struct(f) => f
                    .iter()
                    .map(|(_, v)| {
                        if let Value::Int(i, _) = v {
                            Some(*i)
                        } else {
                            None
                        }
                    })
                    .collect(),
                Value::Int(i, _) => Some(vec![i]),
                _ => None,
            }
        };
        let (
            Some(Value::GlobalPtr {
                global,
                offset: goff,
                ty,
            }),
            Some(Value::Int(off, _)),
            Some(extents),
            Some(strides),
        ) = (
            get("base_address"),
            get("offset"),
            ints(get("extent")),
            ints(get("stride")),
        )
        else {
            return Err(self.err(
                codes::BUILTIN_ARGS,
                "tensor_access must be `|i|{n} -> array[expression]` over a global array",
                espan,
                "not a tensor access of a global array",
            ));
        };
        let esize = self.pointee_elem_bytes(ty);
        d.elem_bytes = esize;
        d.base = DsdBase::Global(global, i64::from(goff) + (off as i64) * i64::from(esize));
        match d.kind {
            DsdKind::Mem1d => {
                let ([n], [s]) = (extents.as_slice(), strides.as_slice()) else {
                    return Err(self.err(
                        codes::BUILTIN_ARGS,
                        "a mem1d_dsd tensor access has one index variable",
                        span,
                        "use mem4d_dsd for more",
                    ));
                };
                d.length = self.u16_prop(*n, espan, "extent")?;
                d.stride = i16::try_from(*s).map_err(|_| {
                    self.err(
                        codes::OUT_OF_RANGE,
                        "stride does not fit in i16",
                        espan,
                        "out of range",
                    )
                })?;
            }
            _ => {
                // The struct lists extents outermost first and strides innermost first; the
                // descriptor wants both innermost first.
                d.extents = extents.iter().rev().map(|&x| x as u16).collect();
                d.strides = strides.iter().map(|&x| x as i16).collect();
            }
        }
        Ok(())
    }

    pub(super) fn not_an_array(&mut self, ty: crate::sema::types::TypeId, s: Span) -> Reported {
        let d = self.types.display(ty);
        self.err(
            codes::NOT_INDEXABLE,
            format!("cannot index a value of type {d}"),
            s,
            "not an array",
        )
    }

    /// `@set_dsd_base_addr`, `@increment_dsd_offset`, `@set_dsd_length`, `@set_dsd_stride`.
    pub fn b_dsd_modify(&mut self, env: &mut Env, n: &str, args: &[ExprId], _span: Span) -> R<Val> {
        let (dv, dty) = self.expr_typed(env, args[0])?;
        let dspan = self.span(env, args[0]);
        if !self.types.get(dty).is_dsd() {
            return Err(self.err_with_type(
                codes::TYPE_MISMATCH,
                format!("@{n} needs a DSD"),
                dspan,
                dty,
            ));
        }
        // Comptime descriptor and comptime argument: a new comptime descriptor.
        let arg = self.expr(env, args[1])?;
        let aspan = self.span(env, args[1]);
        let scale = if n == "increment_dsd_offset" {
            let t = self.eval_type(env, args[2])?;
            self.types.size_of(t).unwrap_or(2) as i128
        } else {
            1
        };
        if let (Val::Ct(Value::Dsd(d)), true) = (&dv, matches!(arg, Val::Ct(_))) {
            let mut nd = (**d).clone();
            match (n, &arg) {
                ("set_dsd_base_addr", Val::Ct(Value::GlobalPtr { global, offset, ty })) => {
                    nd.elem_bytes = self.pointee_elem_bytes(*ty);
                    nd.base = DsdBase::Global(*global, i64::from(*offset));
                }
                ("set_dsd_base_addr", Val::Ct(Value::AbsPtr { addr, ty })) => {
                    nd.elem_bytes = self.pointee_elem_bytes(*ty);
                    nd.base = DsdBase::Abs(*addr);
                }
                ("increment_dsd_offset", Val::Ct(Value::Int(k, _))) => match &mut nd.base {
                    DsdBase::Global(_, o) => *o += (k * scale) as i64,
                    DsdBase::Abs(a) => *a = (i128::from(*a) + k * scale) as u32,
                    DsdBase::None => {
                        return Err(self.err(
                            codes::BUILTIN_ARGS,
                            "a fabric DSD has no offset",
                            dspan,
                            "not a memory DSD",
                        ));
                    }
                },
                ("set_dsd_length", Val::Ct(Value::Int(k, _))) => {
                    nd.length = self.u16_prop(*k, aspan, "length")?
                }
                ("set_dsd_stride", Val::Ct(Value::Int(k, _))) => {
                    nd.stride = i16::try_from(*k).map_err(|_| {
                        self.err(
                            codes::OUT_OF_RANGE,
                            "stride does not fit in i16",
                            aspan,
                            "out of range",
                        )
                    })?
                }
                _ => {
                    return Err(self.err(
                        codes::TYPE_MISMATCH,
                        format!("wrong argument for @{n}"),
                        aspan,
                        "here",
                    ));
                }
            }
            return Ok(Val::Ct(Value::Dsd(Rc::new(nd))));
        }
        self.runtime_only(env, aspan)?;
        let addr = self.dsd_temp_copy(env, dv, dspan, n != "increment_dsd_offset")?;
        let (field, val) = match n {
            "set_dsd_base_addr" => (DsdField::Base, arg),
            "increment_dsd_offset" => {
                let i16t = self.types.common.i16;
                let v = self.coerce_int_to(env, arg, i16t, aspan)?;
                let r = self.materialize(env, v, aspan)?;
                let k = self.imm(env, scale as u32);
                let bytes = self.emit_bin(env, csl_arch::BinOp::Mul, csl_arch::NumTy::I16, r, k);
                (
                    DsdField::AddBase,
                    Val::Rt {
                        reg: bytes,
                        ty: i16t,
                    },
                )
            }
            "set_dsd_length" => {
                let u16t = self.types.common.u16;
                (DsdField::Length, self.coerce_int_to(env, arg, u16t, aspan)?)
            }
            _ => {
                let i16t = self.types.common.i16;
                (DsdField::Stride, self.coerce_int_to(env, arg, i16t, aspan)?)
            }
        };
        let r = self.materialize(env, val, aspan)?;
        self.fb(env).emit(Inst::DsdSet {
            field,
            desc: addr,
            val: r,
        });
        Ok(Val::Rt { reg: addr, ty: dty })
    }

    /// `@allocate_fifo(buffer[, config])`.
    pub fn b_allocate_fifo(&mut self, env: &mut Env, args: &[ExprId], span: Span) -> R<Val> {
        let saved = (env.comptime, env.ctx);
        env.comptime = false;
        env.ctx = crate::sema::Ctx::TopComptime;
        let place = self.place(env, args[0]);
        (env.comptime, env.ctx) = saved;
        let bspan = self.span(env, args[0]);
        let (g, off, ty) = match place? {
            crate::sema::eval::Place::Mem(crate::sema::eval::MemPlace {
                base: crate::sema::eval::MemBase::Global(g),
                off,
                dyn_off: None,
                ty,
                ..
            }) => (g, off, ty),
            _ => {
                return Err(self.err(
                    codes::BUILTIN_ARGS,
                    "@allocate_fifo needs a global array",
                    bspan,
                    "not a global array",
                ));
            }
        };
        let Type::Array { elem, dims } = self.types.get(ty).clone() else {
            return Err(self.not_an_array(ty, bspan));
        };
        let n: u64 = dims.iter().product();
        let esize = self.types.size_of(elem).unwrap_or(4) as u32;
        let mut tasks = (0xffu8, 0xffu8);
        if let Some(c) = args.get(1)
            && let Value::Struct(fs) = self.eval_comptime(env, *c)?
        {
            for (name, v) in fs.iter() {
                let id = self.task_id_of_value(v, span)?;
                match name.as_str() {
                    "activate_push" => tasks.0 = id,
                    "activate_pop" => tasks.1 = id,
                    _ => {}
                }
            }
        }
        let fifo_ty = self.types.intern(Type::Fifo);
        Ok(Val::Ct(Value::Dsd(Rc::new(DsdVal {
            ty: fifo_ty,
            kind: DsdKind::Fifo,
            flags: 0,
            queue: 0,
            color: 0,
            base: DsdBase::Global(g, i64::from(off)),
            elem_bytes: esize,
            length: n.min(u64::from(u16::MAX)) as u16,
            stride: 1,
            extents: Vec::new(),
            strides: Vec::new(),
            fifo_tasks: tasks,
            zero: 0,
        }))))
    }
}

pub(super) fn known_props(kind: DsdKind) -> String {
    let p = match kind {
        DsdKind::Mem1d => {
            "base_address, extent, stride, offset, tensor_access, wavelet_index_offset"
        }
        DsdKind::Mem4d => {
            "base_address, extent, stride, offset, tensor_access, wavelet_index_offset"
        }
        DsdKind::FabIn => {
            "fabric_color, extent, input_queue, control_transform, simd_mode, priority"
        }
        DsdKind::FabOut => {
            "fabric_color, extent, output_queue, control, wavelet_index_offset, advance_switch, simd_mode, control_transform"
        }
        DsdKind::Fifo => "",
    };
    format!("its properties are: {p}")
}
