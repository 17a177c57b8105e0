//! Differential test of comptime against run time (issue 11): random integer expressions
//! over `i16`, `u16`, `i32` and `u32` are evaluated by the compiler's comptime interpreter
//! (every operand a comptime-known `@as(T, literal)`) and by the program on the simulator
//! (every operand a runtime global), and both must equal an independent host model bit
//! for bit. Expressions whose comptime evaluation is an error by design (an arithmetic
//! overflow of `T`, a division by zero, a shift by the width or more) are not generated;
//! within those rules the two evaluators must agree on every bit. The same is done for
//! `f32` expressions of `+ - * /` (against the host's IEEE single-precision arithmetic).
//!
//! `DIFF_SEEDS=N` runs N programs per type instead of the default (2 per integer type, 4
//! for `f32`; 40 expressions each).

#![allow(clippy::unwrap_used)]

use csl_arch::Arch;
use std::fmt::Write as _;
use std::path::PathBuf;

/// The tests' random numbers ([`SplitMix64`](csl_examples::SplitMix64)).
struct Rng(csl_examples::SplitMix64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0.next_u64() % n
    }
}

#[derive(Clone, Copy)]
struct Ty {
    name: &'static str,
    signed: bool,
    bits: u32,
}

impl Ty {
    fn min(self) -> i128 {
        if self.signed {
            -(1i128 << (self.bits - 1))
        } else {
            0
        }
    }
    fn max(self) -> i128 {
        if self.signed {
            (1i128 << (self.bits - 1)) - 1
        } else {
            (1i128 << self.bits) - 1
        }
    }
    fn unsigned(self) -> &'static str {
        if self.bits == 16 { "u16" } else { "u32" }
    }
    fn fits(self, v: i128) -> bool {
        (self.min()..=self.max()).contains(&v)
    }
    /// `v` reduced to the type's width (two's complement).
    fn wrap(self, v: i128) -> i128 {
        let m = 1i128 << self.bits;
        let r = v.rem_euclid(m);
        if self.signed && r >= m / 2 { r - m } else { r }
    }
}

const OPS: [&str; 10] = ["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"];

/// An expression: its comptime text, its runtime text and its value, or `None` when
/// comptime would (rightly) reject it.
struct Gen<'a> {
    rng: &'a mut Rng,
    ty: Ty,
    leaves: Vec<i128>,
    shifts: Vec<i128>,
}

impl Gen<'_> {
    fn leaf(&mut self) -> (String, String, i128) {
        let t = self.ty;
        let v = match self.rng.below(4) {
            0 => t.min() + self.rng.below(4) as i128,
            1 => t.max() - self.rng.below(4) as i128,
            _ => t.wrap(self.rng.below(64) as i128 - if t.signed { 32 } else { 0 }),
        };
        let k = self.leaves.len();
        self.leaves.push(v);
        (format!("@as({}, {v})", t.name), format!("v[{k}]"), v)
    }

    fn expr(&mut self, depth: u32) -> Option<(String, String, i128)> {
        if depth == 0 || self.rng.below(3) == 0 {
            return Some(self.leaf());
        }
        let (ca, ra, a) = self.expr(depth - 1)?;
        let op = OPS[self.rng.below(OPS.len() as u64) as usize];
        let t = self.ty;
        // Shift amounts are small unsigned leaves (of the same width) so most shifts are
        // valid.
        let (cb, rb, b) = if op == "<<" || op == ">>" {
            let k = self.shifts.len();
            let v = self.rng.below(u64::from(t.bits) + 2) as i128;
            self.shifts.push(v);
            (format!("@as({}, {v})", t.unsigned()), format!("s[{k}]"), v)
        } else {
            self.expr(depth - 1)?
        };
        let v = match op {
            "+" => a + b,
            "-" => a - b,
            "*" => a * b,
            "/" | "%" if b == 0 => return None,
            // Truncating, like Rust's `/` and `%` on i128.
            "/" => a / b,
            "%" => a % b,
            "&" => t.wrap(a & b),
            "|" => t.wrap(a | b),
            "^" => t.wrap(a ^ b),
            "<<" | ">>" if b >= i128::from(t.bits) => return None,
            // Bits shifted out of the width are lost (both evaluators wrap).
            "<<" => t.wrap(a << b),
            _ => a >> b,
        };
        if !t.fits(v) {
            return None;
        }
        Some((format!("({ca} {op} {cb})"), format!("({ra} {op} {rb})"), v))
    }
}

