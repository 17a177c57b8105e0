//! End-to-end tests of the Paint front end: floorplans under `tests/programs/tungsten/paint/`
//! with the small Tungsten programs they place are compiled with
//! [`cslc::paint::compile_floorplan`], run on the simulator, and the memory of the named
//! regions is read back through the symbol map, as `miget` would.

#![allow(clippy::unwrap_used)]

use csl_arch::Arch;
use csl_arch::image::Image;
use csl_arch::symmap::SymbolMap;
use cslc::paint::{PaintOptions, compile_floorplan, compile_source};
use cslsim::Simulator;
use std::path::PathBuf;

fn program_dir() -> PathBuf {
    csl_tests::repo_root().join("tests/programs/tungsten/paint")
}

/// Compiles a floorplan of the program directory, panicking with the diagnostics.
fn build(file: &str, arch: Arch, globals: &[(&str, i64)]) -> (Image, SymbolMap) {
    let opts = PaintOptions {
        arch,
        globals: globals.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        ..PaintOptions::default()
    };
    let comp = compile_floorplan(&program_dir().join(file), &opts);
    let rendered = cslc::diag::render_all(&comp.diagnostics, &comp.sources, false);
    let (Some(image), Some(map)) = (comp.image, comp.map) else {
        panic!("{file} does not compile:\n{rendered}");
    };
    // Whatever paint writes, the loader reads back.
    let elf = image.to_elf().unwrap();
    let image = Image::from_elf(&elf).unwrap();
    let map = SymbolMap::parse(&map.to_text()).unwrap();
    (image, map)
}

/// Runs until the fabric is idle and checks that nothing was left waiting.
fn run(image: &Image) -> Simulator {
    let mut sim = Simulator::new(image).unwrap();
    sim.run_until_idle(1_000_000)
        .unwrap_or_else(|e| panic!("the run failed: {e}"));
    sim
}

/// The 16-bit words of `REGION.SYMBOL` on every tile of the region, rows outermost.
fn read_words(sim: &Simulator, map: &SymbolMap, path: &str) -> Vec<Vec<u16>> {
    let (region, sym) = map.lookup(path).unwrap();
    region
        .tiles
        .iter()
        .map(|&(x, y)| {
            let mem = sim.pe(x, y).unwrap().memory();
            (0..sym.words())
                .map(|w| {
                    let a = (sym.addr + 2 * w) as usize;
                    u16::from_le_bytes([mem[a], mem[a + 1]])
                })
                .collect()
        })
        .collect()
}

#[test]
fn a_row_of_relays_sums_columns_through_the_colour_pair() {
    for n in [1i64, 2, 5] {
        let (image, map) = build("relay_row.paint", Arch::Wse3, &[("N", n)]);
        assert_eq!((image.meta.width, image.meta.height), (n as u32 + 2, 3));
        // The moat runs the empty class.
        assert_eq!(image.classes.len(), 2, "N={n}");
        let sim = run(&image);
        let sums = read_words(&sim, &map, "row.sum");
        let expect: Vec<Vec<u16>> = (1..=n as u16).map(|x| vec![(1..=x).sum()]).collect();
        assert_eq!(sums, expect, "N={n}");
    }
}

#[test]
fn rows_built_by_stacking_copies_of_one_tile_run_like_the_painted_row() {
    // `hstack(rep(tile(1 1) N))` is the row `rect(1 1 N 1)`; `vstack(rep(row 2))` adds a
    // second one below it; `split()` cuts the two apart again for `name()`.
    for n in [1i64, 3, 6] {
        let (image, map) = build("stacked_rows.paint", Arch::Wse3, &[("N", n)]);
        assert_eq!((image.meta.width, image.meta.height), (n as u32 + 2, 4));
        let text = map.to_text();
        assert!(
            text.contains(&format!("region top rect 1 1 {n} 1")),
            "{text}"
        );
        assert!(
            text.contains(&format!("region bottom rect 1 2 {n} 1")),
            "{text}"
        );
        let sim = run(&image);
        let expect: Vec<Vec<u16>> = (1..=n as u16).map(|x| vec![(1..=x).sum()]).collect();
        assert_eq!(read_words(&sim, &map, "top.sum"), expect, "N={n}");
        assert_eq!(read_words(&sim, &map, "bottom.sum"), expect, "N={n}");
    }
}

#[test]
fn the_relay_row_also_runs_on_wse2() {
    let (image, map) = build("relay_row.paint", Arch::Wse2, &[("N", 4)]);
    let sim = run(&image);
    assert_eq!(
        read_words(&sim, &map, "row.sum"),
        vec![vec![1], vec![3], vec![6], vec![10]]
    );
}

