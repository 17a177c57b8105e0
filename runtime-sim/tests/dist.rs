//! Distributed runs (`cslsim::dist`): the rectangle cut into strips of rows, one rank per
//! strip, here ranks as threads connected by channels (the same exchange as under MPI,
//! without MPI). Every observable of the run (clock, statistics, every PE's memory, the
//! simulator log, the error) must equal the single-process run's, on every rank.

mod common;

use common::{Asm, X, data_id, fabric_image, read_log, route};
use csl_arch::dsd::DsdOpcode;
use csl_arch::fabric::Arch;
use csl_arch::fabric::Direction::{North, Ramp, South};
use csl_arch::image::{Image, WaveletArgs};
use cslsim::dist::ThreadTransport;
use cslsim::{RunStats, Simulator};

type Seen = (u64, RunStats, Vec<Vec<u8>>, Vec<String>, Option<String>);

fn seen(sim: &Simulator, err: Option<String>) -> Seen {
    let mems = sim.pes().iter().map(|p| p.memory().to_vec()).collect();
    (sim.cycle(), sim.stats(), mems, sim.log_lines(), err)
}

/// The single-process run.
fn single(img: &Image, max: u64) -> Seen {
    let mut sim = Simulator::new(img).expect("load");
    sim.set_threads(1);
    let err = sim.run_until_idle(max).err().map(|e| e.to_string());
    seen(&sim, err)
}

/// The run on `ranks` ranks of `threads` threads each: what every rank sees at the end.
fn distributed(img: &Image, ranks: usize, threads: usize, max: u64) -> Vec<Seen> {
    let handles: Vec<_> = ThreadTransport::mesh(ranks)
        .into_iter()
        .map(|t| {
            let img = img.clone();
            std::thread::spawn(move || {
                let mut sim = Simulator::new(&img).expect("load");
                sim.set_threads(threads);
                sim.set_split_threshold(0);
                sim.set_transport(Box::new(t)).expect("cut");
                let err = sim.run_until_idle(max).err().map(|e| e.to_string());
                sim.gather();
                sim.gather(); // gathering twice (as `stop` and then a tool do) changes nothing
                seen(&sim, err)
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().expect("rank"))
        .collect()
}

#[test]
fn strips_of_rows_give_the_single_process_run() {
    // Wider and narrower than a worklist word (64 PEs), both archs, strips of one row, and
    // a run cut short by the cycle limit.
    let cases = [
        (Arch::Wse2, 16, 12, 20, 1_000_000),
        (Arch::Wse3, 12, 9, 20, 1_000_000),
        (Arch::Wse2, 23, 7, 16, 1_000_000),
        (Arch::Wse3, 5, 3, 12, 1_000_000),
        (Arch::Wse2, 16, 6, 400, 300),
    ];
    for (arch, w, h, iters, max) in cases {
        let img = cslsim::bench::busy_grid(arch, w, h, iters);
        let one = single(&img, max);
        assert!(one.1.wavelet_hops > 0, "the workload sends wavelets");
        for (ranks, threads) in [(2, 1), (3, 1), (3, 2)] {
            for (rank, got) in distributed(&img, ranks, threads, max).iter().enumerate() {
                assert_eq!(got, &one, "{arch} {w}x{h}, rank {rank} of {ranks}");
            }
        }
    }
}

/// A column of `h` PEs: PE (0, 0) sends 20 wavelets south on colour 2, the PEs between
/// forward them, PE (0, h - 1) logs each in a data task (initially blocked if `blocked`:
/// then the wavelets back up across every cut and the run deadlocks with a report).
fn column(arch: Arch, h: u32, blocked: bool) -> Image {
    let c = 2;
    let mut sender = Asm::new("sender");
    let f = sender.func("main", 16, 0, 0);
    sender.dsd(DsdOpcode::Mov32, X::D(0x40), &[X::S(9)]);
    sender.ret_void();
    sender.task(10, f, true, false);
    sender.fabout(0x40, c, 3, 20, 0);
    sender.bind_output(arch, 3, c);
    let relay = Asm::new("relay");
    let mut recv = Asm::new("recv");
    let g = recv.func("recv", 16, 2, 0);
    recv.log(0, 2);
    recv.ret_void();
    recv.bind_input(arch, 2, c);
    recv.data_task(data_id(arch, c, 2), g, WaveletArgs::Word);
    if blocked {
        recv.info.initially_blocked |= 1 << data_id(arch, c, 2);
    }
    let mut routes = vec![route(0, 0, c, &[Ramp], &[South])];
    let mut placement = vec![0];
    for y in 1..h - 1 {
        routes.push(route(0, y, c, &[North], &[South]));
        placement.push(1);
    }
    routes.push(route(0, h - 1, c, &[North], &[Ramp]));
    placement.push(2);
    let classes = vec![sender.build(), relay.build(), recv.build()];
    fabric_image(arch, 1, h, classes, placement, routes)
}

#[test]
fn wavelets_and_back_pressure_cross_the_cuts() {
    for arch in [Arch::Wse2, Arch::Wse3] {
        for blocked in [false, true] {
            let img = column(arch, 6, blocked);
            let one = single(&img, 100_000);
            assert_eq!(one.4.is_some(), blocked, "{:?}", one.4);
            let logged = one.2.last().map(|m| read_log(m)).unwrap_or_default();
            let want = if blocked { vec![] } else { vec![9; 20] };
            assert_eq!(logged, want, "{arch} blocked={blocked}");
            for ranks in [2, 3, 6] {
                for (rank, got) in distributed(&img, ranks, 1, 100_000).iter().enumerate() {
                    assert_eq!(
                        got, &one,
                        "{arch} blocked={blocked}: rank {rank} of {ranks}"
                    );
                }
            }
        }
    }
}

#[test]
fn more_ranks_than_rows_is_an_error() {
    let img = cslsim::bench::busy_grid(Arch::Wse2, 4, 2, 4);
    let mut sim = Simulator::new(&img).expect("load");
    let t = ThreadTransport::mesh(3).into_iter().next().expect("rank");
    let err = sim.set_transport(Box::new(t)).expect_err("3 ranks, 2 rows");
    assert!(err.to_string().contains("at most 2 ranks"), "{err}");
}
