//! Semantic analysis: name resolution, type checking and comptime evaluation, fused into
//! one walk over the AST in the style of Zig's `Sema`.
//!
//! * Comptime code (layout blocks, top-level `comptime` blocks, constant initialisers,
//!   functions called at comptime) is **executed** by the interpreter in [`stmt`] and
//!   [`eval`].
//! * Runtime code (function and task bodies) is **lowered** to IR ([`crate::ir`]) by the
//!   same expression walker: sub-expressions whose operands are all comptime-known fold to
//!   constants, the rest emit instructions into the current [`lower::FnBuilder`].
//! * Analysis is lazy: a declaration is analysed only when something reachable uses it, and
//!   an `if` with a comptime-known condition analyses only the taken branch.
//!
//! Entry points: [`Sema::run_layout`] evaluates the top-level file's layout block into a
//! [`layout::LayoutPlan`]; [`Sema::compile_class`] compiles one (file, params) pair into an
//! [`ir::Program`](crate::ir::Program).

pub mod builtins;
pub mod call;
pub mod control;
pub mod dsd;
pub mod eval;
pub mod fabric;
pub mod index;
pub mod lang_builtins;
pub mod layout;
pub mod lower;
pub mod module;
pub mod stmt;
pub mod structs;
pub mod task_builtins;
pub mod tensor;
pub mod types;
pub mod value;

use crate::diag::{Diagnostic, codes};
use crate::ir::Program;
use crate::source::{FileId, SourceMap, Span};
use crate::symbol::{Symbol, SymbolMap};
use crate::syntax::ast::{Ast, DeclKind};
use cranelift_entity::PrimaryMap;
use csl_arch::Arch;
use module::{ConstState, DeclRef, ModId, ModInst};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use types::{TypeId, TypeStore};
use value::Value;

/// Marker: a diagnostic has been recorded; unwind to the nearest recovery point.
#[derive(Debug, Clone, Copy)]
pub struct Reported;

/// Result type of analysis functions.
pub type R<T> = Result<T, Reported>;

/// Where code is being evaluated, for builtin legality.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ctx {
    /// The top-level file's `layout` block (and comptime functions it calls).
    Layout,
    /// A top-level `comptime` block of a PE program (and functions it calls).
    TopComptime,
    /// Other comptime evaluation (constant initialisers, `comptime` expressions).
    Comptime,
    /// Runtime code.
    Runtime,
}

/// Settings that analysis depends on.
#[derive(Clone, Debug)]
pub struct SemaOptions {
    /// Target.
    pub arch: Arch,
    /// Fabric size.
    pub fabric: (u32, u32),
    /// Rectangle offset.
    pub offsets: (u32, u32),
    /// Comptime evaluation budget (statements and loop iterations; `--comptime-fuel`).
    pub fuel: u64,
    /// Deepest nesting of expressions and statements in one body (`--max-nesting-depth`).
    pub max_nesting: u32,
    /// Most module instances (`--max-module-instances`).
    pub max_modules: u32,
    /// Stack bytes nested analysis may use before it stops with a diagnostic (see
    /// [`Sema::stack_guard`]); the driver derives it from the analysis thread's stack.
    pub stack_budget: usize,
    /// Whether the memcpy infrastructure (and its reserved resources) is present.
    pub memcpy: bool,
    /// Analyse every non-generic function and task of every module, not only those a
    /// program reaches (`cslc --check-all`; used to check libraries).
    pub analyse_all: bool,
    /// The runtime 16-bit float type `@fp16()` names: `f16`, `bf16` or `cb16`.
    pub fp16: String,
}

