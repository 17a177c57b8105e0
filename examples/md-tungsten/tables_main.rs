//! `mdlj-tables NX NY NZX NZY OUTDIR`: writes the router and switch tables of the padded
//! rectangle (`router.bin`, order `y x r`; `switch.bin`, order `y x r n`) and the per-PE
//! `params.bin` (order `y x _word` over the core) for `miset`, as seed 002's
//! `3dmd_route3sdr` and `make-inputbin.py` do for their Makefile. Atom counts are 0 until
//! the atom blobs are written (work in progress, see README.md).
//!
//! `mdlj-tables check-moat NX NY NZX NZY GOT`: checks `core.got` of the moat check
//! (`moatcheck.w`); prints one PASS or FAIL line.

use csl_examples::md::geometry::Geometry;
use csl_examples::md_tungsten::{check_moat, params_blob, router_table, switch_table};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn write(path: &Path, words: &[u16]) -> Result<(), String> {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(path, bytes).map_err(|e| format!("cannot write `{}`: {e}", path.display()))
}

const USAGE: &str =
    "usage: mdlj-tables NX NY NZX NZY OUTDIR | mdlj-tables check-moat NX NY NZX NZY GOT";

fn geometry(nx: &str, ny: &str, nzx: &str, nzy: &str) -> Result<Geometry, String> {
    let num = |name: &str, v: &str| -> Result<usize, String> {
        v.parse()
            .map_err(|_| format!("{name} = `{v}` is not a non-negative integer"))
    };
    Geometry::new(
        num("NX", nx)?,
        num("NY", ny)?,
        num("NZX", nzx)?,
        num("NZY", nzy)?,
    )
}

fn run(args: &[String]) -> Result<(), String> {
    if let [cmd, nx, ny, nzx, nzy, got] = args
        && cmd == "check-moat"
    {
        let g = geometry(nx, ny, nzx, nzy)?;
        let bytes = std::fs::read(got).map_err(|e| format!("cannot read `{got}`: {e}"))?;
        if bytes.len() % 2 != 0 {
            return Err(format!("`{got}` is not a whole number of 16-bit words"));
        }
        let words: Vec<u16> = bytes
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        return match check_moat(&g, &words) {
            Ok(n) => {
                println!("PASS: {n} turnarounds through the moat, every PE's cell as folded");
                Ok(())
            }
            Err(e) => Err(format!("FAIL: {e}")),
        };
    }
    let [nx, ny, nzx, nzy, out] = args else {
        return Err(USAGE.into());
    };
    let g = geometry(nx, ny, nzx, nzy)?;
    let out = PathBuf::from(out);
    let nlocal = vec![0u16; g.width() * g.height()];
    write(&out.join("router.bin"), &router_table(&g))?;
    write(&out.join("switch.bin"), &switch_table(&g))?;
    write(&out.join("params.bin"), &params_blob(&g, &nlocal, 1)?)?;
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mdlj-tables: error: {e}");
            ExitCode::FAILURE
        }
    }
}
