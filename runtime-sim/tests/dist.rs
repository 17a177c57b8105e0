//! Distributed runs (`cslsim::dist`): the rectangle cut into strips of rows, one rank per
//! strip, here ranks as threads connected by channels (the same exchange as under MPI,
//! without MPI). Every observable of the run (clock, statistics, every PE's memory, the
//! simulator log, the error) must equal the single-process run's, on every rank.

use csl_arch::fabric::Arch;
use csl_arch::image::Image;
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
        (Arch::Wse2, 16, 16, 24, 1_000_000),
        (Arch::Wse3, 16, 16, 24, 1_000_000),
        (Arch::Wse2, 23, 7, 16, 1_000_000),
        (Arch::Wse3, 5, 3, 12, 1_000_000),
        (Arch::Wse2, 16, 16, 400, 300),
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

#[test]
fn more_ranks_than_rows_is_an_error() {
    let img = cslsim::bench::busy_grid(Arch::Wse2, 4, 2, 4);
    let mut sim = Simulator::new(&img).expect("load");
    let t = ThreadTransport::mesh(3).into_iter().next().expect("rank");
    let err = sim.set_transport(Box::new(t)).expect_err("3 ranks, 2 rows");
    assert!(err.to_string().contains("at most 2 ranks"), "{err}");
}
