//! DSDs at comptime: [`DsdVal`], the compiler's view of a data structure descriptor, and
//! its encoding into the in-memory layout of [`csl_arch::dsd`].

use super::types::TypeId;
use crate::ir::GlobalId;
use csl_arch::dsd::{DESC_BYTES, DsdKind, field};

/// Where a memory descriptor's base points.
#[derive(Clone, Debug, PartialEq)]
pub enum DsdBase {
    /// Nothing (fabric DSDs).
    None,
    /// A global plus a byte offset.
    Global(GlobalId, i64),
    /// A fixed address.
    Abs(u32),
}

/// A descriptor known at comptime.
#[derive(Clone, Debug, PartialEq)]
pub struct DsdVal {
    /// The CSL type (`mem1d_dsd`, ...).
    pub ty: TypeId,
    /// What it describes.
    pub kind: DsdKind,
    /// [`csl_arch::dsd::flags`] bits.
    pub flags: u8,
    /// Fabric: queue id.
    pub queue: u8,
    /// Fabric: colour id.
    pub color: u8,
    /// Memory: base.
    pub base: DsdBase,
    /// Element size in bytes of the accessed array (2 or 4), for offsets.
    pub elem_bytes: u32,
    /// mem1d / fabric length; FIFO capacity.
    pub length: u16,
    /// mem1d stride in elements.
    pub stride: i16,
    /// mem4d extents, innermost first.
    pub extents: Vec<u16>,
    /// mem4d strides in elements, innermost first.
    pub strides: Vec<i16>,
    /// FIFO: task ids activated on push / pop (`0xff` none).
    pub fifo_tasks: (u8, u8),
    /// Fabout: [`csl_arch::dsd::fab_zero`] bits.
    pub zero: u8,
}

impl DsdVal {
    /// The descriptor's bytes, plus (offset, global, addend) for a base that points into
    /// a global (patched at link time).
    pub fn encode(&self) -> (Vec<u8>, Option<(u32, GlobalId, u32)>) {
        let mut b = vec![0u8; DESC_BYTES as usize];
        let put16 = |b: &mut Vec<u8>, at: u32, v: u16| {
            let at = at as usize;
            b[at..at + 2].copy_from_slice(&v.to_le_bytes());
        };
        b[field::KIND as usize] = self.kind as u8;
        b[field::FLAGS as usize] = self.flags;
        b[field::QUEUE as usize] = self.queue;
        b[field::COLOR as usize] = self.color;
        let mut reloc = None;
        match self.base {
            DsdBase::None => {}
            DsdBase::Abs(a) => put16(&mut b, field::BASE, a as u16),
            DsdBase::Global(g, off) => reloc = Some((field::BASE, g, off.max(0) as u32)),
        }
        put16(&mut b, field::LENGTH, self.length);
        put16(&mut b, field::STRIDE, self.stride as u16);
        b[field::NDIMS as usize] = self.extents.len() as u8;
        b[field::ELEM as usize] = self.elem_bytes as u8;
        for (i, e) in self.extents.iter().take(4).enumerate() {
            put16(&mut b, field::EXTENTS + 2 * i as u32, *e);
        }
        for (i, s) in self.strides.iter().take(4).enumerate() {
            put16(&mut b, field::STRIDES + 2 * i as u32, *s as u16);
        }
        if self.kind == DsdKind::Fifo {
            b[field::FIFO_ACTIVATE_PUSH as usize] = self.fifo_tasks.0;
            b[field::FIFO_ACTIVATE_POP as usize] = self.fifo_tasks.1;
        }
        if self.kind == DsdKind::FabOut {
            b[field::FAB_ZERO as usize] = self.zero;
        }
        (b, reloc)
    }
}

impl DsdVal {
    /// The initial contents of a global holding this descriptor, with the relocation of its
    /// base address if it points into a global.
    fn encode_init(&self) -> (Vec<u8>, Vec<crate::ir::Reloc>) {
        let (bytes, reloc) = self.encode();
        let relocs = reloc
            .map(|(offset, target, addend)| crate::ir::Reloc {
                offset,
                target,
                addend,
            })
            .into_iter()
            .collect();
        (bytes, relocs)
    }
}

