//! Unit tests of the Paint front end: parsing, evaluation and the resolved floorplan
//! (routes, colour swap, placement, bindings, message passing, names) and the image of
//! routing-only floorplans.

use super::*;
use crate::tungsten::SocketBinding;
use csl_arch::fabric::Direction::{East, North, Ramp, South, West};

fn opts(globals: &[(&str, i64)]) -> PaintOptions {
    PaintOptions {
        globals: globals.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        ..PaintOptions::default()
    }
}

fn compile(src: &str, globals: &[(&str, i64)]) -> PaintCompilation {
    compile_source("t.paint", src, &opts(globals))
}

fn rendered(c: &PaintCompilation) -> String {
    crate::diag::render_all(&c.diagnostics, &c.sources, false)
}

/// The plan of a floorplan that must evaluate without errors.
fn plan(src: &str, globals: &[(&str, i64)]) -> Floorplan {
    let c = compile(src, globals);
    let errors: Vec<_> = c
        .diagnostics
        .iter()
        // Finding the programs comes after the plan.
        .filter(|d| d.is_error() && d.code.starts_with("E12") && d.code != "E1222")
        .collect();
    assert!(errors.is_empty(), "{}", rendered(&c));
    c.plan.expect("a plan")
}

/// The codes of the errors of a floorplan.
fn error_codes(src: &str, globals: &[(&str, i64)]) -> Vec<&'static str> {
    compile(src, globals)
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.code)
        .collect()
}

const ROW: &str = "
let a  = color()
let ap = color()
let row = rect(1 1 N 1)
row : paint(ap [CXR|R])
row : paint(a  [L|LXC])
row : colorpair(a ap)
union(row rect(0 0 N+2 1) rect(0 2 N+2 1) rect(0 1 1 1) rect(N+1 1 1 1))
";

#[test]
fn the_example_row_paints_routes_and_colour_swap() {
    let p = plan(ROW, &[("N", 4)]);
    assert_eq!((p.width, p.height), (6, 3));
    assert!(p.in_layout.iter().all(|&b| b));
    // First relay: sends east, receives nothing (|L edge), no swap needed.
    let first = p.config(1, 1, 1).unwrap();
    assert_eq!(
        (first.rx.clone(), first.tx.clone()),
        (vec![Ramp], vec![East])
    );
    assert!(!first.color_swap_x && !first.color_swap_y);
    assert!(p.config(1, 1, 0).is_none());
    // Middle relays: a from the west to the core, ap from the core east; both swap on x.
    for x in 2..4 {
        let a = p.config(x, 1, 0).unwrap();
        let ap = p.config(x, 1, 1).unwrap();
        assert_eq!((a.rx.clone(), a.tx.clone()), (vec![West], vec![Ramp]));
        assert_eq!((ap.rx.clone(), ap.tx.clone()), (vec![Ramp], vec![East]));
        assert!(a.color_swap_x && ap.color_swap_x);
        assert!(!a.color_swap_y && !ap.color_swap_y);
    }
    // Last relay: receives only; the partner keeps the swap without routes.
    let last_ap = p.config(4, 1, 1).unwrap();
    assert!(last_ap.rx.is_empty() && last_ap.tx.is_empty() && last_ap.color_swap_x);
    // The moat is idle.
    assert!(
        p.routes
            .iter()
            .all(|(r, _)| r.y == 1 && (1..=4).contains(&r.x))
    );
    assert!(p.tiles.iter().all(Option::is_none));
}

#[test]
fn a_routing_only_floorplan_links_into_an_image() {
    let c = compile(ROW, &[("N", 3)]);
    assert!(!c.has_errors(), "{}", rendered(&c));
    let image = c.image.unwrap();
    assert_eq!((image.meta.width, image.meta.height), (5, 3));
    assert_eq!((image.meta.fabric_width, image.meta.fabric_height), (5, 3));
    assert_eq!((image.meta.offset_x, image.meta.offset_y), (0, 0));
    assert!(!image.meta.memcpy);
    assert_eq!(image.meta.arch, Arch::Wse3);
    assert_eq!(image.classes.len(), 1);
    assert!(image.placement.iter().all(|&c| c == 0));
    assert_eq!(image.meta.params.get("N").map(String::as_str), Some("3"));
    // It round-trips through ELF and loads.
    let elf = image.to_elf().unwrap();
    let back = Image::from_elf(&elf).unwrap();
    assert_eq!(back.routes, image.routes);
    let map = c.map.unwrap();
    assert!(map.regions.is_empty());
}

