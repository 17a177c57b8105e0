//! Robustness: garbage files, corrupted images and random programs never panic the
//! simulator or the host runtime.

mod common;

use common::{Asm, export_func, export_tensor, image, temp_file};
use csl_arch::dsd::{DsdField, DsdOpcode};
use csl_arch::fabric::Direction;
use csl_arch::fabric::{PE_MEMORY_BYTES, mmio};
use csl_arch::image::{
    ColorConfig, FilterConfig, FilterKind, PopMode, QueueBinding, SwitchConfig, SwitchPos,
    TaskKind, WaveletArgs,
};
use csl_arch::image::{ExportKind, Image};
use csl_arch::isa::{BinOp, CmpOp, NumTy, Op, Reg, UnOp, Width};
use cslsim::{MemcpyDataType, MemcpyOrder, Region, SdkRuntime, Simulator, Transfer};
use proptest::prelude::*;

/// A small valid image exercising launch and memcpy.
fn sample() -> Image {
    let mut a = Asm::new("sample");
    a.export_tensor("x", 0x10, 0x100);
    let f = a.func("f", 4, 1, 8);
    a.imm(1, 0x10);
    a.load(Width::W16, 1, 1);
    a.store(Width::W32, 1, 0);
    a.unblock_cmd_stream(2);
    a.ret_void();
    a.export_func("f", f);
    let t = a.func("t", 1, 0, 0);
    a.activate(5, 0);
    a.ret_void();
    a.task(5, t, true, false);
    image(
        2,
        1,
        vec![a.build()],
        vec![0, 0],
        vec![
            export_tensor("x", NumTy::U32, true),
            export_func("f", vec![NumTy::U32]),
        ],
    )
}

/// Drives a runtime through every host call, ignoring errors.
fn exercise(mut rt: SdkRuntime) {
    if rt.load().is_err() || rt.run().is_err() {
        return;
    }
    let exports = rt.image().exports.clone();
    let (w, h) = (rt.image().meta.width.min(4), rt.image().meta.height.min(4));
    for (id, e) in exports.iter().enumerate() {
        match &e.kind {
            ExportKind::Func { params } => {
                let _ = rt.launch(&e.name, &vec![1; params.len()], false);
            }
            ExportKind::Tensor { .. } => {
                let mut buf = vec![7u32; (w * h * 2) as usize];
                let _ = rt.h2d(
                    id as u32,
                    &buf,
                    Region::new(0, 0, w, h, 2),
                    Transfer::COPY.data_type(MemcpyDataType::Bit16),
                );
                let _ = rt.d2h(
                    &mut buf,
                    id as u32,
                    Region::new(0, 0, w, h, 2),
                    Transfer::COPY.order(MemcpyOrder::ColMajor),
                );
            }
        }
    }
    // Streaming mode on a few colours (most have no consumer: back-pressure, deadlocks).
    for c in [0u32, 3, 23, 30] {
        let mut buf = vec![5u32; (w * h) as usize];
        let _ = rt.h2d(c, &buf, Region::new(0, 0, w, h, 1), Transfer::STREAM);
        let _ = rt.d2h(
            &mut buf,
            c,
            Region::new(0, 0, w, h, 1),
            Transfer::STREAM.order(MemcpyOrder::ColMajor),
        );
    }
    let _ = rt.run_until_idle();
    let _ = rt.stats();
    let _ = rt.stop();
}

fn reg() -> impl Strategy<Value = Reg> {
    (0u16..6).prop_map(Reg)
}

fn numty() -> impl Strategy<Value = NumTy> {
    use NumTy::*;
    prop::sample::select(vec![Bool, I8, U8, I16, U16, I32, U32, F16, F32])
}

fn width() -> impl Strategy<Value = Width> {
    prop::sample::select(Width::ALL.to_vec())
}

fn value() -> impl Strategy<Value = u32> {
    prop_oneof![
        any::<u32>(),
        0u32..64,
        0..PE_MEMORY_BYTES + 8,
        prop::sample::select(vec![
            mmio::TSC,
            mmio::TSC + 2,
            mmio::TSC + 4,
            mmio::ROW_ID,
            mmio::COL_ID,
            mmio::HOST_CMD_UNBLOCK
        ]),
    ]
}

