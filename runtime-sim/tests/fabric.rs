//! End-to-end fabric tests on hand-built images: routing, multicast, switches and control
//! wavelets, filters, colour swap, teardown, fabric DSD operations, FIFOs, async
//! completion, streaming memcpy, deadlock and routing-error reports. Every expected value
//! is computed independently of the simulator.

mod common;

use common::{
    Asm, Dsd, LOG_COUNT, MAIN, X, data_id, fabric_image, main_task, pair_image, read_log, read32,
    route,
};
use csl_arch::dsd::{DsdOpcode, cfg, flags};
use csl_arch::fabric::Direction::{East, North, Ramp, South, West};
use csl_arch::fabric::{Arch, control};
use csl_arch::image::{
    FilterConfig, FilterKind, Image, PopMode, ProgramClass, SwitchConfig, SwitchPos, WaveletArgs,
};
use csl_arch::isa::{BinOp, NumTy, Op, Reg, Width};
use cslsim::{RoutingError, SimError, Simulator, StuckPlace, StuckWhy, WaitOn, WaitReason};
use std::io::Write;
use std::sync::{Arc, Mutex};

const ARCHS: [Arch; 2] = [Arch::Wse2, Arch::Wse3];
fn run(img: &Image) -> Simulator {
    let mut sim = Simulator::new(img).expect("load");
    if let Err(e) = sim.run_until_idle(1_000_000) {
        panic!("{e}");
    }
    sim
}

fn mem(sim: &Simulator, x: u32, y: u32) -> &[u8] {
    sim.pe(x, y).expect("pe").memory()
}

/// A data task (16 registers, `r0` = the wavelet per `args`) bound to colour `c` (WSE-2)
/// or input queue `q` bound to `c` (WSE-3).
fn data_task(
    a: &mut Asm,
    arch: Arch,
    c: u8,
    q: u8,
    args: WaveletArgs,
    body: impl FnOnce(&mut Asm),
) {
    let f = a.func("recv", 16, 2, 0);
    body(a);
    a.ret_void();
    a.bind_input(arch, q, c);
    a.data_task(data_id(arch, c, q), f, args);
}

/// A row of PEs, PE k running `classes[k]`, in which PE k sends east on colour k % 2 and
/// receives from the west on colour (k + 1) % 2.
fn alternating_row(arch: Arch, classes: Vec<ProgramClass>) -> Image {
    let n = classes.len() as u32;
    let mut routes = Vec::new();
    for k in 0..n {
        let (send, recv) = ((k % 2) as u8, ((k + 1) % 2) as u8);
        if k + 1 < n {
            routes.push(route(k, 0, send, &[Ramp], &[East]));
        }
        if k > 0 {
            routes.push(route(k, 0, recv, &[West], &[Ramp]));
        }
    }
    fabric_image(arch, n, 1, classes, (0..n).collect(), routes)
}

/// A class whose data task on colour `c` (input queue 2) logs every wavelet it receives.
fn logger(name: &str, arch: Arch, c: u8) -> Asm {
    let mut a = Asm::new(name);
    data_task(&mut a, arch, c, 2, WaveletArgs::Word, |a| a.log(0, 2));
    a
}

/// A trace sink the test can read back while the simulator holds a clone of it.
#[derive(Clone, Default)]
struct Buf(Arc<Mutex<Vec<u8>>>);

impl Write for Buf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("lock").extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_value_is_relayed_along_a_row_on_alternating_colours() {
    const N: u32 = 5;
    for arch in ARCHS {
        let mut classes = Vec::new();
        for k in 0..N {
            let send = (k % 2) as u8;
            let recv = ((k + 1) % 2) as u8;
            let mut a = if k == 0 {
                main_task("source", |a| {
                    a.dsd(DsdOpcode::Mov32, X::D(0x40), &[X::S(1000)])
                })
            } else {
                let mut a = Asm::new("relay");
                data_task(&mut a, arch, recv, 2, WaveletArgs::Word, |a| {
                    a.imm(2, 1);
                    a.bin(BinOp::Add, NumTy::U32, 1, 0, 2);
                    a.store_at(Width::W32, 0x80, 1, 3);
                    if k + 1 < N {
                        a.dsd_with(DsdOpcode::Mov32, X::D(0x40), &[X::R(1)], Dsd::regs(4));
                    }
                });
                a
            };
            a.fabout(0x40, send, 3, 1, 0);
            a.bind_output(arch, 3, send);
            classes.push(a.build());
        }
        let img = alternating_row(arch, classes);
        let sim = run(&img);
        for k in 1..N {
            assert_eq!(read32(mem(&sim, k, 0), 0x80), 1000 + k, "PE {k} on {arch}");
        }
        let st = sim.stats();
        // Every hop plus every delivery to a CE.
        assert_eq!(st.wavelet_hops, 2 * u64::from(N - 1), "{arch}");
        assert_eq!(st.pes[1].wavelets_sent, [0, 0, 1, 0, 1], "{arch}");
    }
}

#[test]
fn relay_timing_follows_the_hop_latency() {
    // The same relay on WSE-3 (2-cycle hops) takes longer than on WSE-2 (1-cycle hops),
    // by one cycle per hop.
    let cycles = |arch: Arch, hop: Option<u32>| {
        let mut classes = Vec::new();
        for k in 0..4u32 {
            let (send, recv) = ((k % 2) as u8, ((k + 1) % 2) as u8);
            let mut a = if k == 0 {
                main_task("source", |a| {
                    a.dsd(DsdOpcode::Mov32, X::D(0x40), &[X::S(1)])
                })
            } else {
                let mut a = Asm::new("relay");
                data_task(&mut a, arch, recv, 2, WaveletArgs::Word, |a| {
                    if k < 3 {
                        a.dsd_with(DsdOpcode::Mov32, X::D(0x40), &[X::R(0)], Dsd::regs(4));
                    }
                });
                a
            };
            a.fabout(0x40, send, 3, 1, 0);
            a.bind_output(arch, 3, send);
            classes.push(a.build());
        }
        let img = alternating_row(arch, classes);
        let params = cslsim::SimParams {
            hop_latency: hop,
            ..cslsim::SimParams::default()
        };
        let mut sim = Simulator::with_params(&img, params).expect("load");
        sim.run_until_idle(100_000).expect("run");
        sim.cycle()
    };
    let wse2 = cycles(Arch::Wse2, None);
    assert_eq!(cycles(Arch::Wse2, Some(2)), wse2 + 3);
    assert_eq!(cycles(Arch::Wse3, Some(1)), wse2);
    assert_eq!(cycles(Arch::Wse3, None), wse2 + 3);
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn read_f32s(m: &[u8], at: usize, n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| f32::from_bits(read32(m, at + 4 * i)))
        .collect()
}

#[test]
fn fadds_chain_fabout_fabin_mem_along_a_row() {
    // PE 0 sends x0; PE k adds its x_k to what arrives and sends it on; the last PE
    // stores the element-wise sum. Longer than every buffer on the way (back-pressure).
    const N: u32 = 4;
    const L: u16 = 24;
    let x = |k: u32| -> Vec<f32> {
        (0..L)
            .map(|i| (k + 1) as f32 * i as f32 + 0.25 * k as f32)
            .collect()
    };
    let mut want = x(0);
    for k in 1..N {
        for (w, v) in want.iter_mut().zip(x(k)) {
            *w += v;
        }
    }
    for arch in ARCHS {
        let mut classes = Vec::new();
        for k in 0..N {
            let (send, recv) = ((k % 2) as u8, ((k + 1) % 2) as u8);
            let mut a = main_task("chain", |a| {
                if k == 0 {
                    a.dsd(DsdOpcode::Fmovs, X::D(0x40), &[X::D(0x80)]);
                } else if k + 1 < N {
                    a.dsd(DsdOpcode::Fadds, X::D(0x40), &[X::D(0x60), X::D(0x80)]);
                } else {
                    a.dsd(DsdOpcode::Fadds, X::D(0xa0), &[X::D(0x60), X::D(0x80)]);
                }
            });
            a.fabout(0x40, send, 3, L, 0);
            a.bind_output(arch, 3, send);
            a.fabin(0x60, recv, 2, L, 0);
            a.bind_input(arch, 2, recv);
            a.mem1d(0x80, 0x200, L, 1);
            a.mem1d(0xa0, 0x300, L, 1);
            a.poke(0x200, &f32s(&x(k)));
            classes.push(a.build());
        }
        let img = alternating_row(arch, classes);
        let sim = run(&img);
        let got = read_f32s(mem(&sim, N - 1, 0), 0x300, L.into());
        assert_eq!(got, want, "{arch}");
        let st = sim.stats();
        assert!(
            st.pes.iter().all(|p| p.dsd_elements == u64::from(L)),
            "{arch}"
        );
    }
}

