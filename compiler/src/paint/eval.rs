//! The Paint evaluator: loads a floorplan and its includes, evaluates every item in order
//! and records the actions (`R : paint(...)`, `code()`, ...) with the regions they apply
//! to ([`super::actions`] checks and records each action). Turning the actions into
//! per-tile router configuration is [`super::plan`]'s job.
//!
//! Values are integers, floats, colours, regions, quoted names (`'relay`), strings and
//! bracket lists. Names resolve to the innermost Paint function's parameters, then to
//! top-level `let`s, then to the `NAME=VALUE` globals of the command line; a `let` of a
//! name the command line gives is skipped, so a file can hold defaults. Evaluation is
//! bounded: nesting of expressions and of Paint function calls is limited, so a runaway
//! recursion is a diagnostic.

use super::ast::{BinOp, BracketItem, Expr, ExprKind, Ident, Item};
use super::region::{MAX_SIDE, Rect, Region, Route, Side, Sides};
use super::stack::Axis;
use crate::diag::{Diagnostic, codes};
use crate::source::{FileId, SourceMap, Span};
use crate::tungsten::ParamValue;
use csl_arch::Arch;
use csl_arch::fabric::NUM_COLORS;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// A problem was reported already.
#[derive(Clone, Copy, Debug)]
pub struct Reported;

pub(super) type R<T> = Result<T, Reported>;

/// The deepest expression nesting (including through Paint function calls).
const MAX_DEPTH: usize = 2000;
/// The deepest chain of Paint function calls.
const MAX_CALLS: usize = 100;
/// The most expressions one floorplan may evaluate (Paint functions can call each other
/// exponentially often without recursing).
const FUEL: u64 = 1_000_000;
/// The most rectangles one region may consist of.
const MAX_RECTS: usize = 1 << 16;

/// Whether Paint function `name` is a builtin that makes a value.
fn is_builtin(name: &str) -> bool {
    super::FUNCTIONS.iter().any(|f| f.name == name && !f.action)
}

/// Whether `name` is an action (`R : action(...)`).
fn is_action(name: &str) -> bool {
    super::FUNCTIONS.iter().any(|f| f.name == name && f.action)
}

/// A Paint value.
#[derive(Clone, Debug)]
pub enum Value {
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A colour from `color()` / `color(N)`.
    Color(u8),
    /// A set of tiles.
    Region(Rc<Region>),
    /// `'name`
    Quote(String),
    /// `"text"`
    Str(String),
    /// `[ ... ]`, its values evaluated.
    List(Rc<Vec<ListItem>>),
}

impl Value {
    pub(super) fn describe(&self) -> &'static str {
        match self {
            Value::Int(_) => "an integer",
            Value::Float(_) => "a float",
            Value::Color(_) => "a colour",
            Value::Region(_) => "a region",
            Value::Quote(_) => "a quoted name",
            Value::Str(_) => "a string",
            Value::List(_) => "a bracket list",
        }
    }
}

/// An element of an evaluated bracket list.
#[derive(Clone, Debug)]
pub enum ListItem {
    /// A bare word (a route or a lone side letter).
    Word(String, Span),
    /// `|`
    Bar(Span),
    /// `NAME:value`
    Bind(Ident, Value, Span),
}

/// What an action does.
#[derive(Clone, Debug)]
pub enum ActionKind {
    /// `paint(c [ROUTES])`.
    Paint {
        /// The colour.
        color: u8,
        /// The routes.
        routes: Vec<Route>,
        /// Sides whose edge tiles drop them (`|R`).
        suppress: Sides,
    },
    /// `colorpair(a b)`.
    ColorPair {
        /// The colour the socket receives on.
        a: u8,
        /// The colour it sends on.
        b: u8,
    },
    /// `code('prog [...])`: an index into [`Evaluated::codes`].
    Code(usize),
    /// `name('g)`.
    Name(String),
    /// `mp()` (`None`) or `mp(c ...)`.
    Mp(Option<Vec<u8>>),
    /// `switch(c [POS1] [POS2] [POS3] [OPTIONS])`: switch positions 1..=3 of colour `c`
    /// (position 0 is what `paint()` routes on the tile).
    Switch {
        /// The colour.
        color: u8,
        /// Positions 1.. in order: one input side and the output sides each.
        positions: Vec<(Side, Sides)>,
        /// `ring`: advancing past the last position wraps to 0.
        ring: bool,
        /// `no_pop` (the default), `always_pop`, `pop_on_advance`, `pop_on_advance_nop`.
        pop: csl_arch::image::PopMode,
        /// `start:N`: the position at reset (default 0).
        start: u8,
    },
}

/// One action applied to a region.
#[derive(Clone, Debug)]
pub struct Action {
    /// What.
    pub kind: ActionKind,
    /// On which tiles.
    pub region: Rc<Region>,
    /// The action call.
    pub span: Span,
}

