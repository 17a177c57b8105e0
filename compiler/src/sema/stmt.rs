//! Statements: executed directly in comptime environments, lowered to IR control flow in
//! runtime environments. A comptime-known `if`/`while` condition prunes the untaken code
//! in both.

use super::eval::{Env, Local, LoopCtx, MemBase, MemPlace, Place, Val};
use super::types::{Type, TypeId};
use super::value::Value;
use super::{R, Reported, Sema};
use crate::diag::{Diagnostic, codes};
use crate::ir::{Inst, Term};
use crate::source::Span;
use crate::symbol::Symbol;
use crate::syntax::ast::{
    AssignOp, Block, ExprId, ExprKind, Ident, Mutability, Stmt, StmtKind, VarDecl,
};
use csl_arch::isa::{BinOp, CmpOp, NumTy};

/// How a comptime statement finished.
#[derive(Debug)]
pub enum Flow {
    /// Fell through.
    Normal,
    /// `break [:label] [value]`.
    Break(Option<Symbol>, Option<Value>),
    /// `continue [:label]`.
    Continue(Option<Symbol>),
    /// `return [value]`.
    Return(Option<Value>),
}

/// What every lowering of a `for` statement takes from it: the label, the captures and
/// the body.
#[derive(Clone, Copy)]
struct ForParts<'a> {
    label: Option<&'a Ident>,
    capture: &'a Ident,
    index: Option<&'a Ident>,
    body: &'a Block,
}

/// Most iterations a runtime `for` over a comptime-only sequence is unrolled.
const MAX_UNROLL: usize = 1024;

impl Local {
    /// A read-only runtime local in register `reg` (a loop capture, a parameter).
    pub(crate) fn value(reg: crate::ir::VReg, ty: TypeId) -> Local {
        Local::Reg {
            reg,
            ty,
            mutable: false,
        }
    }
}

impl Sema {
    /// Runs or lowers a block in a new scope.
    pub fn exec_block(&mut self, env: &mut Env, block: &Block) -> R<Flow> {
        if !env.comptime && block.label.is_some() {
            self.runtime_labelled_block(env, block, block.span, None, false)?;
            return Ok(Flow::Normal);
        }
        env.scopes.push(Vec::new());
        if let Some(l) = &block.label {
            env.ct_labels.push(l.name);
        }
        let mut result = Ok(Flow::Normal);
        for s in &block.stmts {
            if env.comptime {
                if let Err(e) = self.burn(s.span) {
                    result = Err(e);
                    break;
                }
                match self.stmt(env, s) {
                    Ok(Flow::Normal) => {}
                    other => {
                        result = other;
                        break;
                    }
                }
            } else {
                // Code after an unconditional `return`, `break` or `continue` is never
                // reached and not analysed (like an untaken comptime branch); this also
                // ends recursion on comptime arguments in inline functions.
                if !self.fb(env).cur_reachable() {
                    break;
                }
                self.fb(env).mark(s.span);
                // Runtime lowering recovers at statement boundaries so several independent
                // errors are reported in one run.
                let _ = self.stmt(env, s);
            }
        }
        if block.label.is_some() {
            env.ct_labels.pop();
        }
        env.scopes.pop();
        // A labelled block absorbs a break to its own label.
        if let (Ok(Flow::Break(Some(l), _)), Some(label)) = (&result, &block.label)
            && *l == label.name
        {
            return Ok(Flow::Normal);
        }
        result
    }

    pub(crate) fn stmt(&mut self, env: &mut Env, s: &Stmt) -> R<Flow> {
        env.depth += 1;
        let r = if env.depth > self.opts.max_nesting {
            Err(self.too_deep(s.span))
        } else {
            match self.stack_guard(s.span, "statements") {
                Ok(()) => self.stmt_node(env, s),
                Err(r) => Err(r),
            }
        };
        env.depth -= 1;
        r
    }

