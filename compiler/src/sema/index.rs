//! The semantic index, for editors (`csl-lsp`): what analysis learnt about each name it
//! resolved, by source span — where the name is defined, its type and, when known at
//! comptime, its value.
//!
//! Recording is off unless [`crate::driver::Options::index`] asks for it: every hook
//! starts with a test of [`Sema::index`] being `Some`, so normal compiles pay one branch
//! per resolved name. Analysis is lazy and may visit a name many times (once per module
//! instance, once per comptime loop iteration); the first visit fixes the definition and
//! type, and a later visit with another value marks the value as varying.

use super::eval::{Env, Local, Val};
use super::types::TypeId;
use super::value::Value;
use super::{Sema, decl_name_span};
use crate::sema::module::DeclRef;
use crate::source::{FileId, Span};
use std::collections::HashMap;

/// Values and types longer than this are cut (an array of a thousand elements is not a
/// hover).
const MAX_VALUE_CHARS: usize = 200;

/// Visits of one span after which its entry is no longer updated (bounds the cost of
/// names inside long comptime loops).
const MAX_VISITS: u32 = 64;

/// `s`, cut to [`MAX_VALUE_CHARS`] with an ellipsis.
fn shorten(mut s: String) -> String {
    if s.len() > MAX_VALUE_CHARS {
        let mut cut = MAX_VALUE_CHARS;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push('…');
    }
    s
}

/// What is known about one name occurrence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexEntry {
    /// The occurrence (a use or the name in a definition).
    pub span: Span,
    /// Where the name is defined, when analysis resolved it to a top-level declaration
    /// or a file (`@import_module("f.csl")`: the start of `f.csl`). Local names are
    /// resolved by the editor from the syntax tree.
    pub def: Option<Span>,
    /// Its type, as diagnostics show types.
    pub ty: Option<String>,
    /// Its comptime value, if it has one; [`VARIES`] when visits saw different values.
    pub value: Option<String>,
    /// How many times analysis visited it.
    pub visits: u32,
}

/// The value shown for a name that had several comptime values (a loop variable, a
/// param of a module imported twice with different params).
pub const VARIES: &str = "(differs between evaluations)";

/// Every recorded occurrence, by span.
#[derive(Default, Debug)]
pub struct SemIndex {
    entries: HashMap<Span, IndexEntry>,
}

impl SemIndex {
    /// The entries of one file, in no particular order.
    pub fn entries_in(&self, file: FileId) -> impl Iterator<Item = &IndexEntry> {
        self.entries.values().filter(move |e| e.span.file == file)
    }

    /// The innermost (shortest) entry of `file` whose span contains byte `offset` (an
    /// offset at the end of a name counts as inside it).
    pub fn at(&self, file: FileId, offset: u32) -> Option<&IndexEntry> {
        self.entries_in(file)
            .filter(|e| e.span.start <= offset && offset <= e.span.end)
            .min_by_key(|e| e.span.end - e.span.start)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn visit(&mut self, span: Span) -> Option<&mut IndexEntry> {
        let e = self.entries.entry(span).or_insert(IndexEntry {
            span,
            def: None,
            ty: None,
            value: None,
            visits: 0,
        });
        if e.visits >= MAX_VISITS {
            return None;
        }
        e.visits += 1;
        Some(e)
    }
}

impl Sema {
    /// Records that the name at `span` has the value `val` (and, if `def` is given, is
    /// defined there).
    pub(crate) fn index_val(&mut self, span: Span, def: Option<Span>, val: &Val) {
        if self.index.is_none() {
            return;
        }
        let (ty, value) = match val {
            Val::Ct(v) => self.describe_for_index(v),
            Val::Rt { ty, .. } => (Some(self.types.display(*ty)), None),
        };
        self.index_record(span, def, ty, value);
    }

    /// Records that the name at `span` has the runtime type `ty`.
    pub(crate) fn index_ty(&mut self, span: Span, def: Option<Span>, ty: TypeId) {
        if self.index.is_none() {
            return;
        }
        let ty = self.types.display(ty);
        self.index_record(span, def, Some(ty), None);
    }

    /// Records a reference at `span` to the top-level declaration `d` with value `val`.
    pub(crate) fn index_decl(&mut self, span: Span, d: DeclRef, val: &Val) {
        if self.index.is_none() {
            return;
        }
        let def = decl_name_span(&self.mods[d.module].ast, d.index);
        self.index_val(span, def, val);
    }

    /// Records a file reference (an import path) at `span` to `file`.
    pub(crate) fn index_file(&mut self, span: Span, file: FileId) {
        if self.index.is_none() {
            return;
        }
        let def = Span::new(file, 0, 0);
        self.index_record(span, Some(def), None, None);
    }

