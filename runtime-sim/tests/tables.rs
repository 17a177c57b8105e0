//! `miset`/`miget` of the router and switch tables (`symbol=router`, `symbol=switch`,
//! `tools::tables`): words computed by hand from the format in `csl_arch::tables`, round
//! trips through both binaries in the default and other orders, a region's subset, filters
//! kept, and one-line errors (exit status 1, nothing written) for bad sizes, bad words and
//! bad orders.

mod common;

use common::tools::{
    arg, assert_error, dir, get_ok, map_3x2, miget, miset, read_words, set_ok, write_words,
};
use common::{Asm, fabric_image, route};
use csl_arch::fabric::Arch;
use csl_arch::fabric::Direction::{East, North, Ramp, South, West};
use csl_arch::image::{
    ColorConfig, FilterConfig, FilterKind, Image, PopMode, ProgramClass, SwitchConfig, SwitchPos,
};
use cslsim::tools;
use std::path::{Path, PathBuf};

/// A fresh directory for test `name` holding the [`configured`] 3x2 image `a.img` and its
/// map `a.map` (regions `all` and `odd`, [`map_3x2`]); returns the three paths.
fn configured_dir(name: &str) -> (PathBuf, PathBuf, PathBuf) {
    let d = dir("tables", name);
    let (img, map) = (d.join("a.img"), d.join("a.map"));
    write_image(&img, configured());
    std::fs::write(&map, map_3x2("wse3", "")).expect("map");
    (d, img, map)
}

fn idle() -> ProgramClass {
    let mut a = Asm::new("idle");
    a.func("unused", 1, 0, 0);
    a.ret_void();
    a.build()
}

fn filter() -> FilterConfig {
    FilterConfig {
        count_data: true,
        limit1: 3,
        max_counter: 2,
        ..FilterConfig::new(FilterKind::Counter)
    }
}

/// The configuration every test starts from, and its words by hand.
fn configured() -> Vec<ColorConfig> {
    let mut a = route(0, 0, 0, &[Ramp], &[East]);
    a.teardown = true;
    let mut b = route(1, 0, 0, &[West], &[East, Ramp]);
    b.switches = Some(SwitchConfig {
        positions: [
            SwitchPos {
                rx: Some(West),
                tx: Some(vec![East]),
            },
            SwitchPos::default(),
            SwitchPos::default(),
        ],
        current: 1,
        ring_mode: true,
        pop_mode: PopMode::AlwaysPop,
    });
    let mut c = route(2, 1, 3, &[], &[]);
    c.color_swap_x = true;
    c.color_swap_y = true;
    c.filter = Some(filter());
    let mut d = route(1, 1, 14, &[], &[]);
    d.message_passing = true;
    let e = route(2, 1, 23, &[North, South], &[Ramp]);
    vec![a, b, c, d, e]
}

/// (x, y, colour, router word) of [`configured`], by the table in `csl_arch::tables`.
const ROUTER_WORDS: [(u32, u32, usize, u16); 5] = [
    (0, 0, 0, 0x8000 | 0x10 | 0x4 << 5), // teardown, rx RAMP, tx EAST
    (1, 0, 0, 0x8 | (0x4 | 0x10) << 5),  // rx WEST, tx EAST+RAMP
    (2, 1, 3, 0x0c00),                   // both swaps
    (1, 1, 14, 0x1000),                  // message passing
    (2, 1, 23, 0x1 | 0x2 | 0x10 << 5),   // rx NORTH+SOUTH, tx RAMP
];

/// (x, y, colour, four switch words) of [`configured`].
const SWITCH_WORDS: [(u32, u32, usize, [u16; 4]); 1] = [(
    1,
    0,
    0,
    // present, start 1, ring, pop 1; position 1: rx WEST, tx given EAST.
    [0x8000 | 1 | 0x4 | 1 << 3, 0x8 | 0x400 | 0x4 << 5, 0, 0],
)];

