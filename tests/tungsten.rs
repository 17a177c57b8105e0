//! End-to-end tests of the Tungsten front end: small `.w` programs are compiled with
//! `cslc::tungsten::compile_class`, linked into an image with `cslc::link`, run on the
//! simulator, and their globals read back and compared with host-computed answers.

use csl_arch::Arch;
use csl_arch::fabric::Direction;
use csl_arch::image::{ColorConfig, Image};
use csl_tests::tungsten::{compile, compile_in, image, run};
use csl_tests::tungsten::{f32_of, u16_of, u32_of};
use cslc::diag::render_all;
use cslc::source::SourceMap;
use cslc::tungsten::{ClassSpec, SocketBinding, compile_class};
use cslsim::sim::Simulator;

/// The bytes of global `name` on tile (x, y).
fn global(sim: &Simulator, image: &Image, x: u32, y: u32, name: &str) -> Vec<u8> {
    csl_tests::global_bytes(sim, image, (x, y), |g| g == name)
}

/// [`one_tile`] for a tile that sends to itself through socket `s` on `color` (ramp to
/// ramp).
fn loopback_tile(src: &str, color: u8, check: impl Fn(&dyn Fn(&str) -> Vec<u8>)) {
    one_tile(
        src,
        &[("s", color, color)],
        &[(color, Direction::Ramp, Direction::Ramp)],
        check,
    );
}

/// Compiles and runs one program on one tile, both archs, optimised or not; calls
/// `check` with a reader of globals.
fn one_tile(
    src: &str,
    sockets: &[(&str, u8, u8)],
    routes: &[(u8, Direction, Direction)],
    check: impl Fn(&dyn Fn(&str) -> Vec<u8>),
) {
    csl_tests::tungsten::one_tile(src, sockets, routes, |_, g| check(g));
}

/// Tungsten code lowers through the same IR as CSL, so its image has a line table:
/// statements map to their `test.w` lines, optimised or not, and the loop's increment to
/// the loop's line.
#[test]
fn tungsten_classes_have_source_lines() {
    let src = "xp a; xp b;\n\
               {\n\
               \x20   a = 1;\n\
               \x20   i in [0, 4) {\n\
               \x20       b = b + i;\n\
               \x20   }\n\
               \x20   a = a + b;\n\
               }\n";
    for optimize in [false, true] {
        let mut sources = SourceMap::new();
        let prog = compile_in(&mut sources, src, &ClassSpec::new(Arch::Wse2));
        let img = image(
            &sources,
            Arch::Wse2,
            1,
            1,
            vec![prog],
            vec![0],
            vec![],
            optimize,
        );
        let class = &img.classes[0];
        let lines: Vec<u32> = (0..class.code.len() as u32)
            .filter_map(|pc| class.lines.lookup(pc))
            .inspect(|l| assert_eq!(l.file, "test.w"))
            .map(|l| l.line)
            .collect();
        assert_eq!(
            lines.len(),
            class.code.len(),
            "optimize={optimize}: {lines:?}"
        );
        for line in [3, 4, 5, 7] {
            assert!(
                lines.contains(&line),
                "optimize={optimize}: line {line}: {lines:?}"
            );
        }
        // Without its line markers the program compiles to the same code: the markers
        // change no optimisation.
        let mut bare = compile(src, &ClassSpec::new(Arch::Wse2));
        for f in bare.functions.values_mut() {
            for b in f.blocks.values_mut() {
                b.insts.retain(|i| !i.is_marker());
            }
        }
        let bare = image(
            &SourceMap::new(),
            Arch::Wse2,
            1,
            1,
            vec![bare],
            vec![0],
            vec![],
            optimize,
        );
        assert!(bare.classes[0].lines.is_empty());
        assert_eq!(bare.classes[0].code, class.code, "optimize={optimize}");
        // It runs: b = 0 + 1 + 2 + 3 = 6, then a = 1 + 6.
        let sim = run(&img);
        assert_eq!(u16_of(&global(&sim, &img, 0, 0, "a")), 7);
    }
}

