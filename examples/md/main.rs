//! `mdlj`: the molecular-dynamics flagship's host program. Reads a LAMMPS dump, compiles
//! the CSL device program for the chosen geometry, runs it on the simulated fabric and
//! prints the energies per step, cycles per timestep and the projected rate.

use csl_arch::Arch;
use csl_examples::md::reference::{Params, System};
use csl_examples::md::rings::Relay;
use csl_examples::md::{device, dump::Dump, energies, geometry::Geometry};
use std::process::ExitCode;

/// Clock used to turn cycles into time: the figure every public csl-examples benchmark
/// uses (not a measured property of the simulator).
const CLOCK_HZ: f64 = 850e6;

/// Runs the MD flagship: reads a LAMMPS dump, compiles the device program for the
/// geometry, simulates it and prints energies per step and cycles per timestep.
#[derive(clap::Parser)]
#[command(name = "mdlj", version)]
struct Cli {
    /// The initial condition (a LAMMPS dump: id type x y z [vx vy vz]).
    #[arg(long, value_name = "PATH")]
    dump: String,
    /// Cells along x.
    #[arg(long, default_value_t = 8)]
    nx: u64,
    /// Cells along y.
    #[arg(long, default_value_t = 8)]
    ny: u64,
    /// z cells folded along x (cells along z = nzx * nzy).
    #[arg(long, default_value_t = 4)]
    nzx: u64,
    /// z cells folded along y.
    #[arg(long, default_value_t = 2)]
    nzy: u64,
    /// Outer timesteps (one energy row each).
    #[arg(long, default_value_t = 10)]
    steps: u64,
    /// Inner timesteps per outer step, 1 to 1000.
    #[arg(long, default_value_t = 1)]
    ninner: u64,
    /// Outer steps between barriers and energy records, 1 to 1000000.
    #[arg(long, default_value_t = 1)]
    nsample: u64,
    /// Timestep.
    #[arg(long, default_value_t = 0.001)]
    dt: f64,
    /// Cutoff radius.
    #[arg(long, default_value_t = 2.5)]
    rcut: f64,
    /// Target architecture: wse2 or wse3.
    #[arg(long, default_value = "wse2")]
    arch: String,
    /// Write the energy rows (step, potential, kinetic) to this TSV file.
    #[arg(long, value_name = "OUT.tsv")]
    energies: Option<String>,
    /// Compare the energies with a reference TSV (max |d| / (1 + max |ref|) <= 1e-5).
    #[arg(long, value_name = "REF.tsv")]
    check: Option<String>,
    /// Compare every row with the host's own f32/f64 integrator (within 2e-6).
    #[arg(long)]
    check_host: bool,
    /// Write the final positions and velocities as a dump.
    #[arg(long, value_name = "PATH")]
    dump_out: Option<String>,
    /// Atoms per cell (default: from the input).
    #[arg(long)]
    nloc: Option<u64>,
    /// Resident records per PE (default: from the input).
    #[arg(long)]
    nmax: Option<u64>,
    /// Pairs per PE (default: from the input).
    #[arg(long)]
    npair: Option<u64>,
    /// Simulated cycles before the run is stopped as a runaway.
    #[arg(long, default_value_t = 2_000_000_000)]
    max_cycles: u64,
    /// Simulator threads (default: the available cores; results are identical for any N).
    #[arg(long)]
    threads: Option<u64>,
    /// How halos travel: switch (default: seed 002's switch machine along x, y and z;
    /// `switch-xyz` is the same), switch-xy (the machine along x and y, z over the
    /// channels), switch-x (the machine along x, express links along y), express
    /// (express links along x and y) or ce (the baseline CE relay).
    #[arg(long, default_value = "switch")]
    relay: String,
    /// Print cycles per phase and the stall fraction.
    #[arg(long)]
    profile: bool,
    /// Progress on standard error: on a terminal one updating line after every launch;
    /// otherwise a line each time this many more steps are done (0: none).
    #[arg(long, value_name = "N", default_value_t = 100)]
    progress_every: u64,
    /// Write a timeline of the run for ui.perfetto.dev (Chrome trace-event JSON).
    #[arg(long, value_name = "TRACE.json")]
    perfetto: Option<String>,
    /// Record only the PEs of this rectangle in the timeline (`X0,Y0:X1,Y1`).
    #[arg(long, value_name = "X0,Y0:X1,Y1", value_parser = cslsim::PeRect::parse,
          requires = "perfetto")]
    perfetto_pes: Option<cslsim::PeRect>,
    /// Write a heatmap (PNG) of per-PE busy/stalled/idle shares and link use.
    #[arg(long, value_name = "OUT.png")]
    heatmap: Option<String>,
    /// Optimisation level of the device program (-O0 turns the IR optimiser off).
    #[arg(short = 'O', value_name = "LEVEL", value_parser = ["0", "1"])]
    opt_level: Option<String>,
}

