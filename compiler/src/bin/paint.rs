//! `paint`: compiles a Paint floorplan and the Tungsten programs it places into a fabric
//! image and a symbol map, in the experimental SDK's `key=value` argument style:
//!
//! ```text
//! paint FILE.paint [lib=DIR]... [arch=sdr|wse3|wse2] [NAME=VALUE]... [out=X.obj] [map=X.map] [asm=X.asm] [-O0] [--deny-warnings]
//! ```
//!
//! Exit codes: 0 success, 1 errors in the floorplan, a program or the command line.

use cslc::diag::render_all;
use cslc::paint::{USAGE, compile_floorplan, parse_args};
use std::io::IsTerminal;
use std::process::ExitCode;

fn main() -> ExitCode {
    let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let inv = match parse_args(&args) {
        Ok(Some(inv)) => inv,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("paint: {e}");
            return ExitCode::from(1);
        }
    };
    let mut comp = compile_floorplan(&inv.file, &inv.options);
    if inv.deny_warnings && cslc::diag::deny_warnings(&mut comp.diagnostics) {
        comp.image = None;
    }
    eprint!("{}", render_all(&comp.diagnostics, &comp.sources, color));
    let (Some(image), Some(map)) = (comp.image, comp.map) else {
        return ExitCode::from(1);
    };
    let elf = match image.to_elf() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("paint: cannot encode the image: {e}");
            return ExitCode::from(1);
        }
    };
    if let Err(e) = std::fs::write(&inv.out, elf) {
        eprintln!("paint: cannot write `{}`: {e}", inv.out.display());
        return ExitCode::from(1);
    }
    if let Err(e) = std::fs::write(&inv.map, map.to_text()) {
        eprintln!("paint: cannot write `{}`: {e}", inv.map.display());
        return ExitCode::from(1);
    }
    if let Some(path) = &inv.asm {
        let text = cslc::link::disassembly(&image);
        if path.as_os_str() == "-" {
            // A closed pipe (e.g. `| head`) is not an error worth a panic.
            let _ = std::io::Write::write_all(&mut std::io::stdout(), text.as_bytes());
        } else if let Err(e) = std::fs::write(path, text) {
            eprintln!("paint: cannot write `{}`: {e}", path.display());
            return ExitCode::from(1);
        }
    }
    ExitCode::SUCCESS
}
