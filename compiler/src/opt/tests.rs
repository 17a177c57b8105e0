//! Tests of the optimiser: small functions in, expected IR out; and a differential
//! property test that runs random functions before and after optimisation on an IR
//! interpreter built on the simulator's ALU.

use super::optimize_function;
use crate::ir::{Block, BlockId, Function, GlobalId, ImmVal, Inst, Term, VReg};
use crate::source::Span;
use cranelift_entity::{EntityRef, PrimaryMap};
use csl_arch::alu;
use csl_arch::isa::{BinOp, CmpOp, NumTy, UnOp, Width};
use proptest::prelude::*;

fn v(i: usize) -> VReg {
    VReg::new(i)
}

fn blk(i: usize) -> BlockId {
    BlockId::new(i)
}

fn func(nparams: u32, nregs: u32, blocks: Vec<(Vec<Inst>, Term)>) -> Function {
    let mut map = PrimaryMap::new();
    for (insts, term) in blocks {
        map.push(Block { insts, term });
    }
    let file = <crate::source::FileId as EntityRef>::new(0);
    Function {
        name: "t".into(),
        nparams,
        nregs,
        frame_bytes: 0,
        blocks: map,
        span: Span::new(file, 0, 0),
    }
}

/// Asserts that `out` contains every one of `parts`.
fn contains_all(out: &str, parts: &[&str]) {
    for p in parts {
        assert!(out.contains(p), "no `{p}` in:\n{out}");
    }
}

/// The function's blocks, one line per instruction.
fn show(f: &Function) -> String {
    let mut s = String::new();
    for (b, block) in &f.blocks {
        s.push_str(&format!("{b}:\n"));
        for i in &block.insts {
            s.push_str(&format!("  {i:?}\n"));
        }
        s.push_str(&format!("  {:?}\n", block.term));
    }
    s
}

fn opt(mut f: Function) -> String {
    optimize_function(&mut f);
    show(&f)
}

fn imm(dst: usize, imm: u32) -> Inst {
    Inst::Imm { dst: v(dst), imm }
}

fn bin(op: BinOp, ty: NumTy, dst: usize, a: usize, b: usize) -> Inst {
    Inst::Bin {
        op,
        ty,
        dst: v(dst),
        a: v(a),
        b: v(b),
    }
}

fn mov(dst: usize, src: usize) -> Inst {
    Inst::Mov {
        dst: v(dst),
        src: v(src),
    }
}

#[test]
fn folds_constants_and_removes_dead_code() {
    let f = func(
        0,
        4,
        vec![(
            vec![
                imm(0, 6),
                imm(1, 3),
                bin(BinOp::Mul, NumTy::I16, 2, 0, 1),
                mov(3, 2),
            ],
            Term::Ret(Some(v(3))),
        )],
    );
    assert_eq!(
        opt(f),
        "blk0:\n  Imm { dst: v2, imm: 18 }\n  Ret(Some(v2))\n"
    );
}

#[test]
fn folding_wraps_at_the_type_width() {
    let cases = [
        (BinOp::Add, NumTy::I16, 0x7fff, 1, 0x8000),
        (BinOp::Add, NumTy::U8, 200, 100, 44),
        (BinOp::Sub, NumTy::I8, 0, 1, 0xff),
        (BinOp::Shr, NumTy::I16, 0x8000, 3, 0xf000),
        (BinOp::Shr, NumTy::U16, 0x8000, 3, 0x1000),
        (BinOp::Div, NumTy::I32, (-7i32) as u32, 2, (-3i32) as u32),
    ];
    for (op, ty, a, b, want) in cases {
        let f = func(
            0,
            3,
            vec![(
                vec![imm(0, a), imm(1, b), bin(op, ty, 2, 0, 1)],
                Term::Ret(Some(v(2))),
            )],
        );
        assert_eq!(
            opt(f),
            format!("blk0:\n  Imm {{ dst: v2, imm: {want} }}\n  Ret(Some(v2))\n"),
            "{op:?} {ty:?}"
        );
    }
}

#[test]
fn floats_and_division_by_zero_are_not_folded() {
    let one = 1.0f32.to_bits();
    let f = func(
        0,
        5,
        vec![(
            vec![
                imm(0, one),
                imm(1, one),
                bin(BinOp::Add, NumTy::F32, 2, 0, 1),
                imm(3, 0),
                bin(BinOp::Div, NumTy::I16, 4, 0, 3),
            ],
            Term::Ret(Some(v(2))),
        )],
    );
    let out = opt(f);
    assert!(out.contains("BinImm { op: Add, ty: F32"), "{out}");
    // The division traps at run time: it stays, although its result is unused.
    assert!(out.contains("op: Div"), "{out}");
}