/// Any instruction; targets below `len`, static call targets below `nfuncs`.
fn op(len: u32, nfuncs: u32) -> impl Strategy<Value = Op> {
    let binop = prop::sample::select(BinOp::ALL.to_vec());
    let cmpop = prop::sample::select(CmpOp::ALL.to_vec());
    let unop = prop::sample::select(UnOp::ALL.to_vec());
    prop_oneof![
        Just(Op::Nop {}),
        (reg(), value()).prop_map(|(dst, imm)| Op::Imm { dst, imm }),
        (reg(), reg()).prop_map(|(dst, src)| Op::Mov { dst, src }),
        (binop.clone(), numty(), reg(), reg(), reg()).prop_map(|(op, ty, dst, a, b)| Op::Bin {
            op,
            ty,
            dst,
            a,
            b
        }),
        (cmpop.clone(), numty(), reg(), reg(), reg()).prop_map(|(op, ty, dst, a, b)| Op::Cmp {
            op,
            ty,
            dst,
            a,
            b
        }),
        (unop, numty(), reg(), reg()).prop_map(|(op, ty, dst, a)| Op::Un { op, ty, dst, a }),
        (numty(), numty(), reg(), reg()).prop_map(|(to, from, dst, src)| Op::Conv {
            to,
            from,
            dst,
            src
        }),
        (binop, numty(), reg(), reg(), any::<u32>()).prop_map(|(op, ty, dst, a, imm)| {
            Op::BinImm {
                op,
                ty,
                dst,
                a,
                imm,
            }
        }),
        (cmpop, numty(), reg(), reg(), any::<u32>()).prop_map(|(op, ty, dst, a, imm)| {
            Op::CmpImm {
                op,
                ty,
                dst,
                a,
                imm,
            }
        }),
        (width(), reg(), reg(), any::<u16>()).prop_map(|(w, dst, addr, off)| Op::LoadOff {
            w,
            dst,
            addr,
            off
        }),
        (width(), reg(), reg(), any::<u16>()).prop_map(|(w, addr, src, off)| Op::StoreOff {
            w,
            addr,
            off,
            src
        }),
        (width(), reg(), reg()).prop_map(|(w, dst, addr)| Op::Load { w, dst, addr }),
        (width(), reg(), reg()).prop_map(|(w, addr, src)| Op::Store { w, addr, src }),
        (reg(), any::<u16>()).prop_map(|(dst, off)| Op::FrameAddr { dst, off }),
        (0..len).prop_map(|target| Op::Jump { target }),
        (reg(), 0..len).prop_map(|(cond, target)| Op::BrTrue { cond, target }),
        (reg(), 0..len).prop_map(|(cond, target)| Op::BrFalse { cond, target }),
        (0..nfuncs, reg(), 0u8..3, reg()).prop_map(|(func, args, nargs, dst)| Op::Call {
            func,
            args,
            nargs,
            dst
        }),
        (reg(), reg(), 0u8..3, reg()).prop_map(|(fptr, args, nargs, dst)| Op::CallInd {
            fptr,
            args,
            nargs,
            dst
        }),
        reg().prop_map(|src| Op::Ret { src }),
        Just(Op::RetVoid {}),
        reg().prop_map(|id| Op::Activate { id }),
        reg().prop_map(|id| Op::Block { id }),
        reg().prop_map(|id| Op::Unblock { id }),
        (0u16..4).prop_map(|code| Op::Trap { code }),
        (
            0u8..43,
            any::<u8>(),
            any::<u8>(),
            0u8..70,
            0u8..10,
            [reg(), reg(), reg(), reg(), reg()]
        )
            .prop_map(
                |(op, kinds, cfg, done, ut, [dst, a, b, c, idx])| Op::DsdOp {
                    op: DsdOpcode::from_u8(op).unwrap_or(DsdOpcode::Mov16),
                    kinds,
                    cfg,
                    done,
                    ut,
                    dst,
                    a,
                    b,
                    c,
                    idx
                }
            ),
        (0usize..6, reg(), reg()).prop_map(|(f, desc, val)| Op::DsdSet {
            field: DsdField::ALL[f],
            desc,
            val
        }),
        (reg(), reg(), any::<u16>()).prop_map(|(dst, src, bytes)| Op::Copy { dst, src, bytes }),
    ]
}

fn dirs() -> impl Strategy<Value = Vec<Direction>> {
    prop::collection::vec(prop::sample::select(Direction::ALL.to_vec()), 0..3)
}

/// A random colour configuration of a 2x1 rectangle.
fn color_config() -> impl Strategy<Value = ColorConfig> {
    (
        (0u32..3, 0u32..2, 0u8..25, dirs(), dirs()),
        prop::option::of((
            prop::collection::vec(
                (
                    prop::option::of(prop::sample::select(Direction::ALL.to_vec())),
                    prop::option::of(dirs()),
                ),
                3,
            ),
            0u8..5,
            any::<bool>(),
            0usize..4,
        )),
        prop::option::of((0usize..3, any::<[bool; 3]>(), any::<[u16; 6]>())),
        any::<[bool; 4]>(),
    )
        .prop_map(
            |((x, y, color, rx, tx), sw, filter, [teardown, sx, sy, mp])| ColorConfig {
                x,
                y,
                color,
                rx,
                tx,
                switches: sw.map(|(pos, current, ring_mode, pop)| {
                    let p = |i: usize| {
                        let (rx, tx): (Option<Direction>, Option<Vec<Direction>>) = pos[i].clone();
                        SwitchPos { rx, tx }
                    };
                    SwitchConfig {
                        positions: [p(0), p(1), p(2)],
                        current,
                        ring_mode,
                        pop_mode: [
                            PopMode::NoPop,
                            PopMode::AlwaysPop,
                            PopMode::PopOnAdvance,
                            PopMode::PopOnAdvanceNop,
                        ][pop],
                    }
                }),
                filter: filter.map(|(k, [cd, cc, fc], v)| FilterConfig {
                    kind: [
                        FilterKind::Range,
                        FilterKind::Counter,
                        FilterKind::SparseCounter,
                    ][k],
                    count_data: cd,
                    count_control: cc,
                    init_counter: v[0],
                    limit1: v[1] % 8,
                    limit2: (v[2] % 3 != 0).then_some(v[2] % 8),
                    max_counter: v[3] % 8,
                    filter_control: fc,
                    min_idx: v[4] % 8,
                    max_idx: v[5] % 8,
                }),
                teardown,
                color_swap_x: sx,
                color_swap_y: sy,
                message_passing: mp,
            },
        )
}

