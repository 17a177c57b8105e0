//! Go to definition: from the compiler's semantic index (top-level declarations, members
//! of imported modules in their own files, import paths to the imported file), else from
//! the syntax tree (local names, declarations analysis did not reach, import paths).

use crate::analysis::Analysis;
use crate::convert::{self, LineIndex};
use crate::scope;
use cslc::source::Span;
use cslc::syntax::ast::ExprKind;
use lsp_types::{Location, Position, Range, Uri};
use std::path::Path;

/// The definition of the name at `pos` in the analysed document `uri` (at `path`).
pub fn definition(a: &Analysis, uri: &Uri, path: Option<&Path>, pos: Position) -> Option<Location> {
    let text = &a.sources.get(a.main).text;
    let offset = LineIndex::new(text).offset(pos) as u32;
    let main = Some((a.main, uri));
    if let Some(def) = a
        .index
        .as_ref()
        .and_then(|ix| ix.at(a.main, offset))
        .and_then(|e| e.def)
    {
        return convert::location(&a.sources, def, main);
    }
    let (ast, _) = cslc::syntax::parse(a.main, text);
    // An import path that analysis did not resolve: the file it names, if it exists.
    for (_, e) in ast.exprs.iter() {
        if let ExprKind::Builtin { name, args } = &e.kind
            && matches!(name.name.as_str(), "import_module" | "set_tile_code")
        {
            for arg in args {
                let Some(node) = ast.exprs.get(*arg) else {
                    continue;
                };
                if let ExprKind::Str(p) = &node.kind
                    && node.span.start <= offset
                    && offset <= node.span.end
                {
                    let base = path.and_then(Path::parent)?;
                    let target = base.join(p);
                    if target.is_file() {
                        let uri = convert::path_to_uri(&target)?;
                        return Some(Location::new(uri, Range::default()));
                    }
                    return None;
                }
            }
        }
    }
    let id = scope::ident_at(&ast, offset)?;
    if id.base.is_some() {
        return None;
    }
    let locals = scope::local_bindings(&ast);
    let def: Span = scope::resolve(&ast, &locals, &id.name, offset)?;
    convert::location(&a.sources, def, main)
}
