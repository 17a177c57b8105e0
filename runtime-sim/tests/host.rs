//! The host runtime: launch, copy-mode memcpy in both orders, deadlock and cycle-limit
//! detection, and host-call errors.

mod common;

use common::{Asm, export_func, export_tensor, image, temp_file};
use csl_arch::fabric::mmio;
use csl_arch::image::Image;
use csl_arch::isa::{BinOp, CmpOp, NumTy, Op, Reg, Width};
use cslsim::{
    HostError, MemcpyDataType, MemcpyOrder, Region, SdkRuntime, SimError, Transfer, WaitReason,
};

const L: u32 = 3;
const X_PTR: u32 = 0x10;
const Y_PTR: u32 = 0x12;
const Z_PTR: u32 = 0x14;
const C_PTR: u32 = 0x16;

/// A 2x2 program: `compute(scale)` sets `y[k] = x[k] * scale + col * 100 + row * 10` for
/// `k < 3` (absolute fabric column and row) and unblocks the command stream. Also exports
/// `z` (16-bit elements), the immutable `c`, `noop` (never unblocks) and `spin` (loops).
fn program() -> Image {
    let mut a = Asm::new("pe_program.csl");
    a.export_tensor("x", X_PTR, 0x100);
    a.export_tensor("y", Y_PTR, 0x200);
    a.export_tensor("z", Z_PTR, 0x300);
    a.export_tensor("c", C_PTR, 0x400);
    let compute = a.func("compute", 12, 1, 0);
    a.imm(1, 0); // k
    a.imm(2, L);
    a.imm(3, X_PTR);
    a.load(Width::W16, 4, 3); // x
    a.imm(3, Y_PTR);
    a.load(Width::W16, 5, 3); // y
    a.imm(6, mmio::COL_ID);
    a.load(Width::W16, 6, 6);
    a.imm(7, mmio::ROW_ID);
    a.load(Width::W16, 7, 7);
    a.imm(8, 100);
    a.bin(BinOp::Mul, NumTy::U32, 6, 6, 8);
    a.imm(8, 10);
    a.bin(BinOp::Mul, NumTy::U32, 7, 7, 8);
    a.bin(BinOp::Add, NumTy::U32, 6, 6, 7);
    let head = a.op(Op::Cmp {
        op: CmpOp::Lt,
        ty: NumTy::U32,
        dst: Reg(9),
        a: Reg(1),
        b: Reg(2),
    });
    let exit = a.op(Op::BrFalse {
        cond: Reg(9),
        target: 0,
    });
    a.imm(8, 4);
    a.bin(BinOp::Mul, NumTy::U32, 10, 1, 8);
    a.bin(BinOp::Add, NumTy::U32, 11, 4, 10);
    a.load(Width::W32, 11, 11);
    a.bin(BinOp::Mul, NumTy::U32, 11, 11, 0);
    a.bin(BinOp::Add, NumTy::U32, 11, 11, 6);
    a.bin(BinOp::Add, NumTy::U32, 10, 5, 10);
    a.store(Width::W32, 10, 11);
    a.imm(8, 1);
    a.bin(BinOp::Add, NumTy::U32, 1, 1, 8);
    a.op(Op::Jump { target: head });
    let end = a.here();
    a.patch(exit, end);
    a.unblock_cmd_stream(8);
    a.ret_void();
    a.export_func("compute", compute);

    let noop = a.func("noop", 1, 0, 0);
    a.activate(9, 0);
    a.ret_void();
    a.export_func("noop", noop);
    // Task 9 is blocked forever.
    let t9 = a.func("t9", 0, 0, 0);
    a.ret_void();
    a.task(9, t9, false, true);

    let spin = a.func("spin", 0, 0, 0);
    let l = a.here();
    a.op(Op::Jump { target: l });
    a.export_func("spin", spin);

    image(
        2,
        2,
        vec![a.build()],
        vec![0; 4],
        vec![
            export_tensor("x", NumTy::U32, true),
            export_tensor("y", NumTy::U32, true),
            export_tensor("z", NumTy::U16, true),
            export_tensor("c", NumTy::U32, false),
            export_func("compute", vec![NumTy::U32]),
            export_func("noop", vec![]),
            export_func("spin", vec![]),
        ],
    )
}

fn runtime() -> SdkRuntime {
    let mut rt = SdkRuntime::from_image(program());
    rt.load().expect("load");
    rt.run().expect("run");
    rt
}

/// Host index of PE (i, j), element k in a 2x2xL array.
fn host_index(order: MemcpyOrder, i: u32, j: u32, k: u32) -> usize {
    let (w, h, l) = (2, 2, L);
    (match order {
        MemcpyOrder::RowMajor => (j * w + i) * l + k,
        MemcpyOrder::ColMajor => j + i * h + k * h * w,
    }) as usize
}