#[test]
fn edge_suppression_removes_only_the_suppressed_side() {
    let p = plan(
        "let c = color()\nlet r = rect(0 0 3 1)\nr : paint(c [LXRC|R])\nunion(r)",
        &[],
    );
    // Middle and left: L -> R and C; the right edge keeps L -> C.
    assert_eq!(p.config(0, 0, 0).unwrap().tx, vec![East, Ramp]);
    assert_eq!(p.config(2, 0, 0).unwrap().tx, vec![Ramp]);
    assert_eq!(p.config(2, 0, 0).unwrap().rx, vec![West]);
}

#[test]
fn vertical_sides_follow_the_router() {
    let p = plan(
        "let c = color()\nlet r = rect(0 0 1 3)\nr : paint(c [D|DXU|U])\nr : paint(c [DXC])\nunion(r)",
        &[],
    );
    // U is +y (router south), D is -y (router north).
    let mid = p.config(0, 1, 0).unwrap();
    assert_eq!(mid.rx, vec![North]);
    assert_eq!(mid.tx, vec![South, Ramp]);
    // Top tile: `D|` drops DXU there; only DXC, whose input has no neighbour (harmless).
    assert_eq!(p.config(0, 0, 0).unwrap().tx, vec![Ramp]);
    // Bottom tile: `|U` drops it too.
    assert_eq!(p.config(0, 2, 0).unwrap().tx, vec![Ramp]);
}

#[test]
fn routes_merge_only_when_one_switch_position_expresses_them() {
    // Multicast and fan-in merge.
    let p = plan(
        "let c = color()\nlet r = rect(1 0 1 1)\nr : paint(c [LXR LXC])\nr : paint(c [RXR RXC])\nunion(rect(0 0 3 1))",
        &[],
    );
    let _ = p;
    assert_eq!(
        error_codes(
            "let c = color()\nlet r = rect(1 0 1 1)\nr : paint(c [LXC CXR])\nunion(rect(0 0 3 1))",
            &[]
        ),
        vec!["E1216"]
    );
    let p = plan(
        "let c = color()\nlet r = rect(1 0 1 1)\nr : paint(c [LXC RXC])\nunion(rect(0 0 3 1))",
        &[],
    );
    assert_eq!(p.config(1, 0, 0).unwrap().rx, vec![West, East]);
}

#[test]
fn a_route_off_the_layout_is_an_error_with_the_suppression_as_help() {
    let c = compile(
        "let c = color()\nlet r = rect(0 0 3 1)\nr : paint(c [CXR])\nunion(r)",
        &[],
    );
    let d = c.diagnostics.iter().find(|d| d.code == "E1217").unwrap();
    assert!(d.help.as_deref().unwrap().contains("[CXR|R]"), "{d:?}");
    // A hole in the layout counts too.
    assert_eq!(
        error_codes(
            "let c = color()\nlet r = rect(0 0 1 1)\nr : paint(c [CXR])\nunion(r rect(2 0 1 1))",
            &[]
        ),
        vec!["E1217"]
    );
}

#[test]
fn fresh_colours_skip_colours_named_anywhere() {
    let p = plan(
        "let a = color()\nlet b = color()\nlet p = color(0)\nlet r = rect(0 0 1 1)\nr : paint(a [CXC])\nr : paint(b [CXC])\nr : paint(p [CXC])\nunion(r)",
        &[],
    );
    let colors: Vec<u8> = p.routes.iter().map(|(r, _)| r.color).collect();
    assert_eq!(colors, vec![0, 1, 2]);
    // A computed color(N) of a colour color() handed out conflicts.
    assert_eq!(
        error_codes("let a = color()\nlet b = color(a+0)\nunion(tile())", &[]),
        vec!["E1214"]
    );
    assert_eq!(
        error_codes("let a = color(24)\nunion(tile())", &[]),
        vec!["E1213"]
    );
}

#[test]
fn all_colours_can_be_taken_and_then_none_is_left() {
    let mut src = String::new();
    for i in 0..24 {
        src.push_str(&format!("let c{i} = color()\n"));
    }
    src.push_str("union(tile())\n");
    assert!(error_codes(&src, &[]).is_empty());
    src.insert_str(0, "let extra = color()\n");
    assert_eq!(error_codes(&src, &[]), vec!["E1213"]);
}