    fn stmt_node(&mut self, env: &mut Env, s: &Stmt) -> R<Flow> {
        match &s.kind {
            StmtKind::Local(v) => {
                self.local(env, v, s.span)?;
                Ok(Flow::Normal)
            }
            StmtKind::Expr(e) => {
                let ast = env.ast.clone();
                let node = &ast.exprs[*e];
                match &node.kind {
                    // A switch used as a statement: its arms' values are discarded.
                    ExprKind::Switch { scrutinee, cases } => {
                        self.switch(env, *scrutinee, cases, node.span, false, None)?;
                    }
                    ExprKind::Block(b) if !env.comptime && b.label.is_some() => {
                        self.runtime_labelled_block(env, b, node.span, None, false)?;
                    }
                    _ => {
                        self.expr(env, *e)?;
                    }
                }
                Ok(Flow::Normal)
            }
            StmtKind::Assign { op, target, value } => {
                self.assign(env, *op, *target, *value, s.span)?;
                Ok(Flow::Normal)
            }
            StmtKind::If {
                cond,
                then,
                otherwise,
            } => self.if_stmt(env, *cond, then, otherwise.as_ref()),
            StmtKind::While {
                label,
                cond,
                cont,
                body,
            } => self.while_stmt(env, label.as_ref(), *cond, cont.as_deref(), body),
            StmtKind::For {
                label,
                iter,
                capture,
                index,
                body,
            } => {
                let f = ForParts {
                    label: label.as_ref(),
                    capture,
                    index: index.as_ref(),
                    body,
                };
                self.for_stmt(env, *iter, f)
            }
            StmtKind::Break { label, value } => {
                self.break_stmt(env, label.as_ref(), *value, s.span)
            }
            StmtKind::Continue { label } => {
                let name = label.as_ref().map(|l| l.name);
                if env.comptime {
                    if env.ct_loops.is_empty() {
                        return Err(self.err(
                            codes::BREAK_OUTSIDE_LOOP,
                            "`continue` outside a loop",
                            s.span,
                            "not inside a loop",
                        ));
                    }
                    return Ok(Flow::Continue(name));
                }
                let target = self.find_loop(env, name.as_deref(), s.span)?;
                self.fb(env).terminate_and_continue(Term::Jump(target));
                Ok(Flow::Normal)
            }
            StmtKind::Return(v) => self.return_stmt(env, *v, s.span),
            StmtKind::Block(b) => self.exec_block(env, b),
            StmtKind::Comptime(b) => {
                let saved = env.comptime;
                env.comptime = true;
                let r = self.exec_block(env, b);
                env.comptime = saved;
                r
            }
            StmtKind::Error => Ok(Flow::Normal),
        }
    }

    fn local(&mut self, env: &mut Env, v: &VarDecl, span: Span) -> R<()> {
        if let Some(scope) = env.scopes.last()
            && let Some((_, prev)) = scope.iter().find(|(n, _)| *n == v.name.name)
        {
            let _ = prev;
            return Err(self.report(
                Diagnostic::error(
                    codes::DUPLICATE_DECL,
                    format!("`{}` is already declared in this block", v.name.name),
                    v.name.span,
                    "declared again here",
                )
                .with_help("give the second one another name, or assign to the first with `=`"),
            ));
        }
        let r = self.local_decl(env, v, span);
        if r.is_ok() {
            self.index_local(env, &v.name.name, v.name.span);
        }
        if r.is_err()
            && !env
                .scopes
                .last()
                .is_some_and(|s| s.iter().any(|(n, _)| *n == v.name.name))
        {
            env.bind(v.name.name, Local::Poison);
        }
        r
    }