fn round_trip(order: MemcpyOrder) {
    // Load from a file, as a user would.
    let path = temp_file(&program().to_elf().expect("encode"));
    let mut rt = SdkRuntime::new(&path).expect("new");
    let _ = std::fs::remove_file(&path);
    rt.load().expect("load");
    rt.run().expect("run");
    let (x, y, z) = (
        rt.get_id("x").expect("x"),
        rt.get_id("y").expect("y"),
        rt.get_id("z").expect("z"),
    );
    assert_eq!((x, y, z), (0, 1, 2));
    let input: Vec<u32> = (0..12).map(|n| 1000 * (n + 1)).collect();
    rt.h2d(
        x,
        &input,
        Region::new(0, 0, 2, 2, L),
        Transfer::COPY.order(order),
    )
    .expect("h2d");
    let before = rt.cycles();
    assert!(before > 0, "memcpy takes time");
    rt.launch("compute", &[2], false).expect("launch");
    assert!(rt.cycles() > before);
    let mut out = vec![0u32; 12];
    rt.d2h(
        &mut out,
        y,
        Region::new(0, 0, 2, 2, L),
        Transfer::COPY.order(order),
    )
    .expect("d2h");
    for j in 0..2 {
        for i in 0..2 {
            for k in 0..L {
                let n = host_index(order, i, j, k);
                let want = input[n] * 2 + (4 + i) * 100 + (1 + j) * 10;
                assert_eq!(out[n], want, "PE({i},{j}) element {k}, {order:?}");
            }
        }
    }
    // 16-bit copies keep the low half and zero-extend on the way back.
    let wide: Vec<u32> = (0..12).map(|n| 0xabcd_0000 | (n * 3)).collect();
    rt.h2d(
        z,
        &wide,
        Region::new(0, 0, 2, 2, L),
        Transfer::COPY.data_type(MemcpyDataType::Bit16).order(order),
    )
    .expect("h2d16");
    let mut back = vec![u32::MAX; 12];
    rt.d2h(
        &mut back,
        z,
        Region::new(0, 0, 2, 2, L),
        Transfer::COPY.data_type(MemcpyDataType::Bit16).order(order),
    )
    .expect("d2h16");
    assert_eq!(back, wide.iter().map(|v| v & 0xffff).collect::<Vec<_>>());
    // The 16-bit elements are packed two bytes apart in PE memory.
    let pe = rt.simulator().expect("loaded").pe(1, 1).expect("pe");
    let n = host_index(order, 1, 1, 1);
    assert_eq!(
        u16::from_le_bytes([pe.memory()[0x302], pe.memory()[0x303]]) as u32,
        wide[n] & 0xffff
    );
    // A sub-region copy touches only its PEs.
    rt.h2d(
        x,
        &[7, 8, 9],
        Region::new(1, 1, 1, 1, L),
        Transfer::COPY.order(order),
    )
    .expect("h2d sub");
    let mut one = vec![0; 3];
    rt.d2h(
        &mut one,
        x,
        Region::new(1, 1, 1, 1, L),
        Transfer::COPY.order(order),
    )
    .expect("d2h sub");
    assert_eq!(one, vec![7, 8, 9]);
    rt.d2h(
        &mut one,
        x,
        Region::new(0, 1, 1, 1, L),
        Transfer::COPY.order(order),
    )
    .expect("d2h sub");
    assert_eq!(
        one,
        (0..L)
            .map(|k| input[host_index(order, 0, 1, k)])
            .collect::<Vec<_>>()
    );
    rt.stop().expect("stop");
    let stats = rt.stats();
    assert_eq!(stats.pes.len(), 4);
    assert!(
        stats
            .pes
            .iter()
            .all(|p| p.tasks_started == 1 && p.busy_cycles > 0)
    );
    assert_eq!(stats.cycles, rt.cycles());
}

#[test]
fn launch_and_memcpy_round_trip_row_major() {
    round_trip(MemcpyOrder::RowMajor);
}

#[test]
fn launch_and_memcpy_round_trip_col_major() {
    round_trip(MemcpyOrder::ColMajor);
}

