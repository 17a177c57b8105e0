//! The timing model's cost parameters (`SimParams`: branches, DSD setup, `@fmacs` rate),
//! one micro-kernel each: the simulated cycles follow the parameter exactly, and the
//! `measured` preset gives the WSE-3 figures SIMULATOR.md §2 cites.

mod common;

use common::{Asm, Dsd, X, single};
use csl_arch::dsd::DsdOpcode;
use csl_arch::isa::{BinOp, NumTy, Op, Reg};
use cslsim::{SimParams, Simulator, Timing};

/// Cycles until the fabric is idle for a one-PE image whose task 0 runs `body`.
fn cycles(params: SimParams, body: impl FnOnce(&mut Asm)) -> u64 {
    let mut a = Asm::new("t");
    let f = a.func("main", 16, 0, 0);
    body(&mut a);
    a.ret_void();
    a.task(0, f, true, false);
    let img = single(a.build());
    let mut sim = Simulator::with_params(&img, params).expect("load");
    sim.run_until_idle(1_000_000).expect("run");
    sim.cycle()
}

/// A countdown loop of `k` iterations: `r0 = k; r1 = 1; loop: r0 -= r1; br r0 != 0, loop`.
/// It runs k - 1 taken branches and one that falls through.
fn countdown(params: SimParams, k: u32) -> u64 {
    cycles(params, |a| {
        a.imm(0, k);
        a.imm(1, 1);
        let head = a.here();
        a.bin(BinOp::Sub, NumTy::U32, 0, 0, 1);
        a.op(Op::BrTrue {
            cond: Reg(0),
            target: head,
        });
    })
}

#[test]
fn branches_cost_their_parameters() {
    let k = 10u64;
    for (taken, fall) in [(1, 1), (6, 3), (2, 5)] {
        let p = SimParams {
            branch_taken_cycles: taken,
            branch_not_taken_cycles: fall,
            ..SimParams::default()
        };
        // Picking the task, two immediates, k subtractions, the branches, the return.
        let want = 1 + 2 + k + (k - 1) * u64::from(taken) + u64::from(fall) + 1;
        assert_eq!(
            countdown(p, k as u32),
            want,
            "taken {taken}, not taken {fall}"
        );
    }
    // A jump is a taken branch.
    let jump = |taken: u32| {
        let p = SimParams {
            branch_taken_cycles: taken,
            ..SimParams::default()
        };
        cycles(p, |a| {
            let next = a.here() + 1;
            a.op(Op::Jump { target: next });
        })
    };
    assert_eq!(jump(6) - jump(1), 5);
}

/// `fmacs` over `n` elements: dst = a + b * c with three 1-D memory vectors.
fn fmacs(params: SimParams, n: u16) -> u64 {
    cycles(params, |a| {
        a.mem1d(0x40, 0x400, n, 1);
        a.mem1d(0x50, 0x600, n, 1);
        a.mem1d(0x60, 0x800, n, 1);
        a.mem1d(0x70, 0xa00, n, 1);
        a.dsd(
            DsdOpcode::Fmacs,
            X::D(0x40),
            &[X::D(0x50), X::D(0x60), X::D(0x70)],
        );
    })
}

#[test]
fn fmacs_takes_its_cycles_per_element_and_the_setup() {
    for per in [1u32, 2, 3] {
        for setup in [0u32, 3, 15] {
            let p = SimParams {
                fmacs_cycles_per_element: per,
                dsd_setup_cycles: setup,
                ..SimParams::default()
            };
            // Eight more elements cost eight times the per-element cycles.
            assert_eq!(
                fmacs(p, 16) - fmacs(p, 8),
                8 * u64::from(per),
                "{per} cycles per element, setup {setup}"
            );
            // The setup is paid once per operation.
            let base = SimParams {
                dsd_setup_cycles: 0,
                ..p
            };
            assert_eq!(fmacs(p, 8) - fmacs(base, 8), u64::from(setup));
        }
    }
    // Other operations keep one element per cycle.
    let slow = SimParams {
        fmacs_cycles_per_element: 4,
        ..SimParams::default()
    };
    let fadds = |p: SimParams, n: u16| {
        cycles(p, |a| {
            a.mem1d(0x40, 0x400, n, 1);
            a.mem1d(0x50, 0x600, n, 1);
            a.mem1d(0x60, 0x800, n, 1);
            a.dsd(DsdOpcode::Fadds, X::D(0x40), &[X::D(0x50), X::D(0x60)]);
        })
    };
    assert_eq!(fadds(slow, 16) - fadds(slow, 8), 8);
}