#[test]
fn seed_003_conversion_values() {
    let src = r#"
        xp a; xp b; xp c; xp d; xp e;
        xp ra; xp rb; xp rc; xp rd;
        u16 cmp; u32 r; sp hs; u16 us; s32 w;
        sp sum_hs;
        {
            a = (xp)2.7; b = (xp)2.5; c = (xp)40000.0; d = (xp)-2.5; e = (xp)-1e9;
            sp f = 2.7; ra = (xp)f;
            f = 2.5; rb = (xp)f;
            f = 40000.0; rc = (xp)f;
            f = -1e9; rd = (xp)f;
            u16 u = 1; xp s = -1;
            if (u > s) cmp = 1; else cmp = 2;
            r = 0xFFFFFFFF + 2;
            hp h = 1.5; sp g = 2.25;
            sum_hs = h + g;
            u16 x = 3; s16 y = 0xFFFF;
            us = x + y;
            w = 1 - 2;
        }
    "#;
    one_tile(src, &[], &[], |g| {
        assert_eq!(u16_of(&g("a")), 3);
        assert_eq!(u16_of(&g("b")), 2);
        assert_eq!(u16_of(&g("c")), 32767);
        assert_eq!(u16_of(&g("d")) as i16, -2);
        assert_eq!(u16_of(&g("e")) as i16, -32768);
        assert_eq!(u16_of(&g("ra")), 3);
        assert_eq!(u16_of(&g("rb")), 2);
        assert_eq!(u16_of(&g("rc")), 32767);
        assert_eq!(u16_of(&g("rd")) as i16, -32768);
        assert_eq!(u16_of(&g("cmp")), 2, "u16 1 > xp -1 is false");
        assert_eq!(u32_of(&g("r")), 1);
        assert_eq!(f32_of(&g("sum_hs")), 3.75);
        assert_eq!(u16_of(&g("us")), 2, "u16 3 + s16 -1 wraps in u16");
        assert_eq!(u32_of(&g("w")) as i32, -1);
    });
}

#[test]
fn socket_casts_read_bits_or_convert() {
    // One tile sends to itself on colour 3 (ramp to ramp).
    let src = r#"
        socket s;
        hp conv; hp raw; xp plain;
        {
            xp three = 3;
            s[] <- three;
            s[] <- three;
            s[] <- three;
            conv = (hp)(xp)s[];
            raw = (hp)s[];
            plain <- s[];
        }
    "#;
    loopback_tile(src, 3, |g| {
        assert_eq!(u16_of(&g("conv")), 0x4200);
        assert_eq!(u16_of(&g("raw")), 0x0003);
        assert_eq!(u16_of(&g("plain")), 3);
    });
}

/// The lowered entry function of a program.
fn main_fn(p: &cslc::ir::Program) -> &cslc::ir::Function {
    p.functions
        .values()
        .find(|f| f.name == "main")
        .expect("main")
}

fn dsd_ops(f: &cslc::ir::Function) -> Vec<csl_arch::dsd::DsdOpcode> {
    f.blocks
        .values()
        .flat_map(|b| b.insts.iter())
        .filter_map(|i| match i {
            cslc::ir::Inst::DsdOp { op, .. } => Some(*op),
            _ => None,
        })
        .collect()
}

const FORALL: &str = r#"
    sp a[16]; sp b[16]; sp c[16]; sp d[16]; sp e[16];
    xp x[16]; xp y[16]; xp z[16];
    {
        i in [0, 16) {
            b[i] = (sp)i;
            c[i] = (sp)(2 * i);
            x[i] = 3 * i;
            y[i] = i;
        }
        let i in [0, 16);
        sp k = 1.5;
        ∀i a[i] = b[i] * k + c[i];
        ∀i d[i] = b[i] - c[i];
        ∀i e[i] = c[i];
        ∀i e[i] <+- b[i];
        ∀i z[i] = x[i] - y[i];
        forall i z[i] <+- 1;
    }
"#;

#[test]
fn forall_lowers_to_dsd_vector_ops() {
    let prog = compile(FORALL, &ClassSpec::new(Arch::Wse2));
    let ops = dsd_ops(main_fn(&prog));
    use csl_arch::dsd::DsdOpcode as O;
    assert_eq!(
        ops,
        vec![O::Fmacs, O::Fsubs, O::Fmovs, O::Fadds, O::Sub16, O::Add16],
        "each ∀ statement is one DSD op"
    );
}

#[test]
fn forall_kernel_matches_the_host() {
    one_tile(FORALL, &[], &[], |g| {
        let (a, d, e, z) = (g("a"), g("d"), g("e"), g("z"));
        for i in 0..16usize {
            let b = i as f32;
            let c = 2.0 * i as f32;
            assert_eq!(f32_of(&a[4 * i..]), b.mul_add(1.5, c), "a[{i}]");
            assert_eq!(f32_of(&d[4 * i..]), b - c, "d[{i}]");
            assert_eq!(f32_of(&e[4 * i..]), c + b, "e[{i}]");
            assert_eq!(u16_of(&z[2 * i..]), (2 * i + 1) as u16, "z[{i}]");
        }
    });
}

