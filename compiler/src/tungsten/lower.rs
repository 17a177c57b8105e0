//! The Tungsten lowering state, values and places: one walker (with [`super::expr`]) that
//! type-checks and emits IR at once (as the CSL front end does), folding literals exactly
//! by the rules of tungsten.md §4 with `csl_arch::alu`, so folding is bit-exact with the
//! simulator.
//!
//! Values ([`Val`]) are untyped integer literals (exact, `i128`), typed compile-time
//! constants (raw bits), or registers. Local scalars live in virtual registers; local
//! arrays, unions and structs in the frame; file-scope variables in globals named by their
//! Tungsten name. Expressions are lowered in [`super::expr`].

use super::ast::{self, Expr, ExprKind, TypeKind, TypeRef};
use super::types::{Aggregate, Scalar, Ty};
use super::{ClassSpec, SocketBinding};
use crate::diag::{Diagnostic, codes};
use crate::ir::{FuncId, GlobalId, Inst, Program, VReg};
use crate::sema::lower::FnBuilder;
use crate::source::Span;
use csl_arch::alu;
use csl_arch::isa::{BinOp, CmpOp, NumTy, RoundMode};
use std::collections::HashMap;

/// An error already recorded in the diagnostics.
#[derive(Debug)]
pub(crate) struct Reported;
/// Result of an analysis step.
pub(crate) type R<T> = Result<T, Reported>;

/// A value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Val {
    /// An untyped integer literal (exact).
    Int(i128),
    /// A typed compile-time constant (raw bits; `u64` uses all 64).
    Const { bits: u64, ty: Scalar },
    /// A register.
    Reg { r: VReg, ty: Scalar },
}

impl Val {
    /// The type, `None` for an untyped literal.
    pub fn ty(&self) -> Option<Scalar> {
        match self {
            Val::Int(_) => None,
            Val::Const { ty, .. } | Val::Reg { ty, .. } => Some(*ty),
        }
    }
}

/// Where a value lives.
#[derive(Clone, Debug)]
pub(crate) enum Place {
    /// A local scalar in a register.
    Reg { r: VReg, ty: Scalar },
    /// Memory: a global or the frame, a static byte offset and a dynamic one.
    Mem {
        base: Base,
        off: u32,
        dynoff: Option<VReg>,
        ty: Ty,
    },
}

/// An array in memory ([`Lower::array_place`]): base, static byte offset, dynamic one,
/// element type and length.
pub(crate) type ArrayPlace = (Base, u32, Option<VReg>, Box<Ty>, u32);

/// The base of a memory place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Base {
    /// A global.
    Global(GlobalId),
    /// The frame's stack area.
    Frame,
    /// An address in a register: an array parameter.
    Ptr(VReg),
}

/// A file-scope name.
#[derive(Clone, Debug)]
pub(crate) enum Sym {
    /// A variable.
    Global { g: GlobalId, ty: Ty, span: Span },
    /// A param (a compile-time constant).
    Const { val: Val, span: Span },
    /// A socket (index into `sockets`).
    Socket(usize),
}

/// A declared socket.
#[derive(Clone, Debug)]
pub(crate) struct Socket {
    pub name: String,
    pub span: Span,
    /// Input and output queue id.
    pub queue: u8,
    pub binding: Option<SocketBinding>,
}

/// A function's signature.
#[derive(Clone, Debug)]
pub(crate) struct FuncSig {
    pub name: String,
    pub id: FuncId,
    pub params: Vec<ParamTy>,
    pub ret: Option<Scalar>,
    pub span: Span,
}

/// How a function takes one argument.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ParamTy {
    /// By value.
    Scalar(Scalar),
    /// An array, by reference: the caller passes its address (16 bits).
    Array(Ty),
}