    /// Records the local just bound under `name` (declared at `span`) in `env`.
    pub(crate) fn index_local(&mut self, env: &Env, name: &str, span: Span) {
        if self.index.is_none() {
            return;
        }
        let Some(local) = env
            .scopes
            .iter()
            .rev()
            .find_map(|s| s.iter().rev().find(|(n, _)| n == name).map(|(_, l)| l))
        else {
            return;
        };
        let (ty, value) = match local {
            Local::Value(v) => self.describe_for_index(v),
            Local::CtVar(v) => (self.describe_for_index(v).0, None),
            Local::Reg { ty, .. } | Local::Frame { ty, .. } => {
                (Some(self.types.display(*ty)), None)
            }
            Local::Poison => return,
        };
        self.index_record(span, Some(span), ty, value);
    }

    fn describe_for_index(&mut self, v: &Value) -> (Option<String>, Option<String>) {
        // A function's or task's declaration says more than a type would.
        if matches!(v, Value::Func(_) | Value::Task(_)) {
            return (None, None);
        }
        let ty = v.ty(&mut self.types);
        let ty = Some(self.types.display(ty));
        let value = match v {
            // Their "value" is the name already shown, or an internal handle.
            Value::Module(_) | Value::GlobalPtr { .. } => None,
            Value::Array(_, elems) if elems.len() > 64 => Some(format!("{} elements", elems.len())),
            other => Some(other.describe(&self.types)),
        };
        (ty, value)
    }

    fn index_record(
        &mut self,
        span: Span,
        def: Option<Span>,
        ty: Option<String>,
        value: Option<String>,
    ) {
        let Some(index) = self.index.as_mut() else {
            return;
        };
        let Some(e) = index.visit(span) else {
            return;
        };
        let (ty, value) = (ty.map(shorten), value.map(shorten));
        if e.visits == 1 {
            e.def = def;
            e.ty = ty;
            e.value = value;
            return;
        }
        if e.def.is_none() {
            e.def = def;
        }
        if e.ty.is_none() {
            e.ty = ty;
        }
        if e.value != value && e.value.as_deref() != Some(VARIES) {
            e.value = Some(VARIES.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::VARIES;
    use crate::diag::codes;
    use crate::driver::{Compilation, Options, compile_sources};
    use crate::source::{FileId, SourceMap};

    fn compile(text: &str, index: bool) -> (Compilation, FileId) {
        let mut sources = SourceMap::new();
        let top = sources.add("m.csl".into(), None, text.to_string());
        let opts = Options {
            lone_module: true,
            index,
            ..Options::default()
        };
        (compile_sources(sources, top, &opts), top)
    }

    fn offset(text: &str, needle: &str) -> u32 {
        text.find(needle).map_or(u32::MAX, |i| i as u32)
    }

    #[test]
    fn records_types_values_and_definitions() {
        let text = "param p: u16;\nconst k: u16 = 5 * 2;\nvar g: [3]f32;\nfn f(a: i16) i16 {\n  const b = a + 1;\n  g[0] = 1.0;\n  return b * @as(i16, k);\n}\ncomptime {\n  for (@range(u16, 3)) |j| { @comptime_assert(j < 5); }\n}\n";
        let (c, top) = compile(text, true);
        assert!(!c.has_errors(), "{:?}", c.diagnostics);
        let ix = c.index.as_ref();
        let at = |needle: &str, extra: u32| {
            ix.and_then(|ix| ix.at(top, offset(text, needle) + extra))
                .cloned()
        };
        let k = at("k)", 0);
        assert_eq!(k.as_ref().and_then(|e| e.ty.as_deref()), Some("u16"));
        assert_eq!(k.as_ref().and_then(|e| e.value.as_deref()), Some("10"));
        let def = k.and_then(|e| e.def);
        assert_eq!(def.map(|d| d.start), Some(offset(text, "k:")));
        let b = at("b * ", 0);
        assert_eq!(b.and_then(|e| e.ty), Some("i16".to_string()));
        let g = at("g[0]", 0);
        assert_eq!(g.and_then(|e| e.ty), Some("[3]f32".to_string()));
        let j = at("j < 5", 0);
        assert_eq!(j.and_then(|e| e.value), Some(VARIES.to_string()));
    }

    #[test]
    fn lone_module_reports_no_missing_layout_or_unbound_params() {
        let (c, _) = compile("param n: u16;\nfn f() u16 { return n; }\n", false);
        assert!(c.index.is_none());
        assert!(
            c.diagnostics
                .iter()
                .all(|d| d.code != codes::LAYOUT_MISSING && d.code != codes::UNBOUND_PARAM),
            "{:?}",
            c.diagnostics
        );
        // Every function is checked.
        let (c, _) = compile("fn f() u16 { return true; }\n", false);
        assert!(c.has_errors());
    }
}
