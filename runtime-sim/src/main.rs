//! `cslsim`: loads a compiled image, optionally disassembles it, launches exported
//! functions in order, lets the fabric run until nothing can progress, and reports
//! simulated cycles and per-PE counters. `--stats FILE` writes `sim_stats.json`-style
//! statistics (also after a failed run); `--trace X,Y|all` prints an instruction and
//! wavelet trace (`@cycle PE(x,y): ...` lines) on standard output. `--perfetto FILE`
//! writes a timeline for ui.perfetto.dev (tasks, DSD operations, stalls, wavelet arrows,
//! queue depths per PE; `--perfetto-pes X0,Y0:X1,Y1` limits it to a rectangle of PEs) and
//! `--heatmap FILE.png` a picture of per-PE activity and link use; both also after a
//! failed run.
//!
//! Exit status: 0 on success, 1 with a message on any failure (bad arguments included).

use clap::Parser;
use csl_arch::isa::NumTy;
use cslsim::host::{MemcpyDataType, Region, Transfer, values};
use cslsim::params::MAX_LATENCY_CYCLES;
use cslsim::perfetto::DEFAULT_MAX_FLOWS;
use cslsim::{
    DEFAULT_MAX_CYCLES, HostError, PeRect, PerfettoConfig, SdkRuntime, SimParams, TIMING_ENV,
    Timing, TraceFilter, Tracer,
};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// Simulate a CSL fabric image.
#[derive(Parser, Debug)]
#[command(name = "cslsim", version)]
struct Cli {
    /// The image: an `.elf` file or a `cslc -o` directory containing `out.elf`.
    image: PathBuf,
    /// Stop with an error after this many simulated cycles.
    #[arg(long, default_value_t = DEFAULT_MAX_CYCLES, value_parser = clap::value_parser!(u64).range(1..))]
    max_cycles: u64,
    /// Launch this exported function (no arguments) on every PE; repeatable, in order.
    #[arg(long = "launch", value_name = "NAME")]
    launch: Vec<String>,
    /// Before the launches, copy the numbers in FILE into the exported tensor NAME of
    /// every PE (text: numbers separated by spaces, commas or newlines, `#` comments;
    /// split evenly over the PEs in row-major order); repeatable.
    #[arg(long = "set", value_name = "NAME=FILE", value_parser = parse_binding)]
    set: Vec<(String, PathBuf)>,
    /// After the run, write the exported tensor NAME of every PE to FILE (one line per
    /// PE, row-major; the format `--set` reads); repeatable.
    #[arg(long = "dump", value_name = "NAME=FILE", value_parser = parse_binding)]
    dump: Vec<(String, PathBuf)>,
    /// Print the disassembly of every program class.
    #[arg(long)]
    disas: bool,
    /// Write run statistics as JSON to this file (e.g. `sim_stats.json`).
    #[arg(long, value_name = "FILE")]
    stats: Option<PathBuf>,
    /// Trace instructions and wavelets of one PE (`X,Y`, rectangle-relative) or `all`.
    #[arg(long, value_name = "PE|all", value_parser = parse_trace)]
    trace: Option<TraceFilter>,
    /// Write a timeline (Chrome trace-event JSON) for ui.perfetto.dev or chrome://tracing.
    #[arg(long, value_name = "FILE")]
    perfetto: Option<PathBuf>,
    /// Record only the PEs of this rectangle in the timeline (`X0,Y0:X1,Y1`, corners
    /// included, rectangle-relative; or one PE `X,Y`).
    #[arg(long, value_name = "X0,Y0:X1,Y1", value_parser = PeRect::parse, requires = "perfetto")]
    perfetto_pes: Option<PeRect>,
    /// Most wavelet arrows drawn in the timeline (hops are sampled deterministically).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_FLOWS)]
    perfetto_max_flows: usize,
    /// Write a heatmap (PNG) of per-PE busy/stalled/idle shares and link use.
    #[arg(long, value_name = "FILE.png")]
    heatmap: Option<PathBuf>,
    /// Router input buffer depth per (port, colour), 1..=8.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=8))]
    buffer_depth: Option<u32>,
    /// Cycles per router hop, 1..=65536 (default: 1 on WSE-2, 2 on WSE-3).
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_LATENCY_CYCLES)))]
    hop_latency: Option<u32>,
    /// Timing model: `simple` (one cycle per instruction and DSD element; the default) or
    /// `measured` (WSE-3 measured branch, DSD-setup and `@fmacs` costs; SIMULATOR.md §2).
    /// Default: `CSLSIM_TIMING` or `simple`. The flags below override single parameters.
    #[arg(long, value_name = "MODEL", value_parser = Timing::parse)]
    timing: Option<Timing>,
    /// Setup cycles of every DSD operation, 0..=65536.
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u32).range(0..=i64::from(MAX_LATENCY_CYCLES)))]
    dsd_setup_cycles: Option<u32>,
    /// Most memory the simulator may use, in MiB (default: what the machine reports
    /// available). An image that needs more is refused before loading, with its estimate.
    #[arg(long = "max-memory-mib", value_name = "MIB",
          value_parser = clap::value_parser!(u64).range(1..))]
    max_memory_mib: Option<u64>,
    /// Threads that step the fabric (default: `CSLSIM_THREADS` or the available cores;
    /// results are the same for every number).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    threads: Option<u32>,
}

