//! The Tungsten-flow tools `miset`, `simfabric` and `miget` (`src/bin/`, `src/tools.rs`):
//! round trips through tile patches and core files, the end-of-run report (orphan
//! wavelets, blocked tiles, the cycle budget), determinism, and one-line errors with exit
//! status 1 for every kind of bad input. Expected values are computed independently of
//! the tools (file orders by hand, memory through the simulator's loader).

mod common;

use common::tools::{
    arg, assert_error, dir, get_ok, map_3x2, miget, miset, read_words, set_ok, simfabric,
    write_words,
};
use common::{Asm, MAIN, X, fabric_image, image, main_task, pair_image, route};
use csl_arch::dsd::DsdOpcode;
use csl_arch::fabric::Arch;
use csl_arch::image::{ColorConfig, Image, ProgramClass};
use csl_arch::isa::{BinOp, NumTy, Op, Width};
use cslsim::Simulator;
use cslsim::tools::{self, KeyArgs, Stop, SymbolTarget, ToolError};
use std::path::{Path, PathBuf};

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn write_image(p: &Path, img: &Image) {
    std::fs::write(p, img.to_elf().expect("encode")).expect("write image");
}

/// The symbol map of the 3x2 test images: region `all` (every tile), region `odd`
/// (three tiles, not a rectangle), `v` (3 words at 0x10) and `x` (one u32 at 0x20) on
/// both.
fn map() -> String {
    map_3x2(
        "wse2",
        "symbol all.x addr=0x0020 bytes=4 elem=u32 order=\"y x _word\"\n\
         symbol odd.v addr=0x0010 bytes=6 elem=xp order=\"y x _word\"\n",
    )
}

/// A class with 0x40 bytes of initial memory (byte i = 0xA0 ^ i) that runs nothing.
fn idle_class() -> ProgramClass {
    let mut a = Asm::new("idle");
    a.func("unused", 1, 0, 0);
    a.ret_void();
    let bytes: Vec<u8> = (0..0x40u8).map(|i| 0xA0 ^ i).collect();
    a.poke(0, &bytes);
    a.build()
}

/// A fresh directory `dir("tools", name)` holding `a.img` (3x2 tiles of `idle_class`) and `a.map`
/// ([`map`]); returns the directory and the two paths.
fn idle_with_map(name: &str) -> (PathBuf, PathBuf, PathBuf) {
    let d = dir("tools", name);
    let img_path = d.join("a.img");
    let map_path = d.join("a.map");
    write_image(
        &img_path,
        &image(3, 2, vec![idle_class()], vec![0; 6], vec![]),
    );
    std::fs::write(&map_path, map()).expect("map");
    (d, img_path, map_path)
}

/// A class whose active task adds 5 to the u32 at 0x20 (0x40 bytes of initial memory).
fn adder_class() -> ProgramClass {
    let mut a = Asm::new("adder");
    let f = a.func("main", 8, 0, 0);
    a.imm(0, 0x20);
    a.load(Width::W32, 1, 0);
    a.imm(2, 5);
    a.bin(BinOp::Add, NumTy::U32, 3, 1, 2);
    a.store(Width::W32, 0, 3);
    a.ret_void();
    a.task(MAIN, f, true, false);
    a.poke(0, &[0u8; 0x40]);
    a.build()
}

/// A class whose active task runs `body` (16 registers), with 0x80 zero bytes of data.
fn main_class(name: &str, body: impl FnOnce(&mut Asm)) -> Asm {
    let mut a = main_task(name, body);
    a.poke(0, &[0u8; 0x80]);
    a
}

/// The tiles of a region in file order for `y x _word` (rows outer) or `x y _word`.
fn tiles_in_order(tiles: &[(u32, u32)], rows_outer: bool) -> Vec<(u32, u32)> {
    let mut t = tiles.to_vec();
    if rows_outer {
        t.sort_by_key(|&(x, y)| (y, x));
    } else {
        t.sort_by_key(|&(x, y)| (x, y));
    }
    t
}

fn read16(mem: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([mem[at], mem[at + 1]])
}

