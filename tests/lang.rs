//! Language tests: small PE programs under `tests/programs/lang/` that exercise one part
//! of the language each (structs, enums, switch expressions, generic functions, labelled
//! blocks, function pointers, multi-dimensional arrays). Each is compiled with the
//! compiler library, run on the simulator through the host runtime (a launched function
//! `run` fills the exported array `out`), and compared with values worked out by hand —
//! once with the IR optimiser and once without (`-O0`), so the two must agree.

#![allow(clippy::unwrap_used)]

use csl_arch::Arch;
use cslc::driver::Options;
use cslsim::host::SdkRuntime;
use std::path::PathBuf;

/// Compiles `tests/programs/lang/<name>/layout.csl`, runs `run` on the 1x1 rectangle and
/// returns the first `n` words of `out`.
fn run(name: &str, arch: Arch, optimize: bool, n: usize) -> Vec<i32> {
    let root = csl_tests::repo_root();
    let layout = root
        .join("tests/programs/lang")
        .join(name)
        .join("layout.csl");
    let opts = Options {
        optimize,
        ..csl_tests::options(arch, (8, 3))
    };
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("lang-{name}-{arch}-{optimize}"));
    csl_tests::compile_with(&layout, &opts, &dir);
    let mut rt = SdkRuntime::new(&dir).unwrap();
    rt.load().unwrap();
    rt.run().unwrap();
    rt.launch("run", &[], false).unwrap();
    let id = rt.get_id("out").unwrap();
    let mut buf = vec![0u32; n];
    csl_tests::d2h_into(&mut rt, &mut buf, id, 1, 1, n as u32);
    rt.stop().unwrap();
    buf.into_iter().map(|v| v as i32).collect()
}

fn both(name: &str, n: usize, want: &[i32]) {
    for arch in [Arch::Wse2, Arch::Wse3] {
        for optimize in [true, false] {
            let o = if optimize { "" } else { " -O0" };
            assert_eq!(run(name, arch, optimize, n), want, "{name} on {arch}{o}");
        }
    }
}

#[test]
fn structs() {
    // p = { pos = { x = 3, y = 7 (default) }, mass = 2.5, id = 9 }
    let want = [
        3,    // p.pos.x
        7,    // p.pos.y from the default
        5,    // @as(i32, 2.5 * 2.0)
        47,   // sum(p.pos) after p.pos.x = 40: 40 + 7
        50,   // bump(&p.pos) adds 10 through the pointer
        150,  // local = p.pos (a copy: 50, 7), then local.y = 100
        7,    // p.pos.y is unchanged by writing the copy
        2211, // Pair(i32){ 11, 22 } swapped: 22 * 100 + 11
        44,   // for over [3]Vec2: 1*2 + 3*4 + 5*6
        -12,  // ps[1].y = -4: 3 * -4
        52,   // Vec2{ .x = 2 + 50, .y = 0 } with a runtime field
        35,   // comptime Vec2{ .x = 5 } (y = 7): 5 * 7
        9,    // p.id
    ];
    both("structs", want.len(), &want);
}

#[test]
fn enums_and_switch() {
    let want = [
        41,   // red = 0, white = 4, blue = 1 (lowest unused): 0*100 + 4*10 + 1
        -1,   // Mode.idle = -1
        30,   // weight(blue)
        20,   // @as(Color, 4) is white
        1,    // paint == white
        1,    // paint != red
        2,    // next(next(send)) = both = 2
        3,    // idle -> send -> recv -> both
        1000, // bucket(0) + bucket(5) + bucket(20) + bucket(21) = 100 + 200 + 300 + 400
        444,  // i % 3 over 0..12: four of each case
        200,  // comptime bucket(7)
    ];
    both("enums", want.len(), &want);
}

#[test]
fn functions() {
    let want = [
        35,  // scale(3, 5) + scale(10, 2): two instances of `scale`
        49,  // square(@as(i16, 7)), the i16 instance
        9,   // square(@as(f32, 1.5)) * 4, the f32 instance: 2.25 * 4
        12,  // max_of(i32, -4, 9) + max_of(u16, 3, 2) = 9 + 3
        42,  // twice(21), inlined
        31,  // clamp(21, 0, 10) + clamp(-5, 0, 10) + clamp(21, 0, 100) = 10 + 0 + 21
        25,  // apply(&dbl, 8) + apply(op = &inc, 8) = 16 + 9
        200, // op = dbl; op(100)
        10,  // table[1](5) through a runtime index: dbl(5)
        8,   // apply_ct(inc, 1) + apply_ct(dbl, 3) = 2 + 6
        77,  // set(&z, 77) through the address of a local
        1,   // sign of 21 from a labelled block
        51,  // five (comptime-known block value) * 10 + calls (1)
        23,  // first i * j == 6 in row-major order: i = 2, j = 3
        107, // helper.apply_twice(5) calls back `inc` twice and adds the module's bias: 7 + 100
        21,  // affine(.{ .k = 3 }, 4) + affine(.{ .k = 2, .off = 0 }, 4) = 13 + 8
    ];
    both("functions", want.len(), &want);
}

#[test]
fn arrays() {
    let want = [
        23,    // grid[2, 3] = 2 * 10 + 3
        138,   // sum of i * 10 + j over the 3x4 grid: (0 + 10 + 20) * 4 + (0 + 1 + 2 + 3) * 3
        11000, // lut[3] + lut[4] with a runtime index into a constant array
        99,    // the copy's [0, 0] is 99; grid[0, 0] stays 0
        34,    // local[2] = 30 through a pointer, + local[3] = 4
        124,   // |i|{4} -> A[2*i + 1]: offset 1, stride 2, extent 4
        101,   // |i, j|{3, 4} -> grid[i, j]: strides (innermost first) 1, 4 - 1*3 = 1
        98,    // |i, j|{5, 5} -> A[2*i + j]: strides 1, 2 - 1*4 = -2
        63,    // m[1, 2] * 10 + m[0, 2] = 60 + 3
        5,     // comptime squares[2] + squares[1]
        74,    // sum of x * k over local = { 1, 2, 30, 4 }
    ];
    both("arrays", want.len(), &want);
}

#[test]
fn structs_and_arrays_returned_by_value() {
    let want = [
        34,   // make(3, 4): 3 * 10 + 4
        9,    // make(9, 1).x
        1015, // scale(make(2, 3), 5) = { 10, 15 }: 10 * 100 + 15
        51,   // a copy of origin with x = 50, plus origin.x (still 1)
        8,    // sum over k = 0..2 of k * (k + 1): 0 + 2 + 6
        23,   // ramp(10) = [10, 11, 12, 13]: 10 + 13
        58,   // pick(true).x * 10 + pick(false).y: 5 * 10 + 8
        2,    // snap = get_origin() keeps y = 2 after origin.y = 99
        23,   // [2]Vec2{ make(1, 2), make(3, 4) }: 2 * 10 + 3
    ];
    both("returns", want.len(), &want);
}

#[test]
fn descriptors_changed_at_run_time_in_loops() {
    let want = [
        1, 3, 7, 15, // sums of the first 1..4 elements
        10, 20, 30, 40, // element k by offset increment
        10, 20, 30, 40, // a named descriptor, then incremented by 2
        10, 20, 30, 40, // the constant descriptor is untouched
    ];
    both("dsd_reuse", 16, &want);
}
