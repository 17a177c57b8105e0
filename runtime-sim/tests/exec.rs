//! Interpreter semantics, calls, frames, memory-mapped registers and the task picker, on
//! hand-built single-class images.

mod common;

use common::{Asm, image, read16, read32, single};
use csl_arch::fabric::{PE_MEMORY_BYTES, mmio};
use csl_arch::image::ImageError;
use csl_arch::isa::{BinOp, CmpOp, NumTy, Op, Reg, UnOp, Width};
use cslsim::Simulator;

/// Runs the image until idle and returns the simulator.
fn run(img: &csl_arch::image::Image) -> Simulator {
    let mut sim = Simulator::new(img).expect("load");
    sim.run_until_idle(1_000_000).expect("run");
    sim
}

/// Builds a class whose function 0 (`main`, `nregs` registers) is task 0, initially active.
fn with_main(nregs: u16, body: impl FnOnce(&mut Asm)) -> csl_arch::image::Image {
    let mut a = Asm::new("t");
    let f = a.func("main", nregs, 0, 0);
    body(&mut a);
    a.ret_void();
    a.task(0, f, true, false);
    single(a.build())
}

fn mem(sim: &Simulator) -> &[u8] {
    sim.pe(0, 0).expect("pe").memory()
}

fn f32b(x: f32) -> u32 {
    x.to_bits()
}

#[test]
fn arithmetic_semantics() {
    use NumTy::*;
    // (op, ty, a, b, expected)
    let cases: Vec<(BinOp, NumTy, u32, u32, u32)> = vec![
        (BinOp::Add, I16, 0x7fff, 1, 0x8000),
        (BinOp::Sub, I16, 0, 1, 0xffff),
        (BinOp::Mul, I16, 300, 300, (300u32 * 300) & 0xffff),
        (BinOp::Shr, I16, 0xfff8, 1, 0xfffc),
        (BinOp::Shr, U16, 0xfff8, 1, 0x7ffc),
        (BinOp::Shl, I16, 1, 17, 2),
        (BinOp::Div, I8, 0x80, 0xff, 0x80),
        (BinOp::Div, I32, (-7i32) as u32, 2, (-3i32) as u32),
        (BinOp::Rem, I32, (-7i32) as u32, 2, (-1i32) as u32),
        (BinOp::Xor, U32, 0xf0f0, 0xff00, 0x0ff0),
        (BinOp::Add, F32, f32b(1.5), f32b(2.25), f32b(3.75)),
        (BinOp::Div, F32, f32b(1.0), f32b(4.0), f32b(0.25)),
    ];
    let img = with_main(4, |a| {
        for (n, &(op, ty, x, y, _)) in cases.iter().enumerate() {
            a.imm(0, x);
            a.imm(1, y);
            a.bin(op, ty, 2, 0, 1);
            a.store_at(Width::W32, 0x100 + 4 * n as u32, 2, 3);
        }
    });
    let sim = run(&img);
    for (n, &(op, ty, x, y, want)) in cases.iter().enumerate() {
        let got = read32(mem(&sim), 0x100 + 4 * n);
        assert_eq!(got, want, "{op:?} {ty:?} {x:#x} {y:#x}");
    }
}

