//! Indexing: array and pointer element places, comptime indexing of comptime arrays, and
//! the scaled index arithmetic emitted for runtime indices.

use super::*;

impl Sema {
    pub(super) fn index_place(
        &mut self,
        env: &mut Env,
        base: ExprId,
        indices: &[ExprId],
        span: Span,
    ) -> R<Place> {
        let bspan = self.span(env, base);
        // A pointer-valued base ([*]T or *[N]T) is indexed through its value; an array
        // variable through its place.
        let base_place = if self.is_place_expr(env, base) {
            Some(self.place(env, base)?)
        } else {
            None
        };
        let (mbase, off, dyn_off, arr_ty, mutable) = match base_place {
            Some(Place::Mem(m)) if matches!(self.types.get(m.ty), Type::Array { .. }) => {
                (m.base, m.off, m.dyn_off, m.ty, m.mutable)
            }
            Some(Place::Ct {
                scope,
                idx,
                mut path,
                ty,
            }) => {
                let Type::Array { elem, dims } = self.types.get(ty).clone() else {
                    return Err(self.not_indexable(ty, bspan));
                };
                let flat = self.ct_flat_index(env, &dims, indices, span)?;
                path.push(flat);
                return Ok(Place::Ct {
                    scope,
                    idx,
                    path,
                    ty: elem,
                });
            }
            other => {
                // Not an array place: index through a pointer value (or the address of a
                // runtime array value).
                let pv = match other {
                    Some(p) => self.read_place(env, p, bspan)?,
                    None => self.expr(env, base)?,
                };
                let pty = self.val_ty(&pv);
                match self.types.get(pty).clone() {
                    Type::ManyPtr { elem, is_const } => {
                        let mb = self.ptr_base(env, pv, bspan)?;
                        let esize = self.types.size_of(elem).unwrap_or(0) as u32;
                        if indices.len() != 1 {
                            return Err(self.err(
                                codes::NOT_INDEXABLE,
                                "a [*] pointer takes one index",
                                span,
                                "one index expected",
                            ));
                        }
                        let (coff, dreg) = self.scaled_index(env, indices[0], esize)?;
                        return Ok(Place::Mem(MemPlace {
                            base: mb,
                            off: coff,
                            dyn_off: dreg,
                            ty: elem,
                            mutable: !is_const,
                        }));
                    }
                    Type::Ptr { elem, is_const }
                        if matches!(self.types.get(elem), Type::Array { .. }) =>
                    {
                        let mb = self.ptr_base(env, pv, bspan)?;
                        (mb, 0, None, elem, !is_const)
                    }
                    Type::Array { .. } => match pv {
                        Val::Rt { reg, .. } => (MemBase::Reg(reg), 0, None, pty, false),
                        Val::Ct(_) => return Err(self.not_indexable(pty, bspan)),
                    },
                    _ => return Err(self.not_indexable(pty, bspan)),
                }
            }
        };
        let mut idx = Vec::new();
        for &ix in indices {
            let v = self.expr(env, ix)?;
            idx.push((v, self.span(env, ix)));
        }
        self.index_into(env, mbase, off, dyn_off, arr_ty, idx, mutable, span)
    }