#[test]
fn the_moat_turnaround_swaps_back_onto_the_partner() {
    // East moat tile: what arrives from the west as `a` goes back west as `b`.
    let p = plan(
        "let a = color()\nlet b = color()\nlet m = rect(2 0 1 1)\nm : paint(b [LXL])\nm : colorpair(a b)\nunion(rect(0 0 3 1))",
        &[],
    );
    let b = p.config(2, 0, 1).unwrap();
    assert_eq!((b.rx.clone(), b.tx.clone()), (vec![West], vec![West]));
    assert!(b.color_swap_x);
    let a = p.config(2, 0, 0).unwrap();
    assert!(a.rx.is_empty() && a.tx.is_empty() && a.color_swap_x);
}

#[test]
fn colorpair_needs_a_hardware_pair() {
    assert_eq!(
        error_codes(
            "let r = tile()\nr : colorpair(color(2) color(4))\nunion(r)",
            &[]
        ),
        vec!["E1220"]
    );
    assert_eq!(
        error_codes(
            "let r = tile()\nr : colorpair(color(3) color(2))\nunion(r)",
            &[]
        ),
        Vec::<&str>::new()
    );
}

#[test]
fn code_binds_sockets_through_colour_pairs_and_params_by_type() {
    let p = plan(
        "let a = color()\nlet ap = color()\nlet s = color()\nlet row = rect(0 0 3 1)\nrow : paint(a [L|LXC])\nrow : paint(ap [CXR|R])\nrow : colorpair(a ap)\nrow : code('relay [a:a out:s N:3 X:1.5])\nrow : name('row)\nunion(row)",
        &[],
    );
    let t = p.tile(1, 0).unwrap();
    assert_eq!(
        t.sockets,
        vec![
            ("a".to_string(), SocketBinding { rx: 0, tx: 1 }),
            ("out".to_string(), SocketBinding { rx: 2, tx: 2 }),
        ]
    );
    let call = &p.codes[t.code];
    assert_eq!(call.prog, "relay");
    assert_eq!(call.params.len(), 2);
    assert!(!t.mp);
    assert_eq!(p.names.len(), 1);
    assert_eq!(p.names[0].tiles, vec![(0, 0), (1, 0), (2, 0)]);
}

#[test]
fn both_swap_axes_make_the_core_send_on_the_receive_colour() {
    let p = plan(
        "let a = color()\nlet b = color()\nlet t = rect(1 1 1 1)\nt : paint(a [LXC])\nt : paint(b [UXC])\nt : colorpair(a b)\nt : code('p [s:a])\nunion(rect(0 0 3 3))",
        &[],
    );
    let cfg = p.config(1, 1, 0).unwrap();
    assert!(cfg.color_swap_x && cfg.color_swap_y);
    assert_eq!(
        p.tile(1, 1).unwrap().sockets[0].1,
        SocketBinding { rx: 0, tx: 0 }
    );
}

#[test]
fn mp_covers_socket_colours_the_tile_does_not_route() {
    let p = plan(
        "let a = color()\nlet b = color()\nlet r = rect(0 0 2 1)\nr : paint(b [CXC])\nr : code('p [x:a y:b])\nr : mp()\nunion(r)",
        &[],
    );
    let a = p.config(0, 0, 0).unwrap();
    assert!(a.message_passing && a.rx.is_empty());
    assert!(!p.config(0, 0, 1).unwrap().message_passing);
    assert!(p.tile(1, 0).unwrap().mp);
    // Explicit colours; painting one of them is an error.
    assert_eq!(
        error_codes(
            "let a = color()\nlet r = tile()\nr : paint(a [CXC])\nr : mp(a)\nunion(r)",
            &[]
        ),
        vec!["E1225"]
    );
    let c = compile_source(
        "t.paint",
        "let r = tile()\nr : mp()\nunion(r)",
        &PaintOptions {
            arch: Arch::Wse2,
            ..PaintOptions::default()
        },
    );
    assert_eq!(c.diagnostics[0].code, "E1225");
}

#[test]
fn placement_errors() {
    assert_eq!(
        error_codes(
            "let r = rect(0 0 2 1)\nr : code('p)\ntile(1 0) : code('q)\nunion(r)",
            &[]
        ),
        vec!["E1221"]
    );
    assert_eq!(
        error_codes(
            "let r = rect(0 0 2 1)\nr : name('g)\nr : code('p)\nunion(r)",
            &[]
        ),
        vec!["E1224"]
    );
    assert_eq!(
        error_codes(
            "let r = rect(0 0 2 1)\nrect(0 0 3 1) : code('p)\nunion(r)",
            &[]
        ),
        vec!["E1218"]
    );
}