#[test]
fn the_moat_turns_wavelets_around_onto_the_partner_colour() {
    for n in [2i64, 4] {
        let (image, map) = build("turnaround.paint", Arch::Wse3, &[("N", n), ("K", 4)]);
        let sim = run(&image);
        assert_eq!(
            read_words(&sim, &map, "first.got"),
            vec![vec![100, 101, 102, 103]],
            "N={n}"
        );
    }
}

#[test]
fn a_routing_only_floorplan_loads_and_idles() {
    let src = "let c = color()\nlet r = rect(0 0 3 2)\nr : paint(c [L|LXR|R])\nunion(r)";
    let comp = compile_source("idle.paint", src, &PaintOptions::default());
    assert!(!comp.has_errors());
    let image = comp.image.unwrap();
    assert_eq!(image.classes.len(), 1);
    assert!(image.classes[0].code.is_empty());
    let sim = run(&image);
    assert_eq!(sim.cycle(), 0);
}

#[test]
fn the_map_lists_named_regions_and_their_symbols() {
    let (_, map) = build("relay_row.paint", Arch::Wse3, &[("N", 3)]);
    let text = map.to_text();
    assert!(text.contains("fabric 5 3 wse3"), "{text}");
    assert!(text.contains("region row rect 1 1 3 1"), "{text}");
    assert!(text.contains("symbol row.sum addr="), "{text}");
    // Memory-mapped registers are not data the host can set.
    assert!(!text.contains("row.col"), "{text}");
}

#[test]
fn without_the_colour_swap_the_moat_cannot_turn_wavelets_around() {
    // The same floorplan without `colorpair` on the moat tile: the wavelet tagged `a`
    // reaches a router that has no route for `a`, and the run fails.
    let dir = program_dir();
    let text = std::fs::read_to_string(dir.join("turnaround.paint")).unwrap();
    let text: String = text
        .lines()
        .filter(|l| !l.contains("colorpair"))
        .map(|l| format!("{l}\n"))
        .collect();
    let display = dir.join("no_swap.paint").to_string_lossy().into_owned();
    let opts = PaintOptions {
        globals: vec![("N".into(), 2), ("K".into(), 4)],
        ..PaintOptions::default()
    };
    let comp = compile_source(&display, &text, &opts);
    let rendered = cslc::diag::render_all(&comp.diagnostics, &comp.sources, false);
    let image = comp.image.unwrap_or_else(|| panic!("{rendered}"));
    let mut sim = Simulator::new(&image).unwrap();
    let err = sim.run_until_idle(1_000_000).unwrap_err();
    assert!(
        matches!(err, cslsim::SimError::Routing { .. }),
        "expected a routing error, got {err}"
    );
}

#[test]
fn message_passing_colours_load_on_wse3() {
    let dir = program_dir();
    let text = std::fs::read_to_string(dir.join("relay_row.paint"))
        .unwrap()
        .replace("row : name('row)", "row : name('row)\nrow : mp()");
    let display = dir.join("mp.paint").to_string_lossy().into_owned();
    let opts = PaintOptions {
        globals: vec![("N".into(), 3)],
        ..PaintOptions::default()
    };
    let comp = compile_source(&display, &text, &opts);
    let rendered = cslc::diag::render_all(&comp.diagnostics, &comp.sources, false);
    let image = comp.image.unwrap_or_else(|| panic!("{rendered}"));
    // The relays route both socket colours themselves except where `|L`/`|R` dropped a
    // route: the first relay has no route for `a`, the last none for `ap`.
    let mp: Vec<(u32, u8)> = image
        .routes
        .iter()
        .filter(|r| r.message_passing)
        .map(|r| (r.x, r.color))
        .collect();
    assert_eq!(mp, vec![(1, 0)]);
    let sim = run(&image);
    let _ = sim;
}

#[test]
fn switch_positions_let_senders_take_turns_on_one_colour() {
    // flip (round 1) and an "advance" control wavelet (round 2) hand the colour on; a
    // "reset" control wavelet from the farthest sender re-arms every switch in between.
    for (arch, n) in [(Arch::Wse3, 2i64), (Arch::Wse3, 4), (Arch::Wse2, 3)] {
        let k = 3i64;
        let (image, map) = build("drain.paint", arch, &[("N", n), ("K", k)]);
        let sim = run(&image);
        let mut want = Vec::new();
        for round in [0u16, 100] {
            for x in (0..n as u16).rev() {
                want.extend((0..k as u16).map(|i| round + 10 * x + i));
            }
        }
        assert_eq!(
            read_words(&sim, &map, "collector.got"),
            vec![want],
            "{arch:?} N={n}"
        );
    }
}

#[test]
fn the_disassembly_lists_every_class() {
    let (image, _) = build("drain.paint", Arch::Wse3, &[("N", 2), ("K", 2)]);
    let text = cslc::link::disassembly(&image);
    assert!(
        text.contains("; class 0: ") && text.contains("; class 1: "),
        "{text}"
    );
    assert!(text.contains("drain.w {out=0, K=2}"), "{text}");
    assert!(text.contains("collect.w {inp=0, M=8}"), "{text}");
    assert!(text.contains(";   fn main at 0"), "{text}");
    assert!(text.contains("dsd_op op=mov16"), "{text}");
}

