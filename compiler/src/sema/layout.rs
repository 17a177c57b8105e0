//! The layout block: evaluates `layout { ... }` of the top-level file into a
//! [`LayoutPlan`] (rectangle, code per PE, colour configuration, host names), and compiles
//! one program class per distinct (file, params) pair.

use super::builtins::Call;
use super::eval::{Env, Val};
use super::value::Value;
use super::{Ctx, R, Reported, Sema};
use crate::diag::{Diagnostic, codes};
use crate::ir::Program;
use crate::source::{FileId, Span};
use crate::syntax::ast::{DeclKind, ExprId, ExprKind};
use csl_arch::fabric::PeColorSet;
use csl_arch::image::{ExportKind, ExportName, Routes};
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

/// A layout-only builtin: checks its arguments and records them in the plan.
pub type LayoutBuiltin = fn(&mut Sema, &mut Env, &mut LayoutPlan, &[ExprId], Span) -> R<()>;

/// One distinct code given to PEs: a program file and its params.
#[derive(Clone)]
pub struct TileCode {
    /// The PE program file.
    pub file: FileId,
    /// Its params.
    pub params: Rc<Vec<(crate::symbol::Symbol, Value)>>,
}

/// The code of every PE, stored once per distinct (file, params): a whole wafer has
/// 737,000 PEs but a handful of codes, so a PE costs one index and one span.
#[derive(Default)]
pub struct TileTable {
    /// Distinct codes, in the order they were first given.
    pub codes: Vec<TileCode>,
    /// The index into `codes` by (file, canonical params).
    ids: HashMap<(FileId, String), u32>,
    /// Per PE (row-major over the rectangle), its code and `@set_tile_code` call.
    pes: Vec<Option<(u32, Span)>>,
    /// Codes given before: (file, params, index into `codes`). A params value equal to
    /// one seen before (by [`same_value`]) needs no canonical key.
    memo: Vec<(FileId, Value, u32)>,
}

impl TileTable {
    /// The code index and call of PE (x, y) of a `width`-wide rectangle, if it has code.
    pub fn get(&self, x: u32, y: u32, width: u32) -> Option<(u32, Span)> {
        let i = y as usize * width as usize + x as usize;
        self.pes.get(i).copied().flatten()
    }

    /// Records the code of PE (x, y); `key` is the canonical form of (file, params).
    /// Returns the code's index.
    fn set(
        &mut self,
        place: (u32, u32, u32, u32),
        key: (FileId, String),
        code: TileCode,
        span: Span,
    ) -> u32 {
        let next = self.codes.len() as u32;
        let id = *self.ids.entry(key).or_insert(next);
        if id == next {
            self.codes.push(code);
        }
        self.place(place, id, span);
        id
    }

    /// Gives PE (x, y) the code with index `id`.
    fn place(&mut self, (x, y, w, h): (u32, u32, u32, u32), id: u32, span: Span) {
        if self.pes.is_empty() {
            self.pes = vec![None; w as usize * h as usize];
        }
        if let Some(p) = self.pes.get_mut(y as usize * w as usize + x as usize) {
            *p = Some((id, span));
        }
    }
}

/// Most values a memo keeps (the tile-code memo, and the configuration memo per colour).
const MEMO_SIZE: usize = 64;
/// How deep [`same_value`] looks into the memo's values.
const MEMO_DEPTH: u32 = 6;

/// Whether `a` and `b` are certainly equal values: equal scalars, or structs and arrays
/// that share their storage or (up to `depth` levels down) have equal fields. `false`
/// says nothing (floats, for one, are never compared).
fn same_value(a: &Value, b: &Value, depth: u32) -> bool {
    match (a, b) {
        (Value::Struct(x), Value::Struct(y)) => {
            Rc::ptr_eq(x, y)
                || (depth > 0
                    && x.len() == y.len()
                    && x.iter()
                        .zip(y.iter())
                        .all(|((n, v), (m, w))| n == m && same_value(v, w, depth - 1)))
        }
        (Value::Array(t, x), Value::Array(u, y)) => {
            t == u
                && (Rc::ptr_eq(x, y)
                    || (depth > 0
                        && x.len() == y.len()
                        && x.iter()
                            .zip(y.iter())
                            .all(|(v, w)| same_value(v, w, depth - 1))))
        }
        (Value::Void, Value::Void) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x, t), Value::Int(y, u)) => x == y && t == u,
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::Color(x), Value::Color(y)) => x == y,
        (Value::Dir(x), Value::Dir(y)) => x == y,
        _ => false,
    }
}