#[test]
fn functions_rings_tiles_and_globals() {
    let p = plan(
        "define frame(r c) = paint(ring(r) c [CXC])\nlet N = 2\nlet core = rect(1 1 N N)\nlet c = color()\nframe(core c)\nunion(core ring(core))",
        &[("N", 3)],
    );
    // The command line wins over the file's `let N = 2`.
    assert_eq!((p.width, p.height), (5, 5));
    // The ring is the 16 tiles around the 3x3 core.
    assert_eq!(p.routes.len(), 16);
    assert!(p.config(2, 2, 0).is_none());
    assert!(p.config(0, 0, 0).is_some());
    let p = plan(
        "let c = color()\ntile() : paint(c [CXC])\nunion(tile() tile(1 1))\n",
        &[],
    );
    assert!(p.config(0, 0, 0).is_some());
    assert_eq!(p.in_layout, vec![true, false, false, true]);
}

/// Which tiles of the layout's rectangle are in the layout, one string per row (`#` in,
/// `.` out).
fn picture(src: &str) -> Vec<String> {
    let p = plan(src, &[]);
    p.in_layout
        .chunks(p.width as usize)
        .map(|row| row.iter().map(|&t| if t { '#' } else { '.' }).collect())
        .collect()
}

#[test]
fn stacks_place_pieces_one_after_another() {
    // The first piece stays; the next start where the previous ends, aligned with the
    // first piece's north edge (hstack) or west edge (vstack).
    assert_eq!(
        picture("hstack(rect(0 0 2 1) rect(5 3 1 2) tile(9 9))"),
        vec!["####", "..#."]
    );
    assert_eq!(
        picture("vstack(rep(rect(1 0 2 1) 2) rect(7 7 1 1))"),
        vec![".##", ".##", ".#."]
    );
    // Copies of a region with a hole keep the hole.
    assert_eq!(
        picture("hstack(rep(union(tile(0 0) tile(1 1)) 3))"),
        vec!["#.#.#.", ".#.#.#"]
    );
    // Pieces may move west or north, but the first one fixes where the stack starts.
    assert_eq!(
        picture("hstack(tile(1 1) rect(4 0 1 2))"),
        vec!["...", ".##", "..#"]
    );
}

#[test]
fn split_cuts_the_bounding_box_into_strips() {
    // 5 columns in 2 pieces: columns 0..2 and 2..5.
    assert_eq!(picture("split(rect(0 0 5 2) 'h 2 0)"), vec!["##", "##"]);
    assert_eq!(
        picture("split(rect(0 0 5 2) 'h 2 1)"),
        vec!["..###", "..###"]
    );
    assert_eq!(
        picture("split(rect(0 1 2 3) 'v 3 2)"),
        vec!["..", "..", "..", "##"]
    );
    // Only the region's own tiles are in a piece.
    assert_eq!(
        picture("split(union(tile(0 0) tile(2 1)) 'h 3 2)"),
        vec!["...", "..#"]
    );
    // split() undoes hstack().
    assert_eq!(
        picture("split(hstack(rect(0 0 2 2) rect(0 0 2 2)) 'h 2 1)"),
        picture("rect(2 0 2 2)")
    );
}

#[test]
fn stack_and_split_errors() {
    let cases = [
        ("let r = rep(tile() 2)\nunion(tile())", "E1211"),
        ("hstack()", "E1211"),
        ("hstack(rep(tile() 0))", "E1218"),
        ("hstack(rep(rect(0 0 1000 1) 3))", "E1218"),
        ("vstack(tile() 3)", "E1210"),
        ("split(rect(0 0 4 1) 'x 2 0)", "E1210"),
        ("split(rect(0 0 4 1) 'h 5 0)", "E1218"),
        ("split(rect(0 0 4 1) 'h 2 2)", "E1218"),
        ("split(union(tile(0 0) tile(0 2)) 'v 3 1)", "E1218"),
        // The names are builtins.
        ("define split(a) = a\nunion(tile())", "E1209"),
    ];
    for (src, code) in cases {
        assert_eq!(error_codes(src, &[]), vec![code], "{src}");
    }
}