impl super::Sema {
    /// The address of a constant global holding descriptor `d` (one global per distinct
    /// descriptor of the program).
    pub fn dsd_const_addr(
        &mut self,
        env: &mut super::eval::Env,
        d: &DsdVal,
        span: crate::source::Span,
    ) -> super::R<crate::ir::VReg> {
        let g = self.dsd_global(d, span, true)?;
        let dst = self.fb(env).reg();
        self.fb(env).emit(crate::ir::Inst::GlobalAddr {
            dst,
            global: g,
            offset: 0,
        });
        Ok(dst)
    }

    /// A global initialised with descriptor `d`: with `shared`, the program's one constant
    /// copy of it; otherwise a new global of its own (a call site's private copy).
    pub(crate) fn dsd_global(
        &mut self,
        d: &DsdVal,
        span: crate::source::Span,
        shared: bool,
    ) -> super::R<crate::ir::GlobalId> {
        let key = format!("{d:?}");
        if shared && let Some(g) = self.dsd_consts.get(&key) {
            return Ok(*g);
        }
        let (bytes, relocs) = d.encode_init();
        let n = self.dsd_consts.len() + self.dsd_site_copies;
        let Some(p) = self.prog.as_mut() else {
            return Err(self.not_comptime(span));
        };
        let g = p.globals.push(crate::ir::Global {
            name: format!("<dsd{n}>"),
            size: DESC_BYTES,
            align: 2,
            init: bytes,
            relocs,
            span,
            place: crate::ir::GlobalPlace::Auto,
        });
        self.global_types.insert(g, d.ty);
        if shared {
            self.dsd_consts.insert(key, g);
        } else {
            self.dsd_site_copies += 1;
        }
        Ok(g)
    }
}

use super::eval::{Env, Val};
use super::types::Type;
use super::value::Value;
use super::{R, Reported, Sema};
use crate::diag::{Diagnostic, codes};
use crate::ir::{Inst, VReg};
use crate::source::Span;
use crate::syntax::ast::{ExprId, ExprKind, InitList};
use csl_arch::dsd::{DsdField, DsdOpcode, Elem, OperandKind, cfg as opcfg, flags};
use std::rc::Rc;

/// A DSD operand after analysis.
/// A setting of an operation's configuration, written in place (`.{ .async = true }`) or
/// taken from a comptime struct (`const props = .{ ... }; @fmovs(dst, src, props)`).
#[derive(Clone)]
enum SettingVal {
    Expr(ExprId),
    Ct(Value, Span),
}

/// A named setting.
struct Setting {
    name: String,
    name_span: Span,
    val: SettingVal,
}

