//! The Tungsten (`.w`) front end: lexes, parses, type-checks and lowers one Tungsten
//! program, for one placement (socket bindings and param overrides from Paint's `code()`),
//! into the shared middle-end IR ([`crate::ir::Program`]).
//!
//! The language is described in `shared/spec/tungsten.md` and, with this project's choices
//! where public material is silent, in `README.md` next to this file.
//!
//! Pipeline: [`token`] (logos) → [`parser`] (lalrpop, `grammar/tungsten.lalrpop`, with
//! recovery) → [`ast`] → lowering ([`lower`] values and expressions, [`stmt`] statements,
//! [`sock`] sockets and DSD vector operations) → [`Program`]. File-scope variables become
//! globals named exactly by their Tungsten name; compiler-made globals start with `$`. The
//! entry block is a local task with id [`ENTRY_TASK_ID`], active at start. Socket `i` (in
//! declaration order) uses input queue `i` and output queue `i`.

pub mod ast;
mod expr;
pub mod lower;
pub mod parser;
pub mod sock;
pub mod stmt;
#[cfg(test)]
mod tests;
pub mod token;
pub mod types;

use crate::diag::{Diagnostic, codes};
use crate::ir::{Global, GlobalPlace, Program, TaskBind, Term};
use crate::sema::lower::FnBuilder;
use crate::source::{FileId, SourceMap, Span};
use ast::{ExprKind, Init, Item};
use csl_arch::Arch;
use csl_arch::image::{QueueBinding, TaskKind, WaveletArgs};
use lower::{FuncSig, Local, Lower, ParamTy, R, Reported, Socket, Sym, Val};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use types::{Aggregate, Field, Scalar, Ty};

/// The task id of the entry block: a valid local task id on both generations that is no
/// WSE-2 colour (data task) id.
pub const ENTRY_TASK_ID: u8 = 24;

/// The colours a socket is bound to by Paint.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SocketBinding {
    /// Colour the socket receives on.
    pub rx: u8,
    /// Colour the socket sends on (differs from `rx` under `colorpair(a ap)`).
    pub tx: u8,
}

/// A param override given by `code('prog [NAME:value])`.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
}

/// Everything one placement of a program fixes: the input of [`compile_class`]. Two
/// placements with equal specs share one program class.
#[derive(Clone, Debug)]
pub struct ClassSpec {
    /// Target architecture.
    pub arch: Arch,
    /// Socket name → colours, from `code()`.
    pub sockets: Vec<(String, SocketBinding)>,
    /// Param name → value, from `code()`.
    pub params: Vec<(String, ParamValue)>,
    /// Whether the tiles have message passing enabled (`mp()`).
    pub mp: bool,
    /// Directories searched for `import "f.w"` (after the importing file's own directory).
    pub lib_dirs: Vec<PathBuf>,
    /// The `code()` call that placed the program (for diagnostics about bindings).
    pub origin: Option<Span>,
}

impl ClassSpec {
    /// A spec with no bindings, no params and no library directories.
    pub fn new(arch: Arch) -> ClassSpec {
        ClassSpec {
            arch,
            sockets: Vec::new(),
            params: Vec::new(),
            mp: false,
            lib_dirs: Vec::new(),
            origin: None,
        }
    }
}

