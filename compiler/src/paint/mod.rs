//! The Paint (`.paint`) floorplan front end: places Tungsten programs on rectangles of
//! tiles, binds their sockets to colours, paints routes, and produces an image and a
//! symbol map.
//!
//! Pipeline: [`parser`] (logos tokens from [`token`], the lalrpop grammar
//! `grammar/paint.lalrpop`, one parse per item, [`ast`]) → [`eval`] (includes, `let`,
//! Paint functions, builtins; records every action with its region) → [`plan`] (the
//! image rectangle, per-tile routes, colour swap and message passing, socket bindings,
//! named regions) → [`driver`] (one Tungsten class per distinct (program file, placement)
//! via [`crate::tungsten::compile_class`], [`crate::link::link`], the `.map`).
//!
//! The language and every choice this project made where the public material is silent
//! are described in `README.md` beside this file. Every problem is a [`Diagnostic`];
//! [`compile_floorplan`] always returns.

mod actions;
pub mod ast;
pub mod driver;
pub mod eval;
pub mod parser;
pub mod plan;
pub mod region;
mod stack;
pub mod token;

#[cfg(test)]
mod tests;

use crate::diag::{Diagnostic, codes};
use crate::source::SourceMap;
use csl_arch::Arch;
use csl_arch::image::Image;
use csl_arch::symmap::SymbolMap;
use std::path::{Path, PathBuf};

pub use plan::Floorplan;

/// What `paint`'s arguments set.
#[derive(Clone, Debug)]
pub struct PaintOptions {
    /// `arch=sdr|wse3|wse2` (`sdr` is wse3; the default).
    pub arch: Arch,
    /// `lib=DIR`, in order: where `code('prog)` and `include` look after the Paint file's
    /// own directory.
    pub lib_dirs: Vec<PathBuf>,
    /// `NAME=VALUE` globals of the Paint file.
    pub globals: Vec<(String, i64)>,
    /// Run the IR optimiser (`-O0` turns it off).
    pub optimize: bool,
}

impl Default for PaintOptions {
    fn default() -> Self {
        PaintOptions {
            arch: Arch::Wse3,
            lib_dirs: Vec::new(),
            globals: Vec::new(),
            optimize: true,
        }
    }
}

/// Everything a Paint compilation produced.
pub struct PaintCompilation {
    /// Every file read (for rendering diagnostics).
    pub sources: SourceMap,
    /// Errors and warnings.
    pub diagnostics: Vec<Diagnostic>,
    /// The resolved floorplan, if evaluation got that far (even with later errors).
    pub plan: Option<Floorplan>,
    /// The image, if there were no errors.
    pub image: Option<Image>,
    /// The symbol map of the named regions, if there were no errors.
    pub map: Option<SymbolMap>,
}

impl PaintCompilation {
    /// Whether any error was reported.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Stack size of the thread compilation runs on (Tungsten analysis and deep Paint
/// expressions recurse).
const COMPILE_STACK_BYTES: usize = 64 << 20;

/// Compiles the floorplan in `path` and every program it places.
pub fn compile_floorplan(path: &Path, opts: &PaintOptions) -> PaintCompilation {
    let mut sources = SourceMap::new();
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            return PaintCompilation {
                sources,
                diagnostics: vec![Diagnostic::global(
                    codes::PAINT_ARGUMENT,
                    format!("cannot read `{}`: {e}", path.display()),
                )],
                plan: None,
                image: None,
                map: None,
            };
        }
    };
    let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let display = path.to_string_lossy().trim_start_matches("./").to_string();
    let main = sources.add(display, Some(canonical), text);
    compile_sources(sources, main, opts)
}

/// Compiles Paint source text that is not on disk; `display` names it in diagnostics and
/// its directory is where `code()` and `include` look first.
pub fn compile_source(display: &str, text: &str, opts: &PaintOptions) -> PaintCompilation {
    let mut sources = SourceMap::new();
    let main = sources.add(display.to_string(), None, text.to_string());
    compile_sources(sources, main, opts)
}