const REDUCTIONS: &str = r#"
    sp x[16]; sp y[16]; xp n[16];
    sp dot[1]; sp sum[1]; sp scaled[1]; xp isum[1];
    {
        i in [0, 16) {
            x[i] = 0.25 * (sp)i;
            y[i] = (sp)(i + 1);
            n[i] = 2 * i;
        }
        let i in [0, 16);
        sp d = 1.0;
        ∀i d <+- x[i] * y[i];
        dot[0] = d;
        sum[0] = 0.5;
        ∀i sum[0] <+- y[i];
        sp k = 3.0;
        ∀i scaled[0] <+- x[i] * k;
        ∀i isum[0] <+- n[i];
    }
"#;

#[test]
fn forall_reductions_are_one_dsd_op_each() {
    let prog = compile(REDUCTIONS, &ClassSpec::new(Arch::Wse2));
    use csl_arch::dsd::DsdOpcode as O;
    assert_eq!(
        dsd_ops(main_fn(&prog)),
        vec![O::Fmacs, O::Fadds, O::Fmacs, O::Add16],
        "each ∀ reduction is one DSD op"
    );
    one_tile(REDUCTIONS, &[], &[], |g| {
        // The same sums in the same order, with the multiply-add fused as fmacs is.
        let (mut dot, mut sum, mut scaled, mut isum) = (1.0f32, 0.5f32, 0.0f32, 0u16);
        for i in 0..16 {
            let (x, y) = (0.25 * i as f32, (i + 1) as f32);
            dot = x.mul_add(y, dot);
            sum += y;
            scaled = x.mul_add(3.0, scaled);
            isum = isum.wrapping_add(2 * i as u16);
        }
        assert_eq!(
            f32_of(&g("dot")),
            dot,
            "dot product into a register variable"
        );
        assert_eq!(f32_of(&g("sum")), sum, "sum into an array element");
        assert_eq!(f32_of(&g("scaled")), scaled, "product with a scalar");
        assert_eq!(u16_of(&g("isum")), isum, "16-bit sum");
    });
}

#[test]
fn if_after_a_plain_copy_is_never_dropped() {
    // The vendor's register allocation could drop a predicated select that follows a
    // plain copy, so the `if` body silently never ran.
    let src = r#"
        xp inp = 5; xp out; xp out2; sp fout;
        {
            xp v = inp;
            xp r = v;
            if (v > 3) r = 7;
            out = r;
            xp q = v;
            if (v > 100) q = 1; else q = q + 1;
            out2 = q;
            sp f = 1.0;
            if (v == 5) f = 2.5;
            fout = f;
        }
    "#;
    one_tile(src, &[], &[], |g| {
        assert_eq!(u16_of(&g("out")), 7);
        assert_eq!(u16_of(&g("out2")), 6);
        assert_eq!(f32_of(&g("fout")), 2.5);
    });
}

/// The image of `src` on two neighbouring tiles whose socket `nb` sends to the other
/// tile (colour 1 east, colour 2 west), and the west tile's program.
fn two_tile_image(arch: Arch, src: &str) -> (cslc::ir::Program, Image) {
    let mut progs = Vec::new();
    for (rx, tx) in [(2u8, 1u8), (1, 2)] {
        let mut spec = ClassSpec::new(arch);
        spec.sockets.push(("nb".into(), SocketBinding { rx, tx }));
        progs.push(compile(src, &spec));
    }
    // The west tile's program again, for the caller to inspect (`Program` is not Clone).
    let first = compile(src, &{
        let mut spec = ClassSpec::new(arch);
        spec.sockets
            .push(("nb".into(), SocketBinding { rx: 2, tx: 1 }));
        spec
    });
    use Direction::*;
    let routes = vec![
        ColorConfig::route(0, 0, 1, vec![Ramp], vec![East]),
        ColorConfig::route(1, 0, 1, vec![West], vec![Ramp]),
        ColorConfig::route(1, 0, 2, vec![Ramp], vec![West]),
        ColorConfig::route(0, 0, 2, vec![East], vec![Ramp]),
    ];
    let img = image(
        &SourceMap::new(),
        arch,
        2,
        1,
        progs,
        vec![0, 1],
        routes,
        true,
    );
    (first, img)
}

