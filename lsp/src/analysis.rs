//! Running the real compilers on a document: CSL through [`cslc::driver`] (a file
//! without a layout is analysed as a lone module, with the semantic index on), Tungsten
//! through [`cslc::tungsten::compile_class`] (its sockets bound to stand-in colours) and
//! Paint through [`cslc::paint::compile_source`]. Open documents' texts are given to the
//! compiler as an overlay, so imports of unsaved files see the editor's text.

use crate::convert;
use csl_arch::Arch;
use cslc::diag::{Diagnostic, Severity, codes};
use cslc::driver::Options;
use cslc::sema::index::SemIndex;
use cslc::source::{FileId, Overlay, SourceMap};
use lsp_types::Uri;
use std::path::{Path, PathBuf};

/// The languages the server knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    /// `.csl`.
    Csl,
    /// Tungsten, `.w`.
    Tungsten,
    /// Paint, `.paint`.
    Paint,
}

impl Lang {
    /// The language of a document, from the client's language id or else the extension.
    pub fn of(language_id: &str, path: &str) -> Lang {
        match language_id {
            "tungsten" => Lang::Tungsten,
            "paint" => Lang::Paint,
            "csl" => Lang::Csl,
            _ if path.ends_with(".w") => Lang::Tungsten,
            _ if path.ends_with(".paint") => Lang::Paint,
            _ => Lang::Csl,
        }
    }
}

/// Settings the client may give (`initializationOptions` or
/// `workspace/didChangeConfiguration` under `csl-lsp`).
#[derive(Clone, Debug)]
pub struct Settings {
    /// Target of CSL and Tungsten files (`"arch": "wse2" | "wse3"`).
    pub arch: Arch,
    /// `--params` of CSL layout files (`"params": {"width": "4"}`).
    pub params: Vec<(String, String)>,
    /// Library directories of Tungsten and Paint (`"libDirs": ["lib"]`).
    pub lib_dirs: Vec<PathBuf>,
    /// Target of Paint files (`"paintArch"`, default wse3 as `paint` has).
    pub paint_arch: Arch,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            arch: Arch::Wse2,
            params: Vec::new(),
            lib_dirs: Vec::new(),
            paint_arch: Arch::Wse3,
        }
    }
}

impl Settings {
    /// Reads settings from JSON (unknown keys and wrong types are ignored), starting from
    /// the current ones. Accepts the object itself or one nested under `csl-lsp`.
    pub fn update(&mut self, v: &serde_json::Value) {
        let v = v.get("csl-lsp").unwrap_or(v);
        if let Some(a) = v
            .get("arch")
            .and_then(|a| a.as_str())
            .and_then(Arch::from_name)
        {
            self.arch = a;
        }
        if let Some(a) = v.get("paintArch").and_then(|a| a.as_str()).and_then(|a| {
            if a == "sdr" {
                Some(Arch::Wse3)
            } else {
                Arch::from_name(a)
            }
        }) {
            self.paint_arch = a;
        }
        if let Some(p) = v.get("params").and_then(|p| p.as_object()) {
            self.params = p
                .iter()
                .map(|(k, v)| {
                    let s = match v {
                        serde_json::Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (k.clone(), s)
                })
                .collect();
        }
        if let Some(d) = v.get("libDirs").and_then(|d| d.as_array()) {
            self.lib_dirs = d
                .iter()
                .filter_map(|x| x.as_str())
                .map(PathBuf::from)
                .collect();
        }
    }
}

/// What compiling one document produced.
pub struct Analysis {
    /// Every file read.
    pub sources: SourceMap,
    /// The document's own file in [`Analysis::sources`].
    pub main: FileId,
    /// The semantic index (CSL only).
    pub index: Option<SemIndex>,
    /// The diagnostics to publish for the document.
    pub diagnostics: Vec<lsp_types::Diagnostic>,
}

/// Stack of the thread the Tungsten front end runs on (it recurses over the tree).
const TUNGSTEN_STACK_BYTES: usize = 64 << 20;

/// Compiles the document `uri` (at `path`, if it is a local file) whose text is `text`.
pub fn analyse(
    uri: &Uri,
    path: Option<&Path>,
    text: &str,
    lang: Lang,
    settings: &Settings,
    overlay: &Overlay,
) -> Analysis {
    let canonical = path.map(|p| p.canonicalize().unwrap_or_else(|_| p.to_path_buf()));
    let display = path.map_or_else(
        || uri.as_str().to_string(),
        |p| {
            p.file_name()
                .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into())
        },
    );
    let doc = Document {
        display,
        canonical,
        text,
    };
    let (sources, main, diags, index) = match lang {
        Lang::Csl => csl(doc, settings, overlay),
        Lang::Tungsten => tungsten(doc, settings, overlay),
        Lang::Paint => paint(doc.canonical, text, settings),
    };
    // Several program classes of one file report its mistakes once each.
    let mut unique: Vec<&Diagnostic> = Vec::new();
    for d in &diags {
        if !unique.contains(&d) {
            unique.push(d);
        }
    }
    let diagnostics = unique
        .iter()
        .map(|d| convert::diagnostic(&sources, d, main, uri))
        .collect();
    Analysis {
        sources,
        main,
        index,
        diagnostics,
    }
}