/// The analysis state shared by the layout and every program class.
pub struct Sema {
    /// Options.
    pub opts: SemaOptions,
    /// Every file read.
    pub sources: SourceMap,
    /// Parsed files.
    asts: HashMap<FileId, Rc<Ast>>,
    /// Files already resolved, by (importing file, name as written): a layout names the
    /// same file once per tile, and resolving it touches the file system.
    /// (Keyed by importing file, then name, so that a lookup allocates nothing.)
    resolved: HashMap<FileId, HashMap<String, FileId>>,
    /// Files whose declarations were checked for duplicates.
    checked_files: HashSet<FileId>,
    /// Interned types.
    pub types: TypeStore,
    /// Module instances.
    pub mods: PrimaryMap<ModId, ModInst>,
    /// Diagnostics so far.
    pub diags: Vec<Diagnostic>,
    /// Remaining comptime fuel.
    fuel: u64,
    fuel_reported: bool,
    /// The program class being compiled (None while evaluating the layout).
    pub prog: Option<Program>,
    /// The layout plan (only while evaluating the layout).
    pub layout: Option<layout::LayoutPlan>,
    /// Task ids bound in the current program: id -> where.
    pub bound_ids: HashMap<u8, Span>,
    /// Signatures of lowered functions (parameter types, return type).
    pub sigs: HashMap<crate::ir::FuncId, (Vec<TypeId>, TypeId)>,
    /// Types of the current program's globals.
    pub global_types: HashMap<crate::ir::GlobalId, TypeId>,
    /// Comptime call depth.
    pub depth: u32,
    /// Host-visible names declared by the layout (checked by `@export_symbol`).
    pub export_names: Vec<csl_arch::image::ExportName>,
    /// Output of `@comptime_print`.
    pub prints: Vec<String>,
    /// Wall time of each compilation phase so far (`cslc --verbose` prints them).
    pub phases: Vec<(&'static str, std::time::Duration)>,
    /// The rectangle (once the layout has run).
    pub rect: Option<(u32, u32)>,
    /// Constant descriptor, DSR and value globals of the current program, by content.
    pub dsd_consts: HashMap<ConstKey, crate::ir::GlobalId>,
    /// Call-site copies of constant descriptors made so far (for naming them).
    pub dsd_site_copies: usize,
    /// Configuration given to `@load_to_dsr` per DSR slot: cfg bits, task id, task,
    /// microthread.
    pub dsr_cfgs: HashMap<String, (u8, u8, Option<crate::ir::FuncId>, Option<u8>)>,
    /// The queue of the fabric DSD last loaded into each DSR by `@load_to_dsr` (program
    /// order), where known at compile time: on WSE-2 it implies the microthread of an
    /// operation on that DSR.
    pub dsr_queues: HashMap<String, Option<u8>>,
    /// `@set_teardown_handler` registrations of the current program: function, colour,
    /// where.
    pub teardown_handlers: Vec<(crate::ir::FuncId, u8, Span)>,
    /// `var` declarations whose global is being created (cycle detection).
    pub globals_in_progress: HashSet<DeclRef>,
    /// The first module instance of the program class being compiled (instances are
    /// counted per class against `--max-module-instances`).
    pub class_first_mod: usize,
    /// Bit `c` set: colour `c` is a host stream colour given to the memcpy library
    /// (`MEMCPYH2D_n` / `MEMCPYD2H_n`); the host reaches the CEs on it without routes.
    pub host_streams: u32,
    /// Approximate stack address of the outermost nested analysis (see
    /// [`Sema::stack_guard`]).
    stack_base: Option<usize>,
    /// The top-level module and the `--params` text of each param bound on the command
    /// line, so that a value of the wrong type names the flag it came from.
    pub cli_params: Option<(ModId, HashMap<String, String>)>,
    /// The semantic index for editors, when asked for ([`index`]).
    pub index: Option<index::SemIndex>,
    /// A module analysed without a layout (`Options::lone_module`): no layout declared
    /// the host-visible names, so `@export_symbol` does not check them.
    pub lone_module: bool,
}

impl Sema {
    /// A fresh analysis over `sources` (which holds at least the top-level file).
    pub fn new(opts: SemaOptions, sources: SourceMap) -> Sema {
        let fuel = opts.fuel;
        let marker = 0u8;
        let stack_base = Some(std::ptr::addr_of!(marker) as usize);
        Sema {
            opts,
            sources,
            asts: HashMap::new(),
            resolved: HashMap::new(),
            checked_files: HashSet::new(),
            types: TypeStore::new(),
            mods: PrimaryMap::new(),
            diags: Vec::new(),
            fuel,
            fuel_reported: false,
            prog: None,
            layout: None,
            bound_ids: HashMap::new(),
            sigs: HashMap::new(),
            global_types: HashMap::new(),
            depth: 0,
            export_names: Vec::new(),
            prints: Vec::new(),
            phases: Vec::new(),
            rect: None,
            dsd_consts: HashMap::new(),
            dsd_site_copies: 0,
            globals_in_progress: HashSet::new(),
            dsr_cfgs: HashMap::new(),
            dsr_queues: HashMap::new(),
            teardown_handlers: Vec::new(),
            stack_base,
            class_first_mod: 0,
            cli_params: None,
            index: None,
            lone_module: false,
            host_streams: 0,
        }
    }