#[test]
fn the_measured_preset_is_the_wse3_figures() {
    let m = SimParams::measured();
    assert_eq!(
        (
            m.branch_taken_cycles,
            m.branch_not_taken_cycles,
            m.dsd_setup_cycles,
            m.fmacs_cycles_per_element
        ),
        (6, 3, 15, 2)
    );
    assert_eq!(m.check(), Ok(()));
    assert_eq!(Timing::parse("measured"), Ok(Timing::Measured));
    assert_eq!(
        Timing::parse("simple").map(Timing::params),
        Ok(SimParams::default())
    );
    assert!(
        Timing::parse("fast")
            .unwrap_err()
            .contains("`simple` or `measured`")
    );
    // A 10-iteration countdown: 3 + 9 * 6 + 10 + 3 + 1 cycles; a 64-element fmacs: 15
    // cycles of setup, 128 of elements.
    assert_eq!(countdown(m, 10), 1 + 2 + 10 + 9 * 6 + 3 + 1);
    let simple = SimParams::default();
    assert_eq!(fmacs(m, 64) - fmacs(simple, 64), (15 - 3) + 64);
    // Out-of-range values are named.
    let bad = SimParams {
        branch_taken_cycles: 0,
        ..m
    };
    assert!(bad.check().unwrap_err().contains("branch_taken_cycles"));
}

#[test]
fn cslsim_rejects_an_unknown_timing_model() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cslsim"))
        .args(["--timing", "fast", "no-such-image.elf"])
        .output()
        .expect("run cslsim");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`simple` or `measured`"), "{err}");
}

/// Synchronous memory DSD operations run ahead (several elements in one visit, then the PE
/// stalls for them): the run is the same as one that steps every element in its own cycle.
/// The program mixes an asynchronous copy on a microthread (no running ahead while it
/// runs), a `fmacs` whose destination overlaps its source, one with `save_address`, a
/// `mem4d` reduction into a pointer, and a last operation that faults half-way through
/// (past the end of memory): cycles, statistics, memory and the fault must agree.
#[test]
fn running_ahead_changes_nothing() {
    use csl_arch::dsd::flags;
    let run = |ahead: bool, params: SimParams| {
        let mut a = Asm::new("t");
        let f = a.func("main", 16, 0, 0);
        let floats: Vec<u8> = (0..64u32)
            .flat_map(|i| (i as f32 * 0.25 + 1.0).to_bits().to_le_bytes())
            .collect();
        a.poke(0x400, &floats);
        a.poke(0x600, &floats);
        a.mem1d(0x40, 0x800, 40, 1);
        a.mem1d(0x50, 0x400, 40, 1);
        a.dsd_with(DsdOpcode::Mov32, X::D(0x40), &[X::D(0x50)], Dsd::on_ut(2));
        // y[0..30] = y[1..31] + x * 1.5 (overlapping source and destination).
        a.mem1d(0x60, 0x600, 30, 1);
        a.mem1d(0x70, 0x604, 30, 1);
        a.dsd(
            DsdOpcode::Fmacs,
            X::D(0x60),
            &[X::D(0x70), X::D(0x50), X::S(1.5f32.to_bits())],
        );
        a.mem1d_flags(0x80, 0xa00, 17, 2, flags::SAVE_ADDRESS);
        a.dsd(DsdOpcode::Mov32, X::D(0x80), &[X::D(0x50)]);
        a.dsd(DsdOpcode::Mov32, X::D(0x80), &[X::S(7)]);
        a.mem4d(0x90, 0x400, &[4, 5], &[2, 1]);
        a.dsd(DsdOpcode::Fadds, X::P(0xc00), &[X::P(0xc00), X::D(0x90)]);
        a.mem1d(0xb0, (PE_END - 40) as u16, 20, 1);
        a.dsd(DsdOpcode::Mov32, X::D(0xb0), &[X::D(0x50)]);
        a.ret_void();
        a.task(0, f, true, false);
        let img = single(a.build());
        let mut sim = Simulator::with_params(&img, params).expect("load");
        sim.set_run_ahead(ahead);
        let err = sim
            .run_until_idle(1_000_000)
            .expect_err("faults")
            .to_string();
        let s = sim.stats();
        let pe = &s.pes[0];
        (
            err,
            sim.cycle(),
            (
                pe.busy_cycles,
                pe.stalled_cycles,
                pe.instructions,
                pe.dsd_elements,
            ),
            sim.pe(0, 0).expect("pe").memory().to_vec(),
        )
    };
    for params in [SimParams::default(), SimParams::measured()] {
        let (on, off) = (run(true, params), run(false, params));
        assert!(on.0.contains("outside the PE's"), "{}", on.0);
        assert!(on.2.3 > 100, "the operations ran: {:?}", on.2);
        assert_eq!((&on.0, on.1, on.2), (&off.0, off.1, off.2));
        assert!(on.3 == off.3, "the memories differ");
    }
}

