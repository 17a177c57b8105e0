//! Paint (`.paint`) files in the editor: hover and go to definition over the syntax tree.
//!
//! Names are the `let`s and Paint functions of the file and of the files it includes
//! (found as the evaluator finds them: the including file's directory, then the library
//! directories), and a function's parameters inside its body; a name found nowhere is a
//! `NAME=VALUE` global of the command line. Builtins and actions are described from the
//! evaluator's own table ([`cslc::paint::FUNCTIONS`]). In `code('prog [a:c N:4])` the
//! quote leads to `prog.w` and each binding to the socket or param it sets there.

use crate::convert::{self, LineIndex};
use crate::files::Files;
use crate::hover::markdown;
use crate::tungsten;
use cslc::paint::FUNCTIONS;
use cslc::paint::ast::{BracketItem, Expr, ExprKind, Item};
use cslc::paint::region::Side;
use cslc::source::Span;
use lsp_types::{CompletionItem, CompletionItemKind, Hover, Location, Position, Uri};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Includes nested deeper than this are not followed (the evaluator reports them).
const MAX_INCLUDE_DEPTH: u32 = 32;

/// A declaration's longest shown text; longer ones are cut at a character boundary.
const MAX_DETAIL: usize = 200;

/// What the cursor is on, once resolved.
enum Target {
    /// A `let` or a Paint function of file `file`, declared at `at`, whole item `whole`.
    Global { file: usize, at: Span, whole: Span },
    /// A parameter of the Paint function `of`.
    Param { at: Span, of: String },
    /// A builtin or action.
    Builtin(&'static cslc::paint::PaintFunction),
    /// A name declared nowhere: a command-line global.
    CommandLine(String),
    /// The file an `include` reads.
    Include(Option<usize>),
    /// The Tungsten program `code('prog ...)` places (its path, if found).
    Program(String, Option<PathBuf>),
    /// A binding `name:value` of `code('prog [...])`.
    Binding(String, Option<PathBuf>),
    /// A word in a route bracket (`CXR`, or a lone side letter after `|`).
    Route(String),
}

/// The floorplan and its includes, parsed.
struct Plan {
    files: Files,
    /// The items of each of `files`.
    items: Vec<Vec<(Item, Span)>>,
    lib_dirs: Vec<PathBuf>,
}

impl Plan {
    fn load(text: &str, path: Option<&Path>, lib_dirs: &[PathBuf]) -> Plan {
        let mut plan = Plan {
            files: Files::new(path, text),
            items: vec![crate::symbols::paint_items(text)],
            lib_dirs: lib_dirs.to_vec(),
        };
        let mut seen = HashSet::new();
        if let Some(p) = path.and_then(|p| p.canonicalize().ok()) {
            seen.insert(p);
        }
        plan.follow(0, &mut seen, 0);
        plan
    }

    /// The directory of `file` of the plan, if it has a path.
    fn dir(&self, file: usize) -> Option<PathBuf> {
        let f = self.files.get(file)?;
        f.path
            .as_deref()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
    }

    /// The file an `include` in `file` names, searched as the evaluator searches: the
    /// including file's directory, then the library directories.
    fn find_include(&self, file: usize, name: &str) -> Option<PathBuf> {
        let dirs: Vec<PathBuf> = self
            .dir(file)
            .into_iter()
            .chain(self.lib_dirs.iter().cloned())
            .collect();
        cslc::paint::eval::find_in(&dirs, name).map(|(_, canonical)| canonical)
    }