    /// Records a diagnostic and returns the unwinding marker.
    pub fn report(&mut self, d: Diagnostic) -> Reported {
        self.diags.push(d);
        Reported
    }

    /// Shorthand for an error with one label.
    pub fn err(
        &mut self,
        code: &'static str,
        msg: impl Into<String>,
        span: Span,
        label: impl Into<String>,
    ) -> Reported {
        self.report(Diagnostic::error(code, msg, span, label))
    }

    /// Error `code` at `span` labelled `label`, whose message `msg` builds from the
    /// displayed type `ty` (the "cannot X a value of type T" family).
    pub fn err_ty(
        &mut self,
        code: &'static str,
        ty: TypeId,
        span: Span,
        label: impl Into<String>,
        msg: impl FnOnce(&str) -> String,
    ) -> Reported {
        let d = self.types.display(ty);
        self.err(code, msg(&d), span, label)
    }

    /// Reports error `code` at `span`, labelled with the type `ty` of what is there.
    pub fn err_with_type(
        &mut self,
        code: &'static str,
        msg: impl Into<String>,
        span: Span,
        ty: TypeId,
    ) -> Reported {
        let d = self.diag_with_type(code, msg, span, ty);
        self.report(d)
    }

    /// Error `code` at `span`, labelled with the type `ty` of what is there.
    pub fn diag_with_type(
        &self,
        code: &'static str,
        msg: impl Into<String>,
        span: Span,
        ty: TypeId,
    ) -> Diagnostic {
        let d = self.types.display(ty);
        Diagnostic::error(code, msg, span, format!("this has type {d}"))
    }

    /// NOT_COMPTIME: a value of type `ty` exists only at comptime, at `span` labelled `label`.
    pub fn comptime_only(&mut self, ty: TypeId, span: Span, label: &str) -> Reported {
        let d = self.types.display(ty);
        let msg = format!("a value of type {d} exists only at comptime");
        self.err(codes::NOT_COMPTIME, msg, span, label)
    }

    /// ARCH_FEATURE: `what` needs architecture `arch`, not the one being compiled for.
    pub fn needs_arch(
        &self,
        what: &str,
        arch: csl_arch::Arch,
        span: Span,
        label: &str,
    ) -> Diagnostic {
        let msg = format!("{what} needs {arch}, not {}", self.opts.arch);
        Diagnostic::error(codes::ARCH_FEATURE, msg, span, label)
    }

    /// The PE program being built; outside one (in a layout file) a BUILTIN_CONTEXT error
    /// `msg` at `span`, labelled `label`.
    pub fn pe_prog(&mut self, msg: &str, span: Span, label: &str) -> R<&mut Program> {
        if self.prog.is_none() {
            return Err(self.err(codes::BUILTIN_CONTEXT, msg, span, label));
        }
        self.prog.as_mut().ok_or(Reported)
    }

    /// Stops runaway nesting (recursive comptime calls, generic instances that make new
    /// instances, recursive inline functions, deeply nested expressions) before the
    /// compiler's own stack runs out.
    #[inline]
    pub fn stack_guard(&mut self, span: Span, what: &str) -> R<()> {
        let marker = 0u8;
        let here = std::ptr::addr_of!(marker) as usize;
        let base = *self.stack_base.get_or_insert(here);
        if base.abs_diff(here) > self.opts.stack_budget {
            return Err(self.stack_exhausted(span, what));
        }
        Ok(())
    }

    /// The diagnostic of [`Sema::stack_guard`] (out of line: it runs once per compile).
    #[cold]
    #[inline(never)]
    fn stack_exhausted(&mut self, span: Span, what: &str) -> Reported {
        let mib = self.opts.stack_budget >> 20;
        self.report(
            Diagnostic::error(codes::TOO_DEEP, format!("{what} nest too deeply"), span, "while analysing this")
                .with_note(format!("each nested call or expression is analysed inside the previous one, and analysis used its whole stack ({mib} MiB); this looks like unbounded recursion"))
                .with_help("make sure the recursion stops for the arguments given; `cslc --max-nesting-depth N` with a larger N also gives analysis a larger stack"),
        )
    }

