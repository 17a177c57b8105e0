//! Interpreter throughput smoke test (ignored by default; run with
//! `cargo test --release -p cslsim --test throughput -- --ignored --nocapture`).

mod common;
use common::{Asm, image};
use csl_arch::isa::{BinOp, CmpOp, NumTy, Op, Reg, Width};
use cslsim::Simulator;

/// Runs a scalar loop on 1, 100 and 10 000 PEs and prints simulated PE-cycles per second.
#[test]
#[ignore = "timing; run in release mode"]
fn throughput() {
    for (w, h) in [(1u32, 1u32), (10, 10), (100, 100)] {
        let mut a = Asm::new("t");
        let f = a.func("main", 6, 0, 0);
        a.imm(0, 0);
        a.imm(1, 1);
        a.imm(2, 2_000_000 / (w * h));
        a.imm(4, 0x100);
        let head = a.op(Op::Cmp {
            op: CmpOp::Lt,
            ty: NumTy::U32,
            dst: Reg(3),
            a: Reg(0),
            b: Reg(2),
        });
        let br = a.op(Op::BrFalse {
            cond: Reg(3),
            target: 0,
        });
        a.bin(BinOp::Add, NumTy::U32, 0, 0, 1);
        a.bin(BinOp::Mul, NumTy::F32, 5, 0, 1);
        a.store(Width::W32, 4, 5);
        a.op(Op::Jump { target: head });
        let end = a.here();
        a.patch(br, end);
        a.ret_void();
        a.task(0, f, true, false);
        let img = image(w, h, vec![a.build()], vec![0; (w * h) as usize], vec![]);
        let mut sim = Simulator::new(&img).unwrap();
        let t = std::time::Instant::now();
        sim.run_until_idle(u64::MAX).unwrap();
        let dt = t.elapsed().as_secs_f64();
        let pec: u64 = sim.stats().pes.iter().map(|p| p.busy_cycles).sum();
        eprintln!(
            "{w}x{h}: {} cycles, {pec} PE-cycles in {dt:.3}s = {:.1} M PE-cycles/s",
            sim.cycle(),
            pec as f64 / dt / 1e6
        );
    }
}