fn compile_sources(
    sources: SourceMap,
    main: crate::source::FileId,
    opts: &PaintOptions,
) -> PaintCompilation {
    let result = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("paint".into())
            .stack_size(COMPILE_STACK_BYTES)
            .spawn_scoped(scope, || driver::compile_here(sources, main, opts))
            .map(|h| h.join())
    });
    let failed = |message: String| PaintCompilation {
        sources: SourceMap::new(),
        diagnostics: vec![Diagnostic::global(codes::UNSUPPORTED, message)],
        plan: None,
        image: None,
        map: None,
    };
    match result {
        Ok(Ok(c)) => c,
        Ok(Err(_)) => failed(
            "internal compiler error: compilation crashed; please report this floorplan".into(),
        ),
        Err(e) => failed(format!("cannot start the compiler thread: {e}")),
    }
}

/// A Paint builtin or action, as the evaluator knows it and editors show it.
#[derive(Clone, Copy, Debug)]
pub struct PaintFunction {
    /// Its name.
    pub name: &'static str,
    /// How it is called.
    pub signature: &'static str,
    /// What it does, in one line.
    pub doc: &'static str,
    /// An action (`R : name(...)`, or `name(R ...)`), not a value-making builtin.
    pub action: bool,
}

/// Every builtin and action (the evaluator's list: a name here is reserved).
pub const FUNCTIONS: &[PaintFunction] = &[
    PaintFunction {
        name: "color",
        signature: "color() / color(N)",
        doc: "a fresh colour, or colour N (0..=23)",
        action: false,
    },
    PaintFunction {
        name: "rect",
        signature: "rect(x y w h)",
        doc: "columns x..x+w, rows y..y+h",
        action: false,
    },
    PaintFunction {
        name: "tile",
        signature: "tile() / tile(x y)",
        doc: "one tile (0, 0 without arguments)",
        action: false,
    },
    PaintFunction {
        name: "union",
        signature: "union(r1 r2 ...)",
        doc: "the tiles of all the regions",
        action: false,
    },
    PaintFunction {
        name: "ring",
        signature: "ring(r)",
        doc: "the one-tile frame around r's bounding box",
        action: false,
    },
    PaintFunction {
        name: "hstack",
        signature: "hstack(r1 r2 ... | rep(r n))",
        doc: "regions placed side by side, west to east, north edges aligned",
        action: false,
    },
    PaintFunction {
        name: "vstack",
        signature: "vstack(r1 r2 ... | rep(r n))",
        doc: "regions placed north to south, west edges aligned",
        action: false,
    },
    PaintFunction {
        name: "rep",
        signature: "rep(r n)",
        doc: "n copies of r, as arguments of hstack or vstack",
        action: false,
    },
    PaintFunction {
        name: "split",
        signature: "split(r 'h|'v n i)",
        doc: "strip i of the n strips of columns ('h) or rows ('v) of r",
        action: false,
    },
    PaintFunction {
        name: "paint",
        signature: "R : paint(c [ROUTES])",
        doc: "routes of colour c on every tile of R",
        action: true,
    },
    PaintFunction {
        name: "colorpair",
        signature: "R : colorpair(a ap)",
        doc: "sockets bound to a send on ap; the routers swap the pair",
        action: true,
    },
    PaintFunction {
        name: "code",
        signature: "R : code('prog [sock:colour PARAM:value ...])",
        doc: "put prog.w on every tile of R",
        action: true,
    },
    PaintFunction {
        name: "name",
        signature: "R : name('g)",
        doc: "name the region for miset/miget (after code)",
        action: true,
    },
    PaintFunction {
        name: "mp",
        signature: "R : mp()",
        doc: "message passing on the region (WSE-3)",
        action: true,
    },
    PaintFunction {
        name: "switch",
        signature: "R : switch(c [POS1] [POS2] [POS3] [OPTIONS])",
        doc: "switch positions 1..3 of colour c",
        action: true,
    },
];

/// A parsed `paint` command line.
#[derive(Clone, Debug)]
pub struct Invocation {
    /// The floorplan.
    pub file: PathBuf,
    /// Options.
    pub options: PaintOptions,
    /// `out=`: the image (default `STEM.obj` in the working directory).
    pub out: PathBuf,
    /// `map=`: the symbol map (default `STEM.map`).
    pub map: PathBuf,
    /// `asm=`: where to write the disassembly of every class (`-`: standard output).
    pub asm: Option<PathBuf>,
    /// `--deny-warnings`: report warnings (the static route checks among them) as errors
    /// and write nothing.
    pub deny_warnings: bool,
}

