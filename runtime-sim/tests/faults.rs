//! Every fault kind stops the simulation with a `SimError::Fault` naming the PE, task,
//! function, pc and cycle.

mod common;

use common::{Asm, image};
use csl_arch::fabric::{PE_MEMORY_BYTES, STACK_BYTES, mmio};
use csl_arch::isa::{BinOp, NumTy, Op, Reg, TrapCode, Width};
use cslsim::{FaultKind, SimError, Simulator};

/// Runs a 2x1 rectangle where PE(1,0) runs `faulty` as task 3 and PE(0,0) is idle; returns
/// the fault and the pc of the instruction marked by `faulty`.
fn fault_of(faulty: impl FnOnce(&mut Asm) -> u32) -> (SimError, u32) {
    let idle = Asm::new("idle").build();
    let mut a = Asm::new("faulty");
    let pc = faulty(&mut a);
    let img = image(2, 1, vec![idle, a.build()], vec![0, 1], vec![]);
    let mut sim = Simulator::new(&img).expect("load");
    let err = sim.run_until_idle(100_000).expect_err("must fault");
    (err, pc)
}

/// A task body `main` (task 3, active) whose instruction returned by `body` faults.
fn task(nregs: u16, body: impl FnOnce(&mut Asm) -> u32) -> (SimError, u32) {
    fault_of(|a| {
        let f = a.func("main", nregs, 0, 0);
        let pc = body(a);
        a.ret_void();
        a.task(3, f, true, false);
        pc
    })
}

fn check(err: &SimError, want_pc: u32, want_func: &str, want: FaultKind) {
    let SimError::Fault {
        pe,
        task,
        func,
        pc,
        kind,
        ..
    } = err
    else {
        panic!("not a fault: {err}")
    };
    assert_eq!((pe.rel.x, pe.rel.y), (1, 0), "{err}");
    assert_eq!((pe.abs.x, pe.abs.y), (5, 1), "{err}");
    assert_eq!(*task, Some(3), "{err}");
    assert_eq!(func, want_func, "{err}");
    assert_eq!(*pc, want_pc, "{err}");
    assert_eq!(*kind, want, "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("PE(1,0) [fabric (5,1)]") && msg.contains("task 3"),
        "{msg}"
    );
    assert!(
        msg.contains(&format!("`{want_func}`")) && msg.contains(&format!("pc {want_pc}")),
        "{msg}"
    );
}

#[test]
fn out_of_bounds_store() {
    let (err, pc) = task(2, |a| {
        a.imm(0, PE_MEMORY_BYTES - 2);
        a.store(Width::W32, 0, 0)
    });
    check(
        &err,
        pc,
        "main",
        FaultKind::MemoryOutOfBounds {
            addr: PE_MEMORY_BYTES - 2,
            width: 4,
        },
    );
    assert!(
        err.to_string()
            .contains("outside the PE's 49152-byte memory"),
        "{err}"
    );
}

#[test]
fn out_of_bounds_load_between_memory_and_registers() {
    let (err, pc) = task(2, |a| {
        a.imm(0, PE_MEMORY_BYTES);
        a.load(Width::W8, 1, 0)
    });
    check(
        &err,
        pc,
        "main",
        FaultKind::MemoryOutOfBounds {
            addr: PE_MEMORY_BYTES,
            width: 1,
        },
    );
}

#[test]
fn unknown_memory_mapped_register() {
    // A store to a read-only register, a load from an unmapped one.
    for (addr, write) in [(mmio::ROW_ID, true), (mmio::BASE, false)] {
        let (err, pc) = task(2, |a| {
            a.imm(0, addr);
            if write {
                a.store(Width::W16, 0, 0)
            } else {
                a.load(Width::W16, 1, 0)
            }
        });
        check(&err, pc, "main", FaultKind::UnknownMmio { addr, write });
    }
}

#[test]
fn division_by_zero() {
    let (err, pc) = task(3, |a| {
        a.imm(0, 7);
        a.imm(1, 0);
        a.bin(BinOp::Rem, NumTy::I16, 2, 0, 1)
    });
    check(&err, pc, "main", FaultKind::DivisionByZero);
}

#[test]
fn trap_instruction() {
    let (err, pc) = task(1, |a| {
        a.op(Op::Trap {
            code: TrapCode::AssertFailed as u16,
        })
    });
    check(&err, pc, "main", FaultKind::Trap { code: 1 });
    let SimError::Fault { kind, .. } = &err else {
        unreachable!()
    };
    assert_eq!(kind.trap_code(), Some(TrapCode::AssertFailed));
    assert!(err.to_string().contains("assertion failed"), "{err}");
}

#[test]
fn unbound_task() {
    let (err, _) = fault_of(|a| {
        a.func("unused", 0, 0, 0);
        a.ret_void();
        a.info.initially_active = 1 << 3;
        0
    });
    check(&err, 0, "(task picker)", FaultKind::UnboundTask { id: 3 });
    assert!(
        err.to_string()
            .contains("task id 3 was activated but no task is bound to it"),
        "{err}"
    );
}

/// A function `rec` with a frame of `frame_bytes` that only calls itself: its id and the
/// pc of the call.
fn recursive(a: &mut Asm, frame_bytes: u16) -> (u32, u32) {
    let rec = a.func("rec", 1, 0, frame_bytes);
    let call = a.call(rec, 0, 0, 0);
    a.ret_void();
    (rec, call)
}

#[test]
fn stack_overflow_by_deep_recursion() {
    let (err, pc) = fault_of(|a| {
        let (rec, call) = recursive(a, 64);
        let main = a.func("main", 1, 0, 0);
        a.call(rec, 0, 0, 0);
        a.ret_void();
        a.task(3, main, true, false);
        call
    });
    // 2048 / 64 = 32 frames fit; the 33rd call overflows.
    let sp = PE_MEMORY_BYTES - STACK_BYTES;
    check(
        &err,
        pc,
        "rec",
        FaultKind::StackOverflow {
            sp,
            frame_bytes: 64,
        },
    );
    assert!(err.to_string().contains("stack overflow"), "{err}");
}

#[test]
fn call_depth_exceeded_without_stack_use() {
    let (err, pc) = fault_of(|a| {
        let (rec, call) = recursive(a, 0);
        a.task(3, rec, true, false);
        call
    });
    check(
        &err,
        pc,
        "rec",
        FaultKind::CallDepthExceeded {
            limit: cslsim::pe::MAX_CALL_DEPTH,
        },
    );
}

#[test]
fn bad_function_pointer() {
    let (err, pc) = task(1, |a| {
        a.imm(0, 99);
        a.op(Op::CallInd {
            fptr: Reg(0),
            args: Reg(0),
            nargs: 0,
            dst: Reg(0),
        })
    });
    check(
        &err,
        pc,
        "main",
        FaultKind::BadFunctionPointer {
            value: 99,
            nfuncs: 1,
        },
    );
}

#[test]
fn running_off_the_end_of_the_code() {
    let (err, _) = fault_of(|a| {
        let f = a.func("main", 1, 0, 0);
        a.imm(0, 1);
        a.task(3, f, true, false);
        0
    });
    check(&err, 1, "main", FaultKind::PcOutOfRange { pc: 1 });
}

#[test]
fn faults_are_reported_at_their_cycle() {
    let (err, _) = task(1, |a| a.op(Op::Trap { code: 2 }));
    // Cycle 0 picks the task; the trap is its first instruction.
    let SimError::Fault { cycle, .. } = err else {
        panic!()
    };
    assert_eq!(cycle, 1);
}
