//! The layer both front ends share below their own analysis: program classes, the fabric
//! plan, optimisation and code generation of each class, and the image.
//!
//! A front end (CSL's layout block, or a Paint floorplan) decides which program runs on
//! each tile and which colours each router carries. It gives every tile a class key
//! ([`ClassTable`] numbers distinct keys), compiles one [`crate::ir::Program`] per class,
//! and hands a [`FabricPlan`] to [`link`], which optimises and emits every class, applies
//! program-local colour configuration to every tile running the program, and assembles and
//! validates the [`Image`]. Nothing below this point knows which language a program was
//! written in.

use crate::diag::{Diagnostic, codes};
use crate::ir::Program;
use crate::source::Span;
use csl_arch::image::{ExportName, Image, Meta, Routes};
use std::collections::HashMap;
use std::hash::Hash;

/// Numbers distinct class keys in first-seen order: one program class per key.
pub struct ClassTable<K> {
    ids: HashMap<K, u32>,
    keys: Vec<K>,
}

impl<K: Clone + Eq + Hash> Default for ClassTable<K> {
    fn default() -> Self {
        ClassTable {
            ids: HashMap::new(),
            keys: Vec::new(),
        }
    }
}

impl<K: Clone + Eq + Hash> ClassTable<K> {
    /// The class number of `key`, adding it if new.
    pub fn intern(&mut self, key: K) -> u32 {
        if let Some(&id) = self.ids.get(&key) {
            return id;
        }
        let id = self.keys.len() as u32;
        self.keys.push(key.clone());
        self.ids.insert(key, id);
        id
    }

    /// The keys, indexed by class number.
    pub fn keys(&self) -> &[K] {
        &self.keys
    }
}

/// One compiled class, ready for code generation.
pub struct ClassProgram {
    /// Human-readable origin (e.g. `pe.csl {M=4}` or `relay.w {N=8}`).
    pub name: String,
    /// The program.
    pub program: Program,
}

/// Everything a front end decided about the fabric.
pub struct FabricPlan {
    /// Target and geometry.
    pub meta: Meta,
    /// Class number of each tile of the rectangle, row-major.
    pub placement: Vec<u32>,
    /// Colour configuration of the layout.
    pub routes: Routes,
    /// Where each of `routes` was written, if known (same length, or shorter).
    pub route_spans: Vec<Option<Span>>,
    /// Host-visible names.
    pub exports: Vec<ExportName>,
    /// The programs, indexed by class number.
    pub classes: Vec<ClassProgram>,
    /// Run the IR optimiser on every class.
    pub optimize: bool,
    /// Bit `c` set: colour `c` is a host stream (the host delivers and collects its
    /// wavelets at the CEs; no route is expected for it).
    pub host_streams: u32,
}

/// The disassembly of every class of an image, as `cslc --emit-asm` and `paint asm=FILE`
/// print it: a `; class N: NAME` line, one `;   fn` line per function, then the code.
pub fn disassembly(image: &Image) -> String {
    let mut text = String::new();
    for (i, c) in image.classes.iter().enumerate() {
        text.push_str(&format!("; class {i}: {}\n", c.info.name));
        for f in &c.info.functions {
            text.push_str(&format!(
                ";   fn {} at {} ({} regs, {} frame bytes)\n",
                f.name, f.entry, f.nregs, f.frame_bytes
            ));
        }
        text.push_str(&csl_arch::isa::disassemble(&c.code));
    }
    text
}

/// Optimises and emits every class, applies each program's own colour configuration
/// (`Program::local_routes`) to every tile running it, and assembles the image, checked
/// with the same [`Image::validate`] the loader runs, so whatever links also loads. The
/// static route checks ([`crate::fabric_check`]) run on the result; their warnings are
/// appended to `warnings`.
/// `sources` holds the files the programs were compiled from (for the line tables).
pub fn link(
    plan: FabricPlan,
    sources: &crate::source::SourceMap,
    warnings: &mut Vec<Diagnostic>,
) -> Result<Image, Box<Diagnostic>> {
    let FabricPlan {
        meta,
        placement,
        mut routes,
        route_spans: mut spans,
        exports,
        classes: programs,
        optimize,
        host_streams,
    } = plan;
    let w = meta.width.max(1);
    let mut classes = Vec::with_capacity(programs.len());
    // Each class's own colour configuration: (configuration number, colour, span).
    let mut local_routes: Vec<Vec<(u32, u8, Span)>> = Vec::with_capacity(programs.len());
    let mut facts = Vec::with_capacity(programs.len());
    let mut memo = crate::opt::Memo::default();
    for mut c in programs {
        if optimize {
            memo.optimize(&mut c.program);
        }
        facts.push(crate::fabric_check::ProgramFacts::of(&c.program, meta.arch));
        local_routes.push(
            c.program
                .local_routes
                .iter()
                .map(|(r, s)| (routes.intern(r), r.color, *s))
                .collect(),
        );
        classes.push(crate::codegen::emit_class(&c.program, &c.name, sources)?);
    }
    // Only programs that configure colours themselves need the layout's routes by place.
    let layout_at: HashMap<(u32, u32, u8), Option<Span>> = if local_routes.iter().all(Vec::is_empty)
    {
        HashMap::new()
    } else {
        routes
            .iter()
            .enumerate()
            .map(|(i, r)| ((r.x, r.y, r.color), spans.get(i).copied().flatten()))
            .collect()
    };
    spans.resize(routes.len(), None);
    for (i, &c) in placement.iter().enumerate() {
        let (x, y) = (i as u32 % w, i as u32 / w);
        for &(config, color, lspan) in local_routes.get(c as usize).into_iter().flatten() {
            if let Some(span) = layout_at.get(&(x, y, color)) {
                let message = format!(
                    "color {color} of PE ({x}, {y}) is configured both in the layout and by the PE's code"
                );
                let d = match span {
                    Some(s) => Diagnostic::error(
                        codes::LAYOUT_TILE,
                        message,
                        *s,
                        "configured in the layout here",
                    ),
                    None => Diagnostic::global(codes::LAYOUT_TILE, message),
                };
                return Err(Box::new(
                    d.with_label(lspan, "the PE's code also configures it here"),
                ));
            }
            routes.place(x, y, config);
            spans.push(Some(lspan));
        }
    }
    let image = Image {
        meta,
        placement,
        routes,
        exports,
        classes,
        tile_memory: Vec::new(),
    };
    if let Err(e) = image.validate() {
        return Err(Box::new(
            Diagnostic::global(
                codes::LAYOUT_FABRIC,
                format!("the linked image is not loadable: {e}"),
            )
            .with_note("this is a compiler bug unless the layout names resources the target lacks; please report it"),
        ));
    }
    warnings.extend(crate::fabric_check::check(
        &crate::fabric_check::CheckInput {
            meta: &image.meta,
            placement: &image.placement,
            routes: &image.routes,
            spans: &spans,
            programs: &facts,
            host_streams,
        },
    ));
    Ok(image)
}