/// Instructions without a fast form that touch only registers (16-bit integer operations
/// and compares, conversions, `FrameAddr`), calls and descriptor field sets run ahead too
/// (`exec::slow_ahead`): in a loop of them with a DSD operation that reads the descriptor
/// they set, ending in a 16-bit division by zero, cycles, statistics, memory and the fault
/// are those of a run without running ahead.
#[test]
fn running_ahead_over_16_bit_operations_calls_and_descriptor_sets_changes_nothing() {
    use csl_arch::dsd::DsdField;
    use csl_arch::isa::{CmpOp, Width};
    let u16op = |op, dst, a, imm| Op::BinImm {
        op,
        ty: NumTy::U16,
        dst: Reg(dst),
        a: Reg(a),
        imm,
    };
    let run = |ahead: bool| {
        let mut a = Asm::new("t");
        // triple(x) = 3 * x (16 bits), with a frame.
        let triple = a.func("triple", 4, 1, 8);
        a.op(u16op(BinOp::Mul, 1, 0, 3));
        a.op(Op::FrameAddr {
            dst: Reg(2),
            off: 4,
        });
        a.op(Op::Ret { src: Reg(1) });
        let f = a.func("main", 16, 0, 8);
        a.mem1d(0x40, 0x800, 1, 1);
        a.mem1d(0x50, 0x400, 64, 1);
        a.imm(0, 0xfff0); // i
        a.imm(9, 0x40);
        a.imm(10, 0xa00); // where the results go
        a.imm(11, 0); // iterations
        let top = a.here();
        a.op(u16op(BinOp::Add, 11, 11, 1));
        a.op(u16op(BinOp::Add, 0, 0, 3)); // wraps at 16 bits
        a.call(triple, 0, 1, 1);
        a.bin(BinOp::Mul, NumTy::U16, 2, 1, 0);
        a.op(Op::Conv {
            to: NumTy::F32,
            from: NumTy::U16,
            dst: Reg(3),
            src: Reg(2),
        });
        a.op(Op::FrameAddr {
            dst: Reg(4),
            off: 2,
        });
        a.op(u16op(BinOp::And, 5, 0, 15));
        a.op(u16op(BinOp::Add, 5, 5, 1));
        a.op(Op::DsdSet {
            field: DsdField::Length,
            desc: Reg(9),
            val: Reg(5),
        });
        a.op(Op::DsdSet {
            field: DsdField::AddBase,
            desc: Reg(9),
            val: Reg(5),
        });
        a.dsd(DsdOpcode::Mov32, X::D(0x40), &[X::D(0x50)]);
        a.store(Width::W32, 10, 3);
        a.op(u16op(BinOp::Add, 10, 10, 4));
        a.store(Width::W16, 10, 4);
        a.op(u16op(BinOp::Add, 10, 10, 2));
        a.op(Op::CmpImm {
            op: CmpOp::Gt,
            ty: NumTy::U16,
            dst: Reg(6),
            a: Reg(11),
            imm: 30,
        });
        let br = a.op(Op::BrFalse {
            cond: Reg(6),
            target: 0,
        });
        a.patch(br, top);
        a.imm(7, 0);
        a.bin(BinOp::Div, NumTy::U16, 8, 0, 7);
        a.ret_void();
        a.task(0, f, true, false);
        let img = single(a.build());
        let mut sim = Simulator::with_params(&img, SimParams::default()).expect("load");
        sim.set_run_ahead(ahead);
        let err = sim
            .run_until_idle(1_000_000)
            .expect_err("faults")
            .to_string();
        let s = sim.stats();
        let pe = &s.pes[0];
        (
            err,
            sim.cycle(),
            (pe.busy_cycles, pe.stalled_cycles, pe.instructions),
            sim.pe(0, 0).expect("pe").memory().to_vec(),
        )
    };
    let (on, off) = (run(true), run(false));
    assert!(on.0.contains("division by zero"), "{}", on.0);
    assert!(on.2.2 > 500, "the loop ran: {:?}", on.2);
    assert_eq!((&on.0, on.1, on.2), (&off.0, off.1, off.2));
    assert!(on.3 == off.3, "the memories differ");
    assert_ne!(on.3[0xa00..0xa80], [0u8; 0x80], "results were stored");
}