/// Two tiles that each send 32 values to the other and then receive 32: with the sends
/// and receives in one `parallel` block this completes; done one after the other, both
/// tiles block on their sends once the fabric buffers are full.
fn exchange(
    arch: Arch,
    parallel: bool,
) -> Result<(Vec<Vec<u8>>, Option<cslc::ir::Program>), String> {
    let body = "i in [0, 32) nb[] <- mine[i];\n i in [0, 32) theirs[i] <- nb[];";
    let src = format!(
        r#"
        socket nb;
        xp col_id[1] address(0x7C46);
        sp mine[32]; sp theirs[32];
        {{
            xp me = col_id[0];
            i in [0, 32) mine[i] = (sp)(me * 100 + i);
            {}
        }}
    "#,
        if parallel {
            format!("parallel {{ {body} }}")
        } else {
            format!("{{ {body} }}")
        }
    );
    let (first, img) = two_tile_image(arch, &src);
    let first = Some(first);
    let mut sim = Simulator::new(&img).expect("loads");
    sim.run_until_idle(1_000_000).map_err(|e| format!("{e}"))?;
    let out = (0..2).map(|x| global(&sim, &img, x, 0, "theirs")).collect();
    Ok((out, first))
}

#[test]
fn neighbour_exchange_in_parallel_does_not_deadlock() {
    for arch in [Arch::Wse2, Arch::Wse3] {
        let (got, prog) = exchange(arch, true).expect("the parallel exchange finishes");
        for (x, theirs) in got.iter().enumerate() {
            let other = 1 - x;
            for i in 0..32 {
                assert_eq!(
                    f32_of(&theirs[4 * i..]),
                    (other * 100 + i) as f32,
                    "{arch:?} tile {x} [{i}]"
                );
            }
        }
        // Both transfers are asynchronous, on different microthreads, joined once.
        let f = main_fn(prog.as_ref().expect("program"));
        let insts: Vec<_> = f.blocks.values().flat_map(|b| b.insts.iter()).collect();
        let uts: Vec<u8> = insts
            .iter()
            .filter_map(|i| match i {
                cslc::ir::Inst::DsdOp { cfg, ut, .. } if cfg & csl_arch::dsd::cfg::ASYNC != 0 => {
                    Some(*ut)
                }
                _ => None,
            })
            .collect();
        assert_eq!(uts.len(), 2, "{arch:?}");
        assert_ne!(uts[0], uts[1]);
        assert!(
            insts
                .iter()
                .any(|i| matches!(i, cslc::ir::Inst::UtWait { .. }))
        );
        // Without `parallel`, both tiles block on their sends.
        assert!(
            exchange(arch, false).is_err(),
            "{arch:?}: the serial exchange deadlocks"
        );
    }
}

#[test]
fn functions_round_unions_and_index_halves() {
    // Loopback on colour 5: raw 32-bit wavelets built with a union carry an index in the
    // high half and data in the low half.
    let src = r#"
        socket s;
        union word { u32 u; xp w[2]; };
        xp x[n=8];
        xp fr; sp r0; sp r1; sp r2; sp r3; u32 raw; xp lo; xp col;
        xp col_id[1] address(0x7C46);
        toxp(sp v) -> xp { return v * 2.0; }
        {
            fr = toxp(1.25);
            sp f = -2.5;
            r0 = round(f, 0); r1 = round(f, 1); r2 = round(f, 2); r3 = round(f, 3);
            union word w;
            i in [0, 4) {
                w.w[0] = 10 * i;
                w.w[1] = 7 - i;
                s[] <- w.u;
            }
            i in [0, 4) x[s[].index] <- s[].data;
            w.w[0] = 0x1234; w.w[1] = 0x5678;
            s[] <- w.u;
            union word back;
            back.u <- s[];
            raw = back.u;
            lo = back.w[0];
            col = col_id[0];
        }
    "#;
    loopback_tile(src, 5, |g| {
        assert_eq!(u16_of(&g("fr")), 2, "2.5 rounds to nearest even");
        assert_eq!(f32_of(&g("r0")), -2.0);
        assert_eq!(f32_of(&g("r1")), -2.0);
        assert_eq!(f32_of(&g("r2")), -3.0);
        assert_eq!(f32_of(&g("r3")), -2.0);
        let x = g("x");
        for i in 0..4usize {
            assert_eq!(u16_of(&x[2 * (7 - i)..]), (10 * i) as u16, "x[{}]", 7 - i);
        }
        assert_eq!(u32_of(&g("raw")), 0x5678_1234);
        assert_eq!(u16_of(&g("lo")), 0x1234);
        assert_eq!(u16_of(&g("col")), 0);
    });
}

