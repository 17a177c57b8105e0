//! `simfabric`: runs an image on the fabric simulator until a cycle budget or until
//! nothing can move, reports what the run left behind (orphan wavelets, blocked tiles) and
//! writes the final state as a core file that `miget` reads, as the experimental Tungsten
//! SDK's tool of that name does (SIMULATOR.md §14).
//!
//! Exit status: 0 when the run stopped on quiescence or on the budget (leftovers are
//! warnings), 1 with a message on a fault, a routing error or a bad argument or file.

use cslsim::tools::{
    FabricRun, KeyArgs, Stop, ToolError, core_image, default_core_path, read_image,
    run_fabric_recorded, sim_error_hint, tool_main, write_image,
};
use cslsim::{PeRect, PerfettoConfig};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const HELP: &str = "\
simfabric: simulate an image on the fabric and write its final state (a core file)

usage: simfabric image=IMG cycles=N [threads=T] [core=OUT.core] [log=OUT.log]
                 [perfetto=TRACE.json [perfetto_pes=X0,Y0:X1,Y1]]

  image=IMG      the image (after miset, if the program needs data)
  cycles=N       cycle budget: the run stops after N cycles if it has not stopped before
  threads=T      threads that step the fabric (default: CSLSIM_THREADS or the available
                 cores); the result is the same, bit for bit, whatever T
  core=OUT.core  where to write the final state (default: STEM-sim.core next to IMG)
  log=OUT.log    write the <simprint> log and the end-of-run report there (without it,
                 log lines go to standard output)
  perfetto=TRACE.json
                 write a timeline of the run for ui.perfetto.dev or chrome://tracing:
                 per tile, task spans, DSD operations, stalls, CE input queue depths,
                 and sampled wavelet arrows between tiles (also after a failure)
  perfetto_pes=X0,Y0:X1,Y1
                 record only the tiles of this rectangle (corners included; or X,Y)

The run stops when nothing in the fabric can move any more (exact quiescence: the
vendor's \"no data movement\") or when the budget runs out. It then warns about every
wavelet left unconsumed in a router buffer or CE input queue (orphan wavelets: tile,
colour, count and the oldest payloads) and every tile still blocked in a send or
receive. A fault or routing error (a message reaching a tile without mp() included)
is an error naming tile, function, pc and cycle; the core is written anyway.
Read the core with: miget image=STEM-sim.core map=... symbol=REGION.SYM data=FILE
";

fn main() -> ExitCode {
    let _mpi = cslsim::dist::init_mpi();
    tool_main("simfabric", HELP, run)
}

fn run(args: &[String]) -> Result<ExitCode, ToolError> {
    let a = KeyArgs::parse(
        args,
        &[
            "image",
            "cycles",
            "threads",
            "core",
            "log",
            "perfetto",
            "perfetto_pes",
        ],
    )?;
    let image_path = PathBuf::from(a.require("image", "IMG")?);
    a.require("cycles", "N")?;
    let cycles = a.number("cycles")?.unwrap_or(0);
    let threads = a.number("threads")?;
    if threads == Some(0) {
        return Err(ToolError::Usage(
            "`threads=0`: give at least one thread".into(),
        ));
    }
    let threads = threads.map(|t| usize::try_from(t).unwrap_or(usize::MAX));
    let core_path = a
        .path("core")
        .unwrap_or_else(|| default_core_path(&image_path));
    let log_path = a.path("log");
    let perfetto_path = a.path("perfetto");
    let pes = match a.get("perfetto_pes") {
        None => PeRect::ALL,
        Some(_) if perfetto_path.is_none() => {
            return Err(ToolError::Usage(
                "`perfetto_pes=` needs `perfetto=TRACE.json`".into(),
            ));
        }
        Some(r) => {
            PeRect::parse(r).map_err(|e| ToolError::Usage(format!("`perfetto_pes=`: {e}")))?
        }
    };
    let perfetto = perfetto_path.as_ref().map(|_| PerfettoConfig {
        pes,
        ..PerfettoConfig::default()
    });
    let image = read_image(&image_path)?;
    let FabricRun { sim, stop, report } =
        run_fabric_recorded(&image, &image_path, cycles, threads, perfetto)?;
    if let Some(path) = perfetto_path.as_ref().filter(|_| cslsim::dist::is_root()) {
        sim.perfetto_trace()
            .write(path)
            .map_err(|e| ToolError::Write {
                path: e.path,
                source: e.source,
            })?;
    }

    if !cslsim::dist::is_root() {
        // Another rank of an MPI run: rank 0 writes the results.
        return Ok(match stop {
            Stop::Failed(_) => ExitCode::FAILURE,
            _ => ExitCode::SUCCESS,
        });
    }
    let cycle = sim.cycle();
    let mut summary = Vec::new();
    match &stop {
        Stop::Quiescent => summary.push(format!(
            "stopped at cycle {cycle}: quiescent (nothing in the fabric can move)"
        )),
        Stop::Budget => summary.push(format!(
            "stopped at cycle {cycle}: the cycle budget (cycles={cycles}) ran out while the \
             fabric was still active"
        )),
        Stop::Failed(e) => {
            summary.push(format!("error: {e}"));
            if let Some(h) = sim_error_hint(e) {
                summary.push(format!("help: {h}"));
            }
        }
    }
    let report_lines = report.lines(&stop);

    // The core: the final state, also after a failure (for post-mortem reads).
    write_image(&core_path, &core_image(&image, &sim))?;

    let log = sim.log_lines();
    if let Some(path) = &log_path {
        write_log(path, &log, &summary, &report_lines)?;
    } else {
        for l in &log {
            println!("{l}");
        }
    }
    match &stop {
        Stop::Failed(_) => {
            for l in &summary {
                eprintln!("simfabric: {l}");
            }
            eprintln!(
                "simfabric: the state at the failure was written to `{}`",
                core_path.display()
            );
            Ok(ExitCode::FAILURE)
        }
        _ => {
            for l in &summary {
                println!("simfabric: {l}");
            }
            for l in &report_lines {
                eprintln!("simfabric: {l}");
            }
            println!("simfabric: core written to `{}`", core_path.display());
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn write_log(
    path: &Path,
    log: &[String],
    summary: &[String],
    report: &[String],
) -> Result<(), ToolError> {
    let mut text = String::new();
    for l in log.iter().chain(summary).chain(report) {
        text.push_str(l);
        text.push('\n');
    }
    std::fs::write(path, text).map_err(|source| ToolError::Write {
        path: path.to_path_buf(),
        source,
    })
}