/// `println!` that ignores write errors: a reader that closes the pipe early (`| head`)
/// must not make the simulator panic.
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($t)*);
    }};
}

fn parse_binding(s: &str) -> Result<(String, PathBuf), String> {
    match s.split_once('=') {
        Some((name, file)) if !name.is_empty() && !file.is_empty() => {
            Ok((name.to_string(), PathBuf::from(file)))
        }
        _ => Err(format!("`{s}` is not NAME=FILE")),
    }
}

fn parse_trace(s: &str) -> Result<TraceFilter, String> {
    TraceFilter::parse(s).ok_or_else(|| format!("`{s}` is neither `all` nor `X,Y`"))
}

fn main() -> ExitCode {
    // Under `mpirun -n R` (feature `mpi`) every rank runs; rank 0 reports.
    let _mpi = cslsim::dist::init_mpi();
    // `--help`, `--version` and usage errors: printed once, also under MPI.
    let cli = match cslsim::dist::parse_cli::<Cli>(1) {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        // In a rank of an MPI run, the error ends the whole job.
        Err(e) => cslsim::dist::exit_error(1, &format!("cslsim: error: {e}")),
    }
}

fn run(cli: &Cli) -> Result<(), HostError> {
    let timing = match cli.timing {
        Some(t) => t,
        None => match std::env::var(TIMING_ENV) {
            Ok(v) => {
                Timing::parse(&v).map_err(|e| HostError::BadParams(format!("{TIMING_ENV}: {e}")))?
            }
            Err(_) => Timing::Simple,
        },
    };
    let defaults = timing.params();
    let params = SimParams {
        router_buffer_depth: cli.buffer_depth.unwrap_or(defaults.router_buffer_depth),
        hop_latency: cli.hop_latency.or(defaults.hop_latency),
        dsd_setup_cycles: cli.dsd_setup_cycles.unwrap_or(defaults.dsd_setup_cycles),
        memory_limit_bytes: cli.max_memory_mib.map(|m| m.saturating_mul(1 << 20)),
        ..defaults
    };
    let mut rt = SdkRuntime::new(&cli.image)?
        .with_max_cycles(cli.max_cycles)
        .with_params(params);
    if let Some(t) = cli.threads {
        rt = rt.with_threads(t as usize);
    }
    if cli.perfetto.is_some() {
        rt = rt.with_perfetto(PerfettoConfig {
            pes: cli.perfetto_pes.unwrap_or(PeRect::ALL),
            max_flows: cli.perfetto_max_flows,
        });
    }
    let tracer = cli
        .trace
        .map(|f| Tracer::new(f, Box::new(std::io::BufWriter::new(std::io::stdout()))));
    if let Some(t) = &tracer {
        rt = rt.with_trace(t.clone());
    }
    if cli.disas {
        for (n, class) in rt.image().classes.iter().enumerate() {
            out!("class {n} `{}`:", class.info.name);
            for f in &class.info.functions {
                out!(
                    "  fn {} @{} (regs {}, params {}, frame {} bytes)",
                    f.name,
                    f.entry,
                    f.nregs,
                    f.nparams,
                    f.frame_bytes
                );
            }
            for t in &class.info.tasks {
                out!("  task id {} ({:?}) -> function {}", t.id, t.kind, t.func);
            }
            out!("{}", csl_arch::isa::disassemble(&class.code).trim_end());
        }
    }
    rt.load()?;
    let start = Instant::now();
    // The --dump files' text: rank 0 writes them below, after every collective operation
    // of an MPI run, so that a failed write ends the job without a rank left waiting.
    let mut dumps = Vec::new();
    let result = simulate(&mut rt, cli, &mut dumps);
    let wall = start.elapsed().as_secs_f64();
    if let Some(t) = &tracer {
        t.flush();
    }
    if result.is_err()
        && rt.simulator().is_some_and(|s| s.rank().is_some())
        && !cslsim::dist::failure_shared()
    {
        // A rank of an MPI run that failed on its own (a file it could not read or
        // write, say): the other ranks are elsewhere, no collective operation may follow.
        return result;
    }
    rt.gather();
    if !cslsim::dist::is_root() {
        return result;
    }
    let mut result = result;
    for (file, text) in dumps.iter().filter(|_| result.is_ok()) {
        if let Err(source) = std::fs::write(file, text) {
            result = Err(HostError::Write {
                path: file.clone(),
                source,
            });
            break;
        }
    }
    let stats = rt.stats();
    if let Some(path) = &cli.stats {
        let mut doc = stats.to_json();
        if let Some(obj) = doc.as_object_mut() {
            obj.insert("arch".into(), rt.image().meta.arch.name().into());
            obj.insert("wall_seconds".into(), wall.into());
            obj.insert(
                "cycles_per_second".into(),
                (stats.cycles as f64 / wall.max(1e-9)).into(),
            );
            obj.insert(
                "busy_pe_cycles_per_second".into(),
                (stats.busy_pe_cycles() as f64 / wall.max(1e-9)).into(),
            );
            obj.insert("completed".into(), serde_json::Value::Bool(result.is_ok()));
        }
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        std::fs::write(path, text + "\n").map_err(|source| HostError::Write {
            path: path.clone(),
            source,
        })?;
    }
    if let Some(path) = &cli.perfetto {
        rt.write_perfetto(path)?;
    }
    if let Some(path) = &cli.heatmap {
        rt.write_heatmap(path)?;
    }
    for line in rt.sim_log() {
        out!("{line}");
    }
    result?;
    out!("simulated cycles: {}", stats.cycles);
    out!("instructions: {}", stats.instructions);
    out!("wavelet hops: {}", stats.wavelet_hops);
    for pe in &stats.pes {
        out!(
            "{}: busy {} cycles, stalled {} cycles, {} instructions, {} tasks",
            pe.pe,
            pe.busy_cycles,
            pe.stalled_cycles,
            pe.instructions,
            pe.tasks_started
        );
    }
    if cli.launch.is_empty() && stats.instructions == 0 {
        let funcs: Vec<String> = rt
            .image()
            .exports
            .iter()
            .filter(|e| matches!(e.kind, csl_arch::image::ExportKind::Func { .. }))
            .map(|e| format!("`{}`", e.name))
            .collect();
        let hint = if funcs.is_empty() {
            String::new()
        } else {
            format!("; launch one of {} with --launch NAME", funcs.join(", "))
        };
        eprintln!(
            "cslsim: note: nothing ran: no task was active at start and no function was launched{hint}"
        );
    }
    Ok(())
}