#[test]
fn a_multicast_route_broadcasts_down_a_column() {
    const L: u16 = 10;
    let data: Vec<u32> = (0..u32::from(L)).map(|i| i * i + 7).collect();
    for arch in ARCHS {
        let c = 3;
        let mut src = main_task("src", |a| {
            a.dsd(DsdOpcode::Mov32, X::D(0x40), &[X::D(0x80)])
        });
        src.fabout(0x40, c, 3, L, 0);
        src.bind_output(arch, 3, c);
        src.mem1d(0x80, 0x200, L, 1);
        src.poke(
            0x200,
            &data
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect::<Vec<_>>(),
        );
        let mut dst = main_task("dst", |a| {
            a.dsd(DsdOpcode::Mov32, X::D(0xa0), &[X::D(0x60)])
        });
        dst.fabin(0x60, c, 2, L, 0);
        dst.bind_input(arch, 2, c);
        dst.mem1d(0xa0, 0x300, L, 1);
        let routes = vec![
            route(0, 0, c, &[Ramp], &[South]),
            route(0, 1, c, &[North], &[Ramp, South]),
            route(0, 2, c, &[North], &[Ramp, South]),
            route(0, 3, c, &[North], &[Ramp]),
        ];
        let img = fabric_image(
            arch,
            1,
            4,
            vec![src.build(), dst.build()],
            vec![0, 1, 1, 1],
            routes,
        );
        let sim = run(&img);
        for y in 1..4 {
            let got: Vec<u32> = (0..usize::from(L))
                .map(|i| read32(mem(&sim, 0, y), 0x300 + 4 * i))
                .collect();
            assert_eq!(got, data, "PE(0,{y}) on {arch}");
        }
        let st = sim.stats();
        assert_eq!(
            st.pes[1].wavelets_sent[South.index() as usize],
            u64::from(L)
        );
        assert_eq!(st.pes[1].wavelets_sent[Ramp.index() as usize], u64::from(L));
    }
}

/// The `control` payload that advances the switch with the CE filter on every command.
const ADV: u32 = 0x0940_9249;

#[test]
fn control_wavelets_advance_a_switch_to_four_neighbours_in_turn() {
    // fabric.md §4.1 (topic-06): routes rx RAMP / tx NORTH, pos1 tx WEST, pos2 tx EAST,
    // pos3 tx SOUTH, start at pos1, ring mode. Sending (ctrl, 0, ctrl, 2, ctrl, 4, ctrl, 6)
    // delivers 0 to EAST, 2 to SOUTH, 4 to NORTH, 6 to WEST.
    for arch in ARCHS {
        let c = 4;
        let mut sender = main_task("sender", |a| {
            for i in 0..4 {
                a.dsd(DsdOpcode::Mov32, X::D(0x40), &[X::S(ADV)]);
                a.dsd(DsdOpcode::Mov32, X::D(0x60), &[X::S(2 * i)]);
            }
        });
        sender.fabout(0x40, c, 3, 1, flags::CONTROL);
        sender.fabout(0x60, c, 3, 1, 0);
        sender.bind_output(arch, 3, c);
        let mut recv = Asm::new("recv");
        data_task(&mut recv, arch, c, 2, WaveletArgs::Word, |a| a.log(0, 4));
        let idle = Asm::new("idle");
        let mut centre = route(1, 1, c, &[Ramp], &[North]);
        centre.switches = Some(SwitchConfig {
            positions: [
                SwitchPos {
                    rx: None,
                    tx: Some(vec![West]),
                },
                SwitchPos {
                    rx: None,
                    tx: Some(vec![East]),
                },
                SwitchPos {
                    rx: None,
                    tx: Some(vec![South]),
                },
            ],
            current: 1,
            ring_mode: true,
            pop_mode: PopMode::NoPop,
        });
        let routes = vec![
            centre,
            route(1, 0, c, &[South], &[Ramp]),
            route(1, 2, c, &[North], &[Ramp]),
            route(0, 1, c, &[East], &[Ramp]),
            route(2, 1, c, &[West], &[Ramp]),
        ];
        #[rustfmt::skip]
        let placement = vec![
            2, 1, 2,
            1, 0, 1,
            2, 1, 2,
        ];
        let img = fabric_image(
            arch,
            3,
            3,
            vec![sender.build(), recv.build(), idle.build()],
            placement,
            routes,
        );
        let sim = run(&img);
        assert_eq!(read_log(mem(&sim, 2, 1)), vec![0], "east on {arch}");
        assert_eq!(read_log(mem(&sim, 1, 2)), vec![2], "south on {arch}");
        assert_eq!(read_log(mem(&sim, 1, 0)), vec![4], "north on {arch}");
        assert_eq!(read_log(mem(&sim, 0, 1)), vec![6], "west on {arch}");
        // Four advances from position 1: 2, 3, 0 (ring), 1.
        assert_eq!(
            sim.router(1, 1).expect("router").switch_position(c),
            Some(1)
        );
    }
}

#[test]
fn a_control_wavelet_enters_a_control_task() {
    for arch in ARCHS {
        let c = 6;
        // Command 0 NOP without the CE filter, task id 40, data 0x1234.
        let payload = (40 << 16) | 0x1234;
        let mut sender = main_task("sender", |a| {
            a.dsd(DsdOpcode::Mov32, X::D(0x40), &[X::S(payload)]);
            // A data wavelet after it reaches the data task, in order.
            a.dsd(DsdOpcode::Mov32, X::D(0x60), &[X::S(77)]);
        });
        sender.fabout(0x40, c, 3, 1, flags::CONTROL);
        sender.fabout(0x60, c, 3, 1, 0);
        sender.bind_output(arch, 3, c);
        let mut recv = Asm::new("recv");
        let ctl = recv.func("on_control", 8, 1, 0);
        recv.log(0, 2);
        recv.ret_void();
        recv.control_task(40, ctl, WaveletArgs::Low16);
        data_task(&mut recv, arch, c, 2, WaveletArgs::Word, |a| a.log(0, 2));
        let img = pair_image(arch, c, sender, recv);
        let sim = run(&img);
        assert_eq!(read_log(mem(&sim, 1, 0)), vec![0x1234, 77], "{arch}");
    }
}

/// A row: PE 0 sends `values` on colour 1; PE 1 has `cfg` applied to colour 1, delivers to
/// its CE and forwards east; PE 2 receives everything. Returns the logs of PEs 1 and 2.
fn filtered(arch: Arch, values: &[u32], filter: FilterConfig) -> (Vec<u32>, Vec<u32>) {
    let c = 1;
    let values = values.to_vec();
    let mut sender = main_task("sender", |a| {
        for &v in &values {
            a.dsd(DsdOpcode::Mov32, X::D(0x40), &[X::S(v)]);
        }
    });
    sender.fabout(0x40, c, 3, 1, 0);
    sender.bind_output(arch, 3, c);
    let recv = logger("recv", arch, c);
    let mut mid = route(1, 0, c, &[West], &[Ramp, East]);
    mid.filter = Some(filter);
    let routes = vec![
        route(0, 0, c, &[Ramp], &[East]),
        mid,
        route(2, 0, c, &[West], &[Ramp]),
    ];
    let img = fabric_image(
        arch,
        3,
        1,
        vec![sender.build(), recv.build()],
        vec![0, 1, 1],
        routes,
    );
    let sim = run(&img);
    (read_log(mem(&sim, 1, 0)), read_log(mem(&sim, 2, 0)))
}

#[test]
fn a_range_filter_selects_what_reaches_the_ce_but_forwarding_is_unaffected() {
    // Index (high half) i, data 100 + i; the filter passes indices 2..=4.
    let values: Vec<u32> = (0..8).map(|i| (i << 16) | (100 + i)).collect();
    for arch in ARCHS {
        let (mid, last) = filtered(
            arch,
            &values,
            FilterConfig {
                min_idx: 2,
                max_idx: 4,
                ..FilterConfig::new(FilterKind::Range)
            },
        );
        assert_eq!(mid, vec![values[2], values[3], values[4]], "{arch}");
        assert_eq!(last, values, "{arch}");
    }
}

#[test]
fn a_counter_filter_cycles_through_limit1_plus_one_counts() {
    // count_data, limit1 = 5, max_counter = 4: the counter runs 0..=5 and a wavelet passes
    // when it finds the counter at most 4, so every sixth data wavelet is rejected.
    let values: Vec<u32> = (1..=12).collect();
    let (mid, last) = filtered(
        Arch::Wse2,
        &values,
        FilterConfig {
            count_data: true,
            limit1: 5,
            max_counter: 4,
            ..FilterConfig::new(FilterKind::Counter)
        },
    );
    let want: Vec<u32> = values.iter().copied().filter(|v| v % 6 != 0).collect();
    assert_eq!(mid, want);
    assert_eq!(last, values);
    // limit1 = 2, max_counter = 0 (the vendor's 2D FFT transpose): one wavelet in three,
    // starting with the one that finds the initial counter at 0.
    for (init, first) in [(0u16, 1u32), (2, 2), (1, 3)] {
        let (mid, _) = filtered(
            Arch::Wse2,
            &values,
            FilterConfig {
                count_data: true,
                limit1: 2,
                max_counter: 0,
                init_counter: init,
                ..FilterConfig::new(FilterKind::Counter)
            },
        );
        let want: Vec<u32> = values
            .iter()
            .copied()
            .filter(|v| v % 3 == first % 3)
            .collect();
        assert_eq!(mid, want, "init_counter {init}");
    }
}

