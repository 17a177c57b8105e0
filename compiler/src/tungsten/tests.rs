//! Unit tests of the Tungsten front end: lexing, parsing, lowering shapes, and never
//! panicking on arbitrary input (random bytes and mutated programs).

use super::token::Token;
use super::*;
use crate::ir::Inst;
use crate::lexing::tokenize;
use csl_arch::dsd::DsdOpcode;
use proptest::prelude::*;

fn compile(src: &str, spec: &ClassSpec) -> (Option<Program>, Vec<Diagnostic>) {
    let mut sources = SourceMap::new();
    let file = sources.add("t.w".into(), None, src.to_string());
    let mut diags = Vec::new();
    let p = compile_class(&mut sources, file, spec, &mut diags);
    (p, diags)
}

fn ok(src: &str) -> Program {
    let spec = if src.contains("socket") {
        spec_with(&[("tx", 3, 3), ("rx", 4, 4)])
    } else {
        ClassSpec::new(Arch::Wse3)
    };
    let (p, d) = compile(src, &spec);
    assert!(!d.iter().any(Diagnostic::is_error), "{d:#?}");
    p.expect("program")
}

fn spec_with(sockets: &[(&str, u8, u8)]) -> ClassSpec {
    let mut s = ClassSpec::new(Arch::Wse3);
    for (n, rx, tx) in sockets {
        s.sockets
            .push((n.to_string(), SocketBinding { rx: *rx, tx: *tx }));
    }
    s
}

fn main_insts(p: &Program) -> Vec<Inst> {
    p.functions
        .values()
        .filter(|f| f.name == "main")
        .flat_map(|f| f.blocks.values().flat_map(|b| b.insts.clone()))
        .collect()
}

#[test]
fn lexes_tungsten_specials() {
    let (t, e) =
        tokenize("i in [0, ∞) x <- 1.0:hp; d <+- rx[]; ∀i /* c */ forall INF 0x1.8p3 2.5e-3");
    assert!(e.is_empty(), "{e:?}");
    let kinds: Vec<Token<'_>> = t.into_iter().map(|(_, t, _)| t).collect();
    assert!(kinds.contains(&Token::Inf));
    assert!(kinds.contains(&Token::TypeSuffix(types::Scalar::Hp)));
    assert!(kinds.contains(&Token::AccArrow));
    assert!(kinds.contains(&Token::LArrow));
    assert_eq!(kinds.iter().filter(|k| **k == Token::Forall).count(), 2);
    assert_eq!(kinds.iter().filter(|k| **k == Token::Inf).count(), 2);
    assert!(
        kinds
            .iter()
            .any(|k| matches!(k, Token::Float(f) if f.value == 12.0 && f.exponent))
    );
    assert!(
        kinds.iter().any(
            |k| matches!(k, Token::Float(f) if f.exponent && (f.value - 2.5e-3).abs() < 1e-12)
        )
    );
}

#[test]
fn every_listed_keyword_and_type_is_its_own_token() {
    for (word, doc) in token::KEYWORDS {
        let (t, e) = tokenize(word);
        assert!(e.is_empty() && t.len() == 1, "{word}: {e:?}");
        let tok = &t[0].1;
        assert!(!matches!(tok, Token::Ident(_)), "{word} lexes as a name");
        // `INF` and `forall` are second spellings of `∞` and `∀`.
        let spelled = token::spelling(tok);
        assert!(
            spelled == *word || matches!(*word, "INF" | "forall"),
            "{word} vs {spelled}"
        );
        assert!(!doc.is_empty());
    }
    for s in types::Scalar::WRITTEN {
        let (t, _) = tokenize::<Token<'_>>(s.name());
        assert_eq!(t.first().map(|t| t.1.clone()), Some(Token::Type(s)));
        assert!(!s.summary().is_empty());
    }
}

#[test]
fn parses_half_open_ranges_and_dangling_else() {
    let (items, d) = parser::parse(
        crate::source::FileId::from_u32(0),
        "{ i in [0, 4) if (i) if (i) x = 1; else x = 2; }",
    );
    assert!(d.is_empty(), "{d:?}");
    assert_eq!(items.len(), 1);
}

#[test]
fn scalar_send_is_a_mov_with_a_scalar_source() {
    let p = ok("socket tx; socket rx; xp a; { tx[] <- a; sp f <- rx[]; }");
    let ops: Vec<_> = main_insts(&p)
        .into_iter()
        .filter_map(|i| match i {
            Inst::DsdOp { op, operands, .. } => Some((op, operands.map(|o| o.0))),
            _ => None,
        })
        .collect();
    use csl_arch::dsd::OperandKind as K;
    assert_eq!(
        ops,
        vec![
            (DsdOpcode::Mov16, [K::Desc, K::Scalar, K::None, K::None]),
            (DsdOpcode::Mov32, [K::Ptr, K::Desc, K::None, K::None]),
        ]
    );
    // Descriptors are `$` globals; the program's own variables keep their names.
    assert!(p.globals.values().any(|g| g.name == "a"));
    assert!(
        p.globals
            .values()
            .filter(|g| g.name.starts_with('$'))
            .count()
            >= 2
    );
    assert_eq!(p.input_queues.len(), 2);
    assert_eq!(p.output_queues.len(), 2);
    assert_eq!(p.initially_active, 1 << ENTRY_TASK_ID);
}

