//! `mdlj-tables NX NY NZX NZY OUTDIR`: writes the router and switch tables of the padded
//! rectangle (`router.bin`, order `y x r`; `switch.bin`, order `y x r n`) and the per-PE
//! `params.bin` (order `y x _word` over the core) for `miset`, as seed 002's
//! `3dmd_route3sdr` and `make-inputbin.py` do for their Makefile. Atom counts are 0 until
//! the atom blobs are written (work in progress, see README.md).

use csl_examples::md::geometry::Geometry;
use csl_examples::md_tungsten::{params_blob, router_table, switch_table};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn write(path: &Path, words: &[u16]) -> Result<(), String> {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(path, bytes).map_err(|e| format!("cannot write `{}`: {e}", path.display()))
}

fn run(args: &[String]) -> Result<(), String> {
    let [nx, ny, nzx, nzy, out] = args else {
        return Err("usage: mdlj-tables NX NY NZX NZY OUTDIR".into());
    };
    let num = |name: &str, v: &str| -> Result<usize, String> {
        v.parse()
            .map_err(|_| format!("{name} = `{v}` is not a non-negative integer"))
    };
    let g = Geometry::new(num("NX", nx)?, num("NY", ny)?, num("NZX", nzx)?, num("NZY", nzy)?)?;
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