/// A local name.
#[derive(Clone, Debug)]
pub(crate) enum Local {
    /// A scalar in a register.
    Var { r: VReg, ty: Scalar },
    /// An aggregate in the frame at byte `off`.
    Mem { off: u32, ty: Ty },
    /// An array parameter: the caller's array, its address in register `r`.
    Ref { r: VReg, ty: Ty },
    /// A `let i in [a, b);` index.
    Let(ast::Range),
}

/// The send a `flip` may mark.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LastSend {
    pub socket: usize,
    /// The descriptor of the send, if it is one operation.
    pub desc: Option<GlobalId>,
    pub span: Span,
    /// For a control wavelet whose word is a compile-time constant: its command 0.
    pub ctrl_cmd0: Option<u8>,
}

/// State of the `parallel` block being lowered.
#[derive(Debug, Default)]
pub(crate) struct Par {
    /// Microthreads in use.
    pub uts: u8,
    /// Receives into registers, done through a frame slot: (slot, register, type).
    pub fixups: Vec<(u32, VReg, Scalar)>,
    /// Socket statements so far.
    pub count: usize,
}

/// The lowering state of one program class.
pub(crate) struct Lower<'a> {
    pub spec: &'a ClassSpec,
    pub diags: Vec<Diagnostic>,
    pub prog: Program,
    pub aggs: Vec<Aggregate>,
    pub agg_names: HashMap<String, usize>,
    pub globals: HashMap<String, Sym>,
    pub funcs: Vec<FuncSig>,
    pub func_names: HashMap<String, usize>,
    pub sockets: Vec<Socket>,
    /// Call edges (caller, callee, call site) for the recursion check.
    pub calls: Vec<(usize, usize, Span)>,
    pub fb: FnBuilder,
    pub scopes: Vec<HashMap<String, Local>>,
    pub cur_func: Option<usize>,
    /// Return type of the function being lowered (`None`: void or the entry block).
    pub ret_ty: Option<Scalar>,
    pub last_send: Option<LastSend>,
    pub par: Option<Par>,
    /// The statement being lowered is directly inside a `parallel` block.
    pub par_direct: bool,
    /// Descriptor globals made so far.
    pub ndesc: u32,
}

/// Integer value of a constant's bits in its type (signed types sign-extended).
pub(crate) fn const_int(bits: u64, ty: Scalar) -> i128 {
    match ty {
        Scalar::Xp | Scalar::S16 => i128::from(bits as u16 as i16),
        Scalar::S32 => i128::from(bits as u32 as i32),
        Scalar::U64 => i128::from(bits),
        _ => i128::from(bits as u32),
    }
}

/// Float value of a float constant's bits.
pub(crate) fn const_float(bits: u64, ty: Scalar) -> f64 {
    match ty {
        Scalar::Hp => half::f16::from_bits(bits as u16).to_f64(),
        _ => f64::from(f32::from_bits(bits as u32)),
    }
}

/// The bits of an exact integer in type `ty` (wrapping; floats get the nearest value).
pub(crate) fn wrap_int(n: i128, ty: Scalar) -> u64 {
    match ty {
        Scalar::Sp => u64::from((n as f32).to_bits()),
        Scalar::Hp => u64::from(alu::f16_from_f64(n as f64)),
        Scalar::Bool => u64::from(n != 0),
        Scalar::U64 => n as u64,
        _ => (n as u64) & u64::from(alu::mask(ty.nt())),
    }
}

/// The bits of a float value in float type `ty`.
pub(crate) fn float_bits(v: f64, ty: Scalar) -> u64 {
    match ty {
        Scalar::Hp => u64::from(alu::f16_from_f64(v)),
        _ => u64::from((v as f32).to_bits()),
    }
}

fn describe_const(bits: u64, ty: Scalar) -> String {
    if ty.is_float() {
        format!("{}", const_float(bits, ty))
    } else {
        format!("{}", const_int(bits, ty))
    }
}