    /// The place of an element of the array of type `arr_ty` at `base + off (+ dyn_off)`.
    /// Row-major: offset = ((i0 * d1 + i1) * d2 + i2) * esize.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn index_into(
        &mut self,
        env: &mut Env,
        mbase: MemBase,
        off: u32,
        dyn_off: Option<VReg>,
        arr_ty: TypeId,
        idx: Vec<(Val, Span)>,
        mutable: bool,
        span: Span,
    ) -> R<Place> {
        let Type::Array { elem, dims } = self.types.get(arr_ty).clone() else {
            return Err(self.not_indexable(arr_ty, span));
        };
        if idx.len() != dims.len() {
            return Err(self.rank_mismatch(dims.len(), idx.len(), span));
        }
        let esize = self.types.size_of(elem).unwrap_or(0) as u32;
        let mut const_part: i128 = 0;
        let mut dyn_part: Option<VReg> = None;
        for (k, (v, ispan)) in idx.into_iter().enumerate() {
            let stride: u64 = dims[k + 1..].iter().product::<u64>() * u64::from(esize);
            match v {
                Val::Ct(Value::Int(i, _)) => {
                    if i < 0 || i as u128 >= u128::from(dims[k]) {
                        return Err(self.err(
                            codes::COMPTIME_INDEX,
                            format!("index {i} is out of range for an extent of {}", dims[k]),
                            ispan,
                            "out of range",
                        ));
                    }
                    const_part += i * stride as i128;
                }
                other => {
                    let r = self.index_to_u16(env, other, ispan)?;
                    let scaled = self.mul_const_u16(env, r, stride as u32);
                    dyn_part = Some(match dyn_part {
                        None => scaled,
                        Some(prev) => self.emit_bin(env, BinOp::Add, NumTy::U16, prev, scaled),
                    });
                }
            }
        }
        let dyn_off = match (dyn_off, dyn_part) {
            (Some(a), Some(b)) => Some(self.emit_bin(env, BinOp::Add, NumTy::U16, a, b)),
            (a, b) => a.or(b),
        };
        Ok(Place::Mem(MemPlace {
            base: mbase,
            off: off + const_part as u32,
            dyn_off,
            ty: elem,
            mutable,
        }))
    }

    pub(super) fn scaled_index(
        &mut self,
        env: &mut Env,
        ix: ExprId,
        esize: u32,
    ) -> R<(u32, Option<VReg>)> {
        let v = self.expr(env, ix)?;
        let ispan = self.span(env, ix);
        match v {
            Val::Ct(Value::Int(i, _)) if i >= 0 => Ok((i as u32 * esize, None)),
            other => {
                let r = self.index_to_u16(env, other, ispan)?;
                Ok((0, Some(self.mul_const_u16(env, r, esize))))
            }
        }
    }

    pub(super) fn not_indexable(&mut self, ty: TypeId, span: Span) -> Reported {
        let d = self.types.display(ty);
        self.err(
            codes::NOT_INDEXABLE,
            format!("cannot index a value of type {d}"),
            span,
            "not an array or [*] pointer",
        )
    }

    pub(super) fn ct_flat_index(
        &mut self,
        env: &mut Env,
        dims: &[u64],
        indices: &[ExprId],
        span: Span,
    ) -> R<usize> {
        if indices.len() != dims.len() {
            return Err(self.rank_mismatch(dims.len(), indices.len(), span));
        }
        let mut flat: u64 = 0;
        for (k, &ix) in indices.iter().enumerate() {
            let i = self.eval_int(env, ix)?;
            let s = self.span(env, ix);
            flat = self.flat_step(flat, i, dims[k], s)?;
        }
        Ok(flat as usize)
    }

    /// Indexing a comptime array or tuple with comptime indices.
    pub(super) fn ct_index(
        &mut self,
        env: &mut Env,
        base: ExprId,
        indices: &[ExprId],
    ) -> R<Option<Val>> {
        // Only when the base is comptime-known without side effects: a literal, a constant,
        // a comptime variable.
        let ast = env.ast.clone();
        let is_ct_base = match &ast.exprs[base].kind {
            ExprKind::Ident(n) => match env.find(*n) {
                Some((si, li)) => matches!(env.scopes[si][li].1, Local::Value(_) | Local::CtVar(_)),
                None => self.lookup_decl(env.module, *n).is_some_and(|d| {
                    let a = self.mods[d.module].ast.clone();
                    matches!(
                        a.decls.get(d.index as usize).map(|x| &x.kind),
                        Some(DeclKind::Param { .. })
                            | Some(DeclKind::Var(crate::syntax::ast::VarDecl {
                                mutability: crate::syntax::ast::Mutability::Const,
                                ..
                            }))
                    )
                }),
            },
            ExprKind::Field { .. } => !self.is_place_expr(env, base),
            ExprKind::Builtin { .. } | ExprKind::AnonInit(_) | ExprKind::TypedInit { .. } => true,
            _ => false,
        };
        if !is_ct_base {
            return Ok(None);
        }
        let bv = match self.expr(env, base)? {
            Val::Ct(v) => v,
            Val::Rt { .. } => return Ok(None),
        };
        let span = self.span(env, base);
        match bv {
            Value::Array(t, elems) => {
                let Type::Array { dims, .. } = self.types.get(t).clone() else {
                    return Ok(None);
                };
                let mut idx = Vec::new();
                for &i in indices {
                    let v = self.expr(env, i)?;
                    idx.push((v, self.span(env, i)));
                }
                if idx.iter().all(|(v, _)| matches!(v, Val::Ct(_))) {
                    let flat = self.ct_flat_index_vals(&dims, &idx, span)?;
                    return Ok(elems.get(flat).cloned().map(Val::Ct));
                }
                // A runtime index into a constant array: the array is placed in memory as
                // read-only data.
                if env.comptime {
                    let s = idx
                        .iter()
                        .find(|(v, _)| matches!(v, Val::Rt { .. }))
                        .map_or(span, |(_, s)| *s);
                    return Err(self.not_comptime(s));
                }
                let addr = self.const_addr(env, &Value::Array(t, elems), span)?;
                let p = self.index_into(env, MemBase::Reg(addr), 0, None, t, idx, false, span)?;
                self.read_place(env, p, span).map(Some)
            }
            Value::Struct(fields) => {
                if indices.len() != 1 {
                    return Ok(None);
                }
                let i = self.eval_int(env, indices[0])?;
                match fields.get(i as usize) {
                    Some((_, v)) if i >= 0 => Ok(Some(Val::Ct(v.clone()))),
                    _ => {
                        let s = self.span(env, indices[0]);
                        Err(self.err(
                            codes::COMPTIME_INDEX,
                            format!(
                                "index {i} is out of range for a tuple of {} elements",
                                fields.len()
                            ),
                            s,
                            "out of range",
                        ))
                    }
                }
            }
            _ => Ok(None),
        }
    }

    /// The flat row-major position of comptime indices.
    pub(super) fn ct_flat_index_vals(
        &mut self,
        dims: &[u64],
        idx: &[(Val, Span)],
        span: Span,
    ) -> R<usize> {
        if idx.len() != dims.len() {
            return Err(self.rank_mismatch(dims.len(), idx.len(), span));
        }
        let mut flat: u64 = 0;
        for (k, (v, s)) in idx.iter().enumerate() {
            let i = match v {
                Val::Ct(Value::Int(i, _)) => *i,
                // Beyond 128 bits: out of bounds whatever the extent.
                Val::Ct(Value::BigInt(b)) => {
                    return Err(self.err(
                        codes::COMPTIME_INDEX,
                        format!("index {b} is out of range for an extent of {}", dims[k]),
                        *s,
                        "out of range",
                    ));
                }
                other => {
                    let t = self.val_ty(other);
                    return Err(self.err_with_type(
                        codes::TYPE_MISMATCH,
                        "array index must be an integer",
                        *s,
                        t,
                    ));
                }
            };
            flat = self.flat_step(flat, i, dims[k], *s)?;
        }
        Ok(flat as usize)
    }

    /// One step of a row-major flat index: `flat * extent + i`, with `i` (at `span`)
    /// checked against the extent.
    fn flat_step(&mut self, flat: u64, i: i128, extent: u64, span: Span) -> R<u64> {
        if i < 0 || i as u128 >= u128::from(extent) {
            return Err(self.err(
                codes::COMPTIME_INDEX,
                format!("index {i} is out of range for an extent of {extent}"),
                span,
                "out of range",
            ));
        }
        Ok(flat * extent + i as u64)
    }

    pub(super) fn rank_mismatch(&mut self, rank: usize, given: usize, span: Span) -> Reported {
        let help = if rank > 1 && given == 1 {
            format!(
                "index every dimension at once, e.g. `a[i, j]`; the array has {rank} dimensions"
            )
        } else {
            format!("give one index per dimension ({rank})")
        };
        self.report(
            Diagnostic::error(
                codes::NOT_INDEXABLE,
                format!(
                    "array of rank {rank} indexed with {given} ind{}",
                    if given == 1 { "ex" } else { "ices" }
                ),
                span,
                "wrong number of indices",
            )
            .with_help(help),
        )
    }

    pub(super) fn mul_const_u16(&mut self, env: &mut Env, r: VReg, k: u32) -> VReg {
        if k == 1 {
            return r;
        }
        let kr = self.imm(env, k);
        self.emit_bin(env, BinOp::Mul, NumTy::U16, r, kr)
    }

    /// Converts an index value to a u16 register.
    pub(super) fn index_to_u16(&mut self, env: &mut Env, v: Val, span: Span) -> R<VReg> {
        let ty = self.val_ty(&v);
        if !self.types.is_int(ty) {
            return Err(self.err_with_type(
                codes::TYPE_MISMATCH,
                "array index must be an integer",
                span,
                ty,
            ));
        }
        self.runtime_only(env, span)?;
        let r = self.materialize(env, v, span)?;
        let from = self.types.num_ty(ty).unwrap_or(NumTy::U16);
        if from == NumTy::U16 {
            return Ok(r);
        }
        Ok(self.emit_conv(env, r, from, NumTy::U16))
    }
}