/// Arrays are passed to functions by reference: globals, rows of a 2-D array, a struct's
/// member, a local (frame) array, and a parameter passed on; writes through the parameter
/// reach the caller's array, and a `∀` statement over a parameter is one DSD operation.
#[test]
fn arrays_are_passed_to_functions_by_reference() {
    let src = r#"
        struct S { xp tag; sp a[4]; };
        sp v[4] = {1.5, -2.0, 4.25, 0.5};
        sp m[3][4] = {1.0, 2.0, 3.0, 4.0, 9.0, -1.0, 7.0, 0.0, 5.0, 5.0, 5.0, 6.0};
        struct S st;
        sp tv; sp tv2; sp tm; sp tl; sp ts; xp am; xp am2;
        total(sp x[4]) -> sp {
            sp t = 0.0;
            i in [0, 4) t = t + x[i];
            return t;
        }
        scale(sp x[4], sp f) {
            let i in [0, 4);
            ∀i x[i] = x[i] * f;
        }
        argmax(sp x[4]) -> xp {
            xp b = 0;
            i in [1, 4) { if (x[i] > x[b]) b = i; }
            return b;
        }
        passon(sp x[4]) -> sp { scale(x, 0.5); return total(x); }
        {
            tv = total(v);
            scale(v, 2.0);
            tv2 = total(v);
            tm = total(m[1]);
            am = argmax(m[1]);
            am2 = argmax(m[2]);
            sp loc[4] = {3.0, 1.0, 2.0, 8.0};
            tl = passon(loc);
            st.a[0] = 0.25; st.a[1] = 0.25; st.a[2] = 0.5; st.a[3] = 1.0;
            scale(st.a, 4.0);
            ts = total(st.a);
        }
    "#;
    let p = compile(src, &ClassSpec::new(Arch::Wse2));
    let scale = p
        .functions
        .values()
        .find(|f| f.name == "scale")
        .expect("scale is compiled");
    assert_eq!(
        dsd_ops(scale),
        [csl_arch::dsd::DsdOpcode::Fmuls],
        "the ∀ over a parameter is one operation"
    );
    one_tile(src, &[], &[], |g| {
        assert_eq!(f32_of(&g("tv")), 4.25);
        assert_eq!(f32_of(&g("tv2")), 8.5);
        let v = g("v");
        let doubled: Vec<f32> = (0..4).map(|i| f32_of(&v[4 * i..])).collect();
        assert_eq!(
            doubled,
            [3.0, -4.0, 8.5, 1.0],
            "written through the parameter"
        );
        assert_eq!(f32_of(&g("tm")), 15.0);
        assert_eq!(u16_of(&g("am")), 0);
        assert_eq!(u16_of(&g("am2")), 3);
        assert_eq!(
            f32_of(&g("tl")),
            7.0,
            "a frame array, scaled by the callee's callee"
        );
        assert_eq!(f32_of(&g("ts")), 8.0);
    });
}

/// An array parameter sent and received whole: each loop over the parameter becomes one
/// fabric DSD operation whose base address is the caller's array, set at run time.
#[test]
fn array_parameters_go_over_the_fabric() {
    let src = r#"
        socket s;
        sp v[4] = {1.0, 2.0, 3.0, 4.0};
        sp got[4];
        send_all(sp x[4]) { i in [0, 4) s[] <- x[i]; }
        take_all(sp x[4]) { i in [0, 4) x[i] <- s[]; }
        {
            parallel {
                send_all(v);
                take_all(got);
            }
        }
    "#;
    let spec = {
        let mut spec = ClassSpec::new(Arch::Wse2);
        spec.sockets
            .push(("s".into(), cslc::tungsten::SocketBinding { rx: 6, tx: 6 }));
        spec
    };
    let p = compile(src, &spec);
    for f in ["send_all", "take_all"] {
        let func = p
            .functions
            .values()
            .find(|x| x.name == f)
            .expect("compiled");
        assert_eq!(dsd_ops(func).len(), 1, "{f}: one fabric operation");
    }
    loopback_tile(src, 6, |g| {
        let got = g("got");
        let vals: Vec<f32> = (0..4).map(|i| f32_of(&got[4 * i..])).collect();
        assert_eq!(vals, [1.0, 2.0, 3.0, 4.0]);
    });
}

