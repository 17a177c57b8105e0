//! Tungsten (`.w`) files in the editor: every name resolved over the syntax tree, scope by
//! scope (file scope with imported files, functions, blocks, loops, dispatch arms), for
//! hover, go to definition and completion. Keywords and types come from the front end's
//! own tables ([`cslc::tungsten::token::KEYWORDS`], [`Scalar::WRITTEN`]).
//!
//! Imports are followed as the compiler follows them (the importing file's directory, then
//! the library directories) and each file is read once; what an imported file declares at
//! file scope is visible everywhere in the document, in the order the compiler splices it
//! in (which fixes each socket's queue number).

use crate::convert::{self, LineIndex};
use crate::files::Files;
use crate::hover::markdown;
use cslc::source::Span;
use cslc::tungsten::ast::{Arm, Expr, ExprKind, Init, Item, LoopHead, Range, Stmt, StmtKind};
use cslc::tungsten::ast::{TypeKind, TypeRef, VarDecl};
use cslc::tungsten::token::KEYWORDS;
use cslc::tungsten::types::Scalar;
use lsp_types::{
    CompletionItem, CompletionItemKind, Documentation, Hover, Location, Position, Uri,
};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Imports nested deeper than this are not followed (the compiler reports them).
const MAX_IMPORT_DEPTH: u32 = 32;

/// A declaration's longest shown text; longer ones are cut at a character boundary.
const MAX_DETAIL: usize = 160;

/// What a declaration declares.
#[derive(Clone, Debug, PartialEq)]
enum Kind {
    /// The `n`-th socket of the program.
    Socket(usize),
    /// A variable or param; `agg` names its struct or union type.
    Var {
        is_param: bool,
        agg: Option<String>,
    },
    /// A struct or union.
    Aggregate,
    /// A field of the struct or union `of`; `agg` names its own aggregate type.
    Field {
        of: String,
        agg: Option<String>,
    },
    Function,
    /// A function parameter.
    Parameter,
    /// An array parameter (the caller's array, by reference).
    ArrayParameter,
    /// A loop index (`i in [a, b)`) or a range named by `let`.
    Index,
    /// The value a dispatch arm binds (`wavelet(T v)`).
    ArmValue,
    /// The length name of an array dimension (`x[n=8]`).
    DimName,
}

/// One declaration.
#[derive(Clone, Debug)]
struct Def {
    name: String,
    /// Index into [`Names::files`] (0: the document).
    file: usize,
    /// The declared name.
    at: Span,
    kind: Kind,
    /// The declaration's source, whitespace collapsed.
    detail: String,
    /// Byte range of the document in which the name is visible.
    visible: (u32, u32),
}

/// The resolved names of one Tungsten document.
pub struct Names {
    files: Files,
    defs: Vec<Def>,
    /// Uses in the document: the span used and the declaration it names.
    uses: Vec<(Span, usize)>,
    /// Import statements of the document: their span and the file they read.
    imports: Vec<(Span, Option<usize>)>,
}

/// Resolves the names of `text` (a Tungsten file at `path`, if it is on disk).
pub fn resolve(text: &str, path: Option<&Path>, lib_dirs: &[PathBuf]) -> Names {
    let mut names = Names {
        files: Files::new(path, text),
        defs: Vec::new(),
        uses: Vec::new(),
        imports: Vec::new(),
    };
    let mut probe = cslc::SourceMap::new();
    let file_id = probe.add(String::new(), None, String::new());
    let (items, _) = cslc::tungsten::parser::parse(file_id, text);
    // File scope first (the document's items and every imported file's, in the order the
    // compiler splices them), so that a function may be called above its definition.
    let mut seen = HashSet::new();
    if let Some(p) = path.and_then(|p| p.canonicalize().ok()) {
        seen.insert(p);
    }
    let mut sockets = 0;
    names.file_scope(0, &items, lib_dirs, &mut seen, &mut sockets, 0);
    let mut w = Walker {
        names: &mut names,
        scopes: Vec::new(),
    };
    w.items(&items);
    names
}