impl<'a> Lower<'a> {
    /// Records an error.
    pub fn err(
        &mut self,
        code: &'static str,
        msg: impl Into<String>,
        span: Span,
        label: impl Into<String>,
    ) -> Reported {
        self.diags.push(Diagnostic::error(code, msg, span, label));
        Reported
    }

    /// Records a diagnostic.
    pub fn report(&mut self, d: Diagnostic) -> Reported {
        self.diags.push(d);
        Reported
    }

    /// Records the socket `id` used as a `what` (`value`, `variable`), with the help line
    /// `help` gives for its name.
    pub fn socket_used_as(
        &mut self,
        id: &ast::Ident,
        what: &str,
        help: impl FnOnce(&str) -> String,
    ) -> Reported {
        let n = &id.name;
        let msg = format!("`{n}` is a socket, not a {what}");
        self.socket_misuse(msg, id.span, "a socket", help(n))
    }

    /// Records an initialiser list (at `span`) where one value goes.
    pub fn not_a_list(&mut self, code: &'static str, msg: &str, span: Span) -> Reported {
        self.err(code, msg, span, "a list")
    }

    /// Records a misused socket (`TUNG_SOCKET_MISUSE`) with a help line.
    pub fn socket_misuse(
        &mut self,
        msg: impl Into<String>,
        span: Span,
        label: &str,
        help: impl Into<String>,
    ) -> Reported {
        let d = Diagnostic::error(codes::TUNG_SOCKET_MISUSE, msg, span, label);
        self.report(d.with_help(help))
    }

    /// A register holding `bits`.
    pub fn imm(&mut self, bits: u32) -> VReg {
        let r = self.fb.reg();
        self.fb.emit(Inst::Imm { dst: r, imm: bits });
        r
    }

    // ---- names ----

    /// Looks up a local name (innermost scope first).
    pub fn local(&self, name: &str) -> Option<Local> {
        self.scopes.iter().rev().find_map(|s| s.get(name).cloned())
    }

    /// Declares a local name in the innermost scope.
    pub fn declare_local(&mut self, id: &ast::Ident, l: Local) -> R<()> {
        if self.scopes.last().is_some_and(|s| s.contains_key(&id.name)) {
            return Err(self.err(
                codes::TUNG_DUPLICATE,
                format!("`{}` is declared twice in this block", id.name),
                id.span,
                "declared again here",
            ));
        }
        if let Some(s) = self.scopes.last_mut() {
            s.insert(id.name.clone(), l);
        }
        Ok(())
    }

    /// The type a [`TypeRef`] names.
    pub fn type_of(&mut self, t: &TypeRef) -> R<Ty> {
        match &t.kind {
            TypeKind::Scalar(s) => Ok(Ty::Scalar(*s)),
            TypeKind::Union(n) | TypeKind::Struct(n) => {
                let want_union = matches!(t.kind, TypeKind::Union(_));
                match self.agg_names.get(&n.name) {
                    Some(&i) if self.aggs.get(i).is_some_and(|a| a.is_union == want_union) => {
                        Ok(Ty::Agg(i))
                    }
                    Some(_) => Err(self.err(
                        codes::TUNG_TYPE_MISMATCH,
                        format!(
                            "`{}` is a {}, not a {}",
                            n.name,
                            if want_union { "struct" } else { "union" },
                            if want_union { "union" } else { "struct" }
                        ),
                        t.span,
                        "here",
                    )),
                    None => Err(self.err(
                        codes::TUNG_UNDEFINED,
                        format!(
                            "no {} named `{}`",
                            if want_union { "union" } else { "struct" },
                            n.name
                        ),
                        n.span,
                        "not declared",
                    )),
                }
            }
        }
    }

    /// A scalar type, rejecting aggregates.
    pub fn scalar_type(&mut self, t: &TypeRef, what: &str) -> R<Scalar> {
        match self.type_of(t)? {
            Ty::Scalar(s) => Ok(s),
            other => {
                let d = other.describe(&self.aggs);
                Err(self.err(
                    codes::TUNG_TYPE_MISMATCH,
                    format!("{what} must be a scalar type, not `{d}`"),
                    t.span,
                    "not a scalar",
                ))
            }
        }
    }