type Compiled = (SourceMap, FileId, Vec<Diagnostic>, Option<SemIndex>);

/// The document a compiler front end checks: its display name, canonical path and text.
struct Document<'a> {
    display: String,
    canonical: Option<PathBuf>,
    text: &'a str,
}

impl Document<'_> {
    /// A source map over `overlay` (the editor's unsaved files) holding the document.
    fn sources(&self, overlay: &Overlay) -> (SourceMap, FileId) {
        let mut sources = SourceMap::with_overlay(overlay.clone());
        let main = sources.add(
            self.display.clone(),
            self.canonical.clone(),
            self.text.to_string(),
        );
        (sources, main)
    }

    /// A source map holding only the document (when a compiler returned none).
    fn alone(self) -> (SourceMap, FileId) {
        alone(self.display, self.canonical, self.text)
    }
}

/// A source map holding only the document (when a compiler returned none).
fn alone(display: String, canonical: Option<PathBuf>, text: &str) -> (SourceMap, FileId) {
    let mut sources = SourceMap::new();
    let main = sources.add(display, canonical, text.to_string());
    (sources, main)
}

/// The names of the params a CSL text declares, and whether it has a layout block.
fn outline(text: &str) -> (Vec<String>, bool) {
    let mut probe = SourceMap::new();
    let f = probe.add(String::new(), None, String::new());
    let (ast, _) = cslc::syntax::parse(f, text);
    let params = ast
        .decls
        .iter()
        .filter_map(|d| match &d.kind {
            cslc::syntax::ast::DeclKind::Param { name, .. } => Some(name.name.to_string()),
            _ => None,
        })
        .collect();
    let layout = ast
        .decls
        .iter()
        .any(|d| matches!(d.kind, cslc::syntax::ast::DeclKind::Layout(_)));
    (params, layout)
}

/// A layout file beside `pe` that places it (`@set_tile_code(..., "pe.csl", ...)`).
fn layout_placing(pe: &Path, overlay: &Overlay) -> Option<(PathBuf, String)> {
    let dir = pe.parent()?;
    let quoted = format!("\"{}\"", pe.file_name()?.to_string_lossy());
    let mut candidates: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "csl") && p.as_path() != pe)
        .collect();
    candidates.sort();
    candidates.into_iter().find_map(|p| {
        let canonical = p.canonicalize().unwrap_or_else(|_| p.clone());
        let text = match overlay.get(&canonical) {
            Some(t) => t.clone(),
            None => std::fs::read_to_string(&p).ok()?,
        };
        (text.contains("layout") && text.contains(&quoted) && outline(&text).1)
            .then_some((canonical, text))
    })
}

/// The compiler options of an editor check: the settings' target and those of its params
/// that the file declares, the semantic index on, and no code generation.
fn editor_options(settings: &Settings, declared: &[String], overlay: &Overlay) -> Options {
    Options {
        arch: settings.arch,
        params: settings
            .params
            .iter()
            .filter(|(n, _)| declared.contains(n))
            .cloned()
            .collect(),
        index: true,
        analysis_only: true,
        overlay: overlay.clone(),
        ..Options::default()
    }
}