/// Moves memo entry `i` one place towards the front and returns it: the values a layout
/// uses most are then found first. (Equal values always map to the same result, so the
/// order of the entries never changes what is found.)
fn promote<T>(memo: &mut [T], i: usize) -> &T {
    let at = i.saturating_sub(1);
    memo.swap(at, i);
    &memo[at]
}

/// What the layout block produced.
#[derive(Default)]
pub struct LayoutPlan {
    /// `(width, height, call span)` from `@set_rectangle`.
    pub rect: Option<(u32, u32, Span)>,
    /// Code per PE (rectangle-relative coordinates).
    pub tiles: TileTable,
    /// Colour configurations (each distinct one stored once).
    pub routes: Routes,
    /// Where each of `routes` was configured.
    pub route_spans: Vec<Span>,
    /// Configurations `@set_color_config` has parsed, by colour: (value, number in
    /// `routes`). A layout configures a few values millions of times; one equal to a
    /// value seen before for its colour (by [`same_value`]) is not parsed again.
    config_memo: Vec<Vec<(Value, u32)>>,
    /// Which (x, y, colour) are configured: one bit each, so that finding a second
    /// configuration costs a bit test (a wafer has millions); the first one's span is
    /// looked up in `routes` only when that happens.
    pub configured: Option<PeColorSet>,
    /// Host-visible names.
    pub exports: Vec<(ExportName, Span)>,
}

impl Sema {
    /// Evaluates the layout block of the top-level module `top`.
    pub fn run_layout(&mut self, top: super::module::ModId) -> Option<LayoutPlan> {
        let ast = self.mods[top].ast.clone();
        let layouts: Vec<_> = ast
            .decls
            .iter()
            .filter_map(|d| {
                if let DeclKind::Layout(b) = &d.kind {
                    Some((b, d.span))
                } else {
                    None
                }
            })
            .collect();
        let file = self.mods[top].file;
        match layouts.as_slice() {
            [] => {
                let display = self.sources.get(file).display.clone();
                self.report(
                    Diagnostic::global(codes::LAYOUT_MISSING, format!("`{display}` has no layout block"))
                        .with_help("the file given to cslc must contain `layout { ... }` with @set_rectangle and @set_tile_code"),
                );
                None
            }
            [(block, _)] => {
                self.layout = Some(LayoutPlan::default());
                let mut env = Env::comptime(top, ast.clone(), Ctx::Layout);
                let ok = self.exec_block(&mut env, block).is_ok();
                let plan = self.layout.take()?;
                if !ok {
                    return None;
                }
                let Some((w, h, rspan)) = plan.rect else {
                    self.report(Diagnostic::error(
                        codes::LAYOUT_RECTANGLE,
                        "the layout never calls @set_rectangle",
                        block.span,
                        "in this layout block",
                    ));
                    return None;
                };
                let mut missing = Vec::new();
                for y in 0..h {
                    for x in 0..w {
                        if plan.tiles.get(x, y, w).is_none() {
                            missing.push((x, y));
                        }
                    }
                }
                if !missing.is_empty() {
                    let list: Vec<String> = missing
                        .iter()
                        .take(6)
                        .map(|(x, y)| format!("({x}, {y})"))
                        .collect();
                    let more = if missing.len() > 6 {
                        format!(" and {} more", missing.len() - 6)
                    } else {
                        String::new()
                    };
                    self.report(
                        Diagnostic::error(
                            codes::LAYOUT_NO_CODE,
                            format!(
                                "{} PE{} of the rectangle have no code",
                                missing.len(),
                                if missing.len() == 1 { "" } else { "s" }
                            ),
                            rspan,
                            "rectangle set here",
                        )
                        .with_note(format!("without code: {}{more}", list.join(", ")))
                        .with_help("call @set_tile_code for every PE of the rectangle"),
                    );
                    return None;
                }
                Some(plan)
            }
            [_, (second, _), ..] => {
                self.report(Diagnostic::error(
                    codes::LAYOUT_MISSING,
                    "a program has exactly one layout block",
                    second.span,
                    "second layout block",
                ));
                None
            }
        }
    }