    /// Reads the includes of `file`, each file once.
    fn follow(&mut self, file: usize, seen: &mut HashSet<PathBuf>, depth: u32) {
        if depth >= MAX_INCLUDE_DEPTH {
            return;
        }
        let names: Vec<String> = self.items.get(file).map_or(Vec::new(), |items| {
            items
                .iter()
                .filter_map(|(i, _)| match i {
                    Item::Include(n, _) => Some(n.clone()),
                    _ => None,
                })
                .collect()
        });
        for name in names {
            let Some(path) = self.find_include(file, &name) else {
                continue;
            };
            let key = path.canonicalize().unwrap_or_else(|_| path.clone());
            if !seen.insert(key) {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            self.items.push(crate::symbols::paint_items(&text));
            let i = self.files.push(path, text);
            self.follow(i, seen, depth + 1);
        }
    }

    /// The file an include of `file` names, if it was read.
    fn included(&self, file: usize, name: &str) -> Option<usize> {
        self.files.index_of(&self.find_include(file, name)?)
    }

    /// The `let` or Paint function named `name`: the document's last one before `offset`,
    /// else its first after it, else an included file's.
    fn global(&self, name: &str, offset: u32) -> Option<Target> {
        let mut found: Vec<(usize, Span, Span)> = Vec::new();
        for (i, items) in self.items.iter().enumerate() {
            for (item, whole) in items {
                let at = match item {
                    Item::Let(n, _) if n.name == name => n.span,
                    Item::Define { name: n, .. } if n.name == name => n.span,
                    _ => continue,
                };
                found.push((i, at, *whole));
            }
        }
        let before = found
            .iter()
            .rfind(|(f, at, _)| *f == 0 && at.start <= offset);
        let pick = before
            .or_else(|| found.iter().find(|(f, _, _)| *f == 0))
            .or(found.first());
        pick.map(|&(file, at, whole)| Target::Global { file, at, whole })
    }

    /// The Tungsten program `'prog` names, from `file`.
    /// (As `paint` searches: the directory of the file with the `code()`, the floorplan's,
    /// then the library directories.)
    fn program(&self, file: usize, prog: &str) -> Option<PathBuf> {
        let mut dirs: Vec<PathBuf> = self.dir(file).into_iter().collect();
        if let Some(main) = self.dir(0).filter(|d| !dirs.contains(d)) {
            dirs.push(main);
        }
        for d in &self.lib_dirs {
            if !dirs.contains(d) {
                dirs.push(d.clone());
            }
        }
        cslc::paint::eval::find_in(&dirs, &format!("{prog}.w")).map(|(_, canonical)| canonical)
    }

    /// What the document's byte `offset` is on, and the span it covers.
    fn target_at(&self, offset: u32) -> Option<(Target, Span)> {
        let doc = self.items.first()?;
        let within = |s: Span| s.start <= offset && offset <= s.end;
        for (item, whole) in doc {
            if !within(*whole) {
                continue;
            }
            match item {
                Item::Include(name, at) => {
                    return Some((Target::Include(self.included(0, name)), *at));
                }
                Item::Let(n, value) => {
                    if within(n.span) {
                        return Some((self.global(&n.name, n.span.start)?, n.span));
                    }
                    return self.in_expr(value, offset, None);
                }
                Item::Define { name, params, body } => {
                    if within(name.span) {
                        return Some((self.global(&name.name, name.span.start)?, name.span));
                    }
                    if let Some(p) = params.iter().find(|p| within(p.span)) {
                        let of = name.name.clone();
                        return Some((Target::Param { at: p.span, of }, p.span));
                    }
                    let scope = (name.name.as_str(), params.as_slice());
                    return self.in_expr(body, offset, Some(scope));
                }
                Item::Action { region, action } => {
                    if within(region.span) {
                        return self.in_expr(region, offset, None);
                    }
                    return self.in_expr(action, offset, None);
                }
                Item::Expr(e) => return self.in_expr(e, offset, None),
            }
        }
        None
    }

    /// What `offset` is on inside `e` (in the body of the Paint function `scope`, if any).
    fn in_expr(
        &self,
        e: &Expr,
        offset: u32,
        scope: Option<(&str, &[cslc::paint::ast::Ident])>,
    ) -> Option<(Target, Span)> {
        let within = |s: Span| s.start <= offset && offset <= s.end;
        if !within(e.span) {
            return None;
        }
        match &e.kind {
            ExprKind::Name(n) => {
                if let Some((of, params)) = scope
                    && let Some(p) = params.iter().find(|p| p.name == *n)
                {
                    let of = of.to_string();
                    return Some((Target::Param { at: p.span, of }, e.span));
                }
                let t = self
                    .global(n, e.span.start)
                    .unwrap_or_else(|| Target::CommandLine(n.clone()));
                Some((t, e.span))
            }
            ExprKind::Call(f, args) => {
                if within(f.span) {
                    let t = self.global(&f.name, f.span.start).or_else(|| {
                        FUNCTIONS
                            .iter()
                            .find(|b| b.name == f.name)
                            .map(Target::Builtin)
                    })?;
                    return Some((t, f.span));
                }
                let prog = match (f.name.as_str(), args.first().map(|a| &a.kind)) {
                    ("code", Some(ExprKind::Quote(q))) => Some(q.as_str()),
                    _ => None,
                };
                for (i, a) in args.iter().enumerate() {
                    if !within(a.span) {
                        continue;
                    }
                    if let Some(prog) = prog {
                        let path = self.program(0, prog);
                        if i == 0 {
                            return Some((Target::Program(prog.to_string(), path), a.span));
                        }
                        if let ExprKind::Bracket(items) = &a.kind {
                            for b in items {
                                if let BracketItem::Bind(n, v) = b {
                                    if within(n.span) {
                                        return Some((
                                            Target::Binding(n.name.clone(), path),
                                            n.span,
                                        ));
                                    }
                                    if within(v.span) {
                                        return self.in_expr(v, offset, scope);
                                    }
                                }
                            }
                            return None;
                        }
                    }
                    return self.in_expr(a, offset, scope);
                }
                None
            }
            ExprKind::Bracket(items) => items.iter().find_map(|b| match b {
                BracketItem::Bind(_, v) => self.in_expr(v, offset, scope),
                BracketItem::Word(w) if within(w.span) => {
                    Some((Target::Route(w.name.clone()), w.span))
                }
                _ => None,
            }),
            ExprKind::Neg(x) => self.in_expr(x, offset, scope),
            ExprKind::Binary(_, a, b) => self
                .in_expr(a, offset, scope)
                .or_else(|| self.in_expr(b, offset, scope)),
            ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Quote(_) | ExprKind::Str(_) => None,
        }
    }

    /// The source of `span` in `file` on one line, at most [`MAX_DETAIL`] bytes.
    fn source(&self, file: usize, span: Span) -> String {
        self.files.source(file, span, MAX_DETAIL)
    }

    fn location(&self, file: usize, start: u32, end: u32, doc: &Uri) -> Option<Location> {
        self.files.location(file, start, end, doc)
    }

    fn shown_path(&self, file: usize) -> String {
        self.files.shown_path(file)
    }
}

/// The Tungsten program at `path`, resolved with the plan's library directories.
fn program_names(path: &Path, lib_dirs: &[PathBuf]) -> Option<tungsten::Names> {
    let text = std::fs::read_to_string(path).ok()?;
    Some(tungsten::resolve(&text, Some(path), lib_dirs))
}

/// The hover at `pos` of the Paint text `text` (at `path`, if on disk).
pub fn hover(
    text: &str,
    path: Option<&Path>,
    lib_dirs: &[PathBuf],
    pos: Position,
) -> Option<Hover> {
    let ix = LineIndex::new(text);
    let offset = ix.offset(pos) as u32;
    let plan = Plan::load(text, path, lib_dirs);
    let (target, span) = plan.target_at(offset)?;
    let md = match target {
        Target::Global { file, whole, .. } => {
            let mut md = format!("```paint\n{}\n```", plan.source(file, whole));
            if file != 0 {
                md.push_str(&format!("\n\ndeclared in `{}`", plan.shown_path(file)));
            }
            md
        }
        Target::Param { of, .. } => format!("a parameter of the Paint function `{of}`"),
        Target::Builtin(b) => {
            let what = if b.action { "action" } else { "builtin" };
            format!("```paint\n{}\n```\n\n{} ({what})", b.signature, b.doc)
        }
        Target::CommandLine(n) => format!(
            "`{n}`: not defined in the floorplan, so a global from the command line (`paint ... {n}=VALUE`)"
        ),
        Target::Include(file) => match file {
            Some(f) => format!("includes `{}`", plan.shown_path(f)),
            None => "the included file was not found".to_string(),
        },
        Target::Program(prog, p) => match p
            .as_deref()
            .and_then(|p| Some((p, program_names(p, lib_dirs)?)))
        {
            Some((p, names)) => {
                let sockets: Vec<&str> = names.sockets().collect();
                let params: Vec<&str> = names.params().collect();
                format!(
                    "places the Tungsten program `{}`\n\nsockets: {}\n\nparams: {}",
                    p.display(),
                    list(&sockets),
                    list(&params)
                )
            }
            None => format!("the Tungsten program `{prog}.w` was not found"),
        },
        Target::Binding(name, p) => {
            let names = p.as_deref().and_then(|p| program_names(p, lib_dirs))?;
            names.binding(&name)?.1
        }
        Target::Route(word) => describe_route(&word)?,
    };
    Some(markdown(
        md,
        Some(ix.range(span.start as usize, span.end as usize)),
    ))
}

/// Completion inside the bracket of `code('prog [ ... ])`, where a binding's name goes:
/// the sockets and params of `prog.w` not bound yet in that bracket. `None` elsewhere
/// (the caller offers the floorplan's names, builtins and actions).
pub fn binding_completions(
    text: &str,
    path: Option<&Path>,
    lib_dirs: &[PathBuf],
    pos: Position,
) -> Option<Vec<CompletionItem>> {
    let offset = LineIndex::new(text).offset(pos);
    let before = text.get(..offset)?;
    let call = before.rfind("code(")?;
    let rest = before.get(call + "code(".len()..)?.trim_start();
    let prog: String = rest
        .strip_prefix('\'')?
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    let open = before.get(call..)?.find('[')? + call;
    let inside = before.get(open + 1..)?;
    if prog.is_empty() || inside.contains([']', ')']) {
        return None;
    }
    // After `name:` comes a value: the floorplan's names, not the program's.
    if inside
        .split_whitespace()
        .next_back()
        .is_some_and(|w| w.contains(':'))
        && !inside.ends_with(char::is_whitespace)
    {
        return None;
    }
    let bound: HashSet<&str> = inside
        .split_whitespace()
        .filter_map(|w| w.split_once(':').map(|(n, _)| n))
        .collect();
    let plan = Plan::load(text, path, lib_dirs);
    let file = plan.program(0, &prog)?;
    let names = program_names(&file, lib_dirs)?;
    let sockets = names
        .sockets()
        .map(|n| (n, CompletionItemKind::INTERFACE, "socket"));
    let params = names
        .params()
        .map(|n| (n, CompletionItemKind::CONSTANT, "param"));
    Some(
        sockets
            .chain(params)
            .filter(|(n, _, _)| !bound.contains(n))
            .map(|(n, kind, what)| CompletionItem {
                label: n.to_string(),
                kind: Some(kind),
                detail: Some(format!("{what} of {prog}.w")),
                insert_text: Some(format!("{n}:")),
                ..Default::default()
            })
            .collect(),
    )
}

/// A route word in words: `CXR` is "from the core to the right neighbour"; a lone side
/// letter drops the routes on the region's edge on that side. `None` for anything else
/// (the evaluator reports it).
fn describe_route(word: &str) -> Option<String> {
    let sides = |letters: &str| -> Option<Vec<&'static str>> {
        let v: Option<Vec<_>> = letters
            .chars()
            .map(|c| Side::from_letter(c).map(Side::describe))
            .collect();
        v.filter(|v| !v.is_empty())
    };
    match word.split_once('X') {
        Some((ins, outs)) => Some(format!(
            "route `{word}`: from {} to {}",
            sides(ins)?.join(" or "),
            sides(outs)?.join(" and ")
        )),
        None => {
            let mut chars = word.chars();
            let side = Side::from_letter(chars.next()?).filter(|s| *s != Side::C)?;
            if chars.next().is_some() {
                return None;
            }
            Some(format!(
                "`{word}` after `|`: the routes are dropped on the tiles of the region's edge towards {}",
                side.describe()
            ))
        }
    }
}

/// Names joined for a hover, or "none".
fn list(names: &[&str]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The definition of what `pos` is on: a `let` or Paint function (in this file or an
/// included one), a parameter, an included file, a placed program, or the socket or param
/// a `code()` binding sets.
pub fn definition(
    text: &str,
    path: Option<&Path>,
    lib_dirs: &[PathBuf],
    doc: &Uri,
    pos: Position,
) -> Option<Location> {
    let offset = LineIndex::new(text).offset(pos) as u32;
    let plan = Plan::load(text, path, lib_dirs);
    let (target, _) = plan.target_at(offset)?;
    match target {
        Target::Global { file, at, .. } => plan.location(file, at.start, at.end, doc),
        Target::Param { at, .. } => plan.location(0, at.start, at.end, doc),
        Target::Include(file) => plan.location(file?, 0, 0, doc),
        Target::Program(_, p) => {
            let uri = convert::path_to_uri(p.as_deref()?)?;
            Some(Location::new(uri, lsp_types::Range::default()))
        }
        Target::Binding(name, p) => {
            let names = p.as_deref().and_then(|p| program_names(p, lib_dirs))?;
            names.binding(&name)?.0
        }
        Target::Builtin(_) | Target::CommandLine(_) | Target::Route(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::HoverContents;

    const PLAN: &str = "let c = color()\ndefine frame(r k) = paint(ring(r) k [CXC])\nlet row = rect(0 0 NX 1)\nrow : code('relay [a:c N:4])\nframe(row c)\n";

    /// The position just past the end of `text`.
    fn ix_end(text: &str) -> Position {
        LineIndex::new(text).position(text.len())
    }

    fn hover_text(text: &str, path: Option<&Path>, needle: &str) -> String {
        let ix = LineIndex::new(text);
        let at = text.find(needle).unwrap_or(0);
        match hover(text, path, &[], ix.position(at)).map(|h| h.contents) {
            Some(HoverContents::Markup(m)) => m.value,
            _ => String::new(),
        }
    }

    #[test]
    fn names_resolve_to_lets_functions_parameters_and_builtins() {
        let src = "let c = color()\ndefine frame(r k) = paint(ring(r) k [CXC])\nlet row = rect(0 0 NX 1)\nframe(row c)\n";
        assert!(hover_text(src, None, "row c").contains("let row = rect(0 0 NX 1)"));
        assert!(hover_text(src, None, "c)\n").contains("let c = color()"));
        assert!(hover_text(src, None, "frame(row").contains("define frame(r k)"));
        assert!(hover_text(src, None, "r) k").contains("parameter of the Paint function `frame`"));
        let ring = hover_text(src, None, "ring");
        assert!(
            ring.contains("ring(r)") && ring.contains("(builtin)"),
            "{ring}"
        );
        assert!(hover_text(src, None, "NX").contains("command line"));
        let route = hover_text(src, None, "CXC");
        assert!(
            route.starts_with("route `CXC`: from the tile's own core (the router's RAMP) to"),
            "{route}"
        );
        let edge = "let r = rect(0 0 4 1)\nr : paint(color() [CXR|R])\nr\n";
        let h = hover_text(edge, None, "CXR");
        assert!(h.contains("to the right neighbour"), "{h}");
        let h = hover_text(edge, None, "R])");
        assert!(
            h.contains("dropped") && h.contains("right neighbour"),
            "{h}"
        );
    }

    #[test]
    fn code_bindings_lead_into_the_program() {
        let dir = std::env::temp_dir().join(format!("csl-lsp-paint-{}", std::process::id()));
        std::fs::create_dir_all(&dir).ok();
        std::fs::write(
            dir.join("relay.w"),
            "socket a;\nxp param N = 4;\n{ a[] <- N; }\n",
        )
        .ok();
        let src = "let c = color()\ntile() : code('relay [a:c N:8])\ntile()\n";
        let plan = dir.join("plan.paint");
        let prog = hover_text(src, Some(&plan), "relay");
        assert!(
            prog.contains("relay.w") && prog.contains("`a`") && prog.contains("`N`"),
            "{prog}"
        );
        let a = hover_text(src, Some(&plan), "a:c");
        assert!(a.contains("socket 0"), "{a}");
        let ix = LineIndex::new(src);
        let doc = convert::path_to_uri(&plan).expect("uri");
        let at = src.find("N:8").unwrap_or(0);
        let def = definition(src, Some(&plan), &[], &doc, ix.position(at)).expect("definition");
        assert!(def.uri.as_str().ends_with("relay.w"), "{def:?}");
        assert_eq!(def.range.start, Position::new(1, 9));
        // The value of a binding is a name of the floorplan.
        let at = src.find("c N").unwrap_or(0);
        let def = definition(src, Some(&plan), &[], &doc, ix.position(at)).expect("definition");
        assert_eq!((def.uri, def.range.start), (doc, Position::new(0, 4)));
        // Completion of the bindings: what is not bound yet, nothing after a `:`.
        let partial = "let c = color()\ntile() : code('relay [a:c ";
        let end = ix_end(partial);
        let items = binding_completions(partial, Some(&plan), &[], end).expect("in a bracket");
        let labels: Vec<String> = items.into_iter().map(|i| i.label).collect();
        assert_eq!(labels, ["N"]);
        let value = "let c = color()\ntile() : code('relay [a:";
        assert!(binding_completions(value, Some(&plan), &[], ix_end(value)).is_none());
        let outside = "let c = color()\ntile() : code('relay [a:c])\n";
        assert!(binding_completions(outside, Some(&plan), &[], ix_end(outside)).is_none());
        std::fs::remove_dir_all(&dir).ok();
    }

    proptest::proptest! {
        /// Random text and cut-up floorplans: hover, definition and binding completion answer at every byte
        /// offset without a panic.
        #[test]
        fn any_text_never_panics(cuts in proptest::collection::vec((0usize..PLAN.len(), 0usize..10), 0..5), noise in "[a-z()\\[\\]|:'= 0-9\n]{0,40}") {
            let mut text = PLAN.to_string();
            for (at, len) in cuts {
                let at = at.min(text.len());
                let end = (at + len).min(text.len());
                text.replace_range(at..end, "");
            }
            text.push_str(&noise);
            let ix = LineIndex::new(&text);
            let doc: Uri = "file:///p.paint".parse().expect("uri");
            for o in 0..=text.len() {
                let pos = ix.position(o);
                let _ = hover(&text, None, &[], pos);
                let _ = definition(&text, None, &[], &doc, pos);
                let _ = binding_completions(&text, None, &[], pos);
            }
        }
    }
}