#[test]
fn comparisons_unary_and_conversions() {
    use NumTy::*;
    let ops: Vec<(Op, u32, u32)> = vec![
        // (op computing r2 from r0 (and r1), r0, expected) with r1 = 1
        (
            Op::Cmp {
                op: CmpOp::Lt,
                ty: I16,
                dst: Reg(2),
                a: Reg(0),
                b: Reg(1),
            },
            0xffff,
            1,
        ),
        (
            Op::Cmp {
                op: CmpOp::Lt,
                ty: U16,
                dst: Reg(2),
                a: Reg(0),
                b: Reg(1),
            },
            0xffff,
            0,
        ),
        (
            Op::Un {
                op: UnOp::Neg,
                ty: I32,
                dst: Reg(2),
                a: Reg(0),
            },
            5,
            (-5i32) as u32,
        ),
        (
            Op::Un {
                op: UnOp::Neg,
                ty: I8,
                dst: Reg(2),
                a: Reg(0),
            },
            1,
            0xff,
        ),
        (
            Op::Un {
                op: UnOp::Not,
                ty: U16,
                dst: Reg(2),
                a: Reg(0),
            },
            0x00ff,
            0xff00,
        ),
        (
            Op::Un {
                op: UnOp::LNot,
                ty: Bool,
                dst: Reg(2),
                a: Reg(0),
            },
            0,
            1,
        ),
        (
            Op::Conv {
                to: I16,
                from: F32,
                dst: Reg(2),
                src: Reg(0),
            },
            f32b(1e6),
            0x7fff,
        ),
        (
            Op::Conv {
                to: I16,
                from: F32,
                dst: Reg(2),
                src: Reg(0),
            },
            f32b(-2.7),
            0xfffe,
        ),
        (
            Op::Conv {
                to: U32,
                from: F32,
                dst: Reg(2),
                src: Reg(0),
            },
            f32b(-1.0),
            0,
        ),
        (
            Op::Conv {
                to: I32,
                from: F32,
                dst: Reg(2),
                src: Reg(0),
            },
            f32b(f32::NAN),
            0,
        ),
        (
            Op::Conv {
                to: Bool,
                from: F32,
                dst: Reg(2),
                src: Reg(0),
            },
            f32b(f32::NAN),
            1,
        ),
        (
            Op::Conv {
                to: F32,
                from: I16,
                dst: Reg(2),
                src: Reg(0),
            },
            0xffff,
            f32b(-1.0),
        ),
        (
            Op::Conv {
                to: I32,
                from: I16,
                dst: Reg(2),
                src: Reg(0),
            },
            0x8000,
            0xffff_8000,
        ),
        (
            Op::Conv {
                to: U8,
                from: I32,
                dst: Reg(2),
                src: Reg(0),
            },
            0x1ff,
            0xff,
        ),
        (
            Op::Conv {
                to: F16,
                from: F32,
                dst: Reg(2),
                src: Reg(0),
            },
            f32b(-2.0),
            0xc000,
        ),
        (
            Op::Conv {
                to: F32,
                from: F16,
                dst: Reg(2),
                src: Reg(0),
            },
            0x3800,
            f32b(0.5),
        ),
    ];
    let img = with_main(4, |a| {
        a.imm(1, 1);
        for (n, &(op, x, _)) in ops.iter().enumerate() {
            a.imm(0, x);
            a.op(op);
            a.store_at(Width::W32, 0x100 + 4 * n as u32, 2, 3);
        }
    });
    let sim = run(&img);
    for (n, &(op, x, want)) in ops.iter().enumerate() {
        assert_eq!(
            read32(mem(&sim), 0x100 + 4 * n),
            want,
            "{op} with r0={x:#x}"
        );
    }
}

#[test]
fn loads_and_stores_are_little_endian_byte_addressed() {
    let mut a = Asm::new("t");
    let f = a.func("main", 4, 0, 0);
    a.poke(0x40, &[0xde, 0xad]);
    a.imm(0, 0x11223344);
    a.store_at(Width::W32, 0x200, 0, 3);
    a.imm(3, 0x201);
    a.load(Width::W8, 1, 3);
    a.store_at(Width::W32, 0x210, 1, 3);
    a.imm(3, 0x202);
    a.load(Width::W16, 1, 3);
    a.store_at(Width::W32, 0x214, 1, 3);
    a.imm(0, 0x1ab);
    a.store_at(Width::W8, 0x203, 0, 3);
    a.imm(3, 0x200);
    a.load(Width::W32, 1, 3);
    a.store_at(Width::W32, 0x218, 1, 3);
    a.imm(3, 0x40);
    a.load(Width::W16, 1, 3);
    a.store_at(Width::W16, 0x21c, 1, 3);
    // The last byte of memory is addressable.
    a.imm(0, 0x5a);
    a.store_at(Width::W8, PE_MEMORY_BYTES - 1, 0, 3);
    a.ret_void();
    a.task(0, f, true, false);
    let sim = run(&single(a.build()));
    let m = mem(&sim);
    assert_eq!(read32(m, 0x210), 0x33);
    assert_eq!(read32(m, 0x214), 0x1122);
    assert_eq!(read32(m, 0x218), 0xab223344);
    assert_eq!(read16(m, 0x21c), 0xadde);
    assert_eq!(m[PE_MEMORY_BYTES as usize - 1], 0x5a);
}