/// Compiles the layout that places the PE file `pe` (with the index on, checking every
/// function), if the layout runs far enough to analyse `pe`: that file analysed with the
/// params the layout gives it, and its diagnostics.
fn through_layout(pe: &Path, settings: &Settings, overlay: &Overlay) -> Option<Compiled> {
    let (layout, text) = layout_placing(pe, overlay)?;
    let (declared, _) = outline(&text);
    let opts = Options {
        analyse_all: true,
        ..editor_options(settings, &declared, overlay)
    };
    let mut sources = SourceMap::with_overlay(overlay.clone());
    let display = layout
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into());
    let top = sources.add(display, Some(layout), text);
    let comp = cslc::driver::compile_sources(sources, top, &opts);
    let main = comp.sources.find_path(pe)?;
    let index = comp.index?;
    // Nothing recorded for the file: the layout did not get as far as placing it.
    index.entries_in(main).next()?;
    let diags = comp
        .diagnostics
        .into_iter()
        .filter(|d| d.primary.as_ref().is_some_and(|l| l.span.file == main))
        .collect();
    Some((comp.sources, main, diags, Some(index)))
}

fn csl(doc: Document<'_>, settings: &Settings, overlay: &Overlay) -> Compiled {
    // The `params` setting serves every layout file: give each only those it declares.
    let (declared, has_layout) = outline(doc.text);
    if !has_layout
        && let Some(pe) = &doc.canonical
        && let Some(c) = through_layout(pe, settings, overlay)
    {
        return c;
    }
    let opts = Options {
        lone_module: true,
        ..editor_options(settings, &declared, overlay)
    };
    let (sources, main) = doc.sources(overlay);
    let comp = cslc::driver::compile_sources(sources, main, &opts);
    let mut diags = comp.diagnostics;
    // A param of the document that nothing binds: a layout or `--params` would (the
    // `params` setting does for a layout file), so it is information, not an error.
    for d in &mut diags {
        if d.code == codes::UNBOUND_PARAM && d.secondary.iter().any(|l| l.span.file == main) {
            d.severity = Severity::Warning;
            d.notes.push(
                "the editor checks this file without the params a layout or cslc --params would give; set them with the csl-lsp `params` setting".into(),
            );
        }
    }
    let (sources, main) = if comp.sources.is_empty() {
        doc.alone()
    } else {
        (comp.sources, main)
    };
    (sources, main, diags, comp.index)
}

fn tungsten(doc: Document<'_>, settings: &Settings, overlay: &Overlay) -> Compiled {
    use cslc::tungsten::{ClassSpec, SocketBinding, ast::Item, compile_class, parser};
    let (mut sources, main) = doc.sources(overlay);
    let mut spec = ClassSpec::new(settings.arch);
    spec.lib_dirs = settings.lib_dirs.clone();
    // Paint binds sockets to colours; checked alone, each socket (the document's and its
    // imports') gets its own stand-in.
    let (items, _) = parser::parse(main, doc.text);
    let names = crate::tungsten::resolve(doc.text, doc.canonical.as_deref(), &settings.lib_dirs);
    for (n, s) in names.sockets().enumerate() {
        let c = (n % 24) as u8;
        spec.sockets
            .push((s.to_string(), SocketBinding { rx: c, tx: c }));
    }
    let result = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("tungsten".into())
            .stack_size(TUNGSTEN_STACK_BYTES)
            .spawn_scoped(scope, move || {
                let mut diags = Vec::new();
                let _ = compile_class(&mut sources, main, &spec, &mut diags);
                (sources, diags)
            })
            .map(|h| h.join())
    });
    // A file without an entry block is a library that others import, not a program.
    let library = !items.iter().any(|i| matches!(i, Item::Entry(_)));
    match result {
        Ok(Ok((sources, mut diags))) => {
            if library {
                diags.retain(|d| d.code != codes::TUNG_ENTRY);
            }
            (sources, main, diags, None)
        }
        _ => {
            let (sources, main) = doc.alone();
            let d = Diagnostic::global(
                codes::UNSUPPORTED,
                "internal compiler error: the Tungsten front end crashed on this file",
            );
            (sources, main, vec![d], None)
        }
    }
}

fn paint(canonical: Option<PathBuf>, text: &str, settings: &Settings) -> Compiled {
    let opts = cslc::paint::PaintOptions {
        arch: settings.paint_arch,
        lib_dirs: settings.lib_dirs.clone(),
        ..Default::default()
    };
    // The display name's directory is where `code()` and `include` look first.
    let display = canonical
        .as_ref()
        .map_or_else(|| "untitled.paint".to_string(), |p| p.display().to_string());
    let comp = cslc::paint::compile_source(&display, text, &opts);
    match comp.sources.find_display(&display) {
        Some(main) => (comp.sources, main, comp.diagnostics, None),
        None => {
            let (sources, main) = alone(display, canonical, text);
            (sources, main, comp.diagnostics, None)
        }
    }
}