/// A `code()` call.
#[derive(Clone, Debug)]
pub struct CodeCall {
    /// The program's name (`relay` for `'relay`).
    pub prog: String,
    /// Where the name is written.
    pub prog_span: Span,
    /// The Paint file the call is written in.
    pub file: FileId,
    /// Socket bindings: name, colour, where.
    pub sockets: Vec<(String, u8, Span)>,
    /// Param overrides: name, value, where.
    pub params: Vec<(String, ParamValue, Span)>,
    /// The whole call.
    pub span: Span,
}

/// The result of evaluating a floorplan.
#[derive(Debug, Default)]
pub struct Evaluated {
    /// Every action, in evaluation order.
    pub actions: Vec<Action>,
    /// Every `code()` call.
    pub codes: Vec<CodeCall>,
    /// The layout and the expression that gave it.
    pub layout: Option<(Rc<Region>, Span)>,
}

/// A Paint function.
struct FuncDef {
    params: Vec<Ident>,
    body: Expr,
}

/// Loaded files and their parsed items.
pub struct Loaded {
    /// Items of each file.
    pub items: HashMap<FileId, Vec<(Item, Span)>>,
    /// Resolved `include`s: (including file, include span start) → included file.
    pub includes: HashMap<(FileId, u32), FileId>,
    /// The main file.
    pub main: FileId,
}

/// Loads the main file's includes recursively (each file once). The main file must
/// already be in `sources`.
pub fn load(
    sources: &mut SourceMap,
    main: FileId,
    lib_dirs: &[PathBuf],
    diags: &mut Vec<Diagnostic>,
) -> Loaded {
    let mut loaded = Loaded {
        items: HashMap::new(),
        includes: HashMap::new(),
        main,
    };
    let mut stack = Vec::new();
    load_file(sources, main, lib_dirs, diags, &mut loaded, &mut stack);
    loaded
}

fn load_file(
    sources: &mut SourceMap,
    file: FileId,
    lib_dirs: &[PathBuf],
    diags: &mut Vec<Diagnostic>,
    loaded: &mut Loaded,
    stack: &mut Vec<FileId>,
) {
    if loaded.items.contains_key(&file) {
        return;
    }
    let (items, d) = super::parser::parse(file, &sources.get(file).text);
    diags.extend(d);
    let includes: Vec<(String, Span)> = items
        .iter()
        .filter_map(|(i, _)| match i {
            Item::Include(name, span) => Some((name.clone(), *span)),
            _ => None,
        })
        .collect();
    loaded.items.insert(file, items);
    stack.push(file);
    for (name, span) in includes {
        let Some(target) = resolve_include(sources, file, &name, span, lib_dirs, diags) else {
            continue;
        };
        if stack.contains(&target) {
            diags.push(
                Diagnostic::error(
                    codes::PAINT_INCLUDE,
                    format!("`{name}` includes itself"),
                    span,
                    "this include closes a cycle",
                )
                .with_help("remove the include that leads back here"),
            );
            continue;
        }
        loaded.includes.insert((file, span.start), target);
        load_file(sources, target, lib_dirs, diags, loaded, stack);
    }
    stack.pop();
}

