//! The compiler driver: options, the pipeline from a top-level file to an image, and the
//! compile metadata (`out.json`).

use crate::diag::{Diagnostic, codes};
use crate::sema::index::SemIndex;
use crate::sema::value::Value;
use crate::sema::{Sema, SemaOptions};
use crate::source::{FileId, Overlay, SourceMap};
use csl_arch::Arch;
use csl_arch::image::{FORMAT_VERSION, Image, Meta};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// Compiler options (the `cslc` flags).
#[derive(Clone, Debug)]
pub struct Options {
    /// `--arch`.
    pub arch: Arch,
    /// `--fabric-dims=W,H`.
    pub fabric_dims: (u32, u32),
    /// `--fabric-offsets=X,Y`.
    pub fabric_offsets: (u32, u32),
    /// `--params=NAME:VALUE`, in order.
    pub params: Vec<(String, String)>,
    /// `--colors=NAME:ID`, in order: colour-typed params of the top-level file.
    pub colors: Vec<(String, u32)>,
    /// `--memcpy`.
    pub memcpy: bool,
    /// `--channels`.
    pub channels: u32,
    /// `--width-west-buf`.
    pub width_west_buf: u32,
    /// `--width-east-buf`.
    pub width_east_buf: u32,
    /// Comptime evaluation budget: statements and loop iterations (`--comptime-fuel`).
    pub fuel: u64,
    /// Deepest nesting of expressions and statements analysed (`--max-nesting-depth`);
    /// the analysis thread's stack grows with it.
    pub max_nesting: u32,
    /// Most module instances (`@import_module` calls evaluated, plus the root) one program
    /// class may create (`--max-module-instances`).
    pub max_modules: u32,
    /// Analyse every function and task, reached or not (`--check-all`).
    pub analyse_all: bool,
    /// `--fp16-format`: the type `@fp16()` names (`f16`, `bf16` or `cb16`).
    pub fp16_format: String,
    /// Run the IR optimiser ([`crate::opt`]); `-O0` turns it off.
    pub optimize: bool,
    /// When the top-level file has no `layout` block, analyse it as a PE module on its
    /// own (every function and task, its params unbound) instead of reporting E0401.
    /// For editors, which check whichever file is open.
    pub lone_module: bool,
    /// Record the semantic index ([`crate::sema::index`]) into [`Compilation::index`].
    pub index: bool,
    /// Stop after analysis: no optimisation, code generation or linking, so no image
    /// (and none of their diagnostics). For editors, which only want diagnostics.
    pub analysis_only: bool,
    /// File texts read instead of the disk (an editor's unsaved buffers).
    pub overlay: Overlay,
}

/// Default of [`Options::fuel`] (the `cslc` binary adds [`FUEL_PER_PE`] per PE).
pub const DEFAULT_FUEL: u64 = 10_000_000;
/// Comptime fuel the `cslc` binary adds per PE of the fabric: a layout does a few dozen
/// statements of work per PE, so a whole-wafer layout (737,000 PEs) needs more than a
/// small one, while a runaway loop in a small program is still caught quickly.
pub const FUEL_PER_PE: u64 = 200;
/// Default of [`Options::max_nesting`].
pub const DEFAULT_MAX_NESTING: u32 = 10_000;
/// Default of [`Options::max_modules`].
pub const DEFAULT_MAX_MODULES: u32 = 2_000;

impl Default for Options {
    fn default() -> Self {
        Options {
            arch: Arch::Wse2,
            fabric_dims: (64, 64),
            fabric_offsets: (4, 1),
            params: Vec::new(),
            colors: Vec::new(),
            memcpy: true,
            channels: 1,
            width_west_buf: 0,
            width_east_buf: 0,
            fuel: DEFAULT_FUEL,
            max_nesting: DEFAULT_MAX_NESTING,
            max_modules: DEFAULT_MAX_MODULES,
            analyse_all: false,
            fp16_format: "f16".into(),
            optimize: true,
            lone_module: false,
            index: false,
            analysis_only: false,
            overlay: Overlay::default(),
        }
    }
}

/// A successful compilation's products.
pub struct Output {
    /// The image.
    pub image: Image,
    /// The compile metadata written as `out.json`.
    pub metadata: serde_json::Value,
}

/// Everything a compilation produced.
pub struct Compilation {
    /// Every file read (for rendering diagnostics).
    pub sources: SourceMap,
    /// Errors and warnings.
    pub diagnostics: Vec<Diagnostic>,
    /// The image, if there were no errors.
    pub output: Option<Output>,
    /// Lines printed by `@comptime_print`.
    pub prints: Vec<String>,
    /// The semantic index, if [`Options::index`] asked for it.
    pub index: Option<SemIndex>,
    /// Wall time per phase (layout, classes, link), in order.
    pub phases: Vec<(&'static str, std::time::Duration)>,
}

impl Compilation {
    /// A compilation that stopped before analysis with one diagnostic.
    fn failed(sources: SourceMap, diagnostic: Diagnostic) -> Compilation {
        Compilation {
            sources,
            diagnostics: vec![diagnostic],
            output: None,
            prints: Vec::new(),
            index: None,
            phases: Vec::new(),
        }
    }