impl Names {
    /// Declares what `items` (of file `file`) declare at file scope, following imports.
    fn file_scope(
        &mut self,
        file: usize,
        items: &[Item],
        lib_dirs: &[PathBuf],
        seen: &mut HashSet<PathBuf>,
        sockets: &mut usize,
        depth: u32,
    ) {
        let everywhere = (0, u32::MAX);
        for item in items {
            match item {
                Item::Import(name, span) => {
                    let read = self.import(file, name, lib_dirs, seen, sockets, depth);
                    if file == 0 {
                        self.imports.push((*span, read));
                    }
                }
                Item::Sockets(list) => {
                    for n in list {
                        let detail = format!("socket {}", n.name);
                        self.def(
                            file,
                            &n.name,
                            n.span,
                            Kind::Socket(*sockets),
                            detail,
                            everywhere,
                        );
                        *sockets += 1;
                    }
                }
                Item::Var(v) => {
                    let kind = Kind::Var {
                        is_param: v.is_param,
                        agg: agg_name(&v.ty),
                    };
                    self.var(file, v, kind, everywhere);
                }
                Item::Aggregate {
                    is_union,
                    name,
                    fields,
                    ..
                } => {
                    let word = if *is_union { "union" } else { "struct" };
                    let mut detail = format!("{word} {} {{", name.name);
                    for f in fields {
                        detail.push(' ');
                        detail.push_str(&self.source(file, f.span));
                        if !detail.ends_with(';') {
                            detail.push(';');
                        }
                    }
                    detail.push_str(" }");
                    self.def(
                        file,
                        &name.name,
                        name.span,
                        Kind::Aggregate,
                        detail,
                        everywhere,
                    );
                    for f in fields {
                        let kind = Kind::Field {
                            of: name.name.clone(),
                            agg: agg_name(&f.ty),
                        };
                        // Fields are reached through `x.f`, never by a bare name.
                        self.var(file, f, kind, (0, 0));
                    }
                }
                Item::Func { name, span, .. } => {
                    let whole = self.source(file, *span);
                    let head = whole.split('{').next().unwrap_or("").trim().to_string();
                    self.def(
                        file,
                        &name.name,
                        name.span,
                        Kind::Function,
                        head,
                        everywhere,
                    );
                }
                Item::Entry(_) | Item::Pragma(..) | Item::Error => {}
            }
        }
    }

    /// Reads, parses and declares the file that `import "name"` in `file` names; its index.
    fn import(
        &mut self,
        file: usize,
        name: &str,
        lib_dirs: &[PathBuf],
        seen: &mut HashSet<PathBuf>,
        sockets: &mut usize,
        depth: u32,
    ) -> Option<usize> {
        let importer = self.files.get(file).and_then(|f| f.path.clone());
        let dirs = cslc::tungsten::import_dirs(importer.as_deref(), lib_dirs);
        let path = dirs.iter().map(|d| d.join(name)).find(|p| p.is_file())?;
        if let Some(i) = self.files.index_of(&path) {
            return Some(i);
        }
        let key = path.canonicalize().unwrap_or_else(|_| path.clone());
        if depth >= MAX_IMPORT_DEPTH || !seen.insert(key) {
            return None;
        }
        let text = std::fs::read_to_string(&path).ok()?;
        let mut probe = cslc::SourceMap::new();
        let file_id = probe.add(String::new(), None, String::new());
        let (items, _) = cslc::tungsten::parser::parse(file_id, &text);
        let index = self.files.push(path, text);
        self.file_scope(index, &items, lib_dirs, seen, sockets, depth + 1);
        Some(index)
    }

    fn var(&mut self, file: usize, v: &VarDecl, kind: Kind, visible: (u32, u32)) {
        let detail = self.source(file, v.span);
        self.def(file, &v.name.name, v.name.span, kind, detail, visible);
        for d in &v.dims {
            if let Some(n) = &d.name {
                let detail = format!(
                    "{} (a length of `{}`)",
                    self.source(file, d.len.span),
                    v.name.name
                );
                let detail = format!("{} = {detail}", n.name);
                self.def(file, &n.name, n.span, Kind::DimName, detail, visible);
            }
        }
    }

    fn def(
        &mut self,
        file: usize,
        name: &str,
        at: Span,
        kind: Kind,
        detail: String,
        visible: (u32, u32),
    ) -> usize {
        self.defs.push(Def {
            name: name.to_string(),
            file,
            at,
            kind,
            detail,
            visible,
        });
        self.defs.len() - 1
    }

    /// The source of `span` in `file` on one line, at most [`MAX_DETAIL`] bytes.
    fn source(&self, file: usize, span: Span) -> String {
        self.files.source(file, span, MAX_DETAIL)
    }

    /// The program's sockets (the document's and its imports'), in queue order.
    pub fn sockets(&self) -> impl Iterator<Item = &str> {
        let mut s: Vec<(usize, &str)> = self
            .defs
            .iter()
            .filter_map(|d| match d.kind {
                Kind::Socket(n) => Some((n, d.name.as_str())),
                _ => None,
            })
            .collect();
        s.sort_by_key(|x| x.0);
        s.into_iter().map(|x| x.1)
    }

