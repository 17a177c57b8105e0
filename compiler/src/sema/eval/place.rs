//! Places: what an assignment, `&` or a read names (locals, globals, fields, memory
//! through pointers), and reading and writing them.

use super::*;

impl Sema {
    pub(super) fn global_place(&mut self, env: &mut Env, d: DeclRef, span: Span) -> R<Place> {
        if env.comptime && env.ctx != Ctx::TopComptime {
            return Err(self.var_at_comptime(d, span));
        }
        let g = self.global_of(d, span)?;
        let ty = self.global_type(g);
        Ok(Place::mem(MemBase::Global(g), ty, true))
    }

    pub(super) fn ident_place(&mut self, env: &mut Env, name: Symbol, span: Span) -> R<Place> {
        let r = self.ident_place_of(env, name, span);
        if self.index.is_some()
            && let Ok(p) = &r
        {
            let ty = match p {
                Place::Ct { ty, .. } | Place::Reg { ty, .. } | Place::Mem(MemPlace { ty, .. }) => {
                    *ty
                }
            };
            let def = match env.find(name) {
                Some(_) => None,
                None => self
                    .lookup_decl(env.module, name)
                    .and_then(|d| crate::sema::decl_name_span(&self.mods[d.module].ast, d.index)),
            };
            self.index_ty(span, def, ty);
        }
        r
    }

    fn ident_place_of(&mut self, env: &mut Env, name: Symbol, span: Span) -> R<Place> {
        if let Some((si, li)) = env.find(name) {
            return match &env.scopes[si][li].1 {
                Local::Value(_) => Err(self.assign_const(&name, span)),
                Local::CtVar(v) => {
                    let v = v.clone();
                    let ty = v.ty(&mut self.types);
                    Ok(Place::Ct {
                        scope: si,
                        idx: li,
                        path: vec![],
                        ty,
                    })
                }
                // A runtime aggregate held by address (a capture or a parameter).
                Local::Reg { reg, ty, mutable } if self.types.is_mem_type(*ty) => {
                    Ok(Place::mem(MemBase::Reg(*reg), *ty, *mutable))
                }
                Local::Reg { reg, ty, mutable } => Ok(Place::Reg {
                    reg: *reg,
                    ty: *ty,
                    mutable: *mutable,
                }),
                Local::Frame { off, ty, mutable } => {
                    Ok(Place::mem(MemBase::Frame(*off), *ty, *mutable))
                }
                Local::Poison => Err(Reported),
            };
        }
        if let Some(d) = self.lookup_decl(env.module, name) {
            let ast = self.mods[d.module].ast.clone();
            return match ast.decls.get(d.index as usize).map(|x| &x.kind) {
                Some(DeclKind::Var(v)) if v.mutability != crate::syntax::ast::Mutability::Const => {
                    self.global_place(env, d, span)
                }
                _ => Err(self.assign_const(&name, span)),
            };
        }
        Err(self.undefined(env, &name, span))
    }

    pub(super) fn assign_const(&mut self, name: &str, span: Span) -> Reported {
        self.report(
            Diagnostic::error(
                codes::ASSIGN_TO_CONST,
                format!("cannot assign to constant `{name}`"),
                span,
                "this is a constant",
            )
            .with_help("declare it with `var` to make it mutable"),
        )
    }

    // ----- places ------------------------------------------------------------------------