struct Args {
    dump: String,
    dims: [usize; 4],
    steps: u32,
    ninner: u32,
    nsample: u32,
    dt: f64,
    rcut: f64,
    arch: Arch,
    energies: Option<String>,
    check: Option<String>,
    check_host: bool,
    dump_out: Option<String>,
    caps: [Option<u32>; 3],
    max_cycles: u64,
    threads: Option<usize>,
    optimize: bool,
    relay: Relay,
    profile: bool,
    progress_every: u64,
    perfetto: Option<(String, cslsim::PeRect)>,
    heatmap: Option<String>,
}

/// The command line, validated: every flag's range is checked here, before a run that
/// may take minutes. `--help` and clap's own errors exit from inside.
fn parse_args(c: Cli) -> Result<Args, String> {
    let caps = [
        c.nloc
            .map(|v| in_range("--nloc", v, 1, 1 << 16))
            .transpose()?,
        c.nmax
            .map(|v| in_range("--nmax", v, 1, 1 << 16))
            .transpose()?,
        c.npair
            .map(|v| in_range("--npair", v, 1, 1 << 20))
            .transpose()?,
    ];
    let positive = |flag: &str, v: f64| {
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(format!("{flag}: `{v}` is not a positive number"))
        }
    };
    let a = Args {
        dims: [c.nx, c.ny, c.nzx, c.nzy].map(|v| usize::try_from(v).unwrap_or(usize::MAX)),
        steps: c
            .steps
            .try_into()
            .map_err(|_| "--steps is too large".to_string())?,
        ninner: in_range("--ninner", c.ninner, 1, 1000)?,
        nsample: in_range("--nsample", c.nsample, 1, 1_000_000)?,
        dt: positive("--dt", c.dt)?,
        rcut: positive("--rcut", c.rcut)?,
        arch: Arch::from_name(&c.arch)
            .ok_or_else(|| format!("--arch: `{}` is not wse2 or wse3", c.arch))?,
        relay: match c.relay.as_str() {
            "express" => Relay::Express,
            "ce" => Relay::Ce,
            "switch" | "switch-xyz" => Relay::Switch,
            "switch-xy" => Relay::SwitchXy,
            "switch-x" => Relay::SwitchX,
            v => {
                return Err(format!(
                    "--relay: `{v}` is not switch, switch-xy, switch-x, express or ce"
                ));
            }
        },
        threads: match c.threads {
            Some(0) => return Err("--threads: give at least one thread".into()),
            n => n.map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
        },
        optimize: c.opt_level.as_deref() != Some("0"),
        dump: c.dump,
        energies: c.energies,
        check: c.check,
        check_host: c.check_host,
        dump_out: c.dump_out,
        caps,
        max_cycles: c.max_cycles,
        profile: c.profile,
        progress_every: c.progress_every,
        perfetto: c
            .perfetto
            .map(|p| (p, c.perfetto_pes.unwrap_or(cslsim::PeRect::ALL))),
        heatmap: c.heatmap,
    };
    // Everything below is checked before the run, which may take minutes.
    if a.steps.checked_mul(a.ninner).is_none() {
        return Err(format!(
            "--steps {} times --ninner {} is over {} timesteps (2^32 - 1)",
            a.steps,
            a.ninner,
            u32::MAX
        ));
    }
    // The device computes in f32: a dt or cutoff that f32 turns into 0 or infinity would
    // run and silently produce nothing useful.
    for (flag, v) in [
        ("--dt", a.dt),
        ("--rcut", a.rcut),
        ("--rcut (squared)", a.rcut * a.rcut),
    ] {
        let f = v as f32;
        if !f.is_normal() {
            return Err(format!(
                "{flag}: {v:e} becomes {f} in f32 (the device's arithmetic); use a value between {:e} and {:e}",
                f32::MIN_POSITIVE,
                f32::MAX
            ));
        }
    }
    Ok(a)
}