/// Parses `file` and everything it imports (each file once), in order.
fn collect(
    sources: &mut SourceMap,
    file: FileId,
    spec: &ClassSpec,
    diags: &mut Vec<Diagnostic>,
    seen: &mut HashSet<FileId>,
    out: &mut Vec<Item>,
    depth: u32,
) {
    let text = sources.get(file).text.clone();
    let (items, d) = parser::parse(file, &text);
    diags.extend(d);
    for item in items {
        let Item::Import(name, span) = item else {
            out.push(item);
            continue;
        };
        if depth > 32 {
            diags.push(Diagnostic::error(
                codes::TUNG_IMPORT,
                "imports nested too deep",
                span,
                "more than 32 levels of imports",
            ));
            continue;
        }
        let dirs = import_dirs(sources.get(file).path.as_deref(), &spec.lib_dirs);
        let found = dirs.iter().map(|d| d.join(&name)).find(|p| p.is_file());
        let Some(path) = found else {
            let mut dg = Diagnostic::error(
                codes::TUNG_IMPORT,
                format!("cannot find `{name}`"),
                span,
                "imported here",
            );
            dg = dg.with_note(if dirs.is_empty() {
                "this file has no directory, and no library directories were given".to_string()
            } else {
                format!(
                    "looked in: {}",
                    dirs.iter()
                        .map(|d| d.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            });
            diags.push(dg);
            continue;
        };
        let id = match sources.find_path(&path) {
            Some(id) => id,
            None => match sources.read(&path) {
                Ok(text) => sources.add(path.display().to_string(), Some(path.clone()), text),
                Err(e) => {
                    diags.push(Diagnostic::error(
                        codes::TUNG_IMPORT,
                        format!("cannot read `{name}`: {e}"),
                        span,
                        "imported here",
                    ));
                    continue;
                }
            },
        };
        if id == file || !seen.insert(id) {
            continue;
        }
        collect(sources, id, spec, diags, seen, out, depth + 1);
    }
}

/// The directories an `import` in the file at `importer` searches, in order: the file's
/// own directory, then `lib_dirs` (csl-lsp follows imports the same way).
pub fn import_dirs(importer: Option<&std::path::Path>, lib_dirs: &[PathBuf]) -> Vec<PathBuf> {
    importer
        .and_then(std::path::Path::parent)
        .map(std::path::Path::to_path_buf)
        .into_iter()
        .chain(lib_dirs.iter().cloned())
        .collect()
}

/// Compiles the Tungsten program in `file` for one placement. Problems are pushed onto
/// `diags`; `None` means at least one error was reported.
pub fn compile_class(
    sources: &mut SourceMap,
    file: FileId,
    spec: &ClassSpec,
    diags: &mut Vec<Diagnostic>,
) -> Option<Program> {
    let mut items = Vec::new();
    let mut seen = HashSet::new();
    seen.insert(file);
    let mut local = Vec::new();
    collect(sources, file, spec, &mut local, &mut seen, &mut items, 0);
    // Syntax errors leave holes in the tree; analysing it would only report their
    // consequences.
    if local.iter().any(Diagnostic::is_error) {
        diags.append(&mut local);
        return None;
    }
    let mut l = Lower {
        spec,
        diags: local,
        prog: Program::default(),
        aggs: Vec::new(),
        agg_names: HashMap::new(),
        globals: HashMap::new(),
        funcs: Vec::new(),
        func_names: HashMap::new(),
        sockets: Vec::new(),
        calls: Vec::new(),
        fb: FnBuilder::sink(),
        scopes: vec![HashMap::new()],
        cur_func: None,
        ret_ty: None,
        last_send: None,
        par: None,
        par_direct: false,
        ndesc: 0,
    };
    l.program(&items, file);
    let failed = l.diags.iter().any(Diagnostic::is_error);
    diags.append(&mut l.diags);
    if failed { None } else { Some(l.prog) }
}

impl<'a> Lower<'a> {
    fn program(&mut self, items: &[Item], file: FileId) {
        let mut used_params: HashSet<String> = HashSet::new();
        let mut entry: Option<&ast::Stmt> = None;
        // Declarations in order (params, variables, sockets, types), then functions.
        for item in items {
            match item {
                Item::Pragma(text, span) => self.pragma(text, *span),
                Item::Sockets(names) => {
                    for n in names {
                        if self.check_fresh(n).is_ok() {
                            let i = self.sockets.len();
                            self.sockets.push(Socket {
                                name: n.name.clone(),
                                span: n.span,
                                queue: i.min(255) as u8,
                                binding: None,
                            });
                            self.globals.insert(n.name.clone(), Sym::Socket(i));
                        }
                    }
                }
                Item::Var(d) => {
                    let _ = self.global_decl(d, &mut used_params);
                }
                Item::Aggregate {
                    is_union,
                    name,
                    fields,
                    span,
                } => {
                    let _ = self.aggregate(*is_union, name, fields, *span);
                }
                Item::Func {
                    name,
                    params,
                    ret,
                    span,
                    ..
                } => {
                    let _ = self.declare_func(name, params, ret.as_ref(), *span);
                }
                Item::Entry(s) => {
                    if let Some(first) = entry {
                        self.diags.push(
                            Diagnostic::error(
                                codes::TUNG_ENTRY,
                                "a program has one entry block",
                                s.span,
                                "a second top-level block",
                            )
                            .with_label(first.span, "the first one"),
                        );
                    } else {
                        entry = Some(s);
                    }
                }
                Item::Import(..) | Item::Error => {}
            }
        }
        self.check_params(&used_params);
        self.bind_sockets();
        // Function bodies.
        for item in items {
            if let Item::Func {
                name,
                params,
                body,
                span,
                ..
            } = item
            {
                self.func_body(name, params, body, *span);
            }
        }
        match entry {
            Some(s) => {
                self.fb = FnBuilder::new("main".into(), 0, s.span);
                self.scopes = vec![HashMap::new()];
                self.cur_func = None;
                self.ret_ty = None;
                self.stmt(s);
                self.fb.terminate(Term::Ret(None));
                let f = std::mem::replace(&mut self.fb, FnBuilder::sink()).finish();
                let id = self.prog.functions.push(f);
                self.prog.tasks.push(TaskBind {
                    id: ENTRY_TASK_ID,
                    kind: TaskKind::Local,
                    func: id,
                    args: WaveletArgs::None,
                    span: s.span,
                });
                self.prog.initially_active |= 1 << ENTRY_TASK_ID;
            }
            None => {
                let at = Span::new(file, 0, 0);
                self.diags.push(
                    Diagnostic::error(
                        codes::TUNG_ENTRY,
                        "the program has no entry block",
                        at,
                        "no top-level `{ ... }` in this file",
                    )
                    .with_help("add the code the tile runs as a top-level block: `{ ... }` or `parallel { ... }`"),
                );
            }
        }
        self.check_recursion();
    }

    fn pragma(&mut self, text: &str, span: Span) {
        let name = text.split_whitespace().next().unwrap_or("");
        if name == "once" {
            return;
        }
        self.diags.push(
            Diagnostic::error(
                codes::TUNG_PRAGMA,
                format!("unknown pragma `{name}`"),
                span,
                "ignored",
            )
            .with_note("this compiler knows `#pragma once` only")
            .warning(),
        );
    }

    /// Reports a name already declared at file scope.
    fn check_fresh(&mut self, id: &ast::Ident) -> R<()> {
        let prev = match self.globals.get(&id.name) {
            Some(Sym::Global { span, .. } | Sym::Const { span, .. }) => Some(*span),
            Some(Sym::Socket(i)) => self.sockets.get(*i).map(|s| s.span),
            None => self
                .func_names
                .get(&id.name)
                .and_then(|&i| self.funcs.get(i))
                .map(|f| f.span),
        };
        if let Some(p) = prev {
            return Err(self.report(Diagnostic::twice(
                codes::TUNG_DUPLICATE,
                format!("`{}`", id.name),
                "declared",
                id.span,
                p,
            )));
        }
        Ok(())
    }

    fn aggregate(
        &mut self,
        is_union: bool,
        name: &ast::Ident,
        fields: &[ast::VarDecl],
        span: Span,
    ) -> R<()> {
        if self.agg_names.contains_key(&name.name) {
            return Err(self.err(
                codes::TUNG_DUPLICATE,
                format!("`{}` is declared twice", name.name),
                name.span,
                "declared again here",
            ));
        }
        let mut out: Vec<Field> = Vec::new();
        let mut off = 0u32;
        let mut size = 0u32;
        let mut align = 2u32;
        for f in fields {
            if out.iter().any(|x| x.name == f.name.name) {
                return Err(self.err(
                    codes::TUNG_DUPLICATE,
                    format!("field `{}` is declared twice", f.name.name),
                    f.name.span,
                    "again here",
                ));
            }
            let ty = self.decl_type(f)?;
            if ty == Ty::Scalar(Scalar::U64) {
                return Err(self.no_64bit_decl(f));
            }
            let a = ty.align(&self.aggs);
            let s = ty.size(&self.aggs);
            align = align.max(a);
            let at = if is_union { 0 } else { off.div_ceil(a) * a };
            off = at + s;
            size = size.max(at + s);
            out.push(Field {
                name: f.name.name.clone(),
                ty,
                offset: at,
            });
        }
        let size = size.div_ceil(align) * align;
        let _ = span;
        self.aggs.push(Aggregate {
            name: name.name.clone(),
            is_union,
            fields: out,
            size: size.max(2),
            align,
        });
        self.agg_names
            .insert(name.name.clone(), self.aggs.len() - 1);
        Ok(())
    }

    fn global_decl(&mut self, d: &ast::VarDecl, used: &mut HashSet<String>) -> R<()> {
        self.check_fresh(&d.name)?;
        if d.is_param {
            return self.param_decl(d, used);
        }
        let ty = self.decl_type(d)?;
        if let Some((_, Scalar::U64)) = stmt::flat_elems(&ty, &self.aggs).first() {
            return Err(self.no_64bit_decl(d));
        }
        let size = ty.size(&self.aggs);
        let align = ty.align(&self.aggs);
        let place = match &d.address {
            Some(a) => self.address(a, size)?,
            None => GlobalPlace::Auto,
        };
        let register = matches!(place, GlobalPlace::At(a) if a >= csl_arch::fabric::mmio::BASE);
        let mut init = if register {
            Vec::new()
        } else {
            vec![0u8; size as usize]
        };
        if let Some(i) = &d.init {
            if register {
                let sp = match i {
                    Init::Expr(e) => e.span,
                    Init::List(_, s) => *s,
                };
                return Err(self.err(
                    codes::TUNG_ADDRESS,
                    "a hardware register cannot have an initialiser",
                    sp,
                    "the register is not memory",
                ));
            }
            self.global_init(&ty, i, &mut init)?;
        }
        let g = self.prog.globals.push(Global {
            name: d.name.name.clone(),
            size,
            align,
            init,
            relocs: Vec::new(),
            span: d.name.span,
            place,
        });
        self.globals.insert(
            d.name.name.clone(),
            Sym::Global {
                g,
                ty,
                span: d.name.span,
            },
        );
        Ok(())
    }

    fn global_init(&mut self, ty: &Ty, init: &Init, bytes: &mut [u8]) -> R<()> {
        let elems = stmt::flat_elems(ty, &self.aggs);
        let items: Vec<&ast::Expr> = match init {
            Init::Expr(e) => {
                if !matches!(ty, Ty::Scalar(_)) {
                    return Err(self.err(
                        codes::TUNG_INIT,
                        "an array, union or struct needs a list `{...}` as its initialiser",
                        e.span,
                        "a single value",
                    ));
                }
                vec![e]
            }
            Init::List(v, sp) => {
                if v.len() > elems.len() {
                    return Err(self.err(
                        codes::TUNG_INIT,
                        format!("{} values for {} elements", v.len(), elems.len()),
                        *sp,
                        "too many values",
                    ));
                }
                v.iter().collect()
            }
        };
        for (e, (off, et)) in items.into_iter().zip(elems) {
            let v = if matches!(e.kind, ExprKind::Nan) {
                if !et.is_float() {
                    return Err(self.err(
                        codes::TUNG_SPECIAL_CONST,
                        format!("`NAN` cannot initialise a `{}`", et.name()),
                        e.span,
                        "not a float element",
                    ));
                }
                Val::Const {
                    bits: lower::float_bits(f64::NAN, et),
                    ty: et,
                }
            } else {
                let v = self.eval_const(e, "the initialiser of a file-scope variable")?;
                self.convert(v, et, e.span, "initialising")?
            };
            let Val::Const { bits, .. } = v else {
                return Err(Reported);
            };
            let n = et.bytes() as usize;
            let at = off as usize;
            if let Some(dst) = bytes.get_mut(at..at + n) {
                dst.copy_from_slice(&bits.to_le_bytes()[..n]);
            }
        }
        Ok(())
    }

    /// `address(0x7C46)` or `address(&prev + k)` (word addresses and word offsets).
    fn address(&mut self, a: &ast::Expr, size: u32) -> R<GlobalPlace> {
        let rel = match &a.kind {
            ExprKind::Unary(ast::UnOp::AddrOf, b) => Some((b, None, false)),
            ExprKind::Binary(op @ (ast::BinOp::Add | ast::BinOp::Sub), x, k) => match &x.kind {
                ExprKind::Unary(ast::UnOp::AddrOf, b) => Some((b, Some(k), *op == ast::BinOp::Sub)),
                _ => None,
            },
            _ => None,
        };
        if let Some((b, k, neg)) = rel {
            let ExprKind::Name(prev) = &b.kind else {
                return Err(self.err(
                    codes::TUNG_ADDRESS,
                    "`address(&a + k)` needs the name of a file-scope variable",
                    b.span,
                    "not a name",
                ));
            };
            let base = match self.globals.get(&prev.name) {
                Some(Sym::Global { g, .. }) => *g,
                Some(_) => {
                    return Err(self.err(
                        codes::TUNG_ADDRESS,
                        format!("`{}` is not a variable", prev.name),
                        prev.span,
                        "has no address",
                    ));
                }
                None => return Err(self.undefined(prev)),
            };
            let words = match k {
                Some(k) => self.const_int(k, "the offset of `address(&a + k)`")?,
                None => 0,
            };
            let words = if neg { -words } else { words };
            if !(0..0x8000).contains(&words) {
                return Err(self.err(
                    codes::TUNG_ADDRESS,
                    format!("a word offset of {words} is not allowed"),
                    a.span,
                    "offsets run from 0 to 32767 words after the variable",
                ));
            }
            return Ok(GlobalPlace::After {
                base,
                offset: (words as u32) * 2,
            });
        }
        let w = self.const_int(a, "an address")?;
        let byte = w * 2;
        let sram_end =
            i128::from(csl_arch::fabric::PE_MEMORY_BYTES - csl_arch::fabric::STACK_BYTES);
        let base = i128::from(csl_arch::fabric::mmio::BASE);
        let ok = (0..=0xffff).contains(&w)
            && ((byte + i128::from(size) <= sram_end)
                || (byte >= base && byte + i128::from(size) <= 0x10000));
        if !ok {
            return Err(self.report(
                Diagnostic::error(
                    codes::TUNG_ADDRESS,
                    format!("word address {w:#x} is neither data memory nor a register"),
                    a.span,
                    "bad address",
                )
                .with_note(format!(
                    "addresses are 16-bit words: memory is words 0 to {:#x}, registers start at word {:#x}",
                    sram_end / 2 - 1,
                    base / 2
                )),
            ));
        }
        Ok(GlobalPlace::At(byte as u32))
    }

    fn param_decl(&mut self, d: &ast::VarDecl, used: &mut HashSet<String>) -> R<()> {
        let ty = self.type_of(&d.ty)?;
        let Ty::Scalar(t) = ty else {
            return Err(self.err(
                codes::TUNG_PARAM,
                "a param must have a scalar type",
                d.ty.span,
                "not a scalar",
            ));
        };
        if !d.dims.is_empty() || d.address.is_some() || d.is_extern {
            return Err(self.err(
                codes::TUNG_PARAM,
                "a param is a single compile-time value",
                d.span,
                "no dimensions, `address` or `extern` allowed",
            ));
        }
        let overrides: Vec<&(String, ParamValue)> = self
            .spec
            .params
            .iter()
            .filter(|(n, _)| *n == d.name.name)
            .collect();
        if overrides.len() > 1 {
            let at = self.spec.origin.unwrap_or(d.name.span);
            return Err(self.err(
                codes::TUNG_PARAM,
                format!(
                    "param `{}` is overridden {} times",
                    d.name.name,
                    overrides.len()
                ),
                at,
                "give each param once",
            ));
        }
        let val = match overrides.first() {
            Some((_, pv)) => {
                used.insert(d.name.name.clone());
                let at = self.spec.origin.unwrap_or(d.name.span);
                match pv {
                    ParamValue::Int(i) => {
                        if !t.is_float() {
                            let lo = if t.is_unsigned() {
                                0
                            } else {
                                -(1i128 << (t.bits() - 1))
                            };
                            let hi = if t.is_unsigned() {
                                (1i128 << t.bits()) - 1
                            } else {
                                (1i128 << (t.bits() - 1)) - 1
                            };
                            if !(lo..=hi).contains(&i128::from(*i)) {
                                return Err(self.report(Diagnostic::error(
                                    codes::TUNG_PARAM,
                                    format!(
                                        "param `{}` is a `{}`, which cannot hold {i}",
                                        d.name.name,
                                        t.name()
                                    ),
                                    at,
                                    "value given here",
                                )));
                            }
                        }
                        self.convert(Val::Int(i128::from(*i)), t, at, "overriding")?
                    }
                    ParamValue::Float(f) => {
                        if !t.is_float() {
                            return Err(self.report(Diagnostic::error(
                                codes::TUNG_PARAM,
                                format!(
                                    "param `{}` is a `{}`, but the override is a float",
                                    d.name.name,
                                    t.name()
                                ),
                                at,
                                if self.spec.origin.is_some() {
                                    "the override is given here"
                                } else {
                                    "declared here"
                                },
                            )));
                        }
                        Val::Const {
                            bits: lower::float_bits(*f, t),
                            ty: t,
                        }
                    }
                }
            }
            None => match &d.init {
                Some(Init::Expr(e)) => {
                    let v = self.eval_const(e, "a param's default")?;
                    self.convert(v, t, e.span, "initialising")?
                }
                Some(Init::List(_, sp)) => {
                    return Err(self.not_a_list(codes::TUNG_PARAM, "a param takes one value", *sp));
                }
                None => {
                    return Err(self.report(
                        Diagnostic::error(
                            codes::TUNG_PARAM,
                            format!("param `{}` has no value", d.name.name),
                            d.name.span,
                            "no default and no override",
                        )
                        .with_help(format!(
                            "give it a default (`{} param {} = ...;`) or a value in Paint's `code('prog [{}:value])`",
                            t.name(),
                            d.name.name,
                            d.name.name
                        )),
                    ));
                }
            },
        };
        if t == Scalar::U64 {
            return Err(self.no_64bit_decl(d));
        }
        self.globals.insert(
            d.name.name.clone(),
            Sym::Const {
                val,
                span: d.name.span,
            },
        );
        Ok(())
    }

    fn check_params(&mut self, used: &HashSet<String>) {
        let mut reported = HashSet::new();
        for (name, _) in &self.spec.params {
            if used.contains(name) || !reported.insert(name.clone()) {
                continue;
            }
            let declared = matches!(self.globals.get(name), Some(Sym::Const { .. }));
            if declared {
                continue;
            }
            let socket = matches!(self.globals.get(name), Some(Sym::Socket(_)));
            let msg = match self.globals.get(name) {
                Some(Sym::Socket(_)) => format!(
                    "`{name}` is a socket, but it is given a number, which overrides a param"
                ),
                Some(_) => format!(
                    "`{name}` is overridden as a param, but the program declares it as a variable or socket"
                ),
                None => format!(
                    "`{name}` is overridden as a param, but the program declares no such param"
                ),
            };
            let mut d = match self.spec.origin {
                Some(o) => Diagnostic::error(codes::TUNG_PARAM, msg, o, "given here"),
                None => Diagnostic::global(codes::TUNG_PARAM, msg),
            };
            d = d.with_help(if socket {
                format!(
                    "bind a socket to a colour value: `{name}:c` after `let c = color(N)` (in code(), an integer is a param override, not a colour)"
                )
            } else {
                format!("declare it, e.g. `xp param {name} = 0;`, or remove the override")
            });
            self.diags.push(d);
        }
    }

    fn bind_sockets(&mut self) {
        let max_out = *self.spec.arch.output_queues().end();
        let max_in = *self.spec.arch.input_queues().end();
        let limit = usize::from(max_out.min(max_in)) + 1;
        let n = self.sockets.len();
        for i in 0..n {
            let Some(s) = self.sockets.get(i).cloned() else {
                continue;
            };
            if i >= limit {
                self.diags.push(
                    Diagnostic::error(
                        codes::TUNG_SOCKET_BINDING,
                        format!(
                            "too many sockets: {} has {limit} output queues",
                            self.spec.arch.name()
                        ),
                        s.span,
                        format!("socket number {}", i + 1),
                    )
                    .with_note("each socket uses its own input and output queue"),
                );
                continue;
            }
            let b = self
                .spec
                .sockets
                .iter()
                .find(|(name, _)| *name == s.name)
                .map(|(_, b)| b.clone());
            match b {
                None => self.diags.push(
                    Diagnostic::error(
                        codes::TUNG_SOCKET_BINDING,
                        format!("socket `{}` is not bound to a colour", s.name),
                        s.span,
                        "declared here",
                    )
                    .with_help(format!(
                        "Paint's `code('prog [{}:colour])` binds it; a `colorpair(a ap)` region binds the pair",
                        s.name
                    )),
                ),
                Some(b) => {
                    let nc = csl_arch::fabric::NUM_COLORS;
                    if b.rx >= nc || b.tx >= nc {
                        self.diags.push(Diagnostic::error(
                            codes::TUNG_SOCKET_BINDING,
                            format!("socket `{}` is bound to colour {}, but colours are 0 to {}", s.name, b.rx.max(b.tx), nc - 1),
                            s.span,
                            "declared here",
                        ));
                        continue;
                    }
                    let q = s.queue;
                    self.prog.input_queues.push(QueueBinding { queue: q, color: b.rx });
                    self.prog.output_queues.push(QueueBinding { queue: q, color: b.tx });
                    if let Some(x) = self.sockets.get_mut(i) {
                        x.binding = Some(b);
                    }
                }
            }
        }
        for (name, _) in &self.spec.sockets {
            if !matches!(self.globals.get(name), Some(Sym::Socket(_))) {
                let msg = format!(
                    "`{name}` is bound as a socket, but the program declares no socket `{name}`"
                );
                let d = match self.spec.origin {
                    Some(o) => Diagnostic::error(codes::TUNG_SOCKET_BINDING, msg, o, "bound here"),
                    None => Diagnostic::global(codes::TUNG_SOCKET_BINDING, msg),
                };
                self.diags
                    .push(d.with_help(format!("declare it with `socket {name};`")));
            }
        }
    }

    fn declare_func(
        &mut self,
        name: &ast::Ident,
        params: &[ast::Param],
        ret: Option<&ast::TypeRef>,
        span: Span,
    ) -> R<()> {
        self.check_fresh(name)?;
        let mut ps = Vec::new();
        for p in params {
            if !p.dims.is_empty() {
                // An array: passed by reference, so any element type will do.
                let t = self.array_type(&p.ty, &p.dims, &p.name)?;
                ps.push(ParamTy::Array(t));
                continue;
            }
            let t = self.scalar_type(&p.ty, "a parameter")?;
            if t == Scalar::U64 {
                return Err(self.err(
                    codes::TUNG_NO_64BIT,
                    "no 64-bit copies on this target: a `u64` parameter",
                    p.ty.span,
                    "`u64` here",
                ));
            }
            ps.push(ParamTy::Scalar(t));
        }
        let ret = match ret {
            Some(t) => {
                let s = self.scalar_type(t, "a return type")?;
                if s == Scalar::U64 {
                    return Err(self.err(
                        codes::TUNG_NO_64BIT,
                        "no 64-bit copies on this target: a `u64` result",
                        t.span,
                        "`u64` here",
                    ));
                }
                Some(s)
            }
            None => None,
        };
        let placeholder = FnBuilder::new(name.name.clone(), ps.len() as u32, span).finish();
        let id = self.prog.functions.push(placeholder);
        self.func_names.insert(name.name.clone(), self.funcs.len());
        self.funcs.push(FuncSig {
            name: name.name.clone(),
            id,
            params: ps,
            ret,
            span: name.span,
        });
        Ok(())
    }

    fn func_body(
        &mut self,
        name: &ast::Ident,
        params: &[ast::Param],
        body: &[ast::Stmt],
        span: Span,
    ) {
        let Some(&fi) = self.func_names.get(&name.name) else {
            return;
        };
        let Some(sig) = self.funcs.get(fi).cloned() else {
            return;
        };
        if sig.span != name.span {
            return;
        }
        self.fb = FnBuilder::new(name.name.clone(), sig.params.len() as u32, span);
        let mut scope = HashMap::new();
        for (i, (p, t)) in params.iter().zip(&sig.params).enumerate() {
            if scope.contains_key(&p.name.name) {
                self.diags.push(Diagnostic::error(
                    codes::TUNG_DUPLICATE,
                    format!("parameter `{}` is declared twice", p.name.name),
                    p.name.span,
                    "again here",
                ));
            }
            let r = self.fb.param(i as u32);
            let local = match t {
                ParamTy::Scalar(ty) => Local::Var { r, ty: *ty },
                ParamTy::Array(ty) => Local::Ref { r, ty: ty.clone() },
            };
            scope.insert(p.name.name.clone(), local);
        }
        self.scopes = vec![scope];
        self.cur_func = Some(fi);
        self.ret_ty = sig.ret;
        self.block(body);
        if sig.ret.is_some() {
            if self.fb.cur_reachable() {
                self.diags.push(Diagnostic::error(
                    codes::TUNG_CALL,
                    format!(
                        "`{}` can reach its end without returning a value",
                        name.name
                    ),
                    span,
                    "missing `return`",
                ));
            }
        } else {
            self.fb.terminate(Term::Ret(None));
        }
        let f = std::mem::replace(&mut self.fb, FnBuilder::sink()).finish();
        if let Some(slot) = self.prog.functions.get_mut(sig.id) {
            *slot = f;
        }
        self.cur_func = None;
        self.ret_ty = None;
    }

    fn check_recursion(&mut self) {
        let n = self.funcs.len();
        let mut adj: Vec<Vec<(usize, Span)>> = vec![Vec::new(); n];
        for &(a, b, s) in &self.calls {
            if let Some(v) = adj.get_mut(a) {
                v.push((b, s));
            }
        }
        // Iterative DFS colouring; report the first back edge of each cycle.
        let mut state = vec![0u8; n];
        let mut reported = HashSet::new();
        for start in 0..n {
            if state[start] != 0 {
                continue;
            }
            let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
            state[start] = 1;
            while let Some(&mut (node, ref mut next)) = stack.last_mut() {
                if let Some(&(to, span)) = adj[node].get(*next) {
                    *next += 1;
                    match state[to] {
                        0 => {
                            state[to] = 1;
                            stack.push((to, 0));
                        }
                        1 if reported.insert(to) => {
                            let callee = self.funcs[to].name.clone();
                            let caller = self.funcs[node].name.clone();
                            let msg = if caller == callee {
                                format!("`{callee}` calls itself")
                            } else {
                                format!(
                                    "`{caller}` calls `{callee}`, which leads back to `{caller}`"
                                )
                            };
                            self.diags.push(
                                    Diagnostic::error(codes::TUNG_RECURSION, msg, span, "recursive call")
                                        .with_note("Tungsten functions cannot be recursive: a PE's stack is small and frames are fixed"),
                                );
                        }
                        _ => {}
                    }
                } else {
                    state[node] = 2;
                    stack.pop();
                }
            }
        }
    }
}