    /// Analyses an expression as a place (something with an address or a variable slot).
    pub fn place(&mut self, env: &mut Env, e: ExprId) -> R<Place> {
        let ast = env.ast.clone();
        let span = ast.exprs[e].span;
        match &ast.exprs[e].kind {
            ExprKind::Ident(name) => self.ident_place(env, *name, span),
            ExprKind::Field { base, name } => {
                if self.is_place_expr(env, *base) {
                    return self.field_place(env, *base, &name.name, name.span, span);
                }
                let bv = self.expr(env, *base)?;
                if let Val::Ct(Value::Module(m)) = bv {
                    let Some(d) = self.lookup_decl(m, name.name) else {
                        return Err(self.unknown_member_of_module(m, &name.name, name.span));
                    };
                    let mast = self.mods[m].ast.clone();
                    return match mast.decls.get(d.index as usize).map(|x| &x.kind) {
                        Some(DeclKind::Var(v))
                            if v.mutability != crate::syntax::ast::Mutability::Const =>
                        {
                            self.global_place(env, d, span)
                        }
                        _ => Err(self.assign_const(&name.name, span)),
                    };
                }
                let bspan = self.span(env, *base);
                self.field_place_in(env, FieldBase::Val(bv), bspan, &name.name, name.span, span)
            }
            ExprKind::Builtin { name, args } if name.name == "field" && args.len() == 2 => {
                let f = self.str_arg_kind(env, args[1], "field")?;
                let fspan = self.span(env, args[1]);
                self.field_place(env, args[0], &f, fspan, span)
            }
            ExprKind::Index { base, indices } => self.index_place(env, *base, indices, span),
            ExprKind::Deref(p) => {
                let pv = self.expr(env, *p)?;
                let pspan = self.span(env, *p);
                let pty = self.val_ty(&pv);
                let (elem, is_const) = match self.types.get(pty) {
                    Type::Ptr { elem, is_const } => (*elem, *is_const),
                    _ => {
                        return Err(self.err_with_type(
                            codes::NOT_A_POINTER,
                            "cannot dereference a value that is not a pointer",
                            pspan,
                            pty,
                        ));
                    }
                };
                let base = self.ptr_base(env, pv, pspan)?;
                Ok(Place::mem(base, elem, !is_const))
            }
            _ => Err(self.err(
                codes::BAD_OPERAND,
                "this expression is not assignable",
                span,
                "not a variable, element or dereference",
            )),
        }
    }

    pub(crate) fn ptr_base(&mut self, env: &mut Env, pv: Val, span: Span) -> R<MemBase> {
        Ok(match pv {
            Val::Ct(Value::GlobalPtr { global, offset, .. }) => {
                if offset == 0 {
                    MemBase::Global(global)
                } else {
                    let r = self.emit_global_addr(env, global, offset, span)?;
                    MemBase::Reg(r)
                }
            }
            Val::Ct(Value::AbsPtr { addr, .. }) => MemBase::Abs(addr),
            Val::Rt { reg, .. } => MemBase::Reg(reg),
            Val::Ct(_) => {
                return Err(self.err(
                    codes::NOT_A_POINTER,
                    "not a pointer",
                    span,
                    "expected a pointer",
                ));
            }
        })
    }

    /// Whether an expression designates a variable (rather than a constant or a
    /// computed value), so that indexing it goes through its storage.
    pub(crate) fn is_place_expr(&mut self, env: &mut Env, e: ExprId) -> bool {
        let ast = env.ast.clone();
        match &ast.exprs[e].kind {
            ExprKind::Ident(n) => match env.find(*n) {
                Some((si, li)) => !matches!(env.scopes[si][li].1, Local::Value(_) | Local::Poison),
                None => self
                    .lookup_decl(env.module, *n)
                    .is_some_and(|d| self.is_var_decl(d)),
            },
            ExprKind::Field { base, .. } if self.is_place_expr(env, *base) => true,
            ExprKind::Builtin { name, args } if name.name == "field" && args.len() == 2 => {
                self.is_place_expr(env, args[0])
            }
            ExprKind::Field { base, name } => match &ast.exprs[*base].kind {
                ExprKind::Ident(_) => {
                    let saved = self.diags.len();
                    let r = self.expr(env, *base);
                    match r {
                        Ok(Val::Ct(Value::Module(m))) => self
                            .lookup_decl(m, name.name)
                            .is_some_and(|d| self.is_var_decl(d)),
                        _ => {
                            self.diags.truncate(saved);
                            false
                        }
                    }
                }
                _ => false,
            },
            // Indexing a comptime array held by a local constant gives a value, not a
            // place (so `a[0].x` is evaluated at comptime).
            ExprKind::Index { base, .. } => match &ast.exprs[*base].kind {
                ExprKind::Ident(n) => !matches!(
                    env.find(*n).map(|(si, li)| &env.scopes[si][li].1),
                    Some(Local::Value(Value::Array(..)))
                ),
                _ => true,
            },
            ExprKind::Deref(_) => true,
            _ => false,
        }
    }