/// Writes a one-PE program computing `exprs` both ways into `dir`.
fn write_program(
    dir: &PathBuf,
    t: Ty,
    leaves: &[i128],
    shifts: &[i128],
    exprs: &[(String, String)],
) {
    std::fs::create_dir_all(dir).unwrap();
    let n = exprs.len();
    let layout = "const memcpy = @import_module(\"<memcpy/get_params>\", .{ .width = 1, .height = 1 });\n\
        layout {\n  @set_rectangle(1, 1);\n  @set_tile_code(0, 0, \"pe.csl\", .{ .memcpy_params = memcpy.get_params(0) });\n\
        \x20 @export_name(\"out\", [*]u32, false);\n  @export_name(\"go\", fn() void);\n}\n";
    std::fs::write(dir.join("layout.csl"), layout).unwrap();
    let ubits = t.unsigned();
    let mut pe = String::from(
        "param memcpy_params: comptime_struct;\nconst sys_mod = @import_module(\"<memcpy/memcpy>\", memcpy_params);\n",
    );
    let vals: Vec<String> = leaves.iter().map(|v| v.to_string()).collect();
    let _ = writeln!(
        pe,
        "var v = [{}]{}{{ {} }};",
        leaves.len(),
        t.name,
        vals.join(", ")
    );
    let mut svals: Vec<String> = shifts.iter().map(|v| v.to_string()).collect();
    svals.push("0".into());
    let _ = writeln!(
        pe,
        "var s = [{}]{ubits}{{ {} }};",
        svals.len(),
        svals.join(", ")
    );
    let _ = writeln!(
        pe,
        "var out = @zeros([{}]u32);\nvar out_ptr: [*]u32 = &out;",
        2 * n
    );
    pe.push_str("fn go() void {\n");
    for (i, (ct, rt)) in exprs.iter().enumerate() {
        let _ = writeln!(pe, "  const c{i}: {} = {ct};", t.name);
        let _ = writeln!(pe, "  out[{}] = @as(u32, @bitcast({ubits}, c{i}));", 2 * i);
        let _ = writeln!(pe, "  const r{i}: {} = {rt};", t.name);
        let _ = writeln!(
            pe,
            "  out[{}] = @as(u32, @bitcast({ubits}, r{i}));",
            2 * i + 1
        );
    }
    pe.push_str("  sys_mod.unblock_cmd_stream();\n}\n");
    pe.push_str("comptime {\n  @export_symbol(out_ptr, \"out\");\n  @export_symbol(go);\n}\n");
    std::fs::write(dir.join("pe.csl"), pe).unwrap();
}

