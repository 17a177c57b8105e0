//! Completion: after `@`, every builtin of the compiler's table with its signature;
//! after `name.` where `name` is an imported module, the module's top-level names;
//! elsewhere the names in scope (locals, top-level declarations), builtin types and
//! keywords. In Paint files: the file's `let`s and Paint functions, every builtin and
//! action with its signature, and the item keywords.

use crate::convert::LineIndex;
use crate::hover::where_text;
use crate::scope;
use cslc::sema::builtins::BUILTINS;
use cslc::syntax::ast::{Ast, DeclKind, ExprKind, Mutability};
use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionTextEdit, Documentation, Position, Range,
    TextEdit,
};
use std::collections::BTreeSet;
use std::path::Path;

/// Keywords of the language (the lexer's own list).
use cslc::syntax::token::KEYWORDS;

/// Type names every file can use.
const TYPES: &[&str] = &[
    "void",
    "bool",
    "i8",
    "u8",
    "i16",
    "u16",
    "i32",
    "u32",
    "i64",
    "u64",
    "f16",
    "f32",
    "bf16",
    "cb16",
    "comptime_int",
    "comptime_float",
    "comptime_string",
    "comptime_struct",
    "type",
    "color",
    "direction",
    "local_task_id",
    "data_task_id",
    "control_task_id",
    "input_queue",
    "output_queue",
    "mem1d_dsd",
    "mem4d_dsd",
    "fabin_dsd",
    "fabout_dsd",
];

/// Where the identifier characters that end at byte `end` of `bytes` begin.
pub(crate) fn word_start(bytes: &[u8], end: usize) -> usize {
    let mut start = end;
    while start > 0
        && bytes
            .get(start - 1)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
    {
        start -= 1;
    }
    start
}

/// The completions at `pos` in `text` (a CSL file at `path`, if on disk).
pub fn complete(text: &str, path: Option<&Path>, pos: Position) -> Vec<CompletionItem> {
    let ix = LineIndex::new(text);
    let offset = ix.offset(pos);
    let bytes = text.as_bytes();
    let start = word_start(bytes, offset);
    if start > 0 && bytes.get(start - 1) == Some(&b'@') {
        let range = ix.range(start - 1, offset);
        return builtins(range);
    }
    let mut fake = cslc::SourceMap::new();
    let file = fake.add(String::new(), None, String::new());
    let (ast, _) = cslc::syntax::parse(file, text);
    if start > 0 && bytes.get(start - 1) == Some(&b'.') {
        let mut base_end = start - 1;
        while base_end > 0 && bytes.get(base_end - 1) == Some(&b' ') {
            base_end -= 1;
        }
        let base_start = word_start(bytes, base_end);
        let base = text.get(base_start..base_end).unwrap_or("");
        return module_members(&ast, base, path);
    }
    names_in_scope(&ast, offset as u32)
}

/// Every builtin, replacing `range` (the `@` and what follows it).
fn builtins(range: Range) -> Vec<CompletionItem> {
    BUILTINS
        .iter()
        .map(|b| {
            let label = format!("@{}", b.name);
            CompletionItem {
                label: label.clone(),
                kind: Some(CompletionItemKind::FUNCTION),
                detail: Some(b.signature()),
                documentation: Some(Documentation::String(where_text(b.place).to_string())),
                filter_text: Some(label.clone()),
                text_edit: Some(CompletionTextEdit::Edit(TextEdit::new(range, label))),
                ..Default::default()
            }
        })
        .collect()
}

/// The top-level names of the module that `base` (a `const` of this file initialised
/// with `@import_module("file.csl", ...)`) imports.
fn module_members(ast: &Ast, base: &str, path: Option<&Path>) -> Vec<CompletionItem> {
    let Some(spec) = ast.decls.iter().find_map(|d| match &d.kind {
        DeclKind::Var(v) if v.name.name == base => {
            let init = ast.exprs.get(v.init?)?;
            match &init.kind {
                ExprKind::Builtin { name, args } if name.name == "import_module" => {
                    match &ast.exprs.get(*args.first()?)?.kind {
                        ExprKind::Str(s) => Some(s.clone()),
                        _ => None,
                    }
                }
                _ => None,
            }
        }
        _ => None,
    }) else {
        return Vec::new();
    };
    let text = match spec.strip_prefix('<').and_then(|s| s.strip_suffix('>')) {
        Some(lib) => cslc::stdlib::lookup(lib).map(str::to_string),
        None => path
            .and_then(Path::parent)
            .and_then(|dir| std::fs::read_to_string(dir.join(&spec)).ok()),
    };
    let Some(text) = text else {
        return Vec::new();
    };
    let mut fake = cslc::SourceMap::new();
    let file = fake.add(String::new(), None, String::new());
    let (module, _) = cslc::syntax::parse(file, &text);
    decl_items(&module)
}

