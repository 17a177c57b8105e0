//! `@map(callback, inputs..., [output])` over memory DSDs, lowered to a loop.

use crate::diag::codes;
use crate::ir::{Inst, VReg};
use crate::sema::eval::{Env, Val};
use crate::sema::types::Type;
use crate::sema::value::Value;
use crate::sema::{R, Reported, Sema};
use crate::source::Span;
use crate::syntax::ast::ExprId;
use csl_arch::dsd::field;
use csl_arch::isa::{BinOp, CmpOp, NumTy, Width};

impl Sema {
    /// The descriptor address of the mem1d DSD operand `v` of `@map`; the first one sets
    /// the loop's length `len`.
    fn map_dsd(&mut self, env: &mut Env, v: Val, span: Span, len: &mut Option<VReg>) -> R<VReg> {
        let addr = self.materialize(env, v, span)?;
        if len.is_none() {
            *len = Some(self.load_desc_field(env, addr, field::LENGTH));
        }
        Ok(addr)
    }

    /// `@map(callback, inputs..., [output])` over memory DSDs: lowered to a loop that loads
    /// one element of every DSD input, calls `callback`, and stores its result.
    pub fn b_map(&mut self, env: &mut Env, args: &[ExprId], span: Span) -> R<Val> {
        let cspan = self.span(env, args[0]);
        let fd = self.func_arg(
            env,
            args[0],
            "the first argument of @map must be a function",
        )?;
        self.runtime_only(env, span)?;
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
            let (v, vt) = self.expr_typed(env, a)?;
            match self.types.get(vt).clone() {
                Type::Mem1dDsd => {
                    let addr = self.map_dsd(env, v, aspan, &mut len)?;
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
                let (v, vt) = self.expr_typed(env, o)?;
                match self.types.get(vt).clone() {
                    Type::Mem1dDsd => Some((self.map_dsd(env, v, ospan, &mut len)?, true)),
                    // A pointer output receives every result (the last one wins; with the
                    // same pointer as an input this is a reduction).
                    Type::Ptr {
                        elem,
                        is_const: false,
                    } if elem == ret => Some((self.materialize(env, v, ospan)?, false)),
                    _ => {
                        return Err(self.arg_ty_err(vt, ospan, "wrong output", |d| {
                            format!("the output of @map must be a mem1d_dsd or a pointer to the callback's result type, found {d}")
                        }));
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
        let test = (CmpOp::Lt, NumTy::U16, k, len);
        self.fb(env).loop_header(header, body, exit, test);
        let mut call_args = Vec::new();
        let mut ci = 0;
        for (i, &pty) in ins.iter().zip(&ptys) {
            match i {
                In::Val(r) => call_args.push(*r),
                In::Dsd(..) => {
                    let (ptr, _) = cursors[ci];
                    ci += 1;
                    let w = self.types.num_ty(pty).map_or(Width::W32, |n| n.width());
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
            let w = self.types.num_ty(ret).map_or(Width::W32, |n| n.width());
            self.fb(env).emit(Inst::Store {
                w,
                addr: ptr,
                src: r,
            });
        }
        for (ptr, step) in cursors.iter().chain(out_cursor.iter()) {
            self.fb(env).bin(BinOp::Add, NumTy::U16, *ptr, *ptr, *step);
        }
        self.fb(env).bin(BinOp::Add, NumTy::U16, k, k, one);
        self.fb(env).loop_back(header, exit);
        Ok(Val::Ct(Value::Void))
    }

    pub(super) fn load_desc_field(&mut self, env: &mut Env, desc: VReg, off: u32) -> VReg {
        let o = self.imm(env, off);
        let a = self.emit_bin(env, BinOp::Add, NumTy::U16, desc, o);
        let dst = self.fb(env).reg();
        self.fb(env).emit(Inst::Load {
            w: Width::W16,
            dst,
            addr: a,
        });
        dst
    }

    /// A pointer register at the descriptor's base and the byte step per element.
    pub(super) fn dsd_cursor(&mut self, env: &mut Env, desc: VReg, esize: u32) -> (VReg, VReg) {
        let base = self.load_desc_field(env, desc, field::BASE);
        let ptr = self.fb(env).copy(base);
        let stride = self.load_desc_field(env, desc, field::STRIDE);
        let e = self.imm(env, esize);
        let step = self.emit_bin(env, BinOp::Mul, NumTy::U16, stride, e);
        (ptr, step)
    }
}