/// Programs to run per type: `DIFF_SEEDS`, else `default`.
fn seeds(default: u64) -> u64 {
    std::env::var("DIFF_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

#[test]
fn comptime_and_runtime_integer_arithmetic_agree() {
    let seeds = seeds(2);
    let types = [
        Ty {
            name: "i16",
            signed: true,
            bits: 16,
        },
        Ty {
            name: "u16",
            signed: false,
            bits: 16,
        },
        Ty {
            name: "i32",
            signed: true,
            bits: 32,
        },
        Ty {
            name: "u32",
            signed: false,
            bits: 32,
        },
    ];
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    for t in types {
        for seed in 0..seeds {
            let mut rng = Rng(csl_examples::SplitMix64(
                seed * 1000 + u64::from(t.bits) + u64::from(t.signed),
            ));
            let mut g = Gen {
                rng: &mut rng,
                ty: t,
                leaves: Vec::new(),
                shifts: Vec::new(),
            };
            let mut exprs = Vec::new();
            let mut want = Vec::new();
            while exprs.len() < 40 {
                let marks = (g.leaves.len(), g.shifts.len());
                match g.expr(4) {
                    Some((c, r, v)) => {
                        exprs.push((c, r));
                        want.push(v);
                    }
                    None => {
                        g.leaves.truncate(marks.0);
                        g.shifts.truncate(marks.1);
                    }
                }
            }
            let (leaves, shifts) = (g.leaves.clone(), g.shifts.clone());
            let dir = tmp.join(format!("diff-{}-{seed}", t.name));
            write_program(&dir, t, &leaves, &shifts, &exprs);
            let layout = dir.join("layout.csl");
            let rel = layout.to_str().unwrap();
            let run = csl_tests::Run {
                layout: rel,
                arch: Arch::Wse2,
                dims: (8, 3),
                launch: "go",
                read: "out",
                region: (1, 1, 2 * exprs.len() as u32),
            };
            let out =
                csl_tests::launch_and_read(&run, &tmp, &format!("diff-{}-{seed}-run", t.name));
            let mask = if t.bits == 32 { u32::MAX } else { 0xffff };
            for (i, (c, _)) in exprs.iter().enumerate() {
                let host = (t.wrap(want[i]) as u32) & mask;
                let (ct, rt) = (out[2 * i], out[2 * i + 1]);
                assert!(
                    ct == host && rt == host,
                    "{} seed {seed}: `{c}`: comptime {ct:#x}, run time {rt:#x}, host {host:#x}",
                    t.name
                );
            }
        }
    }
}

/// An `f32` expression: comptime text, run-time text and the host's value (IEEE single
/// precision, rounded to nearest after every operation).
fn float_expr(rng: &mut Rng, leaves: &mut Vec<f64>, depth: u32) -> (String, String, f32) {
    if depth == 0 || rng.below(3) == 0 {
        // Exact small values, values f32 must round (tenths) and a few large ones.
        let v = match rng.below(3) {
            0 => (rng.below(129) as f64 - 64.0) / 4.0,
            1 => (rng.below(2001) as f64 - 1000.0) / 10.0,
            _ => (rng.below(2001) as f64 - 1000.0) * 1.0e5,
        };
        let k = leaves.len();
        leaves.push(v);
        return (format!("@as(f32, {v:?})"), format!("v[{k}]"), v as f32);
    }
    let (ca, ra, a) = float_expr(rng, leaves, depth - 1);
    let (cb, rb, b) = float_expr(rng, leaves, depth - 1);
    let (op, v) = match rng.below(4) {
        0 => ("+", a + b),
        1 => ("-", a - b),
        2 => ("*", a * b),
        _ => ("/", a / b),
    };
    (format!("({ca} {op} {cb})"), format!("({ra} {op} {rb})"), v)
}

/// The float half of the differential test: random `f32` expressions of `+ - * /` over
/// exact and inexact literals, at comptime and on the simulator, against the host's IEEE
/// arithmetic, bit for bit.
#[test]
fn comptime_and_runtime_float_arithmetic_agree() {
    let seeds = seeds(4);
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    for seed in 0..seeds {
        let mut rng = Rng(csl_examples::SplitMix64(seed * 7919 + 17));
        let mut leaves = Vec::new();
        let mut exprs = Vec::new();
        while exprs.len() < 40 {
            let mark = leaves.len();
            let (c, r, v) = float_expr(&mut rng, &mut leaves, 4);
            // Non-finite results (a division by zero, an overflow) are left out: their
            // NaN payloads are not part of the contract.
            if v.is_finite() {
                exprs.push((c, r, v));
            } else {
                leaves.truncate(mark);
            }
        }
        let dir = tmp.join(format!("diff-f32-{seed}"));
        std::fs::create_dir_all(&dir).unwrap();
        let layout = "const memcpy = @import_module(\"<memcpy/get_params>\", .{ .width = 1, .height = 1 });\n\
            layout {\n  @set_rectangle(1, 1);\n  @set_tile_code(0, 0, \"pe.csl\", .{ .memcpy_params = memcpy.get_params(0) });\n\
            \x20 @export_name(\"out\", [*]u32, false);\n  @export_name(\"go\", fn() void);\n}\n";
        std::fs::write(dir.join("layout.csl"), layout).unwrap();
        let mut pe = String::from(
            "param memcpy_params: comptime_struct;\nconst sys_mod = @import_module(\"<memcpy/memcpy>\", memcpy_params);\n",
        );
        let vals: Vec<String> = leaves.iter().map(|v| format!("{v:?}")).collect();
        let _ = writeln!(
            pe,
            "var v = [{}]f32{{ {} }};",
            leaves.len(),
            vals.join(", ")
        );
        let n = exprs.len();
        let _ = writeln!(
            pe,
            "var out = @zeros([{}]u32);\nvar out_ptr: [*]u32 = &out;",
            2 * n
        );
        pe.push_str("fn go() void {\n");
        for (i, (c, r, _)) in exprs.iter().enumerate() {
            let _ = writeln!(
                pe,
                "  const c{i}: f32 = {c};\n  out[{}] = @bitcast(u32, c{i});",
                2 * i
            );
            let _ = writeln!(
                pe,
                "  const r{i}: f32 = {r};\n  out[{}] = @bitcast(u32, r{i});",
                2 * i + 1
            );
        }
        pe.push_str("  sys_mod.unblock_cmd_stream();\n}\n");
        pe.push_str("comptime {\n  @export_symbol(out_ptr, \"out\");\n  @export_symbol(go);\n}\n");
        std::fs::write(dir.join("pe.csl"), pe).unwrap();
        let layout = dir.join("layout.csl");
        let run = csl_tests::Run {
            layout: layout.to_str().unwrap(),
            arch: Arch::Wse2,
            dims: (8, 3),
            launch: "go",
            read: "out",
            region: (1, 1, 2 * n as u32),
        };
        let out = csl_tests::launch_and_read(&run, &tmp, &format!("diff-f32-{seed}-run"));
        for (i, (c, _, v)) in exprs.iter().enumerate() {
            let host = v.to_bits();
            let (ct, rt) = (out[2 * i], out[2 * i + 1]);
            assert!(
                ct == host && rt == host,
                "f32 seed {seed}: `{c}`: comptime {} ({ct:#x}), run time {} ({rt:#x}), host {v} ({host:#x})",
                f32::from_bits(ct),
                f32::from_bits(rt)
            );
        }
    }
}