    /// Reports a `comptime_int` result larger than the `limit` bits the compiler computes.
    pub fn ct_int_range(&mut self, span: Span, limit: u64) -> Reported {
        self.report(
            Diagnostic::error(
                codes::COMPTIME_INT_RANGE,
                format!("this comptime_int would need more than {limit} bits"),
                span,
                "too large to compute",
            )
            .with_note(format!("comptime_int arithmetic is exact up to {limit} bits, far beyond any value a program can store; this limit bounds the compiler's memory and time"))
            .with_help("shift or divide earlier, or compute in a sized type"),
        )
    }

    /// Reports an expression or statement nested deeper than `--max-nesting-depth`.
    pub fn too_deep(&mut self, span: Span) -> Reported {
        let limit = self.opts.max_nesting;
        self.report(
            Diagnostic::error(
                codes::TOO_DEEP,
                "expressions nest too deeply",
                span,
                format!("this is nested more than {limit} levels deep"),
            )
            .with_note(format!(
                "the nesting depth limit is {limit} (operands of operators, arguments, blocks and statements each add a level)"
            ))
            .with_help("split the expression with intermediate constants, or raise the limit with `cslc --max-nesting-depth N`"),
        )
    }

    /// Consumes one unit of comptime fuel.
    #[inline]
    pub fn burn(&mut self, span: Span) -> R<()> {
        if self.fuel == 0 {
            return Err(self.out_of_fuel(span));
        }
        self.fuel -= 1;
        Ok(())
    }

    /// The end of [`Sema::burn`]'s fuel: reported once (out of line, as it is rare).
    #[cold]
    #[inline(never)]
    fn out_of_fuel(&mut self, span: Span) -> Reported {
        if !self.fuel_reported {
            self.fuel_reported = true;
            let budget = self.opts.fuel;
            return self.report(
                    Diagnostic::error(
                        codes::COMPTIME_FUEL,
                        "comptime evaluation did not finish",
                        span,
                        "still running here",
                    )
                    .with_note(format!(
                        "the comptime fuel limit is {budget} steps (statements and loop iterations), and this program used them all"
                    ))
                    .with_help("check the loop condition; if the loop does terminate, raise the limit with `cslc --comptime-fuel N`"),
                );
        }
        Reported
    }

    /// Parses a file (once) and returns its AST.
    pub fn ast_of(&mut self, file: FileId) -> Rc<Ast> {
        if let Some(a) = self.asts.get(&file) {
            return a.clone();
        }
        let (ast, diags) = crate::syntax::parse(file, &self.sources.get(file).text);
        self.diags.extend(diags);
        self.check_builtin_arities(&ast);
        let ast = Rc::new(ast);
        self.asts.insert(file, ast.clone());
        ast
    }

    /// Resolves an import path written in `from` (a `<lib>` name or a path relative to the
    /// importing file) and loads the file.
    pub fn load_module_file(&mut self, spec: &str, from: FileId, span: Span) -> R<FileId> {
        self.load_file(spec, from, span, "module file")
    }

    /// Loads a file named relative to the file `from` (see [`Sema::load_module_file`]);
    /// `what` names it in the error message.
    pub fn load_file(&mut self, spec: &str, from: FileId, span: Span, what: &str) -> R<FileId> {
        if let Some(&id) = self.resolved.get(&from).and_then(|m| m.get(spec)) {
            self.index_file(span, id);
            return Ok(id);
        }
        let id = self.resolve_file(spec, from, span, what);
        if let Ok(id) = id {
            self.index_file(span, id);
            self.resolved
                .entry(from)
                .or_default()
                .insert(spec.to_string(), id);
        }
        id
    }

