//! The Paint driver: floorplan → evaluated plan → one Tungsten class per distinct
//! (program file, placement) → [`crate::link::link`] → image, and the symbol map of the
//! named regions.

use super::eval::{self, Eval};
use super::plan::{self, Floorplan};
use super::{PaintCompilation, PaintOptions};
use crate::diag::{Diagnostic, codes};
use crate::ir::Program;
use crate::link::{ClassProgram, ClassTable, FabricPlan};
use crate::source::{FileId, SourceMap};
use crate::tungsten::{ClassSpec, ParamValue, compile_class};
use csl_arch::image::{FORMAT_VERSION, Image, Meta};
use csl_arch::symmap::{MapSymbol, SymbolMap};
use std::collections::BTreeMap;

/// Compiles an already loaded main file.
pub(super) fn compile_here(
    mut sources: SourceMap,
    main: FileId,
    opts: &PaintOptions,
) -> PaintCompilation {
    let mut diags = Vec::new();
    let (plan, image, map) = run(&mut sources, main, opts, &mut diags);
    // One program placed with several specs may report the same problem per class.
    let mut unique: Vec<Diagnostic> = Vec::with_capacity(diags.len());
    for d in diags {
        if !unique.contains(&d) {
            unique.push(d);
        }
    }
    let ok = !unique.iter().any(Diagnostic::is_error);
    PaintCompilation {
        sources,
        diagnostics: unique,
        plan,
        image: if ok { image } else { None },
        map: if ok { map } else { None },
    }
}

fn has_errors(diags: &[Diagnostic]) -> bool {
    diags.iter().any(Diagnostic::is_error)
}

type Products = (Option<Floorplan>, Option<Image>, Option<SymbolMap>);

fn run(
    sources: &mut SourceMap,
    main: FileId,
    opts: &PaintOptions,
    diags: &mut Vec<Diagnostic>,
) -> Products {
    let loaded = eval::load(sources, main, &opts.lib_dirs, diags);
    if has_errors(diags) {
        return (None, None, None);
    }
    let evaluated = {
        let mut ev = Eval::new(&loaded, opts.arch, &opts.globals, diags);
        ev.run();
        std::mem::take(&mut ev.out)
    };
    if has_errors(diags) {
        return (None, None, None);
    }
    let Some(fp) = plan::resolve(evaluated, diags) else {
        return (None, None, None);
    };
    if has_errors(diags) {
        return (Some(fp), None, None);
    }
    let Some(image) = build_image(sources, main, &fp, opts, diags) else {
        return (Some(fp), None, None);
    };
    let map = build_map(&fp, &image, opts, diags);
    (Some(fp), Some(image), map)
}

/// Finds the program of every `code()` call: `prog.w` in the directory of the Paint file
/// that names it, then the main file's directory, then each `lib=` directory.
fn find_programs(
    sources: &mut SourceMap,
    main: FileId,
    fp: &Floorplan,
    opts: &PaintOptions,
    diags: &mut Vec<Diagnostic>,
) -> Vec<Option<FileId>> {
    let main_dir = eval::dir_of(sources, main);
    let mut out = Vec::with_capacity(fp.codes.len());
    for call in &fp.codes {
        let mut dirs = vec![eval::dir_of(sources, call.file)];
        if !dirs.contains(&main_dir) {
            dirs.push(main_dir.clone());
        }
        for d in &opts.lib_dirs {
            if !dirs.contains(d) {
                dirs.push(d.clone());
            }
        }
        let file_name = format!("{}.w", call.prog);
        let found = match eval::find_in(&dirs, &file_name) {
            Some((display, canonical)) => match eval::add_file(sources, display, canonical) {
                Ok(id) => Some(id),
                Err(e) => {
                    diags.push(Diagnostic::error(
                        codes::PAINT_PROGRAM_NOT_FOUND,
                        format!("cannot read `{file_name}`: {e}"),
                        call.prog_span,
                        "program named here",
                    ));
                    None
                }
            },
            None => {
                diags.push(
                    Diagnostic::error(
                        codes::PAINT_PROGRAM_NOT_FOUND,
                        format!("cannot find the program `{file_name}`"),
                        call.prog_span,
                        format!("code() places `{file_name}` here"),
                    )
                    .with_note(format!("searched {}", eval::show_dirs(&dirs)))
                    .with_help("add the directory that holds it with lib=DIR"),
                );
                None
            }
        };
        out.push(found);
    }
    out
}

