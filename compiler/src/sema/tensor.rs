//! Tensor access expressions `|i, j|{M, N} -> A[f(i, j), g(i, j)]`.
//!
//! A tensor access is evaluated at comptime into the anonymous struct the documentation
//! says it expands to, which `@get_dsd` (and any `comptime_struct` consumer) reads:
//!
//! ```text
//! .{
//!   .base_address = &A,            // *[dims]T, a comptime pointer to the whole array
//!   .offset = k,                   // i16: elements from the start of A to the first access
//!   .extent = .{ M, N },           // u16 each, one per variable, outermost first
//!   .stride = .{ sN, sM },         // i16 each, innermost first (see below)
//! }
//! ```
//!
//! Every index must be affine in the variables. The element address is `offset + Σ a_v·v`
//! (row-major over A's dimensions). `stride` follows the `mem4d_dsd` convention: listed
//! innermost first, each entry is the address step taken when that variable increments
//! after every inner variable wrapped around, so `|i, j|{5, 5} -> A[2*i + j]` has
//! `.stride = .{ 1, -2 }`. With one variable, `.stride = .{ a }`.

use super::call::counted;
use super::eval::{Env, Local};
use super::types::Type;
use super::value::Value;
use super::{R, Reported, Sema};
use crate::diag::{Diagnostic, codes};
use crate::source::Span;
use crate::symbol::Symbol;
use crate::syntax::ast::{ExprId, ExprKind, Ident};
use std::rc::Rc;