    fn resolve_file(&mut self, spec: &str, from: FileId, span: Span, what: &str) -> R<FileId> {
        if let Some(lib) = spec.strip_prefix('<').and_then(|s| s.strip_suffix('>')) {
            let display = format!("<{lib}>");
            if let Some(arch) = crate::stdlib::required_arch(lib)
                && arch != self.opts.arch
            {
                let dg = self.needs_arch(&display, arch, span, "imported here");
                return Err(self.report(dg.with_help(format!("compile with --arch={arch}"))));
            }
            if let Some(id) = self.sources.find_display(&display) {
                return Ok(id);
            }
            let Some(text) = crate::stdlib::lookup(lib) else {
                let known = crate::stdlib::names().join(", ");
                return Err(self.report(
                    Diagnostic::error(
                        codes::MODULE_NOT_FOUND,
                        format!("no library named <{lib}>"),
                        span,
                        "imported here",
                    )
                    .with_note(format!("available libraries: {known}")),
                ));
            };
            return Ok(self.sources.add(display, None, text.to_string()));
        }
        let base: PathBuf = self
            .sources
            .get(from)
            .path
            .as_deref()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let path = if Path::new(spec).is_absolute() {
            PathBuf::from(spec)
        } else {
            base.join(spec)
        };
        let canonical = path.canonicalize().unwrap_or_else(|_| path.clone());
        if let Some(id) = self.sources.find_path(&canonical) {
            return Ok(id);
        }
        // Show the path relative to how the importing file was named (never an absolute
        // path the user did not write, so messages are the same on every machine).
        let from_display = self.sources.get(from).display.clone();
        let shown = match Path::new(&from_display).parent() {
            Some(p) if !Path::new(spec).is_absolute() && !from_display.starts_with('<') => {
                p.join(spec)
            }
            _ => PathBuf::from(spec),
        };
        let display = shown.to_string_lossy().trim_start_matches("./").to_string();
        match self.sources.read(&path) {
            Ok(text) => Ok(self.sources.add(display, Some(canonical), text)),
            Err(e) => Err(self.report(
                Diagnostic::error(
                    codes::MODULE_NOT_FOUND,
                    format!("cannot read {what} `{display}`"),
                    span,
                    "imported here",
                )
                .with_note(e.to_string())
                .with_help("paths are relative to the file that contains the import"),
            )),
        }
    }

    /// Creates a module instance of `file` with bound params.
    pub fn instantiate(
        &mut self,
        file: FileId,
        params: BTreeMap<String, Value>,
        prefix: String,
        importer: Option<(ModId, Span)>,
    ) -> ModId {
        let param_key = self.param_key(&params);
        let ast = self.ast_of(file);
        let mut names = SymbolMap::default();
        let check = self.checked_files.insert(file);
        for (i, d) in ast.decls.iter().enumerate() {
            let name = match &d.kind {
                DeclKind::Param { name, .. } => name,
                DeclKind::Var(v) => &v.name,
                DeclKind::Fn(f) => &f.name,
                DeclKind::Task(t) => &t.name,
                _ => continue,
            };
            if let Some(&prev) = names.get(&name.name) {
                if check {
                    let prev_span = decl_name_span(&ast, prev).unwrap_or(name.span);
                    self.report(Diagnostic::twice(
                        codes::DUPLICATE_DECL,
                        format!("`{}`", name.name),
                        "declared",
                        name.span,
                        prev_span,
                    ));
                }
                continue;
            }
            names.insert(name.name, i as u32);
        }
        self.mods.push(ModInst {
            file,
            ast,
            params,
            names,
            consts: HashMap::default(),
            globals: HashMap::new(),
            funcs: HashMap::new(),
            mono: HashMap::new(),
            prefix,
            comptime_ran: false,
            importer,
            param_key,
        })
    }

    /// The canonical form of bound params (names and values).
    fn param_key(&self, params: &BTreeMap<String, Value>) -> String {
        let parts: Vec<String> = params
            .iter()
            .map(|(k, v)| format!("{k}={}", v.canonical(&self.types)))
            .collect();
        parts.join(";")
    }