/// A table of `image` (`router` or `switch`) over its whole rectangle, in the default
/// order, as `miget symbol=router` reads it.
fn table(image: &Image, map: &SymbolMap, name: &str) -> Vec<u16> {
    let t = cslsim::tools::TableTarget::resolve(map, image, name, None)
        .unwrap()
        .unwrap();
    cslsim::tools::get_table(image, &t)
}

/// Router words of `(x, y, colour, word)` on a `w`-wide rectangle of `h` rows, the rest 0.
fn router_words(w: usize, h: usize, set: &[(usize, usize, usize, u16)]) -> Vec<u16> {
    let mut v = vec![0u16; w * h * 24];
    for &(x, y, c, word) in set {
        v[(y * w + x) * 24 + c] = word;
    }
    v
}

/// drain.paint's tables with N senders, by the format of `csl_arch::tables` (colour 0;
/// ports N=1 S=2 E=4 W=8 core=16, rx at bit 0, tx at bit 5): senders core→east, the
/// collector west→core; senders after the first have position 1 west→east.
fn drain_tables(n: usize) -> (Vec<u16>, Vec<u16>) {
    let mut set: Vec<(usize, usize, usize, u16)> =
        (0..n).map(|x| (x, 0, 0, 0x10 | 0x4 << 5)).collect();
    set.push((n, 0, 0, 0x8 | 0x10 << 5));
    let router = router_words(n + 1, 1, &set);
    let mut switch = vec![0u16; (n + 1) * 24 * 4];
    for x in 1..n {
        let at = x * 24 * 4;
        switch[at..at + 4].copy_from_slice(&[0x8000, 0x8 | 0x400 | 0x4 << 5, 0, 0]);
    }
    (router, switch)
}

#[test]
fn the_plan_reads_back_as_router_and_switch_tables_computed_by_hand() {
    // The moat: (3,1) sends b back west and swaps on x; its a carries only the swap.
    let (image, map) = build("turnaround.paint", Arch::Wse3, &[("N", 2), ("K", 4)]);
    let want = router_words(
        4,
        3,
        &[
            (1, 1, 0, 0x10 | 0x4 << 5),
            (1, 1, 1, 0x4 | 0x10 << 5),
            (2, 1, 0, 0x8 | 0x4 << 5),
            (2, 1, 1, 0x4 | 0x8 << 5),
            (3, 1, 0, 0x400),
            (3, 1, 1, 0x400 | 0x8 | 0x8 << 5),
        ],
    );
    assert_eq!(table(&image, &map, "router"), want);
    assert!(table(&image, &map, "switch").iter().all(|&w| w == 0));
    let (image, map) = build("drain.paint", Arch::Wse3, &[("N", 3), ("K", 3)]);
    let (router, switch) = drain_tables(3);
    assert_eq!(table(&image, &map, "router"), router);
    assert_eq!(table(&image, &map, "switch"), switch);
}

#[test]
fn routes_written_as_tables_run_like_painted_ones() {
    // drain.paint without its paint() and switch() lines, routed by tables instead.
    let dir = program_dir();
    let text: String = std::fs::read_to_string(dir.join("drain.paint"))
        .unwrap()
        .lines()
        .filter(|l| !l.contains("paint(") && !l.contains("switch("))
        .map(|l| format!("{l}\n"))
        .collect();
    let display = dir.join("tables.paint").to_string_lossy().into_owned();
    let (n, k) = (3usize, 3i64);
    let opts = PaintOptions {
        globals: vec![("N".into(), n as i64), ("K".into(), k)],
        ..PaintOptions::default()
    };
    let comp = compile_source(&display, &text, &opts);
    let rendered = cslc::diag::render_all(&comp.diagnostics, &comp.sources, false);
    let (Some(mut image), Some(map)) = (comp.image, comp.map) else {
        panic!("{rendered}");
    };
    assert!(image.routes.is_empty());
    let (router, switch) = drain_tables(n);
    for (name, words) in [("router", &router), ("switch", &switch)] {
        let t = cslsim::tools::TableTarget::resolve(&map, &image, name, None)
            .unwrap()
            .unwrap();
        cslsim::tools::set_table(&mut image, &t, words, std::path::Path::new("t.bin")).unwrap();
    }
    let sim = run(&image);
    let mut want = Vec::new();
    for round in [0u16, 100] {
        for x in (0..n as u16).rev() {
            want.extend((0..k as u16).map(|i| round + 10 * x + i));
        }
    }
    assert_eq!(read_words(&sim, &map, "collector.got"), vec![want]);
}