#[test]
fn copies_propagate_and_constants_are_reused() {
    let f = func(
        1,
        6,
        vec![(
            vec![
                mov(1, 0),
                imm(2, 4),
                bin(BinOp::Mul, NumTy::U16, 3, 1, 2),
                imm(4, 4),
                bin(BinOp::Add, NumTy::U16, 5, 3, 4),
            ],
            Term::Ret(Some(v(5))),
        )],
    );
    assert_eq!(
        opt(f),
        "blk0:\n  BinImm { op: Mul, ty: U16, dst: v3, a: v0, imm: Const(4) }\n  \
         BinImm { op: Add, ty: U16, dst: v5, a: v3, imm: Const(4) }\n  Ret(Some(v5))\n"
    );
}

#[test]
fn identities_need_a_normalised_operand() {
    // v0 is a parameter (any bits): `v0 + 0` in i16 still masks, so it stays.
    let f = func(
        1,
        4,
        vec![(
            vec![
                imm(1, 0),
                bin(BinOp::Add, NumTy::I16, 2, 0, 1),
                bin(BinOp::Add, NumTy::I16, 3, 2, 1),
            ],
            Term::Ret(Some(v(3))),
        )],
    );
    // The second add sees an i16 result: it is a copy.
    assert_eq!(
        opt(f),
        "blk0:\n  BinImm { op: Add, ty: I16, dst: v3, a: v0, imm: Const(0) }\n  Ret(Some(v3))\n"
    );
    let f = func(
        1,
        3,
        vec![(
            vec![imm(1, 0), bin(BinOp::Mul, NumTy::I32, 2, 0, 1)],
            Term::Ret(Some(v(2))),
        )],
    );
    // The product is 0: the register already holding 0 is returned.
    assert_eq!(
        opt(f),
        "blk0:\n  Imm { dst: v1, imm: 0 }\n  Ret(Some(v1))\n"
    );
}

#[test]
fn constant_branches_become_jumps_and_dead_blocks_empty() {
    let f = func(
        0,
        2,
        vec![
            (
                vec![imm(0, 1)],
                Term::Branch {
                    cond: v(0),
                    then: blk(1),
                    otherwise: blk(2),
                },
            ),
            (vec![imm(1, 7)], Term::Ret(Some(v(1)))),
            (vec![imm(1, 9)], Term::Ret(Some(v(1)))),
        ],
    );
    assert_eq!(
        opt(f),
        "blk0:\n  Imm { dst: v1, imm: 7 }\n  Ret(Some(v1))\nblk1:\n  Unreachable\nblk2:\n  Unreachable\n"
    );
}

#[test]
fn loop_variables_stay_live() {
    // i = 0; while (i < 10) i = i + 1; return i
    let f = func(
        0,
        4,
        vec![
            (vec![imm(0, 0)], Term::Jump(blk(1))),
            (
                vec![
                    imm(1, 10),
                    Inst::Cmp {
                        op: CmpOp::Lt,
                        ty: NumTy::I16,
                        dst: v(2),
                        a: v(0),
                        b: v(1),
                    },
                ],
                Term::Branch {
                    cond: v(2),
                    then: blk(2),
                    otherwise: blk(3),
                },
            ),
            (
                vec![imm(3, 1), bin(BinOp::Add, NumTy::I16, 0, 0, 3)],
                Term::Jump(blk(1)),
            ),
            (vec![], Term::Ret(Some(v(0)))),
        ],
    );
    let out = opt(f);
    contains_all(
        &out,
        &[
            "Imm { dst: v0, imm: 0 }",
            "BinImm { op: Add, ty: I16, dst: v0, a: v0, imm: Const(1) }",
            "CmpImm { op: Lt, ty: I16, dst: v2, a: v0, imm: Const(10) }",
        ],
    );
    // Rotated: the body tests the condition itself instead of jumping back to the header.
    assert!(!out.contains("Jump(blk1)"), "{out}");
}