    fn local_decl(&mut self, env: &mut Env, v: &VarDecl, span: Span) -> R<()> {
        let declared = match v.ty {
            Some(t) => Some(self.eval_type(env, t)?),
            None => None,
        };
        let comptime_binding = env.comptime || v.mutability == Mutability::ComptimeVar;
        if comptime_binding {
            let val = match v.init {
                Some(e) => self.eval_comptime(env, e)?,
                None => {
                    return Err(self.err(
                        codes::NOT_COMPTIME,
                        "a comptime variable needs an initial value",
                        v.name.span,
                        "here",
                    ));
                }
            };
            let val = match declared {
                Some(t) => {
                    let s = v.init.map_or(span, |e| self.span(env, e));
                    self.coerce_value(val, t, s)?
                }
                None => val,
            };
            if let Value::Type(t) = &val {
                self.types.name_type(*t, &v.name.name);
            }
            let local = if v.mutability == Mutability::Const {
                Local::Value(val)
            } else {
                Local::CtVar(val)
            };
            env.bind(v.name.name, local);
            return Ok(());
        }
        let init = match v.init {
            Some(e) => {
                let val = self.expr_hint(env, e, declared)?;
                let s = self.span(env, e);
                Some((
                    match declared {
                        Some(t) => self.coerce(env, val, t, s)?,
                        None => val,
                    },
                    s,
                ))
            }
            None => None,
        };
        let ty = match (declared, &init) {
            (Some(t), _) => t,
            (None, Some((val, _))) => self.val_ty(val),
            (None, None) => {
                return Err(self.err(
                    codes::NOT_A_TYPE,
                    "a variable needs a type or an initial value",
                    v.name.span,
                    "here",
                ));
            }
        };
        if v.mutability == Mutability::Const
            && let Some((Val::Ct(c), _)) = &init
        {
            if let Value::Type(t) = c {
                self.types.name_type(*t, &v.name.name);
            }
            env.bind(v.name.name, Local::Value(c.clone()));
            return Ok(());
        }
        let mutable = v.mutability != Mutability::Const;
        if self.types.is_comptime_only(ty) || self.types.size_of(ty).is_none() {
            return Err(self.comptime_only_var(ty, v.name.span, v.mutability == Mutability::Var));
        }
        let addr_taken = env.addr_taken.contains(&v.name.name);
        if self.types.num_ty(ty).is_some() && !addr_taken && !self.types.is_mem_type(ty) {
            let reg = self.fb(env).reg();
            match init {
                Some((val, s)) => {
                    let src = self.materialize(env, val, s)?;
                    self.fb(env).emit(Inst::Mov { dst: reg, src });
                }
                None => self.fb(env).emit(Inst::Imm { dst: reg, imm: 0 }),
            }
            env.bind(v.name.name, Local::Reg { reg, ty, mutable });
            return Ok(());
        }
        // A descriptor just built by a DSD builtin: the declaration takes its slot over.
        if let Some((Val::Rt { reg, ty: vty }, _)) = &init
            && *vty == ty
            && let Some(Some(off)) = self.fb(env).fresh.get(reg).copied()
        {
            self.fb(env).fresh.remove(reg);
            env.bind(v.name.name, Local::Frame { off, ty, mutable });
            return Ok(());
        }
        // Aggregates, descriptors and address-taken scalars live in the frame.
        let size = self.types.size_of(ty).unwrap_or(0) as u32;
        let align = self.types.align_of(ty).unwrap_or(1) as u32;
        let off = self.fb(env).frame_slot(size, align);
        let place = Place::mem(MemBase::Frame(off), ty, true);
        match init {
            Some((val, s)) => self.write_place(env, place, val, s, v.name.span)?,
            None if !self.types.is_mem_type(ty) => {
                let nt = self.types.num_ty(ty).unwrap_or(NumTy::U16);
                let addr = self.fb(env).reg();
                self.fb(env).emit(Inst::FrameAddr { dst: addr, off });
                let zero = self.imm(env, 0);
                self.fb(env).emit(Inst::Store {
                    w: nt.width(),
                    addr,
                    src: zero,
                });
            }
            None => {}
        }
        env.bind(v.name.name, Local::Frame { off, ty, mutable });
        Ok(())
    }

    fn assign(
        &mut self,
        env: &mut Env,
        op: AssignOp,
        target: ExprId,
        value: ExprId,
        span: Span,
    ) -> R<()> {
        let tspan = self.span(env, target);
        let vspan = self.span(env, value);
        let place = self.place(env, target)?;
        let hint = match &place {
            Place::Ct { ty, .. } | Place::Reg { ty, .. } | Place::Mem(MemPlace { ty, .. }) => {
                Some(*ty)
            }
        };
        let v = self.expr_hint(env, value, hint)?;
        let v = match op {
            AssignOp::Assign => v,
            AssignOp::Compound(bop) => {
                let cur = self.read_place(env, place.clone(), tspan)?;
                self.binary_vals(env, bop, cur, v, span, tspan, vspan)?
            }
        };
        self.write_place(env, place, v, vspan, tspan)
    }

    fn cond(&mut self, env: &mut Env, cond: ExprId) -> R<Val> {
        let b = self.types.common.bool_;
        self.expr_as(env, cond, b)
    }

    fn if_stmt(
        &mut self,
        env: &mut Env,
        cond: ExprId,
        then: &Block,
        otherwise: Option<&Block>,
    ) -> R<Flow> {
        match self.cond(env, cond)? {
            Val::Ct(Value::Bool(true)) => self.exec_block(env, then),
            Val::Ct(Value::Bool(false)) => match otherwise {
                Some(b) => self.exec_block(env, b),
                None => Ok(Flow::Normal),
            },
            Val::Ct(_) => Err(Reported),
            Val::Rt { reg, .. } => {
                let tb = self.fb(env).block();
                let join = self.fb(env).block();
                let eb = if otherwise.is_some() {
                    self.fb(env).block()
                } else {
                    join
                };
                self.fb(env).branch(reg, tb, eb);
                self.fb(env).switch_to(tb);
                let _ = self.exec_block(env, then);
                self.fb(env).terminate(Term::Jump(join));
                if let Some(b) = otherwise {
                    self.fb(env).switch_to(eb);
                    let _ = self.exec_block(env, b);
                    self.fb(env).terminate(Term::Jump(join));
                }
                self.fb(env).switch_to(join);
                Ok(Flow::Normal)
            }
        }
    }