    // ---- constants ----

    /// Evaluates an expression that must be a compile-time constant.
    pub fn eval_const(&mut self, e: &Expr, what: &str) -> R<Val> {
        // Anything emitted goes to a throw-away function.
        let saved = std::mem::replace(&mut self.fb, FnBuilder::sink());
        let v = self.expr(e);
        self.fb = saved;
        match v? {
            Val::Reg { .. } => Err(self.err(
                codes::TUNG_NOT_CONST,
                format!("{what} must be known at compile time"),
                e.span,
                "not a constant",
            )),
            v => Ok(v),
        }
    }

    /// A constant integer (array lengths, addresses, round modes).
    pub fn const_int(&mut self, e: &Expr, what: &str) -> R<i128> {
        match self.eval_const(e, what)? {
            Val::Int(n) => Ok(n),
            Val::Const { bits, ty } if !ty.is_float() => Ok(const_int(bits, ty)),
            _ => Err(self.err(
                codes::TUNG_TYPE_MISMATCH,
                format!("{what} must be an integer"),
                e.span,
                "a float",
            )),
        }
    }

    // ---- conversions ----

    pub(super) fn unsigned_to_float(
        &mut self,
        from: Scalar,
        to: Scalar,
        span: Span,
        how: &str,
    ) -> Reported {
        self.report(
            Diagnostic::error(
                codes::TUNG_UNSIGNED_TO_FLOAT,
                format!("cannot convert unsigned `{}` to `{}`", from.name(), to.name()),
                span,
                format!("{how} `{}` to `{}` here", from.name(), to.name()),
            )
            .with_note(
                "the SDR target has no instruction that converts an unsigned integer to a float \
                 (the vendor compiler says `Couldn't match the instruction!`)",
            )
            .with_help(if to == Scalar::Hp {
                "convert through a signed integer: `(hp)(s32)x` (rounded to hp's 11 significant bits; 65520 and more become infinity); for u32, values of 2^31 or more come out negative".to_string()
            } else {
                format!(
                    "convert through a signed integer: `({})(s32)x` is exact for u16; for u32, values of 2^31 or more come out negative",
                    to.name()
                )
            }),
        )
    }

    pub(super) fn no_64bit(&mut self, span: Span, what: &str) -> Reported {
        self.report(
            Diagnostic::error(
                codes::TUNG_NO_64BIT,
                format!("no 64-bit copies on this target: {what}"),
                span,
                "a 64-bit value",
            )
            .with_note("`u64` is only the type of integer literals of 2^32 or more")
            .with_help("use a value below 2^32, or split it into two u32 halves"),
        )
    }