#[test]
fn a_fifo_decouples_two_tasks() {
    // Task 12 pops five words from an empty FIFO asynchronously (it waits); task 11 pushes
    // them synchronously; the pop's completion activates task 13, which logs a marker.
    let src: Vec<u32> = vec![5, 4, 3, 2, 1];
    let mut a = main_task("fifo", |a| {
        a.dsd_with(
            DsdOpcode::Mov32,
            X::D(0xa0),
            &[X::D(0x40)],
            Dsd::on_ut(1).activate(13),
        );
        a.activate(11, 5);
    });
    let push = a.func("push", 8, 0, 0);
    a.dsd(DsdOpcode::Mov32, X::D(0x40), &[X::D(0x80)]);
    a.ret_void();
    a.task(11, push, false, false);
    let done = a.func("done", 8, 0, 0);
    a.imm(0, 0xd0e);
    a.log(0, 1);
    a.ret_void();
    a.task(13, done, false, false);
    a.fifo(0x40, 0x400, 8, 4, 0xff, 0xff);
    a.mem1d(0x80, 0x200, 5, 1);
    a.mem1d(0xa0, 0x300, 5, 1);
    a.poke(
        0x200,
        &src.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>(),
    );
    for arch in ARCHS {
        let img = fabric_image(arch, 1, 1, vec![a.clone().build()], vec![0], vec![]);
        let sim = run(&img);
        let m = mem(&sim, 0, 0);
        let got: Vec<u32> = (0..5).map(|i| read32(m, 0x300 + 4 * i)).collect();
        assert_eq!(got, src, "{arch}");
        assert_eq!(read_log(m), vec![0xd0e], "{arch}");
        // FIFO state: read index 5, count 0.
        assert_eq!(common::read16(m, 0x40 + 28), 5);
        assert_eq!(common::read16(m, 0x40 + 30), 0);
    }
}

#[test]
fn a_synchronous_push_into_a_full_fifo_stops_early() {
    let a = {
        let mut a = main_task("fifo", |a| {
            a.dsd(DsdOpcode::Mov32, X::D(0x40), &[X::D(0x80)]);
            a.imm(1, 0xe0d);
            a.log(1, 2);
        });
        a.fifo(0x40, 0x400, 3, 4, 0xff, 0xff);
        a.mem1d(0x80, 0x200, 5, 1);
        a.poke(0x200, &[1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0]);
        a
    };
    let img = fabric_image(Arch::Wse2, 1, 1, vec![a.build()], vec![0], vec![]);
    let sim = run(&img);
    let m = mem(&sim, 0, 0);
    assert_eq!(read_log(m), vec![0xe0d]);
    assert_eq!(common::read16(m, 0x40 + 30), 3);
    assert_eq!(
        (read32(m, 0x400), read32(m, 0x404), read32(m, 0x408)),
        (1, 2, 3)
    );
}

#[test]
fn an_async_receive_activates_a_task_when_done_while_the_issuer_continues() {
    const L: u16 = 6;
    for arch in ARCHS {
        let c = 2;
        let mut sender = main_task("sender", |a| {
            // Wait a while so that the receiver's task has finished before data arrives.
            for _ in 0..20 {
                a.op(Op::Nop {});
            }
            a.dsd(DsdOpcode::Mov32, X::D(0x40), &[X::D(0x80)]);
        });
        sender.fabout(0x40, c, 3, L, 0);
        sender.bind_output(arch, 3, c);
        sender.mem1d(0x80, 0x200, L, 1);
        sender.poke(
            0x200,
            &(0..u32::from(L))
                .flat_map(|v| (v * 3).to_le_bytes())
                .collect::<Vec<_>>(),
        );
        let mut recv = main_task("recv", |a| {
            a.dsd_with(
                DsdOpcode::Mov32,
                X::D(0xa0),
                &[X::D(0x60)],
                Dsd::on_ut(2).activate(15),
            );
            a.imm(6, 1);
            a.log(6, 7);
        });
        let done = recv.func("done", 8, 0, 0);
        recv.imm(0, 2);
        recv.log(0, 1);
        recv.ret_void();
        recv.task(15, done, false, false);
        recv.fabin(0x60, c, 2, L, 0);
        recv.bind_input(arch, 2, c);
        recv.mem1d(0xa0, 0x300, L, 1);
        let img = pair_image(arch, c, sender, recv);
        let sim = run(&img);
        let m = mem(&sim, 1, 0);
        assert_eq!(
            read_log(m),
            vec![1, 2],
            "{arch}: the issuer logs first, the completion task second"
        );
        let got: Vec<u32> = (0..usize::from(L))
            .map(|i| read32(m, 0x300 + 4 * i))
            .collect();
        assert_eq!(got, (0..u32::from(L)).map(|v| v * 3).collect::<Vec<_>>());
        assert_eq!(sim.stats().pes[1].tasks_started, 2);
    }
}

#[test]
fn two_pes_waiting_for_each_other_deadlock_with_a_report() {
    // Each PE first receives (synchronously) from the other, then sends: neither sends.
    for arch in ARCHS {
        let mut classes = Vec::new();
        for (send, recv) in [(0u8, 1u8), (1, 0)] {
            let mut a = main_task("pe", |a| {
                a.dsd(DsdOpcode::Mov32, X::D(0xa0), &[X::D(0x60)]);
                a.dsd(DsdOpcode::Mov32, X::D(0x40), &[X::S(5)]);
            });
            a.fabout(0x40, send, 3, 1, 0);
            a.bind_output(arch, 3, send);
            a.fabin(0x60, recv, 2, 1, 0);
            a.bind_input(arch, 2, recv);
            a.mem1d(0xa0, 0x300, 1, 1);
            classes.push(a.build());
        }
        let routes = vec![
            route(0, 0, 0, &[Ramp], &[East]),
            route(1, 0, 0, &[West], &[Ramp]),
            route(1, 0, 1, &[Ramp], &[West]),
            route(0, 0, 1, &[East], &[Ramp]),
        ];
        let img = fabric_image(arch, 2, 1, classes, vec![0, 1], routes);
        let mut sim = Simulator::new(&img).expect("load");
        let err = sim.run_until_idle(100_000).expect_err("deadlock");
        let SimError::Deadlock { waiting, stuck, .. } = &err else {
            panic!("{err}")
        };
        assert!(stuck.is_empty(), "{err}");
        assert_eq!(waiting.len(), 2, "{err}");
        for (w, (x, color)) in waiting.iter().zip([(0, 1u8), (1, 0)]) {
            assert_eq!(w.pe.rel.x, x);
            let queue = (arch == Arch::Wse3).then_some(2);
            match &w.reason {
                WaitReason::SyncOp {
                    task, op, on, pc, ..
                } => {
                    assert_eq!((*task, *op, *pc), (Some(MAIN), "mov32", 2), "{err}");
                    assert_eq!(
                        *on,
                        WaitOn::InputEmpty {
                            color: Some(color),
                            queue
                        },
                        "{err}"
                    );
                }
                other => panic!("{other:?}"),
            }
        }
        let msg = err.to_string();
        assert!(
            msg.contains("PE(0,0) [fabric (4,1)]: task 10 in `main` is held by synchronous @mov32"),
            "{msg}"
        );
        assert!(msg.contains("waits for a wavelet on"), "{msg}");
    }
}