    /// Runs the top-level `comptime` blocks of the layout file when it is not also PE code
    /// (then they run as part of the PE program instead): `@comptime_assert` and
    /// `@comptime_print` there check the layout's params.
    pub fn run_layout_file_comptime(&mut self, top: super::module::ModId) {
        let ast = self.mods[top].ast.clone();
        for decl in &ast.decls {
            if let DeclKind::Comptime(block) = &decl.kind {
                let mut env = Env::comptime(top, ast.clone(), Ctx::Comptime);
                let _ = self.exec_block(&mut env, block);
            }
        }
    }

    /// Compiles one program class: `file` instantiated with `params`.
    pub fn compile_class(
        &mut self,
        file: FileId,
        params: &[(crate::symbol::Symbol, Value)],
    ) -> Option<Program> {
        self.prog = Some(Program::default());
        self.bound_ids.clear();
        self.sigs.clear();
        self.global_types.clear();
        self.dsd_consts.clear();
        self.dsr_cfgs.clear();
        self.dsr_queues.clear();
        self.teardown_handlers.clear();
        let first = self.mods.len();
        self.class_first_mod = first;
        let map: BTreeMap<String, Value> = params
            .iter()
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect();
        let root = self.instantiate(file, map, String::new(), None);
        // Run the comptime blocks of the root and of every module it imports (eagerly
        // instantiating `const m = @import_module(...)` declarations), to a fixpoint.
        // Instances are only ever appended, so one cursor visits each once, in creation
        // order (linear in the number of instances).
        let mut next = first;
        while next < self.mods.len() {
            let m = <super::module::ModId as cranelift_entity::EntityRef>::new(next);
            next += 1;
            self.instantiate_imports(m);
            self.run_top_comptime(m);
        }
        let _ = root;
        self.build_teardown_task();
        if self.opts.analyse_all {
            let mods: Vec<_> = self.mods.keys().skip(first).collect();
            for m in mods {
                self.analyse_module_bodies(m);
            }
        }
        self.prog.take()
    }

    /// Lowers every function and task of `m` that does not need comptime arguments, so that
    /// its body is checked even if nothing calls it.
    fn analyse_module_bodies(&mut self, m: super::module::ModId) {
        let ast = self.mods[m].ast.clone();
        for (i, d) in ast.decls.iter().enumerate() {
            let dref = super::module::DeclRef {
                module: m,
                index: i as u32,
            };
            match &d.kind {
                DeclKind::Fn(f)
                    if !f.is_inline
                        && f.body.is_some()
                        && f.params.iter().all(|p| !p.is_comptime && p.ty.is_some()) =>
                {
                    // Functions returning comptime-only types run only at comptime.
                    let saved = self.diags.len();
                    let mut env = Env::comptime(m, ast.clone(), Ctx::Comptime);
                    let ret = self.eval_type(&mut env, f.ret);
                    let ptys_ok = f.params.iter().all(|p| {
                        p.ty.is_some_and(|t| matches!(self.eval_type(&mut env, t), Ok(t) if !self.types.is_comptime_only(t)))
                    });
                    self.diags.truncate(saved);
                    // Functions returning aggregates can only run at comptime.
                    let runtime_ret = matches!(ret, Ok(t) if t == self.types.common.void || self.types.num_ty(t).is_some());
                    if runtime_ret && ptys_ok {
                        let _ = self.lower_fn(dref, f.name.span);
                    }
                }
                DeclKind::Task(t) => {
                    let _ = self.lower_task(dref, t.name.span);
                }
                _ => {}
            }
        }
    }

    fn instantiate_imports(&mut self, m: super::module::ModId) {
        let ast = self.mods[m].ast.clone();
        for (i, d) in ast.decls.iter().enumerate() {
            if let DeclKind::Var(v) = &d.kind
                && let Some(init) = v.init
                && matches!(&ast.exprs[init].kind, ExprKind::Builtin { name, .. } if name.name == "import_module")
            {
                let _ = self.const_value(
                    super::module::DeclRef {
                        module: m,
                        index: i as u32,
                    },
                    v.name.span,
                );
            }
        }
    }

