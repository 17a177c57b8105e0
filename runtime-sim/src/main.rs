//! `cslsim`: loads a compiled image, optionally disassembles it, launches exported
//! functions in order, lets the fabric run until no PE has work, and reports simulated
//! cycles and per-PE counters.
//!
//! Exit status: 0 on success, 1 with a message on any failure (bad arguments included).

use clap::Parser;
use cslsim::{DEFAULT_MAX_CYCLES, HostError, SdkRuntime};
use std::path::PathBuf;
use std::process::ExitCode;

/// Simulate a CSL fabric image.
#[derive(Parser, Debug)]
#[command(name = "cslsim", version)]
struct Cli {
    /// The image: an `.elf` file or a `cslc -o` directory containing `out.elf`.
    image: PathBuf,
    /// Stop with an error after this many simulated cycles.
    #[arg(long, default_value_t = DEFAULT_MAX_CYCLES)]
    max_cycles: u64,
    /// Launch this exported function (no arguments) on every PE; repeatable, in order.
    #[arg(long = "launch", value_name = "NAME")]
    launch: Vec<String>,
    /// Print the disassembly of every program class.
    #[arg(long)]
    disas: bool,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cslsim: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: &Cli) -> Result<(), HostError> {
    let mut rt = SdkRuntime::new(&cli.image)?.with_max_cycles(cli.max_cycles);
    if cli.disas {
        for (n, class) in rt.image().classes.iter().enumerate() {
            println!("class {n} `{}`:", class.info.name);
            for f in &class.info.functions {
                println!(
                    "  fn {} @{} (regs {}, params {}, frame {} bytes)",
                    f.name, f.entry, f.nregs, f.nparams, f.frame_bytes
                );
            }
            for t in &class.info.tasks {
                println!("  task id {} ({:?}) -> function {}", t.id, t.kind, t.func);
            }
            print!("{}", csl_arch::isa::disassemble(&class.code));
        }
    }
    rt.load()?;
    rt.run()?;
    for name in &cli.launch {
        rt.launch(name, &[], false)?;
    }
    rt.run_until_idle()?;
    rt.stop()?;
    let stats = rt.stats();
    println!("simulated cycles: {}", stats.cycles);
    println!("instructions: {}", stats.instructions);
    for pe in &stats.pes {
        println!(
            "{}: busy {} cycles, {} instructions, {} tasks",
            pe.pe, pe.busy_cycles, pe.instructions, pe.tasks_started
        );
    }
    Ok(())
}