/// Completion items for the top-level declarations of `ast`.
fn decl_items(ast: &Ast) -> Vec<CompletionItem> {
    ast.decls
        .iter()
        .filter_map(|d| {
            let (name, kind, detail) = match &d.kind {
                DeclKind::Param { name, .. } => (name, CompletionItemKind::TYPE_PARAMETER, "param"),
                DeclKind::Var(v) => (
                    &v.name,
                    match v.mutability {
                        Mutability::Const => CompletionItemKind::CONSTANT,
                        _ => CompletionItemKind::VARIABLE,
                    },
                    match v.mutability {
                        Mutability::Const => "const",
                        _ => "var",
                    },
                ),
                DeclKind::Fn(f) => (&f.name, CompletionItemKind::FUNCTION, "fn"),
                DeclKind::Task(t) => (&t.name, CompletionItemKind::EVENT, "task"),
                _ => return None,
            };
            Some(CompletionItem {
                label: name.name.to_string(),
                kind: Some(kind),
                detail: Some(detail.to_string()),
                ..Default::default()
            })
        })
        .collect()
}

/// Locals visible at `offset`, top-level names, types and keywords.
fn names_in_scope(ast: &Ast, offset: u32) -> Vec<CompletionItem> {
    let mut items = decl_items(ast);
    let mut seen: BTreeSet<String> = items.iter().map(|i| i.label.clone()).collect();
    for b in scope::local_bindings(ast) {
        if b.visible.0 <= offset && offset <= b.visible.1 && seen.insert(b.name.clone()) {
            items.push(CompletionItem {
                label: b.name,
                kind: Some(CompletionItemKind::VARIABLE),
                detail: Some("local".into()),
                ..Default::default()
            });
        }
    }
    let words = TYPES
        .iter()
        .map(|t| (t, CompletionItemKind::STRUCT, Some("type".into())))
        .chain(
            KEYWORDS
                .iter()
                .map(|k| (k, CompletionItemKind::KEYWORD, None)),
        );
    for (word, kind, detail) in words {
        if seen.insert((*word).to_string()) {
            items.push(CompletionItem {
                label: (*word).to_string(),
                kind: Some(kind),
                detail,
                ..Default::default()
            });
        }
    }
    items
}

/// Completion in a Paint file: the `let` bindings and Paint functions it defines, every
/// builtin and action with its signature and a line of documentation
/// (`cslc::paint::FUNCTIONS`), and the item keywords.
pub fn paint_complete(text: &str) -> Vec<CompletionItem> {
    use cslc::paint::ast::Item;
    let parsed = crate::symbols::paint_items(text);
    let mut items = Vec::new();
    let mut seen = BTreeSet::new();
    for (item, _) in &parsed {
        let (name, kind, detail) = match item {
            Item::Let(name, _) => (&name.name, CompletionItemKind::VARIABLE, None),
            Item::Define { name, params, .. } => {
                let ps: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
                (
                    &name.name,
                    CompletionItemKind::FUNCTION,
                    Some(format!("{}({})", name.name, ps.join(" "))),
                )
            }
            _ => continue,
        };
        if seen.insert(name.clone()) {
            items.push(CompletionItem {
                label: name.clone(),
                kind: Some(kind),
                detail,
                ..Default::default()
            });
        }
    }
    for f in cslc::paint::FUNCTIONS {
        items.push(CompletionItem {
            label: f.name.to_string(),
            kind: Some(if f.action {
                CompletionItemKind::METHOD
            } else {
                CompletionItemKind::FUNCTION
            }),
            detail: Some(f.signature.to_string()),
            documentation: Some(Documentation::String(f.doc.to_string())),
            ..Default::default()
        });
    }
    for k in ["let", "define", "include"] {
        items.push(CompletionItem {
            label: k.to_string(),
            kind: Some(CompletionItemKind::KEYWORD),
            ..Default::default()
        });
    }
    items
}
