//! Conformance of the Tungsten front end with the cast and wavelet reference (seed 003,
//! `shared/spec/tungsten.md` §4–5): every cast pair with its rounding, saturation or
//! wrapping rule, typed literals, implicit conversions, and control wavelets. Expected
//! values are computed here independently (Rust's own conversions where they follow the
//! stated rule, hand-worked bit patterns otherwise), never with the compiler's folder.
//! Each program runs on both generations, optimised and not.

use csl_arch::Arch;
use csl_arch::fabric::Direction;
use csl_arch::image::ColorConfig;
use csl_tests::tungsten::{compile_in, f32_of, image, u16_of, u32_of};
use cslc::source::SourceMap;
use cslc::tungsten::{ClassSpec, SocketBinding};
use cslsim::{FaultKind, SimError, Simulator};

/// Runs `src` on one tile (sockets bound as given, routes ramp to ramp) on both
/// generations, optimised and not, and calls `check` with a reader of globals.
fn one_tile(
    src: &str,
    sockets: &[(&str, u8, u8)],
    routes: &[u8],
    check: impl Fn(&str, &dyn Fn(&str) -> Vec<u8>),
) {
    let routes: Vec<_> = routes
        .iter()
        .map(|&c| (c, Direction::Ramp, Direction::Ramp))
        .collect();
    csl_tests::tungsten::one_tile(src, sockets, &routes, check);
}

/// The scalar types of the cast matrix.
#[derive(Clone, Copy, Debug, PartialEq)]
enum T {
    Sp,
    Hp,
    Xp,
    S16,
    U16,
    S32,
    U32,
}

impl T {
    fn name(self) -> &'static str {
        match self {
            T::Sp => "sp",
            T::Hp => "hp",
            T::Xp => "xp",
            T::S16 => "s16",
            T::U16 => "u16",
            T::S32 => "s32",
            T::U32 => "u32",
        }
    }
    fn bits(self) -> u32 {
        match self {
            T::Sp | T::S32 | T::U32 => 32,
            _ => 16,
        }
    }
    fn signed(self) -> bool {
        matches!(self, T::Xp | T::S16 | T::S32)
    }
    fn is_float(self) -> bool {
        matches!(self, T::Sp | T::Hp)
    }
    /// The integer range.
    fn range(self) -> (i64, i64) {
        match self {
            T::Xp | T::S16 => (i16::MIN.into(), i16::MAX.into()),
            T::U16 => (0, u16::MAX.into()),
            T::S32 => (i32::MIN.into(), i32::MAX.into()),
            _ => (0, u32::MAX.into()),
        }
    }
}