    /// Converts `v` to `to` (implicit conversions and casts alike): float to integer
    /// rounds to nearest even and saturates; unsigned to float is an error.
    pub fn convert(&mut self, v: Val, to: Scalar, span: Span, how: &str) -> R<Val> {
        if to == Scalar::U64 {
            if let Val::Const {
                ty: Scalar::U64, ..
            } = v
            {
                return Ok(v);
            }
            return Err(self.no_64bit(span, "a `u64` value"));
        }
        match v {
            Val::Int(n) => {
                // Folded exactly; wraps in its context type.
                Ok(Val::Const {
                    bits: wrap_int(n, to),
                    ty: to,
                })
            }
            Val::Const {
                ty: Scalar::U64, ..
            } => Err(self.no_64bit(
                span,
                &format!("a `u64` value cannot become `{}`", to.name()),
            )),
            Val::Const { bits, ty } => {
                if ty.same(to) {
                    return Ok(Val::Const { bits, ty: to });
                }
                if to.is_float() && ty.is_unsigned() && ty != Scalar::Bool {
                    return Err(self.unsigned_to_float(ty, to, span, how));
                }
                let out = alu::conv_round(RoundMode::NearestEven, to.nt(), ty.nt(), bits as u32);
                Ok(Val::Const {
                    bits: u64::from(out),
                    ty: to,
                })
            }
            Val::Reg { r, ty } => {
                if ty.same(to) {
                    return Ok(Val::Reg { r, ty: to });
                }
                if to.is_float() && ty.is_unsigned() && ty != Scalar::Bool {
                    return Err(self.unsigned_to_float(ty, to, span, how));
                }
                let dst = self.fb.reg();
                if ty.is_float() && !to.is_float() && to != Scalar::Bool {
                    self.fb.emit(Inst::ConvR {
                        mode: RoundMode::NearestEven,
                        to: to.nt(),
                        from: ty.nt(),
                        dst,
                        src: r,
                    });
                } else {
                    self.fb.emit(Inst::Conv {
                        to: to.nt(),
                        from: ty.nt(),
                        dst,
                        src: r,
                    });
                }
                Ok(Val::Reg { r: dst, ty: to })
            }
        }
    }

    /// The value in a register of type `ty` (converting first).
    pub fn materialize(&mut self, v: Val, ty: Scalar, span: Span) -> R<VReg> {
        match self.convert(v, ty, span, "converting")? {
            Val::Reg { r, .. } => Ok(r),
            Val::Const { bits, .. } => Ok(self.imm(bits as u32)),
            Val::Int(_) => Err(Reported),
        }
    }

    /// The value in a register of its own type (untyped literals become `xp`).
    pub fn in_own_reg(&mut self, v: Val, span: Span) -> R<(VReg, Scalar)> {
        let ty = match v.ty() {
            Some(Scalar::U64) => return Err(self.no_64bit(span, "a `u64` value")),
            Some(t) => t,
            None => Scalar::Xp,
        };
        Ok((self.materialize(v, ty, span)?, ty))
    }

    /// A condition as a `bool` register.
    pub fn truth(&mut self, v: Val, span: Span) -> R<VReg> {
        match v {
            Val::Reg {
                r,
                ty: Scalar::Bool,
            } => Ok(r),
            Val::Int(n) => Ok(self.imm(u32::from(n != 0))),
            Val::Const { bits, ty } => {
                let t = if ty.is_float() {
                    const_float(bits, ty) != 0.0
                } else {
                    bits != 0
                };
                Ok(self.imm(u32::from(t)))
            }
            Val::Reg { r, ty } => {
                let z = self.imm(0);
                let dst = self.fb.reg();
                self.fb.emit(Inst::Cmp {
                    op: CmpOp::Ne,
                    ty: ty.nt(),
                    dst,
                    a: r,
                    b: z,
                });
                let _ = span;
                Ok(dst)
            }
        }
    }

    // ---- places ----

    /// The address of a memory place in a register.
    /// A 16-bit element index times the element size in bytes: a byte offset.
    pub fn scale_index(&mut self, i: VReg, esize: u32) -> VReg {
        if esize == 1 {
            return i;
        }
        let s = self.imm(esize);
        let d = self.fb.reg();
        self.fb.bin(BinOp::Mul, NumTy::U16, d, i, s);
        d
    }

    pub fn addr_of(&mut self, base: Base, off: u32, dynoff: Option<VReg>) -> VReg {
        let a = match base {
            Base::Ptr(p) if off == 0 => p,
            _ => self.fb.reg(),
        };
        match base {
            Base::Global(g) => self.fb.emit(Inst::GlobalAddr {
                dst: a,
                global: g,
                offset: off,
            }),
            Base::Frame => self.fb.emit(Inst::FrameAddr { dst: a, off }),
            Base::Ptr(_) if off == 0 => {}
            Base::Ptr(p) => {
                let k = self.imm(off);
                self.fb.bin(BinOp::Add, NumTy::U16, a, p, k);
            }
        }
        match dynoff {
            Some(d) => {
                let s = self.fb.reg();
                self.fb.bin(BinOp::Add, NumTy::U16, s, a, d);
                s
            }
            None => a,
        }
    }