fn write_image(p: &Path, routes: Vec<ColorConfig>) {
    let img = fabric_image(Arch::Wse3, 3, 2, vec![idle()], vec![0; 6], routes);
    std::fs::write(p, img.to_elf().expect("encode")).expect("write image");
}

fn sorted(mut r: Vec<ColorConfig>) -> Vec<ColorConfig> {
    r.sort_by_key(|c| (c.y, c.x, c.color));
    r
}

#[test]
fn router_and_switch_tables_read_as_computed_by_hand_and_write_back() {
    let (d, img, map) = configured_dir("roundtrip");
    // Default orders: y x r and y x r n.
    let router = d.join("router.bin");
    get_ok(&img, &map, &["symbol=router"], &router);
    let mut want = vec![0u16; 6 * 24];
    for (x, y, c, w) in ROUTER_WORDS {
        want[(y as usize * 3 + x as usize) * 24 + c] = w;
    }
    assert_eq!(read_words(&router), want);
    let switch = d.join("switch.bin");
    get_ok(&img, &map, &["symbol=switch"], &switch);
    let mut want_sw = vec![0u16; 6 * 24 * 4];
    for (x, y, c, w) in SWITCH_WORDS {
        let at = ((y as usize * 3 + x as usize) * 24 + c) * 4;
        want_sw[at..at + 4].copy_from_slice(&w);
    }
    assert_eq!(read_words(&switch), want_sw);

    // Written into an image without routes (but with the filter), they give the
    // configuration back; the filter stays.
    let mut bare = route(2, 1, 3, &[], &[]);
    bare.filter = Some(filter());
    let empty = d.join("empty.img");
    write_image(&empty, vec![bare]);
    let out = d.join("out.img");
    for (input, symbol, data) in [
        (&empty, "symbol=router", &router),
        (&out, "symbol=switch", &switch),
    ] {
        set_ok(input, &out, &map, &[symbol], data);
    }
    let back = tools::read_image(&out).expect("image");
    assert_eq!(back.routes.to_vec(), sorted(configured()));

    // Another order: the same words transposed (colour outermost, columns before rows).
    let rxy = d.join("rxy.bin");
    get_ok(&img, &map, &["symbol=router", "order=r x y"], &rxy);
    let mut want_rxy = Vec::new();
    for c in 0..24 {
        for x in 0..3 {
            for y in 0..2 {
                want_rxy.push(want[(y * 3 + x) * 24 + c]);
            }
        }
    }
    assert_eq!(read_words(&rxy), want_rxy);
    // ... and written in that order, they configure the same routes.
    let out2 = d.join("out2.img");
    set_ok(&out, &out2, &map, &["symbol=router", "order=r x y"], &rxy);
    assert_eq!(tools::read_image(&out2).expect("image").routes, back.routes);

    // A region: its tiles only (odd = (0,0), (2,0), (1,1)), rows first.
    let odd = d.join("odd.bin");
    get_ok(&img, &map, &["symbol=odd.router"], &odd);
    let want_odd: Vec<u16> = [(0usize, 0usize), (2, 0), (1, 1)]
        .iter()
        .flat_map(|&(x, y)| want[(y * 3 + x) * 24..(y * 3 + x + 1) * 24].to_vec())
        .collect();
    assert_eq!(read_words(&odd), want_odd);
    // Clearing the region's tables drops exactly its tiles' routes (the message-passing
    // colour of (1,1) and the teardown route of (0,0)); others stay.
    write_words(&odd, &[0; 3 * 24]);
    let out3 = d.join("out3.img");
    set_ok(&img, &out3, &map, &["symbol=odd.router"], &odd);
    let left: Vec<(u32, u32, u8)> = tools::read_image(&out3)
        .expect("image")
        .routes
        .iter()
        .map(|c| (c.x, c.y, c.color))
        .collect();
    assert_eq!(left, vec![(1, 0, 0), (2, 1, 3), (2, 1, 23)]);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn bad_tables_are_one_line_errors_and_write_nothing() {
    let (d, img, map) = configured_dir("errors");
    let out = d.join("o.img");
    let data = d.join("d.bin");
    let set = |symbol: &str, words: &[u16], order: Option<&str>| {
        write_words(&data, words);
        let order = order.map(|o| format!("order={o}"));
        let mut args = vec![
            arg("image", &img),
            arg("out", &out),
            arg("map", &map),
            format!("symbol={symbol}"),
            arg("data", &data),
        ];
        args.extend(order);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        miset(&refs)
    };
    let tile = |x: usize, y: usize, c: usize, w: u16| {
        let mut v = vec![0u16; 6 * 24];
        v[(y * 3 + x) * 24 + c] = w;
        v
    };
    // Sizes: both numbers.
    assert_error(
        set("router", &[1, 2, 3], None),
        &[
            "holds 3 16-bit words",
            "6 tiles x 24 colours x 1 words = 144 words",
        ],
    );
    assert_error(
        set("switch", &[0; 144], None),
        &["6 tiles x 24 colours x 4 words = 576 words"],
    );
    assert_error(
        set("odd.router", &[0; 144], None),
        &["3 tiles x 24 colours x 1 words = 72 words"],
    );
    // Bad words name the tile, the colour and the bits.
    assert_error(
        set("router", &tile(2, 1, 5, 1 << 13), None),
        &["tile (2, 1)", "colour 5", "reserved"],
    );
    assert_error(
        set("router", &tile(0, 1, 2, 0x1000 | 0x10), None),
        &["tile (0, 1)", "message passing"],
    );
    let mut sw = vec![0u16; 6 * 24 * 4];
    sw[(24 + 10) * 4] = 0x8000; // tile (1, 0), colour 10: no switch on WSE-3
    assert_error(
        set("switch", &sw, None),
        &["tile (1, 0)", "colour 10 has no switch"],
    );
    let mut sw = vec![0u16; 6 * 24 * 4];
    sw[0] = 0x8002; // tile (0, 0), colour 0 starts in position 2, which is absent
    assert_error(set("switch", &sw, None), &["position 2", "invalid"]);
    let mut sw = vec![0u16; 6 * 24 * 4];
    sw[1] = 0x8; // a position without the status word's bit 15
    assert_error(set("switch", &sw, None), &["status", "bit 15"]);
    // Orders.
    assert_error(
        set("router", &[0; 144], Some("y x _word")),
        &["bad order=", "y, x, r"],
    );
    assert_error(
        set("switch", &[0; 576], Some("y x r")),
        &["bad order=", "y, x, r, n"],
    );
    // Regions.
    assert_error(
        set("grid.router", &[0], None),
        &["no region `grid`", "all, odd"],
    );
    assert!(!out.exists(), "nothing is written after an error");
    // miget of a table on a map of another rectangle.
    let small = d.join("small.map");
    std::fs::write(&small, "# csl symbol map 1\nfabric 2 2 wse3\n").expect("map");
    assert_error(
        miget(&[
            &arg("image", &img),
            &arg("map", &small),
            "symbol=router",
            &arg("data", &data),
        ]),
        &["2x2", "3x2"],
    );
    // A message-passing bit on WSE-2.
    let img2 = d.join("b.img");
    let mut wse2: Image = fabric_image(Arch::Wse2, 3, 2, vec![idle()], vec![0; 6], vec![]);
    wse2.meta.arch = Arch::Wse2;
    std::fs::write(&img2, wse2.to_elf().expect("encode")).expect("write");
    write_words(&data, &tile(0, 0, 1, 0x1000));
    assert_error(
        miset(&[
            &arg("image", &img2),
            &arg("out", &out),
            &arg("map", &map),
            "symbol=router",
            &arg("data", &data),
        ]),
        &["wse2"],
    );
    let _ = std::fs::remove_dir_all(&d);
}