    /// Whether any error was reported.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Compiles the program whose top-level (layout) file is `path`.
pub fn compile_file(path: &Path, opts: &Options) -> Compilation {
    let mut sources = SourceMap::with_overlay(opts.overlay.clone());
    let text = match sources.read(path) {
        Ok(t) => t,
        Err(e) => {
            return Compilation::failed(
                sources,
                Diagnostic::global(
                    codes::MODULE_NOT_FOUND,
                    format!("cannot read `{}`: {e}", path.display()),
                ),
            );
        }
    };
    let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let display = path.to_string_lossy().trim_start_matches("./").to_string();
    let top = sources.add(display, Some(canonical), text);
    compile_sources(sources, top, opts)
}

/// Stack size of the thread analysis runs on: deep comptime recursion and nested generic
/// instances need more than a default thread's stack. Deeper nesting limits get more.
fn compile_stack_bytes(opts: &Options) -> usize {
    (64usize << 20).saturating_add((opts.max_nesting as usize).saturating_mul(8 << 10))
}

/// Stack bytes the analysis may use before [`Sema::stack_guard`] stops it with a
/// diagnostic: all but 16 MiB of the thread's stack.
fn stack_budget(opts: &Options) -> usize {
    compile_stack_bytes(opts) - (16 << 20)
}

/// Compiles from an already loaded top-level file, on a thread with a large stack.
pub fn compile_sources(sources: SourceMap, top: FileId, opts: &Options) -> Compilation {
    let result = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("cslc-analysis".into())
            .stack_size(compile_stack_bytes(opts))
            .spawn_scoped(scope, || compile_here(sources, top, opts))
            .map(|h| h.join())
    });
    match result {
        Ok(Ok(c)) => c,
        // The thread could not be created or panicked (a compiler bug): report it as a
        // diagnostic rather than crashing the caller.
        Ok(Err(_)) => Compilation::failed(
            SourceMap::new(),
            Diagnostic::global(
                codes::UNSUPPORTED,
                "internal compiler error: analysis crashed; please report this program",
            ),
        ),
        Err(e) => Compilation::failed(
            SourceMap::new(),
            Diagnostic::global(
                codes::BAD_ARGUMENT,
                format!("cannot start the compiler thread: {e}"),
            ),
        ),
    }
}

/// Compiles on the current thread.
fn compile_here(sources: SourceMap, top: FileId, opts: &Options) -> Compilation {
    let sopts = SemaOptions {
        arch: opts.arch,
        fabric: opts.fabric_dims,
        offsets: opts.fabric_offsets,
        fuel: opts.fuel,
        max_nesting: opts.max_nesting,
        max_modules: opts.max_modules,
        stack_budget: stack_budget(opts),
        memcpy: opts.memcpy,
        analyse_all: opts.analyse_all,
        fp16: opts.fp16_format.clone(),
    };
    let mut sema = Sema::new(sopts, sources);
    if opts.index {
        sema.index = Some(SemIndex::default());
    }
    let output = run(&mut sema, top, opts);
    let has_errors = sema.diags.iter().any(Diagnostic::is_error);
    Compilation {
        sources: std::mem::take(&mut sema.sources),
        diagnostics: std::mem::take(&mut sema.diags),
        output: if has_errors { None } else { output },
        prints: std::mem::take(&mut sema.prints),
        index: sema.index.take(),
        phases: std::mem::take(&mut sema.phases),
    }
}