    /// The scalar type of a memory place used at `span`, or the type-mismatch error
    /// `message(type)` with `label`.
    fn mem_scalar(
        &mut self,
        ty: &Ty,
        span: Span,
        message: impl FnOnce(&str) -> String,
        label: &str,
    ) -> R<Scalar> {
        if let Ty::Scalar(s) = ty {
            return Ok(*s);
        }
        let d = ty.describe(&self.aggs);
        Err(self.err(codes::TUNG_TYPE_MISMATCH, message(&d), span, label))
    }

    /// The memory place of `e`, which must name an array: its base, static and dynamic
    /// offsets, element type and length.
    pub fn array_place(&mut self, e: &Expr) -> R<ArrayPlace> {
        let Place::Mem {
            base,
            off,
            dynoff,
            ty: Ty::Array(elem, n),
        } = self.place(e)?
        else {
            return Err(self.err(
                codes::TUNG_TYPE_MISMATCH,
                "only arrays can be indexed",
                e.span,
                "not an array",
            ));
        };
        Ok((base, off, dynoff, elem, n))
    }

    /// Reads a scalar place.
    pub fn load(&mut self, p: &Place, span: Span) -> R<Val> {
        match p {
            Place::Reg { r, ty } => Ok(Val::Reg { r: *r, ty: *ty }),
            Place::Mem {
                base,
                off,
                dynoff,
                ty,
            } => {
                let not_scalar = |d: &str| format!("`{d}` is not a scalar value");
                let s = self.mem_scalar(ty, span, not_scalar, "used as a value here")?;
                if s == Scalar::U64 {
                    return Err(self.no_64bit(span, "a `u64` variable"));
                }
                let a = self.addr_of(*base, *off, *dynoff);
                let dst = self.fb.reg();
                self.fb.emit(Inst::Load {
                    w: s.nt().width(),
                    dst,
                    addr: a,
                });
                Ok(Val::Reg { r: dst, ty: s })
            }
        }
    }

    /// Writes a value (converted to the place's type) to a scalar place.
    pub fn store(&mut self, p: &Place, v: Val, span: Span) -> R<()> {
        match p {
            Place::Reg { r, ty } => {
                let src = self.materialize(v, *ty, span)?;
                self.fb.emit(Inst::Mov { dst: *r, src });
                Ok(())
            }
            Place::Mem {
                base,
                off,
                dynoff,
                ty,
            } => {
                let not_scalar = |d: &str| format!("cannot assign a scalar to `{d}`");
                let s = self.mem_scalar(ty, span, not_scalar, "assigned here")?;
                let src = self.materialize(v, s, span)?;
                let a = self.addr_of(*base, *off, *dynoff);
                self.fb.emit(Inst::Store {
                    w: s.nt().width(),
                    addr: a,
                    src,
                });
                Ok(())
            }
        }
    }

    /// The scalar type of a place, if it is one.
    pub fn place_scalar(&self, p: &Place) -> Option<Scalar> {
        match p {
            Place::Reg { ty, .. } => Some(*ty),
            Place::Mem { ty, .. } => ty.scalar(),
        }
    }