#[test]
fn wavelets_held_by_a_blocked_data_task_are_reported_where_they_are_stuck() {
    // PE 0 sends 20 wavelets; PE 1's data task is blocked. WSE-2: 4 in PE 1's CE queue,
    // 4 in its router's WEST buffer, 6 in PE 0's output queue 3; the sender waits.
    let c = 2;
    let mut sender = main_task("sender", |a| {
        a.dsd(DsdOpcode::Mov32, X::D(0x40), &[X::S(9)])
    });
    sender.fabout(0x40, c, 3, 20, 0);
    let mut recv = logger("recv", Arch::Wse2, c);
    recv.info.initially_blocked |= 1 << c;
    let img = pair_image(Arch::Wse2, c, sender, recv);
    let mut sim = Simulator::new(&img).expect("load");
    let err = sim.run_until_idle(100_000).expect_err("deadlock");
    let SimError::Deadlock { waiting, stuck, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(waiting.len(), 1, "{err}");
    assert!(
        matches!(
            &waiting[0].reason,
            WaitReason::SyncOp {
                on: WaitOn::OutputFull { color: 2, queue: 3 },
                ..
            }
        ),
        "{err}"
    );
    let places: Vec<(u32, StuckPlace, u32, StuckWhy)> = stuck
        .iter()
        .map(|s| (s.pe.rel.x, s.place, s.count, s.why))
        .collect();
    assert_eq!(
        places,
        vec![
            (0, StuckPlace::RouterInput(Ramp), 6, StuckWhy::Backpressure),
            (1, StuckPlace::RouterInput(West), 4, StuckWhy::Backpressure),
            (
                1,
                StuckPlace::CeInput { queue: None },
                4,
                StuckWhy::ChannelBlocked
            ),
        ],
        "{err}"
    );
    let msg = err.to_string();
    assert!(msg.contains("stuck: PE(1,0) [fabric (5,1)]: 4 wavelet(s) of colour 2 in the CE input buffer: its task id is blocked"), "{msg}");
}

/// Runs a two-PE image where PE 0 sends one wavelet on colour 5 with the given routes.
fn send_one(arch: Arch, routes: Vec<csl_arch::image::ColorConfig>, width: u32) -> SimError {
    let mut sender = main_task("sender", |a| {
        a.dsd(DsdOpcode::Mov32, X::D(0x40), &[X::S(1)])
    });
    sender.fabout(0x40, 5, 3, 1, 0);
    sender.bind_output(arch, 3, 5);
    let idle = Asm::new("idle");
    let img = fabric_image(
        arch,
        width,
        1,
        vec![sender.build(), idle.build()],
        (0..width).map(|i| i.min(1)).collect(),
        routes,
    );
    let mut sim = Simulator::new(&img).expect("load");
    sim.run_until_idle(10_000).expect_err("routing error")
}

#[test]
fn wavelets_on_unconfigured_colours_and_off_the_edge_are_errors() {
    for arch in ARCHS {
        let err = send_one(arch, vec![route(0, 0, 5, &[Ramp], &[East])], 2);
        let SimError::Routing {
            pe,
            color,
            kind,
            cycle,
        } = &err
        else {
            panic!("{err}")
        };
        assert_eq!(
            (pe.rel.x, *color, *kind),
            (1, 5, RoutingError::Unrouted { from: West }),
            "{err}"
        );
        assert!(*cycle > 0);
        assert!(
            err.to_string()
                .contains("routing error on PE(1,0) [fabric (5,1)], colour 5"),
            "{err}"
        );

        let err = send_one(arch, vec![route(0, 0, 5, &[Ramp], &[East])], 1);
        assert!(
            matches!(
                err,
                SimError::Routing {
                    kind: RoutingError::OffEdge { dir: East },
                    color: 5,
                    ..
                }
            ),
            "{err}"
        );
        let err = send_one(
            arch,
            vec![
                route(0, 0, 5, &[Ramp], &[East]),
                route(1, 0, 5, &[North], &[Ramp]),
            ],
            2,
        );
        assert!(
            matches!(
                err,
                SimError::Routing {
                    kind: RoutingError::NotAccepted { from: West },
                    ..
                }
            ),
            "{err}"
        );
    }
    // WSE-3: delivery to a CE needs an input queue bound to the colour.
    let err = send_one(
        Arch::Wse3,
        vec![
            route(0, 0, 5, &[Ramp], &[East]),
            route(1, 0, 5, &[West], &[Ramp]),
        ],
        2,
    );
    assert!(
        matches!(
            err,
            SimError::Routing {
                kind: RoutingError::NoInputQueue,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn teardown_holds_a_colour_until_the_teardown_task_exits_it() {
    use csl_arch::fabric::{TEARDOWN_TASK_ID, mmio};
    let c = 7;
    // Command 0 NOP (popped by the sender's router), command 1 TEARDOWN with the CE filter.
    let payload = control::with_command(0, 1, control::TEARDOWN | control::CE_FILTER);
    let mut sender = main_task("sender", |a| {
        a.dsd(DsdOpcode::Mov32, X::D(0x40), &[X::S(payload)]);
        for v in 1..=3 {
            a.dsd(DsdOpcode::Mov32, X::D(0x60), &[X::S(v)]);
        }
    });
    sender.fabout(0x40, c, 3, 1, flags::CONTROL);
    sender.fabout(0x60, c, 3, 1, 0);
    let mut recv = logger("recv", Arch::Wse2, c);
    let td = recv.func("teardown", 8, 0, 0);
    recv.imm(0, mmio::TEARDOWN_PENDING);
    recv.load(Width::W16, 1, 0);
    recv.log(1, 2);
    recv.imm(0, mmio::TEARDOWN_EXIT);
    recv.imm(1, u32::from(c));
    recv.store(Width::W16, 0, 1);
    recv.ret_void();
    recv.task(TEARDOWN_TASK_ID, td, false, false);
    let mut first = route(0, 0, c, &[Ramp], &[East]);
    first.switches = Some(SwitchConfig {
        pop_mode: PopMode::AlwaysPop,
        ..SwitchConfig::default()
    });
    let routes = vec![first, route(1, 0, c, &[West], &[Ramp])];
    let img = fabric_image(
        Arch::Wse2,
        2,
        1,
        vec![sender.build(), recv.build()],
        vec![0, 1],
        routes,
    );
    let sim = run(&img);
    assert_eq!(read_log(mem(&sim, 1, 0)), vec![1 << c, 1, 2, 3]);
    assert!(!sim.router(1, 0).expect("router").in_teardown(c));
}

/// PE 1 of a 3×1 row sends `messages` 2-wavelet messages (values 1, 2, …, each sent twice)
/// on colour 3 with `advance_switch`, through its router's switch `positions` (position 0
/// sends EAST); PEs 2 and 0 log what reaches them. Returns (east log, west log, the final
/// switch position).
fn advance_switch_run(
    messages: u32,
    positions: [SwitchPos; 3],
) -> (Vec<u32>, Vec<u32>, Option<u8>) {
    let c = 3;
    let mut sender = main_task("sender", |a| {
        for v in 1..=messages {
            a.dsd(DsdOpcode::Mov32, X::D(0x40), &[X::S(v)]);
        }
    });
    sender.fabout(0x40, c, 3, 2, flags::ADVANCE_SWITCH);
    let recv = logger("recv", Arch::Wse2, c);
    let mut mid = route(1, 0, c, &[Ramp], &[East]);
    mid.switches = Some(SwitchConfig {
        positions,
        ..SwitchConfig::default()
    });
    let routes = vec![
        mid,
        route(0, 0, c, &[East], &[Ramp]),
        route(2, 0, c, &[West], &[Ramp]),
    ];
    let img = fabric_image(
        Arch::Wse2,
        3,
        1,
        vec![sender.build(), recv.build()],
        vec![1, 0, 1],
        routes,
    );
    let sim = run(&img);
    let position = sim.router(1, 0).expect("router").switch_position(c);
    (
        read_log(mem(&sim, 2, 0)),
        read_log(mem(&sim, 0, 0)),
        position,
    )
}

#[test]
fn a_fabout_with_advance_switch_flips_its_route_after_the_last_wavelet() {
    // Two messages: the first goes EAST (position 0), the second WEST (position 1).
    let west = SwitchPos {
        rx: None,
        tx: Some(vec![West]),
    };
    let (east, west_log, pos) =
        advance_switch_run(2, [west, SwitchPos::default(), SwitchPos::default()]);
    assert_eq!(east, vec![1, 1]);
    assert_eq!(west_log, vec![2, 2]);
    // Advanced twice: position 1 has no successor and ring mode is off, so it stays.
    assert_eq!(pos, Some(1));
}

#[test]
fn switch_positions_compose_one_side_at_a_time() {
    // PE 1 turns from sending EAST to sending WEST in one step (pos1 = tx WEST), then
    // re-states its input (pos2 = rx RAMP). pos2 keeps pos1's output, not pos0's: three
    // messages go EAST, WEST, WEST.
    let positions = [
        SwitchPos {
            rx: None,
            tx: Some(vec![West]),
        },
        SwitchPos {
            rx: Some(Ramp),
            tx: None,
        },
        SwitchPos::default(),
    ];
    let (east, west_log, pos) = advance_switch_run(3, positions);
    assert_eq!(east, vec![1, 1]);
    assert_eq!(west_log, vec![2, 2, 3, 3]);
    assert_eq!(pos, Some(2));
}

#[test]
fn colour_swap_alternates_colours_every_hop() {
    // topic-14: colours 2 and 3 both swap on the x axis; a wavelet sent on 2 is handled as
    // 3 at PE 1, as 2 at PE 2, as 3 at PE 3.
    let values = [11u32, 22];
    let mut sender = main_task("sender", |a| {
        for v in values {
            a.dsd(DsdOpcode::Mov32, X::D(0x40), &[X::S(v)]);
        }
    });
    sender.fabout(0x40, 2, 3, 1, 0);
    let on2 = logger("on2", Arch::Wse2, 2);
    let on3 = logger("on3", Arch::Wse2, 3);
    let mut routes = vec![route(0, 0, 2, &[Ramp], &[East])];
    for x in 1..4 {
        for c in [2, 3] {
            let tx: &[_] = if x < 3 { &[Ramp, East] } else { &[Ramp] };
            let mut r = route(x, 0, c, &[West], tx);
            r.color_swap_x = true;
            routes.push(r);
        }
    }
    let img = fabric_image(
        Arch::Wse2,
        4,
        1,
        vec![sender.build(), on2.build(), on3.build()],
        vec![0, 2, 1, 2],
        routes,
    );
    let sim = run(&img);
    for x in 1..4 {
        assert_eq!(read_log(mem(&sim, x, 0)), values.to_vec(), "PE {x}");
    }
}

#[test]
fn runs_are_deterministic() {
    // A busy 6x6 grid: identical cycles, memories and counters every time.
    let img = cslsim::bench::busy_grid(Arch::Wse3, 6, 6, 20);
    let a = run(&img);
    let b = run(&img);
    assert_eq!(a.cycle(), b.cycle());
    assert_eq!(a.stats(), b.stats());
    for (p, q) in a.pes().iter().zip(b.pes()) {
        assert_eq!(p.memory(), q.memory());
    }
}

#[test]
fn the_busy_grid_benchmark_computes_what_it_should() {
    for arch in ARCHS {
        let (w, h, iters) = (5, 3, 12);
        let img = cslsim::bench::busy_grid(arch, w, h, iters);
        let sim = run(&img);
        for y in 0..h {
            for x in 0..w {
                let want = cslsim::bench::busy_grid_expected(x, iters);
                assert_eq!(
                    read32(mem(&sim, x, y), cslsim::bench::SUM_ADDR as usize),
                    want,
                    "PE({x},{y}) on {arch}"
                );
            }
        }
        let st = sim.stats();
        assert_eq!(st.wavelet_hops, 2 * u64::from((w - 1) * h * iters));
    }
}

fn mem32(m: &[u8], at: usize, n: usize) -> Vec<u32> {
    (0..n).map(|i| read32(m, at + 4 * i)).collect()
}

fn mem16(m: &[u8], at: usize, n: usize) -> Vec<u16> {
    (0..n).map(|i| common::read16(m, at + 2 * i)).collect()
}

fn words(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn run_one(a: Asm) -> Simulator {
    run(&fabric_image(
        Arch::Wse2,
        1,
        1,
        vec![a.build()],
        vec![0],
        vec![],
    ))
}

#[test]
fn mem4d_operands_walk_nested_dimensions() {
    // Read a 3x4 row-major matrix transposed: inner dimension down a column (stride 4),
    // outer across columns (stride 1 - 8 = -7 after the inner one wrapped).
    let m: Vec<u32> = (0..12).collect();
    let mut a = main_task("t", |a| a.dsd(DsdOpcode::Mov32, X::D(0x60), &[X::D(0x40)]));
    a.mem4d(0x40, 0x200, &[3, 4], &[4, -7]);
    a.mem1d(0x60, 0x300, 12, 1);
    a.poke(0x200, &words(&m));
    let sim = run_one(a);
    let want: Vec<u32> = (0..4)
        .flat_map(|c| (0..3).map(move |r| r * 4 + c))
        .collect();
    assert_eq!(mem32(mem(&sim, 0, 0), 0x300, 12), want);
}

#[test]
fn pointer_destinations_reduce_and_scalars_broadcast() {
    let v = [1.5f32, -2.0, 8.25, 0.5, 3.0];
    let mut a = main_task("t", |a| {
        a.dsd(
            DsdOpcode::Fadds,
            X::P(0x500),
            &[X::S(10f32.to_bits()), X::D(0x40)],
        );
        a.dsd(
            DsdOpcode::Fmaxs,
            X::P(0x504),
            &[X::S(f32::NEG_INFINITY.to_bits()), X::D(0x40)],
        );
        // `*p` destination without a scalar first source: each element overwrites.
        a.dsd(DsdOpcode::Fmovs, X::P(0x508), &[X::D(0x40)]);
        // Scalar broadcast, and the length comes from the first DSD source.
        a.dsd(
            DsdOpcode::Fmuls,
            X::D(0x60),
            &[X::D(0x40), X::S(2f32.to_bits())],
        );
        // The length rule skips a zero-length first source.
        a.dsd(DsdOpcode::Fadds, X::D(0x80), &[X::D(0xa0), X::D(0x40)]);
    });
    a.mem1d(0x40, 0x200, 5, 1);
    a.mem1d(0x60, 0x300, 9, 1);
    a.mem1d(0x80, 0x400, 9, 1);
    a.mem1d(0xa0, 0x200, 0, 1);
    a.poke(0x200, &f32s(&v));
    let sim = run_one(a);
    let m = mem(&sim, 0, 0);
    let sum = v.iter().fold(10f32, |acc, x| acc + x);
    assert_eq!(read_f32s(m, 0x500, 3), vec![sum, 8.25, 3.0]);
    assert_eq!(read_f32s(m, 0x300, 6), vec![3.0, -4.0, 16.5, 1.0, 6.0, 0.0]);
    assert_eq!(read_f32s(m, 0x400, 6), vec![3.0, -4.0, 16.5, 1.0, 6.0, 0.0]);
}

#[test]
fn sixteen_bit_ops_wrap_and_strides_step_in_elements() {
    let x: Vec<u16> = vec![0xfffe, 1, 2, 3, 0x8000, 5];
    let mut a = main_task("t", |a| {
        // Every other element, plus 3 (wrapping).
        a.dsd(DsdOpcode::Add16, X::D(0x60), &[X::D(0x40), X::S(3)]);
        // Backwards: base at the last element, stride -1.
        a.dsd(DsdOpcode::Mov16, X::D(0x80), &[X::D(0xa0)]);
        // Arithmetic shift of every element right by one.
        a.dsd(DsdOpcode::Sar16, X::D(0xc0), &[X::D(0xe0), X::S(1)]);
    });
    a.mem1d(0x40, 0x200, 3, 2);
    a.mem1d(0x60, 0x300, 3, 1);
    a.mem1d(0x80, 0x320, 6, 1);
    a.mem1d(0xa0, 0x20a, 6, -1);
    a.mem1d(0xc0, 0x340, 6, 1);
    a.mem1d(0xe0, 0x200, 6, 1);
    a.poke(
        0x200,
        &x.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>(),
    );
    let sim = run_one(a);
    let m = mem(&sim, 0, 0);
    assert_eq!(mem16(m, 0x300, 3), vec![1, 5, 0x8003]);
    assert_eq!(
        mem16(m, 0x320, 6),
        x.iter().rev().copied().collect::<Vec<_>>()
    );
    let sar: Vec<u16> = x.iter().map(|&v| ((v as i16) >> 1) as u16).collect();
    assert_eq!(mem16(m, 0x340, 6), sar);
}

#[test]
fn dsd_set_copy_and_index_offsets() {
    use csl_arch::dsd::DsdField;
    let mut a = main_task("t", |a| {
        // copy 16 bytes 0x200 -> 0x280
        a.imm(0, 0x280);
        a.imm(1, 0x200);
        a.op(Op::Copy {
            dst: Reg(0),
            src: Reg(1),
            bytes: 16,
        });
        // Retarget the source descriptor: base 0x280, +4 bytes, length 2, stride 1.
        let set = |a: &mut Asm, field: DsdField, v: u32| {
            a.imm(2, 0x40);
            a.imm(3, v);
            a.op(Op::DsdSet {
                field,
                desc: Reg(2),
                val: Reg(3),
            });
        };
        set(a, DsdField::Base, 0x280);
        set(a, DsdField::AddBase, 4);
        set(a, DsdField::Length, 2);
        set(a, DsdField::Stride, 1);
        a.dsd_with(DsdOpcode::Mov32, X::D(0x60), &[X::D(0x40)], Dsd::regs(4));
        // A memory DSD with wavelet_index_offset adds `.index` words to its base.
        a.dsd_with(
            DsdOpcode::Mov16,
            X::D(0x80),
            &[X::D(0xa0)],
            Dsd::regs(4).index(3),
        );
        // A negative byte offset.
        set(a, DsdField::AddBase, (-4i32) as u32);
        a.dsd_with(DsdOpcode::Mov32, X::D(0xc0), &[X::D(0x40)], Dsd::regs(4));
    });
    a.mem1d(0x40, 0x200, 4, 2);
    a.mem1d(0x60, 0x300, 2, 1);
    a.mem1d(0x80, 0x310, 1, 1);
    a.mem1d_flags(0xa0, 0x200, 1, 1, flags::WAVELET_INDEX_OFFSET);
    a.mem1d(0xc0, 0x320, 2, 1);
    a.poke(0x200, &words(&[10, 20, 30, 40]));
    let sim = run_one(a);
    let m = mem(&sim, 0, 0);
    assert_eq!(mem32(m, 0x280, 4), vec![10, 20, 30, 40]);
    assert_eq!(mem32(m, 0x300, 2), vec![20, 30]);
    // Word 3 from 0x200 is the high half of element 1 (20): 0.
    assert_eq!(common::read16(m, 0x310), 0);
    assert_eq!(mem32(m, 0x320, 2), vec![10, 20]);
    let pe = &sim.stats().pes[0];
    assert_eq!(pe.dsd_elements, 2 + 1 + 2);
}

#[test]
fn sixteen_bit_fabout_puts_the_index_in_the_high_half() {
    let c = 1;
    let mut sender = main_task("sender", |a| {
        a.dsd_with(
            DsdOpcode::Mov16,
            X::D(0x40),
            &[X::D(0x60)],
            Dsd::default().index(7),
        )
    });
    sender.fabout(0x40, c, 3, 3, flags::WAVELET_INDEX_OFFSET);
    sender.mem1d(0x60, 0x200, 3, 1);
    sender.poke(0x200, &[0x11, 0, 0x22, 0, 0x33, 0]);
    let mut recv = Asm::new("recv");
    data_task(&mut recv, Arch::Wse2, c, 2, WaveletArgs::Pair16, |a| {
        a.log(0, 2);
        a.log(1, 2);
    });
    let img = pair_image(Arch::Wse2, c, sender, recv);
    let sim = run(&img);
    assert_eq!(read_log(mem(&sim, 1, 0)), vec![0x11, 7, 0x22, 7, 0x33, 7]);
}

#[test]
fn a_control_wavelet_terminates_an_unbounded_receive() {
    // The receiver reads an unbounded stream asynchronously until a control wavelet ends
    // it; completion activates the logging task.
    let c = 4;
    let mut sender = main_task("sender", |a| {
        for v in [3, 4, 5] {
            a.dsd(DsdOpcode::Mov32, X::D(0x40), &[X::S(v)]);
        }
        a.dsd(DsdOpcode::Mov32, X::D(0x60), &[X::S(0)]);
    });
    sender.fabout(0x40, c, 3, 1, 0);
    sender.fabout(0x60, c, 3, 1, flags::CONTROL);
    let mut recv = main_task("recv", |a| {
        a.dsd_with(
            DsdOpcode::Fadds,
            X::P(0x500),
            &[X::S(0), X::D(0x60)],
            Dsd::on_ut(c).cfg(cfg::ON_CONTROL_TERMINATE).activate(12),
        );
    });
    let done = recv.func("done", 8, 0, 0);
    recv.imm(0, 0x500);
    recv.load(Width::W32, 1, 0);
    recv.log(1, 2);
    recv.ret_void();
    recv.task(12, done, false, false);
    recv.fabin(0x60, c, 2, csl_arch::dsd::UNBOUNDED_LENGTH, 0);
    let img = pair_image(Arch::Wse2, c, sender, recv);
    // Wavelets carry f32 bits: 3, 4 and 5 are tiny subnormals; compute the sum the same way.
    let sim = run(&img);
    let want = [3u32, 4, 5]
        .iter()
        .fold(0f32, |acc, &b| acc + f32::from_bits(b));
    assert_eq!(read_log(mem(&sim, 1, 0)), vec![want.to_bits()]);
}

#[test]
fn a_busy_microthread_holds_the_next_async_issue() {
    // Two async receives on microthread 2: the second waits for the first, which never
    // completes: the report names both.
    let c = 2;
    let mut recv = main_task("recv", |a| {
        a.dsd_with(DsdOpcode::Mov32, X::D(0xa0), &[X::D(0x60)], Dsd::on_ut(2));
        a.dsd_with(DsdOpcode::Mov32, X::D(0xa0), &[X::D(0x60)], Dsd::on_ut(2));
    });
    recv.fabin(0x60, c, 2, 1, 0);
    recv.mem1d(0xa0, 0x300, 1, 1);
    let img = fabric_image(Arch::Wse2, 1, 1, vec![recv.build()], vec![0], vec![]);
    let mut sim = Simulator::new(&img).expect("load");
    let err = sim.run_until_idle(10_000).expect_err("deadlock");
    let SimError::Deadlock { waiting, .. } = &err else {
        panic!("{err}")
    };
    assert!(
        matches!(
            &waiting[0].reason,
            WaitReason::MicrothreadBusy {
                ut: 2,
                task: Some(MAIN),
                pc: 5,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("busy microthread 2"), "{err}");
}

#[test]
fn the_tracer_prints_instructions_and_wavelets_of_the_chosen_pe() {
    let c = 1;
    let mut sender = main_task("sender", |a| {
        a.dsd(DsdOpcode::Mov32, X::D(0x40), &[X::S(0xabc)])
    });
    sender.fabout(0x40, c, 3, 1, 0);
    let recv = logger("recv", Arch::Wse2, c);
    let img = pair_image(Arch::Wse2, c, sender, recv);
    let buf = Buf::default();
    let mut sim = Simulator::new(&img).expect("load");
    sim.set_trace(Some(cslsim::Tracer::new(
        cslsim::TraceFilter::Pe { x: 1, y: 0 },
        Box::new(buf.clone()),
    )));
    sim.run_until_idle(10_000).expect("run");
    let text = String::from_utf8(buf.0.lock().expect("lock").clone()).expect("utf-8");
    assert!(
        text.contains("PE(1,0): router colour 1 data 0x00000abc from WEST -> RAMP"),
        "{text}"
    );
    assert!(text.contains("PE(1,0): task 1 starts `recv`"), "{text}");
    assert!(
        text.contains("PE(1,0): pc 0 in `recv`: imm dst=r2, imm=256"),
        "{text}"
    );
    assert!(!text.contains("PE(0,0)"), "{text}");
    let _ = LOG_COUNT;
}

/// A 2x2 program: a data task on colour 5 sends `3 * w` out on colour 6 (no route: only a
/// streaming `memcpy_d2h` takes it).
fn streaming_program(arch: Arch) -> Image {
    let mut a = Asm::new("stream");
    data_task(&mut a, arch, 5, 2, WaveletArgs::Word, |a| {
        a.imm(2, 3);
        a.bin(BinOp::Mul, NumTy::U32, 1, 0, 2);
        a.dsd_with(DsdOpcode::Mov32, X::D(0x40), &[X::R(1)], Dsd::regs(4));
    });
    a.fabout(0x40, 6, 3, 1, 0);
    a.bind_output(arch, 3, 6);
    fabric_image(arch, 2, 2, vec![a.build()], vec![0; 4], vec![])
}

#[test]
fn streaming_memcpy_feeds_data_tasks_and_collects_their_output() {
    use cslsim::{MemcpyOrder, Region, SdkRuntime, Transfer};
    const L: u32 = 5;
    for arch in ARCHS {
        let mut rt = SdkRuntime::from_image(streaming_program(arch));
        rt.load().expect("load");
        rt.run().expect("run");
        let input: Vec<u32> = (0..4 * L).map(|i| i * 7 + 1).collect();
        rt.h2d(5, &input, Region::new(0, 0, 2, 2, L), Transfer::STREAM)
            .expect("h2d");
        let mut out = vec![0u32; (4 * L) as usize];
        rt.d2h(
            &mut out,
            6,
            Region::new(0, 0, 2, 2, L),
            Transfer::STREAM.order(MemcpyOrder::ColMajor),
        )
        .expect("d2h");
        // PE (i, j) element k: row-major in, column-major out.
        for j in 0..2 {
            for i in 0..2 {
                for k in 0..L {
                    let src = input[((j * 2 + i) * L + k) as usize];
                    let got = out[(j + i * 2 + k * 4) as usize];
                    assert_eq!(got, 3 * src, "PE ({i},{j}) element {k} on {arch}");
                }
            }
        }
        // Asking for more than the PEs send is a deadlock naming each PE's shortfall.
        let mut more = vec![0u32; 4];
        let err = rt
            .d2h(&mut more, 6, Region::new(0, 0, 2, 2, 1), Transfer::STREAM)
            .expect_err("nothing to collect");
        let cslsim::HostError::Sim(SimError::Deadlock {
            waiting, command, ..
        }) = &err
        else {
            panic!("{err}")
        };
        assert_eq!(command, "memcpy_d2h (streaming, colour 6)");
        assert_eq!(waiting.len(), 4, "{err}");
        assert_eq!(
            waiting[3].reason,
            WaitReason::Stream {
                h2d: false,
                color: 6,
                done: 0,
                total: 1
            },
            "{err}"
        );
        assert!(
            err.to_string()
                .contains("sent 0 of 1 wavelets for the host on colour 6"),
            "{err}"
        );
    }
}

#[test]
fn a_streaming_h2d_nobody_reads_deadlocks_on_back_pressure() {
    use cslsim::{Region, SdkRuntime, SimParams, Transfer};
    let img = fabric_image(
        Arch::Wse2,
        1,
        1,
        vec![Asm::new("idle").build()],
        vec![0],
        vec![],
    );
    // The command completes once every wavelet has left the host: the colour's CE input
    // buffer (depth 4 on WSE-2) plus the memcpy path (h2d_path_depth) hold them.
    for path in [4u32, 0, 2] {
        let params = SimParams {
            h2d_path_depth: path,
            ..SimParams::default()
        };
        let mut rt = SdkRuntime::from_image(img.clone()).with_params(params);
        rt.load().expect("load");
        rt.run().expect("run");
        let h2d = |rt: &mut SdkRuntime, n: u32| {
            rt.h2d(
                9,
                &vec![1; n as usize],
                Region::new(0, 0, 1, 1, n),
                Transfer::STREAM,
            )
        };
        let fits = 4 + path;
        h2d(&mut rt, fits).expect("fits");
        // Its wavelets stay in the path after the command; the next stream queues behind.
        let err = h2d(&mut rt, 1).expect_err("deadlock");
        let cslsim::HostError::Sim(SimError::Deadlock { waiting, stuck, .. }) = &err else {
            panic!("{err}")
        };
        assert_eq!(
            waiting[0].reason,
            WaitReason::Stream {
                h2d: true,
                color: 9,
                done: 0,
                total: 1
            },
            "path {path}: {err}"
        );
        // CE input buffers are listed first, then the memcpy path.
        let places: Vec<(StuckPlace, u32, StuckWhy)> =
            stuck.iter().map(|s| (s.place, s.count, s.why)).collect();
        let mut want = vec![(StuckPlace::CeInput { queue: None }, 4, StuckWhy::NoConsumer)];
        if path > 0 {
            want.push((StuckPlace::HostPath, path, StuckWhy::Backpressure));
        }
        assert_eq!(places, want, "path {path}: {err}");
        // A stream one longer than that cannot complete.
        let mut rt = SdkRuntime::from_image(img.clone()).with_params(params);
        rt.load().expect("load");
        rt.run().expect("run");
        let err = h2d(&mut rt, fits + 1).expect_err("deadlock");
        assert!(
            err.to_string().contains(&format!(
                "took {fits} of {} streamed host wavelets on colour 9",
                fits + 1
            )),
            "path {path}: {err}"
        );
    }
}

#[test]
fn pop_modes_let_one_control_wavelet_drive_a_chain_of_routers() {
    // Commands (NOP, ADV, ADV): PE 0 pops the NOP (pop_on_advance_nop), PE 1 advances and
    // pops (pop_on_advance), PE 2 (no switch positions, no pop) cannot advance. The control
    // wavelet leaves PE 1 on its old position (EAST); the data after it is delivered to PE
    // 1's CE by position 1.
    let c = 2;
    let f = control::SWITCH_ADV | control::CE_FILTER;
    let payload = control::with_command(control::with_command(0, 1, f), 2, f);
    let mut sender = main_task("sender", |a| {
        a.dsd(DsdOpcode::Mov32, X::D(0x40), &[X::S(payload)]);
        a.dsd(DsdOpcode::Mov32, X::D(0x60), &[X::S(42)]);
    });
    sender.fabout(0x40, c, 3, 1, flags::CONTROL);
    sender.fabout(0x60, c, 3, 1, 0);
    let recv = logger("recv", Arch::Wse2, c);
    let mut first = route(0, 0, c, &[Ramp], &[East]);
    first.switches = Some(SwitchConfig {
        pop_mode: PopMode::PopOnAdvanceNop,
        ..SwitchConfig::default()
    });
    let mut mid = route(1, 0, c, &[West], &[East]);
    mid.switches = Some(SwitchConfig {
        positions: [
            SwitchPos {
                rx: None,
                tx: Some(vec![Ramp]),
            },
            SwitchPos::default(),
            SwitchPos::default(),
        ],
        pop_mode: PopMode::PopOnAdvance,
        ..SwitchConfig::default()
    });
    let routes = vec![first, mid, route(2, 0, c, &[West], &[Ramp])];
    let img = fabric_image(
        Arch::Wse2,
        3,
        1,
        vec![sender.build(), recv.build()],
        vec![0, 1, 1],
        routes,
    );
    let sim = run(&img);
    assert_eq!(read_log(mem(&sim, 1, 0)), vec![42]);
    assert_eq!(read_log(mem(&sim, 2, 0)), Vec::<u32>::new());
    assert_eq!(
        sim.router(1, 0).expect("router").switch_position(c),
        Some(1)
    );
    assert_eq!(
        sim.router(2, 0).expect("router").switch_position(c),
        Some(0)
    );
    // The control wavelet crossed both links; the data wavelet only the first.
    let st = sim.stats();
    assert_eq!(st.pes[1].wavelets_sent[East.index() as usize], 1);
    assert_eq!(st.pes[1].wavelets_sent[Ramp.index() as usize], 1);
}

/// topic-14 on four PEs: PE 0's data task takes each streamed word (colour 6), blocks
/// itself, and sends the word on colour 3 with an asynchronous `mov32` that unblocks it.
/// Colours 2 and 3 both swap on the x axis, so the word is handled as 3 at PE 0 (RAMP
/// arrivals do not swap), 2 at PE 1, 3 at PE 2, 2 at PE 3. Every PE adds the word to `sum`
/// on colour 2 and twice the word on colour 3.
fn colour_swap_stream_program() -> Image {
    const SUM: u16 = 0x300;
    let adder = |a: &mut Asm, c: u8, times: u32| {
        data_task(a, Arch::Wse2, c, 0, WaveletArgs::Word, |a| {
            a.imm(2, times);
            a.bin(BinOp::Mul, NumTy::U32, 1, 0, 2);
            a.imm(3, u32::from(SUM));
            a.load(Width::W32, 4, 3);
            a.bin(BinOp::Add, NumTy::U32, 4, 4, 1);
            a.store(Width::W32, 3, 4);
        });
    };
    let class = |head: bool| {
        let mut a = Asm::new(if head { "head" } else { "tail" });
        adder(&mut a, 2, 1);
        adder(&mut a, 3, 2);
        if head {
            data_task(&mut a, Arch::Wse2, 6, 0, WaveletArgs::Word, |a| {
                a.imm(1, 6);
                a.op(Op::Block { id: Reg(1) });
                a.imm(2, 0x200);
                a.store(Width::W32, 2, 0);
                a.dsd_with(
                    DsdOpcode::Mov32,
                    X::D(0x40),
                    &[X::D(0x60)],
                    Dsd::regs(4).cfg(cfg::ASYNC).ut(2).unblock(6),
                );
            });
            a.fabout(0x40, 3, 2, 1, 0);
            a.mem1d(0x60, 0x200, 1, 1);
        }
        a.export_tensor("sum", 0x10, SUM);
        a.build()
    };
    let mut routes = Vec::new();
    for x in 0..4 {
        for c in [2, 3] {
            let rx: &[_] = if x == 0 { &[Ramp] } else { &[West] };
            let tx: &[_] = if x < 3 { &[Ramp, East] } else { &[Ramp] };
            let mut r = route(x, 0, c, rx, tx);
            r.color_swap_x = true;
            routes.push(r);
        }
    }
    let mut img = common::image(
        4,
        1,
        vec![class(true), class(false)],
        vec![0, 1, 1, 1],
        vec![common::export_tensor("sum", NumTy::U32, true)],
    );
    img.routes = routes.into();
    Image::from_elf(&img.to_elf().expect("encode")).expect("decode")
}

#[test]
fn a_copy_d2h_after_a_stream_sees_every_word_handled_along_a_colour_swap_chain() {
    use cslsim::{MemcpyOrder, Region, SdkRuntime, Transfer};
    let mut rt = SdkRuntime::from_image(colour_swap_stream_program());
    rt.load().expect("load");
    rt.run().expect("run");
    let words: Vec<u32> = (0..5).collect();
    rt.h2d(
        6,
        &words,
        Region::new(0, 0, 1, 1, 5),
        Transfer::STREAM.order(MemcpyOrder::ColMajor),
    )
    .expect("h2d");
    // The stream has entered PE 0's input queue; PE 0 has handled only part of it.
    let id = rt.get_id("sum").expect("sum");
    let mut sum = vec![0u32; 4];
    rt.d2h(
        &mut sum,
        id,
        Region::new(0, 0, 4, 1, 1),
        Transfer::COPY.order(MemcpyOrder::ColMajor),
    )
    .expect("d2h");
    // The copy waited until the region was quiescent: every word reached every PE.
    let total: u32 = words.iter().sum();
    assert_eq!(sum, vec![2 * total, total, 2 * total, total]);
}

/// A message-passing colour (WSE-3) at `(x, 0)`.
fn mp_route(x: u32, color: u8) -> csl_arch::image::ColorConfig {
    csl_arch::image::ColorConfig {
        message_passing: true,
        ..route(x, 0, color, &[], &[])
    }
}

/// Runs a `width`x1 WSE-3 image where PE 0 sends `words` (payload, control?) on colour 5
/// through output queue 3 and PE `width - 1` reads 3 data wavelets from input queue 2
/// (colour 5) to address 0x100.
fn send_message_words(
    words: &[(u32, bool)],
    width: u32,
    routes: Vec<csl_arch::image::ColorConfig>,
) -> Result<Simulator, SimError> {
    send_message_words_from(words, 1, width, routes)
}

/// [`send_message_words`] with PEs `0..senders` all sending `words`.
fn send_message_words_from(
    words: &[(u32, bool)],
    senders: u32,
    width: u32,
    routes: Vec<csl_arch::image::ColorConfig>,
) -> Result<Simulator, SimError> {
    let arch = Arch::Wse3;
    let mut sender = main_task("sender", |a| {
        for &(w, ctrl) in words {
            let d = if ctrl { 0x60 } else { 0x40 };
            a.dsd(DsdOpcode::Mov32, X::D(d), &[X::S(w)]);
        }
    });
    sender.fabout(0x40, 5, 3, 1, 0);
    sender.fabout(0x60, 5, 3, 1, flags::CONTROL);
    sender.bind_output(arch, 3, 5);
    let mut receiver = main_task("receiver", |a| {
        a.dsd(DsdOpcode::Mov32, X::D(0x80), &[X::D(0x40)]);
    });
    receiver.fabin(0x40, 5, 2, 3, 0);
    receiver.mem1d(0x80, 0x100, 3, 1);
    receiver.bind_input(arch, 2, 5);
    let idle = Asm::new("idle");
    let img = fabric_image(
        arch,
        width,
        1,
        vec![sender.build(), idle.build(), receiver.build()],
        (0..width)
            .map(|i| match i {
                i if i + 1 == width => 2,
                i if i < senders => 0,
                _ => 1,
            })
            .collect(),
        routes,
    );
    let mut sim = Simulator::new(&img).expect("load");
    sim.run_until_idle(100_000)?;
    Ok(sim)
}

#[test]
fn message_passing_routes_by_header_and_ends_by_count_or_control() {
    use csl_arch::fabric::message::Header;
    let header = |col, len, ctrl_term| {
        Header {
            col,
            row: 0,
            north: false,
            south: false,
            ctrl_term,
            len,
        }
        .encode()
    };
    let routes = || (0..3).map(|x| mp_route(x, 5)).collect::<Vec<_>>();
    // A message of two wavelets ended by its length, then one ended by a control wavelet:
    // the headers are consumed at the destination, everything else reaches its CE (where
    // the control wavelet, for no control task, is dropped).
    let words = [
        (header(2, 2, false), false),
        (11, false),
        (12, false),
        (header(2, 0, true), false),
        (13, false),
        (0, true),
    ];
    let sim = send_message_words(&words, 3, routes()).unwrap_or_else(|e| panic!("{e}"));
    let r = |x| sim.router(x, 0).expect("router");
    assert_eq!(r(0).wavelets_sent(East), 6);
    assert_eq!(r(1).wavelets_sent(East), 6);
    assert_eq!(r(2).wavelets_sent(Ramp), 4);
    let got: Vec<u32> = (0..3)
        .map(|i| read32(mem(&sim, 2, 0), 0x100 + 4 * i))
        .collect();
    assert_eq!(got, vec![11, 12, 13]);
    // A PE on the path without message passing on the colour: the message would be lost.
    let err = send_message_words(
        &words,
        3,
        vec![
            mp_route(0, 5),
            route(1, 0, 5, &[West], &[East]),
            mp_route(2, 5),
        ],
    )
    .expect_err("routing error");
    assert!(
        matches!(
            err,
            SimError::Routing {
                kind: RoutingError::MessagePassingOff { from: West },
                color: 5,
                ref pe,
                ..
            } if pe.rel.x == 1
        ),
        "{err}"
    );
    // A destination outside the rectangle, and a control wavelet instead of a header.
    let err = send_message_words(&[(header(7, 0, false), false)], 3, routes())
        .expect_err("routing error");
    assert!(
        matches!(
            err,
            SimError::Routing {
                kind: RoutingError::MessageDestination { col: 7, row: 0 },
                ..
            }
        ),
        "{err}"
    );
    let err = send_message_words(&[(0, true)], 3, routes()).expect_err("routing error");
    assert!(
        matches!(
            err,
            SimError::Routing {
                kind: RoutingError::MessageWithoutHeader { from: Ramp },
                ..
            }
        ),
        "{err}"
    );
    // Two messages that need the same link, the first never ended: the second waits for
    // the held path, and the deadlock report says so.
    let open = [(header(2, 0, true), false), (21, false)];
    let err = send_message_words_from(&open, 2, 3, routes()).expect_err("deadlock");
    let SimError::Deadlock { stuck, .. } = &err else {
        panic!("{err}")
    };
    assert!(
        stuck
            .iter()
            .any(|s| s.pe.rel.x == 1 && s.why == StuckWhy::PathHeld),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("another message holds the path it needs"),
        "{err}"
    );
}

/// Everything a run shows: the clock, statistics, every PE's memory, the simulator log,
/// the error if it failed, and the trace of every PE.
fn observe(
    img: &Image,
    threads: usize,
    persistent: bool,
    max_cycles: u64,
) -> (
    u64,
    cslsim::RunStats,
    Vec<Vec<u8>>,
    Vec<String>,
    Option<String>,
) {
    let mut sim = Simulator::new(img).expect("load");
    sim.set_threads(threads);
    sim.set_split_threshold(0);
    sim.set_persistent(persistent);
    let err = sim.run_until_idle(max_cycles).err().map(|e| e.to_string());
    let mems = sim.pes().iter().map(|p| p.memory().to_vec()).collect();
    (sim.cycle(), sim.stats(), mems, sim.log_lines(), err)
}

#[test]
fn runs_are_identical_for_every_thread_count() {
    // Busy grids wider than one worklist word (64 PEs) and narrower ones, both archs, a
    // run cut short by the cycle limit, and a rectangle whose width is not a power of 2.
    let cases = [
        (Arch::Wse2, 16, 16, 24, 1_000_000),
        (Arch::Wse3, 16, 16, 24, 1_000_000),
        (Arch::Wse2, 23, 7, 16, 1_000_000),
        (Arch::Wse3, 5, 3, 12, 1_000_000),
        (Arch::Wse2, 16, 16, 400, 300),
    ];
    for (arch, w, h, iters, max) in cases {
        let img = cslsim::bench::busy_grid(arch, w, h, iters);
        let one = observe(&img, 1, true, max);
        // Persistent batches (SIMULATOR.md §12.7) and a hand-over per phase.
        for threads in [2, 3] {
            for persistent in [true, false] {
                let got = observe(&img, threads, persistent, max);
                assert_eq!(got, one, "{arch} {w}x{h}, {threads} threads, {persistent}");
            }
        }
    }
}

#[test]
fn a_routing_error_mid_run_is_the_same_for_every_thread_count() {
    // A busy grid whose PE (9,12) cannot receive (its colour has no route): the first
    // wavelet to reach it stops the run while every other PE is busy, in a cycle that
    // persistent batches split between threads (the parts before the failing one commit
    // their plans, and the run stops there).
    for arch in [Arch::Wse2, Arch::Wse3] {
        let mut img = cslsim::bench::busy_grid(arch, 16, 16, 40);
        let kept: Vec<_> = img
            .routes
            .iter()
            .map(|r| r.to_config())
            .filter(|c| !(c.x == 9 && c.y == 12 && c.rx.first() == Some(&West)))
            .collect();
        assert_eq!(kept.len() + 1, img.routes.iter().len(), "one route removed");
        img.routes = kept.into();
        let one = observe(&img, 1, true, 1_000_000);
        let Some(err) = &one.4 else {
            panic!("the run should fail");
        };
        assert!(err.contains("routing error on PE(9,12)"), "{err}");
        for threads in [2, 3] {
            for persistent in [true, false] {
                let got = observe(&img, threads, persistent, 1_000_000);
                assert_eq!(got, one, "{arch}, {threads} threads, {persistent}");
            }
        }
    }
}

#[test]
fn traces_are_identical_for_every_thread_count() {
    let img = cslsim::bench::busy_grid(Arch::Wse2, 9, 9, 8);
    let trace = |threads: usize| {
        let buf = Buf::default();
        let mut sim = Simulator::new(&img).expect("load");
        sim.set_threads(threads);
        sim.set_split_threshold(0);
        let filter = cslsim::TraceFilter::parse("all").expect("filter");
        sim.set_trace(Some(cslsim::Tracer::new(filter, Box::new(buf.clone()))));
        sim.run_until_idle(1_000_000).expect("run");
        let out = buf.0.lock().expect("lock").clone();
        String::from_utf8(out).expect("utf-8")
    };
    let one = trace(1);
    assert!(one.contains("router colour") && one.contains("pc "));
    assert_eq!(trace(3), one);
}

#[test]
fn perfetto_timelines_are_identical_for_every_thread_count_and_change_nothing() {
    // 16x16 PEs: four worklist words, so split phases really run on several threads.
    let img = cslsim::bench::busy_grid(Arch::Wse2, 16, 16, 16);
    let cfg = cslsim::PerfettoConfig {
        max_flows: 500,
        ..cslsim::PerfettoConfig::default()
    };
    let run = |threads: usize, record: bool| {
        let mut sim = Simulator::new(&img).expect("load");
        sim.set_threads(threads);
        sim.set_split_threshold(0);
        sim.set_perfetto(record.then_some(cfg));
        sim.run_until_idle(1_000_000).expect("run");
        let json = serde_json::to_string(&sim.perfetto_trace()).expect("json");
        (json, sim.cycle(), sim.stats())
    };
    let (one, cycles, stats) = run(1, true);
    let (_, cycles0, stats0) = run(3, false);
    assert_eq!(
        (cycles, &stats),
        (cycles0, &stats0),
        "recording changed the run"
    );
    for threads in [2, 3] {
        assert!(run(threads, true).0 == one, "{threads} threads");
    }
    let doc: serde_json::Value = serde_json::from_str(&one).expect("parse");
    let drawn = doc["otherData"]["flows_drawn"].as_u64().expect("flows");
    assert!(drawn > 0 && drawn <= 500, "{drawn} arrows");
    let hops = doc["otherData"]["wavelet_hops"].as_u64().expect("hops");
    assert_eq!(hops, 15 * 16 * 16u64, "every eastward hop counted");
}