/// The directory a loaded file lives in (`.` when it has no real path).
pub fn dir_of(sources: &SourceMap, file: FileId) -> PathBuf {
    let display = &sources.get(file).display;
    Path::new(display)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// Finds `name` in `dirs`, in order; the display path and the canonical path.
pub fn find_in(dirs: &[PathBuf], name: &str) -> Option<(String, PathBuf)> {
    for d in dirs {
        let p = d.join(name);
        if p.is_file() {
            let canonical = p.canonicalize().unwrap_or_else(|_| p.clone());
            let display = p.to_string_lossy().trim_start_matches("./").to_string();
            return Some((display, canonical));
        }
    }
    None
}

/// Shows a list of searched directories.
pub fn show_dirs(dirs: &[PathBuf]) -> String {
    dirs.iter()
        .map(|d| {
            let s = d.to_string_lossy();
            if s.is_empty() {
                "`.`".to_string()
            } else {
                format!("`{s}`")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Loads a file found at `display`/`canonical` into `sources` (once).
pub fn add_file(
    sources: &mut SourceMap,
    display: String,
    canonical: PathBuf,
) -> Result<FileId, std::io::Error> {
    if let Some(id) = sources.find_path(&canonical) {
        return Ok(id);
    }
    let text = sources.read(&canonical)?;
    Ok(sources.add(display, Some(canonical), text))
}

fn resolve_include(
    sources: &mut SourceMap,
    from: FileId,
    name: &str,
    span: Span,
    lib_dirs: &[PathBuf],
    diags: &mut Vec<Diagnostic>,
) -> Option<FileId> {
    let mut dirs = vec![dir_of(sources, from)];
    dirs.extend(lib_dirs.iter().cloned());
    let Some((display, canonical)) = find_in(&dirs, name) else {
        diags.push(
            Diagnostic::error(
                codes::PAINT_INCLUDE,
                format!("cannot find `{name}`"),
                span,
                "included here",
            )
            .with_note(format!("searched {}", show_dirs(&dirs)))
            .with_help("add the directory that holds it with lib=DIR"),
        );
        return None;
    };
    match add_file(sources, display, canonical) {
        Ok(id) => Some(id),
        Err(e) => {
            diags.push(Diagnostic::error(
                codes::PAINT_INCLUDE,
                format!("cannot read `{name}`: {e}"),
                span,
                "included here",
            ));
            None
        }
    }
}

/// Who took a colour.
#[derive(Clone, Copy)]
struct Taken {
    span: Span,
    fixed: bool,
}

/// The evaluator's state.
pub struct Eval<'a> {
    loaded: &'a Loaded,
    pub(super) arch: Arch,
    globals: HashMap<String, i64>,
    /// The globals in command-line order.
    global_order: Vec<String>,
    /// Globals some expression read.
    used_globals: HashSet<String>,
    lets: HashMap<String, (Value, Span)>,
    /// Names whose `let` failed: their uses are consequences, not new errors.
    failed: HashSet<String>,
    /// Functions whose `define` failed.
    failed_funcs: HashSet<String>,
    funcs: HashMap<String, (Rc<FuncDef>, Span)>,
    frames: Vec<HashMap<String, Value>>,
    reserved: [bool; NUM_COLORS as usize],
    taken: [Option<Taken>; NUM_COLORS as usize],
    evaluated: HashSet<FileId>,
    depth: usize,
    steps: u64,
    diags: &'a mut Vec<Diagnostic>,
    /// What evaluation produced.
    pub out: Evaluated,
    /// The file whose items are being evaluated.
    pub(super) current: FileId,
}

impl<'a> Eval<'a> {
    /// A new evaluator over loaded files.
    pub fn new(
        loaded: &'a Loaded,
        arch: Arch,
        globals: &[(String, i64)],
        diags: &'a mut Vec<Diagnostic>,
    ) -> Eval<'a> {
        let mut reserved = [false; NUM_COLORS as usize];
        for items in loaded.items.values() {
            for (item, _) in items {
                for_each_expr(item, &mut |e| {
                    if let ExprKind::Call(f, args) = &e.kind
                        && f.name == "color"
                        && let [
                            Expr {
                                kind: ExprKind::Int(n),
                                ..
                            },
                        ] = args.as_slice()
                        && let Some(slot) =
                            usize::try_from(*n).ok().and_then(|n| reserved.get_mut(n))
                    {
                        *slot = true;
                    }
                });
            }
        }
        Eval {
            loaded,
            arch,
            globals: globals.iter().cloned().collect(),
            global_order: globals.iter().map(|(n, _)| n.clone()).collect(),
            used_globals: HashSet::new(),
            lets: HashMap::new(),
            failed: HashSet::new(),
            failed_funcs: HashSet::new(),
            funcs: HashMap::new(),
            frames: Vec::new(),
            reserved,
            taken: [None; NUM_COLORS as usize],
            evaluated: HashSet::new(),
            depth: 0,
            steps: 0,
            diags,
            out: Evaluated::default(),
            current: loaded.main,
        }
    }

    pub(super) fn report(&mut self, d: Diagnostic) -> Reported {
        self.diags.push(d);
        Reported
    }

    /// Evaluates the main file (and, where they are included, its includes), then warns
    /// about command-line globals nothing read.
    pub fn run(&mut self) {
        self.run_items();
        if self.diags.iter().any(Diagnostic::is_error) {
            return;
        }
        for n in &self.global_order {
            if !self.used_globals.contains(n) {
                let v = self.globals.get(n).copied().unwrap_or_default();
                self.diags.push(
                    Diagnostic::global(
                        codes::PAINT_ARGUMENT,
                        format!("`{n}={v}` is given on the command line, but the floorplan never uses `{n}`"),
                    )
                    .with_help("check its spelling; Paint names are case-sensitive")
                    .warning(),
                );
            }
        }
    }

    fn run_items(&mut self) {
        let main = self.loaded.main;
        let mut bare: Vec<(Value, Span, bool)> = Vec::new();
        let mut last_let: Option<(Rc<Region>, Span)> = None;
        self.evaluated.insert(main);
        let Some(items) = self.loaded.items.get(&main) else {
            return;
        };
        for (item, _) in items {
            match item {
                Item::Expr(e) if !is_action_call(e) => {
                    if let Ok(v) = self.expr(e) {
                        bare.push((v, e.span, matches!(e.kind, ExprKind::Call(..))));
                    }
                }
                Item::Let(name, e) => {
                    self.item(item, main);
                    if let Some((Value::Region(r), _)) = self.lets.get(&name.name)
                        && !self.globals.contains_key(&name.name)
                    {
                        last_let = Some((r.clone(), e.span));
                    }
                }
                _ => self.item(item, main),
            }
        }
        let Some((last, rest)) = bare.split_last() else {
            match last_let {
                Some(l) => self.out.layout = Some(l),
                None => {
                    if !self.diags.iter().any(Diagnostic::is_error) {
                        self.diags.push(
                            Diagnostic::global(
                                codes::PAINT_NO_LAYOUT,
                                "the floorplan has no layout",
                            )
                            .with_help("end the file with the layout region, e.g. `union(core moat)`: its bounding box from (0, 0) is the image"),
                        );
                    }
                }
            }
            return;
        };
        for (v, span, is_call) in rest {
            if !is_call {
                self.diags.push(
                    Diagnostic::error(
                        codes::PAINT_UNUSED,
                        format!("this value ({}) is not used", v.describe()),
                        *span,
                        "only the file's last expression is used (as the layout)",
                    )
                    .warning(),
                );
            }
        }
        match &last.0 {
            Value::Region(r) => self.out.layout = Some((r.clone(), last.1)),
            other => {
                let d = Diagnostic::error(
                    codes::PAINT_NO_LAYOUT,
                    "the layout is not a region",
                    last.1,
                    format!("the file's last expression is {}", other.describe()),
                )
                .with_help("end the file with the layout region, e.g. `union(core moat)`");
                self.diags.push(d);
            }
        }
    }

    /// Evaluates one item of `file` (the main file's bare expressions are handled by
    /// [`Eval::run`]).
    fn item(&mut self, item: &Item, file: FileId) {
        let saved = self.current;
        self.current = file;
        let _ = self.item_inner(item, file);
        self.current = saved;
    }

    fn item_inner(&mut self, item: &Item, file: FileId) -> R<()> {
        match item {
            Item::Let(name, e) => {
                let Ok(v) = self.expr(e) else {
                    self.failed.insert(name.name.clone());
                    return Err(Reported);
                };
                if self.globals.contains_key(&name.name) {
                    // The command line wins: the `let` is the file's default.
                    return Ok(());
                }
                if let Some((_, first)) = self.lets.get(&name.name) {
                    let first = *first;
                    return Err(self.report(
                        Diagnostic::twice(
                            codes::PAINT_DUPLICATE,
                            format!("`{}`", name.name),
                            "bound",
                            name.span,
                            first,
                        )
                        .with_help("Paint bindings are constants; pick another name"),
                    ));
                }
                self.lets.insert(name.name.clone(), (v, name.span));
            }
            Item::Define { name, params, body } => {
                if is_builtin(&name.name) || is_action(&name.name) {
                    return Err(self.report(Diagnostic::error(
                        codes::PAINT_DUPLICATE,
                        format!("`{}` is a builtin", name.name),
                        name.span,
                        "a Paint function cannot take a builtin's name",
                    )));
                }
                if let Some((_, first)) = self.funcs.get(&name.name) {
                    let first = *first;
                    return Err(self.report(Diagnostic::twice(
                        codes::PAINT_DUPLICATE,
                        format!("function `{}`", name.name),
                        "defined",
                        name.span,
                        first,
                    )));
                }
                let mut seen: Vec<&Ident> = Vec::new();
                for p in params {
                    if let Some(first) = seen.iter().find(|s| s.name == p.name) {
                        self.failed_funcs.insert(name.name.clone());
                        return Err(self.report(Diagnostic::twice(
                            codes::PAINT_DUPLICATE,
                            format!("parameter `{}`", p.name),
                            "declared",
                            p.span,
                            first.span,
                        )));
                    }
                    seen.push(p);
                }
                self.funcs.insert(
                    name.name.clone(),
                    (
                        Rc::new(FuncDef {
                            params: params.clone(),
                            body: body.clone(),
                        }),
                        name.span,
                    ),
                );
            }
            Item::Include(_, span) => {
                let Some(&target) = self.loaded.includes.get(&(file, span.start)) else {
                    return Ok(());
                };
                if !self.evaluated.insert(target) {
                    return Ok(());
                }
                let items = self.loaded.items.get(&target);
                for (it, _) in items.into_iter().flatten() {
                    self.item(it, target);
                }
            }
            Item::Action { region, action } => {
                let rv = self.expr(region)?;
                let Value::Region(r) = rv else {
                    return Err(self.report(
                        wrong_type("an action applies to a region", region.span, &rv).with_help(
                            "write `R : paint(...)` where R is a region, e.g. rect(0 0 4 1)",
                        ),
                    ));
                };
                match &action.kind {
                    ExprKind::Call(f, args) if is_action(&f.name) => {
                        self.action(f, args, r, action.span)?;
                    }
                    _ => {
                        return Err(self.report(
                            Diagnostic::error(
                                codes::PAINT_TYPE,
                                "expected an action after `:`",
                                action.span,
                                "not an action",
                            )
                            .with_help(
                                "the actions are paint(), colorpair(), code(), name() and mp()",
                            ),
                        ));
                    }
                }
            }
            Item::Expr(e) => {
                let v = self.expr(e)?;
                if !matches!(e.kind, ExprKind::Call(..)) {
                    self.diags.push(
                        Diagnostic::error(
                            codes::PAINT_UNUSED,
                            format!("this value ({}) is not used", v.describe()),
                            e.span,
                            "only the main file's last expression is used (as the layout)",
                        )
                        .warning(),
                    );
                }
            }
        }
        Ok(())
    }

    /// Evaluates an expression.
    pub fn expr(&mut self, e: &Expr) -> R<Value> {
        if self.depth >= MAX_DEPTH {
            return Err(self.report(Diagnostic::error(
                codes::PAINT_TOO_DEEP,
                "evaluation nested too deep",
                e.span,
                format!("more than {MAX_DEPTH} levels of nesting here"),
            )));
        }
        self.steps += 1;
        if self.steps > FUEL {
            if self.steps == FUEL + 1 {
                self.diags.push(
                    Diagnostic::error(
                        codes::PAINT_RECURSION,
                        "evaluation takes too long",
                        e.span,
                        format!("more than {FUEL} expressions evaluated when this one started"),
                    )
                    .with_note(
                        "Paint functions that call each other several times multiply their work",
                    ),
                );
            }
            return Err(Reported);
        }
        self.depth += 1;
        let r = self.expr_inner(e);
        self.depth -= 1;
        r
    }

    fn expr_inner(&mut self, e: &Expr) -> R<Value> {
        Ok(match &e.kind {
            ExprKind::Int(v) => Value::Int(*v),
            ExprKind::Float(v) => Value::Float(*v),
            ExprKind::Quote(s) => Value::Quote(s.clone()),
            ExprKind::Str(s) => Value::Str(s.clone()),
            ExprKind::Name(n) => self.name(n, e.span)?,
            ExprKind::Neg(a) => {
                let v = self.expr(a)?;
                match v {
                    Value::Int(i) => Value::Int(i.checked_neg().ok_or_else(|| {
                        self.report(Diagnostic::error(
                            codes::PAINT_ARITH,
                            "integer overflow",
                            e.span,
                            "this negation overflows",
                        ))
                    })?),
                    Value::Color(c) => Value::Int(-i64::from(c)),
                    Value::Float(f) => Value::Float(-f),
                    other => {
                        return Err(self.report(wrong_type("cannot negate this", a.span, &other)));
                    }
                }
            }
            ExprKind::Binary(op, a, b) => {
                let x = self.expr(a)?;
                let y = self.expr(b)?;
                self.arith(*op, x, y, a.span, b.span, e.span)?
            }
            ExprKind::Bracket(items) => {
                let mut out = Vec::with_capacity(items.len());
                for it in items {
                    out.push(match it {
                        BracketItem::Word(w) => ListItem::Word(w.name.clone(), w.span),
                        BracketItem::Bar(s) => ListItem::Bar(*s),
                        BracketItem::Bind(k, v) => {
                            let val = self.expr(v)?;
                            ListItem::Bind(k.clone(), val, v.span)
                        }
                    });
                }
                Value::List(Rc::new(out))
            }
            ExprKind::Call(f, args) => self.call(f, args, e.span)?,
        })
    }

    fn name(&mut self, n: &str, span: Span) -> R<Value> {
        if let Some(v) = self.frames.last().and_then(|f| f.get(n)) {
            return Ok(v.clone());
        }
        if let Some(v) = self.globals.get(n) {
            let v = *v;
            self.used_globals.insert(n.to_string());
            return Ok(Value::Int(v));
        }
        if let Some((v, _)) = self.lets.get(n) {
            return Ok(v.clone());
        }
        if self.failed.contains(n) {
            return Err(Reported);
        }
        let mut d = Diagnostic::error(
            codes::PAINT_UNDEFINED,
            format!("unknown variable `{n}`"),
            span,
            "not bound by `let` and not given on the command line",
        );
        if is_builtin(n) || is_action(n) || self.funcs.contains_key(n) {
            d = d.with_help(format!("`{n}` is a function: call it as `{n}(...)`"));
        } else {
            d = d.with_help(format!(
                "give it on the command line as {n}=VALUE (e.g. `paint FILE.paint {n}=4`), or bind it with `let {n} = ...`"
            ));
        }
        Err(self.report(d))
    }

    fn arith(&mut self, op: BinOp, x: Value, y: Value, sa: Span, sb: Span, span: Span) -> R<Value> {
        let num = |v: &Value| match v {
            Value::Int(i) => Some(Ok(*i)),
            Value::Color(c) => Some(Ok(i64::from(*c))),
            Value::Float(f) => Some(Err(*f)),
            _ => None,
        };
        let (Some(a), Some(b)) = (num(&x), num(&y)) else {
            let (bad, s) = if num(&x).is_none() {
                (&x, sa)
            } else {
                (&y, sb)
            };
            return Err(self.report(wrong_type(
                format!("`{}` needs numbers", op.spelling()),
                s,
                bad,
            )));
        };
        match (a, b) {
            (Ok(a), Ok(b)) => {
                if matches!(op, BinOp::Div | BinOp::Rem) && b == 0 {
                    return Err(self.report(Diagnostic::error(
                        codes::PAINT_ARITH,
                        "division by zero",
                        span,
                        "the divisor is 0",
                    )));
                }
                let r = match op {
                    BinOp::Add => a.checked_add(b),
                    BinOp::Sub => a.checked_sub(b),
                    BinOp::Mul => a.checked_mul(b),
                    BinOp::Div => a.checked_div(b),
                    BinOp::Rem => a.checked_rem(b),
                };
                match r {
                    Some(v) => Ok(Value::Int(v)),
                    None => Err(self.report(Diagnostic::error(
                        codes::PAINT_ARITH,
                        "integer overflow",
                        span,
                        "the result does not fit in 64 bits",
                    ))),
                }
            }
            (a, b) => {
                let f = |v: Result<i64, f64>| match v {
                    Ok(i) => i as f64,
                    Err(f) => f,
                };
                let (a, b) = (f(a), f(b));
                Ok(Value::Float(match op {
                    BinOp::Add => a + b,
                    BinOp::Sub => a - b,
                    BinOp::Mul => a * b,
                    BinOp::Div => a / b,
                    BinOp::Rem => a % b,
                }))
            }
        }
    }

    pub(super) fn int(&mut self, v: &Value, span: Span, what: &str) -> R<i64> {
        match v {
            Value::Int(i) => Ok(*i),
            Value::Color(c) => Ok(i64::from(*c)),
            other => Err(self.report(wrong_type(
                format!("{what} must be an integer"),
                span,
                other,
            ))),
        }
    }

    pub(super) fn color(&mut self, v: &Value, span: Span) -> R<u8> {
        match v {
            Value::Color(c) => Ok(*c),
            Value::Int(i) => match u8::try_from(*i).ok().filter(|c| *c < NUM_COLORS) {
                Some(c) => Ok(c),
                None => Err(self.report(bad_color(*i, span))),
            },
            other => Err(self.report(wrong_type("expected a colour", span, other))),
        }
    }

    pub(super) fn region(&mut self, v: &Value, span: Span) -> R<Rc<Region>> {
        match v {
            Value::Region(r) => Ok(r.clone()),
            other => Err(self.report(wrong_type("expected a region", span, other))),
        }
    }

    pub(super) fn arg_count(
        &mut self,
        f: &Ident,
        args: &[Expr],
        counts: &[usize],
        usage: &str,
    ) -> R<()> {
        if counts.contains(&args.len()) {
            return Ok(());
        }
        Err(self.report(
            Diagnostic::error(
                codes::PAINT_ARGS,
                format!(
                    "`{}()` takes {}, not {}",
                    f.name,
                    counts
                        .iter()
                        .map(|n| format!("{n} argument{}", if *n == 1 { "" } else { "s" }))
                        .collect::<Vec<_>>()
                        .join(" or "),
                    args.len()
                ),
                f.span,
                "in this call",
            )
            .with_help(format!("write {usage}")),
        ))
    }

    fn call(&mut self, f: &Ident, args: &[Expr], span: Span) -> R<Value> {
        let name = f.name.as_str();
        if is_action(name) {
            let Some(first) = args.first() else {
                return Err(self.report(
                    Diagnostic::error(
                        codes::PAINT_TYPE,
                        format!("`{name}()` is an action: it needs a region"),
                        span,
                        "no region given",
                    )
                    .with_help(format!("write `R : {name}(...)` or `{name}(R ...)`")),
                ));
            };
            let rv = self.expr(first)?;
            let Value::Region(r) = rv else {
                return Err(self.report(
                    Diagnostic::error(
                        codes::PAINT_TYPE,
                        format!("`{name}()` is an action: it needs a region"),
                        first.span,
                        format!("this is {}, not a region", rv.describe()),
                    )
                    .with_help(format!("write `R : {name}(...)` or `{name}(R ...)`")),
                ));
            };
            let rest = args.get(1..).unwrap_or(&[]);
            self.action(f, rest, r.clone(), span)?;
            return Ok(Value::Region(r));
        }
        if self.failed_funcs.contains(name) && !self.funcs.contains_key(name) {
            return Err(Reported);
        }
        if let Some((def, _)) = self.funcs.get(name).cloned() {
            if def.params.len() != args.len() {
                return Err(self.report(Diagnostic::error(
                    codes::PAINT_ARGS,
                    format!(
                        "`{name}()` takes {} argument{}, not {}",
                        def.params.len(),
                        if def.params.len() == 1 { "" } else { "s" },
                        args.len()
                    ),
                    f.span,
                    "in this call",
                )));
            }
            if self.frames.len() >= MAX_CALLS {
                return Err(self.report(
                    Diagnostic::error(
                        codes::PAINT_RECURSION,
                        "Paint function calls nest too deep",
                        span,
                        format!("more than {MAX_CALLS} nested calls"),
                    )
                    .with_note("Paint functions have no conditionals, so a function that calls itself never stops"),
                ));
            }
            let mut frame = HashMap::new();
            for (p, a) in def.params.iter().zip(args) {
                let v = self.expr(a)?;
                frame.insert(p.name.clone(), v);
            }
            self.frames.push(frame);
            let r = self.expr(&def.body);
            self.frames.pop();
            return r;
        }
        match name {
            "color" => {
                self.arg_count(f, args, &[0, 1], "`color()` or `color(N)`")?;
                match args.first() {
                    None => {
                        let free = (0..NUM_COLORS).find(|&c| {
                            !self.reserved[c as usize] && self.taken[c as usize].is_none()
                        });
                        match free {
                            Some(c) => {
                                self.taken[c as usize] = Some(Taken { span, fixed: false });
                                Ok(Value::Color(c))
                            }
                            None => Err(self.report(
                                Diagnostic::error(
                                    codes::PAINT_BAD_COLOR,
                                    "no colour left",
                                    span,
                                    format!("all {NUM_COLORS} colours are taken"),
                                )
                                .with_note("color() hands out the lowest colour that no color() or color(N) took"),
                            )),
                        }
                    }
                    Some(a) => {
                        let v = self.expr(a)?;
                        let n = self.int(&v, a.span, "a colour number")?;
                        let Some(c) = u8::try_from(n).ok().filter(|c| *c < NUM_COLORS) else {
                            return Err(self.report(bad_color(n, a.span)));
                        };
                        if let Some(t) = self.taken[c as usize]
                            && t.span != span
                        {
                            let d = Diagnostic::error(
                                codes::PAINT_COLOR_TAKEN,
                                format!("colour {c} is already taken"),
                                span,
                                format!("color({c}) here"),
                            )
                            .with_label(
                                t.span,
                                if t.fixed {
                                    format!("taken by this color({c})")
                                } else {
                                    format!("color() handed out colour {c} here")
                                },
                            )
                            .with_help(
                                "bind each colour once with `let` and use that name everywhere",
                            );
                            return Err(self.report(d));
                        }
                        self.taken[c as usize] = Some(Taken { span, fixed: true });
                        Ok(Value::Color(c))
                    }
                }
            }
            "rect" => {
                self.arg_count(f, args, &[4], "`rect(x y w h)`")?;
                let mut n = [0i64; 4];
                for (slot, a) in n.iter_mut().zip(args) {
                    let v = self.expr(a)?;
                    *slot = self.int(&v, a.span, "a rect() argument")?;
                }
                let r = self.make_rect(n, span)?;
                Ok(Value::Region(Rc::new(Region::rect(r))))
            }
            "tile" => {
                self.arg_count(
                    f,
                    args,
                    &[0, 2],
                    "`tile()` (the tile at (0, 0)) or `tile(x y)`",
                )?;
                let mut n = [0i64, 0, 1, 1];
                for (slot, a) in n.iter_mut().zip(args) {
                    let v = self.expr(a)?;
                    *slot = self.int(&v, a.span, "a tile() argument")?;
                }
                let r = self.make_rect(n, span)?;
                Ok(Value::Region(Rc::new(Region::rect(r))))
            }
            "union" => {
                if args.is_empty() {
                    return Err(self.report(
                        Diagnostic::error(
                            codes::PAINT_ARGS,
                            "`union()` needs at least one region",
                            f.span,
                            "in this call",
                        )
                        .with_help("write `union(r1 r2 ...)`"),
                    ));
                }
                let mut rects: Vec<Rect> = Vec::new();
                let mut seen = HashSet::new();
                for a in args {
                    let v = self.expr(a)?;
                    let r = self.region(&v, a.span)?;
                    self.gather(
                        &mut rects,
                        &mut seen,
                        &r.rects,
                        span,
                        "union",
                        "build large regions from larger rectangles",
                    )?;
                }
                Ok(Value::Region(Rc::new(Region { rects })))
            }
            "ring" => {
                self.arg_count(f, args, &[1], "`ring(r)`")?;
                let Some(a) = args.first() else {
                    return Err(Reported);
                };
                let v = self.expr(a)?;
                let r = self.region(&v, a.span)?;
                let Some(b) = r.bbox() else {
                    return Err(Reported);
                };
                if b.x == 0 || b.y == 0 {
                    return Err(self.report(
                        Diagnostic::error(
                            codes::PAINT_BAD_REGION,
                            "the ring around this region would leave the fabric",
                            a.span,
                            format!(
                                "this region starts at ({}, {}); its ring needs a free row and column before it",
                                b.x, b.y
                            ),
                        )
                        .with_help("start the region at x >= 1 and y >= 1"),
                    ));
                }
                let (x0, y0, w, h) = (b.x - 1, b.y - 1, b.w + 2, b.h + 2);
                if x0 + w > MAX_SIDE || y0 + h > MAX_SIDE {
                    return Err(self.report(too_large(span)));
                }
                let rects = vec![
                    Rect {
                        x: x0,
                        y: y0,
                        w,
                        h: 1,
                    },
                    Rect {
                        x: x0,
                        y: y0 + h - 1,
                        w,
                        h: 1,
                    },
                    Rect {
                        x: x0,
                        y: b.y,
                        w: 1,
                        h: b.h,
                    },
                    Rect {
                        x: x0 + w - 1,
                        y: b.y,
                        w: 1,
                        h: b.h,
                    },
                ];
                Ok(Value::Region(Rc::new(Region { rects })))
            }
            "hstack" => self.stack(f, args, span, Axis::Columns),
            "vstack" => self.stack(f, args, span, Axis::Rows),
            "rep" => Err(self.rep_alone(f)),
            "split" => self.split(f, args, span),
            n => Err(self.report(
                Diagnostic::error(
                    codes::PAINT_UNDEFINED,
                    format!("unknown function `{n}`"),
                    f.span,
                    "no builtin, action or `define` has this name",
                )
                .with_note({
                    let list = |action: bool| {
                        super::FUNCTIONS
                            .iter()
                            .filter(|f| f.action == action)
                            .map(|f| f.name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    };
                    format!("builtins: {}; actions: {}", list(false), list(true))
                }),
            )),
        }
    }

    /// Adds the rectangles of `more` not seen yet to `rects`; a region of more than
    /// [`MAX_RECTS`] rectangles is an error at `span` (a `what`, with `help`).
    pub(super) fn gather(
        &mut self,
        rects: &mut Vec<Rect>,
        seen: &mut HashSet<Rect>,
        more: &[Rect],
        span: Span,
        what: &str,
        help: &str,
    ) -> R<()> {
        for rect in more {
            if seen.insert(*rect) {
                rects.push(*rect);
            }
        }
        if rects.len() > MAX_RECTS {
            return Err(self.report(
                Diagnostic::error(
                    codes::PAINT_BAD_REGION,
                    "region too complex",
                    span,
                    format!("this {what} has more than {MAX_RECTS} rectangles"),
                )
                .with_help(help.to_string()),
            ));
        }
        Ok(())
    }

    pub(super) fn make_rect(&mut self, n: [i64; 4], span: Span) -> R<Rect> {
        let [x, y, w, h] = n;
        if x < 0 || y < 0 {
            return Err(self.report(
                Diagnostic::error(
                    codes::PAINT_BAD_REGION,
                    "a region cannot start at a negative coordinate",
                    span,
                    format!("this starts at ({x}, {y})"),
                )
                .with_note("row 0 is the layout's northern edge and column 0 its western edge"),
            ));
        }
        if w < 1 || h < 1 {
            return Err(self.report(Diagnostic::error(
                codes::PAINT_BAD_REGION,
                "a rectangle needs a width and a height of at least 1",
                span,
                format!("this is {w} x {h}"),
            )));
        }
        let max = i64::from(MAX_SIDE);
        if x + w > max || y + h > max {
            return Err(self.report(too_large(span)));
        }
        Ok(Rect {
            x: x as u32,
            y: y as u32,
            w: w as u32,
            h: h as u32,
        })
    }
}

fn bad_color(n: i64, span: Span) -> Diagnostic {
    Diagnostic::error(
        codes::PAINT_BAD_COLOR,
        format!("there is no colour {n}"),
        span,
        format!("colours are 0 to {}", NUM_COLORS - 1),
    )
}

fn too_large(span: Span) -> Diagnostic {
    Diagnostic::error(
        codes::PAINT_BAD_REGION,
        "region too large",
        span,
        format!("regions must fit in {MAX_SIDE} x {MAX_SIDE} tiles"),
    )
}

/// Whether `e` is an action call (`paint(R ...)`).
fn is_action_call(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Call(f, _) if is_action(&f.name))
}

/// Calls `f` on every expression of an item (pre-order).
fn for_each_expr(item: &Item, f: &mut dyn FnMut(&Expr)) {
    fn walk(e: &Expr, f: &mut dyn FnMut(&Expr), depth: usize) {
        if depth > super::parser::MAX_COMPLEXITY + 8 {
            return;
        }
        f(e);
        match &e.kind {
            ExprKind::Neg(a) => walk(a, f, depth + 1),
            ExprKind::Binary(_, a, b) => {
                walk(a, f, depth + 1);
                walk(b, f, depth + 1);
            }
            ExprKind::Call(_, args) => {
                for a in args {
                    walk(a, f, depth + 1);
                }
            }
            ExprKind::Bracket(items) => {
                for it in items {
                    if let BracketItem::Bind(_, v) = it {
                        walk(v, f, depth + 1);
                    }
                }
            }
            _ => {}
        }
    }
    match item {
        Item::Let(_, e) | Item::Expr(e) => walk(e, f, 0),
        Item::Define { body, .. } => walk(body, f, 0),
        Item::Action { region, action } => {
            walk(region, f, 0);
            walk(action, f, 0);
        }
        Item::Include(..) => {}
    }
}

/// A value of the wrong kind (`PAINT_TYPE`): `msg` at `span`, labelled with what `v` is.
pub(super) fn wrong_type(msg: impl Into<String>, span: Span, v: &Value) -> Diagnostic {
    Diagnostic::error(
        codes::PAINT_TYPE,
        msg,
        span,
        format!("this is {}", v.describe()),
    )
}