    /// Runs a layout-only builtin `f` against the layout plan being built.
    pub fn layout_builtin(&mut self, env: &mut Env, c: &Call<'_>, f: LayoutBuiltin) -> R<Val> {
        let Some(mut plan) = self.layout.take() else {
            return Err(self.err(
                codes::BUILTIN_CONTEXT,
                format!("`@{}` can only be used in the layout block", c.name),
                c.span,
                "not allowed here",
            ));
        };
        let r = f(self, env, &mut plan, c.args, c.span);
        self.layout = Some(plan);
        r.map(|()| Val::Ct(Value::Void))
    }

    fn u32_arg(&mut self, env: &mut Env, e: ExprId) -> R<u32> {
        let v = self.eval_int(env, e)?;
        u32::try_from(v).map_err(|_| {
            let sp = self.span(env, e);
            self.err(
                codes::OUT_OF_RANGE,
                format!("{v} is not a valid coordinate or size"),
                sp,
                "must be a non-negative integer",
            )
        })
    }

    /// `@set_rectangle`.
    pub(super) fn l_set_rectangle(
        &mut self,
        env: &mut Env,
        plan: &mut LayoutPlan,
        args: &[ExprId],
        span: Span,
    ) -> R<()> {
        let w = self.u32_arg(env, args[0])?;
        let h = self.u32_arg(env, args[1])?;
        if let Some((_, _, prev)) = plan.rect {
            return Err(self.report(
                Diagnostic::error(
                    codes::LAYOUT_RECTANGLE,
                    "@set_rectangle is called twice",
                    span,
                    "called again here",
                )
                .with_label(prev, "first called here"),
            ));
        }
        if w == 0 || h == 0 {
            return Err(self.err(
                codes::LAYOUT_RECTANGLE,
                "the rectangle is empty",
                span,
                format!("{w} x {h}"),
            ));
        }
        let (fw, fh) = self.opts.fabric;
        let (ox, oy) = self.opts.offsets;
        if ox.saturating_add(w) > fw || oy.saturating_add(h) > fh {
            return Err(self.report(
                Diagnostic::error(codes::LAYOUT_FABRIC, format!("a {w} x {h} rectangle at offset ({ox}, {oy}) does not fit a {fw} x {fh} fabric"), span, "rectangle set here")
                    .with_help(format!("pass a larger --fabric-dims, e.g. --fabric-dims={},{}", ox + w + 3, oy + h + 1)),
            ));
        }
        plan.rect = Some((w, h, span));
        Ok(())
    }

    /// `@set_tile_code`.
    pub(super) fn l_set_tile_code(
        &mut self,
        env: &mut Env,
        plan: &mut LayoutPlan,
        args: &[ExprId],
        span: Span,
    ) -> R<()> {
        let Some((w, h, _)) = plan.rect else {
            return Err(self.report(
                Diagnostic::error(
                    codes::LAYOUT_RECTANGLE,
                    "@set_tile_code before @set_rectangle",
                    span,
                    "no rectangle yet",
                )
                .with_help("call @set_rectangle(width, height) first"),
            ));
        };
        let x = self.u32_arg(env, args[0])?;
        let y = self.u32_arg(env, args[1])?;
        if x >= w || y >= h {
            return Err(self.err(
                codes::LAYOUT_TILE,
                format!("PE ({x}, {y}) is outside the {w} x {h} rectangle"),
                span,
                "outside the rectangle",
            ));
        }
        if let Some((_, p)) = plan.tiles.get(x, y, w) {
            return Err(self.report(
                Diagnostic::error(
                    codes::LAYOUT_TILE,
                    format!("PE ({x}, {y}) is given code twice"),
                    span,
                    "again here",
                )
                .with_label(p, "first here"),
            ));
        }
        let from = self.mods[env.module].file;
        let file = match args.get(2) {
            Some(f) => {
                let path = self.str_arg(env, *f)?;
                let sp = self.span(env, *f);
                self.load_module_file(&path, from, sp)?
            }
            None => from,
        };
        let params = match args.get(3) {
            Some(p) => match self.eval_comptime(env, *p)? {
                Value::Struct(f) => f,
                Value::Void => Rc::new(Vec::new()),
                other => {
                    let sp = self.span(env, *p);
                    let t = other.ty(&mut self.types);
                    return Err(self.err_with_type(
                        codes::TYPE_MISMATCH,
                        "tile params must be a struct",
                        sp,
                        t,
                    ));
                }
            },
            None => Rc::new(Vec::new()),
        };
        let value = Value::Struct(params.clone());
        let seen = plan
            .tiles
            .memo
            .iter()
            .position(|(f, v, _)| *f == file && same_value(v, &value, MEMO_DEPTH));
        if let Some(i) = seen {
            let id = promote(&mut plan.tiles.memo, i).2;
            plan.tiles.place((x, y, w, h), id, span);
            return Ok(());
        }
        let mut key = String::with_capacity(256);
        for (name, value) in params.iter() {
            key.push_str(name);
            key.push('=');
            value.write_canonical(&self.types, &mut key);
            key.push(';');
        }
        let code = TileCode { file, params };
        let id = plan.tiles.set((x, y, w, h), (file, key), code, span);
        if plan.tiles.memo.len() < MEMO_SIZE {
            plan.tiles.memo.push((file, value, id));
        }
        Ok(())
    }