    /// Evaluates an expression as a place (variable, element, member).
    pub fn place(&mut self, e: &Expr) -> R<Place> {
        match &e.kind {
            ExprKind::Name(id) => {
                if let Some(l) = self.local(&id.name) {
                    return match l {
                        Local::Var { r, ty } => Ok(Place::Reg { r, ty }),
                        Local::Mem { off, ty } => Ok(Place::Mem {
                            base: Base::Frame,
                            off,
                            dynoff: None,
                            ty,
                        }),
                        Local::Ref { r, ty } => Ok(Place::Mem {
                            base: Base::Ptr(r),
                            off: 0,
                            dynoff: None,
                            ty,
                        }),
                        Local::Let(_) => Err(self.err(
                            codes::TUNG_NOT_LVALUE,
                            format!("`{}` is a `let` index, not a variable", id.name),
                            id.span,
                            "only usable under `∀`",
                        )),
                    };
                }
                match self.globals.get(&id.name).cloned() {
                    Some(Sym::Global { g, ty, .. }) => Ok(Place::Mem {
                        base: Base::Global(g),
                        off: 0,
                        dynoff: None,
                        ty,
                    }),
                    Some(Sym::Const { .. }) => Err(self.err(
                        codes::TUNG_NOT_LVALUE,
                        format!("`{}` is a param, a compile-time constant", id.name),
                        id.span,
                        "cannot be assigned or addressed",
                    )),
                    Some(Sym::Socket(_)) => Err(self.socket_used_as(id, "variable", |n| {
                        format!("send with `{n}[] <- v;`, receive with `v <- {n}[];`")
                    })),
                    None => Err(self.undefined(id)),
                }
            }
            ExprKind::Index(base, Some(idx)) => {
                let (b, off, dynoff, elem, n) = self.array_place(base)?;
                let esize = elem.size(&self.aggs);
                let iv = self.expr(idx)?;
                match iv {
                    Val::Int(_) | Val::Const { .. } => {
                        let k = match iv {
                            Val::Int(k) => k,
                            Val::Const { bits, ty } if !ty.is_float() => const_int(bits, ty),
                            _ => {
                                return Err(self.err(
                                    codes::TUNG_TYPE_MISMATCH,
                                    "an index must be an integer",
                                    idx.span,
                                    "a float",
                                ));
                            }
                        };
                        if k < 0 || k >= i128::from(n) {
                            return Err(self.err(
                                codes::TUNG_TYPE_MISMATCH,
                                format!("index {k} is out of bounds for an array of {n}"),
                                idx.span,
                                "out of bounds",
                            ));
                        }
                        Ok(Place::Mem {
                            base: b,
                            off: off + (k as u32) * esize,
                            dynoff,
                            ty: *elem,
                        })
                    }
                    Val::Reg { ty, .. } => {
                        if ty.is_float() {
                            return Err(self.err(
                                codes::TUNG_TYPE_MISMATCH,
                                "an index must be an integer",
                                idx.span,
                                format!("`{}`", ty.name()),
                            ));
                        }
                        let i = self.materialize(iv, Scalar::U16, idx.span)?;
                        let scaled = self.scale_index(i, esize);
                        let total = match dynoff {
                            Some(prev) => {
                                let d = self.fb.reg();
                                self.fb.bin(BinOp::Add, NumTy::U16, d, prev, scaled);
                                d
                            }
                            None => scaled,
                        };
                        Ok(Place::Mem {
                            base: b,
                            off,
                            dynoff: Some(total),
                            ty: *elem,
                        })
                    }
                }
            }
            ExprKind::Member(base, field) => {
                if self.is_socket_read(base) {
                    return Err(self.index_half(e.span));
                }
                let p = self.place(base)?;
                let Place::Mem {
                    base: b,
                    off,
                    dynoff,
                    ty: Ty::Agg(i),
                } = p
                else {
                    return Err(self.err(
                        codes::TUNG_TYPE_MISMATCH,
                        format!("no field `{}`: not a union or struct", field.name),
                        base.span,
                        "not a union or struct",
                    ));
                };
                let found = self
                    .aggs
                    .get(i)
                    .and_then(|a| a.fields.iter().find(|f| f.name == field.name))
                    .cloned();
                match found {
                    Some(f) => Ok(Place::Mem {
                        base: b,
                        off: off + f.offset,
                        dynoff,
                        ty: f.ty,
                    }),
                    None => {
                        let d = Ty::Agg(i).describe(&self.aggs);
                        Err(self.err(
                            codes::TUNG_UNDEFINED,
                            format!("`{d}` has no field `{}`", field.name),
                            field.span,
                            "no such field",
                        ))
                    }
                }
            }
            ExprKind::Index(base, None) => Err(self.report(
                Diagnostic::error(
                    codes::TUNG_NOT_LVALUE,
                    "a socket read is not a variable",
                    e.span,
                    "cannot be written or addressed",
                )
                .with_note(format!(
                    "`{}` here reads the next wavelet",
                    describe_expr(base)
                ))
                .with_help("to send, write `sock[] <- value;`"),
            )),
            _ => Err(self.err(
                codes::TUNG_NOT_LVALUE,
                "not a variable, element or field",
                e.span,
                "cannot be assigned",
            )),
        }
    }