#[test]
fn runtime_accepts_a_directory_with_out_elf() {
    let dir = std::env::temp_dir().join(format!("cslsim-test-dir-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("out.elf"), program().to_elf().unwrap()).unwrap();
    let rt = SdkRuntime::new(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(rt.expect("new").get_id("compute").unwrap(), 4);
}

#[test]
fn a_launch_that_never_unblocks_is_a_deadlock() {
    let mut rt = runtime();
    let err = rt.launch("noop", &[], false).expect_err("deadlock");
    let HostError::Sim(SimError::Deadlock {
        waiting, command, ..
    }) = &err
    else {
        panic!("{err}")
    };
    assert_eq!(command, "launch `noop`");
    assert_eq!(waiting.len(), 4);
    assert_eq!(
        waiting[0].reason,
        WaitReason::NeverUnblockedCmdStream {
            blocked_tasks: 1 << 9
        }
    );
    let msg = err.to_string();
    assert!(msg.contains("deadlock"), "{msg}");
    assert!(
        msg.contains(
            "PE(1,1) [fabric (5,2)]: has nothing left to run and never called unblock_cmd_stream"
        ),
        "{msg}"
    );
    assert!(msg.contains("activated but blocked task ids: 9"), "{msg}");
    // Later commands repeat the failure.
    assert!(matches!(
        rt.launch("compute", &[1], false),
        Err(HostError::Sim(SimError::Deadlock { .. }))
    ));
}

#[test]
fn an_infinite_loop_hits_the_cycle_limit() {
    let mut rt = SdkRuntime::from_image(program()).with_max_cycles(10_000);
    rt.load().unwrap();
    rt.run().unwrap();
    let err = rt.launch("spin", &[], true).expect_err("cycle limit");
    assert!(
        matches!(err, HostError::Sim(SimError::CycleLimit { cycle: 10_000 })),
        "{err}"
    );
    assert!(err.to_string().contains("cycle limit"), "{err}");
    assert_eq!(rt.cycles(), 10_000);
}

#[test]
fn host_call_errors() {
    // Wrong order.
    let mut rt = SdkRuntime::from_image(program());
    let mut out = [0u32; 12];
    let h2d = |rt: &mut SdkRuntime, id, data: &[u32], px, py, w, h| {
        rt.h2d(id, data, Region::new(px, py, w, h, L), Transfer::COPY)
    };
    assert!(matches!(
        h2d(&mut rt, 0, &[0; 12], 0, 0, 2, 2),
        Err(HostError::NotLoaded)
    ));
    assert!(matches!(
        rt.launch("compute", &[1], false),
        Err(HostError::NotLoaded)
    ));
    assert!(matches!(rt.run(), Err(HostError::NotLoaded)));
    rt.load().unwrap();
    assert!(matches!(rt.load(), Err(HostError::AlreadyLoaded)));
    assert!(matches!(
        rt.d2h(&mut out, 1, Region::new(0, 0, 2, 2, L), Transfer::COPY),
        Err(HostError::NotRunning)
    ));
    rt.run().unwrap();
    assert!(matches!(rt.run(), Err(HostError::AlreadyRunning)));

    // Unknown names and ids.
    let err = rt.get_id("nope").unwrap_err();
    let HostError::UnknownSymbol { name, known } = &err else {
        panic!("{err}")
    };
    assert_eq!(name, "nope");
    assert!(known.contains(&"compute".to_string()));
    assert!(err.to_string().contains("no exported name `nope`"), "{err}");
    assert!(matches!(
        rt.launch("nope", &[], false),
        Err(HostError::UnknownSymbol { .. })
    ));
    assert!(matches!(
        h2d(&mut rt, 99, &[0; 12], 0, 0, 2, 2),
        Err(HostError::UnknownSymbolId { id: 99, .. })
    ));

    // Wrong kinds and arguments.
    assert!(matches!(
        h2d(&mut rt, 4, &[0; 12], 0, 0, 2, 2),
        Err(HostError::WrongSymbolKind { .. })
    ));
    assert!(matches!(
        rt.launch("x", &[], false),
        Err(HostError::WrongSymbolKind { .. })
    ));
    assert!(matches!(
        rt.launch("compute", &[], false),
        Err(HostError::WrongArgCount {
            expected: 1,
            got: 0,
            ..
        })
    ));
    assert!(matches!(
        h2d(&mut rt, 3, &[0; 12], 0, 0, 2, 2),
        Err(HostError::ImmutableSymbol { .. })
    ));

    // Regions and array sizes.
    let err = h2d(&mut rt, 0, &[0; 12], 1, 0, 2, 2).unwrap_err();
    assert!(
        matches!(
            err,
            HostError::RegionOutsideRectangle {
                px: 1,
                py: 0,
                w: 2,
                h: 2,
                width: 2,
                height: 2
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("outside the 2x2 program rectangle"),
        "{err}"
    );
    assert!(matches!(
        h2d(&mut rt, 0, &[0; 12], 0, u32::MAX, 1, 2),
        Err(HostError::RegionOutsideRectangle { .. })
    ));
    let err = h2d(&mut rt, 0, &[0; 11], 0, 0, 2, 2).unwrap_err();
    assert!(
        matches!(
            err,
            HostError::WrongArraySize {
                expected: 12,
                got: 11
            }
        ),
        "{err}"
    );
    assert!(matches!(
        rt.d2h(
            &mut out[..4],
            1,
            Region::new(0, 0, 2, 2, L),
            Transfer::COPY.order(MemcpyOrder::ColMajor)
        ),
        Err(HostError::WrongArraySize {
            expected: 12,
            got: 4
        })
    ));
    // Streaming mode takes a colour id.
    assert!(matches!(
        rt.h2d(99, &[0; 12], Region::new(0, 0, 2, 2, L), Transfer::STREAM),
        Err(HostError::InvalidColor { color: 99 })
    ));

    // A copy past the end of memory.
    let err = rt
        .h2d(
            0,
            &vec![0; 4 * 30_000],
            Region::new(0, 0, 2, 2, 30_000),
            Transfer::COPY.data_type(MemcpyDataType::Bit16),
        )
        .unwrap_err();
    assert!(
        matches!(
            err,
            HostError::SymbolOutOfBounds {
                addr: 0x100,
                bytes: 60_000,
                ..
            }
        ),
        "{err}"
    );

    // None of that broke the runtime.
    h2d(&mut rt, 0, &[1; 12], 0, 0, 2, 2).unwrap();
    rt.launch("compute", &[1], false).unwrap();
    rt.stop().unwrap();
    assert!(matches!(rt.stop(), Err(HostError::Stopped)));
    assert!(matches!(
        rt.launch("compute", &[1], false),
        Err(HostError::Stopped)
    ));
}

#[test]
fn missing_files_and_garbage_are_errors() {
    let err = SdkRuntime::new("/nonexistent/cslsim/image.elf").unwrap_err();
    assert!(matches!(err, HostError::Io { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("cannot read `/nonexistent/cslsim/image.elf`"),
        "{err}"
    );
    let path = temp_file(b"definitely not an ELF file");
    let err = SdkRuntime::new(&path).unwrap_err();
    let _ = std::fs::remove_file(&path);
    assert!(matches!(err, HostError::Image(_)), "{err}");
}

#[test]
fn a_pe_without_the_launched_function_is_reported() {
    let mut with = Asm::new("with");
    let f = with.func("go", 1, 0, 0);
    with.unblock_cmd_stream(0);
    with.ret_void();
    with.export_func("go", f);
    let without = Asm::new("without").build();
    let img = image(
        2,
        1,
        vec![with.build(), without],
        vec![0, 1],
        vec![export_func("go", vec![])],
    );
    let mut rt = SdkRuntime::from_image(img);
    rt.load().unwrap();
    rt.run().unwrap();
    let err = rt.launch("go", &[], false).unwrap_err();
    let HostError::SymbolMissingOnPe { pe, class, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!((pe.rel.x, pe.rel.y, class.as_str()), (1, 0, "without"));
}

#[test]
fn launch_arguments_are_normalised_to_their_types() {
    let mut a = Asm::new("t");
    let f = a.func("f", 3, 2, 0);
    a.store_at(Width::W32, 0x100, 0, 2);
    a.store_at(Width::W32, 0x104, 1, 2);
    a.unblock_cmd_stream(2);
    a.ret_void();
    a.export_func("f", f);
    let img = image(
        1,
        1,
        vec![a.build()],
        vec![0],
        vec![export_func("f", vec![NumTy::I16, NumTy::Bool])],
    );
    let mut rt = SdkRuntime::from_image(img);
    rt.load().unwrap();
    rt.run().unwrap();
    rt.launch("f", &[u32::MAX, 7], false).unwrap();
    let m = rt.simulator().unwrap().pe(0, 0).unwrap().memory();
    assert_eq!(common::read32(m, 0x100), 0xffff);
    assert_eq!(common::read32(m, 0x104), 1);
}

/// The interrupt check stops a run that would otherwise go on until the cycle limit (the
/// Python binding polls Ctrl-C through it), and bad model parameters are refused at load.
#[test]
fn interrupt_check_stops_a_long_run_and_params_are_checked() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};
    let polls = Arc::new(AtomicU32::new(0));
    let seen = polls.clone();
    let check =
        cslsim::sim::InterruptCheck(Arc::new(move || seen.fetch_add(1, Ordering::Relaxed) >= 3));
    let mut rt = SdkRuntime::from_image(program())
        .with_max_cycles(u64::MAX)
        .with_interrupt(check);
    rt.load().expect("load");
    rt.run().expect("run");
    let err = rt.launch("spin", &[], true).expect_err("interrupted");
    assert!(
        matches!(err, HostError::Sim(SimError::Interrupted { .. })),
        "{err}"
    );
    assert_eq!(polls.load(Ordering::Relaxed), 4);

    let params = cslsim::SimParams {
        router_buffer_depth: 0,
        ..cslsim::SimParams::default()
    };
    let mut rt = SdkRuntime::from_image(program()).with_params(params);
    let err = rt.load().expect_err("bad params").to_string();
    assert!(
        err.contains("router_buffer_depth (--buffer-depth) is 0"),
        "{err}"
    );
}