/// The usage text of `paint`.
pub const USAGE: &str = "\
usage: paint FILE.paint [lib=DIR]... [arch=sdr|wse3|wse2] [NAME=VALUE]... [out=X.obj] [map=X.map] [asm=X.asm] [-O0] [--deny-warnings]

Compiles a Paint floorplan and every Tungsten program it places with code('prog) into a
fabric image (out=, default STEM.obj) and a symbol map for miset/miget (map=, default
STEM.map).

  lib=DIR        also look for prog.w and included files in DIR (repeatable, in order)
  arch=ARCH      sdr or wse3 (the default; sdr is wse3), or wse2
  NAME=VALUE     an integer global of the Paint file (e.g. NX=8)
  out=FILE       where to write the image
  map=FILE       where to write the symbol map
  asm=FILE       also write the disassembly of every program class (as cslc --emit-asm
                 prints it; asm=- prints it on standard output)
  -O0            do not optimise the programs
  --deny-warnings
                 treat warnings (the static route checks E0701-E0707 among them) as
                 errors: report them as errors and write nothing
  --help         print this text";

/// Parses `paint`'s arguments (without the program name). `Ok(None)` means `--help`.
pub fn parse_args(args: &[String]) -> Result<Option<Invocation>, String> {
    let mut file: Option<PathBuf> = None;
    let mut opts = PaintOptions::default();
    let mut out = None;
    let mut map = None;
    let mut asm = None;
    let mut deny_warnings = false;
    for a in args {
        if a == "--help" || a == "-h" || a == "help" {
            return Ok(None);
        }
        if a == "-O0" {
            opts.optimize = false;
            continue;
        }
        if a == "--deny-warnings" {
            deny_warnings = true;
            continue;
        }
        if a == "-O1" || a == "-O" {
            opts.optimize = true;
            continue;
        }
        match a.split_once('=') {
            Some(("lib", d)) => opts.lib_dirs.push(PathBuf::from(d)),
            Some(("arch", v)) => {
                opts.arch = match v {
                    "sdr" | "wse3" => Arch::Wse3,
                    "wse2" => Arch::Wse2,
                    _ => {
                        return Err(format!(
                            "arch={v}: the architectures are sdr, wse3 and wse2"
                        ));
                    }
                }
            }
            Some(("out", v)) => out = Some(PathBuf::from(v)),
            Some(("map", v)) => map = Some(PathBuf::from(v)),
            Some(("asm", v)) => asm = Some(PathBuf::from(v)),
            Some((name, v)) => {
                let ident = name
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if !ident {
                    return Err(format!(
                        "`{a}`: a global is NAME=VALUE with NAME a Paint name (letters, digits, _)"
                    ));
                }
                let value = parse_int(v).ok_or_else(|| {
                    format!("{name}={v}: the value of a Paint global must be an integer")
                })?;
                if let Some(slot) = opts.globals.iter_mut().find(|(n, _)| n == name) {
                    slot.1 = value;
                } else {
                    opts.globals.push((name.to_string(), value));
                }
            }
            None if a.starts_with('-') => {
                return Err(format!("unknown option `{a}` (see paint --help)"));
            }
            None => {
                if let Some(f) = &file {
                    return Err(format!(
                        "two floorplans given (`{}` and `{a}`); paint compiles one",
                        f.display()
                    ));
                }
                file = Some(PathBuf::from(a));
            }
        }
    }
    let Some(file) = file else {
        return Err("no floorplan given (usage: paint FILE.paint [NAME=VALUE]...)".into());
    };
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    Ok(Some(Invocation {
        out: out.unwrap_or_else(|| PathBuf::from(format!("{stem}.obj"))),
        map: map.unwrap_or_else(|| PathBuf::from(format!("{stem}.map"))),
        asm,
        deny_warnings,
        file,
        options: opts,
    }))
}

/// Parses a decimal, `0x` or negative integer.
fn parse_int(s: &str) -> Option<i64> {
    let (neg, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s),
    };
    let v = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(h) => i64::from_str_radix(h, 16).ok()?,
        None => digits.parse::<i64>().ok()?,
    };
    Some(if neg { -v } else { v })
}