/// Every `.w` program of the examples and test programs compiles (sockets bound to
/// arbitrary colours), on both generations; files only imported by others compile with
/// their importers.
#[test]
fn example_programs_compile() {
    let root = csl_tests::repo_root();
    let mut files = csl_tests::files_with_ext(&root.join("examples"), "w");
    files.extend(csl_tests::files_with_ext(&root.join("tests/programs"), "w"));
    // Files a sibling imports (`import "params.w";`) are libraries, not programs: they
    // compile as part of their importers.
    let imported: Vec<std::path::PathBuf> = files
        .iter()
        .flat_map(|f| {
            let src = std::fs::read_to_string(f).unwrap();
            let dir = f.parent().unwrap().to_path_buf();
            src.lines()
                .filter_map(|l| l.trim().strip_prefix("import \""))
                .filter_map(|l| l.split('"').next())
                .map(|name| dir.join(name))
                .collect::<Vec<_>>()
        })
        .collect();
    for f in files.into_iter().filter(|f| !imported.contains(f)) {
        let src = std::fs::read_to_string(&f).unwrap();
        for arch in [Arch::Wse2, Arch::Wse3] {
            // A program that says so needs more sockets than a WSE-2 PE has queues.
            if arch == Arch::Wse2 && src.contains("WSE-3 only") {
                continue;
            }
            let mut spec = ClassSpec::new(arch);
            for line in src.lines() {
                if let Some(rest) = line.trim().strip_prefix("socket ") {
                    for name in rest.split(';').next().unwrap_or("").split(',') {
                        let n = spec.sockets.len() as u8;
                        spec.sockets.push((
                            name.trim().to_string(),
                            SocketBinding {
                                rx: 2 * n,
                                tx: 2 * n + 1,
                            },
                        ));
                    }
                }
            }
            let mut sources = SourceMap::new();
            let file = sources.add(f.display().to_string(), Some(f.clone()), src.clone());
            let mut diags = Vec::new();
            let prog = compile_class(&mut sources, file, &spec, &mut diags);
            assert!(
                prog.is_some(),
                "{}:\n{}",
                f.display(),
                render_all(&diags, &sources, false)
            );
        }
    }
}

/// The idioms of seed 002's `mdlj.w` on one tile: a memory map laid out with
/// `address(&prev + k)` (with a u16 view of an sp array), the bit-trick `rsqrt` seed and
/// three Newton steps as `∀` statements, minimum-image wrapping with the 2^23 magic
/// rounding, an fp32 loop counter, the timestamp counter read into an array (a loop over
/// a register array stays scalar), and a force-style relay received with `<+-`.
const SEED_002_IDIOMS: &str = r#"
    socket s;
    union fw { sp f; u16 w[2]; };
    sp arena[64];
    sp d2[8] address(&arena + 0);
    u16 hi[16] address(&d2 + 0);
    sp rinv[8] address(&d2 + 16);
    sp wrapped[8] address(&rinv + 16);
    sp acc[4] address(&wrapped + 16);
    u16 tsc[3] address(0x7b30);
    u16 stamps[6];
    sp counted[1];
    sp y2[8];
    {
        i in [0, 3) stamps[i] = tsc[i];
        i in [0, 8) d2[i] = 0.5 + 1.75 * (sp)i;
        i in [0, 8) {
            union fw u;
            u.f = d2[i];
            u.w[1] = 0x5f37 - (hi[2 * i + 1] >> 1);
            u.w[0] = 0;
            rinv[i] = u.f;
        }
        let j in [0, 8);
        n in [0, 3) {
            ∀j y2[j] = rinv[j] * rinv[j];
            ∀j y2[j] = 1.5 - 0.5 * d2[j] * y2[j];
            ∀j rinv[j] = rinv[j] * y2[j];
        }
        sp boxv = 10.0;
        sp boxinv = 0.1;
        sp convmagic = 8388608.0;
        i in [0, 8) {
            sp d = 3.0 * d2[i] - 7.0;
            sp t = d * boxinv;
            sp m = t < 0.0 ? -convmagic : convmagic;
            wrapped[i] = d - ((t + m) - m) * boxv;
        }
        iter in [0.0, 10.0) counted[0] = counted[0] + 1.0;
        i in [0, 4) acc[i] = (sp)i;
        parallel {
            i in [0, 4) s[] <- d2[i];
            i in [0, 4) acc[i] <+- s[];
        }
        i in [0, 3) stamps[3 + i] = tsc[i];
    }
"#;

#[test]
fn seed_002_idioms_compute_what_the_host_does() {
    loopback_tile(SEED_002_IDIOMS, 3, |g| {
        let (d2, rinv, wrapped) = (g("d2"), g("rinv"), g("wrapped"));
        for i in 0..8usize {
            let x = f32_of(&d2[4 * i..]);
            assert_eq!(x, 0.5 + 1.75 * i as f32);
            let want = 1.0 / f64::from(x).sqrt();
            let got = f64::from(f32_of(&rinv[4 * i..]));
            assert!(
                ((got - want) / want).abs() < 2e-6,
                "rinv[{i}] {got} vs {want}"
            );
            let d = 3.0 * x - 7.0;
            let t = d * 0.1f32;
            assert_eq!(
                f32_of(&wrapped[4 * i..]),
                d - t.round_ties_even() * 10.0,
                "wrap {i}"
            );
        }
        assert_eq!(f32_of(&g("counted")), 10.0);
        let acc = g("acc");
        for i in 0..4usize {
            assert_eq!(
                f32_of(&acc[4 * i..]),
                i as f32 + 0.5 + 1.75 * i as f32,
                "acc[{i}]"
            );
        }
        let st = g("stamps");
        let stamp = |k: usize| -> u64 {
            (0..3)
                .map(|w| u64::from(u16_of(&st[2 * (3 * k + w)..])) << (16 * w))
                .sum()
        };
        assert!(
            stamp(1) > stamp(0),
            "the counter runs: {} then {}",
            stamp(0),
            stamp(1)
        );
    });
}

