//! Hover: the type and comptime value of the name under the cursor, from the compiler's
//! semantic index; for a name analysis did not reach, its declaration from the syntax
//! tree; for a builtin, its signature from the builtin table.

use crate::analysis::Analysis;
use crate::convert::{LineIndex, span_range};
use crate::scope;
use cslc::sema::builtins::{self, Where};
use cslc::source::Span;
use cslc::syntax::ast::{Ast, DeclKind, ExprKind};
use lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind, Position};

/// The hover at `pos` of the analysed document.
pub fn hover(a: &Analysis, pos: Position) -> Option<Hover> {
    let text = &a.sources.get(a.main).text;
    let offset = LineIndex::new(text).offset(pos) as u32;
    let (ast, _) = cslc::syntax::parse(a.main, text);
    if let Some(h) = builtin_hover(a, &ast, offset) {
        return Some(h);
    }
    let slice = |s: Span| text.get(s.start as usize..s.end as usize).unwrap_or("");
    if let Some(e) = a.index.as_ref().and_then(|ix| ix.at(a.main, offset)) {
        let name = slice(e.span);
        let def_file = e.def.map(|d| a.sources.get(d.file));
        let md = match (&e.ty, e.def, def_file) {
            (Some(ty), _, _) => {
                let mut md = format!("```csl\n{name}: {ty}\n```");
                if let Some(v) = e.value.as_deref().filter(|v| *v != name) {
                    md.push_str(&format!("\n\ncomptime value: `{v}`"));
                }
                Some(md)
            }
            // An import path: the file it names.
            (None, Some(d), Some(f)) if d.start == 0 && d.end == 0 => {
                Some(format!("module file `{}`", f.display))
            }
            // A function or task: its declaration.
            (None, Some(d), Some(f)) => Some(format!(
                "```csl\n{}\n```",
                declaration_line(&f.text, d)
                    .trim_end_matches('{')
                    .trim_end()
            )),
            _ => None,
        };
        if let Some(mut md) = md {
            if let (Some(d), Some(f)) = (e.def, def_file)
                && d.file != a.main
                && !(d.start == 0 && d.end == 0)
            {
                md.push_str(&format!("\n\ndeclared in `{}`", f.display));
            }
            return Some(markdown(md, Some(span_range(&a.sources, e.span))));
        }
    }
    // Not reached by analysis: show where the name is declared.
    let id = scope::ident_at(&ast, offset)?;
    if id.base.is_some() {
        return None;
    }
    let locals = scope::local_bindings(&ast);
    let def = scope::resolve(&ast, &locals, &id.name, offset)?;
    let line = declaration_line(text, def);
    let line = line.trim_end_matches('{').trim_end();
    // Functions and tasks are described by their declaration; for other names, say why
    // there is no type.
    let is_code = ast.decls.iter().any(|d| match &d.kind {
        DeclKind::Fn(f) => f.name.span == def,
        DeclKind::Task(t) => t.name.span == def,
        _ => false,
    });
    let md = if is_code {
        format!("```csl\n{line}\n```")
    } else {
        format!("```csl\n{line}\n```\n\n(not analysed: no type or value known here)")
    };
    Some(markdown(md, Some(span_range(&a.sources, id.span))))
}

/// The hover of a builtin name (`@fmacs`) at `offset`.
fn builtin_hover(a: &Analysis, ast: &Ast, offset: u32) -> Option<Hover> {
    let (_, e) = ast.exprs.iter().find(|(_, e)| match &e.kind {
        // The name span excludes the `@`.
        ExprKind::Builtin { name, .. } => {
            name.span.start.saturating_sub(1) <= offset && offset <= name.span.end
        }
        _ => false,
    })?;
    let ExprKind::Builtin { name, .. } = &e.kind else {
        return None;
    };
    let info = builtins::info(&name.name)?;
    let md = format!(
        "```csl\n{}\n```\n\n{}",
        info.signature(),
        where_text(info.place)
    );
    let full = Span {
        start: name.span.start.saturating_sub(1),
        ..name.span
    };
    Some(markdown(md, Some(span_range(&a.sources, full))))
}

/// Where a builtin may be used, in words.
pub fn where_text(w: Where) -> &'static str {
    match w {
        Where::Any => "Usable anywhere.",
        Where::Layout => "Only in the layout block.",
        Where::TopComptime => "Only in a top-level comptime block of a PE program.",
        Where::TopComptimeOrRuntime => "In a top-level comptime block or at runtime.",
        Where::Runtime => "Only at runtime.",
        Where::Comptime => "Only at comptime.",
    }
}

/// The source line holding `def`, trimmed.
fn declaration_line(text: &str, def: Span) -> String {
    let start = (def.start as usize).min(text.len());
    let line_start = text
        .get(..start)
        .and_then(|t| t.rfind('\n'))
        .map_or(0, |i| i + 1);
    let line_end = text
        .get(start..)
        .and_then(|t| t.find('\n'))
        .map_or(text.len(), |i| start + i);
    text.get(line_start..line_end)
        .unwrap_or("")
        .trim()
        .to_string()
}

/// A Markdown hover over `range`.
pub fn markdown(value: String, range: Option<lsp_types::Range>) -> Hover {
    Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value,
        }),
        range,
    }
}
