//! Host program of tutorial 02 (GEMV with memory DSDs): `gemv-02 --name OUT`, where OUT is what
//! `cslc -o OUT` wrote. Prints y and `SUCCESS!` when it matches the host's reference.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut name = PathBuf::from("out");
    while let Some(a) = args.next() {
        match a.as_str() {
            "--name" => match args.next() {
                Some(v) => name = PathBuf::from(v),
                None => {
                    eprintln!("error: --name needs a value");
                    return ExitCode::from(1);
                }
            },
            other => {
                eprintln!("error: unknown argument `{other}` (usage: gemv-02 --name OUT)");
                return ExitCode::from(1);
            }
        }
    }
    match csl_examples::gemv01::run(&name) {
        Ok(r) => {
            println!("y (device)    = {:?}", r.device);
            println!("y (reference) = {:?}", r.expected);
            println!("simulated cycles: {}", r.cycles);
            if csl_examples::gemv01::matches(&r.device, &r.expected) {
                println!("SUCCESS!");
                ExitCode::SUCCESS
            } else {
                println!("FAIL: y differs from the reference");
                ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