/// Two tiles exchange bursts whose lengths are computed at run time (`n` words one way,
/// `m` the other), each tile receiving *before* it sends in one `parallel` block: this
/// finishes only if the run-time-bounded receive is asynchronous. A second block
/// accumulates (`<+-`) a burst into an array, a third has length 0 (skipped).
fn varlen_exchange(arch: Arch, base: u16) -> (cslc::ir::Program, Vec<Vec<u8>>, Vec<u64>) {
    let src = format!(
        r#"
        socket nb;
        xp col_id[1] address(0x7C46);
        xp zero[1];
        sp mine[64]; sp theirs[64]; sp acc[64];
        {{
            xp me = col_id[0];
            xp n = {base} + 9 * me;
            xp m = {base} + 9 - 9 * me;
            i in [0, 64) mine[i] = (sp)(me * 100 + i);
            i in [0, 64) acc[i] = (sp)(1000 * (me + 1));
            parallel {{ i in [0, m) theirs[i] <- nb[]; i in [0, n) nb[] <- mine[i]; }}
            parallel {{ i in [0, m) acc[i] <+- nb[]; i in [0, n) nb[] <- mine[i]; }}
            xp z = zero[0];
            parallel {{ i in [0, z) theirs[i] <- nb[]; i in [0, z) nb[] <- mine[i]; }}
        }}
    "#
    );
    let (first, img) = two_tile_image(arch, &src);
    let sim = run(&img);
    let mut out = Vec::new();
    for x in 0..2 {
        out.push(global(&sim, &img, x, 0, "theirs"));
        out.push(global(&sim, &img, x, 0, "acc"));
    }
    let instructions = sim.stats().pes.iter().map(|p| p.instructions).collect();
    (first, out, instructions)
}

#[test]
fn runtime_length_transfers_are_one_async_dsd_op() {
    for arch in [Arch::Wse2, Arch::Wse3] {
        let mut counts = Vec::new();
        for base in [40u16, 7] {
            let (prog, got, instructions) = varlen_exchange(arch, base);
            for x in 0..2usize {
                let other = 1 - x;
                let m = usize::from(base) + 9 - 9 * x;
                let (theirs, acc) = (&got[2 * x], &got[2 * x + 1]);
                let mine0 = (1000 * (x + 1)) as f32;
                for i in 0..64 {
                    let sent = (other * 100 + i) as f32;
                    let (t, a) = if i < m {
                        (sent, mine0 + sent)
                    } else {
                        (0.0, mine0)
                    };
                    assert_eq!(
                        f32_of(&theirs[4 * i..]),
                        t,
                        "{arch:?} {base} tile {x} theirs[{i}]"
                    );
                    assert_eq!(
                        f32_of(&acc[4 * i..]),
                        a,
                        "{arch:?} {base} tile {x} acc[{i}]"
                    );
                }
            }
            // Six transfers, each one asynchronous DSD op (receive, send, accumulate,
            // send, and the two of length 0), with its lengths set at run time.
            use csl_arch::dsd::DsdOpcode as O;
            let f = main_fn(&prog);
            let insts: Vec<_> = f.blocks.values().flat_map(|b| b.insts.iter()).collect();
            let asyncs: Vec<O> = insts
                .iter()
                .filter_map(|i| match i {
                    cslc::ir::Inst::DsdOp { op, cfg, .. }
                        if cfg & csl_arch::dsd::cfg::ASYNC != 0 =>
                    {
                        Some(*op)
                    }
                    _ => None,
                })
                .collect();
            assert_eq!(asyncs.len(), 6, "{arch:?}: {asyncs:?}");
            let mut kinds = asyncs.clone();
            kinds.sort_by_key(|o| format!("{o:?}"));
            assert_eq!(
                kinds,
                vec![O::Fadds, O::Mov32, O::Mov32, O::Mov32, O::Mov32, O::Mov32]
            );
            let lengths = insts
                .iter()
                .filter(|i| {
                    matches!(
                        i,
                        cslc::ir::Inst::DsdSet {
                            field: csl_arch::dsd::DsdField::Length,
                            ..
                        }
                    )
                })
                .count();
            // Two descriptors per op, three for the accumulation (its array is read and written).
            assert_eq!(lengths, 13);
            counts.push(instructions);
        }
        // One op per transfer: the instructions executed do not depend on the lengths.
        assert_eq!(counts[0], counts[1], "{arch:?}: instructions per PE");
    }
}