/// The class key and the spec of a tile running a program.
fn spec_of(
    fp: &Floorplan,
    tile: &plan::TileCode,
    opts: &PaintOptions,
    sources: &SourceMap,
    file: FileId,
) -> Option<(String, ClassSpec, String)> {
    let call = fp.codes.get(tile.code)?;
    let mut sockets = tile.sockets.clone();
    sockets.sort_by(|a, b| a.0.cmp(&b.0));
    let mut params: Vec<(String, ParamValue)> = call
        .params
        .iter()
        .map(|(n, v, _)| (n.clone(), v.clone()))
        .collect();
    params.sort_by(|a, b| a.0.cmp(&b.0));
    let path = sources
        .get(file)
        .path
        .as_ref()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut key = format!("{path}\u{0}mp={}", tile.mp);
    let mut shown = Vec::new();
    for (n, b) in &sockets {
        key.push_str(&format!("\u{0}s:{n}={}/{}", b.rx, b.tx));
        shown.push(if b.rx == b.tx {
            format!("{n}={}", b.rx)
        } else {
            format!("{n}={}/{}", b.rx, b.tx)
        });
    }
    for (n, v) in &params {
        match v {
            ParamValue::Int(i) => {
                key.push_str(&format!("\u{0}p:{n}=i{i}"));
                shown.push(format!("{n}={i}"));
            }
            ParamValue::Float(f) => {
                key.push_str(&format!("\u{0}p:{n}=f{:016x}", f.to_bits()));
                shown.push(format!("{n}={f}"));
            }
        }
    }
    if tile.mp {
        shown.push("mp".into());
    }
    let display = &sources.get(file).display;
    let name = if shown.is_empty() {
        display.clone()
    } else {
        format!("{display} {{{}}}", shown.join(", "))
    };
    let spec = ClassSpec {
        arch: opts.arch,
        sockets,
        params,
        mp: tile.mp,
        lib_dirs: opts.lib_dirs.clone(),
        origin: Some(call.span),
    };
    Some((key, spec, name))
}

enum ClassSource {
    Empty,
    Program(FileId, Box<ClassSpec>, String),
}

fn build_image(
    sources: &mut SourceMap,
    main: FileId,
    fp: &Floorplan,
    opts: &PaintOptions,
    diags: &mut Vec<Diagnostic>,
) -> Option<Image> {
    let files = find_programs(sources, main, fp, opts, diags);
    if has_errors(diags) {
        return None;
    }
    let mut table: ClassTable<String> = ClassTable::default();
    let mut class_src: Vec<ClassSource> = Vec::new();
    let mut placement = Vec::with_capacity(fp.tiles.len());
    for tile in &fp.tiles {
        let (key, src) = match tile {
            None => (String::new(), ClassSource::Empty),
            Some(t) => {
                let file = (*files.get(t.code)?)?;
                let (key, spec, name) = spec_of(fp, t, opts, sources, file)?;
                (key, ClassSource::Program(file, Box::new(spec), name))
            }
        };
        let c = table.intern(key);
        if c as usize == class_src.len() {
            class_src.push(src);
        }
        placement.push(c);
    }
    let mut classes = Vec::with_capacity(class_src.len());
    for src in &class_src {
        match src {
            ClassSource::Empty => classes.push(ClassProgram {
                name: "(no program)".into(),
                program: Program::default(),
            }),
            ClassSource::Program(file, spec, name) => {
                if let Some(program) = compile_class(sources, *file, spec, diags) {
                    classes.push(ClassProgram {
                        name: name.clone(),
                        program,
                    });
                }
            }
        }
    }
    if has_errors(diags) || classes.len() != class_src.len() {
        if !has_errors(diags) {
            diags.push(Diagnostic::global(
                codes::PAINT_PROGRAM_NOT_FOUND,
                "a program placed by code() did not compile",
            ));
        }
        return None;
    }
    let params: BTreeMap<String, String> = opts
        .globals
        .iter()
        .map(|(k, v)| (k.clone(), v.to_string()))
        .collect();
    let meta = Meta {
        format_version: FORMAT_VERSION,
        arch: opts.arch,
        fabric_width: fp.width,
        fabric_height: fp.height,
        offset_x: 0,
        offset_y: 0,
        width: fp.width,
        height: fp.height,
        memcpy: false,
        channels: 1,
        params,
    };
    let plan = FabricPlan {
        meta,
        placement,
        routes: fp.routes.iter().map(|(c, _)| c.clone()).collect(),
        route_spans: fp.routes.iter().map(|(_, s)| Some(*s)).collect(),
        exports: Vec::new(),
        classes,
        optimize: opts.optimize,
        host_streams: 0,
    };
    match crate::link::link(plan, sources, diags) {
        Ok(image) => Some(image),
        Err(d) => {
            diags.push(*d);
            None
        }
    }
}