impl Sema {
    /// Evaluates a tensor access expression (see the module docs).
    pub(crate) fn tensor_access(
        &mut self,
        env: &mut Env,
        vars: &[Ident],
        extents: &[ExprId],
        access: ExprId,
        span: Span,
    ) -> R<Value> {
        if vars.len() != extents.len() {
            let (v, e) = (
                counted(vars.len(), "index variable"),
                counted(extents.len(), "extent"),
            );
            let dg = Diagnostic::error(
                codes::BAD_TENSOR_ACCESS,
                format!("{v} but {e}"),
                span,
                "every variable needs one extent",
            );
            return Err(self.report(
                dg.with_help("write one extent per variable, e.g. `|i, j|{M, N} -> A[i, j]`"),
            ));
        }
        if vars.is_empty() || vars.len() > 4 {
            return Err(self.err(
                codes::BAD_TENSOR_ACCESS,
                "a tensor access has 1 to 4 index variables",
                span,
                "wrong number of variables",
            ));
        }
        for (i, v) in vars.iter().enumerate() {
            if let Some(prev) = vars[..i].iter().find(|p| p.name == v.name) {
                return Err(self.report(Diagnostic::twice(
                    codes::DUPLICATE_DECL,
                    format!("index variable `{}`", v.name),
                    "declared",
                    v.span,
                    prev.span,
                )));
            }
        }
        let mut ext = Vec::new();
        for &x in extents {
            let n = self.eval_int(env, x)?;
            if !(1..=i128::from(u16::MAX)).contains(&n) {
                let s = self.span(env, x);
                return Err(self.err(
                    codes::OUT_OF_RANGE,
                    format!("extent {n} is out of range"),
                    s,
                    "an extent is 1 to 65535",
                ));
            }
            ext.push(n);
        }
        let aspan = self.span(env, access);
        let ExprKind::Index { base, indices } = env.ast.exprs[access].kind.clone() else {
            return Err(self.report(
                Diagnostic::error(
                    codes::BAD_TENSOR_ACCESS,
                    "a tensor access must index an array",
                    aspan,
                    "not an index expression",
                )
                .with_help("write the accessed element, e.g. `-> A[i]`"),
            ));
        };
        let bspan = self.span(env, base);
        let ptr = match self.addr_of_for_tensor(env, base, bspan)? {
            Value::GlobalPtr { global, offset, ty } => (global, offset, ty),
            _ => {
                return Err(self.err(
                    codes::BAD_TENSOR_ACCESS,
                    "the array of a tensor access must be a global variable",
                    bspan,
                    "not a global array",
                ));
            }
        };
        let Type::Ptr { elem: arr_ty, .. } = self.types.get(ptr.2).clone() else {
            return Err(Reported);
        };
        let Type::Array { dims, .. } = self.types.get(arr_ty).clone() else {
            let d = self.types.display(arr_ty);
            let msg = format!("a tensor access must index an array, not {d}");
            return Err(self.err_with_type(codes::BAD_TENSOR_ACCESS, msg, bspan, arr_ty));
        };
        if indices.len() != dims.len() {
            let ind = if indices.len() == 1 {
                "index"
            } else {
                "indices"
            };
            let msg = format!(
                "array of rank {} indexed with {} {ind}",
                dims.len(),
                indices.len()
            );
            let dg = Diagnostic::error(
                codes::BAD_TENSOR_ACCESS,
                msg,
                aspan,
                "wrong number of indices",
            );
            return Err(self.report(dg.with_help("give one index per dimension of the array")));
        }
        // Each index as an affine function c + Σ a_v·v, checked at the corners of the box.
        let n = vars.len();
        let mut flat_c: i128 = 0;
        let mut flat_a = vec![0i128; n];
        for (k, &ix) in indices.iter().enumerate() {
            let zero = vec![0i128; n];
            let c = self.eval_at(env, vars, ix, &zero)?;
            let mut a = vec![0i128; n];
            for j in 0..n {
                let mut p = zero.clone();
                p[j] = 1;
                a[j] = self.eval_at(env, vars, ix, &p)?.saturating_sub(c);
            }
            let mut probes: Vec<Vec<i128>> = Vec::new();
            for j in 0..n {
                let mut p = zero.clone();
                p[j] = ext[j] - 1;
                probes.push(p);
                let mut p = zero.clone();
                p[j] = 2;
                probes.push(p);
                for l in j + 1..n {
                    let mut p = zero.clone();
                    p[j] = 1;
                    p[l] = 1;
                    probes.push(p);
                }
            }
            probes.push(ext.iter().map(|e| e - 1).collect());
            let is = self.span(env, ix);
            for p in probes {
                let want = p
                    .iter()
                    .zip(&a)
                    .fold(c, |acc, (x, y)| acc.saturating_add(x.saturating_mul(*y)));
                if self.eval_at(env, vars, ix, &p)? != want {
                    let names: Vec<&str> = vars.iter().map(|v| v.name.as_str()).collect();
                    return Err(self.report(
                        Diagnostic::error(codes::BAD_TENSOR_ACCESS, "tensor access index is not affine", is, format!("not of the form c + a*{}", names.join(" + b*")))
                            .with_note("a DSD walks memory with a fixed step per variable, so every index must be a constant plus constant multiples of the variables"),
                    ));
                }
            }
            // The index should stay inside the array's extent for every point of the box.
            // Only a warning: a common idiom builds a placeholder DSD over a tiny array and
            // replaces its base address and length before use (`@set_dsd_base_addr`,
            // `@set_dsd_length`); a DSD really used out of range faults at run time.
            let lo = a.iter().zip(&ext).fold(c, |acc, (x, e)| {
                acc.saturating_add(x.saturating_mul(e - 1).min(0))
            });
            let hi = a.iter().zip(&ext).fold(c, |acc, (x, e)| {
                acc.saturating_add(x.saturating_mul(e - 1).max(0))
            });
            if lo < 0 || hi >= i128::from(dims[k] as i64) {
                let bad = if lo < 0 { lo } else { hi };
                self.report(
                    Diagnostic::error(
                        codes::COMPTIME_INDEX,
                        format!(
                            "tensor access reaches index {bad}, outside an extent of {}",
                            dims[k]
                        ),
                        is,
                        "out of range for some values of the variables",
                    )
                    .with_note(format!(
                        "over the given extents this index takes values {lo} to {hi}"
                    ))
                    .with_help("fine if the DSD's base address and length are replaced before use")
                    .warning(),
                );
            }
            let row: i128 = dims[k + 1..]
                .iter()
                .map(|d| i128::from(*d as i64))
                .product();
            flat_c = flat_c.saturating_add(c.saturating_mul(row));
            for j in 0..n {
                flat_a[j] = flat_a[j].saturating_add(a[j].saturating_mul(row));
            }
        }
        let c = &self.types.common;
        let (i16t, u16t) = (c.i16, c.u16);
        let fits = |v: i128| (i128::from(i16::MIN)..=i128::from(i16::MAX)).contains(&v);
        // Wrap-adjusted strides, innermost first.
        let mut strides = Vec::new();
        for j in (0..n).rev() {
            let inner = (j + 1..n).fold(0i128, |acc, l| {
                acc.saturating_add(flat_a[l].saturating_mul(ext[l] - 1))
            });
            strides.push(flat_a[j].saturating_sub(inner));
        }
        if !fits(flat_c) || strides.iter().any(|s| !fits(*s)) {
            return Err(self.err(
                codes::OUT_OF_RANGE,
                "tensor access offset or stride does not fit in i16",
                span,
                "too large for a DSD",
            ));
        }
        let tuple = |vals: Vec<Value>| {
            Value::Struct(Rc::new(
                vals.into_iter()
                    .enumerate()
                    .map(|(i, v)| (super::structs::tuple_field(i), v))
                    .collect(),
            ))
        };
        let base_address = Value::GlobalPtr {
            global: ptr.0,
            offset: ptr.1,
            ty: ptr.2,
        };
        Ok(Value::Struct(Rc::new(vec![
            (Symbol::intern("base_address"), base_address),
            (Symbol::intern("offset"), Value::Int(flat_c, i16t)),
            (
                Symbol::intern("extent"),
                tuple(ext.iter().map(|e| Value::Int(*e, u16t)).collect()),
            ),
            (
                Symbol::intern("stride"),
                tuple(strides.into_iter().map(|s| Value::Int(s, i16t)).collect()),
            ),
        ])))
    }

