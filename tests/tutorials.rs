//! The tutorials of `examples/tutorials/03-*` onwards and the CSL libraries written for
//! them (`<math>`, `<random>`, `<directions>`, `<debug>`, `<collectives_2d/...>`): each
//! tutorial is compiled for every architecture it supports and its host logic (what its
//! `run.py` does) is replayed here with the Rust `SdkRuntime`, checking the same answer.

#![allow(clippy::unwrap_used, clippy::too_many_arguments)]

use csl_arch::Arch;
use cslsim::host::{MemcpyDataType, MemcpyOrder, SdkRuntime};
use std::path::PathBuf;

const BOTH: [Arch; 2] = [Arch::Wse2, Arch::Wse3];

/// Compiles `layout` (relative to the repository root) with `params` on a `dims` fabric and
/// loads and starts it.
fn build(tag: &str, layout: &str, arch: Arch, dims: (u32, u32), params: &[(&str, &str)]) -> SdkRuntime {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("tutorials-{tag}-{arch}"));
    csl_tests::compile_to(layout, arch, dims, params, &dir);
    let mut rt = SdkRuntime::new(&dir).unwrap().with_max_cycles(50_000_000);
    rt.load().unwrap();
    rt.run().unwrap();
    rt
}

/// Builds tutorial `dir` (under examples/tutorials).
fn tutorial(dir: &str, arch: Arch, dims: (u32, u32), params: &[(&str, &str)]) -> SdkRuntime {
    build(dir, &format!("examples/tutorials/{dir}/layout.csl"), arch, dims, params)
}

/// Builds test program `name` (under tests/programs).
fn program(name: &str, arch: Arch, dims: (u32, u32)) -> SdkRuntime {
    build(name, &format!("tests/programs/{name}/layout.csl"), arch, dims, &[])
}

fn h2d(rt: &mut SdkRuntime, name: &str, data: &[u32], (px, py, w, h): (u32, u32, u32, u32), n: u32, dt: MemcpyDataType, order: MemcpyOrder) {
    let id = rt.get_id(name).unwrap();
    rt.memcpy_h2d(id, data, px, py, w, h, n, false, dt, order, false).unwrap();
}

fn d2h(rt: &mut SdkRuntime, name: &str, (px, py, w, h): (u32, u32, u32, u32), n: u32, dt: MemcpyDataType, order: MemcpyOrder) -> Vec<u32> {
    let id = rt.get_id(name).unwrap();
    let mut out = vec![0u32; (w * h * n) as usize];
    rt.memcpy_d2h(&mut out, id, px, py, w, h, n, false, dt, order, false).unwrap();
    out
}

fn h2d_f32(rt: &mut SdkRuntime, name: &str, data: &[f32], region: (u32, u32, u32, u32), n: u32) {
    let bits: Vec<u32> = data.iter().map(|f| f.to_bits()).collect();
    h2d(rt, name, &bits, region, n, MemcpyDataType::Bit32, MemcpyOrder::RowMajor);
}

fn d2h_f32(rt: &mut SdkRuntime, name: &str, region: (u32, u32, u32, u32), n: u32) -> Vec<f32> {
    d2h(rt, name, region, n, MemcpyDataType::Bit32, MemcpyOrder::RowMajor).into_iter().map(f32::from_bits).collect()
}

fn d2h_u32(rt: &mut SdkRuntime, name: &str, region: (u32, u32, u32, u32), n: u32) -> Vec<u32> {
    d2h(rt, name, region, n, MemcpyDataType::Bit32, MemcpyOrder::RowMajor)
}

/// Deterministic test data in [-1, 1) (the same generator as `csl_examples::lcg_f32`).
fn data(seed: u32, n: usize) -> Vec<f32> {
    csl_examples::lcg_f32(seed, n)
}

fn assert_close(got: &[f32], want: &[f32], rtol: f32, atol: f32, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= atol + rtol * w.abs(), "{what}[{i}]: got {g}, want {w}");
    }
}

// ---------------------------------------------------------------------------------------
// Libraries.

/// Runs function `which` of tests/programs/math on 64 inputs.
fn math_run(rt: &mut SdkRuntime, which: u32, x: &[f32], y: &[f32]) -> Vec<f32> {
    h2d_f32(rt, "x", x, (0, 0, 1, 1), 64);
    h2d_f32(rt, "y", y, (0, 0, 1, 1), 64);
    rt.launch("run", &[which], false).unwrap();
    d2h_f32(rt, "r", (0, 0, 1, 1), 64)
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
    got.iter().zip(x).map(|(&g, &v)| (f64::from(g) - want(f64::from(v))).abs()).fold(0.0, f64::max)
}