/// `v` as a `u32` within `lo..=hi`, or an error naming the flag and the range.
fn in_range(flag: &str, v: u64, lo: u32, hi: u32) -> Result<u32, String> {
    u32::try_from(v)
        .ok()
        .filter(|v| (lo..=hi).contains(v))
        .ok_or_else(|| format!("{flag} must be between {lo} and {hi}, got {v}"))
}

/// Checks before the run that `path` (given with `flag`) can be written: its directory
/// exists and the file can be opened for writing. A file created only for the check is
/// removed again.
fn check_writable(flag: &str, path: &str) -> Result<(), String> {
    let p = std::path::Path::new(path);
    let existed = p.exists();
    if p.is_dir() {
        return Err(format!("{flag} {path}: is a directory"));
    }
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(p)
        .map_err(|e| format!("{flag} {path}: cannot be written: {e}"))?;
    if !existed {
        let _ = std::fs::remove_file(p);
    }
    Ok(())
}

fn main() -> ExitCode {
    // Under `mpirun -n R` (feature `cslsim/mpi`) every rank runs; rank 0 reports.
    let _mpi = cslsim::dist::init_mpi();
    // `--help`, `--version` and usage errors: printed once, also under MPI.
    let cli = match cslsim::dist::parse_cli::<Cli>(2) {
        Ok(c) => c,
        Err(code) => return code,
    };
    match real_main(cli) {
        Ok(()) => ExitCode::SUCCESS,
        // In a rank of an MPI run, the error ends the whole job (`exit_error`).
        Err(e) => cslsim::dist::exit_error(1, &format!("error: {e}")),
    }
}

