//! Statements: executed directly in comptime environments, lowered to IR control flow in
//! runtime environments. A comptime-known `if`/`while` condition prunes the untaken code
//! in both.

use super::eval::{Env, Local, LoopCtx, Val};
use super::types::Type;
use super::value::Value;
use super::{R, Reported, Sema};
use crate::diag::{Diagnostic, codes};
use crate::ir::{Inst, Term};
use crate::source::Span;
use crate::syntax::ast::{AssignOp, Block, ExprId, ExprKind, Ident, Mutability, Stmt, StmtKind, SwitchCase, SwitchItem, VarDecl};
use csl_arch::isa::{BinOp, CmpOp, NumTy};

/// How a comptime statement finished.
#[derive(Debug)]
pub enum Flow {
    /// Fell through.
    Normal,
    /// `break [:label] [value]`.
    Break(Option<String>, Option<Value>),
    /// `continue [:label]`.
    Continue(Option<String>),
    /// `return [value]`.
    Return(Option<Value>),
}

/// Most iterations a runtime `for` over a comptime-only sequence is unrolled.
const MAX_UNROLL: usize = 1024;

impl Sema {
    /// Runs or lowers a block in a new scope.
    pub fn exec_block(&mut self, env: &mut Env, block: &Block) -> R<Flow> {
        env.scopes.push(Vec::new());
        if let Some(l) = &block.label {
            env.ct_labels.push(l.name.clone());
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

    fn stmt(&mut self, env: &mut Env, s: &Stmt) -> R<Flow> {
        match &s.kind {
            StmtKind::Local(v) => {
                self.local(env, v, s.span)?;
                Ok(Flow::Normal)
            }
            StmtKind::Expr(e) => {
                self.expr(env, *e)?;
                Ok(Flow::Normal)
            }
            StmtKind::Assign { op, target, value } => {
                self.assign(env, *op, *target, *value, s.span)?;
                Ok(Flow::Normal)
            }
            StmtKind::If { cond, then, otherwise } => self.if_stmt(env, *cond, then, otherwise.as_ref()),
            StmtKind::While { label, cond, cont, body } => self.while_stmt(env, label.as_ref(), *cond, cont.as_deref(), body),
            StmtKind::For { label, iter, capture, index, body } => self.for_stmt(env, label.as_ref(), *iter, capture, index.as_ref(), body),
            StmtKind::Break { label, value } => self.break_stmt(env, label.as_ref(), *value, s.span),
            StmtKind::Continue { label } => {
                let name = label.as_ref().map(|l| l.name.clone());
                if env.comptime {
                    if env.ct_loops.is_empty() {
                        return Err(self.err(codes::BREAK_OUTSIDE_LOOP, "`continue` outside a loop", s.span, "not inside a loop"));
                    }
                    return Ok(Flow::Continue(name));
                }
                let Some(target) = self.find_loop(env, name.as_deref(), s.span, "continue")? else { return Err(Reported) };
                self.fb(env).terminate_and_continue(Term::Jump(target.1));
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
            && scope.iter().any(|(n, _)| *n == v.name.name)
        {
            return Err(self.err(codes::DUPLICATE_DECL, format!("`{}` is already declared in this block", v.name.name), v.name.span, "declared again here"));
        }
        let declared = match v.ty {
            Some(t) => Some(self.eval_type(env, t)?),
            None => None,
        };
        let comptime_binding = env.comptime || v.mutability == Mutability::ComptimeVar;
        if comptime_binding {
            let val = match v.init {
                Some(e) => self.eval_comptime(env, e)?,
                None => return Err(self.err(codes::NOT_COMPTIME, "a comptime variable needs an initial value", v.name.span, "here")),
            };
            let val = match declared {
                Some(t) => {
                    let s = v.init.map_or(span, |e| self.span(env, e));
                    self.coerce_value(val, t, s)?
                }
                None => val,
            };
            let local = if v.mutability == Mutability::Const { Local::Value(val) } else { Local::CtVar(val) };
            env.bind(&v.name.name, local);
            return Ok(());
        }
        let init = match v.init {
            Some(e) => {
                let val = self.expr(env, e)?;
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
            (None, None) => return Err(self.err(codes::NOT_A_TYPE, "a variable needs a type or an initial value", v.name.span, "here")),
        };
        if v.mutability == Mutability::Const
            && let Some((Val::Ct(c), _)) = &init
        {
            env.bind(&v.name.name, Local::Value(c.clone()));
            return Ok(());
        }
        if self.types.num_ty(ty).is_some() {
            let reg = self.fb(env).reg();
            match init {
                Some((val, s)) => {
                    let src = self.materialize(env, val, s)?;
                    self.fb(env).emit(Inst::Mov { dst: reg, src });
                }
                None => self.fb(env).emit(Inst::Imm { dst: reg, imm: 0 }),
            }
            env.bind(&v.name.name, Local::Reg { reg, ty, mutable: v.mutability != Mutability::Const });
            return Ok(());
        }
        // Aggregates live in the frame.
        let (Some(size), Some(align)) = (self.types.size_of(ty), self.types.align_of(ty)) else {
            let d = self.types.display(ty);
            if self.types.is_comptime_only(ty) {
                let hint = if v.mutability == Mutability::Var { "declare it `const` or `comptime var`" } else { "" };
                let mut dg = Diagnostic::error(codes::NOT_COMPTIME, format!("a runtime variable cannot have the comptime-only type {d}"), v.name.span, "declared here");
                if !hint.is_empty() {
                    dg = dg.with_help(hint);
                }
                return Err(self.report(dg));
            }
            return Err(self.err(codes::UNSUPPORTED, format!("local variables of type {d} are not supported yet"), v.name.span, "declared here"));
        };
        let off = self.fb(env).frame_slot(size as u32, align as u32);
        if self.types.get(ty).is_dsd() {
            // A descriptor variable: a frame slot holding a copy of the descriptor.
            if let Some((val, s)) = init {
                let src = self.materialize(env, val, s)?;
                let dst = self.fb(env).reg();
                self.fb(env).emit(Inst::FrameAddr { dst, off });
                self.fb(env).emit(Inst::Copy { dst, src, bytes: size as u16 });
            }
            env.bind(&v.name.name, Local::Frame { off, ty, mutable: v.mutability != Mutability::Const });
            return Ok(());
        }
        if let Some((val, s)) = init {
            let Val::Ct(Value::Array(_, elems)) = val else {
                return Err(self.err(codes::UNSUPPORTED, "a local array must be initialised with a comptime value", s, "here"));
            };
            let Type::Array { elem, .. } = self.types.get(ty).clone() else { return Err(Reported) };
            let esize = self.types.size_of(elem).unwrap_or(0) as u32;
            let nt = self.types.num_ty(elem).unwrap_or(NumTy::U16);
            for (i, e) in elems.iter().enumerate() {
                let bits = self.scalar_bits(e, s)?;
                let addr = self.fb(env).reg();
                self.fb(env).emit(Inst::FrameAddr { dst: addr, off: off + i as u32 * esize });
                let src = self.imm(env, bits);
                self.fb(env).emit(Inst::Store { w: nt.width(), addr, src });
            }
        }
        env.bind(&v.name.name, Local::Frame { off, ty, mutable: v.mutability != Mutability::Const });
        Ok(())
    }

    fn assign(&mut self, env: &mut Env, op: AssignOp, target: ExprId, value: ExprId, span: Span) -> R<()> {
        let tspan = self.span(env, target);
        let vspan = self.span(env, value);
        let place = self.place(env, target)?;
        let v = self.expr(env, value)?;
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
        let c = self.expr(env, cond)?;
        let s = self.span(env, cond);
        let b = self.types.common.bool_;
        self.coerce(env, c, b, s)
    }

    fn if_stmt(&mut self, env: &mut Env, cond: ExprId, then: &Block, otherwise: Option<&Block>) -> R<Flow> {
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
                let eb = if otherwise.is_some() { self.fb(env).block() } else { join };
                self.fb(env).terminate(Term::Branch { cond: reg, then: tb, otherwise: eb });
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

    /// Handles a comptime loop body's flow; returns `Some(flow)` when the loop must stop
    /// and propagate `flow` (or stop normally with `Flow::Normal`).
    fn loop_flow(label: Option<&Ident>, flow: Flow) -> (bool, Option<Flow>) {
        let mine = |l: &Option<String>| l.is_none() || l.as_deref() == label.map(|x| x.name.as_str());
        match flow {
            Flow::Normal => (false, None),
            Flow::Continue(l) if mine(&l) => (false, None),
            Flow::Break(l, _) if mine(&l) => (true, Some(Flow::Normal)),
            other => (true, Some(other)),
        }
    }

    fn while_stmt(&mut self, env: &mut Env, label: Option<&Ident>, cond: ExprId, cont: Option<&Stmt>, body: &Block) -> R<Flow> {
        if env.comptime {
            env.ct_loops.push(label.map(|l| l.name.clone()));
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
        self.fb(env).terminate(Term::Jump(header));
        self.fb(env).switch_to(header);
        match self.cond(env, cond)? {
            Val::Ct(Value::Bool(false)) => {
                self.fb(env).terminate(Term::Jump(exit));
                self.fb(env).switch_to(exit);
                return Ok(Flow::Normal);
            }
            Val::Ct(_) => self.fb(env).terminate(Term::Jump(body_b)),
            Val::Rt { reg, .. } => self.fb(env).terminate(Term::Branch { cond: reg, then: body_b, otherwise: exit }),
        }
        self.fb(env).switch_to(body_b);
        env.loops.push(LoopCtx { label: label.map(|l| l.name.clone()), exit, cont: cont_b });
        let _ = self.exec_block(env, body);
        env.loops.pop();
        self.fb(env).terminate(Term::Jump(cont_b));
        self.fb(env).switch_to(cont_b);
        if let Some(c) = cont {
            let _ = self.stmt(env, c);
        }
        self.fb(env).terminate(Term::Jump(header));
        self.fb(env).switch_to(exit);
        Ok(Flow::Normal)
    }

    fn for_stmt(&mut self, env: &mut Env, label: Option<&Ident>, iter: ExprId, capture: &Ident, index: Option<&Ident>, body: &Block) -> R<Flow> {
        let ispan = self.span(env, iter);
        // A runtime `@range` with runtime bounds is lowered as a counting loop.
        if !env.comptime
            && let ExprKind::Builtin { name, args } = &env.ast.exprs[iter].kind.clone()
            && name.name == "range"
        {
            return self.for_range_runtime(env, label, args, capture, index, body, ispan);
        }
        let it = self.expr(env, iter)?;
        let items: Vec<Value> = match it {
            Val::Ct(Value::Range { start, stop, step, elem }) => {
                let n = range_len(start, stop, step);
                if !env.comptime && n > MAX_UNROLL as u128 {
                    return Err(self.err(codes::UNSUPPORTED, "this loop is too long to unroll", ispan, "use a typed `@range(T, ...)`"));
                }
                let mut v = Vec::new();
                let mut i = start;
                while (step > 0 && i < stop) || (step < 0 && i > stop) {
                    v.push(Value::Int(i, elem));
                    if v.len() > 1 << 20 {
                        break;
                    }
                    i += step;
                }
                v
            }
            Val::Ct(Value::Array(_, elems)) => elems.to_vec(),
            Val::Ct(Value::Struct(fields)) => fields.iter().map(|(_, v)| v.clone()).collect(),
            Val::Ct(other) => {
                let t = other.ty(&mut self.types);
                let d = self.types.display(t);
                return Err(self.err(codes::TYPE_MISMATCH, format!("cannot iterate over a value of type {d}"), ispan, "expected an array or a @range"));
            }
            Val::Rt { ty, .. } => {
                let d = self.types.display(ty);
                return Err(self.err(codes::UNSUPPORTED, format!("iterating over a runtime {d} is not supported yet"), ispan, "index it in a range loop instead"));
            }
        };
        if !env.comptime && items.len() > MAX_UNROLL {
            return Err(self.err(codes::UNSUPPORTED, "this loop is too long to unroll", ispan, "iterate over a typed @range instead"));
        }
        // Comptime sequence: unrolled (at comptime: executed).
        env.ct_loops.push(label.map(|l| l.name.clone()));
        let result = (|| {
            for (i, item) in items.into_iter().enumerate() {
                self.burn(body.span)?;
                env.scopes.push(Vec::new());
                env.bind(&capture.name, Local::Value(item));
                if let Some(ix) = index {
                    env.bind(&ix.name, Local::Value(Value::Int(i as i128, self.types.common.comptime_int)));
                }
                let flow = self.exec_block(env, body);
                env.scopes.pop();
                let (stop, out) = Self::loop_flow(label, flow?);
                if stop {
                    return Ok(out.unwrap_or(Flow::Normal));
                }
            }
            Ok(Flow::Normal)
        })();
        env.ct_loops.pop();
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn for_range_runtime(&mut self, env: &mut Env, label: Option<&Ident>, args: &[ExprId], capture: &Ident, index: Option<&Ident>, body: &Block, span: Span) -> R<Flow> {
        if args.len() != 2 && args.len() != 4 {
            return Err(self.err(codes::BUILTIN_ARGS, "@range takes (T, stop) or (T, start, stop, step)", span, "wrong number of arguments"));
        }
        let elem = self.eval_type(env, args[0])?;
        if elem == self.types.common.comptime_int {
            // Comptime counters: unroll.
            let saved = env.comptime;
            let it = self.expr(env, args[0]);
            env.comptime = saved;
            it?;
            return self.for_unrolled_range(env, label, args, capture, index, body, span);
        }
        let Some(nt) = self.types.num_ty(elem).filter(|_| self.types.int_info(elem).is_some()) else {
            let d = self.types.display(elem);
            return Err(self.err(codes::TYPE_MISMATCH, format!("@range needs an integer type, found {d}"), span, "here"));
        };
        let mut vals = Vec::new();
        for &a in &args[1..] {
            let v = self.expr(env, a)?;
            let s = self.span(env, a);
            vals.push((self.coerce(env, v, elem, s)?, s));
        }
        let (start, stop, step) = if vals.len() == 1 {
            (Val::Ct(Value::Int(0, elem)), vals[0].clone(), Val::Ct(Value::Int(1, elem)))
        } else {
            (vals[0].0.clone(), vals[1].clone(), vals[2].0.clone())
        };
        let step_v = match &step {
            Val::Ct(Value::Int(s, _)) if *s != 0 => *s,
            _ => {
                let s = vals.get(2).map_or(span, |v| v.1);
                return Err(self.err(codes::UNSUPPORTED, "the step of a runtime @range must be a non-zero comptime integer", s, "here"));
            }
        };
        let counter = self.fb(env).reg();
        let start_r = self.materialize(env, start, span)?;
        self.fb(env).emit(Inst::Mov { dst: counter, src: start_r });
        let stop_r = self.materialize(env, stop.0, stop.1)?;
        let step_r = self.materialize(env, step, span)?;
        let idx = index.map(|_| self.fb(env).reg());
        if let Some(ix) = idx {
            self.fb(env).emit(Inst::Imm { dst: ix, imm: 0 });
        }
        let header = self.fb(env).block();
        let body_b = self.fb(env).block();
        let cont_b = self.fb(env).block();
        let exit = self.fb(env).block();
        self.fb(env).terminate(Term::Jump(header));
        self.fb(env).switch_to(header);
        let c = self.fb(env).reg();
        let op = if step_v > 0 { CmpOp::Lt } else { CmpOp::Gt };
        self.fb(env).emit(Inst::Cmp { op, ty: nt, dst: c, a: counter, b: stop_r });
        self.fb(env).terminate(Term::Branch { cond: c, then: body_b, otherwise: exit });
        self.fb(env).switch_to(body_b);
        env.scopes.push(Vec::new());
        // The capture is a copy, so the body cannot disturb the counter.
        let cap = self.fb(env).reg();
        self.fb(env).emit(Inst::Mov { dst: cap, src: counter });
        env.bind(&capture.name, Local::Reg { reg: cap, ty: elem, mutable: false });
        if let (Some(ix), Some(ident)) = (idx, index) {
            let u16t = self.types.common.u16;
            env.bind(&ident.name, Local::Reg { reg: ix, ty: u16t, mutable: false });
        }
        env.loops.push(LoopCtx { label: label.map(|l| l.name.clone()), exit, cont: cont_b });
        let _ = self.exec_block(env, body);
        env.loops.pop();
        env.scopes.pop();
        self.fb(env).terminate(Term::Jump(cont_b));
        self.fb(env).switch_to(cont_b);
        self.fb(env).emit(Inst::Bin { op: BinOp::Add, ty: nt, dst: counter, a: counter, b: step_r });
        if let Some(ix) = idx {
            let one = self.imm(env, 1);
            self.fb(env).emit(Inst::Bin { op: BinOp::Add, ty: NumTy::U16, dst: ix, a: ix, b: one });
        }
        self.fb(env).terminate(Term::Jump(header));
        self.fb(env).switch_to(exit);
        Ok(Flow::Normal)
    }

    #[allow(clippy::too_many_arguments)]
    fn for_unrolled_range(&mut self, env: &mut Env, label: Option<&Ident>, args: &[ExprId], capture: &Ident, index: Option<&Ident>, body: &Block, span: Span) -> R<Flow> {
        let mut ints = Vec::new();
        for &a in &args[1..] {
            ints.push(self.eval_int(env, a)?);
        }
        let (start, stop, step) = if ints.len() == 1 { (0, ints[0], 1) } else { (ints[0], ints[1], ints[2]) };
        if step == 0 {
            return Err(self.err(codes::BUILTIN_ARGS, "@range step must not be zero", span, "here"));
        }
        if range_len(start, stop, step) > MAX_UNROLL as u128 {
            return Err(self.err(codes::UNSUPPORTED, "this loop is too long to unroll", span, "use a typed `@range(T, ...)`"));
        }
        let ci = self.types.common.comptime_int;
        let mut i = start;
        let mut n = 0;
        env.ct_loops.push(label.map(|l| l.name.clone()));
        while (step > 0 && i < stop) || (step < 0 && i > stop) {
            env.scopes.push(Vec::new());
            env.bind(&capture.name, Local::Value(Value::Int(i, ci)));
            if let Some(ix) = index {
                env.bind(&ix.name, Local::Value(Value::Int(n, ci)));
            }
            let _ = self.exec_block(env, body);
            env.scopes.pop();
            i += step;
            n += 1;
        }
        env.ct_loops.pop();
        Ok(Flow::Normal)
    }

    /// Finds the runtime loop a `break`/`continue` targets: (exit, continue) blocks.
    fn find_loop(&mut self, env: &Env, label: Option<&str>, span: Span, what: &str) -> R<Option<(crate::ir::BlockId, crate::ir::BlockId)>> {
        let found = env.loops.iter().rev().find(|l| label.is_none() || l.label.as_deref() == label);
        match found {
            Some(l) => Ok(Some((l.exit, l.cont))),
            None => {
                let msg = match label {
                    Some(l) => format!("`{what}` to unknown label `{l}`"),
                    None => format!("`{what}` outside a loop"),
                };
                Err(self.err(codes::BREAK_OUTSIDE_LOOP, msg, span, "no enclosing loop here"))
            }
        }
    }

    fn break_stmt(&mut self, env: &mut Env, label: Option<&Ident>, value: Option<ExprId>, span: Span) -> R<Flow> {
        let name = label.map(|l| l.name.clone());
        if env.comptime {
            let known = match &name {
                None => !env.ct_loops.is_empty(),
                Some(n) => env.ct_labels.contains(n) || env.ct_loops.iter().any(|l| l.as_deref() == Some(n.as_str())),
            };
            if !known {
                let msg = match &name {
                    Some(n) => format!("`break` to unknown label `{n}`"),
                    None => "`break` outside a loop".to_string(),
                };
                return Err(self.err(codes::BREAK_OUTSIDE_LOOP, msg, span, "no enclosing loop here"));
            }
            let v = match value {
                Some(e) => Some(self.eval_comptime(env, e)?),
                None => None,
            };
            return Ok(Flow::Break(name, v));
        }
        if value.is_some() {
            return Err(self.err(codes::UNSUPPORTED, "`break` with a value in runtime code is not supported yet", span, "here"));
        }
        let Some((exit, _)) = self.find_loop(env, name.as_deref(), span, "break")? else { return Err(Reported) };
        self.fb(env).terminate_and_continue(Term::Jump(exit));
        Ok(Flow::Normal)
    }

    fn return_stmt(&mut self, env: &mut Env, value: Option<ExprId>, span: Span) -> R<Flow> {
        let void = self.types.common.void;
        let ret = env.ret_ty.unwrap_or(void);
        match (value, ret == void) {
            (Some(e), true) => {
                let s = self.span(env, e);
                let v = self.expr(env, e)?;
                if matches!(v, Val::Ct(Value::Void)) {
                    return self.finish_return(env, None, span);
                }
                Err(self.err(codes::BAD_RETURN, "a `void` function cannot return a value", s, "remove this value"))
            }
            (None, false) => {
                let d = self.types.display(ret);
                Err(self.err(codes::BAD_RETURN, format!("missing return value of type {d}"), span, "returns nothing"))
            }
            (None, true) => self.finish_return(env, None, span),
            (Some(e), false) => {
                let v = self.expr(env, e)?;
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
        let r = match v {
            Some(v) => Some(self.materialize(env, v, span)?),
            None => None,
        };
        self.fb(env).terminate_and_continue(Term::Ret(r));
        Ok(Flow::Normal)
    }

    /// A block used as an expression (`{}` or `blk: { ... break :blk v; }`).
    pub fn block_expr(&mut self, env: &mut Env, block: &Block, span: Span) -> R<Val> {
        if block.stmts.is_empty() {
            return Ok(Val::Ct(Value::Void));
        }
        if !env.comptime {
            return Err(self.err(codes::UNSUPPORTED, "block expressions in runtime code are not supported yet", span, "here"));
        }
        env.scopes.push(Vec::new());
        let label = block.label.as_ref().map(|l| l.name.clone());
        if let Some(l) = &label {
            env.ct_labels.push(l.clone());
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
                    out = Err(self.err(codes::UNSUPPORTED, "control flow out of a block expression", s.span, "here"));
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

    /// `switch`: comptime scrutinees select one case; runtime ones lower to a compare chain
    /// (value-less cases only).
    pub fn switch(&mut self, env: &mut Env, scrutinee: ExprId, cases: &[SwitchCase], span: Span, _want_value: bool) -> R<Val> {
        let sv = self.expr(env, scrutinee)?;
        let sspan = self.span(env, scrutinee);
        let sty = self.val_ty(&sv);
        if sty == self.types.common.comptime_int {
            return Err(self.err(codes::TYPE_MISMATCH, "switch on an untyped integer", sspan, "give it a fixed-width type with @as"));
        }
        let has_else = cases.iter().any(|c| c.items.is_empty());
        match sv {
            Val::Ct(v) => {
                for case in cases {
                    for item in &case.items {
                        if self.item_matches(env, &v, sty, item)? {
                            return self.expr(env, case.body);
                        }
                    }
                }
                if let Some(c) = cases.iter().find(|c| c.items.is_empty()) {
                    return self.expr(env, c.body);
                }
                Err(self.non_exhaustive(sty, span))
            }
            Val::Rt { reg, ty } => {
                if !has_else && self.types.int_info(ty).is_some() {
                    return Err(self.non_exhaustive(sty, span));
                }
                let nt = self.types.num_ty(ty).unwrap_or(NumTy::U16);
                let join = self.fb(env).block();
                for case in cases.iter().filter(|c| !c.items.is_empty()) {
                    let body_b = self.fb(env).block();
                    for item in &case.items {
                        let next = self.fb(env).block();
                        let SwitchItem::Value(iv) = item else {
                            return Err(self.err(codes::UNSUPPORTED, "range cases in runtime switches are not supported yet", case.span, "here"));
                        };
                        let v = self.eval_comptime(env, *iv)?;
                        let s = self.span(env, *iv);
                        let v = self.coerce_value(v, ty, s)?;
                        let k = self.materialize(env, Val::Ct(v), s)?;
                        let c = self.fb(env).reg();
                        self.fb(env).emit(Inst::Cmp { op: CmpOp::Eq, ty: nt, dst: c, a: reg, b: k });
                        self.fb(env).terminate(Term::Branch { cond: c, then: body_b, otherwise: next });
                        self.fb(env).switch_to(next);
                    }
                    let fallthrough = self.fb(env).cur;
                    self.fb(env).switch_to(body_b);
                    self.expr(env, case.body)?;
                    self.fb(env).terminate(Term::Jump(join));
                    self.fb(env).switch_to(fallthrough);
                }
                if let Some(c) = cases.iter().find(|c| c.items.is_empty()) {
                    self.expr(env, c.body)?;
                }
                self.fb(env).terminate(Term::Jump(join));
                self.fb(env).switch_to(join);
                Ok(Val::Ct(Value::Void))
            }
        }
    }

    fn non_exhaustive(&mut self, ty: super::types::TypeId, span: Span) -> Reported {
        let d = self.types.display(ty);
        self.report(
            Diagnostic::error(codes::NON_EXHAUSTIVE, format!("switch on {d} is not exhaustive"), span, "some values have no case")
                .with_help("add an `else => ...` case"),
        )
    }

    fn item_matches(&mut self, env: &mut Env, v: &Value, ty: super::types::TypeId, item: &SwitchItem) -> R<bool> {
        match item {
            SwitchItem::Value(e) => {
                let iv = self.eval_comptime(env, *e)?;
                let s = self.span(env, *e);
                let iv = self.coerce_value(iv, ty, s)?;
                Ok(iv.canonical(&self.types) == v.canonical(&self.types))
            }
            SwitchItem::Range(a, b) => {
                let lo = self.eval_int(env, *a)?;
                let hi = self.eval_int(env, *b)?;
                Ok(matches!(v, Value::Int(x, _) if lo <= *x && *x <= hi))
            }
        }
    }
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