#[test]
fn the_last_expression_is_the_layout() {
    let c = compile("let r = rect(0 0 1 1)\n3\nunion(r)", &[]);
    assert!(!c.has_errors());
    assert_eq!(c.diagnostics[0].code, "E1228");
    assert_eq!(
        error_codes("let r = rect(0 0 1 1)", &[]),
        Vec::<&str>::new()
    );
    assert_eq!(error_codes("let x = 3", &[]), vec!["E1219"]);
    assert_eq!(error_codes("3 + 4", &[]), vec!["E1219"]);
}

#[test]
fn syntax_errors_cost_one_item() {
    let c = compile(
        "let a = (1 +\nlet b = 2 $\nlet r = rect(0 0 b b)\nunion(r)",
        &[],
    );
    let codes: Vec<&str> = c.diagnostics.iter().map(|d| d.code).collect();
    assert!(codes.contains(&"E1201"), "{}", rendered(&c));
    assert!(
        codes.contains(&"E1205") || codes.contains(&"E1204"),
        "{}",
        rendered(&c)
    );
}

#[test]
fn arithmetic_is_integer_with_c_division() {
    let p = plan("let r = rect(7/2 (0-7)%3+2 2*3-5 (1))\nunion(r)", &[]);
    // x = 3, y = -1 + 2 = 1, w = 1, h = 1.
    assert_eq!((p.width, p.height), (4, 2));
    assert_eq!(
        error_codes("let r = rect(1/0 0 1 1)\nunion(r)", &[]),
        vec!["E1212"]
    );
}

#[test]
fn runaway_recursion_is_a_diagnostic() {
    assert_eq!(
        error_codes("define f(x) = f(x)\nunion(f(tile()))", &[]),
        vec!["E1227"]
    );
}

