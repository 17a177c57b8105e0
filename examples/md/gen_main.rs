//! `mdgen`: writes input dumps for `mdlj` to standard output: `--replicate K --dump PATH`
//! (the dump repeated K times along each axis) or `--fcc CELLS [--density RHO]
//! [--temperature T] [--seed S]` (an fcc lattice of 4·CELLS³ atoms).

use csl_examples::md::{dump::Dump, generate};
use std::process::ExitCode;

/// Writes an input dump for `mdlj` to standard output: either a dump replicated K times
/// along each axis, or an fcc lattice of 4·CELLS³ atoms with random velocities.
#[derive(clap::Parser)]
#[command(name = "mdgen", version)]
struct Cli {
    /// Repeat the dump given with --dump K times along each axis (1 to 20).
    #[arg(long, value_name = "K", requires = "dump", conflicts_with = "fcc")]
    replicate: Option<u64>,
    /// The dump to replicate.
    #[arg(long, value_name = "PATH", requires = "replicate")]
    dump: Option<String>,
    /// An fcc lattice of CELLS³ unit cells (1 to 40).
    #[arg(long, value_name = "CELLS", required_unless_present = "replicate")]
    fcc: Option<u64>,
    /// Number density of the fcc lattice.
    #[arg(long, default_value_t = 0.1)]
    density: f64,
    /// Temperature of the random velocities.
    #[arg(long, default_value_t = 1.0)]
    temperature: f64,
    /// Seed of the random velocities.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

fn real_main() -> Result<String, String> {
    use clap::Parser as _;
    let c = Cli::parse();
    let in_range = |flag: &str, v: u64, hi: u64| {
        usize::try_from(v)
            .ok()
            .filter(|_| (1..=hi).contains(&v))
            .ok_or_else(|| format!("--{flag}: `{v}` is not a valid value (1 to {hi})"))
    };
    let replicate = c
        .replicate
        .map(|k| in_range("replicate", k, 20))
        .transpose()?;
    let fcc = c.fcc.map(|k| in_range("fcc", k, 40)).transpose()?;
    let (density, temperature, seed, dump) = (c.density, c.temperature, c.seed, c.dump);
    if !(density.is_finite() && density > 0.0) {
        return Err(format!("--density: `{density}` is not a valid value"));
    }
    if !(temperature.is_finite() && temperature >= 0.0) {
        return Err(format!(
            "--temperature: `{temperature}` is not a valid value"
        ));
    }
    let out = match (replicate, dump, fcc) {
        (Some(k), Some(path), None) => {
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
            let d = Dump::parse(&text).map_err(|e| format!("{path}: {e}"))?;
            generate::replicate(&d, k)
        }
        (None, None, Some(cells)) => generate::fcc(cells, density, temperature, seed),
        _ => return Err("give either --replicate K --dump PATH or --fcc CELLS".into()),
    };
    Ok(out.write())
}

fn main() -> ExitCode {
    match real_main() {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