fn simulate(
    rt: &mut SdkRuntime,
    cli: &Cli,
    dumps: &mut Vec<(PathBuf, String)>,
) -> Result<(), HostError> {
    rt.run()?;
    for (name, file) in &cli.set {
        set_tensor(rt, name, file)?;
    }
    for name in &cli.launch {
        rt.launch(name, &[], false)?;
    }
    rt.run_until_idle()?;
    for (name, file) in &cli.dump {
        dumps.push((file.clone(), dump_tensor(rt, name)?));
    }
    rt.stop()
}

/// The region of the whole rectangle with `l` elements per PE, and the transfer for
/// elements of type `elem`.
fn whole(rt: &SdkRuntime, l: u32, elem: NumTy) -> (Region, Transfer) {
    let m = &rt.image().meta;
    let dt = if elem.size() == 4 {
        MemcpyDataType::Bit32
    } else {
        MemcpyDataType::Bit16
    };
    (
        Region::new(0, 0, m.width, m.height, l),
        Transfer::COPY.data_type(dt),
    )
}

/// `--set NAME=FILE`.
fn set_tensor(rt: &mut SdkRuntime, name: &str, file: &Path) -> Result<(), HostError> {
    let id = rt.get_id(name)?;
    let (elem, _) = rt.tensor_len(id, 0, 0)?;
    let text = std::fs::read_to_string(file).map_err(|source| HostError::Io {
        path: file.to_path_buf(),
        source,
    })?;
    let words = values::parse(&text, elem).map_err(|why| HostError::BadArgument {
        what: format!("--set {name}={}: {why}", file.display()),
    })?;
    let m = &rt.image().meta;
    let pes = (m.width * m.height) as usize;
    if words.is_empty() || words.len() % pes != 0 {
        return Err(HostError::BadArgument {
            what: format!(
                "--set {name}={}: {} values do not split evenly over the {pes} PEs",
                file.display(),
                words.len()
            ),
        });
    }
    let (region, how) = whole(rt, (words.len() / pes) as u32, elem);
    rt.h2d(id, &words, region, how)
}

/// `--dump NAME=FILE`: the text of the whole array on every PE (its length from PE
/// (0,0)), for the file.
fn dump_tensor(rt: &mut SdkRuntime, name: &str) -> Result<String, HostError> {
    let id = rt.get_id(name)?;
    let (elem, len) = rt.tensor_len(id, 0, 0)?;
    let Some(l) = len.filter(|&l| l > 0) else {
        return Err(HostError::BadArgument {
            what: format!("--dump {name}: the length of the array `{name}` points at is unknown"),
        });
    };
    let (region, how) = whole(rt, l, elem);
    let mut words = vec![0u32; (region.w * region.h * l) as usize];
    rt.d2h(&mut words, id, region, how)?;
    let mut text = format!(
        "# {name}: {} x {} PEs, {l} {elem:?} elements each, one line per PE (row-major)\n",
        region.w, region.h
    );
    for pe in words.chunks(l as usize) {
        let line: Vec<String> = pe.iter().map(|&w| values::format_one(w, elem)).collect();
        text.push_str(&line.join(" "));
        text.push('\n');
    }
    Ok(text)
}
