//! Helpers of the Tungsten end-to-end tests (`tests/tungsten.rs`,
//! `tests/tungsten_conformance.rs`): compile one `.w` class, link classes onto a rectangle
//! of the same size as the fabric, and run the image to quiescence.

use csl_arch::Arch;
use csl_arch::fabric::Direction;
use csl_arch::image::{ColorConfig, Image, Meta};
use cslc::diag::render_all;
use cslc::link::{ClassProgram, FabricPlan, link};
use cslc::source::SourceMap;
use cslc::tungsten::{ClassSpec, SocketBinding, compile_class};
use cslsim::Simulator;

/// Compiles `src` (added to `sources` as `test.w`); panics with the rendered diagnostics
/// and the source on error.
pub fn compile_in(sources: &mut SourceMap, src: &str, spec: &ClassSpec) -> cslc::ir::Program {
    let file = sources.add("test.w".into(), None, src.to_string());
    let mut diags = Vec::new();
    let prog = compile_class(sources, file, spec, &mut diags);
    let rendered = render_all(&diags, sources, false);
    assert!(
        !diags.iter().any(|d| d.is_error()),
        "compile errors:\n{rendered}\nin\n{src}"
    );
    prog.expect("a program")
}

/// [`compile_in`] with a fresh source map.
pub fn compile(src: &str, spec: &ClassSpec) -> cslc::ir::Program {
    compile_in(&mut SourceMap::new(), src, spec)
}

/// Links programs (one class each) placed on a `w` x `h` rectangle of a fabric of the same
/// size; the programs were compiled into `sources` (whose spans the line tables resolve).
#[allow(clippy::too_many_arguments)]
pub fn image(
    sources: &SourceMap,
    arch: Arch,
    w: u32,
    h: u32,
    progs: Vec<cslc::ir::Program>,
    placement: Vec<u32>,
    routes: Vec<ColorConfig>,
    optimize: bool,
) -> Image {
    let meta = Meta {
        fabric_width: w,
        fabric_height: h,
        offset_x: 0,
        offset_y: 0,
        ..Meta::rect(arch, w, h)
    };
    let classes = progs
        .into_iter()
        .enumerate()
        .map(|(i, program)| ClassProgram {
            name: format!("class{i}"),
            program,
        })
        .collect();
    link(
        FabricPlan {
            meta,
            placement,
            routes: routes.into(),
            route_spans: Vec::new(),
            exports: Vec::new(),
            classes,
            optimize,
            host_streams: 0,
        },
        sources,
        &mut Vec::new(),
    )
    .unwrap_or_else(|d| panic!("link failed: {}", d.message))
}

/// Runs `image` from reset until nothing moves (at most 2,000,000 cycles).
pub fn run(image: &Image) -> Simulator {
    let mut sim = Simulator::new(image).expect("image loads");
    sim.run_until_idle(2_000_000).expect("run ends cleanly");
    sim
}

/// Compiles and runs `src` on one tile (sockets `(name, rx colour, tx colour)`, routes
/// `(colour, input, output)`) on both generations, optimised and not, and calls `check`
/// with the run's name and a reader of the tile's globals.
pub fn one_tile(
    src: &str,
    sockets: &[(&str, u8, u8)],
    routes: &[(u8, Direction, Direction)],
    check: impl Fn(&str, &dyn Fn(&str) -> Vec<u8>),
) {
    for arch in [Arch::Wse2, Arch::Wse3] {
        for optimize in [false, true] {
            let mut spec = ClassSpec::new(arch);
            for (n, rx, tx) in sockets {
                spec.sockets
                    .push((n.to_string(), SocketBinding { rx: *rx, tx: *tx }));
            }
            let prog = compile(src, &spec);
            let rs = routes
                .iter()
                .map(|(c, i, o)| ColorConfig::route(0, 0, *c, vec![*i], vec![*o]))
                .collect();
            let img = image(
                &SourceMap::new(),
                arch,
                1,
                1,
                vec![prog],
                vec![0],
                rs,
                optimize,
            );
            let sim = run(&img);
            let what = format!("{arch:?} optimize={optimize}");
            check(&what, &|name| {
                crate::global_bytes(&sim, &img, (0, 0), |g| g == name)
            });
        }
    }
}

/// The little-endian u16 at the start of `b`.
pub fn u16_of(b: &[u8]) -> u16 {
    u16::from_le_bytes([b[0], b[1]])
}

/// The little-endian u32 at the start of `b`.
pub fn u32_of(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// The little-endian f32 at the start of `b`.
pub fn f32_of(b: &[u8]) -> f32 {
    f32::from_bits(u32_of(b))
}