    /// `@set_color_config`.
    pub(super) fn l_set_color_config(
        &mut self,
        env: &mut Env,
        plan: &mut LayoutPlan,
        args: &[ExprId],
        span: Span,
    ) -> R<()> {
        let x = self.u32_arg(env, args[0])?;
        let y = self.u32_arg(env, args[1])?;
        // Routes live in the routers of the rectangle's PEs; the loader rejects
        // an image with a colour configured anywhere else.
        let Some((w, h, _)) = plan.rect else {
            return Err(self.report(
                Diagnostic::error(
                    codes::LAYOUT_RECTANGLE,
                    "@set_color_config before @set_rectangle",
                    span,
                    "no rectangle yet",
                )
                .with_help("call @set_rectangle(width, height) first"),
            ));
        };
        if x >= w || y >= h {
            return Err(self.report(
                Diagnostic::error(
                    codes::LAYOUT_TILE,
                    format!("PE ({x}, {y}) is outside the {w} x {h} rectangle"),
                    span,
                    "colour configured outside the rectangle",
                )
                .with_help(format!(
                    "configure colours of PEs (0, 0) to ({}, {}) only",
                    w - 1,
                    h - 1
                )),
            ));
        }
        let c = self.color_arg(env, args[2])?;
        if self.opts.memcpy && csl_arch::fabric::MEMCPY_RESERVED_COLORS.contains(&c) {
            let s = self.span(env, args[2]);
            return Err(self.report(
                Diagnostic::error(codes::TASK_ID_RANGE, format!("color {c} is reserved by the memcpy infrastructure"), s, "reserved")
                    .with_help({
                        let [a, b, c] = csl_arch::fabric::MEMCPY_RESERVED_COLORS;
                        format!("with --memcpy, colors {a}, {b} and {c} carry host traffic; pick another color")
                    }),
            ));
        }
        let cfg = self.eval_comptime(env, args[3])?;
        if plan.config_memo.len() <= usize::from(c) {
            plan.config_memo.resize_with(usize::from(c) + 1, Vec::new);
        }
        let memo = plan.config_memo.get_mut(usize::from(c)).ok_or(Reported)?;
        let config = match memo
            .iter()
            .position(|(mv, _)| same_value(mv, &cfg, MEMO_DEPTH))
        {
            Some(i) => promote(memo, i).1,
            None => {
                let cspan = self.span(env, args[3]);
                let config = self.color_config(0, 0, c, &cfg, cspan)?;
                let i = plan.routes.intern(&config);
                if let Some(memo) = plan.config_memo.get_mut(usize::from(c))
                    && memo.len() < MEMO_SIZE
                {
                    memo.push((cfg, i));
                }
                i
            }
        };
        let configured = plan.configured.get_or_insert_with(|| PeColorSet::new(w, h));
        if !configured.insert(x, y, c) {
            let p = plan
                .routes
                .iter()
                .position(|r| (r.x, r.y, r.color) == (x, y, c))
                .and_then(|i| plan.route_spans.get(i).copied())
                .unwrap_or(span);
            return Err(self.report(
                Diagnostic::error(
                    codes::LAYOUT_TILE,
                    format!("color {c} of PE ({x}, {y}) is configured twice"),
                    span,
                    "configured again here",
                )
                .with_label(p, "first configured here"),
            ));
        }
        plan.routes.place(x, y, config);
        plan.route_spans.push(span);
        Ok(())
    }