#[test]
fn calls_pass_arguments_and_return_values() {
    let mut a = Asm::new("t");
    // fn add3(a, b, c) -> a + b + c
    let add3 = a.func("add3", 4, 3, 0);
    a.bin(BinOp::Add, NumTy::U32, 3, 0, 1);
    a.bin(BinOp::Add, NumTy::U32, 3, 3, 2);
    a.op(Op::Ret { src: Reg(3) });
    // fn fact(n) -> n <= 1 ? 1 : n * fact(n - 1)
    let fact = a.func("fact", 4, 1, 0);
    a.imm(1, 1);
    a.op(Op::Cmp {
        op: CmpOp::Le,
        ty: NumTy::U32,
        dst: Reg(2),
        a: Reg(0),
        b: Reg(1),
    });
    let br = a.op(Op::BrFalse {
        cond: Reg(2),
        target: 0,
    });
    a.op(Op::Ret { src: Reg(1) });
    let rec = a.here();
    a.patch(br, rec);
    a.bin(BinOp::Sub, NumTy::U32, 3, 0, 1);
    a.call(fact, 3, 1, 3);
    a.bin(BinOp::Mul, NumTy::U32, 3, 3, 0);
    a.op(Op::Ret { src: Reg(3) });
    let main = a.func("main", 8, 0, 0);
    a.imm(0, 10);
    a.imm(1, 20);
    a.imm(2, 30);
    a.call(add3, 0, 3, 5);
    a.store_at(Width::W32, 0x100, 5, 7);
    a.imm(4, 5);
    a.call(fact, 4, 1, 5);
    a.store_at(Width::W32, 0x104, 5, 7);
    // Indirect call through a function index; caller registers survive the call.
    a.imm(6, add3);
    a.op(Op::CallInd {
        fptr: Reg(6),
        args: Reg(0),
        nargs: 3,
        dst: Reg(5),
    });
    a.store_at(Width::W32, 0x108, 5, 7);
    a.store_at(Width::W32, 0x10c, 2, 7);
    a.ret_void();
    a.task(0, main, true, false);
    let sim = run(&single(a.build()));
    assert_eq!(read32(mem(&sim), 0x100), 60);
    assert_eq!(read32(mem(&sim), 0x104), 120);
    assert_eq!(read32(mem(&sim), 0x108), 60);
    assert_eq!(read32(mem(&sim), 0x10c), 30);
}

#[test]
fn frame_addresses_follow_the_stack() {
    let mut a = Asm::new("t");
    let inner = a.func("inner", 3, 0, 8);
    a.op(Op::FrameAddr {
        dst: Reg(0),
        off: 0,
    });
    a.imm(1, 0xbbbb);
    a.store(Width::W16, 0, 1);
    a.op(Op::Ret { src: Reg(0) });
    let main = a.func("main", 4, 0, 16);
    a.op(Op::FrameAddr {
        dst: Reg(0),
        off: 4,
    });
    a.imm(1, 0xaaaa);
    a.store(Width::W16, 0, 1);
    a.call(inner, 0, 0, 2);
    a.store_at(Width::W32, 0x100, 0, 3);
    a.store_at(Width::W32, 0x104, 2, 3);
    a.ret_void();
    a.task(0, main, true, false);
    let sim = run(&single(a.build()));
    let m = mem(&sim);
    let main_sp = PE_MEMORY_BYTES - 16;
    let inner_sp = main_sp - 8;
    assert_eq!(read32(m, 0x100), main_sp + 4);
    assert_eq!(read32(m, 0x104), inner_sp);
    assert_eq!(read16(m, (main_sp + 4) as usize), 0xaaaa);
    assert_eq!(read16(m, inner_sp as usize), 0xbbbb);
}

#[test]
fn memory_mapped_registers() {
    let mut a = Asm::new("t");
    let main = a.func("main", 4, 0, 0);
    a.imm(0, mmio::TSC); // cycle 1 (cycle 0 picks the task)
    a.load(Width::W16, 1, 0); // cycle 2
    a.store_at(Width::W32, 0x100, 1, 3);
    a.imm(0, mmio::TSC + 2);
    a.load(Width::W16, 1, 0);
    a.store_at(Width::W32, 0x104, 1, 3);
    a.imm(0, mmio::ROW_ID);
    a.load(Width::W16, 1, 0);
    a.store_at(Width::W32, 0x108, 1, 3);
    a.imm(0, mmio::COL_ID);
    a.load(Width::W16, 1, 0);
    a.store_at(Width::W32, 0x10c, 1, 3);
    a.ret_void();
    a.task(0, main, true, false);
    let class = a.build();
    // Two PEs at fabric offset (4, 1): PE(1,0) is fabric column 5, row 1.
    let img = image(2, 1, vec![class], vec![0, 0], vec![]);
    let sim = run(&img);
    let m = sim.pe(1, 0).expect("pe").memory();
    assert_eq!(read32(m, 0x100), 2);
    assert_eq!(read32(m, 0x104), 0);
    assert_eq!(read32(m, 0x108), 1);
    assert_eq!(read32(m, 0x10c), 5);
    assert_eq!(read32(sim.pe(0, 0).expect("pe").memory(), 0x10c), 4);
}