#[test]
fn flip_marks_the_previous_send_descriptor() {
    let p = ok("socket tx; socket rx; xp d[4]; { i in [0, 4) tx[] <- d[i]; flip tx[]; }");
    let flagged: Vec<_> = p
        .globals
        .values()
        .filter(|g| g.name.starts_with("$fabout"))
        .map(|g| g.init[1])
        .collect();
    assert_eq!(flagged, vec![csl_arch::dsd::flags::ADVANCE_SWITCH]);
    // And it is one vector op, not a loop.
    assert_eq!(
        main_insts(&p)
            .iter()
            .filter(|i| matches!(i, Inst::DsdOp { .. }))
            .count(),
        1
    );
}

#[test]
fn control_send_sets_the_control_flag() {
    let p = ok("socket tx; socket rx; { tx[] <- control(0x09409249); }");
    let g = p
        .globals
        .values()
        .find(|g| g.name.starts_with("$fabout"))
        .expect("desc");
    assert_eq!(g.init[1], csl_arch::dsd::flags::CONTROL);
}

#[test]
fn address_places_registers_and_neighbours() {
    let p = ok("xp col[1] address(0x7C46); sp a[4]; sp b[2] address(&a + 3); { }");
    let col = p.globals.values().find(|g| g.name == "col").expect("col");
    assert_eq!(col.place, crate::ir::GlobalPlace::At(0x7C46 * 2));
    assert!(col.init.is_empty());
    let b = p.globals.values().find(|g| g.name == "b").expect("b");
    assert!(matches!(
        b.place,
        crate::ir::GlobalPlace::After { offset: 6, .. }
    ));
}

#[test]
fn literal_folding_follows_seed_003() {
    let p = ok(
        "u32 r = 0xFFFFFFFF + 2; xp a = (xp)2.7; xp b = (xp)2.5; xp c = (xp)40000.0; xp t = 0xDEAD:xp; { }",
    );
    let get = |n: &str| {
        p.globals
            .values()
            .find(|g| g.name == n)
            .expect(n)
            .init
            .clone()
    };
    assert_eq!(get("r"), vec![1, 0, 0, 0]);
    assert_eq!(get("a"), vec![3, 0]);
    assert_eq!(get("b"), vec![2, 0]);
    assert_eq!(get("c"), 32767u16.to_le_bytes().to_vec());
    assert_eq!(get("t"), 0xDEADu16.to_le_bytes().to_vec());
}

#[test]
fn parallel_joins_with_one_wait() {
    let p = ok("socket tx; socket rx; xp a; xp b; { parallel { tx[] <- a; b <- rx[]; } }");
    let insts = main_insts(&p);
    let asyncs: Vec<u8> = insts
        .iter()
        .filter_map(|i| match i {
            Inst::DsdOp { cfg, ut, .. } if cfg & csl_arch::dsd::cfg::ASYNC != 0 => Some(*ut),
            _ => None,
        })
        .collect();
    assert_eq!(asyncs.len(), 2);
    assert_ne!(asyncs[0], asyncs[1]);
    let mask = (1u8 << asyncs[0]) | (1 << asyncs[1]);
    assert!(insts.contains(&Inst::UtWait { mask }));
}

#[test]
fn several_syntax_errors_are_reported() {
    let (_, d) = compile(
        "{ xp a = ; xp b = 2; b = * 3; }\nxp c = ;\n",
        &ClassSpec::new(Arch::Wse2),
    );
    assert!(
        d.iter()
            .filter(|d| d.code == codes::TUNG_UNEXPECTED_TOKEN)
            .count()
            >= 3,
        "{d:#?}"
    );
}

const SAMPLE: &str = r#"
socket tx; socket rx;
xp param N = 4;
union hdr { u32 u; xp w[2]; };
sp a[n=N]; sp b[N]; xp x[8];
xp col[1] address(0x7C46);
f(sp v, xp k) -> xp { return (xp)(v * 2.0) + k; }
{
    let i in [0, N);
    ∀i a[i] = b[i] * 1.5 + a[i];
    i in [0, 4) x[rx[].index] <- rx[].data;
    union hdr h; h.w[0] = 3; tx[] <- h.u;
    flip tx[];
    parallel { i in [0, N) tx[] <- a[i]; i in [0, N) b[i] <- rx[]; }
    xp q = f(a[0], 3) > 2 ? min(1, 2) : max(3, (xp)round(2.5, 1));
    if (q != 0 && col[0] < 4 || !q) q = bitcast(xp, (u16)q) << 2; else q <- rx[];
    forever dispatch(rx) { wavelet(hp v) { b[0] <+- (sp)v; } }
}
"#;

#[test]
fn the_sample_compiles() {
    let (p, d) = compile(SAMPLE, &spec_with(&[("tx", 3, 3), ("rx", 4, 4)]));
    assert!(p.is_some(), "{d:#?}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let _ = compile(&text, &spec_with(&[("tx", 3, 3)]));
    }

    #[test]
    fn mutated_programs_never_panic(cuts in prop::collection::vec((0usize..SAMPLE.len(), 0usize..12, 0usize..40), 1..6)) {
        let pieces = ["(", ")", "[", "]", "{", "}", ";", "rx[]", "<-", "∞", "0x", ":hp", "1e9", "-", "u64", "∀i", "tx[]"];
        let mut text = SAMPLE.to_string();
        for (at, len, what) in cuts {
            let mut at = at.min(text.len());
            while !text.is_char_boundary(at) { at -= 1; }
            let mut end = (at + len).min(text.len());
            while !text.is_char_boundary(end) { end -= 1; }
            let ins = pieces.get(what).copied().unwrap_or("");
            text.replace_range(at..end.max(at), ins);
        }
        let _ = compile(&text, &spec_with(&[("tx", 3, 3), ("rx", 4, 4)]));
        let _ = compile(&text, &ClassSpec::new(Arch::Wse2));
    }
}