/// A symbol of a class: name, byte address, bytes.
type Symbol = (String, u32, u32);

/// The symbols of the program classes `classes` run, if they agree (in the first class's
/// order); otherwise why not.
fn region_symbols(image: &Image, classes: &[u32]) -> Result<Vec<Symbol>, String> {
    let syms = |c: u32| -> Vec<Symbol> {
        image
            .classes
            .get(c as usize)
            .map(|pc| {
                pc.info
                    .globals
                    .iter()
                    // Compiler-made globals and memory-mapped registers (`address(0x7C46)`)
                    // are not data a map should offer.
                    .filter(|g| {
                        !g.name.starts_with('$')
                            && u64::from(g.addr) + u64::from(g.size)
                                <= u64::from(csl_arch::fabric::PE_MEMORY_BYTES)
                    })
                    .map(|g| (g.name.clone(), g.addr, g.size))
                    .collect()
            })
            .unwrap_or_default()
    };
    let class_name = |c: u32| {
        image
            .classes
            .get(c as usize)
            .map(|pc| pc.info.name.clone())
            .unwrap_or_default()
    };
    let Some((&first, rest)) = classes.split_first() else {
        return Ok(Vec::new());
    };
    let base = syms(first);
    for &c in rest {
        let other = syms(c);
        for (n, a, b) in &base {
            match other.iter().find(|s| s.0 == *n) {
                Some((_, a2, b2)) if a2 == a && b2 == b => {}
                Some((_, a2, b2)) => {
                    return Err(format!(
                        "`{n}` is at 0x{a:04x} ({b} bytes) in `{}` but at 0x{a2:04x} ({b2} bytes) in `{}`",
                        class_name(first),
                        class_name(c)
                    ));
                }
                None => {
                    return Err(format!(
                        "`{}` has `{n}` but `{}` does not",
                        class_name(first),
                        class_name(c)
                    ));
                }
            }
        }
        if let Some((n, _, _)) = other.iter().find(|s| !base.iter().any(|b| b.0 == s.0)) {
            return Err(format!(
                "`{}` has `{n}` but `{}` does not",
                class_name(c),
                class_name(first)
            ));
        }
    }
    Ok(base)
}

fn build_map(
    fp: &Floorplan,
    image: &Image,
    opts: &PaintOptions,
    diags: &mut Vec<Diagnostic>,
) -> Option<SymbolMap> {
    let mut map = SymbolMap {
        width: fp.width,
        height: fp.height,
        arch: opts.arch.name().to_string(),
        regions: Vec::new(),
        symbols: Vec::new(),
    };
    let mut ok = true;
    for r in &fp.names {
        let mut classes: Vec<u32> = r
            .tiles
            .iter()
            .filter_map(|&(x, y)| image.placement.get((y * fp.width + x) as usize).copied())
            .collect();
        classes.sort_unstable();
        classes.dedup();
        match region_symbols(image, &classes) {
            Ok(syms) => {
                for (name, addr, bytes) in syms {
                    map.symbols.push(MapSymbol {
                        region: r.name.clone(),
                        name,
                        addr,
                        bytes,
                        elem: "-".into(),
                    });
                }
            }
            Err(why) => {
                ok = false;
                diags.push(
                    Diagnostic::error(
                        codes::PAINT_NAME,
                        format!(
                            "the tiles of region `{}` run programs whose symbols differ",
                            r.name
                        ),
                        r.span,
                        "named here",
                    )
                    .with_note(why)
                    .with_help("a map entry needs one address on every tile: name the differing tiles separately"),
                );
            }
        }
        map.regions.push(csl_arch::symmap::MapRegion {
            name: r.name.clone(),
            tiles: r.tiles.clone(),
        });
    }
    ok.then_some(map)
}