#[test]
fn side_effects_stay() {
    let g = GlobalId::new(0);
    let f = func(
        0,
        4,
        vec![(
            vec![
                Inst::GlobalAddr {
                    dst: v(0),
                    global: g,
                    offset: 0,
                },
                Inst::Load {
                    w: Width::W16,
                    dst: v(1),
                    addr: v(0),
                },
                Inst::Store {
                    w: Width::W16,
                    addr: v(0),
                    src: v(0),
                },
                Inst::Call {
                    func: crate::ir::FuncId::new(0),
                    args: vec![v(0)],
                    dst: Some(v(2)),
                },
                Inst::Activate { id: v(0) },
            ],
            Term::Ret(None),
        )],
    );
    let out = opt(f);
    for what in ["Load", "Store", "Call", "Activate"] {
        assert!(out.contains(what), "{what} removed:\n{out}");
    }
}

#[test]
fn sixteen_bit_address_adds_become_offsets() {
    let f = func(
        1,
        5,
        vec![(
            vec![
                imm(1, 8),
                bin(BinOp::Add, NumTy::U16, 2, 0, 1),
                Inst::Load {
                    w: Width::W32,
                    dst: v(3),
                    addr: v(2),
                },
                // A 32-bit add does not wrap at 2^16: no offset form.
                bin(BinOp::Add, NumTy::U32, 4, 0, 1),
                Inst::Store {
                    w: Width::W32,
                    addr: v(4),
                    src: v(3),
                },
            ],
            Term::Ret(None),
        )],
    );
    let out = opt(f);
    contains_all(
        &out,
        &[
            "LoadOff { w: W32, dst: v3, addr: v0, off: Const(8) }",
            "Store { w: W32, addr: v4",
        ],
    );
}

#[test]
fn unreachable_blocks_are_left_alone() {
    let f = func(
        0,
        2,
        vec![
            (vec![], Term::Ret(None)),
            (vec![imm(0, 1), mov(1, 0)], Term::Ret(Some(v(1)))),
        ],
    );
    assert_eq!(
        opt(f),
        "blk0:\n  Ret(None)\nblk1:\n  Imm { dst: v0, imm: 1 }\n  Mov { dst: v1, src: v0 }\n  Ret(Some(v1))\n"
    );
}

// ---- differential testing -------------------------------------------------------------

/// Bytes of the interpreter's memory.
const MEM: usize = 64;
/// Steps the original may take; cases that need more are discarded.
const FUEL: u32 = 400;

/// Why a run stopped early.
#[derive(Debug, PartialEq, Eq)]
enum Stop {
    Fault,
    OutOfFuel,
}

/// Registers, memory and the return value after running `f` on `args`.
fn interpret(f: &Function, args: &[u32], fuel: u32) -> Result<(Option<u32>, Vec<u8>), Stop> {
    let mut r = vec![0u32; f.nregs as usize];
    r[..args.len()].copy_from_slice(args);
    let mut mem = vec![0u8; MEM];
    let global = |g: GlobalId, o: u32| (16 * g.index() as u32).wrapping_add(o);
    let immv = |i: ImmVal| match i {
        ImmVal::Const(c) => c,
        ImmVal::Global(g, o) => global(g, o),
    };
    let load = |mem: &[u8], a: u32, w: Width| -> Result<u32, Stop> {
        let n = w.bytes() as usize;
        let a = a as usize;
        let bytes = mem.get(a..a + n).ok_or(Stop::Fault)?;
        Ok(bytes
            .iter()
            .rev()
            .fold(0u32, |acc, &b| (acc << 8) | u32::from(b)))
    };
    let store = |mem: &mut [u8], a: u32, w: Width, v: u32| -> Result<(), Stop> {
        let n = w.bytes() as usize;
        let a = a as usize;
        let dst = mem.get_mut(a..a + n).ok_or(Stop::Fault)?;
        dst.copy_from_slice(&v.to_le_bytes()[..n]);
        Ok(())
    };
    let mut b = blk(0);
    let mut steps = 0;
    loop {
        let block = &f.blocks[b];
        for inst in &block.insts {
            steps += 1;
            if steps > fuel {
                return Err(Stop::OutOfFuel);
            }
            match *inst {
                Inst::Imm { dst, imm } => r[dst.index()] = imm,
                Inst::Mov { dst, src } => r[dst.index()] = r[src.index()],
                Inst::Bin { op, ty, dst, a, b } => {
                    r[dst.index()] =
                        alu::bin(op, ty, r[a.index()], r[b.index()]).map_err(|_| Stop::Fault)?
                }
                Inst::BinImm {
                    op,
                    ty,
                    dst,
                    a,
                    imm,
                } => {
                    r[dst.index()] =
                        alu::bin(op, ty, r[a.index()], immv(imm)).map_err(|_| Stop::Fault)?
                }
                Inst::Cmp { op, ty, dst, a, b } => {
                    r[dst.index()] = u32::from(alu::cmp(op, ty, r[a.index()], r[b.index()]))
                }
                Inst::CmpImm {
                    op,
                    ty,
                    dst,
                    a,
                    imm,
                } => r[dst.index()] = u32::from(alu::cmp(op, ty, r[a.index()], immv(imm))),
                Inst::Un { op, ty, dst, a } => r[dst.index()] = alu::un(op, ty, r[a.index()]),
                Inst::Conv { to, from, dst, src } => {
                    r[dst.index()] = alu::conv(to, from, r[src.index()])
                }
                Inst::GlobalAddr {
                    dst,
                    global: g,
                    offset,
                } => r[dst.index()] = global(g, offset),
                Inst::Load { w, dst, addr } => r[dst.index()] = load(&mem, r[addr.index()], w)?,
                Inst::LoadOff { w, dst, addr, off } => {
                    let a = r[addr.index()].wrapping_add(immv(off)) & 0xffff;
                    r[dst.index()] = load(&mem, a, w)?
                }
                Inst::Store { w, addr, src } => {
                    store(&mut mem, r[addr.index()], w, r[src.index()])?
                }
                Inst::StoreOff { w, addr, off, src } => {
                    let a = r[addr.index()].wrapping_add(immv(off)) & 0xffff;
                    store(&mut mem, a, w, r[src.index()])?
                }
                _ => return Err(Stop::Fault),
            }
        }
        steps += 1;
        if steps > fuel {
            return Err(Stop::OutOfFuel);
        }
        match block.term {
            Term::Jump(t) => b = t,
            Term::Branch {
                cond,
                then,
                otherwise,
            } => {
                b = if r[cond.index()] != 0 {
                    then
                } else {
                    otherwise
                }
            }
            Term::Ret(v) => return Ok((v.map(|v| r[v.index()]), mem)),
            Term::Unreachable | Term::Open => return Err(Stop::Fault),
        }
    }
}

