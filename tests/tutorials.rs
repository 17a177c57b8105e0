//! The tutorials of `examples/tutorials/03-*` onwards and the CSL libraries written for
//! them (`<math>`, `<random>`, `<directions>`, `<debug>`, `<collectives_2d/...>`): each
//! tutorial is compiled for every architecture it supports and its host logic (what its
//! `run.py` does) is replayed here with the Rust `SdkRuntime`, checking the same answer.

#![allow(clippy::unwrap_used, clippy::too_many_arguments)]

use csl_arch::Arch;
use cslsim::host::{MemcpyDataType, MemcpyOrder, Region, SdkRuntime, Transfer};
use std::path::PathBuf;

const BOTH: [Arch; 2] = [Arch::Wse2, Arch::Wse3];

/// Compiles `dir/layout.csl` (`dir` relative to the repository root) with `params` on a
/// `dims` fabric and loads and starts it.
fn build(dir: &str, arch: Arch, dims: (u32, u32), params: &[(&str, &str)]) -> SdkRuntime {
    // One directory per (program, arch, params): tests run in parallel.
    let tag = dir.rsplit('/').next().unwrap_or(dir);
    let shown: Vec<String> = params.iter().map(|(k, v)| format!("{k}{v}")).collect();
    let out = out_dir(&format!("{tag}-{arch}-{}", shown.join("-")));
    csl_tests::compile_to(&format!("{dir}/layout.csl"), arch, dims, params, &out);
    let mut rt = SdkRuntime::new(&out).unwrap().with_max_cycles(50_000_000);
    rt.load().unwrap();
    rt.run().unwrap();
    rt
}

fn out_dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("tutorials-{name}"))
}

/// Builds tutorial `dir` (under examples/tutorials).
fn tutorial(dir: &str, arch: Arch, dims: (u32, u32), params: &[(&str, &str)]) -> SdkRuntime {
    build(&format!("examples/tutorials/{dir}"), arch, dims, params)
}

/// Builds test program `name` (under tests/programs).
fn program(name: &str, arch: Arch, dims: (u32, u32), params: &[(&str, &str)]) -> SdkRuntime {
    build(&format!("tests/programs/{name}"), arch, dims, params)
}

/// Builds tutorial `dir` with `params` on a `dims` fabric for both architectures, runs
/// `host` on each and stops it.
fn on_both(
    dir: &str,
    dims: (u32, u32),
    params: &[(&str, &str)],
    mut host: impl FnMut(&mut SdkRuntime, Arch),
) {
    for arch in BOTH {
        let mut rt = tutorial(dir, arch, dims, params);
        host(&mut rt, arch);
        rt.stop().unwrap();
    }
}

/// The same for test program `name`.
fn program_on_both(
    name: &str,
    dims: (u32, u32),
    params: &[(&str, &str)],
    mut host: impl FnMut(&mut SdkRuntime, Arch),
) {
    for arch in BOTH {
        let mut rt = program(name, arch, dims, params);
        host(&mut rt, arch);
        rt.stop().unwrap();
    }
}

/// Every PE of a `w` x `h` grid in turn as the root, row by row within each column, with
/// the seeds `seed`, `seed + 1`, ...
fn every_root(w: u32, h: u32, seed: u32) -> impl Iterator<Item = (u32, u32, u32)> {
    (0..w)
        .flat_map(move |x| (0..h).map(move |y| (x, y)))
        .zip(seed..)
        .map(|((x, y), seed)| (x, y, seed))
}

fn h2d(rt: &mut SdkRuntime, name: &str, data: &[u32], region: Region, how: Transfer) {
    let id = rt.get_id(name).unwrap();
    rt.h2d(id, data, region, how).unwrap();
}

fn d2h(rt: &mut SdkRuntime, name: &str, region: Region, how: Transfer) -> Vec<u32> {
    let id = rt.get_id(name).unwrap();
    let mut out = vec![0u32; (region.w * region.h * region.l) as usize];
    rt.d2h(&mut out, id, region, how).unwrap();
    out
}

fn h2d_f32(rt: &mut SdkRuntime, name: &str, data: &[f32], region: Region) {
    let bits: Vec<u32> = data.iter().map(|f| f.to_bits()).collect();
    h2d(rt, name, &bits, region, Transfer::COPY);
}

fn d2h_f32(rt: &mut SdkRuntime, name: &str, region: Region) -> Vec<f32> {
    let words = d2h(rt, name, region, Transfer::COPY);
    words.into_iter().map(f32::from_bits).collect()
}

fn d2h_u32(rt: &mut SdkRuntime, name: &str, region: Region) -> Vec<u32> {
    d2h(rt, name, region, Transfer::COPY)
}

/// Deterministic test data in [-1, 1) (the same generator as `csl_examples::lcg_f32`).
fn data(seed: u32, n: usize) -> Vec<f32> {
    csl_examples::lcg_f32(seed, n)
}