    /// Lowers the body of a runtime loop: `break` goes to `exit`, `continue` and the end
    /// of the body to `cont`.
    fn loop_body(
        &mut self,
        env: &mut Env,
        label: Option<&Ident>,
        exit: crate::ir::BlockId,
        cont: crate::ir::BlockId,
        body: &Block,
    ) {
        env.loops.push(LoopCtx {
            label: label.map(|l| l.name),
            exit,
            cont,
            breaks: None,
            hint: None,
        });
        let _ = self.exec_block(env, body);
        env.loops.pop();
        self.fb(env).terminate(Term::Jump(cont));
    }

    /// Handles a comptime loop body's flow; returns `Some(flow)` when the loop must stop
    /// and propagate `flow` (or stop normally with `Flow::Normal`).
    fn loop_flow(label: Option<&Ident>, flow: Flow) -> (bool, Option<Flow>) {
        let mine = |l: &Option<Symbol>| l.is_none() || *l == label.map(|x| x.name);
        match flow {
            Flow::Normal => (false, None),
            Flow::Continue(l) if mine(&l) => (false, None),
            Flow::Break(l, _) if mine(&l) => (true, Some(Flow::Normal)),
            other => (true, Some(other)),
        }
    }

    fn while_stmt(
        &mut self,
        env: &mut Env,
        label: Option<&Ident>,
        cond: ExprId,
        cont: Option<&Stmt>,
        body: &Block,
    ) -> R<Flow> {
        if env.comptime {
            env.ct_loops.push(label.map(|l| l.name));
            let r = (|| {
                loop {
                    self.burn(body.span)?;
                    match self.cond(env, cond)? {
                        Val::Ct(Value::Bool(true)) => {}
                        Val::Ct(Value::Bool(false)) => return Ok(Flow::Normal),
                        _ => return Err(Reported),
                    }
                    let flow = self.exec_block(env, body)?;
                    let (stop, out) = Self::loop_flow(label, flow);
                    if stop {
                        return Ok(out.unwrap_or(Flow::Normal));
                    }
                    if let Some(c) = cont {
                        self.stmt(env, c)?;
                    }
                }
            })();
            env.ct_loops.pop();
            return r;
        }
        let header = self.fb(env).block();
        let body_b = self.fb(env).block();
        let cont_b = self.fb(env).block();
        let exit = self.fb(env).block();
        self.fb(env).jump_to(header);
        // The test and the continue expression belong to the `while` line, not to the
        // body statement laid out before them.
        let cond_span = self.span(env, cond);
        self.fb(env).mark(cond_span);
        match self.cond(env, cond)? {
            Val::Ct(Value::Bool(false)) => {
                self.fb(env).jump_to(exit);
                return Ok(Flow::Normal);
            }
            Val::Ct(_) => self.fb(env).terminate(Term::Jump(body_b)),
            Val::Rt { reg, .. } => self.fb(env).branch(reg, body_b, exit),
        }
        self.fb(env).switch_to(body_b);
        self.loop_body(env, label, exit, cont_b, body);
        self.fb(env).switch_to(cont_b);
        if let Some(c) = cont {
            self.fb(env).mark(c.span);
            let _ = self.stmt(env, c);
        }
        self.fb(env).loop_back(header, exit);
        Ok(Flow::Normal)
    }