const NREGS: usize = 8;
const NBLOCKS: usize = 5;

fn reg() -> impl Strategy<Value = VReg> {
    (0..NREGS).prop_map(v)
}

fn ty() -> impl Strategy<Value = NumTy> {
    prop::sample::select(NumTy::ALL.to_vec())
}

fn constant() -> impl Strategy<Value = u32> {
    prop_oneof![
        prop::sample::select(vec![
            0,
            1,
            2,
            3,
            4,
            8,
            0x7f,
            0x80,
            0xff,
            0x7fff,
            0x8000,
            0xffff,
            0x1_0000,
            0x8000_0000,
            u32::MAX,
            1.0f32.to_bits(),
            0x3c00,
        ]),
        any::<u32>(),
    ]
}

fn inst() -> impl Strategy<Value = Inst> {
    let binop = prop::sample::select(BinOp::ALL.to_vec());
    let cmpop = prop::sample::select(CmpOp::ALL.to_vec());
    let unop = prop::sample::select(UnOp::ALL.to_vec());
    let width = prop::sample::select(Width::ALL.to_vec());
    prop_oneof![
        3 => (reg(), constant()).prop_map(|(dst, imm)| Inst::Imm { dst, imm }),
        2 => (reg(), reg()).prop_map(|(dst, src)| Inst::Mov { dst, src }),
        4 => (binop, ty(), reg(), reg(), reg())
            .prop_map(|(op, ty, dst, a, b)| Inst::Bin { op, ty, dst, a, b }),
        2 => (cmpop, ty(), reg(), reg(), reg())
            .prop_map(|(op, ty, dst, a, b)| Inst::Cmp { op, ty, dst, a, b }),
        1 => (unop, ty(), reg(), reg()).prop_map(|(op, ty, dst, a)| Inst::Un { op, ty, dst, a }),
        1 => (ty(), ty(), reg(), reg())
            .prop_map(|(to, from, dst, src)| Inst::Conv { to, from, dst, src }),
        1 => (reg(), 0..2usize, 0..24u32).prop_map(|(dst, g, offset)| Inst::GlobalAddr {
            dst,
            global: GlobalId::new(g),
            offset,
        }),
        1 => (width.clone(), reg(), reg()).prop_map(|(w, dst, addr)| Inst::Load { w, dst, addr }),
        1 => (width, reg(), reg()).prop_map(|(w, addr, src)| Inst::Store { w, addr, src }),
    ]
}