/// 64 values spread over [lo, hi] (deterministic).
fn spread(seed: u32, lo: f32, hi: f32) -> Vec<f32> {
    data(seed, 64).into_iter().map(|u| lo + (hi - lo) * (u + 1.0) * 0.5).collect()
}

#[test]
fn math_library_accuracy() {
    for arch in BOTH {
        let mut rt = program("math", arch, (8, 3));
        let zeros = vec![0.0f32; 64];
        // Positive numbers over the whole exponent range, plus a subnormal.
        let mut pos: Vec<f32> = spread(1, -80.0, 80.0).into_iter().map(f32::exp).collect();
        pos[0] = 1e-40;
        pos[1] = 1.0;
        pos[2] = 4.0;
        let r = math_run(&mut rt, 0, &pos, &zeros);
        assert!(max_rel(&r, f64::sqrt, &pos) < 2e-7, "{arch} sqrt");
        assert_eq!(r[2], 2.0, "{arch} sqrt(4)");
        let r = math_run(&mut rt, 1, &pos, &zeros);
        assert!(max_rel(&r, |v| 1.0 / v.sqrt(), &pos) < 3e-7, "{arch} invsqrt");
        let x = spread(2, -87.0, 88.0);
        let r = math_run(&mut rt, 2, &x, &zeros);
        assert!(max_rel(&r, f64::exp, &x) < 5e-7, "{arch} exp");
        let mut lx: Vec<f32> = spread(3, -100.0, 88.0).into_iter().map(f32::exp).collect();
        lx[0] = 1.0;
        lx[1] = 1e-42;
        lx[2] = 1.000_000_1;
        let r = math_run(&mut rt, 3, &lx, &zeros);
        for (i, (&g, &v)) in r.iter().zip(&lx).enumerate() {
            let w = f64::from(v).ln();
            let err = (f64::from(g) - w).abs();
            assert!(err < 2e-7 || err / w.abs() < 3e-7, "{arch} log({v}) [{i}] = {g}, want {w}");
        }
        let mut t = spread(4, -6434.0, 6434.0);
        t[..8].copy_from_slice(&spread(5, -4.0, 4.0)[..8]);
        let r = math_run(&mut rt, 4, &t, &zeros);
        assert!(max_abs(&r, f64::sin, &t) < 3e-7, "{arch} sin");
        let r = math_run(&mut rt, 5, &t, &zeros);
        assert!(max_abs(&r, f64::cos, &t) < 3e-7, "{arch} cos");
        let a = spread(6, -3.0, 3.0);
        let b = spread(7, -3.0, 3.0);
        let r = math_run(&mut rt, 6, &a, &b);
        assert!(r.iter().zip(&a).all(|(g, v)| *g == v.abs()), "{arch} abs");
        let r = math_run(&mut rt, 7, &a, &b);
        assert!(r.iter().zip(a.iter().zip(&b)).all(|(g, (u, v))| *g == u.min(*v)), "{arch} min");
        let r = math_run(&mut rt, 8, &a, &b);
        assert!(r.iter().zip(a.iter().zip(&b)).all(|(g, (u, v))| *g == u.max(*v)), "{arch} max");
        let r = math_run(&mut rt, 9, &a, &b);
        assert!(r.iter().zip(&a).all(|(g, v)| *g == if *v > 0.0 { 1.0 } else if *v < 0.0 { -1.0 } else { 0.0 }), "{arch} sign");
        let px = spread(8, 0.1, 10.0);
        let py = spread(9, -5.0, 5.0);
        let r = math_run(&mut rt, 10, &px, &py);
        for (i, g) in r.iter().enumerate() {
            let w = f64::from(px[i]).powf(f64::from(py[i]));
            let bound = 5e-7 * (1.0 + (f64::from(py[i]) * f64::from(px[i]).ln()).abs()) + 1e-7;
            assert!((f64::from(*g) - w).abs() / w <= bound, "{arch} pow({}, {}) = {g}, want {w}", px[i], py[i]);
        }
        let f = spread(10, -100.0, 100.0);
        let r = math_run(&mut rt, 11, &f, &zeros);
        assert!(r.iter().zip(&f).all(|(g, v)| *g == v.floor()), "{arch} floor");
        let r = math_run(&mut rt, 12, &f, &zeros);
        assert!(r.iter().zip(&f).all(|(g, v)| *g == v.ceil()), "{arch} ceil");
        // Special values and the classification flags.
        let mut sp = vec![1.0f32; 64];
        sp[..6].copy_from_slice(&[f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0, -1.0]);
        let r = math_run(&mut rt, 0, &sp, &zeros);
        assert!(r[0].is_nan() && r[1] == f32::INFINITY && r[2].is_nan() && r[3] == 0.0 && r[5].is_nan(), "{arch} sqrt specials {:?}", &r[..6]);
        let r = math_run(&mut rt, 3, &sp, &zeros);
        assert!(r[0].is_nan() && r[1] == f32::INFINITY && r[2].is_nan() && r[3] == f32::NEG_INFINITY && r[5].is_nan(), "{arch} log specials {:?}", &r[..6]);
        let r = math_run(&mut rt, 2, &sp, &zeros);
        assert!(r[0].is_nan() && r[1] == f32::INFINITY && r[2] == 0.0 && r[3] == 1.0, "{arch} exp specials {:?}", &r[..6]);
        let r = math_run(&mut rt, 4, &sp, &zeros);
        assert!(r[0].is_nan() && r[1].is_nan() && r[2].is_nan() && r[3] == 0.0, "{arch} sin specials {:?}", &r[..6]);
        let flags = d2h_u32(&mut rt, "flags", (0, 0, 1, 1), 64);
        assert_eq!(&flags[..6], &[1, 2, 2, 4, 4, 4], "{arch} isNaN/isInf/isFinite");
        let ints: Vec<i32> = d2h(&mut rt, "ints", (0, 0, 1, 1), 16, MemcpyDataType::Bit32, MemcpyOrder::RowMajor).into_iter().map(|v| v as i32).collect();
        assert_eq!(&ints[..14], &[17, 300, -3, 9, -1, 0, 1, 150, 1, 1, 3_141_592, 2_718_281, 1, 1], "{arch} generic functions");
        rt.stop().unwrap();
    }
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
        let mut rt = program("random", arch, (9, 3));
        let (n, seed, lo, hi, pow) = (256usize, 1234u32, -2.0f32, 3.0f32, 5u16);
        rt.launch("draw", &[seed, lo.to_bits(), hi.to_bits(), u32::from(pow)], false).unwrap();
        let bits = d2h_u32(&mut rt, "bits", (0, 0, 2, 1), n as u32);
        let uniform = d2h_f32(&mut rt, "uniform", (0, 0, 2, 1), n as u32);
        let small = d2h_u32(&mut rt, "small", (0, 0, 2, 1), n as u32);
        let normal = d2h_f32(&mut rt, "normal", (0, 0, 2, 1), n as u32);
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
                assert_eq!(small[at(i)], xorshift(&mut s) >> (32 - pow), "{arch} PE {pe} pow {i}");
            }
            let z = &normal[pe * n..(pe + 1) * n];
            let mean = z.iter().map(|&v| f64::from(v)).sum::<f64>() / n as f64;
            let var = z.iter().map(|&v| (f64::from(v) - mean).powi(2)).sum::<f64>() / n as f64;
            assert!(mean.abs() < 0.2 && (var - 1.0).abs() < 0.25, "{arch} PE {pe} normal: mean {mean}, variance {var}");
        }
        assert_ne!(bits[0], bits[n], "{arch}: the two PEs must draw different streams");
    }
}

#[test]
fn directions_library_at_compile_time_and_runtime() {
    for arch in BOTH {
        let mut rt = program("directions", arch, (9, 3));
        rt.launch("start", &[], false).unwrap();
        let out = d2h_u32(&mut rt, "out", (1, 0, 1, 1), 26);
        rt.stop().unwrap();
        // N, E, S, W, RAMP = 0..4.
        assert_eq!(&out[0..5], &[1, 2, 3, 0, 4], "{arch} rotate_clockwise");
        assert_eq!(&out[5..10], &[3, 0, 1, 2, 4], "{arch} rotate_counterclockwise");
        assert_eq!(&out[10..15], &[2, 1, 0, 3, 4], "{arch} flip_vertical");
        assert_eq!(&out[15..20], &[0, 3, 2, 1, 4], "{arch} flip_horizontal");
        assert_eq!(&out[20..25], &[2, 3, 0, 1, 4], "{arch} flip");
        assert_eq!(out[25], 777, "{arch}: the route computed with <directions> carries the wavelet");
    }
}