    /// Checks that importing `file` with `params` from module `from` (at `span`) neither
    /// closes an import cycle (an instance of the same file with the same params among
    /// `from`'s importers, which would instantiate without end) nor exceeds
    /// `--max-module-instances`.
    pub fn check_import(
        &mut self,
        file: FileId,
        params: &BTreeMap<String, Value>,
        from: ModId,
        span: Span,
    ) -> R<()> {
        let wanted = self.param_key(params);
        // The chain of importers, innermost first: (instance, the span importing it).
        let mut chain: Vec<(ModId, Option<Span>)> = Vec::new();
        let mut at = Some(from);
        while let Some(m) = at {
            let importer = self.mods[m].importer;
            chain.push((m, importer.map(|(_, s)| s)));
            if self.mods[m].file == file && self.mods[m].param_key == wanted {
                let name =
                    |sema: &Sema, m: ModId| sema.sources.get(sema.mods[m].file).display.clone();
                // The files of the cycle, from the repeated one back to it.
                let mut files: Vec<String> = chain
                    .iter()
                    .rev()
                    .map(|(m, _)| format!("`{}`", name(self, *m)))
                    .collect();
                files.push(format!("`{}`", name(self, m)));
                let mut d = Diagnostic::error(
                    codes::IMPORT_CYCLE,
                    format!("import cycle: {}", files.join(" imports ")),
                    span,
                    "this import closes the cycle",
                )
                .with_note("each @import_module call makes a new instance of the file, so a file that imports itself with the same params would be instantiated without end")
                .with_help("move what the files share into a third module that neither imports, or stop the recursion with a param");
                for (_, s) in chain.iter().take(chain.len() - 1) {
                    if let Some(s) = s {
                        d = d.with_label(*s, "imported here");
                    }
                }
                return Err(self.report(d));
            }
            at = importer.map(|(i, _)| i);
        }
        let limit = self.opts.max_modules as usize;
        let count = self.mods.len().saturating_sub(self.class_first_mod);
        if count >= limit {
            return Err(self.report(
                Diagnostic::error(
                    codes::TOO_MANY_MODULES,
                    "too many module instances",
                    span,
                    format!("this would be instance number {}", count + 1),
                )
                .with_note(format!("the module instance limit is {limit} per program class; each evaluated @import_module call makes one, and this looks like imports that recurse without end"))
                .with_help("make sure recursive imports stop, or raise the limit with `cslc --max-module-instances N`"),
            ));
        }
        Ok(())
    }

    /// Looks up a top-level name of a module.
    pub fn lookup_decl(&self, module: ModId, name: Symbol) -> Option<DeclRef> {
        self.mods[module]
            .names
            .get(&name)
            .map(|&index| DeclRef { module, index })
    }

    /// All top-level names of a module (for "did you mean").
    pub fn decl_names(&self, module: ModId) -> Vec<String> {
        self.mods[module]
            .names
            .keys()
            .map(|n| n.to_string())
            .collect()
    }

    /// The value of a `const` or `param` declaration, evaluated once.
    pub fn const_value(&mut self, d: DeclRef, use_span: Span) -> R<Value> {
        match self.mods[d.module].consts.get(&d.index) {
            Some(ConstState::Done(v)) => return Ok(v.clone()),
            Some(ConstState::Failed) => return Err(Reported),
            Some(ConstState::InProgress) => {
                let ast = self.mods[d.module].ast.clone();
                let decl_span = decl_name_span(&ast, d.index).unwrap_or(use_span);
                return Err(self.report(
                    Diagnostic::error(
                        codes::CYCLIC_DECL,
                        "this declaration depends on itself",
                        decl_span,
                        "declared here",
                    )
                    .with_label(use_span, "used here while it is being evaluated"),
                ));
            }
            None => {}
        }
        self.mods[d.module]
            .consts
            .insert(d.index, ConstState::InProgress);
        let result = self.eval_const_decl(d, use_span);
        // A struct or enum type is named after the first constant it is bound to.
        if let Ok(Value::Type(t)) = &result
            && let Some(name) = self.mods[d.module]
                .ast
                .decls
                .get(d.index as usize)
                .and_then(|x| match &x.kind {
                    DeclKind::Var(v) => Some(v.name.name),
                    _ => None,
                })
        {
            self.types.name_type(*t, &name);
        }
        if self.index.is_some()
            && let Ok(v) = &result
            && let Some(name) = decl_name_span(&self.mods[d.module].ast, d.index)
        {
            self.index_decl(name, d, &eval::Val::Ct(v.clone()));
        }
        let state = match &result {
            Ok(v) => ConstState::Done(v.clone()),
            Err(_) => ConstState::Failed,
        };
        self.mods[d.module].consts.insert(d.index, state);
        result
    }