fn term(i: usize) -> impl Strategy<Value = Term> {
    // Mostly forward; a branch's false edge and some jumps may go back (loops).
    let forward = ((i + 1).min(NBLOCKS - 1)..NBLOCKS).prop_map(blk);
    let any_block = (0..NBLOCKS).prop_map(blk);
    prop_oneof![
        1 => prop::option::of(reg()).prop_map(Term::Ret),
        2 => forward.clone().prop_map(Term::Jump),
        1 => any_block.clone().prop_map(Term::Jump),
        3 => (reg(), forward, any_block).prop_map(|(cond, then, otherwise)| Term::Branch {
            cond,
            then,
            otherwise,
        }),
    ]
    .prop_map(move |t| if i + 1 == NBLOCKS { Term::Ret(None) } else { t })
}

/// The blocks of a random function (two parameters, [`NREGS`] registers).
type Blocks = Vec<(Vec<Inst>, Term)>;

fn function() -> impl Strategy<Value = Blocks> {
    let block = |i: usize| (prop::collection::vec(inst(), 0..8), term(i));
    (block(0), block(1), block(2), block(3), block(4))
        .prop_map(|(b0, b1, b2, b3, b4)| vec![b0, b1, b2, b3, b4])
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 5000,
        max_global_rejects: 100_000,
        ..ProptestConfig::default()
    })]

    #[test]
    fn optimised_functions_compute_the_same(blocks in function(), a in constant(), b in constant()) {
        let f = func(2, NREGS as u32, blocks.clone());
        let before = interpret(&f, &[a, b], FUEL);
        prop_assume!(before != Err(Stop::OutOfFuel));
        let mut g = func(2, NREGS as u32, blocks);
        optimize_function(&mut g);
        let after = interpret(&g, &[a, b], FUEL * 4);
        prop_assert_eq!(before, after, "before:\n{}\nafter:\n{}", show(&f), show(&g));
    }
}

/// `a[i]` and `a[i + k]` in one block: the second index reuses the first product.
fn scaled_pair(ty: NumTy, scale: u32, k: u32) -> Function {
    func(
        1,
        7,
        vec![(
            vec![
                imm(1, scale),
                bin(BinOp::Mul, ty, 2, 0, 1),
                imm(3, k),
                bin(BinOp::Add, ty, 4, 0, 3),
                bin(BinOp::Mul, ty, 5, 4, 1),
                bin(BinOp::Xor, NumTy::U32, 6, 5, 2),
            ],
            Term::Ret(Some(v(6))),
        )],
    )
}

#[test]
fn scaled_offsets_reuse_the_product() {
    let out = opt(scaled_pair(NumTy::U16, 4, 1));
    assert!(
        out.contains("BinImm { op: Add, ty: U16, dst: v5, a: v2, imm: Const(4) }"),
        "{out}"
    );
}

proptest! {
    #[test]
    fn scaled_offsets_compute_the_same(
        ty in prop::sample::select(vec![NumTy::I8, NumTy::U8, NumTy::I16, NumTy::U16, NumTy::I32, NumTy::U32]),
        scale in constant(),
        k in constant(),
        x in constant(),
    ) {
        let f = scaled_pair(ty, scale, k);
        let mut g = scaled_pair(ty, scale, k);
        optimize_function(&mut g);
        prop_assert_eq!(interpret(&f, &[x], FUEL), interpret(&g, &[x], FUEL), "{}", show(&g));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    /// Programs that share function bodies (as program classes do) get from the memo
    /// exactly what optimising each function alone gives, and each distinct body is
    /// optimised once.
    #[test]
    fn the_memo_gives_what_optimising_each_function_gives(
        a in function(),
        b in function(),
        picks in prop::collection::vec(prop::bool::ANY, 1..6),
    ) {
        let mut memo = super::Memo::default();
        for (class, &first) in picks.iter().enumerate() {
            let mut prog = crate::ir::Program::default();
            // Each class holds `a` or `b`, then the other one, then `a` again.
            let (x, y) = if first { (&a, &b) } else { (&b, &a) };
            for blocks in [x, y, &a] {
                prog.functions.push(func(2, NREGS as u32, blocks.clone()));
            }
            memo.optimize(&mut prog);
            for (f, blocks) in prog.functions.values().zip([x, y, &a]) {
                let mut alone = func(2, NREGS as u32, blocks.clone());
                optimize_function(&mut alone);
                prop_assert!(*f == alone, "class {class}:\n{}\nalone:\n{}", show(f), show(&alone));
            }
        }
        let distinct = if a == b { 1 } else { 2 };
        prop_assert_eq!(memo.len(), distinct);
    }
}