/// A source value of the matrix: how it is written and its exact value.
#[derive(Clone, Copy, Debug)]
enum V {
    /// A float, exactly representable in its source type (`text` is how to write it).
    F(&'static str, f64),
    /// An integer, in its source type's range.
    I(i64),
}

/// The bits of an f16 of an exact value (round to nearest even; overflow to infinity),
/// worked out from the definition: 11 significant bits, exponents -14..15.
fn f16_bits(v: f64) -> u16 {
    let sign: u16 = if v.is_sign_negative() { 0x8000 } else { 0 };
    let a = v.abs();
    if a.is_infinite() {
        return sign | 0x7c00;
    }
    if a == 0.0 {
        return sign;
    }
    // The quantum of a's binade (subnormals share 2^-24).
    let e = a.log2().floor().max(-14.0) as i32;
    let q = 2f64.powi(e - 10);
    let m = (a / q).round_ties_even() * q;
    if m >= 65520.0 || m > 65504.0 {
        return sign | 0x7c00;
    }
    // Encode m (exact in f16 now).
    if m < 2f64.powi(-14) {
        return sign | (m / 2f64.powi(-24)) as u16;
    }
    let e = m.log2().floor() as i32;
    let frac = (m / 2f64.powi(e) - 1.0) * 1024.0;
    sign | (((e + 15) as u16) << 10) | frac as u16
}

/// What `(to)v` must give, as bits (seed 003: float → integer rounds to nearest even and
/// saturates; integer → float rounds to nearest even; integer → integer keeps the low
/// bits of the source's value, sign-extended from a signed source, as C does).
fn expected(from: T, to: T, v: V) -> u32 {
    match v {
        V::F(_, x) => {
            assert!(from.is_float());
            match to {
                T::Sp => (x as f32).to_bits(),
                T::Hp => u32::from(f16_bits(x)),
                _ => {
                    let (lo, hi) = to.range();
                    let r = x.round_ties_even();
                    let r = if r.is_nan() {
                        0
                    } else {
                        (r.clamp(lo as f64, hi as f64)) as i64
                    };
                    (r as u32) & mask(to)
                }
            }
        }
        V::I(i) => match to {
            T::Sp => (i as f32).to_bits(),
            T::Hp => u32::from(f16_bits(i as f64)),
            _ => (i as u32) & mask(to),
        },
    }
}

fn mask(t: T) -> u32 {
    if t.bits() == 32 { u32::MAX } else { 0xffff }
}

fn read(t: T, b: &[u8]) -> u32 {
    if t.bits() == 32 {
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    } else {
        u32::from(u16::from_le_bytes([b[0], b[1]]))
    }
}

/// The source values of each type.
fn values(t: T) -> Vec<V> {
    let f = |s, x| V::F(s, x);
    match t {
        T::Sp => vec![
            f("2.7", 2.7f32 as f64),
            f("2.5", 2.5),
            f("-2.5", -2.5),
            f("3.5", 3.5),
            f("-3.5", -3.5),
            f("0.5", 0.5),
            f("-0.5", -0.5),
            f("1.5", 1.5),
            f("-1.5", -1.5),
            f("40000.0", 40000.0),
            f("-1e9", -1e9f32 as f64),
            f("32767.5", 32767.5),
            f("-32768.5", -32768.5),
            f("65534.5", 65534.5),
            f("65535.5", 65535.5),
            f("123456.5", 123456.5),
            f("2147483648.0", 2147483648.0),
            f("-2147483648.0", -2147483648.0),
            f("-3e9", -3e9),
            f("3e9", 3e9),
            f("4294967296.0", 4294967296.0),
            f("1e10", 1e10f32 as f64),
            f("65504.0", 65504.0),
            f("65519.0", 65519.0),
            f("65520.0", 65520.0),
            f("1.0009765625", 1.0009765625),
            f("1.00048828125", 1.000_488_281_25),
            f("1.00146484375", 1.001_464_843_75),
            f("0.000000059604644775390625", 2f64.powi(-24)),
            f("0.0000000298023223876953125", 2f64.powi(-25)),
            f("0.00000004470348358154296875", 0.75 * 2f64.powi(-24)),
            f("0.0000000894069671630859375", 1.5 * 2f64.powi(-24)),
            f("0.00006103515625", 2f64.powi(-14)),
            f("-0.0", -0.0),
            f("0.0000000001", 1e-10f32 as f64),
        ],
        T::Hp => vec![
            f("2.5", 2.5),
            f("-2.5", -2.5),
            f("3.5", 3.5),
            f("0.5", 0.5),
            f("-1.5", -1.5),
            f("1023.5", 1023.5),
            f("1022.5", 1022.5),
            f("65504.0", 65504.0),
            f("-65504.0", -65504.0),
            f("70000.0", f64::INFINITY),
            f("-70000.0", f64::NEG_INFINITY),
            f("0.000000059604644775390625", 2f64.powi(-24)),
        ],
        T::Xp | T::S16 => [0, 1, -1, 2049, 2051, 32767, -32768, 4097, 12345]
            .map(V::I)
            .to_vec(),
        T::U16 => [0, 1, 0x7fff, 0x8000, 0xffff, 0xabcd].map(V::I).to_vec(),
        T::S32 => [
            0,
            -1,
            0x1234_5678,
            -70000,
            65519,
            65520,
            100_000,
            16_777_217,
            16_777_219,
            -2_147_483_647,
            i32::MIN as i64,
            i32::MAX as i64,
        ]
        .map(V::I)
        .to_vec(),
        T::U32 => [0, 0xffff_8000, 0x8000_0000, 0xffff_ffff, 0x0001_0001]
            .map(V::I)
            .to_vec(),
    }
}

/// How to write value `v` of type `t` as a typed literal expression.
fn literal(t: T, v: V) -> String {
    match v {
        V::F(s, _) if s.contains('e') => {
            // An exponent literal is sp and takes no suffix.
            assert_eq!(t, T::Sp);
            format!("({s})")
        }
        // An hp literal must be finite (E1124): reach infinity by converting an sp.
        V::F(s, x) if x.is_infinite() => format!("((hp){s})"),
        V::F(s, _) => match s.strip_prefix('-') {
            Some(p) => format!("(-{p}:{})", t.name()),
            None => format!("{s}:{}", t.name()),
        },
        V::I(i) if i < 0 => format!("(-{}:{})", -i, t.name()),
        V::I(i) => format!("{i}:{}", t.name()),
    }
}

const ALL: [T; 7] = [T::Sp, T::Hp, T::Xp, T::S16, T::U16, T::S32, T::U32];

/// Every cast pair except unsigned → float (a compile error, see the ui cases), on
/// values read from memory (run-time conversions) and on typed literals (folded).
#[test]
fn cast_matrix_follows_the_reference() {
    for from in ALL {
        let mut src = String::new();
        let mut cases = Vec::new();
        let mut body = String::new();
        for (k, v) in values(from).into_iter().enumerate() {
            let init = match v {
                V::F(s, _) => s.to_string(),
                V::I(i) => {
                    if from.signed() {
                        i.to_string()
                    } else {
                        format!("0x{i:x}")
                    }
                }
            };
            src.push_str(&format!("{} src{k} = {init};\n", from.name()));
            for to in ALL {
                if to.is_float() && !from.is_float() && !from.signed() {
                    continue;
                }
                let (d, f) = (format!("d{k}_{}", to.name()), format!("f{k}_{}", to.name()));
                src.push_str(&format!("{} {d}; {} {f};\n", to.name(), to.name()));
                body.push_str(&format!("{d} = ({})src{k};\n", to.name()));
                body.push_str(&format!("{f} = ({}){};\n", to.name(), literal(from, v)));
                cases.push((k, v, to, d, f));
            }
        }
        src.push_str("{\n");
        src.push_str(&body);
        src.push_str("}\n");
        one_tile(&src, &[], &[], |what, g| {
            let mut bad = Vec::new();
            for (k, v, to, d, f) in &cases {
                let want = expected(from, *to, *v);
                for (how, name) in [("run time", d), ("folded", f)] {
                    let got = read(*to, &g(name));
                    if got != want {
                        bad.push(format!(
                            "({}) of {} {v:?} (src{k}, {how}): got {got:#x}, want {want:#x}",
                            to.name(),
                            from.name()
                        ));
                    }
                }
            }
            assert!(bad.is_empty(), "{what}:\n{}", bad.join("\n"));
        });
    }
}

/// Typed literals and the folding of literal operations (seed 003, "Typed Literals"):
/// a suffix stores the literal in its type at compile time; an untyped integer folds
/// exactly and wraps in its context; an operation of integer literals with a typed one
/// folds in the typed (the wider typed) operand's type, wrapping there.
#[test]
fn typed_literals_and_literal_folding() {
    let src = r#"
        xp t_xp; hp t_hp; hp t_hp_tie; hp u_hp_tie; u32 t_u32; s16 t_s16; sp t_sp; sp t_sp0;
        sp t_sp_big; hp t_hp_int; u16 t_neg; xp t_fl;
        u16 w_u16; u32 w_u16_u32; u32 w_xp_u32; u32 w_both; s32 w_wider; xp w_same;
        xp w_exact; u16 w_ctx; sp w_div; xp w_nocx; hp w_mix; xp w_cmp;
        {
            t_xp = 0xDEAD:xp;
            t_hp = 3.14:hp;
            // 1 + 2^-11 + 2^-30: above hp's tie at 1 + 2^-11, but sp rounds it to the tie.
            t_hp_tie = 1.000488281250931322574615478515625:hp;
            u_hp_tie = 1.000488281250931322574615478515625;
            t_u32 = 0:u32;
            t_s16 = 42:s16;
            t_sp = 100.0:sp;
            t_sp0 = 0:sp;
            t_sp_big = 16777217:sp;
            t_hp_int = 2049:hp;
            t_neg = -1:u16;
            t_fl = 2.5:xp;
            w_u16 = 0xFFFF:u16 + 2;
            w_u16_u32 = 0xFFFF:u16 + 2;
            w_xp_u32 = 0x7FFF:xp + 1;
            w_both = 1:u16 + 0xFFFF:u32;
            w_wider = 40000:u16 * 2:s32;
            w_same = 1:s16 - 2:u16;
            w_exact = 100000 - 99999;
            w_ctx = 65536 * 2 + 5;
            w_div = 7 / 2;
            w_nocx = (xp)(0x8000 + 0);
            w_mix = 1.5:hp + 2:s32;
            w_cmp = 0xFFFF:u16 > -1;
        }
    "#;
    one_tile(src, &[], &[], |what, g| {
        let h = |n: &str| u16_of(&g(n));
        assert_eq!(h("t_xp"), 0xDEAD, "{what}: 0xDEAD:xp keeps its 16 bits");
        assert_eq!(h("t_hp"), 0x4248, "{what}: 3.14:hp is 3.140625");
        assert_eq!(
            h("t_hp_tie"),
            0x3C01,
            "{what}: a :hp literal rounds once, from its text"
        );
        assert_eq!(
            h("u_hp_tie"),
            0x3C00,
            "{what}: an unsuffixed literal is sp first"
        );
        assert_eq!(u32_of(&g("t_u32")), 0, "{what}");
        assert_eq!(h("t_s16"), 42, "{what}");
        assert_eq!(f32_of(&g("t_sp")), 100.0, "{what}");
        assert_eq!(u32_of(&g("t_sp0")), 0, "{what}: 0:sp is +0.0");
        assert_eq!(f32_of(&g("t_sp_big")), 16_777_216.0, "{what}: ties to even");
        assert_eq!(h("t_hp_int"), 0x6800, "{what}: 2049:hp is 2048");
        assert_eq!(h("t_neg"), 0xFFFF, "{what}: -(1:u16) wraps in u16");
        assert_eq!(h("t_fl"), 2, "{what}: 2.5:xp rounds to nearest even");
        assert_eq!(h("w_u16"), 1, "{what}: folds in u16");
        assert_eq!(
            u32_of(&g("w_u16_u32")),
            1,
            "{what}: folds in u16, then widens"
        );
        assert_eq!(
            u32_of(&g("w_xp_u32")),
            0xFFFF_8000,
            "{what}: xp -32768 widened"
        );
        assert_eq!(
            u32_of(&g("w_both")),
            0x1_0000,
            "{what}: the wider typed operand"
        );
        assert_eq!(
            u32_of(&g("w_wider")),
            80_000,
            "{what}: s32 is wider than u16"
        );
        assert_eq!(h("w_same"), 0xFFFF, "{what}: one width: u16 wins, wraps");
        assert_eq!(h("w_exact"), 1, "{what}: untyped literals fold exactly");
        assert_eq!(h("w_ctx"), 5, "{what}: then wrap in the context");
        assert_eq!(
            f32_of(&g("w_div")),
            3.0,
            "{what}: integer division of exact values"
        );
        assert_eq!(h("w_nocx"), 0x8000, "{what}");
        assert_eq!(h("w_mix"), 0x4300, "{what}: hp 3.5");
        assert_eq!(h("w_cmp"), 0, "{what}: -1 becomes u16 0xFFFF");
    });
}

/// Implicit conversions at run time (seed 003, "Implicit Type Coercion" and the
/// float → integer rule, which applies to assignments, returns and arguments too).
#[test]
fn implicit_conversions_follow_the_coercion_rules() {
    let src = r#"
        sp f25 = 2.5; sp f35 = 3.5; sp big = 40000.0; sp neg = -3.0; sp f15 = 1.5;
        hp h1 = 1.0; hp h05 = 0.5; xp x3 = 3; xp m1 = -1; u16 uffff = 0xFFFF; u16 u1 = 1;
        u32 w1 = 1; s32 s70000 = 70000; s32 sm1 = -1; s16 sm2 = -2;
        xp a_assign; u16 a_neg; xp a_ret; xp a_arg; xp a_acc; xp a_tern; xp a_minmax;
        hp a_s32_hp; sp a_hp_sp; hp a_xp_hp; u32 a_u16_u32; s32 a_u16_s32; u32 a_xp_u32;
        u16 a_s16_u16; xp a_cmp1; xp a_cmp2; xp a_cmp3; sp a_div; xp a_rnd1; xp a_rnd2;
        xp a_rnd3; hp a_hrnd;
        toxp(sp v) -> xp { return v; }
        half(xp v) -> xp { return v / 2; }
        {
            a_assign = f25;
            a_neg = neg;
            a_ret = toxp(big);
            a_arg = half(f35);
            xp acc = 1;
            acc <+- f15;
            a_acc = acc;
            a_tern = x3 > 0 ? f25 : 7;
            a_minmax = min(f35, x3);
            a_s32_hp = s70000 + h1;
            a_hp_sp = h1 + f25;
            a_xp_hp = x3 * h05;
            a_u16_u32 = uffff + w1;
            a_u16_s32 = uffff + sm1;
            a_xp_u32 = m1 + w1;
            a_s16_u16 = sm2 + u1;
            a_cmp1 = u1 > m1;
            a_cmp2 = m1 < w1;
            a_cmp3 = m1 < h1;
            a_div = f35 / 2;
            a_rnd1 = round(f35 - 0.2, 1);
            a_rnd2 = round(neg - 0.5, 2);
            a_rnd3 = round(f25, 3);
            a_hrnd = round(h05 + h1, 0);
        }
    "#;
    one_tile(src, &[], &[], |what, g| {
        let h = |n: &str| u16_of(&g(n));
        assert_eq!(
            h("a_assign"),
            2,
            "{what}: assignment rounds to nearest even"
        );
        assert_eq!(h("a_neg"), 0, "{what}: -3.0 saturates to u16 0");
        assert_eq!(h("a_ret"), 32767, "{what}: a -> xp return saturates");
        assert_eq!(h("a_arg"), 2, "{what}: argument 3.5 -> 4, halved");
        assert_eq!(h("a_acc"), 2, "{what}: 1 + 1.5 = 2.5 in sp, stored as xp 2");
        assert_eq!(h("a_tern"), 2, "{what}: the arms meet in sp");
        assert_eq!(h("a_minmax"), 3, "{what}");
        assert_eq!(
            h("a_s32_hp"),
            0x7C00,
            "{what}: float wins: s32 70000 is hp inf"
        );
        assert_eq!(f32_of(&g("a_hp_sp")), 3.5, "{what}: hp + sp is sp");
        assert_eq!(h("a_xp_hp"), 0x3E00, "{what}: xp 3 * hp 0.5 = hp 1.5");
        assert_eq!(
            u32_of(&g("a_u16_u32")),
            0x1_0000,
            "{what}: u16 zero-extends"
        );
        assert_eq!(u32_of(&g("a_u16_s32")), 65534, "{what}: to the wider s32");
        assert_eq!(u32_of(&g("a_xp_u32")), 0, "{what}: xp -1 sign-extends");
        assert_eq!(h("a_s16_u16"), 0xFFFF, "{what}: one width: unsigned");
        assert_eq!(h("a_cmp1"), 0, "{what}: u16 1 > xp -1 is false");
        assert_eq!(h("a_cmp2"), 0, "{what}: xp -1 < u32 1 compares as u32");
        assert_eq!(h("a_cmp3"), 1, "{what}: xp -1 < hp 1.0 compares as hp");
        assert_eq!(f32_of(&g("a_div")), 1.75, "{what}");
        assert_eq!(h("a_rnd1"), 3, "{what}: round(3.3, 1) truncates");
        assert_eq!(
            h("a_rnd2") as i16,
            -4,
            "{what}: round(-3.5, 2) is the floor"
        );
        assert_eq!(h("a_rnd3"), 3, "{what}: round(2.5, 3) is the ceiling");
        assert_eq!(h("a_hrnd"), 0x4000, "{what}: round(hp 1.5, 0) = 2.0");
    });
}

/// Socket reads (seed 003, "C-Style Casts" and "Wavelet Access Modes"): a cast on a read
/// sets how the bits are read and converts nothing; a chained cast converts after the
/// read; a 16-bit value travels in the low (data) half; a control wavelet whose command 0
/// carries the CE filter is not delivered to the CE.
#[test]
fn socket_reads_and_control_wavelets() {
    let src = r#"
        socket s;
        union word { u32 u; xp w[2]; };
        sp r_sp; xp r_conv; sp r_widen; hp r_raw; xp r_data; xp r_after; u32 r_u32;
        {
            sp f = 2.5;
            xp m3 = -3;
            s[] <- f;
            r_sp = (sp)s[];
            s[] <- f;
            r_conv = (xp)(sp)s[];
            s[] <- m3;
            r_widen = (sp)(xp)s[];
            s[] <- m3;
            r_raw = (hp)s[];
            union word w;
            w.w[0] = 0x1234; w.w[1] = 0x7777;
            s[] <- w.u;
            r_data = s[].data;
            s[] <- control(0x01000000);
            s[] <- 0x55:xp;
            r_after <- s[];
            s[] <- 0xDEADBEEF:u32;
            r_u32 = (u32)s[];
        }
    "#;
    one_tile(src, &[("s", 6, 6)], &[6], |what, g| {
        assert_eq!(f32_of(&g("r_sp")), 2.5, "{what}");
        assert_eq!(u16_of(&g("r_conv")), 2, "{what}: read as sp, then rounded");
        assert_eq!(
            f32_of(&g("r_widen")),
            -3.0,
            "{what}: read as xp, then converted"
        );
        assert_eq!(
            u16_of(&g("r_raw")),
            0xFFFD,
            "{what}: xp -3's bits read as hp"
        );
        assert_eq!(
            u16_of(&g("r_data")),
            0x1234,
            "{what}: .data is the low half"
        );
        assert_eq!(
            u16_of(&g("r_after")),
            0x55,
            "{what}: the CE-filtered control wavelet is not received"
        );
        assert_eq!(u32_of(&g("r_u32")), 0xDEAD_BEEF, "{what}");
    });
}

#[test]
fn flip_on_a_control_word_held_in_a_variable_is_checked_when_it_is_sent() {
    // E1113 rejects a constant control word whose command 0 is not a NOP before `flip`;
    // a word held in a variable is checked by the simulator when the last wavelet leaves:
    // a fault that names the word, the colour, the PE and the source line.
    for arch in [Arch::Wse2, Arch::Wse3] {
        for (word, fault) in [(0x0940_9249u32, true), (0x0500_0000, false)] {
            let src = format!(
                "socket tx;\nu32 w = 0x{word:08X};\n{{\n    tx[] <- control(w);\n    flip tx[];\n}}\n"
            );
            let mut spec = ClassSpec::new(arch);
            spec.sockets
                .push(("tx".to_string(), SocketBinding { rx: 4, tx: 3 }));
            let mut sources = SourceMap::new();
            let prog = compile_in(&mut sources, &src, &spec);
            let route = ColorConfig::route(0, 0, 3, vec![Direction::Ramp], vec![Direction::Ramp]);
            let img = image(
                &sources,
                arch,
                1,
                1,
                vec![prog],
                vec![0],
                vec![route],
                false,
            );
            let mut sim = Simulator::new(&img).expect("image loads");
            let got = sim.run_until_idle(100_000);
            if !fault {
                assert!(got.is_ok(), "{arch:?} 0x{word:08x}: {got:?}");
                continue;
            }
            let Err(SimError::Fault { kind, line, .. }) = &got else {
                panic!("{arch:?}: expected a fault, got {got:?}");
            };
            assert_eq!(
                kind,
                &FaultKind::FlipOnControl { color: 3, word },
                "{arch:?}"
            );
            assert!(
                line.as_deref().is_some_and(|l| l.ends_with(":4")),
                "{arch:?}: the send's line, got {line:?}"
            );
            let msg = got.unwrap_err().to_string();
            assert!(
                msg.contains("0x09409249") && msg.contains("switch advance"),
                "{msg}"
            );
        }
    }
}