    /// The program's params (the document's and its imports'), in declaration order.
    pub fn params(&self) -> impl Iterator<Item = &str> {
        self.defs.iter().filter_map(|d| match d.kind {
            Kind::Var { is_param: true, .. } if d.visible == (0, u32::MAX) => Some(d.name.as_str()),
            _ => None,
        })
    }

    /// A socket or param of the program named `name` (what Paint's `code()` binds): where
    /// it is declared and its description.
    pub fn binding(&self, name: &str) -> Option<(Option<Location>, String)> {
        let d = self.defs.iter().find(|d| {
            d.name == name
                && matches!(d.kind, Kind::Socket(_) | Kind::Var { is_param: true, .. })
                && d.visible == (0, u32::MAX)
        })?;
        let doc = convert::path_to_uri(self.files.get(0)?.path.as_deref()?)?;
        let mut md = describe(self, d);
        if d.file == 0 {
            md.push_str(&format!("\n\ndeclared in `{}`", self.shown_path(0)));
        }
        Some((self.location(d.file, d.at.start, d.at.end, &doc), md))
    }

    /// The declaration named at `offset` of the document: by a use, or by its own name.
    fn def_at(&self, offset: u32) -> Option<(&Def, Span)> {
        let within = |s: &Span| s.start <= offset && offset <= s.end;
        if let Some((span, d)) = self.uses.iter().find(|(s, _)| within(s)) {
            return self.defs.get(*d).map(|d| (d, *span));
        }
        self.defs
            .iter()
            .find(|d| d.file == 0 && within(&d.at))
            .map(|d| (d, d.at))
    }

    fn location(&self, file: usize, start: u32, end: u32, doc: &Uri) -> Option<Location> {
        self.files.location(file, start, end, doc)
    }

    fn shown_path(&self, file: usize) -> String {
        self.files.shown_path(file)
    }
}

/// The struct or union a written type names.
fn agg_name(ty: &TypeRef) -> Option<String> {
    match &ty.kind {
        TypeKind::Union(n) | TypeKind::Struct(n) => Some(n.name.clone()),
        TypeKind::Scalar(_) => None,
    }
}

/// The walk over the document's tree that records every use.
struct Walker<'a> {
    names: &'a mut Names,
    /// Innermost last: declarations of each open scope (indices into `defs`).
    scopes: Vec<Vec<usize>>,
}

