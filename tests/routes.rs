//! The static route checks (`cslc::fabric_check`, warnings E0701–E0707): no warning on any
//! program of the repository, and the warnings of deliberately broken layouts name both
//! ends of the broken route.

use csl_arch::Arch;
use cslc::driver::{Options, compile_file};
use cslc::paint::{PaintOptions, compile_floorplan};
use std::path::{Path, PathBuf};

/// The rendered warnings of compiling `layout` with `opts` (`None` if it does not compile,
/// e.g. a wse3-only program compiled for wse2).
fn warnings(layout: &Path, opts: &Options) -> Option<String> {
    let comp = compile_file(layout, opts);
    if comp.has_errors() {
        return None;
    }
    let warnings: Vec<_> = comp
        .diagnostics
        .iter()
        .filter(|d| !d.is_error())
        .cloned()
        .collect();
    Some(cslc::diag::render_all(&warnings, &comp.sources, false))
}

#[test]
fn no_repository_program_draws_a_warning() {
    let root = csl_tests::repo_root();
    let layouts: Vec<_> = csl_tests::repo_files(&["examples", "tests/programs"], "csl")
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "layout.csl"))
        // The MD layout needs its generated params: compiled below.
        .filter(|p| !p.starts_with(root.join("examples/md")))
        .collect();
    assert!(layouts.len() >= 30, "{layouts:?}");
    let mut compiled = 0;
    let mut noisy = Vec::new();
    for layout in &layouts {
        for arch in [Arch::Wse2, Arch::Wse3] {
            let opts = csl_tests::options(arch, (64, 64));
            if let Some(w) = warnings(layout, &opts) {
                compiled += 1;
                if !w.is_empty() {
                    noisy.push(format!("{} ({arch}):\n{w}", layout.display()));
                }
            }
        }
    }
    assert!(
        compiled >= 2 * layouts.len() - 10,
        "only {compiled} compiled"
    );
    assert!(noisy.is_empty(), "{}", noisy.join("\n"));
}