fn run(sema: &mut Sema, top: FileId, opts: &Options) -> Option<Output> {
    let (fw, fh) = opts.fabric_dims;
    let (ox, oy) = opts.fabric_offsets;
    if fw == 0 || fh == 0 || ox >= fw || oy >= fh {
        sema.report(Diagnostic::global(
            codes::BAD_ARGUMENT,
            format!("fabric offsets ({ox}, {oy}) lie outside a {fw} x {fh} fabric"),
        ));
        return None;
    }
    let ast = sema.ast_of(top);
    if sema.diags.iter().any(Diagnostic::is_error) {
        return None;
    }
    // --params: bind the top-level file's params.
    let mut params = BTreeMap::new();
    let param_names = ast.param_names();
    let declared = |name: &str| param_names.contains(&name);
    for (name, raw) in &opts.params {
        if !declared(name) {
            let help = match crate::suggest::did_you_mean(name, param_names.iter().copied()) {
                Some(best) => format!("did you mean `{best}`? (--params={best}:{raw})"),
                None => format!("declare it with `param {name}: i16;` or remove it from --params"),
            };
            sema.report(
                Diagnostic::global(
                    codes::BAD_ARGUMENT,
                    format!(
                        "--params names `{name}`, but the top-level file declares no such param"
                    ),
                )
                .with_help(help),
            );
            continue;
        }
        params.insert(name.clone(), parse_param(raw, &sema.types));
    }
    // --colors: the same, for params of type `color`, given by colour number.
    for (name, id) in &opts.colors {
        if !declared(name) {
            sema.report(
                Diagnostic::global(
                    codes::BAD_ARGUMENT,
                    format!(
                        "--colors names `{name}`, but the top-level file declares no such param"
                    ),
                )
                .with_help(format!(
                    "declare it with `param {name}: color;` or remove it from --colors"
                )),
            );
            continue;
        }
        if *id >= u32::from(csl_arch::fabric::NUM_COLORS) {
            sema.report(Diagnostic::global(
                codes::BAD_ARGUMENT,
                format!(
                    "--colors gives `{name}` color {id}, but routable colors are 0 to {}",
                    csl_arch::fabric::NUM_COLORS - 1
                ),
            ));
            continue;
        }
        params.insert(name.clone(), Value::Color(*id as u8));
    }
    if opts.lone_module && !has_layout(&ast) {
        analyse_lone_module(sema, top);
        return None;
    }
    let mut clock = std::time::Instant::now();
    let mut lap = |sema: &mut Sema, phase: &'static str| {
        let now = std::time::Instant::now();
        sema.phases.push((phase, now - clock));
        clock = now;
    };
    let top_mod = sema.instantiate(top, params, String::new(), None);
    sema.cli_params = Some((top_mod, opts.params.iter().cloned().collect()));
    let plan = sema.run_layout(top_mod)?;
    if !plan.tiles.codes.iter().any(|t| t.file == top) {
        sema.run_layout_file_comptime(top_mod);
    }
    let (w, h, _) = plan.rect?;
    sema.rect = Some((w, h));
    sema.export_names = plan.exports.iter().map(|(e, _)| e.clone()).collect();

    // One program class per distinct (file, params), numbered in row-major order of
    // the first PE that runs it.
    let mut class_of_code = vec![u32::MAX; plan.tiles.codes.len()];
    let mut class_src: Vec<&crate::sema::layout::TileCode> = Vec::new();
    let mut placement = Vec::with_capacity((w * h) as usize);
    for y in 0..h {
        for x in 0..w {
            let (code, _) = plan.tiles.get(x, y, w)?;
            let class = &mut class_of_code[code as usize];
            if *class == u32::MAX {
                *class = class_src.len() as u32;
                class_src.push(&plan.tiles.codes[code as usize]);
            }
            placement.push(*class);
        }
    }
    lap(sema, "layout");
    let mut classes = Vec::new();
    for tile in &class_src {
        let Some(prog) = sema.compile_class(tile.file, &tile.params) else {
            continue;
        };
        if sema.diags.iter().any(Diagnostic::is_error) {
            return None;
        }
        classes.push(crate::link::ClassProgram {
            name: class_name(sema, tile.file, &tile.params),
            program: prog,
        });
    }
    lap(sema, "program classes");
    if opts.analysis_only {
        return None;
    }
    let meta = Meta {
        format_version: FORMAT_VERSION,
        arch: opts.arch,
        fabric_width: fw,
        fabric_height: fh,
        offset_x: ox,
        offset_y: oy,
        width: w,
        height: h,
        memcpy: opts.memcpy,
        channels: opts.channels,
        params: opts.params.iter().cloned().collect(),
    };
    let fabric = crate::link::FabricPlan {
        meta,
        placement,
        routes: plan.routes,
        route_spans: plan.route_spans.into_iter().map(Some).collect(),
        exports: plan.exports.iter().map(|(e, _)| e.clone()).collect(),
        classes,
        optimize: opts.optimize,
        host_streams: sema.host_streams,
    };
    let image = match crate::link::link(fabric, &sema.sources, &mut sema.diags) {
        Ok(image) => image,
        Err(d) => {
            sema.report(*d);
            return None;
        }
    };
    lap(sema, "link and route checks");
    let metadata = metadata_json(&image, &opts.colors);
    Some(Output { image, metadata })
}

/// Whether a file declares a `layout` block.
fn has_layout(ast: &crate::syntax::ast::Ast) -> bool {
    ast.decls
        .iter()
        .any(|d| matches!(d.kind, crate::syntax::ast::DeclKind::Layout(_)))
}