impl Walker<'_> {
    fn items(&mut self, items: &[Item]) {
        for item in items {
            match item {
                Item::Var(v) => self.var_parts(v),
                Item::Aggregate { fields, .. } => {
                    for f in fields {
                        self.var_parts(f);
                    }
                }
                Item::Func {
                    params,
                    ret,
                    body,
                    span,
                    ..
                } => {
                    let mut scope = Vec::new();
                    for p in params {
                        self.ty(&p.ty);
                        for d in &p.dims {
                            self.expr(&d.len);
                        }
                        // The type, the name and any dimensions (`sp x[8]`).
                        let end = p.dims.last().map_or(p.name.span.end, |d| {
                            let after = d.len.span.end as usize;
                            let text = self.names.files.get(0).map_or("", |f| f.text.as_str());
                            let close = text.get(after..).and_then(|t| t.find(']'));
                            close.map_or(d.len.span.end, |i| (after + i + 1) as u32)
                        });
                        let detail = self.names.source(0, Span { end, ..p.ty.span });
                        let kind = if p.dims.is_empty() {
                            Kind::Parameter
                        } else {
                            Kind::ArrayParameter
                        };
                        scope.push(self.names.def(
                            0,
                            &p.name.name,
                            p.name.span,
                            kind,
                            detail,
                            (p.name.span.end, span.end),
                        ));
                    }
                    if let Some(r) = ret {
                        self.ty(r);
                    }
                    self.scopes.push(scope);
                    self.block(body, span.end);
                    self.scopes.pop();
                }
                Item::Entry(s) => self.stmt(s),
                Item::Import(..) | Item::Pragma(..) | Item::Sockets(_) | Item::Error => {}
            }
        }
    }

    /// The types and expressions inside a declaration.
    fn var_parts(&mut self, v: &VarDecl) {
        self.ty(&v.ty);
        for d in &v.dims {
            self.expr(&d.len);
        }
        if let Some(a) = &v.address {
            self.expr(a);
        }
        match &v.init {
            Some(Init::Expr(e)) => self.expr(e),
            Some(Init::List(es, _)) => {
                for e in es {
                    self.expr(e);
                }
            }
            None => {}
        }
    }

    fn ty(&mut self, t: &TypeRef) {
        if let TypeKind::Union(n) | TypeKind::Struct(n) = &t.kind {
            self.use_name(&n.name, n.span, |k| *k == Kind::Aggregate);
        }
    }

    /// Statements of a scope that ends at byte `end`.
    fn block(&mut self, stmts: &[Stmt], end: u32) {
        self.scopes.push(Vec::new());
        for s in stmts {
            self.stmt_in(s, end);
        }
        self.scopes.pop();
    }

    fn stmt(&mut self, s: &Stmt) {
        self.stmt_in(s, s.span.end);
    }

    /// A statement whose declarations stay visible until byte `end`.
    fn stmt_in(&mut self, s: &Stmt, end: u32) {
        match &s.kind {
            StmtKind::Decl(v) => {
                self.var_parts(v);
                let kind = Kind::Var {
                    is_param: v.is_param,
                    agg: agg_name(&v.ty),
                };
                let first = self.names.defs.len();
                self.names.var(0, v, kind, (v.name.span.end, end));
                let added: Vec<usize> = (first..self.names.defs.len()).collect();
                self.declare(added);
            }
            StmtKind::Assign(a, _, b) => {
                self.expr(a);
                self.expr(b);
            }
            StmtKind::Expr(e) => self.expr(e),
            StmtKind::Block(b) | StmtKind::Parallel(b) => self.block(b, s.span.end),
            StmtKind::If(c, a, b) => {
                self.expr(c);
                self.stmt(a);
                if let Some(b) = b {
                    self.stmt(b);
                }
            }
            StmtKind::Loop(head, body) => match head {
                LoopHead::In(i, range) => {
                    self.range(range);
                    let detail = format!("{} in {}", i.name, self.range_text(range));
                    let d = self.names.def(
                        0,
                        &i.name,
                        i.span,
                        Kind::Index,
                        detail,
                        (i.span.end, body.span.end),
                    );
                    self.scopes.push(vec![d]);
                    self.stmt(body);
                    self.scopes.pop();
                }
                LoopHead::Forall(i) => {
                    self.use_name(&i.name, i.span, |k| *k == Kind::Index);
                    self.stmt(body);
                }
                LoopHead::Forever => self.stmt(body),
            },
            StmtKind::Let(i, range) => {
                self.range(range);
                let detail = format!("let {} in {}", i.name, self.range_text(range));
                let d = self
                    .names
                    .def(0, &i.name, i.span, Kind::Index, detail, (i.span.end, end));
                self.declare(vec![d]);
            }
            StmtKind::Dispatch(sock, arms) => {
                self.use_name(&sock.name, sock.span, |k| matches!(k, Kind::Socket(_)));
                for arm in arms {
                    match arm {
                        Arm::Wavelet(bound, body, span) => {
                            let mut scope = Vec::new();
                            if let Some((ty, v)) = bound {
                                self.ty(ty);
                                let detail = format!(
                                    "wavelet({}) — each wavelet arriving on `{}`",
                                    self.names.source(
                                        0,
                                        Span {
                                            end: v.span.end,
                                            ..ty.span
                                        }
                                    ),
                                    sock.name
                                );
                                scope.push(self.names.def(
                                    0,
                                    &v.name,
                                    v.span,
                                    Kind::ArmValue,
                                    detail,
                                    (v.span.end, span.end),
                                ));
                            }
                            self.scopes.push(scope);
                            self.block(body, span.end);
                            self.scopes.pop();
                        }
                        Arm::Control(body, span) => self.block(body, span.end),
                    }
                }
            }
            StmtKind::Flip(sock) => {
                self.use_name(&sock.name, sock.span, |k| matches!(k, Kind::Socket(_)));
            }
            StmtKind::Return(e) => {
                if let Some(e) = e {
                    self.expr(e);
                }
            }
            StmtKind::Empty | StmtKind::Error => {}
        }
    }

    fn declare(&mut self, defs: Vec<usize>) {
        if let Some(top) = self.scopes.last_mut() {
            top.extend(defs);
        }
    }

    fn range(&mut self, r: &Range) {
        self.expr(&r.lo);
        self.expr(&r.hi);
    }

    fn range_text(&self, r: &Range) -> String {
        let hi = match r.hi.kind {
            ExprKind::Inf => "∞".to_string(),
            _ => self.names.source(0, r.hi.span),
        };
        let close = if r.closed { ']' } else { ')' };
        format!("[{}, {hi}{close}", self.names.source(0, r.lo.span))
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Name(n) => {
                self.use_name(&n.name, n.span, |k| {
                    !matches!(k, Kind::Aggregate | Kind::Function | Kind::Field { .. })
                });
            }
            ExprKind::Index(b, i) => {
                self.expr(b);
                if let Some(i) = i {
                    self.expr(i);
                }
            }
            ExprKind::Member(b, field) => {
                self.expr(b);
                if let Some(of) = self.aggregate_of(b) {
                    let found = self.names.defs.iter().position(|d| {
                        d.name == field.name
                            && matches!(&d.kind, Kind::Field { of: o, .. } if *o == of)
                    });
                    if let Some(d) = found {
                        self.names.uses.push((field.span, d));
                    }
                }
            }
            ExprKind::Call(f, args) => {
                self.use_name(&f.name, f.span, |k| *k == Kind::Function);
                for a in args {
                    self.expr(a);
                }
            }
            ExprKind::Typed(x, _, _) | ExprKind::Unary(_, x) | ExprKind::Control(x) => self.expr(x),
            ExprKind::Binary(_, a, b)
            | ExprKind::Min(a, b)
            | ExprKind::Max(a, b)
            | ExprKind::Round(a, b) => {
                self.expr(a);
                self.expr(b);
            }
            ExprKind::Ternary(c, a, b) => {
                self.expr(c);
                self.expr(a);
                self.expr(b);
            }
            ExprKind::Cast(t, x) | ExprKind::Bitcast(t, x) => {
                self.ty(t);
                self.expr(x);
            }
            ExprKind::Int(_)
            | ExprKind::Float { .. }
            | ExprKind::Inf
            | ExprKind::Nan
            | ExprKind::Error => {}
        }
    }

    /// The struct or union that `e` (`x`, `x[i]`, `x.f`, `x.f[i]`) has as its type.
    fn aggregate_of(&self, e: &Expr) -> Option<String> {
        match &e.kind {
            ExprKind::Name(n) => {
                let (_, d) = self.names.uses.iter().rev().find(|(s, _)| *s == n.span)?;
                match &self.names.defs.get(*d)?.kind {
                    Kind::Var { agg, .. } => agg.clone(),
                    _ => None,
                }
            }
            ExprKind::Index(b, _) => self.aggregate_of(b),
            ExprKind::Member(_, f) => {
                let (_, d) = self.names.uses.iter().rev().find(|(s, _)| *s == f.span)?;
                match &self.names.defs.get(*d)?.kind {
                    Kind::Field { agg, .. } => agg.clone(),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Records the use of `name` at `span`: the innermost declaration in scope whose kind
    /// `fits`, else one at file scope.
    fn use_name(&mut self, name: &str, span: Span, fits: impl Fn(&Kind) -> bool) {
        let defs = &self.names.defs;
        let local = self
            .scopes
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .copied()
            .find(|&d| defs.get(d).is_some_and(|d| d.name == name && fits(&d.kind)));
        let found = local.or_else(|| {
            defs.iter()
                .position(|d| d.name == name && d.visible == (0, u32::MAX) && fits(&d.kind))
        });
        if let Some(d) = found {
            self.names.uses.push((span, d));
        }
    }
}

/// The identifier-like word around byte `offset` of `text`, with its start.
fn word_at(text: &str, offset: usize) -> Option<(usize, &str)> {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let offset = offset.min(text.len());
    text.get(..offset)?;
    let start = crate::complete::word_start(text.as_bytes(), offset);
    let end = text
        .get(offset..)?
        .char_indices()
        .find(|(_, c)| !is_word(*c))
        .map_or(text.len(), |(i, _)| offset + i);
    let w = text.get(start..end)?;
    (!w.is_empty()).then_some((start, w))
}

/// What a declaration is, in words, after its source.
fn describe(names: &Names, d: &Def) -> String {
    let mut md = format!("```tungsten\n{}\n```", d.detail);
    let note = match &d.kind {
        Kind::Socket(n) => Some(format!(
            "socket {n} of the program: input queue {n}, output queue {n}; Paint's `code()` binds it to a colour"
        )),
        Kind::Var { is_param: true, .. } => {
            Some("a param: Paint's `code()` may override it per region".to_string())
        }
        Kind::Field { of, .. } => Some(format!("a field of `{of}`")),
        Kind::Parameter => Some("a function parameter".to_string()),
        Kind::ArrayParameter => {
            Some("an array parameter: the caller's array, by reference".to_string())
        }
        Kind::Index => Some("a loop index (loop-local; `xp` unless a bound is wider)".to_string()),
        Kind::ArmValue => Some("the value of the wavelet this arm runs for".to_string()),
        Kind::DimName => Some("the length of an array dimension".to_string()),
        Kind::Var { .. } | Kind::Aggregate | Kind::Function => None,
    };
    if let Some(n) = note {
        md.push_str("\n\n");
        md.push_str(&n);
    }
    if d.file != 0 {
        md.push_str(&format!("\n\ndeclared in `{}`", names.shown_path(d.file)));
    }
    md
}

/// The hover at `pos`: a name's declaration, a keyword's or a type's description.
pub fn hover(
    text: &str,
    path: Option<&Path>,
    lib_dirs: &[PathBuf],
    pos: Position,
) -> Option<Hover> {
    let ix = LineIndex::new(text);
    let offset = ix.offset(pos);
    let names = resolve(text, path, lib_dirs);
    if let Some((d, span)) = names.def_at(offset as u32) {
        let range = ix.range(span.start as usize, span.end as usize);
        return Some(markdown(describe(&names, d), Some(range)));
    }
    let (start, word) = word_at(text, offset)?;
    let range = Some(ix.range(start, start + word.len()));
    if let Some((_, doc)) = KEYWORDS.iter().find(|(k, _)| *k == word) {
        return Some(markdown(format!("`{word}`: {doc}"), range));
    }
    let s = Scalar::WRITTEN.iter().find(|s| s.name() == word)?;
    Some(markdown(format!("`{word}`: {}", s.summary()), range))
}

/// The declaration of the name at `pos`, or the file an `import` at `pos` reads.
pub fn definition(
    text: &str,
    path: Option<&Path>,
    lib_dirs: &[PathBuf],
    doc: &lsp_types::Uri,
    pos: Position,
) -> Option<Location> {
    let offset = LineIndex::new(text).offset(pos) as u32;
    let names = resolve(text, path, lib_dirs);
    if let Some((d, _)) = names.def_at(offset) {
        return names.location(d.file, d.at.start, d.at.end, doc);
    }
    let (_, file) = names
        .imports
        .iter()
        .find(|(s, _)| s.start <= offset && offset <= s.end)?;
    names.location((*file)?, 0, 0, doc)
}

/// The completions at `pos`: after `x.`, the fields of `x`'s struct or union (after
/// `s[].`, a wavelet's halves); elsewhere the names visible there, keywords and types.
pub fn complete(
    text: &str,
    path: Option<&Path>,
    lib_dirs: &[PathBuf],
    pos: Position,
) -> Vec<CompletionItem> {
    let offset = LineIndex::new(text).offset(pos);
    let names = resolve(text, path, lib_dirs);
    let start = word_at(text, offset.saturating_sub(1))
        .filter(|(s, w)| s + w.len() == offset)
        .map_or(offset, |(s, _)| s);
    let before = text.get(..start).unwrap_or("").trim_end();
    if let Some(base) = before.strip_suffix('.') {
        return members(&names, base.trim_end());
    }
    let mut items = Vec::new();
    let mut shown = HashSet::new();
    // Innermost first: a local hides a file-scope name of the same spelling.
    let mut visible: Vec<&Def> = names
        .defs
        .iter()
        .filter(|d| {
            let (a, b) = d.visible;
            (a as usize) <= offset && offset <= b as usize && (a, b) != (0, 0)
        })
        .collect();
    visible.sort_by_key(|d| std::cmp::Reverse(d.visible.0));
    for d in visible {
        if !shown.insert(d.name.clone()) {
            continue;
        }
        let kind = match d.kind {
            Kind::Socket(_) => CompletionItemKind::INTERFACE,
            Kind::Var { is_param: true, .. } => CompletionItemKind::CONSTANT,
            Kind::Aggregate => CompletionItemKind::STRUCT,
            Kind::Function => CompletionItemKind::FUNCTION,
            _ => CompletionItemKind::VARIABLE,
        };
        items.push(CompletionItem {
            label: d.name.clone(),
            kind: Some(kind),
            detail: Some(d.detail.clone()),
            ..Default::default()
        });
    }
    for s in Scalar::WRITTEN {
        items.push(CompletionItem {
            label: s.name().to_string(),
            kind: Some(CompletionItemKind::TYPE_PARAMETER),
            documentation: Some(Documentation::String(s.summary().to_string())),
            ..Default::default()
        });
    }
    for (k, doc) in KEYWORDS {
        items.push(CompletionItem {
            label: k.to_string(),
            kind: Some(CompletionItemKind::KEYWORD),
            documentation: Some(Documentation::String(doc.to_string())),
            ..Default::default()
        });
    }
    items
}

/// Completions after `base.`.
fn members(names: &Names, base: &str) -> Vec<CompletionItem> {
    // `s[].data`: the halves of the next wavelet on socket `s`.
    if base.ends_with("[]") {
        let halves = [
            ("data", "the low 16 bits of the next wavelet"),
            (
                "index",
                "the high 16 bits of the next wavelet (only as the index of the one write of a one-statement loop)",
            ),
            ("idx", "the same as `index`"),
        ];
        return halves
            .iter()
            .map(|(l, d)| CompletionItem {
                label: l.to_string(),
                kind: Some(CompletionItemKind::FIELD),
                documentation: Some(Documentation::String(d.to_string())),
                ..Default::default()
            })
            .collect();
    }
    // The variable's name: the last word of `base`, skipping one `[...]` subscript.
    let trimmed = match base.strip_suffix(']') {
        Some(b) => b.rfind('[').and_then(|i| b.get(..i)).unwrap_or(b),
        None => base,
    };
    let Some((_, var)) = word_at(trimmed, trimmed.len().saturating_sub(1)) else {
        return Vec::new();
    };
    let Some(agg) = names.defs.iter().find_map(|d| match &d.kind {
        Kind::Var { agg: Some(a), .. } if d.name == var => Some(a.clone()),
        _ => None,
    }) else {
        return Vec::new();
    };
    names
        .defs
        .iter()
        .filter(|d| matches!(&d.kind, Kind::Field { of, .. } if *of == agg))
        .map(|d| CompletionItem {
            label: d.name.clone(),
            kind: Some(CompletionItemKind::FIELD),
            detail: Some(d.detail.clone()),
            ..Default::default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::HoverContents;

    const SRC: &str = "socket rx, tx;\nxp param N = 4;\nunion W { u32 u; xp w[2]; };\nsp a[n=N];\n\
        twice(sp x) -> sp { return x + x; }\n\
        {\n  union W h;\n  i in [0, N) a[i] = twice(a[i]);\n  sp s = 0.0;\n  \
        h.w[0] = 1;\n  tx[] <- h.u;\n  forever dispatch(rx) { wavelet(sp v) { s = s + v; } }\n}\n";

    fn at(text: &str, needle: &str, nth: usize) -> u32 {
        let mut from = 0;
        let mut found = 0;
        for _ in 0..=nth {
            found = from + text.get(from..).and_then(|t| t.find(needle)).unwrap_or(0);
            from = found + 1;
        }
        found as u32
    }

    fn def_name(n: &Names, offset: u32) -> Option<(String, u32)> {
        n.def_at(offset).map(|(d, _)| (d.name.clone(), d.at.start))
    }

    #[test]
    fn uses_resolve_to_their_declarations() {
        let n = resolve(SRC, None, &[]);
        // `N` in the loop bound is the param; `i` in `a[i]` the loop index.
        assert_eq!(
            def_name(&n, at(SRC, "N)", 0)),
            Some(("N".into(), at(SRC, "N =", 0)))
        );
        assert_eq!(
            def_name(&n, at(SRC, "i]", 0)),
            Some(("i".into(), at(SRC, "i in", 0)))
        );
        // A call, a parameter, a field through a union variable, a socket, an arm value.
        assert_eq!(
            def_name(&n, at(SRC, "twice(a", 0)).map(|d| d.1),
            Some(at(SRC, "twice", 0))
        );
        assert_eq!(
            def_name(&n, at(SRC, "x + x", 0)).map(|d| d.1),
            Some(at(SRC, "x)", 0))
        );
        assert_eq!(
            def_name(&n, at(SRC, "w[0]", 0)).map(|d| d.1),
            Some(at(SRC, "w[2]", 0))
        );
        assert_eq!(
            def_name(&n, at(SRC, "u;\n  forever", 0)).map(|d| d.1),
            Some(at(SRC, "u;", 0))
        );
        assert_eq!(
            def_name(&n, at(SRC, "rx)", 0)).map(|d| d.1),
            Some(at(SRC, "rx", 0))
        );
        assert_eq!(
            def_name(&n, at(SRC, "v;", 0)).map(|d| d.1),
            Some(at(SRC, "v)", 0))
        );
        // `s` inside the arm is the local declared before the dispatch.
        assert_eq!(
            def_name(&n, at(SRC, "s + v", 0)).map(|d| d.1),
            Some(at(SRC, "s = 0.0", 0))
        );
    }

    #[test]
    fn array_parameters_are_described_with_their_dimensions() {
        let src = "total(sp x[ 4 ]) -> sp { return x[0]; }\n";
        let n = resolve(src, None, &[]);
        let (d, _) = n.def_at(at(src, "x[0]", 0)).expect("x");
        assert_eq!(d.kind, Kind::ArrayParameter);
        assert_eq!(d.detail, "sp x[ 4 ]");
    }

    #[test]
    fn an_inner_declaration_hides_outer_ones_only_inside_its_block() {
        let src = "xp k = 1;\nf() { k = 6; }\n{ xp k = 5; { xp k = 2; k = 3; } k = 4; }\n";
        let n = resolve(src, None, &[]);
        let def_of = |use_at: &str| def_name(&n, at(src, use_at, 0)).map(|d| d.1);
        assert_eq!(def_of("k = 3"), Some(at(src, "k = 2", 0)));
        assert_eq!(def_of("k = 4"), Some(at(src, "k = 5", 0)));
        assert_eq!(def_of("k = 6"), Some(at(src, "k = 1", 0)));
    }

    #[test]
    fn sockets_are_numbered_in_declaration_order_across_imports() {
        let dir = std::env::temp_dir().join(format!("csl-lsp-w-{}", std::process::id()));
        std::fs::create_dir_all(&dir).ok();
        std::fs::write(dir.join("ports.w"), "socket a;\nxp param M = 2;\n").ok();
        let src = "import \"ports.w\";\nsocket b;\n{ b[] <- a[].data; xp q = M; }\n";
        let main = dir.join("main.w");
        let n = resolve(src, Some(&main), &[]);
        let (d, _) = n.def_at(at(src, "b[]", 0)).expect("b");
        assert_eq!(d.kind, Kind::Socket(1));
        let (d, _) = n.def_at(at(src, "a[]", 0)).expect("a");
        assert_eq!((d.kind.clone(), d.file), (Kind::Socket(0), 1));
        assert!(describe(&n, d).contains("ports.w"));
        assert!(n.def_at(at(src, "M;", 0)).is_some());
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn hover_describes_names_keywords_and_types() {
        let ix = LineIndex::new(SRC);
        let pos = |o: u32| ix.position(o as usize);
        let text = |h: Hover| match h.contents {
            HoverContents::Markup(m) => m.value,
            _ => String::new(),
        };
        let h = hover(SRC, None, &[], pos(at(SRC, "rx)", 0)))
            .map(text)
            .unwrap_or_default();
        assert!(h.contains("socket 0") && h.contains("input queue 0"), "{h}");
        let h = hover(SRC, None, &[], pos(at(SRC, "N)", 0)))
            .map(text)
            .unwrap_or_default();
        assert!(
            h.contains("xp param N = 4") && h.contains("override"),
            "{h}"
        );
        let h = hover(SRC, None, &[], pos(at(SRC, "dispatch", 0)))
            .map(text)
            .unwrap_or_default();
        assert!(h.starts_with("`dispatch`"), "{h}");
        let h = hover(SRC, None, &[], pos(at(SRC, "sp s", 0)))
            .map(text)
            .unwrap_or_default();
        assert!(h.contains("32-bit IEEE float"), "{h}");
    }

    #[test]
    fn completion_offers_what_is_visible_and_fields_after_a_dot() {
        let src = "union W { u32 u; xp w[2]; };\n{ union W h; xp inner = 1; h. }\nxp after;\n";
        let ix = LineIndex::new(src);
        let labels =
            |items: Vec<CompletionItem>| items.into_iter().map(|i| i.label).collect::<Vec<_>>();
        let dot = at(src, "h. ", 0) + 2;
        let fields = labels(complete(src, None, &[], ix.position(dot as usize)));
        assert_eq!(fields, ["u", "w"]);
        let inside = labels(complete(
            src,
            None,
            &[],
            ix.position(at(src, "h. ", 0) as usize),
        ));
        assert!(inside.iter().any(|l| l == "inner") && inside.iter().any(|l| l == "after"));
        assert!(inside.iter().any(|l| l == "dispatch") && inside.iter().any(|l| l == "sp"));
        let outside = labels(complete(src, None, &[], ix.position(src.len() - 1)));
        assert!(!outside.iter().any(|l| l == "inner"));
    }

    proptest::proptest! {
        /// Cut and spliced programs (holes in the tree, names used before or without
        /// their declarations, unbalanced scopes): every request at every byte offset
        /// is answered without a panic.
        #[test]
        fn mutated_programs_never_panic(cuts in proptest::collection::vec((0usize..SRC.len(), 0usize..12, 0usize..SRC.len()), 1..5)) {
            let mut text = SRC.to_string();
            for (at, len, from) in cuts {
                let at = at.min(text.len());
                let end = (at + len).min(text.len());
                let piece: String = SRC.chars().skip(from % 40).take(len).collect();
                if text.is_char_boundary(at) && text.is_char_boundary(end) {
                    text.replace_range(at..end, &piece);
                }
            }
            let ix = LineIndex::new(&text);
            let doc: lsp_types::Uri = "file:///m.w".parse().expect("uri");
            for o in 0..=text.len() {
                let pos = ix.position(o);
                let _ = hover(&text, None, &[], pos);
                let _ = definition(&text, None, &[], &doc, pos);
                let _ = complete(&text, None, &[], pos);
            }
        }
    }
}
