//! `simbench`: simulator throughput on a fully busy 32×32 rectangle
//! ([`cslsim::bench::busy_grid`]: every PE computes in a loop and sends a wavelet east per
//! iteration; its east neighbour sums them with a data task).
//!
//! `cargo run --release -p cslsim --bin simbench [-- --arch wse2|wse3 --size N --iters N
//! --threads N --split N --persistent --no-persistent]`
//!
//! Prints `active PE-cycles/s: N` (busy PE-cycles, i.e. cycles in which a PE executed an
//! instruction, started a task or moved a DSD element, per second of wall time) and
//! `wavelet-hops/s: N` (wavelet moves across router outputs, links and deliveries to a
//! CE, per second).

use clap::Parser;
use csl_arch::fabric::Arch;
use csl_arch::isa::Width;
use cslsim::Simulator;
use cslsim::bench::{busy_grid, busy_grid_expected};
use std::process::ExitCode;
use std::time::Instant;

/// Simulator throughput benchmark.
#[derive(Parser, Debug)]
#[command(name = "simbench")]
struct Cli {
    /// Architecture (`wse2` or `wse3`).
    #[arg(long, default_value = "wse2")]
    arch: String,
    /// Rectangle side in PEs.
    #[arg(long, default_value_t = 32)]
    size: u32,
    /// Wavelets each PE sends (rounded up to a multiple of 4).
    #[arg(long, default_value_t = 2000)]
    iters: u32,
    /// Threads that step the fabric (default: `CSLSIM_THREADS` or the available cores).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    threads: Option<u32>,
    /// Fewest active routers or CEs for a phase to be split among the threads (default:
    /// `cslsim::sim::SPLIT_MIN_ACTIVE`, and `cslsim::sim::BATCH_SPLIT_MIN` in persistent
    /// batches).
    #[arg(long)]
    split: Option<usize>,
    /// Step in persistent batches (SIMULATOR.md §12.7; the default unless
    /// `CSLSIM_PERSISTENT=0`).
    #[arg(long, conflicts_with = "no_persistent")]
    persistent: bool,
    /// Step phase by phase instead (the path of SIMULATOR.md §12.5), for comparisons.
    #[arg(long)]
    no_persistent: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let Some(arch) = Arch::from_name(&cli.arch) else {
        eprintln!("simbench: unknown arch `{}`", cli.arch);
        return ExitCode::FAILURE;
    };
    let n = cli.size.max(1);
    let img = busy_grid(arch, n, n, cli.iters);
    let mut sim = match Simulator::new(&img) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("simbench: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(t) = cli.threads {
        sim.set_threads(t as usize);
    }
    if let Some(s) = cli.split {
        sim.set_split_threshold(s);
    }
    if cli.persistent || cli.no_persistent {
        sim.set_persistent(cli.persistent);
    }
    let start = Instant::now();
    if let Err(e) = sim.run_until_idle(u64::MAX) {
        eprintln!("simbench: {e}");
        return ExitCode::FAILURE;
    }
    let secs = start.elapsed().as_secs_f64().max(1e-9);
    let stats = sim.stats();
    let busy = stats.busy_pe_cycles();
    let ok = (0..n).all(|y| {
        (0..n).all(|x| {
            sim.pe(x, y).is_some_and(|pe| {
                pe.read_word(cslsim::bench::SUM_ADDR, Width::W32)
                    == Some(busy_grid_expected(x, cli.iters))
            })
        })
    });
    println!(
        "simbench: {n}x{n} PEs ({arch}), {} wavelets sent east per PE, {} thread(s)",
        cslsim::bench::rounded_iters(cli.iters),
        sim.threads()
    );
    println!("simulated cycles: {}", stats.cycles);
    println!(
        "busy PE-cycles: {busy} ({:.1}% of {} PE-cycles), instructions: {}",
        100.0 * busy as f64 / (stats.cycles.max(1) * u64::from(n * n)) as f64,
        stats.cycles * u64::from(n * n),
        stats.instructions
    );
    println!(
        "wall time: {secs:.3} s; results {}",
        if ok { "correct" } else { "WRONG" }
    );
    println!("active PE-cycles/s: {}", (busy as f64 / secs) as u64);
    println!(
        "wavelet-hops/s: {}",
        (stats.wavelet_hops as f64 / secs) as u64
    );
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