#[test]
fn arguments_parse_in_key_value_style() {
    let args = |v: &[&str]| parse_args(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    let inv = args(&[
        "dir/bench.paint",
        "lib=a",
        "lib=b",
        "arch=sdr",
        "NX=8",
        "NY=0x10",
        "-O0",
    ])
    .unwrap()
    .unwrap();
    assert_eq!(inv.out, PathBuf::from("bench.obj"));
    assert_eq!(inv.map, PathBuf::from("bench.map"));
    assert_eq!(inv.options.arch, Arch::Wse3);
    assert_eq!(
        inv.options.lib_dirs,
        vec![PathBuf::from("a"), PathBuf::from("b")]
    );
    assert_eq!(
        inv.options.globals,
        vec![("NX".to_string(), 8), ("NY".to_string(), 16)]
    );
    assert!(!inv.options.optimize);
    assert!(!inv.deny_warnings);
    let inv = args(&["f.paint", "--deny-warnings"]).unwrap().unwrap();
    assert!(inv.deny_warnings);
    assert!(args(&["--help"]).unwrap().is_none());
    assert!(
        args(&["f.paint", "arch=foo"])
            .unwrap_err()
            .contains("arch=foo")
    );
    assert!(
        args(&["f.paint", "NX=abc"])
            .unwrap_err()
            .contains("integer")
    );
    assert!(args(&[]).is_err());
    assert!(args(&["a.paint", "b.paint"]).is_err());
    assert!(args(&["f.paint", "--bogus"]).is_err());
    let inv = args(&["f.paint", "arch=wse2", "out=x.elf", "map=y.map"])
        .unwrap()
        .unwrap();
    assert_eq!(inv.options.arch, Arch::Wse2);
    assert_eq!(inv.out, PathBuf::from("x.elf"));
    assert_eq!(inv.asm, None);
    let inv = args(&["f.paint", "asm=f.asm"]).unwrap().unwrap();
    assert_eq!(inv.asm, Some(PathBuf::from("f.asm")));
}

#[test]
fn a_missing_file_is_one_clear_error() {
    let c = compile_floorplan(Path::new("/nonexistent/x.paint"), &PaintOptions::default());
    assert_eq!(c.diagnostics.len(), 1);
    assert_eq!(c.diagnostics[0].code, "E1229");
}

#[test]
fn exponential_evaluation_runs_out_of_fuel() {
    let mut src = String::from("define f0(r) = r\n");
    for i in 1..40 {
        src.push_str(&format!(
            "define f{i}(r) = union(f{p}(r) f{p}(r))\n",
            p = i - 1
        ));
    }
    src.push_str("union(f39(tile()))\n");
    assert_eq!(error_codes(&src, &[]), vec!["E1227"]);
}

#[test]
fn switch_adds_positions_to_the_painted_routes() {
    use csl_arch::image::{PopMode, SwitchPos};
    let p = plan(
        "let c = color()
let senders = rect(0 0 3 1)
senders : paint(c [CXR])
rect(1 0 2 1) : switch(c [LXR] [RXC] [ring pop_on_advance start:1])
tile(3 0) : paint(c [LXC])
union(senders tile(3 0))",
        &[],
    );
    // The farthest sender has position 0 only.
    assert!(p.config(0, 0, 0).unwrap().switches.is_none());
    for x in 1..3 {
        let cfg = p.config(x, 0, 0).unwrap();
        assert_eq!((cfg.rx.clone(), cfg.tx.clone()), (vec![Ramp], vec![East]));
        let sw = cfg.switches.as_ref().unwrap();
        assert_eq!(
            sw.positions,
            [
                SwitchPos {
                    rx: Some(West),
                    tx: Some(vec![East])
                },
                SwitchPos {
                    rx: Some(East),
                    tx: Some(vec![Ramp])
                },
                SwitchPos::default()
            ]
        );
        assert!(sw.ring_mode);
        assert_eq!(sw.pop_mode, PopMode::PopOnAdvance);
        assert_eq!(sw.current, 1);
    }
}

#[test]
fn switch_positions_count_for_the_colour_swap() {
    // Position 0 receives from the core only; position 1 receives from the west, so the
    // pair swaps on x.
    let p = plan(
        "let a = color()
let ap = color()
let t = tile(1 0)
t : paint(ap [CXR])
t : switch(ap [LXR])
t : colorpair(a ap)
union(rect(0 0 3 1))",
        &[],
    );
    assert!(p.config(1, 0, 1).unwrap().color_swap_x);
    assert!(p.config(1, 0, 0).unwrap().color_swap_x);
}

#[test]
fn bad_switches_are_e1230() {
    let cases = [
        // No paint() of the colour: position 0 is missing.
        "let c = color()\ntile() : switch(c [LXR])\nunion(rect(0 0 2 1))",
        // Two inputs in one position.
        "let c = color()\ntile(1 0) : paint(c [CXR])\ntile(1 0) : switch(c [LUXR])\nunion(rect(0 0 3 2))",
        // Two routes in one bracket.
        "let c = color()\ntile(1 0) : paint(c [CXR])\ntile(1 0) : switch(c [LXR RXL])\nunion(rect(0 0 3 1))",
        // Four positions.
        "let c = color()\ntile(1 0) : paint(c [CXR])\ntile(1 0) : switch(c [LXR] [LXC] [RXC] [CXL])\nunion(rect(0 0 3 1))",
        // An unknown option, and a start position the switch lacks.
        "let c = color()\ntile(1 0) : paint(c [CXR])\ntile(1 0) : switch(c [LXR] [spin])\nunion(rect(0 0 3 1))",
        "let c = color()\ntile(1 0) : paint(c [CXR])\ntile(1 0) : switch(c [LXR] [start:2])\nunion(rect(0 0 3 1))",
        // A position that sends off the layout.
        "let c = color()\ntile(1 0) : paint(c [CXR])\ntile(1 0) : switch(c [RXU])\nunion(rect(0 0 3 1))",
        // Two switches of one colour on a tile.
        "let c = color()\ntile(1 0) : paint(c [CXR])\ntile(1 0) : switch(c [LXR])\ntile(1 0) : switch(c [RXC])\nunion(rect(0 0 3 1))",
    ];
    for src in cases {
        assert_eq!(error_codes(src, &[]), vec!["E1230"], "{src}");
    }
}

/// `--deny-warnings` makes every diagnostic an error once one is a warning, and leaves
/// error-only or empty lists alone.
#[test]
fn deny_warnings_promotes_only_when_a_warning_is_present() {
    use crate::diag::{Diagnostic, Severity, deny_warnings};
    let mut none: Vec<Diagnostic> = Vec::new();
    assert!(!deny_warnings(&mut none));
    let mut errors = vec![Diagnostic::global("E0001", "bad")];
    assert!(!deny_warnings(&mut errors));
    let mut mixed = vec![Diagnostic::global("E0001", "bad"), {
        let mut w = Diagnostic::global("E0701", "a route goes nowhere");
        w.severity = Severity::Warning;
        w
    }];
    assert!(deny_warnings(&mut mixed));
    assert!(mixed.iter().all(Diagnostic::is_error));
}