/// [`Options::lone_module`]: analyses a file without a layout as the root of a program
/// class with no params bound, checking every function and task. Uses of its own params
/// without defaults are not reported (a layout would bind them); nothing is linked.
fn analyse_lone_module(sema: &mut Sema, top: FileId) {
    sema.opts.analyse_all = true;
    sema.lone_module = true;
    let before = sema.diags.len();
    let _ = sema.compile_class(top, &[]);
    let mut i = 0;
    sema.diags.retain(|d| {
        i += 1;
        i <= before
            || d.code != codes::UNBOUND_PARAM
            || !d.secondary.iter().any(|l| l.span.file == top)
    });
}

fn class_name(sema: &Sema, file: FileId, params: &[(crate::symbol::Symbol, Value)]) -> String {
    let shown: Vec<String> = params
        .iter()
        .filter(|(_, v)| !matches!(v, Value::Struct(_)))
        .map(|(n, v)| format!("{n}={}", v.describe(&sema.types)))
        .collect();
    let f = &sema.sources.get(file).display;
    if shown.is_empty() {
        f.clone()
    } else {
        format!("{f} {{{}}}", shown.join(", "))
    }
}

/// Interprets a `--params` value: an integer (decimal, `0x`, `0b`, negative), a float,
/// `true`/`false`, or else a string.
fn parse_param(raw: &str, types: &crate::sema::types::TypeStore) -> Value {
    let t = raw.trim();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, t),
    };
    let int = if let Some(h) = digits.strip_prefix("0x") {
        i128::from_str_radix(h, 16).ok()
    } else if let Some(b) = digits.strip_prefix("0b") {
        i128::from_str_radix(b, 2).ok()
    } else {
        digits.parse::<i128>().ok()
    };
    if let Some(i) = int {
        return Value::Int(if neg { -i } else { i }, types.common.comptime_int);
    }
    if let Ok(f) = t.parse::<f64>() {
        return Value::Float(f, types.common.comptime_float);
    }
    match t {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        _ => Value::Str(std::rc::Rc::from(t)),
    }
}

/// The compile metadata in the shape host scripts read: `params` and `colors` (the
/// `--params` and `--colors` bindings, values as strings) and the RPC symbol table.
pub fn metadata_json(image: &Image, colors: &[(String, u32)]) -> serde_json::Value {
    let m = &image.meta;
    let metadata = Metadata {
        arch: m.arch.name(),
        channels: m.channels,
        colors: colors
            .iter()
            .map(|(k, v)| (k.clone(), v.to_string()))
            .collect(),
        fabric: Extent {
            height: m.fabric_height,
            width: m.fabric_width,
        },
        memcpy: m.memcpy,
        offsets: Offsets {
            x: m.offset_x,
            y: m.offset_y,
        },
        params: m.params.clone(),
        program_classes: image.classes.len(),
        rectangle: Extent {
            height: m.height,
            width: m.width,
        },
        rpc_symbols: image
            .exports
            .iter()
            .enumerate()
            .map(|(id, e)| match &e.kind {
                csl_arch::image::ExportKind::Tensor { elem, mutable } => RpcSymbol::Var {
                    id,
                    immutable: !mutable,
                    name: e.name.clone(),
                    ty: format!("[*]{}", elem.name()),
                },
                csl_arch::image::ExportKind::Func { params } => RpcSymbol::Func {
                    id,
                    inputs: params.iter().map(|p| p.name()).collect(),
                    name: e.name.clone(),
                },
            })
            .collect(),
    };
    // Plain data: serialising it cannot fail.
    serde_json::to_value(metadata).unwrap_or_default()
}

/// `out.json` (keys in alphabetical order, as `serde_json::Value` writes them).
#[derive(Serialize)]
struct Metadata {
    arch: &'static str,
    channels: u32,
    /// Colour params of the top-level file: name to id (a string).
    colors: BTreeMap<String, String>,
    fabric: Extent,
    memcpy: bool,
    offsets: Offsets,
    /// Top-level params: name to value (as given).
    params: BTreeMap<String, String>,
    program_classes: usize,
    rectangle: Extent,
    rpc_symbols: Vec<RpcSymbol>,
}

/// A width and height in PEs.
#[derive(Serialize)]
struct Extent {
    height: u32,
    width: u32,
}

/// A position on the fabric.
#[derive(Serialize)]
struct Offsets {
    x: u32,
    y: u32,
}

/// An exported symbol the host can reach (`kind` is `Var` or `Func`).
#[derive(Serialize)]
#[serde(tag = "kind")]
enum RpcSymbol {
    Var {
        id: usize,
        immutable: bool,
        name: String,
        #[serde(rename = "type")]
        ty: String,
    },
    Func {
        id: usize,
        inputs: Vec<&'static str>,
        name: String,
    },
}