    pub(super) fn is_var_decl(&self, d: DeclRef) -> bool {
        matches!(
            self.mods[d.module].ast.decls.get(d.index as usize).map(|x| &x.kind),
            Some(DeclKind::Var(v)) if v.mutability != crate::syntax::ast::Mutability::Const
        )
    }

    /// Reads a place as a value. A runtime aggregate or descriptor is read as its address
    /// (see [`TypeStore::is_mem_type`](crate::sema::types::TypeStore::is_mem_type)).
    pub fn read_place(&mut self, env: &mut Env, p: Place, span: Span) -> R<Val> {
        match p {
            Place::Ct {
                scope, idx, path, ..
            } => {
                let Some((_, Local::CtVar(v))) = env.scopes.get(scope).and_then(|s| s.get(idx))
                else {
                    return Err(Reported);
                };
                let mut v = v.clone();
                for i in path {
                    v = match v {
                        Value::Array(_, elems) | Value::Record(_, elems) => {
                            elems.get(i).cloned().ok_or(Reported)?
                        }
                        Value::Struct(fields) => {
                            fields.get(i).map(|(_, v)| v.clone()).ok_or(Reported)?
                        }
                        _ => return Err(Reported),
                    };
                }
                Ok(Val::Ct(v))
            }
            Place::Reg { reg, ty, .. } => Ok(Val::Rt { reg, ty }),
            Place::Mem(m) => {
                let ty = m.ty;
                self.runtime_only(env, span)?;
                if self.types.is_mem_type(ty) {
                    let addr = self.place_addr(env, m, span)?;
                    return Ok(Val::Rt { reg: addr, ty });
                }
                let Some(nt) = self.types.num_ty(ty) else {
                    return Err(self.err_ty(
                        codes::UNSUPPORTED,
                        ty,
                        span,
                        "index it, or take its address with `&`",
                        |d| format!("a value of type {d} cannot be loaded into a register"),
                    ));
                };
                let addr = self.place_addr(env, m, span)?;
                let dst = self.fb(env).reg();
                self.fb(env).emit(Inst::Load {
                    w: nt.width(),
                    dst,
                    addr,
                });
                Ok(Val::Rt { reg: dst, ty })
            }
        }
    }

    /// Writes a value to a place (the value is coerced to the place's type). Aggregates
    /// and descriptors are copied.
    pub fn write_place(
        &mut self,
        env: &mut Env,
        p: Place,
        v: Val,
        span: Span,
        target_span: Span,
    ) -> R<()> {
        match p {
            Place::Ct {
                scope,
                idx,
                path,
                ty,
            } => {
                let Val::Ct(v) = v else {
                    return Err(self.report(
                        Diagnostic::error(
                            codes::NOT_COMPTIME,
                            "runtime value stored in a comptime variable",
                            span,
                            "only known at runtime",
                        )
                        .with_label(target_span, "this is a comptime variable")
                        .with_help("declare the variable with `var` to hold runtime values"),
                    ));
                };
                let v = self.coerce_value(v, ty, span)?;
                let Some((_, Local::CtVar(slot))) =
                    env.scopes.get_mut(scope).and_then(|s| s.get_mut(idx))
                else {
                    return Err(Reported);
                };
                set_path(slot, &path, v);
                Ok(())
            }
            Place::Reg { reg, ty, mutable } => {
                if !mutable {
                    return Err(self.err(
                        codes::ASSIGN_TO_CONST,
                        "cannot assign to a constant",
                        target_span,
                        "this is a constant",
                    ));
                }
                let v = self.coerce(env, v, ty, span)?;
                let src = self.materialize(env, v, span)?;
                self.fb(env).emit(Inst::Mov { dst: reg, src });
                Ok(())
            }
            Place::Mem(m) => {
                let ty = m.ty;
                if !m.mutable {
                    return Err(self.err(
                        codes::ASSIGN_TO_CONST,
                        "cannot assign to a read-only location",
                        target_span,
                        "this is a constant or is reached through a `*const` pointer",
                    ));
                }
                self.runtime_only(env, target_span)?;
                let v = self.coerce(env, v, ty, span)?;
                if self.types.is_mem_type(ty) {
                    let src = self.materialize(env, v, span)?;
                    let dst = self.place_addr(env, m, span)?;
                    self.emit_copy(env, dst, src, ty);
                    return Ok(());
                }
                let Some(nt) = self.types.num_ty(ty) else {
                    return Err(self.comptime_only(ty, target_span, "cannot be stored in memory"));
                };
                let src = self.materialize(env, v, span)?;
                let addr = self.place_addr(env, m, span)?;
                self.fb(env).emit(Inst::Store {
                    w: nt.width(),
                    addr,
                    src,
                });
                Ok(())
            }
        }
    }