fn real_main(cli: Cli) -> Result<(), String> {
    let a = parse_args(cli)?;
    let text =
        std::fs::read_to_string(&a.dump).map_err(|e| format!("cannot read {}: {e}", a.dump))?;
    let d = Dump::parse(&text).map_err(|e| format!("{}: {e}", a.dump))?;
    let perfetto_path = a.perfetto.as_ref().map(|(p, _)| p.clone());
    for (flag, path) in [
        ("--energies", &a.energies),
        ("--dump-out", &a.dump_out),
        ("--perfetto", &perfetto_path),
        ("--heatmap", &a.heatmap),
    ] {
        if let Some(p) = path {
            check_writable(flag, p)?;
        }
    }
    if d.timestep
        .checked_add(u64::from(a.steps * a.ninner))
        .is_none()
    {
        return Err(format!(
            "{}: the dump's timestep {} plus {} steps does not fit in 64 bits",
            a.dump,
            d.timestep,
            a.steps * a.ninner
        ));
    }
    let [nx, ny, nzx, nzy] = a.dims;
    let geometry = Geometry::new(nx, ny, nzx, nzy)?;
    // Validate the reference before the (long) run.
    let reference = match &a.check {
        Some(p) => {
            let t = std::fs::read_to_string(p).map_err(|e| format!("cannot read {p}: {e}"))?;
            Some(energies::parse(&t).map_err(|e| format!("{p}: {e}"))?)
        }
        None => None,
    };
    let cfg = device::Config {
        geometry: geometry.clone(),
        steps: a.steps,
        ninner: a.ninner,
        nsample: a.nsample,
        dt: a.dt,
        rcut: a.rcut,
        arch: a.arch,
        nloc: a.caps[0],
        nmax: a.caps[1],
        npair: a.caps[2],
        max_cycles: a.max_cycles,
        threads: a.threads,
        split: None,
        persistent: None,
        samples_per_launch: device::SAMPLES_PER_LAUNCH,
        pair_shortcuts: true,
        optimize: a.optimize,
        progress: if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            device::Progress::Terminal
        } else {
            device::Progress::Lines(a.progress_every)
        },
        relay: a.relay,
        perfetto: a.perfetto.clone(),
        heatmap: a.heatmap.clone(),
    };
    println!(
        "mdlj: {} atoms, {nx}x{ny}x{} cells on a {}x{} PE rectangle ({}, {} relay), {} steps",
        d.atoms.len(),
        geometry.nz(),
        geometry.width(),
        geometry.height(),
        a.arch,
        match a.relay {
            Relay::Express => "express",
            Relay::Ce => "CE",
            Relay::Switch => "switch",
            Relay::SwitchXy => "switch-xy",
            Relay::SwitchX => "switch-x",
        },
        a.steps * a.ninner
    );
    let out = device::run(&d, &cfg)?;
    if !cslsim::dist::is_root() {
        return Ok(());
    }
    println!(
        "capacities per PE: nloc {} atoms, nmax {} records, npair {} pairs",
        out.caps.nloc, out.caps.nmax, out.caps.npair
    );
    println!("step\tpotential\tkinetic\ttotal");
    for r in &out.energies {
        println!(
            "{}\t{:.10}\t{:.10}\t{:.10}",
            r.step, r.potential, r.kinetic, r.total
        );
    }
    if let (Some(first), Some(last)) = (out.energies.first(), out.energies.last()) {
        println!(
            "total energy drift over {} steps: {:+.4e} ({:+.3e} relative, {:+.3e} per step)",
            last.step - first.step,
            last.total - first.total,
            (last.total - first.total) / first.total.abs().max(f64::MIN_POSITIVE),
            (last.total - first.total) / (last.step - first.step).max(1) as f64
        );
    }
    let checked = device::check_exchange(&geometry, &out)?;
    println!("exchange oracle: halo counts and region starts of all {checked} PEs match the host");
    println!("cycles per timestep: {:.0}", out.cycles_per_step);
    let phases: Vec<String> = device::PHASES
        .iter()
        .zip(out.phase_cycles)
        .map(|(name, c)| format!("{name} {c:.0}"))
        .collect();
    println!("  by phase (mean over PEs): {}", phases.join(", "));
    if out.cycles_per_step > 0.0 {
        println!(
            "projected timesteps per second at {:.0} MHz: {:.0}",
            CLOCK_HZ / 1e6,
            CLOCK_HZ / out.cycles_per_step
        );
    }
    println!(
        "simulated cycles in total: {}; simulator wall time {:.2} s ({:.3} s per timestep)",
        out.total_cycles,
        out.wall_seconds,
        out.wall_seconds / f64::from((a.steps * a.ninner).max(1))
    );
    let [busy, stalled, idle] = out.pe_cycles;
    let all = (busy + stalled + idle).max(1) as f64;
    println!(
        "PE-cycles: {:.1}% busy, {:.1}% stalled, {:.1}% idle; {} instructions",
        100.0 * busy as f64 / all,
        100.0 * stalled as f64 / all,
        100.0 * idle as f64 / all,
        out.instructions
    );
    if a.profile {
        // The device's own per-phase cycle counters (frame 0 to the last record), as in
        // the one-line summary above, one phase a line with its share; then the share of
        // PE-cycles spent stalled inside a task (waiting on the fabric).
        let total: f64 = out.phase_cycles.iter().sum::<f64>().max(1.0);
        println!("profile (cycles per timestep, mean over PEs; median; largest, on PE x,y):");
        for ((name, c), sp) in device::PHASES
            .iter()
            .zip(out.phase_cycles)
            .zip(out.phase_spread)
        {
            println!(
                "  {name:<16} {c:>10.0}  {:5.1}%   median {:>7.0}   max {:>7.0} on {},{}",
                100.0 * c / total,
                sp.median,
                sp.max,
                sp.max_pe.0,
                sp.max_pe.1
            );
        }
        println!("  {:<16} {total:>10.0}", "sum");
        println!(
            "  stall fraction {:.1}% of PE-cycles",
            100.0 * stalled as f64 / all
        );
    }
    if let Some(p) = &a.energies {
        std::fs::write(p, energies::write(&out.energies))
            .map_err(|e| format!("cannot write {p}: {e}"))?;
    }
    if let Some(p) = &a.dump_out {
        let mut fin = d.clone();
        fin.timestep = d.timestep + u64::from(a.steps * a.ninner);
        fin.atoms = out.atoms.clone();
        std::fs::write(p, fin.write()).map_err(|e| format!("cannot write {p}: {e}"))?;
    }
    // (what, rows, whether a failure fails the run)
    let mut checks = Vec::new();
    let mut host = false;
    if let Some(r) = reference {
        checks.push((
            "the reference file",
            r,
            Some(true),
            energies::REFERENCE_LIMIT,
        ));
    }
    if a.check_host {
        // This repository's velocity-Verlet integrator on the host, sampled like the device
        // run: in f64 (the physics, reported), and in f32 (the device's arithmetic, which
        // decides). Over long runs fp32 rounding alone moves the device away from f64 (on
        // lj108 past 1e-5 around step 60), while it keeps tracking the f32 model.
        let every = u64::from(a.nsample * a.ninner);
        let params = Params {
            dt: a.dt,
            rcut: a.rcut,
        };
        let steps = u64::from(a.steps * a.ninner);
        let sampled = |rows: Vec<energies::EnergyRow>| -> Vec<energies::EnergyRow> {
            rows.into_iter().filter(|r| r.step % every == 0).collect()
        };
        let r64 = sampled(System::<f64>::from_dump(&d).run(steps, &params));
        let r32 = sampled(System::<f32>::from_dump(&d).run(steps, &params));
        checks.push(("the host's f64 integrator", r64, None, 2e-6));
        // The same arithmetic as the device, except the order of the sums.
        checks.push(("the host's f32 integrator", r32, None, 2e-6));
        host = true;
    }
    let mut failed = false;
    // The host models decide together: the run passes if every row is within 2e-6 of one
    // of them (over long runs fp32 rounding takes the device away from f64, while it keeps
    // tracking the f32 model; on thousands of atoms the f32 model's own single long sum of
    // pair energies is the worse of the two).
    let mut host_ok = false;
    for (what, r, decides, limit) in checks {
        print!("against {what}: ");
        let worst = energies::compare(&out.energies, &r)?;
        let ok = worst.iter().all(|&e| e <= limit);
        println!(
            "max|dE|/(1+max|ref|): potential {:.2e}, kinetic {:.2e}, total {:.2e} (limit {limit:.0e}): {}",
            worst[0],
            worst[1],
            worst[2],
            match (ok, decides) {
                (true, _) => "PASS",
                (false, Some(true)) => "FAIL",
                (false, _) => "over the limit",
            }
        );
        match decides {
            Some(true) => failed |= !ok,
            _ => host_ok |= ok,
        }
    }
    if host {
        println!(
            "host check (within 2e-6 of the f32 or the f64 model): {}",
            if host_ok { "PASS" } else { "FAIL" }
        );
        failed |= !host_ok;
    }
    if failed {
        return Err("the energies differ from the reference".into());
    }
    Ok(())
}
