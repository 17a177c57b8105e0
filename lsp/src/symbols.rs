//! Document symbols (the outline) from the syntax tree. CSL: functions, tasks, params,
//! constants, variables, struct and enum types (with their fields and members), imported
//! modules, top-level comptime blocks and the layout block. Tungsten: sockets, params,
//! variables, structs and unions, functions and the entry block. Paint: `let` bindings,
//! Paint functions, includes and named regions.

use crate::convert::LineIndex;
use cslc::source::Span;
use cslc::syntax::ast::{Ast, DeclKind, ExprKind, Mutability};
use lsp_types::{DocumentSymbol, SymbolKind};

/// One outline entry: `name` (`_` if empty) over `whole`, selecting `sel` (or all of
/// `whole` when `sel` is not inside it), with `children` if there are any.
fn symbol(
    ix: &LineIndex,
    name: String,
    detail: Option<String>,
    kind: SymbolKind,
    whole: Span,
    sel: Span,
    children: Vec<DocumentSymbol>,
) -> DocumentSymbol {
    let range = ix.range(whole.start as usize, whole.end as usize);
    // The selection range must lie inside the range.
    let sel = if sel.start >= whole.start && sel.end <= whole.end {
        ix.range(sel.start as usize, sel.end as usize)
    } else {
        range
    };
    #[allow(deprecated)]
    DocumentSymbol {
        name: if name.is_empty() { "_".into() } else { name },
        detail,
        kind,
        tags: None,
        deprecated: None,
        range,
        selection_range: sel,
        children: (!children.is_empty()).then_some(children),
    }
}

/// The outline of a file whose text is `text` and syntax tree `ast`.
pub fn document_symbols(ast: &Ast, text: &str) -> Vec<DocumentSymbol> {
    let ix = LineIndex::new(text);
    let snippet = |s: Span| -> String {
        let raw = text.get(s.start as usize..s.end as usize).unwrap_or("");
        let one_line: Vec<&str> = raw.split_whitespace().collect();
        let mut line = one_line.join(" ");
        if line.len() > 120 {
            let mut cut = 120;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
            line.push('…');
        }
        line
    };
    let sym = |name: String, detail, kind, whole, sel, children| {
        symbol(&ix, name, detail, kind, whole, sel, children)
    };
    let mut out = Vec::new();
    for d in &ast.decls {
        match &d.kind {
            DeclKind::Param { name, ty, .. } => {
                let detail = ty.and_then(|t| ast.exprs.get(t)).map(|e| snippet(e.span));
                out.push(sym(
                    name.name.to_string(),
                    detail.map(|t| format!("param: {t}")),
                    SymbolKind::TYPE_PARAMETER,
                    d.span,
                    name.span,
                    Vec::new(),
                ));
            }
            DeclKind::Var(v) => {
                let init = v.init.and_then(|e| ast.exprs.get(e));
                let mut children = Vec::new();
                let kind = match init.map(|e| &e.kind) {
                    Some(ExprKind::StructType(fields)) => {
                        for f in fields {
                            let ty = ast.exprs.get(f.ty).map(|e| snippet(e.span));
                            let whole = ast
                                .exprs
                                .get(f.ty)
                                .map_or(f.name.span, |e| f.name.span.to(e.span));
                            children.push(sym(
                                f.name.name.to_string(),
                                ty,
                                SymbolKind::FIELD,
                                whole,
                                f.name.span,
                                Vec::new(),
                            ));
                        }
                        SymbolKind::STRUCT
                    }
                    Some(ExprKind::EnumType { members, .. }) => {
                        for m in members {
                            children.push(sym(
                                m.name.name.to_string(),
                                None,
                                SymbolKind::ENUM_MEMBER,
                                m.name.span,
                                m.name.span,
                                Vec::new(),
                            ));
                        }
                        SymbolKind::ENUM
                    }
                    Some(ExprKind::Builtin { name, .. }) if name.name == "import_module" => {
                        SymbolKind::MODULE
                    }
                    _ => match v.mutability {
                        Mutability::Const => SymbolKind::CONSTANT,
                        Mutability::Var | Mutability::ComptimeVar => SymbolKind::VARIABLE,
                    },
                };
                let keyword = match v.mutability {
                    Mutability::Const => "const",
                    Mutability::Var => "var",
                    Mutability::ComptimeVar => "comptime var",
                };
                let detail = match v.ty.and_then(|t| ast.exprs.get(t)) {
                    Some(t) => format!("{keyword}: {}", snippet(t.span)),
                    None => keyword.to_string(),
                };
                out.push(sym(
                    v.name.name.to_string(),
                    Some(detail),
                    kind,
                    d.span,
                    v.name.span,
                    children,
                ));
            }
            DeclKind::Fn(_) | DeclKind::Task(_) => {
                // The detail is the head: everything before the body.
                let (name, kind, body_start) = match &d.kind {
                    DeclKind::Fn(f) => (
                        &f.name,
                        SymbolKind::FUNCTION,
                        f.body.as_ref().map_or(d.span.end, |b| b.span.start),
                    ),
                    DeclKind::Task(t) => (&t.name, SymbolKind::EVENT, t.body.span.start),
                    _ => continue,
                };
                let head = Span {
                    end: body_start.max(d.span.start),
                    ..d.span
                };
                let detail = Some(snippet(head));
                out.push(sym(
                    name.name.to_string(),
                    detail,
                    kind,
                    d.span,
                    name.span,
                    Vec::new(),
                ));
            }
            DeclKind::Layout(_) => out.push(sym(
                "layout".into(),
                None,
                SymbolKind::NAMESPACE,
                d.span,
                d.span,
                Vec::new(),
            )),
            DeclKind::Comptime(_) => out.push(sym(
                "comptime".into(),
                None,
                SymbolKind::NAMESPACE,
                d.span,
                d.span,
                Vec::new(),
            )),
            DeclKind::Error => {}
        }
    }
    out
}