    /// Copies a runtime value of memory type `ty` from address `src` to address `dst` (one
    /// `copy` instruction).
    pub(crate) fn emit_copy(&mut self, env: &mut Env, dst: VReg, src: VReg, ty: TypeId) {
        // Objects larger than the 16-bit address space cannot exist in PE memory (placing
        // them is reported), so the byte count always fits.
        let size = self.types.size_of(ty).unwrap_or(0);
        let bytes = u16::try_from(size).unwrap_or(u16::MAX);
        self.fb(env).emit(Inst::Copy { dst, src, bytes });
    }

    /// The address of memory place `m` in a register.
    pub(crate) fn place_addr(&mut self, env: &mut Env, m: MemPlace, span: Span) -> R<VReg> {
        let MemPlace {
            base, off, dyn_off, ..
        } = m;
        let b = match base {
            MemBase::Global(g) => self.emit_global_addr(env, g, off, span)?,
            MemBase::Frame(f) => {
                let dst = self.fb(env).reg();
                self.fb(env).emit(Inst::FrameAddr { dst, off: f + off });
                dst
            }
            MemBase::Abs(a) => self.imm(env, a + off),
            MemBase::Reg(r) => {
                if off == 0 {
                    r
                } else {
                    let k = self.imm(env, off);
                    self.emit_bin(env, BinOp::Add, NumTy::U16, r, k)
                }
            }
        };
        Ok(match dyn_off {
            Some(d) => self.emit_bin(env, BinOp::Add, NumTy::U16, b, d),
            None => b,
        })
    }

    pub(super) fn emit_global_addr(
        &mut self,
        env: &mut Env,
        global: crate::ir::GlobalId,
        offset: u32,
        span: Span,
    ) -> R<VReg> {
        if env.comptime && env.ctx != Ctx::TopComptime {
            return Err(self.not_comptime(span));
        }
        Ok(self.global_addr(env, global, offset))
    }

    /// Emits the address of byte `offset` of global `global` into a new register.
    pub(crate) fn global_addr(
        &mut self,
        env: &mut Env,
        global: crate::ir::GlobalId,
        offset: u32,
    ) -> VReg {
        let dst = self.fb(env).reg();
        self.fb(env).emit(Inst::GlobalAddr {
            dst,
            global,
            offset,
        });
        dst
    }
}

pub(super) fn set_path(slot: &mut Value, path: &[usize], v: Value) {
    match path.split_first() {
        None => *slot = v,
        Some((&i, rest)) => match slot {
            Value::Array(_, elems) | Value::Record(_, elems) => {
                if let Some(e) = Rc::make_mut(elems).get_mut(i) {
                    set_path(e, rest, v);
                }
            }
            Value::Struct(fields) => {
                if let Some((_, e)) = Rc::make_mut(fields).get_mut(i) {
                    set_path(e, rest, v);
                }
            }
            _ => {}
        },
    }
}