/// Run-time bounds on local vector loops: a reduction into a register variable, a closed
/// range `[0, n]` and an empty range are each one DSD op (or none, skipped).
#[test]
fn runtime_length_vector_loops_match_the_host() {
    let src = r#"
        sp x[16]; sp y[16]; sp tot[1];
        xp cnt = 11; xp none = 0;
        {
            i in [0, 16) { x[i] = (sp)i; y[i] = 1.0; }
            xp n = cnt;
            sp d = 0.5;
            i in [0, n) d <+- x[i];
            tot[0] = d;
            i in [0, n] y[i] = x[i] * 2.0 + y[i];
            xp z = none;
            i in [0, z) y[i] = 99.0;
        }
    "#;
    use csl_arch::dsd::DsdOpcode as O;
    let prog = compile(src, &ClassSpec::new(Arch::Wse2));
    assert_eq!(dsd_ops(main_fn(&prog)), vec![O::Fadds, O::Fmacs, O::Fmovs]);
    one_tile(src, &[], &[], |g| {
        let want: f32 = (0..11).fold(0.5f32, |s, i| s + i as f32);
        assert_eq!(f32_of(&g("tot")), want);
        let y = g("y");
        for i in 0..16usize {
            let w = if i <= 11 {
                (i as f32).mul_add(2.0, 1.0)
            } else {
                1.0
            };
            assert_eq!(f32_of(&y[4 * i..]), w, "y[{i}]");
        }
    });
}

/// Array operands at a run-time offset (`b[i + k]`, `a[i + 2 * k]`, `acc[k + i]`, k a
/// variable) are DSD operands whose base address is set at run time: a multiply-add, a
/// send and a receive over the fabric (loopback) and an accumulating receive, each one
/// DSD op, with the values the host computes. mdlj.w receives its halo blocks straight
/// into `pos` and `ff` this way.
#[test]
fn runtime_offsets_are_dsd_base_addresses() {
    let src = r#"
        socket s;
        sp a[32]; sp b[32]; sp acc[32]; sp c[8];
        xp off = 5; xp cnt = 7; u32 wide = 3;
        {
            i in [0, 32) { a[i] = (sp)i; }
            i in [0, 32) b[i] = 0.0;
            i in [0, 32) acc[i] = 100.0;
            xp k = off;
            xp n = cnt;
            i in [0, n) b[i + k] = a[i + 2 * k] * 2.0 + a[i];
            parallel {
                i in [0, n) s[] <- a[i + 4 * k];
                i in [0, n) b[i + 4 * k] <- s[];
            }
            parallel {
                i in [0, n) s[] <- a[k + i];
                i in [0, n) acc[k + i] <+- s[];
            }
            u32 w = wide;
            i in [0, 4) c[i + w] = a[i];
        }
    "#;
    use csl_arch::dsd::DsdOpcode as O;
    let mut spec = ClassSpec::new(Arch::Wse3);
    spec.sockets
        .push(("s".to_string(), SocketBinding { rx: 3, tx: 3 }));
    let prog = compile(src, &spec);
    // Two fills, the multiply-add, send, receive, send, accumulating receive (the
    // first loop converts its index and stays scalar, the last one has a 32-bit
    // offset and stays scalar too).
    assert_eq!(
        dsd_ops(main_fn(&prog)),
        vec![
            O::Fmovs,
            O::Fmovs,
            O::Fmacs,
            O::Mov32,
            O::Mov32,
            O::Mov32,
            O::Fadds
        ]
    );
    loopback_tile(src, 3, |g| {
        let (b, acc) = (g("b"), g("acc"));
        for i in 0..32usize {
            let wb = match i {
                5..12 => (i + 5) as f32 * 2.0 + (i - 5) as f32,
                20..27 => i as f32,
                _ => 0.0,
            };
            assert_eq!(f32_of(&b[4 * i..]), wb, "b[{i}]");
            let wa = if (5..12).contains(&i) {
                100.0 + i as f32
            } else {
                100.0
            };
            assert_eq!(f32_of(&acc[4 * i..]), wa, "acc[{i}]");
        }
        let c = g("c");
        for i in 0..8usize {
            let wc = if (3..7).contains(&i) {
                (i - 3) as f32
            } else {
                0.0
            };
            assert_eq!(f32_of(&c[4 * i..]), wc, "c[{i}]");
        }
    });
}