fn assert_close(got: &[f32], want: &[f32], rtol: f32, atol: f32, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= atol + rtol * w.abs(),
            "{what}[{i}]: got {g}, want {w}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Libraries.

/// Runs function `which` of tests/programs/math on 64 inputs.
fn math_run(rt: &mut SdkRuntime, which: u32, x: &[f32], y: &[f32]) -> Vec<f32> {
    h2d_f32(rt, "x", x, Region::new(0, 0, 1, 1, 64));
    h2d_f32(rt, "y", y, Region::new(0, 0, 1, 1, 64));
    rt.launch("run", &[which], false).unwrap();
    d2h_f32(rt, "r", Region::new(0, 0, 1, 1, 64))
}

fn max_rel(got: &[f32], want: impl Fn(f64) -> f64, x: &[f32]) -> f64 {
    got.iter()
        .zip(x)
        .map(|(&g, &v)| {
            let w = want(f64::from(v));
            (f64::from(g) - w).abs() / w.abs().max(1e-300)
        })
        .fold(0.0, f64::max)
}

fn max_abs(got: &[f32], want: impl Fn(f64) -> f64, x: &[f32]) -> f64 {
    got.iter()
        .zip(x)
        .map(|(&g, &v)| (f64::from(g) - want(f64::from(v))).abs())
        .fold(0.0, f64::max)
}

/// 64 values spread over [lo, hi] (deterministic).
fn spread(seed: u32, lo: f32, hi: f32) -> Vec<f32> {
    data(seed, 64)
        .into_iter()
        .map(|u| lo + (hi - lo) * (u + 1.0) * 0.5)
        .collect()
}

#[test]
fn math_library_accuracy() {
    program_on_both("math", (8, 3), &[], |rt, arch| {
        let zeros = vec![0.0f32; 64];
        // Positive numbers over the whole exponent range, plus a subnormal.
        let mut pos: Vec<f32> = spread(1, -80.0, 80.0).into_iter().map(f32::exp).collect();
        pos[0] = 1e-40;
        pos[1] = 1.0;
        pos[2] = 4.0;
        let r = math_run(rt, 0, &pos, &zeros);
        assert!(max_rel(&r, f64::sqrt, &pos) < 2e-7, "{arch} sqrt");
        assert_eq!(r[2], 2.0, "{arch} sqrt(4)");
        let r = math_run(rt, 1, &pos, &zeros);
        assert!(
            max_rel(&r, |v| 1.0 / v.sqrt(), &pos) < 3e-7,
            "{arch} invsqrt"
        );
        let x = spread(2, -87.0, 88.0);
        let r = math_run(rt, 2, &x, &zeros);
        assert!(max_rel(&r, f64::exp, &x) < 5e-7, "{arch} exp");
        let mut lx: Vec<f32> = spread(3, -100.0, 88.0).into_iter().map(f32::exp).collect();
        lx[0] = 1.0;
        lx[1] = 1e-42;
        lx[2] = 1.000_000_1;
        let r = math_run(rt, 3, &lx, &zeros);
        for (i, (&g, &v)) in r.iter().zip(&lx).enumerate() {
            let w = f64::from(v).ln();
            let err = (f64::from(g) - w).abs();
            assert!(
                err < 2e-7 || err / w.abs() < 3e-7,
                "{arch} log({v}) [{i}] = {g}, want {w}"
            );
        }
        let mut t = spread(4, -6434.0, 6434.0);
        t[..8].copy_from_slice(&spread(5, -4.0, 4.0)[..8]);
        let r = math_run(rt, 4, &t, &zeros);
        assert!(max_abs(&r, f64::sin, &t) < 3e-7, "{arch} sin");
        let r = math_run(rt, 5, &t, &zeros);
        assert!(max_abs(&r, f64::cos, &t) < 3e-7, "{arch} cos");
        let a = spread(6, -3.0, 3.0);
        let b = spread(7, -3.0, 3.0);
        let r = math_run(rt, 6, &a, &b);
        assert!(r.iter().zip(&a).all(|(g, v)| *g == v.abs()), "{arch} abs");
        let r = math_run(rt, 7, &a, &b);
        assert!(
            r.iter()
                .zip(a.iter().zip(&b))
                .all(|(g, (u, v))| *g == u.min(*v)),
            "{arch} min"
        );
        let r = math_run(rt, 8, &a, &b);
        assert!(
            r.iter()
                .zip(a.iter().zip(&b))
                .all(|(g, (u, v))| *g == u.max(*v)),
            "{arch} max"
        );
        let r = math_run(rt, 9, &a, &b);
        assert!(
            r.iter().zip(&a).all(|(g, v)| *g
                == if *v > 0.0 {
                    1.0
                } else if *v < 0.0 {
                    -1.0
                } else {
                    0.0
                }),
            "{arch} sign"
        );
        let px = spread(8, 0.1, 10.0);
        let py = spread(9, -5.0, 5.0);
        let r = math_run(rt, 10, &px, &py);
        for (i, g) in r.iter().enumerate() {
            let w = f64::from(px[i]).powf(f64::from(py[i]));
            let bound = 5e-7 * (1.0 + (f64::from(py[i]) * f64::from(px[i]).ln()).abs()) + 1e-7;
            assert!(
                (f64::from(*g) - w).abs() / w <= bound,
                "{arch} pow({}, {}) = {g}, want {w}",
                px[i],
                py[i]
            );
        }
        let f = spread(10, -100.0, 100.0);
        let r = math_run(rt, 11, &f, &zeros);
        assert!(
            r.iter().zip(&f).all(|(g, v)| *g == v.floor()),
            "{arch} floor"
        );
        let r = math_run(rt, 12, &f, &zeros);
        assert!(r.iter().zip(&f).all(|(g, v)| *g == v.ceil()), "{arch} ceil");
        // Special values and the classification flags.
        let mut sp = vec![1.0f32; 64];
        sp[..6].copy_from_slice(&[f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0, -1.0]);
        let r = math_run(rt, 0, &sp, &zeros);
        assert!(
            r[0].is_nan() && r[1] == f32::INFINITY && r[2].is_nan() && r[3] == 0.0 && r[5].is_nan(),
            "{arch} sqrt specials {:?}",
            &r[..6]
        );
        let r = math_run(rt, 3, &sp, &zeros);
        assert!(
            r[0].is_nan()
                && r[1] == f32::INFINITY
                && r[2].is_nan()
                && r[3] == f32::NEG_INFINITY
                && r[5].is_nan(),
            "{arch} log specials {:?}",
            &r[..6]
        );
        let r = math_run(rt, 2, &sp, &zeros);
        assert!(
            r[0].is_nan() && r[1] == f32::INFINITY && r[2] == 0.0 && r[3] == 1.0,
            "{arch} exp specials {:?}",
            &r[..6]
        );
        let r = math_run(rt, 4, &sp, &zeros);
        assert!(
            r[0].is_nan() && r[1].is_nan() && r[2].is_nan() && r[3] == 0.0,
            "{arch} sin specials {:?}",
            &r[..6]
        );
        let flags = d2h_u32(rt, "flags", Region::new(0, 0, 1, 1, 64));
        assert_eq!(
            &flags[..6],
            &[1, 2, 2, 4, 4, 4],
            "{arch} isNaN/isInf/isFinite"
        );
        let ints: Vec<i32> = d2h(rt, "ints", Region::new(0, 0, 1, 1, 16), Transfer::COPY)
            .into_iter()
            .map(|v| v as i32)
            .collect();
        assert_eq!(
            &ints[..14],
            &[
                17, 300, -3, 9, -1, 0, 1, 150, 1, 1, 3_141_592, 2_718_281, 1, 1
            ],
            "{arch} generic functions"
        );
    });
}

/// The xorshift32 step of `<random>`.
fn xorshift(s: &mut u32) -> u32 {
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    *s
}

#[test]
fn random_library_streams() {
    for arch in BOTH {
        let mut rt = program("random", arch, (9, 3), &[]);
        let (n, seed, lo, hi, pow) = (256usize, 1234u32, -2.0f32, 3.0f32, 5u16);
        rt.launch(
            "draw",
            &[seed, lo.to_bits(), hi.to_bits(), u32::from(pow)],
            false,
        )
        .unwrap();
        let bits = d2h_u32(&mut rt, "bits", Region::new(0, 0, 2, 1, n as u32));
        let uniform = d2h_f32(&mut rt, "uniform", Region::new(0, 0, 2, 1, n as u32));
        let small = d2h_u32(&mut rt, "small", Region::new(0, 0, 2, 1, n as u32));
        let normal = d2h_f32(&mut rt, "normal", Region::new(0, 0, 2, 1, n as u32));
        rt.stop().unwrap();
        for pe in 0..2usize {
            let mut s = seed + pe as u32;
            let at = |i: usize| pe * n + i;
            for i in 0..n {
                assert_eq!(bits[at(i)], xorshift(&mut s), "{arch} PE {pe} draw {i}");
            }
            for i in 0..n {
                let u = (xorshift(&mut s) >> 8) as f32 * 5.960_464_5e-8;
                let v = lo + (hi - lo) * u;
                let want = if v < hi { v } else { lo };
                assert_eq!(uniform[at(i)], want, "{arch} PE {pe} uniform {i}");
                assert!(uniform[at(i)] >= lo && uniform[at(i)] < hi);
            }
            for i in 0..n {
                assert_eq!(
                    small[at(i)],
                    xorshift(&mut s) >> (32 - pow),
                    "{arch} PE {pe} pow {i}"
                );
            }
            let z = &normal[pe * n..(pe + 1) * n];
            let mean = z.iter().map(|&v| f64::from(v)).sum::<f64>() / n as f64;
            let var = z
                .iter()
                .map(|&v| (f64::from(v) - mean).powi(2))
                .sum::<f64>()
                / n as f64;
            assert!(
                mean.abs() < 0.2 && (var - 1.0).abs() < 0.25,
                "{arch} PE {pe} normal: mean {mean}, variance {var}"
            );
        }
        assert_ne!(
            bits[0], bits[n],
            "{arch}: the two PEs must draw different streams"
        );
    }
}

#[test]
fn directions_library_at_compile_time_and_runtime() {
    for arch in BOTH {
        let mut rt = program("directions", arch, (9, 3), &[]);
        rt.launch("start", &[], false).unwrap();
        let out = d2h_u32(&mut rt, "out", Region::new(1, 0, 1, 1, 26));
        rt.stop().unwrap();
        // N, E, S, W, RAMP = 0..4.
        assert_eq!(&out[0..5], &[1, 2, 3, 0, 4], "{arch} rotate_clockwise");
        assert_eq!(
            &out[5..10],
            &[3, 0, 1, 2, 4],
            "{arch} rotate_counterclockwise"
        );
        assert_eq!(&out[10..15], &[2, 1, 0, 3, 4], "{arch} flip_vertical");
        assert_eq!(&out[15..20], &[0, 3, 2, 1, 4], "{arch} flip_horizontal");
        assert_eq!(&out[20..25], &[2, 3, 0, 1, 4], "{arch} flip");
        assert_eq!(
            out[25], 777,
            "{arch}: the route computed with <directions> carries the wavelet"
        );
    }
}

/// One round of `tests/programs/scatter_gather` with roots (root_x, root_y) on a pw x ph
/// grid with n words per PE: every row scatters from column root_x, each PE adds
/// 1000 * (x + 1) to its part, the row gathers the parts back; then the same along the
/// columns with row root_y.
fn scatter_gather(
    rt: &mut SdkRuntime,
    (pw, ph, n): (usize, usize, usize),
    root_x: usize,
    root_y: usize,
    seed: u32,
) {
    let words = |seed: u32, len: usize| -> Vec<u32> {
        data(seed, len)
            .iter()
            .map(|v| ((v + 1.0) * 400.0) as u32)
            .collect()
    };
    let grid = |l: usize| Region::new(0, 0, pw as u32, ph as u32, l as u32);
    // all_x[(y * pw + x) * n * pw + k]: the row buffer of PE (x, y); only the root's counts.
    let all_x = words(seed, pw * ph * n * pw);
    let all_y = words(seed + 1000, pw * ph * n * ph);
    h2d(rt, "all_x", &all_x, grid(n * pw), Transfer::COPY);
    h2d(rt, "all_y", &all_y, grid(n * ph), Transfer::COPY);
    rt.launch("run", &[root_x as u32, root_y as u32], false)
        .unwrap();
    let mine_x = d2h_u32(rt, "mine_x", grid(n));
    let back_x = d2h_u32(
        rt,
        "back_x",
        Region::new(root_x as u32, 0, 1, ph as u32, (n * pw) as u32),
    );
    let mine_y = d2h_u32(rt, "mine_y", grid(n));
    let back_y = d2h_u32(
        rt,
        "back_y",
        Region::new(0, root_y as u32, pw as u32, 1, (n * ph) as u32),
    );
    let what = format!("{pw}x{ph}, n {n}, root ({root_x},{root_y})");
    for y in 0..ph {
        for x in 0..pw {
            for i in 0..n {
                // Row: part x of the root column's buffer, changed by PE x.
                let sent = all_x[(y * pw + root_x) * n * pw + x * n + i];
                assert_eq!(
                    mine_x[(y * pw + x) * n + i],
                    sent + 1000 * (x as u32 + 1),
                    "{what}: row scatter to ({x},{y}) [{i}]"
                );
                assert_eq!(
                    back_x[y * n * pw + x * n + i],
                    sent + 1000 * (x as u32 + 1),
                    "{what}: row gather from ({x},{y}) [{i}]"
                );
                // Column: part y of the root row's buffer, changed by PE y.
                let sent = all_y[(root_y * pw + x) * n * ph + y * n + i];
                assert_eq!(
                    mine_y[(y * pw + x) * n + i],
                    sent + 1000 * (y as u32 + 1),
                    "{what}: column scatter to ({x},{y}) [{i}]"
                );
                assert_eq!(
                    back_y[x * n * ph + y * n + i],
                    sent + 1000 * (y as u32 + 1),
                    "{what}: column gather from ({x},{y}) [{i}]"
                );
            }
        }
    }
}

#[test]
fn collectives_scatter_and_gather_with_every_root() {
    let (pw, ph, n) = (5usize, 4usize, 3usize);
    program_on_both(
        "scatter_gather",
        (12, 6),
        &[("Pw", "5"), ("Ph", "4"), ("n", "3")],
        |rt, _| {
            // Every root, one after the other on the same fabric: the library must leave no
            // wavelet behind between operations.
            for (rx, ry, seed) in every_root(pw as u32, ph as u32, 500) {
                scatter_gather(rt, (pw, ph, n), rx as usize, ry as usize, seed);
            }
        },
    );
}

#[test]
fn collectives_scatter_and_gather_on_long_rows_one_word_and_single_pe_axes() {
    for arch in BOTH {
        // 8 PEs in a row (up to 7 on one side of the root), one word per PE; the columns
        // have one PE (scatter and gather are local copies).
        let mut rt = program(
            "scatter_gather",
            arch,
            (15, 3),
            &[("Pw", "8"), ("Ph", "1"), ("n", "1")],
        );
        for rx in [0, 7, 3, 4, 1] {
            scatter_gather(&mut rt, (8, 1, 1), rx, 0, 600 + rx as u32);
        }
        rt.stop().unwrap();
        // A 2 x 7 grid with longer parts.
        let mut rt = program(
            "scatter_gather",
            arch,
            (9, 10),
            &[("Pw", "2"), ("Ph", "7"), ("n", "17")],
        );
        for (rx, ry) in [(0, 0), (1, 6), (0, 3), (1, 2)] {
            scatter_gather(&mut rt, (2, 7, 17), rx, ry, 700 + ry as u32);
        }
        rt.stop().unwrap();
    }
}

/// `tests/programs/stream_buffering` with `size` wavelets: streams 16-bit values in, then
/// collects them plus one; the error text if a command fails.
fn stream_through_one_pe(arch: Arch, size: usize) -> Result<(), String> {
    let s = size.to_string();
    let mut rt = program("stream_buffering", arch, (8, 3), &[("size", &s)]);
    let x: Vec<u32> = (0..size as u32).map(|k| (k * 37 + 5) % 256).collect();
    rt.h2d(
        0,
        &x,
        Region::new(0, 0, 1, 1, size as u32),
        Transfer::STREAM.order(MemcpyOrder::ColMajor),
    )
    .map_err(|e| e.to_string())?;
    let mut out = vec![0u32; size];
    rt.d2h(
        &mut out,
        1,
        Region::new(0, 0, 1, 1, size as u32),
        Transfer::STREAM.order(MemcpyOrder::ColMajor),
    )
    .map_err(|e| e.to_string())?;
    rt.stop().unwrap();
    let got: Vec<u32> = out.iter().map(|w| w & 0xffff).collect();
    let want: Vec<u32> = x.iter().map(|v| v + 1).collect();
    assert_eq!(got, want, "{arch} size {size}");
    Ok(())
}

#[test]
fn host_stream_buffering_is_calibrated_on_the_vendor_14_wavelet_figure() {
    // The vendor's pipeline-01 figure (WSE-2): with the output undrained, a stream of up to
    // 14 wavelets completes and a longer one stalls. Ours: the memcpy path (4,
    // SimParams::h2d_path_depth) + input queue 2 (4) + output queue 3 (WSE-2 6, WSE-3 8).
    for (arch, fits) in [(Arch::Wse2, 14), (Arch::Wse3, 16)] {
        for size in [1, 12, fits] {
            stream_through_one_pe(arch, size).unwrap();
        }
        let err = stream_through_one_pe(arch, fits + 1).unwrap_err();
        assert!(
            err.contains("deadlock")
                && err.contains(&format!(
                    "took {fits} of {} streamed host wavelets",
                    fits + 1
                )),
            "{arch}: {err}"
        );
        assert!(
            err.contains("4 wavelet(s) of colour 0 in the memcpy path from the host"),
            "{arch}: {err}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Tutorials.

#[test]
fn t03_memcpy_2x2_row_and_column_major_16_bit() {
    let (w, h, n) = (2usize, 2usize, 6usize);
    for arch in BOTH {
        let mut rt = tutorial("03-memcpy-2x2", arch, (9, 4), &[("N", "6")]);
        // x[row][col][k], deterministic values in -1000..1000.
        let x: Vec<i16> = data(3, w * h * n)
            .iter()
            .map(|v| (v * 1000.0) as i16)
            .collect();
        let at = |r: usize, c: usize, k: usize| (r * w + c) * n + k;
        // Column-major host order: host index j + i*h + k*h*w for PE (i = column, j = row).
        let mut col_major = vec![0u32; w * h * n];
        for r in 0..h {
            for c in 0..w {
                for k in 0..n {
                    col_major[r + c * h + k * h * w] = u32::from(x[at(r, c, k)] as u16);
                }
            }
        }
        h2d(
            &mut rt,
            "x",
            &col_major,
            Region::new(0, 0, 2, 2, n as u32),
            Transfer::COPY
                .data_type(MemcpyDataType::Bit16)
                .order(MemcpyOrder::ColMajor),
        );
        rt.launch("compute", &[], false).unwrap();
        let y = d2h(
            &mut rt,
            "y",
            Region::new(0, 0, 2, 2, n as u32),
            Transfer::COPY.data_type(MemcpyDataType::Bit16),
        );
        rt.stop().unwrap();
        for r in 0..h {
            for c in 0..w {
                for k in 0..n {
                    let want = 2 * x[at(r, c, k)] + 100 * r as i16 + 10 * c as i16;
                    assert_eq!(
                        y[at(r, c, k)] as u16 as i16,
                        want,
                        "{arch} PE ({c},{r}) element {k}"
                    );
                }
            }
        }
    }
}

#[test]
fn t04_params_from_the_command_line() {
    let (width, size, power) = (4usize, 5usize, 2);
    for arch in BOTH {
        let mut rt = tutorial(
            "04-params",
            arch,
            (11, 3),
            &[("width", "4"), ("size", "5"), ("power", "2")],
        );
        // What run.py reads: the params, as strings, in out.json.
        let meta =
            csl_examples::read_metadata(&out_dir(&format!("04-params-{arch}-width4-size5-power2")));
        let param = |k: &str| csl_examples::param_i64(meta.as_ref(), k);
        assert_eq!(
            (param("width"), param("size"), param("power")),
            (Some(4), Some(5), Some(2)),
            "{arch}: out.json params"
        );
        let x: Vec<f32> = data(4, width * size).iter().map(|v| v * 2.0).collect();
        h2d_f32(
            &mut rt,
            "x",
            &x,
            Region::new(0, 0, width as u32, 1, size as u32),
        );
        rt.launch("compute", &[], false).unwrap();
        let y = d2h_f32(
            &mut rt,
            "y",
            Region::new(0, 0, width as u32, 1, size as u32),
        );
        let index = d2h_u32(
            &mut rt,
            "index",
            Region::new(0, 0, width as u32, 1, size as u32),
        );
        rt.stop().unwrap();
        assert_eq!(
            index,
            (0..(width * size) as u32).collect::<Vec<_>>(),
            "{arch} index"
        );
        let want: Vec<f32> = x
            .iter()
            .map(|v| (0..power).fold(1.0f32, |p, _| p * v))
            .collect();
        assert_eq!(y, want, "{arch} y = x^{power}");
    }
}

/// y = A x + b in f32, summing in the order the tutorials' DSD code does: y = b, then
/// one column at a time.
fn gemv_reference(a: &[f32], x: &[f32], b: &[f32], m: usize, n: usize) -> Vec<f32> {
    (0..m)
        .map(|i| {
            let mut acc = b[i];
            for j in 0..n {
                acc += a[i * n + j] * x[j];
            }
            acc
        })
        .collect()
}

#[test]
fn t05_gemv_split_over_a_column_of_pes() {
    let (m, n, p) = (8usize, 5usize, 4usize);
    let rows = m / p;
    for arch in BOTH {
        let mut rt = tutorial(
            "05-gemv-multi-pe",
            arch,
            (8, 6),
            &[("M", "8"), ("N", "5"), ("P", "4")],
        );
        let a = data(51, m * n);
        let x = data(52, n);
        let b = data(53, m);
        h2d_f32(
            &mut rt,
            "A",
            &a,
            Region::new(0, 0, 1, p as u32, (rows * n) as u32),
        );
        h2d_f32(
            &mut rt,
            "b",
            &b,
            Region::new(0, 0, 1, p as u32, rows as u32),
        );
        // What memcpy_h2d_colbcast does: the same x on every PE of the column.
        let xs: Vec<f32> = (0..p).flat_map(|_| x.iter().copied()).collect();
        h2d_f32(&mut rt, "x", &xs, Region::new(0, 0, 1, p as u32, n as u32));
        rt.launch("compute", &[], false).unwrap();
        let y = d2h_f32(&mut rt, "y", Region::new(0, 0, 1, p as u32, rows as u32));
        rt.stop().unwrap();
        assert_close(
            &y,
            &gemv_reference(&a, &x, &b, m, n),
            1e-5,
            1e-6,
            &format!("{arch} y"),
        );
    }
}

#[test]
fn t06_routes_between_two_pes() {
    let n = 6usize;
    for arch in BOTH {
        let mut rt = tutorial("06-routes-two-pes", arch, (9, 3), &[("n", "6")]);
        let x = data(6, 2 * n);
        h2d_f32(&mut rt, "x", &x, Region::new(0, 0, 2, 1, n as u32));
        rt.launch("compute", &[], false).unwrap();
        let y = d2h_f32(&mut rt, "y", Region::new(1, 0, 1, 1, n as u32));
        rt.stop().unwrap();
        let want: Vec<f32> = (0..n).map(|k| x[n + k] + x[k]).collect();
        assert_eq!(y, want, "{arch}");
    }
}

#[test]
fn t07_gemv_on_a_grid_with_column_multicast_and_row_sums() {
    let (m, n, pw, ph) = (6usize, 8usize, 4usize, 3usize);
    let (mt, nt) = (m / ph, n / pw);
    for arch in BOTH {
        let mut rt = tutorial(
            "07-routes-grid",
            arch,
            (11, 5),
            &[("M", "6"), ("N", "8"), ("Pw", "4"), ("Ph", "3")],
        );
        let a = data(71, m * n);
        let x = data(72, n);
        let b = data(73, m);
        // Tiles in host row-major order: [PE row][PE column][tile row][tile column].
        let mut tiles = Vec::with_capacity(m * n);
        for py in 0..ph {
            for px in 0..pw {
                for i in 0..mt {
                    for j in 0..nt {
                        tiles.push(a[(py * mt + i) * n + px * nt + j]);
                    }
                }
            }
        }
        h2d_f32(
            &mut rt,
            "A",
            &tiles,
            Region::new(0, 0, pw as u32, ph as u32, (mt * nt) as u32),
        );
        h2d_f32(&mut rt, "x", &x, Region::new(0, 0, pw as u32, 1, nt as u32));
        h2d_f32(
            &mut rt,
            "b",
            &b,
            Region::new(pw as u32 - 1, 0, 1, ph as u32, mt as u32),
        );
        rt.launch("compute", &[], false).unwrap();
        let y = d2h_f32(
            &mut rt,
            "y",
            Region::new(pw as u32 - 1, 0, 1, ph as u32, mt as u32),
        );
        rt.stop().unwrap();
        assert_close(
            &y,
            &gemv_reference(&a, &x, &b, m, n),
            1e-5,
            1e-5,
            &format!("{arch} y"),
        );
    }
}

#[test]
fn t08_streaming_memcpy_into_a_data_task_and_back() {
    let (w, n) = (2usize, 8usize);
    for arch in BOTH {
        let mut rt = tutorial(
            "08-streaming-memcpy",
            arch,
            (9, 3),
            &[
                ("n", "8"),
                ("MEMCPYH2D_DATA_1_ID", "2"),
                ("MEMCPYD2H_DATA_1_ID", "3"),
            ],
        );
        let x = data(8, w * n);
        let bits: Vec<u32> = x.iter().map(|f| f.to_bits()).collect();
        rt.h2d(
            2,
            &bits,
            Region::new(0, 0, w as u32, 1, n as u32),
            Transfer::STREAM,
        )
        .unwrap();
        let mut out = vec![0u32; w * n];
        rt.d2h(
            &mut out,
            3,
            Region::new(0, 0, w as u32, 1, n as u32),
            Transfer::STREAM,
        )
        .unwrap();
        rt.stop().unwrap();
        for pe in 0..w {
            let mut acc = 0.0f32;
            for k in 0..n {
                acc += x[pe * n + k];
                assert_eq!(
                    f32::from_bits(out[pe * n + k]),
                    acc,
                    "{arch} PE {pe} sum {k}"
                );
            }
        }
    }
}

fn fifo_pipeline(arch: Arch, n: usize, fifo: usize) -> Result<Vec<f32>, String> {
    let (ns, fs) = (n.to_string(), fifo.to_string());
    let mut rt = tutorial(
        "09-fifo-pipeline",
        arch,
        (8, 3),
        &[("n", &ns), ("fifo_size", &fs)],
    );
    let x = data(9, n);
    let bits: Vec<u32> = x.iter().map(|f| f.to_bits()).collect();
    rt.h2d(
        2,
        &bits,
        Region::new(0, 0, 1, 1, n as u32),
        Transfer::STREAM,
    )
    .map_err(|e| e.to_string())?;
    let mut out = vec![0u32; n];
    rt.d2h(
        &mut out,
        3,
        Region::new(0, 0, 1, 1, n as u32),
        Transfer::STREAM,
    )
    .map_err(|e| e.to_string())?;
    rt.stop().unwrap();
    let got: Vec<f32> = out.into_iter().map(f32::from_bits).collect();
    let want: Vec<f32> = x.iter().map(|v| 2.0 * v + 1.0).collect();
    assert_eq!(got, want, "{arch}: y = 2x + 1");
    Ok(got)
}

#[test]
fn t09_fifo_pipeline_and_the_deadlock_without_room() {
    for arch in BOTH {
        fifo_pipeline(arch, 32, 32).unwrap();
        // The README's warning: a FIFO far smaller than the stream cannot absorb the H2D
        // command, which then waits for a D2H command that cannot start.
        let err = fifo_pipeline(arch, 64, 8).unwrap_err();
        assert!(err.contains("deadlock"), "{arch}: {err}");
    }
}

#[test]
fn t10_switches_deal_alternately_east_and_west() {
    let n = 8usize;
    for arch in BOTH {
        let mut rt = tutorial("10-switches", arch, (10, 3), &[("n", "8")]);
        let x: Vec<f32> = (1..=n).map(|k| k as f32 * 1.5).collect();
        h2d_f32(&mut rt, "x", &x, Region::new(1, 0, 1, 1, n as u32));
        rt.launch("deal", &[], false).unwrap();
        let hands = d2h_f32(&mut rt, "hand", Region::new(0, 0, 3, 1, (n / 2) as u32));
        rt.stop().unwrap();
        let (west, east) = (&hands[..n / 2], &hands[n..]);
        assert_eq!(
            east,
            x.iter().step_by(2).copied().collect::<Vec<_>>().as_slice(),
            "{arch} east"
        );
        assert_eq!(
            west,
            x.iter()
                .skip(1)
                .step_by(2)
                .copied()
                .collect::<Vec<_>>()
                .as_slice(),
            "{arch} west"
        );
    }
}

#[test]
fn t11_control_wavelets_start_control_tasks() {
    let n = 5usize;
    on_both("11-control-tasks", (9, 3), &[("n", "5")], |rt, arch| {
        for (round, tag) in [(1u32, 0x1234u32), (2, 0xBEEF)] {
            let x: Vec<u32> = data(110 + round, n)
                .iter()
                .map(|v| ((v + 1.0) * 500.0) as u32)
                .collect();
            h2d(
                rt,
                "x",
                &x,
                Region::new(0, 0, 1, 1, n as u32),
                Transfer::COPY,
            );
            rt.launch("send", &[tag], false).unwrap();
            let r = d2h_u32(rt, "result", Region::new(1, 0, 1, 1, 4));
            assert_eq!(
                r,
                vec![x.iter().sum::<u32>(), tag, round, n as u32],
                "{arch} round {round}"
            );
        }
    });
}

#[test]
fn t12_range_filters_scatter_one_stream() {
    let (p, k) = (3usize, 4usize);
    let total = p * k;
    for arch in BOTH {
        let mut rt = tutorial("12-filters", arch, (11, 3), &[("P", "3"), ("k", "4")]);
        let values: Vec<i16> = data(12, total)
            .iter()
            .map(|v| (v * 30000.0) as i16)
            .collect();
        let words: Vec<u32> = values
            .iter()
            .enumerate()
            .map(|(i, &v)| ((i as u32) << 16) | u32::from(v as u16))
            .collect();
        h2d(
            &mut rt,
            "packed",
            &words,
            Region::new(0, 0, 1, 1, total as u32),
            Transfer::COPY,
        );
        rt.launch("scatter", &[], false).unwrap();
        let out = d2h(
            &mut rt,
            "slice",
            Region::new(1, 0, p as u32, 1, k as u32),
            Transfer::COPY.data_type(MemcpyDataType::Bit16),
        );
        rt.stop().unwrap();
        let got: Vec<i16> = out.iter().map(|&w| w as u16 as i16).collect();
        assert_eq!(got, values, "{arch}");
    }
}

/// Tutorial 13 with the given roots; returns (row totals of column root_x, grand total).
fn collectives(
    rt: &mut SdkRuntime,
    pw: usize,
    ph: usize,
    n: usize,
    root_x: u32,
    root_y: u32,
    seed: u32,
) {
    let vectors: Vec<u32> = data(seed, ph * n)
        .iter()
        .map(|v| ((v + 1.0) * 50.0) as u32)
        .collect();
    h2d(
        rt,
        "buf",
        &vectors,
        Region::new(root_x, 0, 1, ph as u32, n as u32),
        Transfer::COPY,
    );
    rt.launch("compute", &[root_x, root_y], false).unwrap();
    let totals = d2h_f32(rt, "total", Region::new(root_x, 0, 1, ph as u32, n as u32));
    let grand = d2h_f32(rt, "grand", Region::new(root_x, root_y, 1, 1, n as u32));
    let scale: f32 = (1..=pw).map(|v| v as f32).sum();
    let mut want_grand = vec![0.0f32; n];
    for y in 0..ph {
        for i in 0..n {
            let want = vectors[y * n + i] as f32 * scale + (pw * y) as f32;
            assert_eq!(
                totals[y * n + i],
                want,
                "root ({root_x},{root_y}) row {y} element {i}"
            );
            want_grand[i] += want;
        }
    }
    for i in 0..n {
        assert!(
            (grand[i] - want_grand[i]).abs() <= 1e-6 * want_grand[i].abs(),
            "root ({root_x},{root_y}) grand {i}: {} vs {}",
            grand[i],
            want_grand[i]
        );
    }
}

#[test]
fn t13_collectives_broadcast_and_reduce_with_every_root() {
    let (pw, ph, n) = (4usize, 3usize, 5usize);
    on_both(
        "13-collectives",
        (11, 5),
        &[("Pw", "4"), ("Ph", "3"), ("n", "5")],
        |rt, _| {
            // Every root column and row, one after the other on the same fabric (the library
            // must leave no wavelet behind between operations).
            for (rx, ry, seed) in every_root(pw as u32, ph as u32, 130) {
                collectives(rt, pw, ph, n, rx, ry, seed);
            }
        },
    );
}

#[test]
fn t13_collectives_on_a_longer_row_and_a_single_column() {
    for arch in BOTH {
        // 7 PEs in a row: a root in the middle has three PEs on each side.
        let mut rt = tutorial(
            "13-collectives",
            arch,
            (14, 3),
            &[("Pw", "7"), ("Ph", "1"), ("n", "3")],
        );
        for rx in [0, 3, 6, 2] {
            collectives(&mut rt, 7, 1, 3, rx, 0, 200 + rx);
        }
        rt.stop().unwrap();
        // A 1-wide grid: the row operations are local, the column reduction does the work.
        let mut rt = tutorial(
            "13-collectives",
            arch,
            (8, 8),
            &[("Pw", "1"), ("Ph", "6"), ("n", "4")],
        );
        for ry in [0, 5, 3] {
            collectives(&mut rt, 1, 6, 4, 0, ry, 300 + ry);
        }
        rt.stop().unwrap();
    }
}

/// The 16-bit words of global `name` on the PE at (x, y) of the rectangle.
fn read_global_u16(rt: &SdkRuntime, x: u32, y: u32, name: &str) -> Vec<u16> {
    let image = rt.image();
    let class = image.placement[(y * image.meta.width + x) as usize] as usize;
    let globals = &image.classes[class].info.globals;
    let g = globals
        .iter()
        .find(|g| g.name == name || g.name.rsplit(['.', ':']).next() == Some(name))
        .unwrap_or_else(|| {
            panic!(
                "no global {name}: {:?}",
                globals.iter().map(|g| &g.name).collect::<Vec<_>>()
            )
        });
    let pe = rt.simulator().unwrap().pe(x, y).unwrap();
    let bytes = &pe.memory()[g.addr as usize..(g.addr + g.size) as usize];
    bytes
        .chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect()
}

/// A decoded `<debug>` record.
#[derive(Debug, PartialEq)]
enum Rec {
    Bool(bool),
    U16(u16),
    F32(f32),
    Str(String),
    Time(u64),
}

fn decode_trace(w: &[u16]) -> (String, Vec<Rec>, u16) {
    assert_eq!(w[0], 0xDEB6, "magic");
    let (used, dropped, key_len) = (w[1] as usize, w[2], w[3] as usize);
    let key_words = key_len.div_ceil(2);
    let bytes = |ws: &[u16], n: usize| -> String {
        ws.iter()
            .flat_map(|v| v.to_le_bytes())
            .take(n)
            .map(char::from)
            .collect()
    };
    let key = bytes(&w[4..4 + key_words], key_len);
    let mut pos = 4 + key_words;
    let end = pos + used;
    let mut recs = Vec::new();
    while pos < end {
        let (kind, extra) = (w[pos] & 0xff, (w[pos] >> 8) as usize);
        pos += 1;
        match kind {
            1 => recs.push(Rec::Bool(w[pos] != 0)),
            4 => recs.push(Rec::U16(w[pos])),
            9 => recs.push(Rec::F32(f32::from_bits(
                u32::from(w[pos]) | (u32::from(w[pos + 1]) << 16),
            ))),
            10 => recs.push(Rec::Str(bytes(&w[pos..], extra))),
            11 => recs.push(Rec::Time(
                u64::from(w[pos]) | (u64::from(w[pos + 1]) << 16) | (u64::from(w[pos + 2]) << 32),
            )),
            other => panic!("unexpected tag {other}"),
        }
        pos += match kind {
            7..=9 => 2,
            10 => extra.div_ceil(2),
            11 => 3,
            _ => 1,
        };
    }
    (key, recs, dropped)
}

#[test]
fn t14_debug_trace_buffers_and_simprint_log() {
    let iterations = 6usize;
    for arch in BOTH {
        let mut rt = tutorial("14-debug", arch, (9, 3), &[("iterations", "6")]);
        let a = [2.0f32, 30.0];
        h2d_f32(&mut rt, "a", &a, Region::new(0, 0, 2, 1, 1));
        rt.launch("compute", &[], false).unwrap();
        let root = d2h_f32(&mut rt, "root", Region::new(0, 0, 2, 1, 1));
        rt.stop().unwrap();
        for px in 0..2u32 {
            let (key, recs, dropped) = decode_trace(&read_global_u16(&rt, px, 0, "trace_buffer"));
            assert_eq!((key.as_str(), dropped), ("newton", 0), "{arch}");
            assert_eq!(recs[0], Rec::Str("PE".into()), "{arch}");
            assert_eq!(recs[1], Rec::U16(px as u16), "{arch}");
            let (Rec::Time(t0), Some(Rec::Time(t1))) = (&recs[2], recs.last()) else {
                panic!("{arch}: timestamps {recs:?}")
            };
            assert!(t1 > t0, "{arch}: time runs forward");
            let mut r = if a[px as usize] > 1.0 {
                a[px as usize]
            } else {
                1.0
            };
            for k in 0..iterations {
                r = 0.5 * (r + a[px as usize] / r);
                assert_eq!(recs[3 + 2 * k], Rec::U16(k as u16), "{arch} k");
                assert_eq!(recs[4 + 2 * k], Rec::F32(r), "{arch} iterate {k}");
            }
            assert_eq!(
                recs[3 + 2 * iterations],
                Rec::Bool(true),
                "{arch} converged"
            );
            assert_eq!(root[px as usize], r, "{arch} root");
        }
        // <simprint>: one line per PE.
        let log = rt.sim_log();
        for px in 0..2 {
            let line = format!("PE({px},0): sqrt({:.6}) = {:.6}", a[px], root[px]);
            assert!(
                log.iter().any(|l| l.ends_with(&line)),
                "{arch}: `{line}` not in the log {log:?}"
            );
        }
    }
}

#[test]
fn t15_color_swap_running_sums() {
    // WSE-2 uses colour swap; WSE-3 (no colour swap in CSL) falls back to alternating
    // colours. Same answer.
    let (width, n) = (5usize, 4usize);
    for arch in BOTH {
        let mut rt = tutorial(
            "15-color-swap",
            arch,
            (12, 3),
            &[("width", "5"), ("n", "4")],
        );
        let swaps = rt.image().routes.iter().filter(|r| r.color_swap_x).count();
        // Two swapping colours per PE, but the first PE receives nothing (no receive
        // colour: a route from beyond the edge would draw a route warning).
        assert_eq!(
            swaps,
            if arch == Arch::Wse2 { 2 * width - 1 } else { 0 },
            "{arch}: colour configs with swap"
        );
        let v = data(15, width * n);
        h2d_f32(
            &mut rt,
            "v",
            &v,
            Region::new(0, 0, width as u32, 1, n as u32),
        );
        rt.launch("compute", &[], false).unwrap();
        let sums = d2h_f32(
            &mut rt,
            "sums",
            Region::new(0, 0, width as u32, 1, n as u32),
        );
        rt.stop().unwrap();
        for k in 0..n {
            let mut acc = 0.0f32;
            for x in 0..width {
                acc = if x == 0 { v[k] } else { acc + v[x * n + k] };
                assert_eq!(sums[x * n + k], acc, "{arch} PE {x} element {k}");
            }
        }
    }
}

#[test]
fn t16_microthreads_explicit_on_wse3_implied_on_wse2() {
    let n = 6usize;
    for arch in BOTH {
        let mut rt = tutorial("16-microthreads", arch, (10, 3), &[("n", "6")]);
        let v = data(16, 3 * n);
        h2d_f32(&mut rt, "v", &v, Region::new(0, 0, 3, 1, n as u32));
        rt.launch("compute", &[], false).unwrap();
        let r = d2h_f32(&mut rt, "result", Region::new(1, 0, 1, 1, n as u32));
        rt.stop().unwrap();
        let want: Vec<f32> = (0..n)
            .map(|k| (-2.0 * v[n + k] + v[k]) + v[2 * n + k])
            .collect();
        assert_eq!(r, want, "{arch}");
    }
}

#[test]
fn t17_message_passing_collects_every_partial_sum() {
    let (w, h, n) = (4usize, 3usize, 8usize);
    let mut rt = tutorial(
        "17-message-passing",
        Arch::Wse3,
        (11, 5),
        &[("W", "4"), ("H", "3"), ("N", "8")],
    );
    let v = data(17, w * h * n);
    h2d_f32(
        &mut rt,
        "v",
        &v,
        Region::new(0, 0, w as u32, h as u32, n as u32),
    );
    rt.launch("compute", &[], false).unwrap();
    let sums = d2h_f32(
        &mut rt,
        "sums",
        Region::new(w as u32 - 1, h as u32 - 1, 1, 1, (w * h) as u32),
    );
    rt.stop().unwrap();
    // PE p = y * w + x holds v[p * n .. (p + 1) * n]; the device adds in order from 0.0.
    let want: Vec<f32> = (0..w * h)
        .map(|p| v[p * n..(p + 1) * n].iter().fold(0.0f32, |s, &e| s + e))
        .collect();
    assert_eq!(sums, want);
}

#[test]
fn t17_message_passing_is_rejected_on_wse2() {
    let opts = cslc::driver::Options {
        arch: Arch::Wse2,
        fabric_dims: (11, 5),
        ..cslc::driver::Options::default()
    };
    let comp = cslc::driver::compile_file(
        &csl_tests::repo_root().join("examples/tutorials/17-message-passing/layout.csl"),
        &opts,
    );
    let text = cslc::diag::render_all(&comp.diagnostics, &comp.sources, false);
    assert!(comp.output.is_none() && text.contains("wse3"), "{text}");
}

/// A direct 3-D DFT of the `n`^3 complex numbers `x[(x * n + y) * n + z]` (f64; sign -1
/// forward, +1 inverse), one axis at a time, each axis summed term by term.
fn dft3(x: &[(f64, f64)], n: usize, sign: f64) -> Vec<(f64, f64)> {
    let mut a = x.to_vec();
    for stride in [1, n, n * n] {
        let mut b = vec![(0.0, 0.0); a.len()];
        for (i, out) in b.iter_mut().enumerate() {
            let k = (i / stride) % n;
            let base = i - k * stride;
            for j in 0..n {
                let (re, im) = a[base + j * stride];
                let ang = sign * 2.0 * std::f64::consts::PI * (k * j) as f64 / n as f64;
                out.0 += re * ang.cos() - im * ang.sin();
                out.1 += re * ang.sin() + im * ang.cos();
            }
        }
        a = b;
    }
    a
}

/// The 3-D FFT library (`<kernels/fft/fft3d_layout>`, program `tests/programs/fft3d`):
/// each entry point and normalisation against a direct DFT on the host, both
/// architectures, 8^3 points on 4 x 4 PEs (2 x 2 pencils per PE).
#[test]
fn fft3d_library_matches_a_direct_dft() {
    let (n, w) = (8usize, 4usize);
    let t = n / w;
    let local = 2 * t * t * n;
    let grid = |l: usize| Region::new(0, 0, w as u32, w as u32, l as u32);
    // The host's element of (x, y, z) in the PE-major layout the library documents.
    let word = |x: usize, y: usize, z: usize| {
        let pe = (y / t) * w + x / t;
        pe * local + 2 * (z * t * t + (y % t) * t + x % t)
    };
    // Twiddles: cos and sin of pi*k/(n/2), k < n/2, interleaved.
    let tw: Vec<f32> = (0..n / 2)
        .flat_map(|k| {
            let a = std::f64::consts::PI * k as f64 / (n / 2) as f64;
            [a.cos() as f32, a.sin() as f32]
        })
        .collect();
    // (entry point, its arguments, inverse, scale, imaginary input ignored)
    let n3 = (n * n * n) as f64;
    let cases: [(&str, Vec<u32>, bool, f64, bool); 5] = [
        ("csfftExecC2C", vec![0, 0], false, 1.0, false),
        ("csfftExecC2C", vec![0, 1], true, 1.0 / n3, false),
        ("csfftExecC2C", vec![1, 0], false, 1.0 / n3.sqrt(), false),
        ("csfftExecR2C", vec![2], false, 1.0 / n3, true),
        ("csfftExecC2R", vec![2], true, 1.0, false),
    ];
    program_on_both("fft3d", (11, 6), &[("N", "8"), ("W", "4")], |rt, arch| {
        h2d_f32(rt, "twiddle_array", &tw.repeat(w * w), grid(n));
        for (seed, (entry, args, inverse, scale, real)) in cases.iter().enumerate() {
            let vals = data(900 + seed as u32, 2 * n * n * n);
            let mut dev = vec![0.0f32; w * w * local];
            let mut host = vec![(0.0, 0.0); n * n * n];
            for x in 0..n {
                for y in 0..n {
                    for z in 0..n {
                        let i = (x * n + y) * n + z;
                        let (re, im) = (vals[2 * i], vals[2 * i + 1]);
                        dev[word(x, y, z)] = re;
                        dev[word(x, y, z) + 1] = im;
                        host[i] = (re as f64, if *real { 0.0 } else { im as f64 });
                    }
                }
            }
            h2d_f32(rt, "X", &dev, grid(local));
            rt.launch(entry, args, false).unwrap();
            let got = d2h_f32(rt, "X", grid(local));
            let want = dft3(&host, n, if *inverse { 1.0 } else { -1.0 });
            let peak = want.iter().map(|c| c.0.hypot(c.1)).fold(0.0, f64::max) * scale;
            for x in 0..n {
                for y in 0..n {
                    for z in 0..n {
                        let (wr, wi) = want[(x * n + y) * n + z];
                        let (gr, gi) = (got[word(x, y, z)], got[word(x, y, z) + 1]);
                        let err = (gr as f64 - wr * scale).hypot(gi as f64 - wi * scale);
                        assert!(
                            err <= 1e-5 * peak,
                            "{arch} {entry}{args:?} at ({x},{y},{z}): got ({gr}, {gi}), \
                             want ({}, {})",
                            wr * scale,
                            wi * scale
                        );
                    }
                }
            }
        }
        // The duration: a 48-bit cycle count, the same order as the run.
        let time = d2h_u32(rt, "fft_time", grid(2));
        assert!(
            time.chunks(2).all(|c| c[0] > 1000 && c[1] == 0),
            "{arch}: fft_time {time:?}"
        );
    });
}