    fn for_stmt(&mut self, env: &mut Env, iter: ExprId, f: ForParts<'_>) -> R<Flow> {
        let ispan = self.span(env, iter);
        // A runtime `@range` with runtime bounds is lowered as a counting loop.
        if !env.comptime
            && let ExprKind::Builtin { name, args } = &env.ast.exprs[iter].kind.clone()
            && name.name == "range"
        {
            return self.for_range_runtime(env, f, args, ispan);
        }
        let it = self.expr(env, iter)?;
        let items: Vec<Value> = match it {
            Val::Ct(Value::Range {
                start,
                stop,
                step,
                elem,
            }) => {
                let n = range_len(start, stop, step);
                if !env.comptime && n > MAX_UNROLL as u128 {
                    return Err(self.too_long_to_unroll(ispan, "use a typed `@range(T, ...)`"));
                }
                // Generated lazily: a comptime loop runs every iteration (or stops with the
                // fuel diagnostic), never a silently truncated prefix.
                let values = range_values(start, stop, step).map(move |i| Value::Int(i, elem));
                if env.comptime {
                    return self.ct_for(env, f, values);
                }
                values.collect()
            }
            Val::Ct(Value::Array(_, elems)) => elems.to_vec(),
            Val::Ct(Value::Struct(fields)) => fields.iter().map(|(_, v)| v.clone()).collect(),
            Val::Rt { reg, ty } if matches!(self.types.get(ty), Type::Array { .. }) => {
                return self.for_array_runtime(env, f, reg, ty);
            }
            other => {
                let t = self.val_ty(&other);
                return Err(self.err_ty(
                    codes::TYPE_MISMATCH,
                    t,
                    ispan,
                    "expected an array or a @range",
                    |d| format!("cannot iterate over a value of type {d}"),
                ));
            }
        };
        if !env.comptime && items.len() > MAX_UNROLL {
            return Err(self.too_long_to_unroll(ispan, "iterate over a typed @range instead"));
        }
        if !env.comptime {
            // A comptime sequence in runtime code: unrolled, each copy with its own
            // `continue` target.
            let ci = self.types.common.comptime_int;
            let vals = items
                .into_iter()
                .enumerate()
                .map(|(i, v)| (v, Value::Int(i as i128, ci)))
                .collect();
            self.unroll_runtime(env, f, vals);
            return Ok(Flow::Normal);
        }
        // Comptime sequence: unrolled (at comptime: executed).
        self.ct_for(env, f, items.into_iter())
    }

    /// Executes a comptime `for` over `items`, one unit of fuel per iteration.
    fn ct_for(
        &mut self,
        env: &mut Env,
        f: ForParts<'_>,
        items: impl Iterator<Item = Value>,
    ) -> R<Flow> {
        env.ct_loops.push(f.label.map(|l| l.name));
        let result = (|| {
            for (i, item) in items.enumerate() {
                self.burn(f.body.span)?;
                env.scopes.push(Vec::new());
                env.bind(f.capture.name, Local::Value(item));
                if let Some(ix) = f.index {
                    env.bind(
                        ix.name,
                        Local::Value(Value::Int(i as i128, self.types.common.comptime_int)),
                    );
                }
                let flow = self.exec_block(env, f.body);
                env.scopes.pop();
                let (stop, out) = Self::loop_flow(f.label, flow?);
                if stop {
                    return Ok(out.unwrap_or(Flow::Normal));
                }
            }
            Ok(Flow::Normal)
        })();
        env.ct_loops.pop();
        result
    }