#[test]
fn clock_and_counters_are_exact() {
    // Picking the task takes cycle 0; its three instructions take cycles 1..=3.
    let img = with_main(1, |a| {
        a.imm(0, 1);
        a.op(Op::Nop {});
    });
    let sim = run(&img);
    assert_eq!(sim.cycle(), 4);
    let st = sim.stats();
    assert_eq!(st.instructions, 3);
    assert_eq!(st.pes[0].busy_cycles, 4);
    assert_eq!(st.pes[0].tasks_started, 1);
}

/// Appends to a log in memory: `log[count++] = r0` (count at 0x100, log at 0x200).
fn log_fn(a: &mut Asm) -> u32 {
    let f = a.func("log", 5, 1, 0);
    a.imm(1, 0x100);
    a.load(Width::W16, 2, 1); // count
    a.imm(3, 2);
    a.bin(BinOp::Mul, NumTy::U16, 4, 2, 3);
    a.imm(3, 0x200);
    a.bin(BinOp::Add, NumTy::U16, 4, 4, 3);
    a.store(Width::W16, 4, 0);
    a.imm(3, 1);
    a.bin(BinOp::Add, NumTy::U16, 2, 2, 3);
    a.store(Width::W16, 1, 2);
    a.ret_void();
    f
}

#[test]
fn task_picker_takes_runnable_ids_in_turn() {
    let mut a = Asm::new("t");
    let log = log_fn(&mut a);
    // Task 2 logs 2 and activates task 7.
    let t2 = a.func("t2", 2, 0, 0);
    a.imm(0, 2);
    a.call(log, 0, 1, 1);
    a.activate(7, 1);
    a.ret_void();
    // Task 4 (initially blocked) logs 4.
    let t4 = a.func("t4", 2, 0, 0);
    a.imm(0, 4);
    a.call(log, 0, 1, 1);
    a.ret_void();
    // Task 6 logs 6 and unblocks task 4.
    let t6 = a.func("t6", 2, 0, 0);
    a.imm(0, 6);
    a.call(log, 0, 1, 1);
    a.imm(1, 4);
    a.op(Op::Unblock { id: Reg(1) });
    a.ret_void();
    // Task 7 logs 7 and blocks task 6 and activates it (it stays pending).
    let t7 = a.func("t7", 2, 0, 0);
    a.imm(0, 7);
    a.call(log, 0, 1, 1);
    a.imm(1, 6);
    a.op(Op::Block { id: Reg(1) });
    a.op(Op::Activate { id: Reg(1) });
    a.ret_void();
    a.task(2, t2, true, false);
    a.task(4, t4, true, true);
    a.task(6, t6, true, false);
    a.task(7, t7, false, false);
    let sim = run(&single(a.build()));
    let m = mem(&sim);
    let n = read16(m, 0x100) as usize;
    let order: Vec<u16> = (0..n).map(|i| read16(m, 0x200 + 2 * i)).collect();
    // 2 first; 4 is blocked so 6 runs and unblocks it; then 7, the next id above 6, before
    // the picker wraps around to 4.
    assert_eq!(order, vec![2, 6, 7, 4]);
    let pe = sim.pe(0, 0).expect("pe");
    assert_eq!(pe.active(), 1 << 6, "task 6 is activated but blocked");
    assert_eq!(pe.blocked(), 1 << 6);
}

#[test]
fn registers_beyond_nregs_are_rejected_at_load() {
    let mut a = Asm::new("t");
    let main = a.func("main", 2, 0, 0);
    a.imm(5, 1);
    a.ret_void();
    a.task(0, main, true, false);
    let err = Simulator::new(&single(a.build())).expect_err("must be rejected");
    assert!(matches!(err, ImageError::BadSection { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("`main` declares 2 registers but its code uses 6"),
        "{err}"
    );
}