    /// `undefined name` with a near-miss suggestion.
    pub fn undefined(&mut self, id: &ast::Ident) -> Reported {
        let mut d = Diagnostic::error(
            codes::TUNG_UNDEFINED,
            format!("`{}` is not declared", id.name),
            id.span,
            "not found",
        );
        let mut names: Vec<&String> = self.globals.keys().collect();
        names.extend(self.scopes.iter().flat_map(|s| s.keys()));
        names.extend(self.func_names.keys());
        names.sort();
        let names = names
            .into_iter()
            .map(String::as_str)
            .filter(|n| n.len() > 1);
        if let Some(best) = crate::suggest::closest(&id.name, names, 2) {
            d = d.with_help(format!("a similar name exists: `{best}`"));
        }
        self.report(d)
    }

    pub fn index_half(&mut self, span: Span) -> Reported {
        self.report(
            Diagnostic::error(
                codes::TUNG_INDEX_HALF,
                "the `.index` and `.data` halves of a wavelet are only usable in one loop form",
                span,
                "not allowed here",
            )
            .with_help(
                "write `i in [0, N) x[s[].index] <- s[].data;` as a loop of that one statement",
            ),
        )
    }

    /// Whether `e` is `s[]` for a socket `s`.
    pub fn is_socket_read(&self, e: &Expr) -> bool {
        self.socket_of_read(e).is_some()
    }

    /// The socket of `s[]`.
    pub fn socket_of_read(&self, e: &Expr) -> Option<usize> {
        if let ExprKind::Index(b, None) = &e.kind
            && let ExprKind::Name(id) = &b.kind
            && self.local(&id.name).is_none()
            && let Some(Sym::Socket(i)) = self.globals.get(&id.name)
        {
            return Some(*i);
        }
        None
    }
}

/// A short rendering of an expression for messages.
pub(crate) fn describe_expr(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Name(id) => id.name.clone(),
        ExprKind::Int(n) => n.to_string(),
        ExprKind::Float { value, .. } => format!("{value:?}"),
        ExprKind::Index(b, None) => format!("{}[]", describe_expr(b)),
        ExprKind::Index(b, Some(i)) => format!("{}[{}]", describe_expr(b), describe_expr(i)),
        ExprKind::Member(b, f) => format!("{}.{}", describe_expr(b), f.name),
        ExprKind::Call(n, _) => format!("{}(...)", n.name),
        ExprKind::Binary(op, a, b) => {
            format!(
                "({} {} {})",
                describe_expr(a),
                op.spelling(),
                describe_expr(b)
            )
        }
        _ => "this expression".into(),
    }
}

#[allow(dead_code)]
pub(crate) fn describe_val(v: &Val) -> String {
    match v {
        Val::Int(n) => n.to_string(),
        Val::Const { bits, ty } => format!("{}:{}", describe_const(*bits, *ty), ty.name()),
        Val::Reg { ty, .. } => format!("a `{}` value", ty.name()),
    }
}