    fn for_range_runtime(
        &mut self,
        env: &mut Env,
        f: ForParts<'_>,
        args: &[ExprId],
        span: Span,
    ) -> R<Flow> {
        // Not analysed through `Sema::builtin`: the table's arity check applies here too.
        let bi = super::builtins::info("range").ok_or(Reported)?;
        self.check_arity(bi, args.len(), span)?;
        let elem = self.eval_type(env, args[0])?;
        if elem == self.types.common.comptime_int {
            // Comptime counters: unroll.
            let saved = env.comptime;
            let it = self.expr(env, args[0]);
            env.comptime = saved;
            it?;
            let ints = args[1..].iter().map(|&a| self.eval_int(env, a));
            let ints = ints.collect::<R<Vec<i128>>>()?;
            return self.for_unrolled_range(env, f, &ints, span);
        }
        let Some(nt) = self
            .types
            .num_ty(elem)
            .filter(|_| self.types.int_info(elem).is_some())
        else {
            return Err(self.range_not_int(elem, span));
        };
        let mut vals = Vec::new();
        for &a in &args[1..] {
            let v = self.expr(env, a)?;
            let s = self.span(env, a);
            vals.push((self.coerce(env, v, elem, s)?, s));
        }
        let (start, stop, step) = if vals.len() == 1 {
            (
                Val::Ct(Value::Int(0, elem)),
                vals[0].clone(),
                Val::Ct(Value::Int(1, elem)),
            )
        } else {
            (vals[0].0.clone(), vals[1].clone(), vals[2].0.clone())
        };
        let step_v = match &step {
            Val::Ct(Value::Int(s, _)) if *s != 0 => *s,
            _ => {
                let s = vals.get(2).map_or(span, |v| v.1);
                return Err(self.err(
                    codes::UNSUPPORTED,
                    "the step of a runtime @range must be a non-zero comptime integer",
                    s,
                    "here",
                ));
            }
        };
        let counter = self.fb(env).reg();
        let start_r = self.materialize(env, start, span)?;
        self.fb(env).emit(Inst::Mov {
            dst: counter,
            src: start_r,
        });
        let stop_r = self.materialize(env, stop.0, stop.1)?;
        let step_r = self.materialize(env, step, span)?;
        let idx = f.index.map(|_| self.fb(env).reg());
        if let Some(ix) = idx {
            self.fb(env).emit(Inst::Imm { dst: ix, imm: 0 });
        }
        let header = self.fb(env).block();
        let body_b = self.fb(env).block();
        let cont_b = self.fb(env).block();
        let exit = self.fb(env).block();
        let op = if step_v > 0 { CmpOp::Lt } else { CmpOp::Gt };
        let test = (op, nt, counter, stop_r);
        self.fb(env).loop_header(header, body_b, exit, test);
        self.fb(env).mark(span);
        env.scopes.push(Vec::new());
        // The capture is a copy, so the body cannot disturb the counter.
        let cap = self.fb(env).copy(counter);
        env.bind(f.capture.name, Local::value(cap, elem));
        if let (Some(ix), Some(ident)) = (idx, f.index) {
            let u16t = self.types.common.u16;
            env.bind(ident.name, Local::value(ix, u16t));
        }
        self.loop_body(env, f.label, exit, cont_b, f.body);
        env.scopes.pop();
        self.fb(env).switch_to(cont_b);
        self.fb(env).mark(span);
        self.fb(env).bin(BinOp::Add, nt, counter, counter, step_r);
        if let Some(ix) = idx {
            let one = self.imm(env, 1);
            self.fb(env).bin(BinOp::Add, NumTy::U16, ix, ix, one);
        }
        self.fb(env).loop_back(header, exit);
        Ok(Flow::Normal)
    }

    /// A runtime `for` over a `comptime_int` `@range(start, stop, step)` given as `ints`:
    /// unrolled.
    fn for_unrolled_range(
        &mut self,
        env: &mut Env,
        f: ForParts,
        ints: &[i128],
        span: Span,
    ) -> R<Flow> {
        let (start, stop, step) = self.range_bounds(ints, span, "here")?;
        if range_len(start, stop, step) > MAX_UNROLL as u128 {
            return Err(self.too_long_to_unroll(span, "use a typed `@range(T, ...)`"));
        }
        let ci = self.types.common.comptime_int;
        let vals = range_values(start, stop, step)
            .zip(0..)
            .map(|(i, n)| (Value::Int(i, ci), Value::Int(n, ci)))
            .collect();
        self.unroll_runtime(env, f, vals);
        Ok(Flow::Normal)
    }

    /// UNSUPPORTED: a runtime `for` at `span` would unroll more than [`MAX_UNROLL`] copies.
    fn too_long_to_unroll(&mut self, span: Span, label: &str) -> Reported {
        self.err(
            codes::UNSUPPORTED,
            "this loop is too long to unroll",
            span,
            label,
        )
    }

    /// Lowers one copy of a loop body per (capture, index) pair.
    fn unroll_runtime(&mut self, env: &mut Env, f: ForParts<'_>, vals: Vec<(Value, Value)>) {
        let exit = self.fb(env).block();
        for (item, i) in vals {
            let cont = self.fb(env).block();
            env.loops.push(LoopCtx {
                label: f.label.map(|l| l.name),
                exit,
                cont,
                breaks: None,
                hint: None,
            });
            env.scopes.push(Vec::new());
            env.bind(f.capture.name, Local::Value(item));
            if let Some(ix) = f.index {
                env.bind(ix.name, Local::Value(i));
            }
            let _ = self.exec_block(env, f.body);
            env.scopes.pop();
            env.loops.pop();
            self.fb(env).jump_to(cont);
        }
        self.fb(env).jump_to(exit);
    }