    fn eval_const_decl(&mut self, d: DeclRef, use_span: Span) -> R<Value> {
        let ast = self.mods[d.module].ast.clone();
        let Some(decl) = ast.decls.get(d.index as usize) else {
            return Err(Reported);
        };
        let mut env = eval::Env::comptime(d.module, ast.clone(), Ctx::Comptime);
        match &decl.kind {
            DeclKind::Param { name, ty, default } => {
                let ty = match ty {
                    Some(t) => Some(self.eval_type(&mut env, *t)?),
                    None => None,
                };
                let bound = self.mods[d.module].params.get(name.name.as_str()).cloned();
                let v = match (bound, default) {
                    (Some(v), _) => v,
                    (None, Some(e)) => self.eval_comptime(&mut env, *e)?,
                    (None, None) => {
                        return Err(self.report(
                            Diagnostic::error(
                                codes::UNBOUND_PARAM,
                                format!("param `{}` has no value", name.name),
                                use_span,
                                "used here",
                            )
                            .with_label(name.span, "declared here without a default")
                            .with_help("pass it in the struct given to @set_tile_code / @import_module, or with cslc --params"),
                        ));
                    }
                };
                let Some(t) = ty else { return Ok(v) };
                let before = self.diags.len();
                let result = self.coerce_value(v, t, name.span);
                if result.is_err()
                    && let Some(raw) = self.cli_param_text(d.module, &name.name)
                    && let Some(diag) = self.diags.get_mut(before)
                {
                    let note = format!("the value comes from `--params={}:{raw}`", name.name);
                    diag.notes.push(note);
                }
                result
            }
            DeclKind::Var(v) => {
                let Some(init) = v.init else {
                    return Err(self.err(
                        codes::UNSUPPORTED,
                        "constant without a value",
                        v.name.span,
                        "needs `= value`",
                    ));
                };
                let val = self.eval_comptime(&mut env, init)?;
                match v.ty {
                    Some(t) => {
                        let t = self.eval_type(&mut env, t)?;
                        let span = ast.exprs[init].span;
                        self.coerce_value(val, t, span)
                    }
                    None => Ok(val),
                }
            }
            _ => Err(Reported),
        }
    }

    /// The `--params` text that bound param `name` of module `m`, if the command line did.
    fn cli_param_text(&self, m: ModId, name: &str) -> Option<String> {
        let (top, given) = self.cli_params.as_ref()?;
        (*top == m).then(|| given.get(name).cloned()).flatten()
    }

    /// Runs the top-level comptime blocks of a module instance (once).
    pub fn run_top_comptime(&mut self, m: ModId) {
        if self.mods[m].comptime_ran {
            return;
        }
        self.mods[m].comptime_ran = true;
        let ast = self.mods[m].ast.clone();
        for decl in &ast.decls {
            if let DeclKind::Comptime(block) = &decl.kind {
                let mut env = eval::Env::comptime(m, ast.clone(), Ctx::TopComptime);
                let _ = self.exec_block(&mut env, block);
            }
        }
    }

    /// The qualified name of a declaration in a module (for the image's symbol tables).
    pub fn qualified(&self, m: ModId, name: &str) -> String {
        let p = &self.mods[m].prefix;
        if p.is_empty() {
            name.to_string()
        } else {
            format!("{p}.{name}")
        }
    }

    /// The type `type` as an id (convenience).
    pub fn ty_type(&self) -> TypeId {
        self.types.common.type_
    }
}

/// The span of the name of declaration `index`.
pub fn decl_name_span(ast: &Ast, index: u32) -> Option<Span> {
    let d = ast.decls.get(index as usize)?;
    Some(match &d.kind {
        DeclKind::Param { name, .. } => name.span,
        DeclKind::Var(v) => v.name.span,
        DeclKind::Fn(f) => f.name.span,
        DeclKind::Task(t) => t.name.span,
        _ => d.span,
    })
}

pub use crate::suggest::did_you_mean;

/// What a read-only global of a program holds, for sharing it (`Sema::dsd_consts`).
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum ConstKey {
    /// A constant descriptor.
    Dsd(dsd::DsdVal),
    /// The slot of a DSR: its kind and number.
    Dsr(u8, u8),
    /// A comptime value of a type (`Value::canonical` text).
    Value(TypeId, String),
}