/// A random one-class program: `nfuncs` functions over `len` instructions, some bound to
/// task ids, some exported.
fn program() -> impl Strategy<Value = Image> {
    (2u32..40, 1u32..4).prop_flat_map(|(len, nfuncs)| {
        (
            prop::collection::vec(op(len, nfuncs), len as usize),
            prop::collection::vec(
                (0..len, prop::sample::select(vec![6u16, 6, 6, 2]), 0u16..300),
                nfuncs as usize,
            ),
            any::<u64>(),
            any::<u64>(),
            prop::collection::vec(any::<u8>(), 0..160),
            prop::collection::vec(color_config(), 0..6),
            any::<[u8; 8]>(),
            any::<bool>(),
        )
            .prop_map(
                move |(code, funcs, active, blocked, data, routes, kinds, wse3)| {
                    let mut a = Asm::new("random");
                    a.code = code;
                    a.data = data;
                    for (n, (entry, nregs, frame)) in funcs.into_iter().enumerate() {
                        a.info.functions.push(csl_arch::image::FuncInfo {
                            name: format!("f{n}"),
                            entry,
                            nregs,
                            nparams: 0,
                            frame_bytes: frame,
                        });
                        a.export_func(&format!("f{n}"), n as u32);
                    }
                    for id in 0..8u32 {
                        a.task(id as u8, id % nfuncs, false, false);
                        let t = a.info.tasks.last_mut().expect("just pushed");
                        let k = kinds[id as usize];
                        t.kind = [TaskKind::Local, TaskKind::Data, TaskKind::Control]
                            [usize::from(k % 3)];
                        t.args = [
                            WaveletArgs::None,
                            WaveletArgs::Word,
                            WaveletArgs::Low16,
                            WaveletArgs::Pair16,
                        ][usize::from(k / 3 % 4)];
                    }
                    if wse3 {
                        a.info
                            .input_queues
                            .push(QueueBinding { queue: 2, color: 3 });
                        a.info
                            .output_queues
                            .push(QueueBinding { queue: 3, color: 0 });
                    }
                    a.info.initially_active = active & 0xff;
                    a.info.initially_blocked = blocked & 0xff;
                    a.export_tensor("x", 0x10, 0x20);
                    let mut exports: Vec<_> = (0..nfuncs)
                        .map(|n| export_func(&format!("f{n}"), vec![NumTy::U32]))
                        .collect();
                    exports.push(export_tensor("x", NumTy::U32, true));
                    let mut img = image(2, 1, vec![a.build()], vec![0, 0], exports);
                    let mut routes = routes;
                    if wse3 {
                        img.meta.arch = csl_arch::fabric::Arch::Wse3;
                    } else {
                        // Message passing is WSE-3 only (the loader would reject it).
                        for r in &mut routes {
                            r.message_passing = false;
                        }
                    }
                    img.routes = routes.into();
                    img
                },
            )
    })
}

/// Writes `bytes` to a file and exercises the runtime on it if it loads as an image.
fn exercise_file(bytes: &[u8]) {
    let path = temp_file(bytes);
    let rt = SdkRuntime::new(&path);
    let _ = std::fs::remove_file(&path);
    if let Ok(rt) = rt {
        exercise(rt.with_max_cycles(20_000));
    }
}

proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        exercise_file(&bytes);
    }

    #[test]
    fn corrupted_images_never_panic(edits in prop::collection::vec((any::<usize>(), any::<u8>()), 1..8)) {
        let mut bytes = sample().to_elf().expect("encode");
        let n = bytes.len();
        for (pos, b) in edits {
            bytes[pos % n] = b;
        }
        exercise_file(&bytes);
    }

    #[test]
    fn random_programs_never_panic(img in program()) {
        if let Ok(mut sim) = Simulator::new(&img) {
            let _ = sim.run_until_idle(5_000);
        }
        exercise(SdkRuntime::from_image(img).with_max_cycles(5_000));
    }
}

#[test]
fn the_sample_runs() {
    let mut rt = SdkRuntime::from_image(sample());
    rt.load().unwrap();
    rt.run().unwrap();
    rt.launch("f", &[42], false).unwrap();
    let mut out = [0u32; 2];
    rt.d2h(&mut out, 0, Region::new(0, 0, 2, 1, 1), Transfer::COPY)
        .unwrap();
    assert_eq!(out, [42, 42]);
}