    /// `for (arr) |x, i|` over a runtime array (held by address): a counting loop over
    /// every element in row-major order. Scalar elements are loaded into the capture;
    /// aggregate elements are captured by address (read-only).
    fn for_array_runtime(
        &mut self,
        env: &mut Env,
        f: ForParts<'_>,
        base: crate::ir::VReg,
        ty: TypeId,
    ) -> R<Flow> {
        let Type::Array { elem, dims } = self.types.get(ty).clone() else {
            return Err(Reported);
        };
        let n: u64 = dims.iter().product();
        let esize = self.types.size_of(elem).unwrap_or(0) as u32;
        let u16t = self.types.common.u16;
        let counter = self.imm(env, 0);
        let end = self.imm(env, n as u32);
        let header = self.fb(env).block();
        let body_b = self.fb(env).block();
        let cont_b = self.fb(env).block();
        let exit = self.fb(env).block();
        let test = (CmpOp::Lt, NumTy::U16, counter, end);
        self.fb(env).loop_header(header, body_b, exit, test);
        self.fb(env).mark(f.body.span);
        env.scopes.push(Vec::new());
        let k = self.imm(env, esize);
        let scaled = self.emit_bin(env, BinOp::Mul, NumTy::U16, counter, k);
        let addr = self.emit_bin(env, BinOp::Add, NumTy::U16, base, scaled);
        let place = Place::mem(MemBase::Reg(addr), elem, false);
        let sp = f.capture.span;
        let cap = self.read_place(env, place, sp)?;
        let Val::Rt { reg: cap, .. } = cap else {
            return Err(Reported);
        };
        env.bind(f.capture.name, Local::value(cap, elem));
        if let Some(ident) = f.index {
            let ix = self.fb(env).copy(counter);
            env.bind(ident.name, Local::value(ix, u16t));
        }
        self.loop_body(env, f.label, exit, cont_b, f.body);
        env.scopes.pop();
        self.fb(env).switch_to(cont_b);
        let one = self.imm(env, 1);
        self.fb(env)
            .bin(BinOp::Add, NumTy::U16, counter, counter, one);
        self.fb(env).loop_back(header, exit);
        Ok(Flow::Normal)
    }

    /// The `continue` target of the runtime loop a `continue [:label]` names.
    fn find_loop(&mut self, env: &Env, label: Option<&str>, span: Span) -> R<crate::ir::BlockId> {
        let found = env.loops.iter().rev().find(|l| match label {
            Some(n) => l.label.as_deref() == Some(n),
            None => l.breaks.is_none(),
        });
        match found {
            Some(l) if l.breaks.is_none() => Ok(l.cont),
            Some(_) => Err(self.err(
                codes::BREAK_OUTSIDE_LOOP,
                "`continue` must name a loop, not a block",
                span,
                "this label belongs to a block",
            )),
            None => {
                let msg = match label {
                    Some(l) => format!("`continue` to unknown label `{l}`"),
                    None => "`continue` outside a loop".to_string(),
                };
                Err(self.err(
                    codes::BREAK_OUTSIDE_LOOP,
                    msg,
                    span,
                    "no enclosing loop here",
                ))
            }
        }
    }

    fn break_stmt(
        &mut self,
        env: &mut Env,
        label: Option<&Ident>,
        value: Option<ExprId>,
        span: Span,
    ) -> R<Flow> {
        let name = label.map(|l| l.name);
        if env.comptime {
            let known = match &name {
                None => !env.ct_loops.is_empty(),
                Some(n) => {
                    env.ct_labels.contains(n)
                        || env
                            .ct_loops
                            .iter()
                            .any(|l| l.as_deref() == Some(n.as_str()))
                }
            };
            if !known {
                let msg = match &name {
                    Some(n) => format!("`break` to unknown label `{n}`"),
                    None => "`break` outside a loop".to_string(),
                };
                return Err(self.err(
                    codes::BREAK_OUTSIDE_LOOP,
                    msg,
                    span,
                    "no enclosing loop here",
                ));
            }
            let v = match value {
                Some(e) => Some(self.eval_comptime(env, e)?),
                None => None,
            };
            return Ok(Flow::Break(name, v));
        }
        self.runtime_break(env, name.as_deref(), value, span)
    }

    fn return_stmt(&mut self, env: &mut Env, value: Option<ExprId>, span: Span) -> R<Flow> {
        let r = self.return_inner(env, value, span);
        if r.is_err() && !env.comptime {
            // A bad `return` still ends the path, so no "missing return" follows.
            self.fb(env).terminate_and_continue(Term::Unreachable);
        }
        r
    }