#[test]
fn miset_then_miget_round_trips_rectangular_and_odd_regions_in_both_orders() {
    let d = dir("tools", "roundtrip");
    let img_path = d.join("bench.obj");
    let map_path = d.join("bench.map");
    let img = image(3, 2, vec![idle_class()], vec![0; 6], vec![]);
    write_image(&img_path, &img);
    std::fs::write(&map_path, map()).expect("map");
    let all: Vec<(u32, u32)> = (0..2).flat_map(|y| (0..3).map(move |x| (x, y))).collect();
    let odd = vec![(0, 0), (2, 0), (1, 1)];
    for (region, tiles) in [("all", &all), ("odd", &odd)] {
        for (order, rows_outer) in [("y x _word", true), ("x y _word", false)] {
            let n = tiles.len() * 3;
            let words: Vec<u16> = (0..n as u16).map(|i| 0x1000 + 7 * i).collect();
            let data = d.join("in.bin");
            write_words(&data, &words);
            let out = d.join("bench.img");
            let symbol = format!("symbol={region}.v");
            let order_arg = format!("order={order}");
            set_ok(&img_path, &out, &map_path, &[&symbol, &order_arg], &data);
            // The simulator's loader sees word k of the file at the tile and word the
            // order names, and the initial memory everywhere else.
            let loaded = tools::read_image(&out).expect("image");
            let sim = Simulator::new(&loaded).expect("load");
            let order_tiles = tiles_in_order(tiles, rows_outer);
            for &(x, y) in &all {
                let mem = sim.pe(x, y).expect("pe").memory();
                for w in 0..3 {
                    let at = 0x10 + 2 * w;
                    let want = match order_tiles.iter().position(|&t| t == (x, y)) {
                        Some(t) => words[3 * t + w],
                        None => u16::from_le_bytes([0xA0 ^ at as u8, 0xA0 ^ (at as u8 + 1)]),
                    };
                    assert_eq!(read16(mem, at), want, "{region} {order} ({x},{y}) word {w}");
                }
            }
            // miget in the same order gives the file back.
            let back = d.join("out.bin");
            get_ok(&out, &map_path, &[&symbol, &order_arg], &back);
            assert_eq!(read_words(&back), words, "{region} {order}");
            // In the other order, the same values transposed.
            let (other, other_rows) = if rows_outer {
                ("x y _word", false)
            } else {
                ("y x _word", true)
            };
            get_ok(
                &out,
                &map_path,
                &[&symbol, &format!("order={other}")],
                &back,
            );
            let want: Vec<u16> = tiles_in_order(tiles, other_rows)
                .iter()
                .flat_map(|t| {
                    let k = order_tiles.iter().position(|o| o == t).expect("tile");
                    words[3 * k..3 * k + 3].to_vec()
                })
                .collect();
            assert_eq!(read_words(&back), want, "{region} {order} read as {other}");
        }
    }
    // `_word` outermost: word 0 of every tile first.
    let map = tools::read_map(&map_path).expect("map");
    let t = SymbolTarget::resolve(&map, &img, "all.v", "_word y x").expect("resolve");
    assert_eq!(t.walk[0], ((0, 0), 0));
    assert_eq!(t.walk[1], ((1, 0), 0));
    assert_eq!(t.walk[6], ((0, 0), 1));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn miset_in_place_replaces_earlier_patches_and_default_order_is_rows_first() {
    let (d, img_path, map_path) = idle_with_map("inplace");
    let data = d.join("x.bin");
    for round in 0..3u16 {
        let words: Vec<u16> = (0..12).map(|i| 100 * round + i).collect();
        write_words(&data, &words);
        set_ok(&img_path, &img_path, &map_path, &["symbol=all.x"], &data);
    }
    let img = tools::read_image(&img_path).expect("image");
    // One patch per tile: each round replaced the previous one.
    assert_eq!(img.tile_memory.len(), 6);
    // Default order "y x _word": tile (1,0) is the second tile, its low word first.
    let mem = tools::tile_memory(&img, 1, 0).expect("memory");
    assert_eq!(read16(&mem, 0x20), 202);
    assert_eq!(read16(&mem, 0x22), 203);
    assert_eq!(mem.len(), 0x40);
    // Another symbol on a region of three of those tiles, twice: its patches replace only
    // each other; `all.x`'s, which they do not cover, stay on all six tiles.
    let v = d.join("v.bin");
    for round in 0..2u16 {
        let words: Vec<u16> = (0..9).map(|i| 1000 * round + i).collect();
        write_words(&v, &words);
        set_ok(&img_path, &img_path, &map_path, &["symbol=odd.v"], &v);
    }
    let img = tools::read_image(&img_path).expect("image");
    assert_eq!(img.tile_memory.len(), 6 + 3);
    let mem = tools::tile_memory(&img, 1, 1).expect("memory");
    assert_eq!((read16(&mem, 0x10), read16(&mem, 0x20)), (1006, 208));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn bad_input_is_a_one_line_error_with_exit_status_1() {
    let (d, img_path, map_path) = idle_with_map("errors");
    let data = d.join("d.bin");
    write_words(&data, &[1, 2, 3, 4, 5]);
    let out = d.join("o.img");
    let (img, mapa, dat, outa) = (
        arg("image", &img_path),
        arg("map", &map_path),
        arg("data", &data),
        arg("out", &out),
    );
    let set = |extra: &[&str]| {
        let mut v: Vec<&str> = vec![&img, &mapa, &outa, &dat];
        v.extend_from_slice(extra);
        miset(&v)
    };
    // Wrong data size: both numbers.
    assert_error(
        set(&["symbol=all.v"]),
        &["holds 5 16-bit words", "6 tiles x 3 words = 18 words"],
    );
    assert_error(
        miget(&[&img, &mapa, "symbol=odd.x", &dat]),
        &["region `odd` has no symbol `x`", "v"],
    );
    // Unknown symbol and region: the map's names are listed.
    assert_error(
        set(&["symbol=all.nope"]),
        &["region `all` has no symbol `nope`", "v, x"],
    );
    assert_error(set(&["symbol=grid.v"]), &["no region `grid`", "all, odd"]);
    assert_error(set(&["symbol=v"]), &["REGION.SYMBOL"]);
    // The reserved names are the router and switch tables (tests/tables.rs).
    assert_error(
        set(&["symbol=all.router"]),
        &[
            "holds 5 16-bit words",
            "6 tiles x 24 colours x 1 words = 144 words",
        ],
    );
    assert_error(
        miget(&[&img, &mapa, "symbol=all.switch", "order=y x _word", &dat]),
        &["bad order=", "y, x, r, n"],
    );
    // Bad order.
    assert_error(
        set(&["symbol=all.v", "order=y z _word"]),
        &["bad order=", "`z`"],
    );
    assert_error(
        set(&["symbol=all.v", "order=y x"]),
        &["bad order=", "2 axes"],
    );
    // Bad key, bare word, repeated key, missing key.
    assert_error(
        miset(&[
            &format!("imag={}", s(&img_path)),
            &mapa,
            &outa,
            &dat,
            "symbol=all.v",
        ]),
        &["unknown key `imag=`", "did you mean `image=`"],
    );
    assert_error(
        set(&["symbol=all.v", "verbose"]),
        &["unexpected argument `verbose`"],
    );
    assert_error(
        set(&["symbol=all.v", "symbol=all.x"]),
        &["`symbol=` is given twice"],
    );
    assert_error(
        miset(&[&img, &mapa, &dat, "symbol=all.v"]),
        &["missing `out=OUT`"],
    );
    assert_error(
        miget(&[&img, &mapa, "symbol=all.v"]),
        &["missing `data=FILE`"],
    );
    // Missing and malformed files.
    assert_error(
        miset(&[
            "image=/nonexistent/a.img",
            &mapa,
            &outa,
            &dat,
            "symbol=all.v",
        ]),
        &["cannot read `/nonexistent/a.img`"],
    );
    assert_error(
        miget(&[&img, "map=/nonexistent/a.map", "symbol=all.v", &dat]),
        &["cannot read `/nonexistent/a.map`"],
    );
    assert_error(
        miset(&[
            &img,
            &mapa,
            &outa,
            "data=/nonexistent/d.bin",
            "symbol=all.v",
        ]),
        &["cannot read `/nonexistent/d.bin`"],
    );
    assert_error(
        miget(&[&arg("image", &map_path), &mapa, "symbol=all.v", &dat]),
        &["not a CSL fabric image"],
    );
    assert_error(
        miget(&[&img, &arg("map", &img_path), "symbol=all.v", &dat]),
        &["symbol map"],
    );
    std::fs::write(d.join("odd.bin"), [1u8, 2, 3]).expect("write");
    assert_error(
        set(&["symbol=all.v", &arg("data", &d.join("odd.bin"))]),
        &["`data=` is given twice"],
    );
    assert_error(
        miset(&[
            &img,
            &mapa,
            &outa,
            &arg("data", &d.join("odd.bin")),
            "symbol=all.v",
        ]),
        &["3 bytes is not a whole number of 16-bit words"],
    );
    // A map for another rectangle.
    let other = d.join("other.map");
    std::fs::write(&other, map().replace("fabric 3 2", "fabric 4 2")).expect("map");
    assert_error(
        miget(&[&img, &arg("map", &other), "symbol=all.v", &dat]),
        &["4x2", "3x2"],
    );
    // simfabric arguments.
    assert_error(
        simfabric(&[&img, "cycles=lots"]),
        &["`cycles=lots` is not a number"],
    );
    assert_error(simfabric(&[&img]), &["missing `cycles=N`"]);
    assert_error(simfabric(&[&img, "cycles=10", "threads=0"]), &["threads=0"]);
    assert_error(
        simfabric(&["image=/nonexistent/a.img", "cycles=10"]),
        &["cannot read"],
    );
    assert_error(
        simfabric(&[&img, "cycles=10", "core=/nonexistent/dir/a.core"]),
        &["cannot write `/nonexistent/dir/a.core`"],
    );
    // Nothing was written by the failures.
    assert!(!out.exists());
    // --help works for all three.
    for (r, word) in [
        (miset(&["--help"]), "miset"),
        (miget(&["--help"]), "miget"),
        (simfabric(&["--help"]), "bit for bit"),
    ] {
        assert_eq!(r.0, 0);
        assert!(r.1.contains(word) && r.1.contains("usage"), "{}", r.1);
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn key_args_library() {
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let a = KeyArgs::parse(
        &v(&["cycles=0x10", "threads=1_000"]),
        &["cycles", "threads"],
    )
    .expect("parse");
    assert_eq!(a.number("cycles").expect("n"), Some(16));
    assert_eq!(a.number("threads").expect("n"), Some(1000));
    assert_eq!(a.number("other").expect("n"), None);
    assert!(matches!(
        KeyArgs::parse(&v(&["cycles="]), &["cycles"]),
        Err(ToolError::Usage(m)) if m.contains("no value")
    ));
    assert!(tools::wants_help(&v(&["image=a", "--help"])));
    assert_eq!(
        tools::default_core_path(Path::new("/x/bench.img")),
        PathBuf::from("/x/bench-sim.core")
    );
}

#[test]
fn simfabric_runs_a_program_and_miget_reads_the_new_value_from_the_core() {
    let d = dir("tools", "adder");
    let img_path = d.join("bench.obj");
    let set_path = d.join("bench.img");
    let map_path = d.join("bench.map");
    // Tiles of row 0 run the adder; row 1 stays idle (its memory does not change).
    let img = image(
        3,
        2,
        vec![adder_class(), idle_class()],
        vec![0, 0, 0, 1, 1, 1],
        vec![],
    );
    write_image(&img_path, &img);
    std::fs::write(&map_path, map()).expect("map");
    let values: Vec<u32> = vec![10, 70_000, 0xFFFF_FFFE, 1, 2, 3];
    let words: Vec<u16> = values
        .iter()
        .flat_map(|v| [*v as u16, (*v >> 16) as u16])
        .collect();
    let data = d.join("x.bin");
    write_words(&data, &words);
    set_ok(
        &img_path,
        &set_path,
        &map_path,
        &["symbol=all.x", "order=y x _word"],
        &data,
    );
    let (code, out, err) = simfabric(&[&arg("image", &set_path), "cycles=100000", "threads=2"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("quiescent"), "{out}");
    assert!(!err.contains("warning"), "{err}");
    let core = d.join("bench-sim.core");
    assert!(out.contains(s(&core)), "{out}");
    let back = d.join("x.out");
    get_ok(&core, &map_path, &["symbol=all.x"], &back);
    let got: Vec<u32> = read_words(&back)
        .chunks(2)
        .map(|w| u32::from(w[0]) | u32::from(w[1]) << 16)
        .collect();
    assert_eq!(got, vec![15, 70_005, 3, 1, 2, 3]);
    // The core keeps one full patch per changed tile and the miset patches of the others.
    let core_img = tools::read_image(&core).expect("core");
    let changed: Vec<_> = core_img
        .tile_memory
        .iter()
        .map(|p| (p.x, p.y, p.addr, p.bytes.len()))
        .collect();
    assert_eq!(
        changed,
        vec![
            (0, 0, 0, 0x40),
            (1, 0, 0, 0x40),
            (2, 0, 0, 0x40),
            (0, 1, 0x20, 4),
            (1, 1, 0x20, 4),
            (2, 1, 0x20, 4)
        ]
    );
    // A core is an image: the simulator loads it with the final memory.
    let sim = Simulator::new(&core_img).expect("load core");
    assert_eq!(read16(sim.pe(0, 0).expect("pe").memory(), 0x20), 15);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn an_unchanged_tile_is_left_out_of_the_core() {
    let img = image(2, 1, vec![adder_class(), idle_class()], vec![0, 1], vec![]);
    let run = tools::run_fabric(&img, Path::new("t.img"), 1000, None).expect("run");
    assert_eq!(run.stop, Stop::Quiescent);
    let core = tools::core_image(&img, &run.sim);
    assert_eq!(core.tile_memory.len(), 1);
    assert_eq!((core.tile_memory[0].x, core.tile_memory[0].y), (0, 0));
    assert_eq!(tools::tile_memory(&core, 0, 0).expect("mem")[0x20], 5);
    assert!(tools::tile_memory(&core, 2, 0).is_err());
}

/// A 2x1 image where PE 0 sends `n` wavelets of `value` on colour 1 (synchronously) and
/// PE 1 receives them into a CE input queue that nobody reads.
fn orphan_image(arch: Arch, n: u16, value: u32) -> Image {
    let mut sender = main_class("sender", |a| {
        a.dsd(DsdOpcode::Mov32, X::D(0x40), &[X::S(value)]);
    });
    sender.fabout(0x40, 1, 3, n, 0);
    sender.bind_output(arch, 3, 1);
    let mut receiver = Asm::new("deaf");
    receiver.func("unused", 1, 0, 0);
    receiver.ret_void();
    receiver.bind_input(arch, 2, 1);
    pair_image(arch, 1, sender, receiver)
}

#[test]
fn simfabric_reports_orphan_wavelets_with_tile_colour_and_count() {
    let d = dir("tools", "orphan");
    for arch in [Arch::Wse2, Arch::Wse3] {
        let img_path = d.join(format!("orphan-{arch}.img"));
        write_image(&img_path, &orphan_image(arch, 1, 1000));
        let log = d.join("run.log");
        let (code, out, err) = simfabric(&[&arg("image", &img_path), "cycles=10000"]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("quiescent"), "{out}");
        assert!(
            err.contains("warning: 1 orphan wavelet(s) on 1 tile(s) were never consumed"),
            "{err}"
        );
        assert!(
            err.contains("orphan: PE(1,0) [fabric (5,1)]: 1 wavelet(s) of colour 1 in ")
                && err.contains("CE input"),
            "{err}"
        );
        assert!(err.contains("nothing reads it"), "{err}");
        assert!(err.contains("0x000003e8"), "{err}");
        assert!(!err.contains("blocked"), "{err}");
        // log= gets the same report.
        let (code, _, _) =
            simfabric(&[&arg("image", &img_path), "cycles=10000", &arg("log", &log)]);
        assert_eq!(code, 0);
        let text = std::fs::read_to_string(&log).expect("log");
        assert!(
            text.contains("quiescent") && text.contains("orphan: PE(1,0)"),
            "{text}"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn simfabric_reports_a_tile_blocked_in_a_synchronous_send() {
    // 20 wavelets into a receiver that reads none: the buffers fill and the sender's
    // synchronous send never ends.
    let img = orphan_image(Arch::Wse2, 20, 7);
    let run = tools::run_fabric(&img, Path::new("t.img"), 100_000, None).expect("run");
    assert_eq!(run.stop, Stop::Quiescent);
    let lines = run.report.lines(&run.stop).join("\n");
    assert!(
        lines.contains("warning: 1 wait(s) on tiles still blocked"),
        "{lines}"
    );
    assert!(
        lines.contains(
            "blocked: PE(0,0) [fabric (4,1)]: task 10 in `main` is held by synchronous @mov32"
        ),
        "{lines}"
    );
    assert!(lines.contains("colour 1"), "{lines}");
    assert!(lines.contains("orphan: PE(1,0)"), "{lines}");
    assert!(run.report.wavelets_left() > 4, "{lines}");
    // The oldest payloads of a buffer are shown, at most four.
    assert!(
        lines.contains("0x00000007, 0x00000007, 0x00000007, 0x00000007, ..."),
        "{lines}"
    );
}

#[test]
fn simfabric_stops_at_the_cycle_budget_and_says_so() {
    let d = dir("tools", "budget");
    let spin = main_class("spin", |a| {
        a.op(Op::Jump { target: a.here() });
    });
    let img_path = d.join("spin.img");
    write_image(&img_path, &image(1, 1, vec![spin.build()], vec![0], vec![]));
    let core = d.join("final.core");
    let (code, out, err) =
        simfabric(&[&arg("image", &img_path), "cycles=500", &arg("core", &core)]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("stopped at cycle 500: the cycle budget (cycles=500) ran out"),
        "{out}"
    );
    assert!(core.exists());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn simfabric_is_deterministic() {
    let d = dir("tools", "determinism");
    let img_path = d.join("o.img");
    let img = orphan_image(Arch::Wse3, 20, 9);
    write_image(&img_path, &img);
    let mut cores = Vec::new();
    let mut logs = Vec::new();
    for k in 0..2 {
        let core = d.join(format!("o{k}.core"));
        let log = d.join(format!("o{k}.log"));
        let threads = format!("threads={}", k + 1);
        let (code, _, err) = simfabric(&[
            &arg("image", &img_path),
            "cycles=100000",
            &threads,
            &arg("core", &core),
            &arg("log", &log),
        ]);
        assert_eq!(code, 0, "{err}");
        cores.push(std::fs::read(&core).expect("core"));
        logs.push(std::fs::read(&log).expect("log"));
    }
    assert_eq!(cores[0], cores[1]);
    assert_eq!(logs[0], logs[1]);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_fault_is_an_error_naming_tile_function_pc_and_cycle() {
    let d = dir("tools", "fault");
    let bad = main_class("bad", |a| {
        a.imm(0, csl_arch::fabric::PE_MEMORY_BYTES - 2);
        a.store(Width::W32, 0, 0);
    });
    let img_path = d.join("bad.img");
    write_image(&img_path, &image(1, 1, vec![bad.build()], vec![0], vec![]));
    let (code, _, err) = simfabric(&[&arg("image", &img_path), "cycles=1000"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("simfabric: error: fault on PE(0,0) [fabric (4,1)], task 10, function `main`, pc 1, cycle"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    // The state at the fault is still written.
    assert!(d.join("bad-sim.core").exists());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_message_reaching_a_tile_without_message_passing_is_reported() {
    use csl_arch::fabric::message::{COMM_COLOR, Header};
    let d = dir("tools", "mp");
    let header = Header {
        col: 1,
        row: 0,
        north: false,
        south: false,
        ctrl_term: false,
        len: 0,
    }
    .encode();
    let mut sender = main_class("sender", |a| {
        a.dsd(DsdOpcode::Mov32, X::D(0x40), &[X::S(header)]);
    });
    sender.fabout(0x40, COMM_COLOR, 3, 1, 0);
    sender.bind_output(Arch::Wse3, 3, COMM_COLOR);
    let mut idle = Asm::new("idle");
    idle.func("unused", 1, 0, 0);
    idle.ret_void();
    let routes = vec![ColorConfig {
        message_passing: true,
        ..route(0, 0, COMM_COLOR, &[], &[])
    }];
    let img = fabric_image(
        Arch::Wse3,
        2,
        1,
        vec![sender.build(), idle.build()],
        vec![0, 1],
        routes,
    );
    let img_path = d.join("mp.img");
    write_image(&img_path, &img);
    let (code, _, err) = simfabric(&[&arg("image", &img_path), "cycles=1000"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("PE(1,0)"), "{err}");
    assert!(err.contains(&format!("colour {COMM_COLOR}")), "{err}");
    assert!(err.contains("message passing is not enabled"), "{err}");
    assert!(err.contains("mp()"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn maps_that_do_not_fit_the_image_are_errors_not_panics() {
    let img = image(3, 2, vec![idle_class()], vec![0; 6], vec![]);
    let resolve = |extra: &str, path: &str| {
        let map = csl_arch::symmap::SymbolMap::parse(&format!("{}{extra}", map())).expect("map");
        match SymbolTarget::resolve(&map, &img, path, "y x _word") {
            Ok(_) => String::new(),
            Err(e) => e.to_string(),
        }
    };
    assert!(resolve("", "all.v").is_empty());
    let e = resolve(
        "region far tiles 5,0\nsymbol far.v addr=0 bytes=2\n",
        "far.v",
    );
    assert!(
        e.contains("tile (5, 0), outside the image's 3x2 rectangle"),
        "{e}"
    );
    let e = resolve("symbol all.big addr=0xbff0 bytes=0x100\n", "all.big");
    assert!(e.contains("runs past the 49152 bytes of PE memory"), "{e}");
    let e = resolve("symbol all.none addr=0x10 bytes=0\n", "all.none");
    assert!(e.contains("empty"), "{e}");
    // A program symbol that happens to be called `router` is an ordinary symbol.
    assert!(resolve("symbol all.router addr=0x10 bytes=2\n", "all.router").is_empty());
}

#[test]
fn simfabric_writes_a_perfetto_timeline() {
    let d = dir("tools", "perfetto");
    let img_path = d.join("orphan.img");
    write_image(&img_path, &orphan_image(Arch::Wse2, 3, 5));
    let trace = d.join("trace.json");
    let (code, _, err) = simfabric(&[
        &arg("image", &img_path),
        "cycles=10000",
        &arg("perfetto", &trace),
    ]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace).expect("trace")).expect("json");
    let events = doc["traceEvents"].as_array().expect("events");
    let names: Vec<&str> = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "process_name")
        .filter_map(|e| e["args"]["name"].as_str())
        .collect();
    assert_eq!(names, ["PE(0,0)", "PE(1,0)"]);
    assert!(
        events
            .iter()
            .any(|e| e["ph"] == "X" && e["cat"] == "task" && e["name"] == "main"),
        "{doc}"
    );
    assert_eq!(events.iter().filter(|e| e["ph"] == "s").count(), 3);
    // The filter, and its errors.
    let (code, _, err) = simfabric(&[
        &arg("image", &img_path),
        "cycles=10000",
        &arg("perfetto", &trace),
        "perfetto_pes=1,0",
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&trace).expect("trace");
    assert!(
        text.contains("PE(1,0)") && !text.contains("PE(0,0)"),
        "{text}"
    );
    let (code, _, err) = simfabric(&[&arg("image", &img_path), "cycles=1", "perfetto_pes=1,0"]);
    assert_eq!(code, 1);
    assert!(err.contains("needs `perfetto=TRACE.json`"), "{err}");
    let bad = d.join("no/such/dir/trace.json");
    let (code, _, err) = simfabric(&[&arg("image", &img_path), "cycles=1", &arg("perfetto", &bad)]);
    assert_eq!(code, 1);
    assert!(err.contains("cannot write"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}