#[test]
fn the_md_device_program_draws_no_warning() {
    let layout = csl_tests::repo_root().join("examples/md/layout.csl");
    for (arch, nx, ny, express) in [
        (Arch::Wse2, 4, 4, 0),
        (Arch::Wse3, 4, 4, 1),
        (Arch::Wse2, 8, 4, 1),
        (Arch::Wse3, 2, 2, 0),
    ] {
        let params: Vec<(String, String)> = [
            ("nx", nx),
            ("ny", ny),
            ("nzx", 2),
            ("nzy", 2),
            ("nloc", 8),
            ("nmax", 16),
            ("npair", 64),
            ("nframes", 1),
            ("express_x", express),
            ("express_y", express),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let opts = Options {
            params,
            ..csl_tests::options(arch, (64, 64))
        };
        let comp = compile_file(&layout, &opts);
        let rendered = cslc::diag::render_all(&comp.diagnostics, &comp.sources, false);
        assert!(
            comp.output.is_some() && comp.diagnostics.is_empty(),
            "md {nx}x{ny} express={express} ({arch}):\n{rendered}"
        );
    }
}

#[test]
fn no_tungsten_example_draws_a_warning() {
    let root = csl_tests::repo_root().join("examples/tungsten");
    // The globals of each example's commands.sh.
    let cases: [(&str, &[(&str, i64)]); 5] = [
        ("01-row-relay/relay.paint", &[("N", 6)]),
        ("02-casts/casts.paint", &[]),
        (
            "03-neighbour-exchange/exchange.paint",
            &[("NX", 4), ("NY", 3), ("K", 4)],
        ),
        ("04-switches/switches.paint", &[("N", 6), ("K", 4)]),
        (
            "05-message-passing/mail.paint",
            &[("NX", 4), ("NY", 3), ("GX", 1), ("GY", 1)],
        ),
    ];
    for (file, globals) in cases {
        let opts = PaintOptions {
            arch: Arch::Wse3,
            globals: globals.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            ..PaintOptions::default()
        };
        let comp = compile_floorplan(&root.join(file), &opts);
        let rendered = cslc::diag::render_all(&comp.diagnostics, &comp.sources, false);
        assert!(
            comp.image.is_some() && comp.diagnostics.is_empty(),
            "{file}:\n{rendered}"
        );
    }
}

/// A scratch directory for generated programs.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

/// A csl-examples-style relay along a row of `n` PEs on colour 3: PE 0 sends, every other
/// PE takes the colour from the WEST to its CE and passes it on EAST (the last one only to
/// its CE). PE `missing` gets no route.
fn relay(n: u32, missing: u32) -> String {
    format!(
        r#"param x: i16 = 0;
const c: color = @get_color(3);
var buf: [1]u32 = .{{ 0 }};
const buf_dsd = @get_dsd(mem1d_dsd, .{{ .tensor_access = |i|{{1}} -> buf[i] }});
const out_dsd = @get_dsd(fabout_dsd, .{{ .fabric_color = c, .extent = 1, .output_queue = @get_output_queue(1) }});
task send() void {{ @mov32(out_dsd, buf_dsd); }}
task recv(v: u32) void {{}}
comptime {{
  if (x == 0) {{ @bind_local_task(send, @get_local_task_id(10)); }}
  if (x > 0) {{ @bind_data_task(recv, @get_data_task_id(c)); }}
}}
layout {{
  @set_rectangle({n}, 1);
  for (@range(i16, {n})) |px| {{
    @set_tile_code(px, 0, "relay.csl", .{{ .x = px }});
    if (px == 0) {{
      @set_color_config(px, 0, c, .{{ .routes = .{{ .rx = .{{ RAMP }}, .tx = .{{ EAST }} }} }});
    }} else if (px == {last}) {{
      @set_color_config(px, 0, c, .{{ .routes = .{{ .rx = .{{ WEST }}, .tx = .{{ RAMP }} }} }});
    }} else if (px != {missing}) {{
      @set_color_config(px, 0, c, .{{ .routes = .{{ .rx = .{{ WEST }}, .tx = .{{ RAMP, EAST }} }} }});
    }}
  }}
}}
"#,
        last = n - 1
    )
}

#[test]
fn a_relay_with_a_missing_receive_route_warns_at_both_ends() {
    let dir = scratch("routes-relay");
    let file = dir.join("relay.csl");
    let opts = Options::default();
    // Intact: no warning.
    std::fs::write(&file, relay(8, 99)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(warnings(&file, &opts).as_deref(), Some(""));
    // PE 5 lost its route.
    std::fs::write(&file, relay(8, 5)).unwrap_or_else(|e| panic!("{e}"));
    let comp = compile_file(&file, &opts);
    assert!(!comp.has_errors(), "warnings only");
    let find = |code: &str| {
        comp.diagnostics
            .iter()
            .find(|d| d.code == code)
            .unwrap_or_else(|| panic!("no {code} in {:?}", comp.diagnostics))
    };
    // The sender's end: PE (4, 0) sends into PE (5, 0), labelled at the route it wrote.
    let sent = find("E0701");
    assert!(sent.message.contains("PE (4, 0)") && sent.message.contains("PE (5, 0)"));
    assert!(sent.primary.is_some(), "the sender's route has a span");
    // The missing receiver's end: PE (5, 0)'s data task is never fed, labelled at the
    // binding; and PE (6, 0) waits for wavelets PE (5, 0) never passes on.
    let task = find("E0704");
    assert!(task.message.contains("PE (5, 0)"), "{}", task.message);
    assert!(task.primary.is_some(), "the task binding has a span");
    let starved = find("E0702");
    assert!(starved.message.contains("PE (6, 0)") && starved.message.contains("PE (5, 0)"));
    // Every warning is a warning, and --deny-warnings turns them into a failed compile.
    assert!(comp.diagnostics.iter().all(|d| !d.is_error()));
}

#[test]
fn a_loop_a_ce_feeds_is_a_channel_dependency_cycle() {
    let dir = scratch("routes-cycle");
    let file = dir.join("ring.csl");
    // Colour 7 circles the border of a 3 x 3 square clockwise; PE (0, 0)'s CE feeds it.
    let mut src = String::from(
        "const c: color = @get_color(7);
var buf: [1]u32 = .{ 0 };
const buf_dsd = @get_dsd(mem1d_dsd, .{ .tensor_access = |i|{1} -> buf[i] });
const out_dsd = @get_dsd(fabout_dsd, .{ .fabric_color = c, .extent = 1, .output_queue = @get_output_queue(1) });
task send() void { @mov32(out_dsd, buf_dsd); }
task recv(v: u32) void {}
comptime {
  @bind_local_task(send, @get_local_task_id(10));
  @bind_data_task(recv, @get_data_task_id(c));
}
layout {
  @set_rectangle(3, 3);
",
    );
    for y in 0..3 {
        for x in 0..3 {
            src.push_str(&format!("  @set_tile_code({x}, {y});\n"));
        }
    }
    let ring = [
        (0, 0, "SOUTH, RAMP", "EAST, RAMP"),
        (1, 0, "WEST", "EAST, RAMP"),
        (2, 0, "WEST", "SOUTH, RAMP"),
        (2, 1, "NORTH", "SOUTH, RAMP"),
        (2, 2, "NORTH", "WEST, RAMP"),
        (1, 2, "EAST", "WEST, RAMP"),
        (0, 2, "EAST", "NORTH, RAMP"),
        (0, 1, "SOUTH", "NORTH, RAMP"),
    ];
    for (x, y, rx, tx) in ring {
        src.push_str(&format!(
            "  @set_color_config({x}, {y}, c, .{{ .routes = .{{ .rx = .{{ {rx} }}, .tx = .{{ {tx} }} }} }});\n"
        ));
    }
    src.push_str("}\n");
    std::fs::write(&file, &src).unwrap_or_else(|e| panic!("{e}"));
    let comp = compile_file(&file, &Options::default());
    // (The centre PE has no route, so its data task draws E0704; nothing else is wrong.)
    let codes: Vec<&str> = comp.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["E0704", "E0707"], "{:?}", comp.diagnostics);
    let Some(cycle) = comp.diagnostics.iter().find(|d| d.code == "E0707") else {
        panic!("no E0707 in {:?}", comp.diagnostics)
    };
    assert!(
        cycle.message.contains("8 router buffers"),
        "{}",
        cycle.message
    );
    // The same loop with the CE at (0, 0) only taking wavelets out (nothing feeds the
    // loop): no cycle warning, but PE (0, 0) now passes on nothing it receives.
    let fed = src.replace(
        "SOUTH, RAMP }, .tx = .{ EAST, RAMP }",
        "SOUTH }, .tx = .{ RAMP }",
    );
    assert_ne!(fed, src);
    std::fs::write(&file, &fed).unwrap_or_else(|e| panic!("{e}"));
    let comp = compile_file(&file, &Options::default());
    assert!(
        comp.diagnostics.iter().all(|d| d.code != "E0707"),
        "{:?}",
        comp.diagnostics
    );
}

#[test]
fn the_route_graph_is_written_as_graphviz() {
    let dir = scratch("routes-dot");
    let file = dir.join("relay.csl");
    std::fs::write(&file, relay(3, 99)).unwrap_or_else(|e| panic!("{e}"));
    let comp = compile_file(&file, &Options::default());
    let Some(out) = comp.output else {
        panic!("does not compile: {:?}", comp.diagnostics)
    };
    let dot = cslc::fabric_check::dot(&out.image.meta, &out.image.routes, None);
    assert!(dot.starts_with("digraph routes {"), "{dot}");
    for edge in [
        "\"0,0 c3 RAMP\" -> \"1,0 c3 WEST\" [label=\"p0\"];",
        "\"1,0 c3 WEST\" -> \"2,0 c3 WEST\" [label=\"p0\"];",
        "\"1,0 c3 WEST\" -> \"1,0 c3 CE\" [label=\"p0\"];",
        "\"2,0 c3 WEST\" -> \"2,0 c3 CE\" [label=\"p0\"];",
    ] {
        assert!(dot.contains(edge), "no `{edge}` in\n{dot}");
    }
    let none = cslc::fabric_check::dot(&out.image.meta, &out.image.routes, Some(4));
    assert!(!none.contains("->"), "{none}");
}

#[test]
fn wafer_sized_layouts_are_checked_in_linear_time() {
    // Every PE of a 750 x 994 rectangle relays colour 1 south and colour 2 east, and the
    // edges stop: about 1.5 million configured (PE, colour) pairs.
    let meta = csl_arch::image::Meta {
        memcpy: true,
        ..csl_arch::image::Meta::rect(Arch::Wse2, 750, 994)
    };
    use csl_arch::fabric::Direction::{East, North, Ramp, South, West};
    let mut routes = Vec::new();
    for y in 0..994u32 {
        for x in 0..750u32 {
            let rx = if y == 0 { vec![Ramp] } else { vec![North] };
            let tx = if y == 993 { vec![Ramp] } else { vec![South] };
            routes.push(csl_arch::image::ColorConfig::route(x, y, 1, rx, tx));
            let rx = if x == 0 { vec![Ramp] } else { vec![West] };
            let tx = if x == 749 { vec![Ramp] } else { vec![East] };
            routes.push(csl_arch::image::ColorConfig::route(x, y, 2, rx, tx));
        }
    }
    let placement = vec![0u32; 750 * 994];
    let (diags, took) = timed_check(&meta, &placement, &routes, 0b110);
    assert!(diags.is_empty(), "{diags:?}");
    // No timing assertion (the brief: none in tests): a quadratic check would take hours
    // here and show in the suite's time; the figure is printed for whoever looks.
    eprintln!("route check of 1.5 M configured pairs: {took:?}");
}

#[test]
fn a_wafer_sized_flood_is_checked_in_linear_time() {
    // PE (0, 0)'s CE floods colour 1 over a 750 x 994 rectangle: every PE takes it from
    // the WEST and the NORTH to its CE and passes it EAST and SOUTH. Every PE off the
    // first row and column gets each wavelet along many paths (E0706), and each of them
    // merges two large upstream trees: the backward searches must stay within budget.
    let (w, h) = (750u32, 994u32);
    let meta = csl_arch::image::Meta {
        memcpy: true,
        ..csl_arch::image::Meta::rect(Arch::Wse2, w, h)
    };
    use csl_arch::fabric::Direction::{East, North, Ramp, South, West};
    let mut routes = Vec::new();
    for y in 0..h {
        for x in 0..w {
            let mut rx = Vec::new();
            if x > 0 {
                rx.push(West);
            }
            if y > 0 {
                rx.push(North);
            }
            if rx.is_empty() {
                rx.push(Ramp);
            }
            let mut tx = vec![Ramp];
            if x + 1 < w {
                tx.push(East);
            }
            if y + 1 < h {
                tx.push(South);
            }
            routes.push(csl_arch::image::ColorConfig::route(x, y, 1, rx, tx));
        }
    }
    let placement = vec![0u32; (w * h) as usize];
    let (diags, took) = timed_check(&meta, &placement, &routes, 0b10);
    let codes: Vec<&str> = diags.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["E0706"], "{diags:?}");
    eprintln!("route check of a wafer-sized flood: {took:?}");
}

/// Runs the route check on one program class (`placement` all zeros) that reads and
/// writes the colours in `colors`, and times it (the time is reported, not asserted).
fn timed_check(
    meta: &csl_arch::image::Meta,
    placement: &[u32],
    routes: &[csl_arch::image::ColorConfig],
    colors: u32,
) -> (Vec<cslc::diag::Diagnostic>, std::time::Duration) {
    let routes: csl_arch::image::Routes = routes.iter().cloned().collect();
    let facts = [cslc::fabric_check::ProgramFacts {
        reads: colors,
        writes: colors,
        ..Default::default()
    }];
    let start = std::time::Instant::now();
    let diags = cslc::fabric_check::check(&cslc::fabric_check::CheckInput {
        meta,
        placement,
        routes: &routes,
        spans: &[],
        programs: &facts,
        host_streams: 0,
    });
    (diags, start.elapsed())
}