    fn return_inner(&mut self, env: &mut Env, value: Option<ExprId>, span: Span) -> R<Flow> {
        let void = self.types.common.void;
        let ret = env.ret_ty.unwrap_or(void);
        match (value, ret == void) {
            (Some(e), true) => {
                let s = self.span(env, e);
                let v = self.expr(env, e)?;
                if matches!(v, Val::Ct(Value::Void)) {
                    return self.finish_return(env, None, span);
                }
                let t = self.val_ty(&v);
                let msg = "a `void` function cannot return a value";
                let dg = self.diag_with_type(codes::BAD_RETURN, msg, s, t);
                Err(self.report(
                    dg.with_help("remove the value, or declare the function's return type"),
                ))
            }
            (None, false) => {
                Err(
                    self.err_ty(codes::BAD_RETURN, ret, span, "returns nothing", |d| {
                        format!("missing return value of type {d}")
                    }),
                )
            }
            (None, true) => self.finish_return(env, None, span),
            (Some(e), false) => {
                let v = self.expr_hint(env, e, Some(ret))?;
                let s = self.span(env, e);
                let v = self.coerce(env, v, ret, s)?;
                self.finish_return(env, Some(v), span)
            }
        }
    }

    fn finish_return(&mut self, env: &mut Env, v: Option<Val>, span: Span) -> R<Flow> {
        if env.comptime {
            return match v {
                None => Ok(Flow::Return(None)),
                Some(Val::Ct(c)) => Ok(Flow::Return(Some(c))),
                Some(Val::Rt { .. }) => Err(self.not_comptime(span)),
            };
        }
        if env.inline_ret {
            // An inlined call's `return` leaves the inlined body like a labelled break.
            let reachable = self.fb(env).cur_reachable();
            let block = self.fb(env).cur;
            let arm = super::eval::Arm {
                block,
                val: v.unwrap_or(Val::Ct(Value::Void)),
                span,
                reachable,
            };
            if let Some(b) = env
                .loops
                .iter_mut()
                .rev()
                .find(|l| l.label.as_deref() == Some(super::eval::INLINE_RETURN))
                .and_then(|l| l.breaks.as_mut())
            {
                b.push(arm);
            }
            let next = self.fb(env).block();
            self.fb(env).switch_to(next);
            return Ok(Flow::Normal);
        }
        let r = match v {
            Some(v) => Some(self.materialize(env, v, span)?),
            None => None,
        };
        self.fb(env).terminate_and_continue(Term::Ret(r));
        Ok(Flow::Normal)
    }

    /// A block used as an expression (`{}` or `blk: { ... break :blk v; }`).
    pub fn block_expr(
        &mut self,
        env: &mut Env,
        block: &Block,
        span: Span,
        hint: Option<TypeId>,
    ) -> R<Val> {
        if block.stmts.is_empty() {
            return Ok(Val::Ct(Value::Void));
        }
        if !env.comptime {
            if block.label.is_some() {
                return self.runtime_labelled_block(env, block, span, hint, true);
            }
            // An unlabelled block (e.g. a switch arm): its statements, no value.
            self.exec_block(env, block)?;
            return Ok(Val::Ct(Value::Void));
        }
        env.scopes.push(Vec::new());
        let label = block.label.as_ref().map(|l| l.name);
        if let Some(l) = label {
            env.ct_labels.push(l);
        }
        let mut out = Ok(Val::Ct(Value::Void));
        for s in &block.stmts {
            if let Err(e) = self.burn(s.span) {
                out = Err(e);
                break;
            }
            match self.stmt(env, s) {
                Ok(Flow::Normal) => {}
                Ok(Flow::Break(l, v)) if l.is_some() && l == label => {
                    out = Ok(Val::Ct(v.unwrap_or(Value::Void)));
                    break;
                }
                Ok(_) => {
                    out = Err(self.err(
                        codes::UNSUPPORTED,
                        "control flow out of a block expression",
                        s.span,
                        "here",
                    ));
                    break;
                }
                Err(e) => {
                    out = Err(e);
                    break;
                }
            }
        }
        if label.is_some() {
            env.ct_labels.pop();
        }
        env.scopes.pop();
        out
    }
}

/// The values of `@range(start, stop, step)` in order (`step` is non-zero), stopping
/// rather than overflowing at the ends of `i128`.
fn range_values(start: i128, stop: i128, step: i128) -> impl Iterator<Item = i128> {
    std::iter::successors(Some(start), move |&i| i.checked_add(step))
        .take_while(move |&i| (step > 0 && i < stop) || (step < 0 && i > stop))
}

fn range_len(start: i128, stop: i128, step: i128) -> u128 {
    if step > 0 && stop > start {
        ((stop - start + step - 1) / step) as u128
    } else if step < 0 && stop < start {
        ((start - stop - step - 1) / -step) as u128
    } else {
        0
    }
}