/// The end of PE memory.
const PE_END: u32 = csl_arch::fabric::PE_MEMORY_BYTES;

/// Loads of the coordinate registers (`ROW_ID`, `COL_ID`; also through an offset), stores
/// to the task priorities and task activations run ahead too (`exec::slow_ahead`): a task
/// that reads its coordinates, gives task 21 high priority through an offset store, and
/// activates tasks 20 and 21, which log their ids in the order the picker starts them,
/// runs in the same cycles, with the same statistics and memory, with and without running
/// ahead; the priority decides that order (21 before 20) and the coordinates land in
/// memory.
#[test]
fn running_ahead_over_coordinates_priorities_and_activations_changes_nothing() {
    use csl_arch::fabric::mmio;
    use csl_arch::isa::Width;
    const LOG: u32 = 0xa00;
    let run = |ahead: bool| {
        let mut a = Asm::new("t");
        // Each logging task appends its id: n = mem[LOG]; mem[LOG + 4 + 4n] = id; n += 1.
        let logger = |a: &mut Asm, name: &str, id: u32| {
            let f = a.func(name, 8, 0, 0);
            a.imm(0, LOG);
            a.load(Width::W32, 1, 0);
            a.imm(2, 4);
            a.bin(BinOp::Mul, NumTy::U32, 3, 1, 2);
            a.bin(BinOp::Add, NumTy::U32, 3, 3, 0);
            a.bin(BinOp::Add, NumTy::U32, 3, 3, 2);
            a.imm(4, id);
            a.store(Width::W32, 3, 4);
            a.imm(5, 1);
            a.bin(BinOp::Add, NumTy::U32, 1, 1, 5);
            a.store(Width::W32, 0, 1);
            a.ret_void();
            f
        };
        let t20 = logger(&mut a, "t20", 20);
        let t21 = logger(&mut a, "t21", 21);
        let f = a.func("main", 16, 0, 0);
        a.imm(0, mmio::TASK_PRIORITY);
        a.imm(1, 1 << (21 - 16));
        a.op(Op::StoreOff {
            w: Width::W16,
            addr: Reg(0),
            off: 2,
            src: Reg(1),
        });
        a.imm(2, mmio::ROW_ID);
        a.load(Width::W16, 3, 2);
        a.op(Op::LoadOff {
            w: Width::W16,
            dst: Reg(4),
            addr: Reg(2),
            off: 2,
        });
        a.store_at(Width::W32, 0x900, 3, 5);
        a.store_at(Width::W32, 0x904, 4, 5);
        a.activate(20, 6);
        a.activate(21, 6);
        // Some arithmetic after the activations.
        a.imm(7, 3);
        a.bin(BinOp::Mul, NumTy::U32, 7, 7, 7);
        a.bin(BinOp::Add, NumTy::U32, 7, 7, 3);
        a.store_at(Width::W32, 0x908, 7, 5);
        a.ret_void();
        a.task(0, f, true, false);
        a.task(20, t20, false, false);
        a.task(21, t21, false, false);
        let img = single(a.build());
        let mut sim = Simulator::with_params(&img, SimParams::default()).expect("load");
        sim.set_run_ahead(ahead);
        sim.run_until_idle(1_000_000).expect("run");
        let s = sim.stats();
        let pe = &s.pes[0];
        let mem = sim.pe(0, 0).expect("pe").memory().to_vec();
        (
            sim.cycle(),
            (pe.busy_cycles, pe.stalled_cycles, pe.instructions),
            mem,
        )
    };
    let (on, off) = (run(true), run(false));
    assert_eq!((on.0, on.1), (off.0, off.1));
    assert!(on.2 == off.2, "the memories differ");
    let word = |at: usize| common::read32(&on.2, at);
    let loc = Simulator::new(&single(Asm::new("u").build()))
        .expect("load")
        .pe(0, 0)
        .expect("pe")
        .loc();
    assert_eq!((word(0x900), word(0x904)), (loc.abs.y, loc.abs.x));
    assert_eq!(
        (word(0xa00), word(0xa04), word(0xa08)),
        (2, 21, 20),
        "task 21 has priority"
    );
}