enum Operand {
    Desc(Val),
    Scalar(Val),
    Ptr(Val),
}

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
                let d = self.types.display(kind_ty);
                return Err(self.err(
                    codes::BUILTIN_ARGS,
                    format!("@get_dsd cannot build a {d}"),
                    kspan,
                    "expected mem1d_dsd, mem4d_dsd, fabin_dsd or fabout_dsd",
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
                        Value::Color(c) => d.color = c,
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

    fn coerce_int_to(
        &mut self,
        env: &mut Env,
        v: Val,
        ty: super::types::TypeId,
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
        let dst = self.fb(env).reg();
        self.fb(env).emit(Inst::Conv {
            to,
            from,
            dst,
            src: reg,
        });
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
    fn dsd_temp_copy(&mut self, env: &mut Env, v: Val, span: Span, absolute: bool) -> R<VReg> {
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
            let dst = self.fb(env).reg();
            self.fb(env).emit(Inst::GlobalAddr {
                dst,
                global: g,
                offset: 0,
            });
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

    fn u16_prop(&mut self, n: i128, span: Span, what: &str) -> R<u16> {
        u16::try_from(n).map_err(|_| {
            self.err(
                codes::OUT_OF_RANGE,
                format!("{what} {n} does not fit in u16"),
                span,
                "out of range",
            )
        })
    }

    /// Applies one of the completion settings that DSD operations and `@load_to_dsr`
    /// share (`.async`, `.activate`/`.unblock`, `.on_control`) to `cfg`, `done` and
    /// `done_task`. Returns false when `f` names some other setting.
    fn completion_setting(
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
    fn settings(&mut self, env: &mut Env, e: ExprId) -> R<Option<Vec<Setting>>> {
        let ast = env.ast.clone();
        if let ExprKind::AnonInit(InitList::Fields(fields)) = &ast.exprs[e].kind {
            return Ok(Some(
                fields
                    .iter()
                    .map(|f| Setting {
                        name: f.name.name.clone(),
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
                        name: n.clone(),
                        name_span: span,
                        val: SettingVal::Ct(v.clone(), span),
                    })
                    .collect(),
            )),
            _ => Ok(None),
        }
    }

    fn setting_ct(&mut self, env: &mut Env, v: &SettingVal) -> R<Value> {
        match v {
            SettingVal::Expr(e) => self.eval_comptime(env, *e),
            SettingVal::Ct(v, _) => Ok(v.clone()),
        }
    }

    fn setting_span(&self, env: &Env, v: &SettingVal) -> Span {
        match v {
            SettingVal::Expr(e) => self.span(env, *e),
            SettingVal::Ct(_, s) => *s,
        }
    }

    fn setting_bool(&mut self, env: &mut Env, v: &SettingVal) -> R<bool> {
        match self.setting_ct(env, v)? {
            Value::Bool(b) => Ok(b),
            _ => {
                let s = self.setting_span(env, v);
                Err(self.err(codes::TYPE_MISMATCH, "expected a comptime bool", s, "here"))
            }
        }
    }

    fn bool_prop(&mut self, env: &mut Env, e: ExprId) -> R<bool> {
        match self.eval_comptime(env, e)? {
            Value::Bool(b) => Ok(b),
            _ => {
                let s = self.span(env, e);
                Err(self.err(codes::TYPE_MISMATCH, "expected a comptime bool", s, "here"))
            }
        }
    }

    fn int_list(&mut self, env: &mut Env, e: ExprId) -> R<Vec<i128>> {
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

    fn pointee_elem_bytes(&self, ptr_ty: super::types::TypeId) -> u32 {
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
    fn dsd_tensor_access(&mut self, env: &mut Env, e: ExprId, d: &mut DsdVal, span: Span) -> R<()> {
        let espan = self.span(env, e);
        // The array's address is a link-time constant: allow taking it from comptime code.
        let saved = env.ctx;
        if env.ctx == super::Ctx::Comptime {
            env.ctx = super::Ctx::TopComptime;
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

    fn not_an_array(&mut self, ty: super::types::TypeId, s: Span) -> Reported {
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
        let dv = self.expr(env, args[0])?;
        let dty = self.val_ty(&dv);
        let dspan = self.span(env, args[0]);
        if !self.types.get(dty).is_dsd() {
            let d = self.types.display(dty);
            return Err(self.err(
                codes::TYPE_MISMATCH,
                format!("@{n} needs a DSD"),
                dspan,
                format!("this has type {d}"),
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
        if env.comptime {
            return Err(self.not_comptime(aspan));
        }
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
        env.ctx = super::Ctx::TopComptime;
        let place = self.place(env, args[0]);
        (env.comptime, env.ctx) = saved;
        let bspan = self.span(env, args[0]);
        let (g, off, ty) = match place? {
            super::eval::Place::Mem {
                base: super::eval::MemBase::Global(g),
                off,
                dyn_off: None,
                ty,
                ..
            } => (g, off, ty),
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
        for (i, &a) in operands.iter().enumerate() {
            let elem = if i == 0 {
                op.dst_elem()
            } else {
                op.src_elems()[i - 1]
            };
            let aspan = self.span(env, a);
            let v = self.expr(env, a)?;
            if let Val::Ct(Value::Dsr(k, n)) = &v {
                dsr_keys.push(dsr_key(*k, *n));
            }
            let operand = self.classify_operand(v, elem, i == 0, aspan)?;
            let (kind, val) = match operand {
                Operand::Desc(v) => {
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
            if env.comptime {
                return Err(self.not_comptime(aspan));
            }
            let r = self.materialize(env, val, aspan)?;
            regs[i] = (kind, Some(r));
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
        if config.is_none()
            && let Some(c) = dsr_keys.iter().find_map(|k| self.dsr_cfgs.get(k).cloned())
        {
            cfg |= c.0;
            done = c.1;
            done_task = c.2;
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

    fn ut_of(&self, v: &Value) -> Option<u8> {
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

    fn classify_operand(&mut self, v: Val, elem: Elem, is_dst: bool, span: Span) -> R<Operand> {
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
            let d = self.types.display(ty);
            return Err(self.err(
                codes::BUILTIN_ARGS,
                format!(
                    "a pointer operand must point to a {}-bit scalar",
                    elem.bytes() * 8
                ),
                span,
                format!("this has type {d}"),
            ));
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
            let d = self.types.display(ty);
            let w = self.types.display(want);
            return Err(self.err(
                codes::BUILTIN_ARGS,
                format!("expected a DSD or a {w} scalar, found {d}"),
                span,
                "wrong operand",
            ));
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
                    let d = self.types.display(ty);
                    let w = self.types.display(want);
                    Err(self.err(
                        codes::BUILTIN_ARGS,
                        format!("expected a {w} scalar, found {d}"),
                        span,
                        "convert it with @as",
                    ))
                }
            }
        }
    }

    /// The queue of the fabric DSD a global `var` was initialised with, if `e` names one.
    fn static_fabric_queue(&mut self, env: &mut Env, e: ExprId) -> Option<u8> {
        let ExprKind::Ident(name) = &env.ast.exprs[e].kind else {
            return None;
        };
        if env.scopes.iter().flatten().any(|(n, _)| n == name) {
            return None;
        }
        let d = self.lookup_decl(env.module, name)?;
        let ast = self.mods[d.module].ast.clone();
        let Some(crate::syntax::ast::DeclKind::Var(v)) =
            ast.decls.get(d.index as usize).map(|x| &x.kind)
        else {
            return None;
        };
        let init = v.init?;
        let mut cenv = Env::comptime(d.module, ast.clone(), super::Ctx::TopComptime);
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
    fn simd_mode(&mut self, env: &mut Env, e: ExprId) -> R<u8> {
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
    fn check_simd(&mut self, d: &DsdVal, elem: Elem, op: DsdOpcode, span: Span) -> R<()> {
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

    /// Warns when a memory DSD's elements differ in size from the operation's: legal (the
    /// operation reads the memory with its own element size), but usually a mistake.
    /// Returns whether it warned.
    fn check_elem(&mut self, d: &DsdVal, elem: Elem, op: DsdOpcode, span: Span) -> bool {
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
}

/// Placeholder task id for a `.activate = task` whose binding comes later; resolved when
/// the program class is finished.
pub const TASK_ID_PENDING: u8 = 0xfe;

fn known_props(kind: DsdKind) -> String {
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

impl Sema {
    /// `@map(callback, inputs..., [output])` over memory DSDs: lowered to a loop that loads
    /// one element of every DSD input, calls `callback`, and stores its result.
    pub fn b_map(&mut self, env: &mut Env, args: &[ExprId], span: Span) -> R<Val> {
        use crate::ir::Term;
        use csl_arch::isa::{BinOp, CmpOp, NumTy};
        let cspan = self.span(env, args[0]);
        let Value::Func(fd) = self.eval_comptime(env, args[0])? else {
            return Err(self.err(
                codes::BUILTIN_ARGS,
                "the first argument of @map must be a function",
                cspan,
                "not a function",
            ));
        };
        if env.comptime {
            return Err(self.not_comptime(span));
        }
        let func = self.lower_fn(fd, cspan)?;
        let (ptys, ret) = self.sigs.get(&func).cloned().ok_or(Reported)?;
        let has_out = ret != self.types.common.void;
        let rest = &args[1..];
        let (inputs, output) = if has_out {
            match rest.split_last() {
                Some((o, i)) => (i, Some(*o)),
                None => {
                    return Err(self.err(
                        codes::BUILTIN_ARGS,
                        "@map needs an output for a function that returns a value",
                        span,
                        "no output",
                    ));
                }
            }
        } else {
            (rest, None)
        };
        if inputs.len() != ptys.len() {
            return Err(self.err(
                codes::BUILTIN_ARGS,
                format!(
                    "the callback takes {} parameters, but @map passes {} inputs",
                    ptys.len(),
                    inputs.len()
                ),
                span,
                "inputs and parameters differ",
            ));
        }
        // Per operand: Some((descriptor address register, element bytes)) for DSDs, or the
        // value itself for scalars.
        enum In {
            Dsd(VReg, u32),
            Val(VReg),
        }
        let mut ins = Vec::new();
        let mut len: Option<VReg> = None;
        for (&a, &pty) in inputs.iter().zip(&ptys) {
            let aspan = self.span(env, a);
            let v = self.expr(env, a)?;
            let vt = self.val_ty(&v);
            match self.types.get(vt).clone() {
                Type::Mem1dDsd => {
                    let addr = self.materialize(env, v, aspan)?;
                    if len.is_none() {
                        len = Some(self.load_desc_field(env, addr, field::LENGTH));
                    }
                    let esize = self.types.size_of(pty).unwrap_or(4) as u32;
                    ins.push(In::Dsd(addr, esize));
                }
                t if t.is_dsd() => {
                    return Err(self.err(
                        codes::UNSUPPORTED,
                        "@map over fabric, FIFO or mem4d DSDs is not supported yet",
                        aspan,
                        "use a mem1d_dsd",
                    ));
                }
                _ => {
                    let v = self.coerce(env, v, pty, aspan)?;
                    ins.push(In::Val(self.materialize(env, v, aspan)?));
                }
            }
        }
        let out = match output {
            Some(o) => {
                let ospan = self.span(env, o);
                let v = self.expr(env, o)?;
                let vt = self.val_ty(&v);
                match self.types.get(vt).clone() {
                    Type::Mem1dDsd => {
                        let addr = self.materialize(env, v, ospan)?;
                        if len.is_none() {
                            len = Some(self.load_desc_field(env, addr, field::LENGTH));
                        }
                        Some((addr, true))
                    }
                    // A pointer output receives every result (the last one wins; with the
                    // same pointer as an input this is a reduction).
                    Type::Ptr {
                        elem,
                        is_const: false,
                    } if elem == ret => Some((self.materialize(env, v, ospan)?, false)),
                    _ => {
                        let d = self.types.display(vt);
                        return Err(self.err(
                            codes::BUILTIN_ARGS,
                            format!(
                                "the output of @map must be a mem1d_dsd or a pointer to the callback's result type, found {d}"
                            ),
                            ospan,
                            "wrong output",
                        ));
                    }
                }
            }
            None => None,
        };
        let Some(len) = len else {
            return Err(self.err(
                codes::BUILTIN_ARGS,
                "@map needs at least one DSD operand",
                span,
                "no DSD",
            ));
        };
        // Cursor and step (stride * element size, in bytes) of every DSD operand.
        let mut cursors = Vec::new();
        for i in &ins {
            if let In::Dsd(addr, esize) = i {
                cursors.push(self.dsd_cursor(env, *addr, *esize));
            }
        }
        let ret_size = self.types.size_of(ret).unwrap_or(4) as u32;
        let out_cursor = match out {
            Some((o, true)) => Some(self.dsd_cursor(env, o, ret_size)),
            _ => None,
        };
        let out_ptr = match out {
            Some((p, false)) => Some(p),
            _ => None,
        };
        let k = self.imm(env, 0);
        let one = self.imm(env, 1);
        let header = self.fb(env).block();
        let body = self.fb(env).block();
        let exit = self.fb(env).block();
        self.fb(env).terminate(Term::Jump(header));
        self.fb(env).switch_to(header);
        let c = self.fb(env).reg();
        self.fb(env).emit(Inst::Cmp {
            op: CmpOp::Lt,
            ty: NumTy::U16,
            dst: c,
            a: k,
            b: len,
        });
        self.fb(env).terminate(Term::Branch {
            cond: c,
            then: body,
            otherwise: exit,
        });
        self.fb(env).switch_to(body);
        let mut call_args = Vec::new();
        let mut ci = 0;
        for (i, &pty) in ins.iter().zip(&ptys) {
            match i {
                In::Val(r) => call_args.push(*r),
                In::Dsd(..) => {
                    let (ptr, _) = cursors[ci];
                    ci += 1;
                    let w = self
                        .types
                        .num_ty(pty)
                        .map_or(csl_arch::isa::Width::W32, |n| n.width());
                    let dst = self.fb(env).reg();
                    self.fb(env).emit(Inst::Load { w, dst, addr: ptr });
                    call_args.push(dst);
                }
            }
        }
        let result = if has_out {
            Some(self.fb(env).reg())
        } else {
            None
        };
        self.fb(env).emit(Inst::Call {
            func,
            args: call_args,
            dst: result,
        });
        if let (Some(ptr), Some(r)) = (out_cursor.map(|(p, _)| p).or(out_ptr), result) {
            let w = self
                .types
                .num_ty(ret)
                .map_or(csl_arch::isa::Width::W32, |n| n.width());
            self.fb(env).emit(Inst::Store {
                w,
                addr: ptr,
                src: r,
            });
        }
        for (ptr, step) in cursors.iter().chain(out_cursor.iter()) {
            self.fb(env).emit(Inst::Bin {
                op: BinOp::Add,
                ty: NumTy::U16,
                dst: *ptr,
                a: *ptr,
                b: *step,
            });
        }
        self.fb(env).emit(Inst::Bin {
            op: BinOp::Add,
            ty: NumTy::U16,
            dst: k,
            a: k,
            b: one,
        });
        self.fb(env).terminate(Term::Jump(header));
        self.fb(env).switch_to(exit);
        Ok(Val::Ct(Value::Void))
    }

    fn load_desc_field(&mut self, env: &mut Env, desc: VReg, off: u32) -> VReg {
        let o = self.imm(env, off);
        let a = self.emit_bin(
            env,
            csl_arch::isa::BinOp::Add,
            csl_arch::isa::NumTy::U16,
            desc,
            o,
        );
        let dst = self.fb(env).reg();
        self.fb(env).emit(Inst::Load {
            w: csl_arch::isa::Width::W16,
            dst,
            addr: a,
        });
        dst
    }

    /// A pointer register at the descriptor's base and the byte step per element.
    fn dsd_cursor(&mut self, env: &mut Env, desc: VReg, esize: u32) -> (VReg, VReg) {
        let base = self.load_desc_field(env, desc, field::BASE);
        let ptr = self.fb(env).reg();
        self.fb(env).emit(Inst::Mov {
            dst: ptr,
            src: base,
        });
        let stride = self.load_desc_field(env, desc, field::STRIDE);
        let e = self.imm(env, esize);
        let step = self.emit_bin(
            env,
            csl_arch::isa::BinOp::Mul,
            csl_arch::isa::NumTy::U16,
            stride,
            e,
        );
        (ptr, step)
    }
}

/// The memory slot shared by the DSR handles of one number and operand class (a FIFO
/// re-typing of a DSR uses the same register).
fn dsr_key(kind: u8, n: u8) -> String {
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
        let key = dsr_key(kind, n);
        if let Some(g) = self.dsd_consts.get(&key) {
            return Ok(*g);
        }
        let Some(p) = self.prog.as_mut() else {
            return Err(self.err(
                codes::BUILTIN_CONTEXT,
                "DSRs exist only in PE programs",
                span,
                "used here",
            ));
        };
        let g = p.globals.push(crate::ir::Global {
            name: format!("<{key}>"),
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
        // DSR 0 belongs to the memcpy runtime; the hardware has 16 of each kind.
        if !(1..16).contains(&n) {
            let s = self.span(env, args[1]);
            return Err(self.err(
                codes::TASK_ID_RANGE,
                format!("DSR {n} cannot be used"),
                s,
                "DSRs 1 to 15 are available (0 belongs to memcpy)",
            ));
        }
        let _ = span;
        Ok(Val::Ct(Value::Dsr(kind, n as u8)))
    }

    /// `@get_xdsr(n)`.
    pub fn b_get_xdsr(&mut self, env: &mut Env, args: &[ExprId]) -> R<Val> {
        let n = self.eval_int(env, args[0])?;
        if !(0..8).contains(&n) {
            let s = self.span(env, args[0]);
            return Err(self.err(
                codes::TASK_ID_RANGE,
                format!("extended DSR {n} does not exist"),
                s,
                "xdsrs are 0 to 7",
            ));
        }
        Ok(Val::Ct(Value::Xdsr(n as u8)))
    }

    /// `@load_to_dsr(dsr, dsd[, config])`: in a top-level comptime block the DSR's initial
    /// contents, at runtime a copy; the configuration (async, completion, microthread,
    /// `save_address`) applies to the operations that use the DSR.
    pub fn b_load_to_dsr(&mut self, env: &mut Env, args: &[ExprId], span: Span) -> R<Val> {
        let dspan = self.span(env, args[0]);
        let Value::Dsr(kind, n) = self.eval_comptime(env, args[0])? else {
            return Err(self.err(
                codes::BUILTIN_ARGS,
                "@load_to_dsr needs a DSR from @get_dsr",
                dspan,
                "not a DSR",
            ));
        };
        let vspan = self.span(env, args[1]);
        let v = self.expr(env, args[1])?;
        let vt = self.val_ty(&v);
        if !self.types.get(vt).is_dsd() {
            let d = self.types.display(vt);
            return Err(self.err(
                codes::BUILTIN_ARGS,
                format!("@load_to_dsr needs a DSD, found {d}"),
                vspan,
                "not a DSD",
            ));
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
        let v = match (v, save) {
            (Val::Ct(Value::Dsd(d)), true) => {
                let mut d = (*d).clone();
                d.flags |= flags::SAVE_ADDRESS;
                Val::Ct(Value::Dsd(std::rc::Rc::new(d)))
            }
            (v, _) => v,
        };
        let src = self.materialize(env, v, vspan)?;
        let dst = self.fb(env).reg();
        self.fb(env).emit(Inst::GlobalAddr {
            dst,
            global: g,
            offset: 0,
        });
        self.fb(env).emit(Inst::Copy {
            dst,
            src,
            bytes: DESC_BYTES as u16,
        });
        let _ = span;
        Ok(Val::Ct(Value::Void))
    }
}

impl Sema {
    /// `@dfilt(fabin_dsd, .{ .async = true, ... })`: drop data wavelets on the input until
    /// the DSD's extent of control wavelets has passed.
    fn b_dfilt(&mut self, env: &mut Env, args: &[ExprId], span: Span) -> R<Val> {
        let ast = env.ast.clone();
        let aspan = self.span(env, args[0]);
        let v = self.expr(env, args[0])?;
        let vt = self.val_ty(&v);
        let input = matches!(
            self.types.get(vt),
            Type::FabinDsd | Type::Dsr(2) | Type::Dsr(4)
        );
        if !input {
            let d = self.types.display(vt);
            return Err(self.err(
                codes::BUILTIN_ARGS,
                format!("@dfilt filters a fabin_dsd (or a dsr_src1 holding one), found {d}"),
                aspan,
                "not a fabric input",
            ));
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
        if env.comptime {
            return Err(self.not_comptime(span));
        }
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