    /// The comptime address of a tensor access's array.
    fn addr_of_for_tensor(&mut self, env: &mut Env, base: ExprId, span: Span) -> R<Value> {
        let saved = env.comptime;
        let saved_ctx = env.ctx;
        // The address of a global is a link-time constant, usable in any comptime code.
        env.ctx = super::Ctx::TopComptime;
        let r = if self.is_place_expr(env, base) {
            env.comptime = false;
            let p = self.place(env, base);
            env.comptime = saved;
            match p? {
                super::eval::Place::Mem(super::eval::MemPlace {
                    base: super::eval::MemBase::Global(g),
                    off,
                    dyn_off: None,
                    ty,
                    mutable,
                }) => {
                    let pty = self.types.ptr(ty, !mutable);
                    Ok(Value::GlobalPtr {
                        global: g,
                        offset: off,
                        ty: pty,
                    })
                }
                _ => Err(self.err(
                    codes::BAD_TENSOR_ACCESS,
                    "the array of a tensor access must be a global variable",
                    span,
                    "not a global array",
                )),
            }
        } else {
            match self.eval_comptime(env, base) {
                Ok(Value::GlobalPtr { global, offset, ty }) => match self.types.get(ty).clone() {
                    Type::Ptr { elem, .. }
                        if matches!(self.types.get(elem), Type::Array { .. }) =>
                    {
                        Ok(Value::GlobalPtr { global, offset, ty })
                    }
                    _ => Err(self.err(
                        codes::BAD_TENSOR_ACCESS,
                        "the array of a tensor access must be a global variable",
                        span,
                        "not a global array",
                    )),
                },
                // A constant array gets a read-only copy in memory, as `&constant` does.
                Ok(c @ Value::Array(..)) => {
                    let ty = c.ty(&mut self.types);
                    let g = self.const_global(&c, ty, span)?;
                    let pty = self.types.ptr(ty, true);
                    Ok(Value::GlobalPtr {
                        global: g,
                        offset: 0,
                        ty: pty,
                    })
                }
                Ok(_) => Err(self.err(
                    codes::BAD_TENSOR_ACCESS,
                    "the array of a tensor access must be a global variable",
                    span,
                    "not a global array",
                )),
                Err(e) => Err(e),
            }
        };
        env.ctx = saved_ctx;
        r
    }

    /// The value of index expression `ix` with the variables bound to `point`.
    fn eval_at(&mut self, env: &mut Env, vars: &[Ident], ix: ExprId, point: &[i128]) -> R<i128> {
        let ci = self.types.common.comptime_int;
        env.scopes.push(Vec::new());
        for (v, p) in vars.iter().zip(point) {
            env.bind(v.name, Local::Value(Value::Int(*p, ci)));
        }
        let r = self.eval_int(env, ix);
        env.scopes.pop();
        r
    }
}