/// The outline of a Tungsten file: sockets, params, variables, structs and unions (with
/// their fields), functions and the entry block.
pub fn tungsten_symbols(text: &str) -> Vec<DocumentSymbol> {
    use cslc::tungsten::ast::Item;
    let mut probe = cslc::SourceMap::new();
    let file = probe.add(String::new(), None, String::new());
    let (items, _) = cslc::tungsten::parser::parse(file, text);
    let ix = LineIndex::new(text);
    let sym = |name: &str, detail, kind, whole, sel, children| {
        symbol(&ix, name.to_string(), detail, kind, whole, sel, children)
    };
    let var = |v: &cslc::tungsten::ast::VarDecl| {
        let kind = if v.is_param {
            SymbolKind::TYPE_PARAMETER
        } else {
            SymbolKind::VARIABLE
        };
        let detail = text
            .get(v.span.start as usize..v.name.span.start as usize)
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty());
        sym(&v.name.name, detail, kind, v.span, v.name.span, Vec::new())
    };
    let mut out = Vec::new();
    for item in &items {
        match item {
            Item::Sockets(names) => {
                for n in names {
                    out.push(sym(
                        &n.name,
                        Some("socket".into()),
                        SymbolKind::INTERFACE,
                        n.span,
                        n.span,
                        Vec::new(),
                    ));
                }
            }
            Item::Var(v) => out.push(var(v)),
            Item::Aggregate {
                is_union,
                name,
                fields,
                span,
            } => out.push(sym(
                &name.name,
                Some(if *is_union { "union" } else { "struct" }.into()),
                SymbolKind::STRUCT,
                *span,
                name.span,
                fields.iter().map(var).collect(),
            )),
            Item::Func { name, span, .. } => {
                let head_end = text
                    .get(span.start as usize..span.end as usize)
                    .and_then(|t| t.find('{'))
                    .map_or(span.end, |i| span.start + i as u32);
                let head = text
                    .get(span.start as usize..head_end as usize)
                    .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "));
                out.push(sym(
                    &name.name,
                    head,
                    SymbolKind::FUNCTION,
                    *span,
                    name.span,
                    Vec::new(),
                ));
            }
            Item::Entry(s) => out.push(sym(
                "entry",
                None,
                SymbolKind::NAMESPACE,
                s.span,
                s.span,
                Vec::new(),
            )),
            Item::Import(..) | Item::Pragma(..) | Item::Error => {}
        }
    }
    out
}

/// The items of Paint text (those that parse; errors are the diagnostics' business).
pub fn paint_items(text: &str) -> Vec<(cslc::paint::ast::Item, Span)> {
    let mut probe = cslc::SourceMap::new();
    let file = probe.add(String::new(), None, String::new());
    cslc::paint::parser::parse(file, text).0
}

/// The outline of a Paint file: `let` bindings, Paint functions (`define`), includes and
/// the regions named for the map (`R : name('g)`), each with its source text as detail.
pub fn paint_symbols(text: &str) -> Vec<DocumentSymbol> {
    use cslc::paint::ast::{ExprKind, Item};
    let items = paint_items(text);
    let ix = LineIndex::new(text);
    let source = |sp: Span| {
        text.get(sp.start as usize..sp.end as usize)
            .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
    };
    let mut out = Vec::new();
    for (item, span) in &items {
        let span = *span;
        match item {
            Item::Let(name, value) => out.push(symbol(
                &ix,
                name.name.clone(),
                source(value.span),
                SymbolKind::VARIABLE,
                span,
                name.span,
                Vec::new(),
            )),
            Item::Define { name, params, .. } => {
                let ps: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
                out.push(symbol(
                    &ix,
                    name.name.clone(),
                    Some(format!("({})", ps.join(" "))),
                    SymbolKind::FUNCTION,
                    span,
                    name.span,
                    Vec::new(),
                ));
            }
            Item::Include(path, at) => out.push(symbol(
                &ix,
                path.clone(),
                Some("include".into()),
                SymbolKind::FILE,
                span,
                *at,
                Vec::new(),
            )),
            Item::Action { region, action } => {
                if let ExprKind::Call(f, args) = &action.kind
                    && f.name == "name"
                    && let Some(ExprKind::Quote(q)) = args.first().map(|a| &a.kind)
                {
                    out.push(symbol(
                        &ix,
                        q.clone(),
                        source(region.span).map(|r| format!("name of {r}")),
                        SymbolKind::NAMESPACE,
                        span,
                        action.span,
                        Vec::new(),
                    ));
                }
            }
            Item::Expr(_) => {}
        }
    }
    out
}