    /// `@export_name`.
    pub(super) fn l_export_name(
        &mut self,
        env: &mut Env,
        plan: &mut LayoutPlan,
        args: &[ExprId],
        span: Span,
    ) -> R<()> {
        let name = self.str_arg(env, args[0])?.to_string();
        let t = self.eval_type(env, args[1])?;
        let tspan = self.span(env, args[1]);
        let kind = match self.types.get(t).clone() {
            super::types::Type::Fn { params, ret } => {
                if ret != self.types.common.void {
                    return Err(self.err(
                        codes::BAD_EXPORT,
                        "exported functions must return void",
                        tspan,
                        "returns a value",
                    ));
                }
                let mut ps = Vec::new();
                for p in params {
                    match self.types.num_ty(p) {
                        Some(n) => ps.push(n),
                        None => {
                            return Err(self.err_ty(
                                codes::BAD_EXPORT,
                                p,
                                tspan,
                                "not a scalar",
                                |d| format!("parameter type {d} cannot be passed from the host"),
                            ));
                        }
                    }
                }
                ExportKind::Func { params: ps }
            }
            super::types::Type::ManyPtr { elem, .. } | super::types::Type::Ptr { elem, .. } => {
                let Some(e) = self.types.num_ty(elem) else {
                    return Err(self.err_ty(
                        codes::BAD_EXPORT,
                        elem,
                        tspan,
                        "not a scalar element type",
                        |d| format!("tensors of {d} cannot be exported"),
                    ));
                };
                let Some(m) = args.get(2) else {
                    return Err(self.err(
                        codes::BUILTIN_ARGS,
                        "@export_name of a tensor needs the mutability flag",
                        span,
                        "add `true` or `false` as the third argument",
                    ));
                };
                let mutable = match self.eval_comptime(env, *m)? {
                    Value::Bool(b) => b,
                    _ => {
                        let sp = self.span(env, *m);
                        return Err(self.err(
                            codes::TYPE_MISMATCH,
                            "expected a bool",
                            sp,
                            "mutability flag",
                        ));
                    }
                };
                ExportKind::Tensor { elem: e, mutable }
            }
            _ => {
                return Err(self.err_ty(
                    codes::BAD_EXPORT,
                    t,
                    tspan,
                    "expected `[*]T` or `fn(...) void`",
                    |d| format!("{d} cannot be exported to the host"),
                ));
            }
        };
        if let Some((_, prev)) = plan.exports.iter().find(|(e, _)| e.name == name) {
            let p = *prev;
            return Err(self.report(
                Diagnostic::error(
                    codes::BAD_EXPORT,
                    format!("`{name}` is exported twice"),
                    span,
                    "again here",
                )
                .with_label(p, "first here"),
            ));
        }
        plan.exports.push((ExportName { name, kind }, span));
        Ok(())
    }

    pub(super) fn b_get_rectangle(&mut self, span: Span) -> R<Val> {
        let rect = match &self.layout {
            Some(p) => p.rect.map(|(w, h, _)| (w, h)),
            None => self.rect,
        };
        let Some((w, h)) = rect else {
            return Err(self.err(
                codes::LAYOUT_RECTANGLE,
                "@get_rectangle before @set_rectangle",
                span,
                "no rectangle yet",
            ));
        };
        // The SDK documents every field of the result as `u16`.
        let u16_ty = self.types.common.u16;
        let int = |v: u32| Value::Int(i128::from(v), u16_ty);
        let pair = |a: u32, b: u32| {
            Value::Struct(Rc::new(vec![
                ("width".into(), int(a)),
                ("height".into(), int(b)),
            ]))
        };
        let (fw, fh) = self.opts.fabric;
        let (ox, oy) = self.opts.offsets;
        Ok(Val::Ct(Value::Struct(Rc::new(vec![
            ("width".into(), int(w)),
            ("height".into(), int(h)),
            ("fabric".into(), pair(fw, fh)),
            ("offsets".into(), pair(ox, oy)),
        ]))))
    }
}
