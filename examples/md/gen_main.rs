//! `mdgen`: writes input dumps for `mdlj` to standard output: `--replicate K --dump PATH`
//! (the dump repeated K times along each axis) or `--fcc CELLS [--density RHO]
//! [--temperature T] [--seed S]` (an fcc lattice of 4·CELLS³ atoms).

use csl_examples::md::{dump::Dump, generate};
use std::process::ExitCode;

const USAGE: &str = "usage: mdgen --replicate K --dump PATH | mdgen --fcc CELLS [--density RHO] [--temperature T] [--seed S]";

fn real_main() -> Result<String, String> {
    let mut args = std::env::args().skip(1);
    let (mut replicate, mut dump, mut fcc) = (None, None, None);
    let (mut density, mut temperature, mut seed) = (0.1f64, 1.0f64, 1u64);
    while let Some(flag) = args.next() {
        let v = args
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        let bad = || format!("{flag}: `{v}` is not a valid value");
        match flag.as_str() {
            "--replicate" => {
                replicate = Some(
                    v.parse::<usize>()
                        .ok()
                        .filter(|k| (1..=20).contains(k))
                        .ok_or_else(bad)?,
                )
            }
            "--dump" => dump = Some(v),
            "--fcc" => {
                fcc = Some(
                    v.parse::<usize>()
                        .ok()
                        .filter(|k| (1..=40).contains(k))
                        .ok_or_else(bad)?,
                )
            }
            "--density" => {
                density = v
                    .parse()
                    .ok()
                    .filter(|x: &f64| x.is_finite() && *x > 0.0)
                    .ok_or_else(bad)?
            }
            "--temperature" => {
                temperature = v
                    .parse()
                    .ok()
                    .filter(|x: &f64| x.is_finite() && *x >= 0.0)
                    .ok_or_else(bad)?
            }
            "--seed" => seed = v.parse().map_err(|_| bad())?,
            _ => return Err(format!("unknown argument `{flag}`\n{USAGE}")),
        }
    }
    let out = match (replicate, dump, fcc) {
        (Some(k), Some(path), None) => {
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
            let d = Dump::parse(&text).map_err(|e| format!("{path}: {e}"))?;
            generate::replicate(&d, k)
        }
        (None, None, Some(cells)) => generate::fcc(cells, density, temperature, seed),
        _ => return Err(USAGE.into()),
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
