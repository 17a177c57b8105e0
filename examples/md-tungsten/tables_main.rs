//! `mdlj-tables NX NY NZX NZY OUTDIR [moat|relay]`: writes the router and switch tables
//! of the padded rectangle (`router.bin`, order `y x r`; `switch.bin`, order `y x r n`)
//! and the per-PE `params.bin` (order `y x _word` over the core) for `miset`, as seed
//! 002's `3dmd_route3sdr` and `make-inputbin.py` do for their Makefile. `moat` (the
//! default): the moat check's tables, atom counts 0. `relay`: the switch-machine relay's
//! tables, the count relay's synthetic counts as `nlocal`, and `lanes.paint` (the lane
//! classes `relay.paint` includes). `atoms DUMP [NLOCMAX [NMAX]]`: the relay's tables and
//! `mdlj.w`'s inputs from a LAMMPS dump — `params.bin` with each cell's atom count,
//! `fparams.bin` (`fparamstruct`), `posin.bin` (`pos[NMAX][4]`) and `velin.bin`
//! (`vel[NLOCMAX][3]`), `mdlj-classes.paint` (mdlj.paint's socket bindings), binned as the CSL flagship bins them; NLOCMAX defaults to the
//! seed's 20, NMAX to what the halo exchange needs.
//!
//! `mdlj-tables check-moat NX NY NZX NZY GOT`: checks `core.got` of the moat check
//! (`moatcheck.w`); `mdlj-tables check-relay NX NY NZX NZY GOT [STAMP]` that of the count
//! relay (`relay.w`), and with `core.stamp` prints the cycles of each relay;
//! `mdlj-tables check-burst NX NY NZX NZY BURST FX FY ZREC [BSTAMP]` that of its
//! variable-length bursts and reverse relays (`core.burst`, `core.fx`, `core.fy`,
//! `core.zrec`, `core.bstamp`);
//! `mdlj-tables check-energies NX NY NZX NZY DIR REF [FLAGSHIP]` checks a run of `mdlj.w`
//! from what miget wrote into DIR (`epot.bin`, `ekin.bin`, `diag.bin`, `tstamp.bin`,
//! `xchg.bin`, `prof.bin`, each `core.NAME`, and `frame.bin`, `ping.frame`): no
//! overflow in `diag`, one barrier per energy record, the last exchange's
//! counts and region starts (`xchg`) against the CSL flagship's exchange oracle, and the energies summed per frame from
//! `core.epot`/`core.ekin` within the CSL flagship's limit of the reference table REF
//! (and, given the flagship's own table for the same input, within 1e-6 of it); it
//! prints the cycles per timestep (`tstamp`) and per phase (`prof`) and writes
//! `DIR/energies.tsv`.
//! `mdlj-tables check-ping NX NY NZX NZY STAMP FRAME` checks the barrier test
//! (`pingtest.w`'s `core.stamp`, `pingorigin.w`'s `ping.frame`). Each prints one PASS or
//! FAIL line.

use csl_examples::md::dump::Dump;
use csl_examples::md::energies;
use csl_examples::md::geometry::Geometry;
use csl_examples::md_tungsten::energy;
use csl_examples::md_tungsten::{
    BURST_PHASES, NLOCMAX, RELAY_PHASES, atom_inputs, check_burst, check_moat, check_ping,
    check_relay, lanes_paint, mdlj_classes_paint, params_blob, phase_cycles, relay_counts,
    relay_phase_cycles, relay_tables, router_table, switch_table, z_chain_local,
};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn write(path: &Path, words: &[u16]) -> Result<(), String> {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(path, bytes).map_err(|e| format!("cannot write `{}`: {e}", path.display()))
}

const USAGE: &str = "usage: mdlj-tables NX NY NZX NZY OUTDIR [moat|relay] | \
                     mdlj-tables NX NY NZX NZY OUTDIR atoms DUMP [NLOCMAX [NMAX]] | \
                     mdlj-tables check-moat NX NY NZX NZY GOT | \
                     mdlj-tables check-relay NX NY NZX NZY GOT [STAMP] | \
                     mdlj-tables check-burst NX NY NZX NZY BURST FX FY ZREC [BSTAMP] | \
                     mdlj-tables check-ping NX NY NZX NZY STAMP FRAME | \
                     mdlj-tables check-energies NX NY NZX NZY DIR REF [FLAGSHIP]";

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

/// Barriers in the barrier test (`B` in ping.paint).
const PING_BARRIERS: usize = 3;

fn read_words(path: &str) -> Result<Vec<u16>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read `{path}`: {e}"))?;
    if bytes.len() % 2 != 0 {
        return Err(format!("`{path}` is not a whole number of 16-bit words"));
    }
    Ok(bytes
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect())
}

/// Limit of the comparison with the CSL flagship's energies on the same input (issue 17).
const FLAGSHIP_LIMIT: f64 = 1e-6;

fn read_table(path: &str) -> Result<Vec<energies::EnergyRow>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read `{path}`: {e}"))?;
    energies::parse(&text).map_err(|e| format!("{path}: {e}"))
}

/// `check-energies`: reads `epot.bin`, `ekin.bin`, `diag.bin`, `tstamp.bin`, `xchg.bin`,
/// `prof.bin` and `frame.bin` (`ping.frame`, the barrier origin's count; as miget wrote
/// them) from `dir` and writes `dir/energies.tsv`.
fn check_energies(
    g: &Geometry,
    dir: &Path,
    reference: &str,
    flagship: Option<&String>,
) -> Result<(), String> {
    let npe = g.width() * g.height();
    let [epot, ekin, diag, tstamp, xchg, prof, frame] =
        ["epot", "ekin", "diag", "tstamp", "xchg", "prof", "frame"]
            .map(|f| read_words(&dir.join(format!("{f}.bin")).to_string_lossy()));
    let diag = diag?;
    let (atoms, most, passes) = energy::check_diag(&diag, npe).map_err(|e| format!("FAIL: {e}"))?;
    energy::check_coords(&diag, g.width(), g.height())
        .map_err(|e| format!("FAIL: coordinate registers: {e}"))?;
    energy::check_exchange(g, &xchg?, &diag).map_err(|e| format!("FAIL: exchange oracle: {e}"))?;
    let table = energy::energy_table(&epot?, &ekin?, npe, 1)?;
    let out = dir.join("energies.tsv");
    std::fs::write(&out, energies::write(&table))
        .map_err(|e| format!("cannot write `{}`: {e}", out.display()))?;
    // The barrier origin counts one barrier per energy record.
    let barriers = frame?.first().copied().unwrap_or(0);
    if usize::from(barriers) != table.len() {
        return Err(format!(
            "FAIL: the barrier origin counted {barriers} barriers for {} energy records",
            table.len()
        ));
    }
    let steps = table.len().saturating_sub(1) as u64;
    let cycles = energy::cycles_per_step(&tstamp?, npe, steps.max(1))?;
    let phases = energy::phase_means(&prof?, npe, steps.max(1))?;
    let parts: Vec<String> = energy::PHASES
        .iter()
        .zip(phases)
        .map(|(p, c)| format!("{p} {c:.0}"))
        .collect();
    println!(
        "cycles per timestep by phase (mean over PEs): {}",
        parts.join(", ")
    );
    let worst = energy::within(&table, &read_table(reference)?, energies::REFERENCE_LIMIT)
        .map_err(|e| format!("FAIL: against {reference}: {e}"))?;
    let mut vs = String::from("; no CSL flagship table to compare with");
    if let Some(f) = flagship {
        let w = energy::within(&table, &read_table(f)?, FLAGSHIP_LIMIT)
            .map_err(|e| format!("FAIL: against the CSL flagship ({f}): {e}"))?;
        vs = format!(
            "; the CSL flagship's within {:.1e}/{:.1e}/{:.1e} (limit {FLAGSHIP_LIMIT:.0e})",
            w[0], w[1], w[2]
        );
    }
    println!(
        "PASS: {} frames and barriers, {atoms} atoms, {passes} force passes, at most {most} records, \
         exchange oracle and coordinate registers on all {npe} PEs; \
         max|dE|/(1+max|ref|) {:.1e}/{:.1e}/{:.1e} (limit {:.0e}){vs}; {cycles:.0} cycles per \
         timestep",
        table.len(),
        worst[0],
        worst[1],
        worst[2],
        energies::REFERENCE_LIMIT
    );
    Ok(())
}

fn run(args: &[String]) -> Result<(), String> {
    if let [cmd, nx, ny, nzx, nzy, got] = args
        && cmd == "check-moat"
    {
        let g = geometry(nx, ny, nzx, nzy)?;
        let words = read_words(got)?;
        return match check_moat(&g, &words) {
            Ok(n) => {
                println!("PASS: {n} turnarounds through the moat, every PE's cell as folded");
                Ok(())
            }
            Err(e) => Err(format!("FAIL: {e}")),
        };
    }
    if let [cmd, nx, ny, nzx, nzy, dir, reference, rest @ ..] = args
        && cmd == "check-energies"
        && rest.len() <= 1
    {
        let g = geometry(nx, ny, nzx, nzy)?;
        return check_energies(&g, Path::new(dir), reference, rest.first());
    }
    if let [cmd, nx, ny, nzx, nzy, got, rest @ ..] = args
        && cmd == "check-relay"
        && rest.len() <= 1
    {
        let g = geometry(nx, ny, nzx, nzy)?;
        let words = read_words(got)?;
        if let [stamps] = rest {
            let cycles = relay_phase_cycles(&g, &read_words(stamps)?)?;
            let parts: Vec<String> = RELAY_PHASES
                .iter()
                .zip(cycles)
                .map(|(p, c)| format!("{p} {c}"))
                .collect();
            println!(
                "cycles per relay of three shifts (last PE to last PE): {}",
                parts.join(", ")
            );
        }
        return match check_relay(&g, &words) {
            Ok(n) => {
                let z = if z_chain_local(&g) {
                    "x, y, z- and z+ (tour) halos"
                } else {
                    "x, y, z- and z+ (1 x n line) halos"
                };
                println!(
                    "PASS: count relay, {z} and region starts as the CSL flagship's oracle ({n} words)"
                );
                Ok(())
            }
            Err(e) => Err(format!("FAIL: {e}")),
        };
    }
    if let [cmd, nx, ny, nzx, nzy, burst, fx, fy, zrec, rest @ ..] = args
        && cmd == "check-burst"
        && rest.len() <= 1
    {
        let g = geometry(nx, ny, nzx, nzy)?;
        if let [stamps] = rest {
            let cycles = phase_cycles(&g, &read_words(stamps)?, BURST_PHASES.len())?;
            let parts: Vec<String> = BURST_PHASES
                .iter()
                .zip(cycles)
                .map(|(p, c)| format!("{p} {c}"))
                .collect();
            println!(
                "cycles per variable-length relay of three shifts (last PE to last PE): {}",
                parts.join(", ")
            );
        }
        let words = [
            read_words(burst)?,
            read_words(fx)?,
            read_words(fy)?,
            read_words(zrec)?,
        ];
        return match check_burst(&g, &words[0], &words[1], &words[2], &words[3]) {
            Ok(n) => {
                println!(
                    "PASS: count relay as the oracle; variable-length bursts x+ x- y+ y- and z- \
                     (x-lines) word for word and the reverse x and y relays (<+-) as the host's sums ({n} words)"
                );
                Ok(())
            }
            Err(e) => Err(format!("FAIL: {e}")),
        };
    }
    if let [cmd, nx, ny, nzx, nzy, stamps, frame] = args
        && cmd == "check-ping"
    {
        let g = geometry(nx, ny, nzx, nzy)?;
        return match check_ping(&g, PING_BARRIERS, &read_words(stamps)?, &read_words(frame)?) {
            Ok((spread, release)) => {
                println!(
                    "PASS: {PING_BARRIERS} barriers, no PE left one before the last arrived \
                     (arrivals spread over up to {spread} cycles; the last arrival to a \
                     departure up to {release} cycles)"
                );
                Ok(())
            }
            Err(e) => Err(format!("FAIL: {e}")),
        };
    }
    if let [nx, ny, nzx, nzy, out, mode, dump, rest @ ..] = args
        && mode == "atoms"
        && rest.len() <= 2
    {
        let g = geometry(nx, ny, nzx, nzy)?;
        let text =
            std::fs::read_to_string(dump).map_err(|e| format!("cannot read `{dump}`: {e}"))?;
        let d = Dump::parse(&text).map_err(|e| format!("{dump}: {e}"))?;
        let num = |v: &String| -> Result<usize, String> {
            v.parse()
                .map_err(|_| format!("`{v}` is not a non-negative integer"))
        };
        let nlocmax = rest.first().map(num).transpose()?.unwrap_or(NLOCMAX);
        let nmax = rest.get(1).map(num).transpose()?;
        let a = atom_inputs(&d, &g, nlocmax, nmax)?;
        let out = PathBuf::from(out);
        let (router, switch) = relay_tables(&g);
        write(&out.join("router.bin"), &router)?;
        write(&out.join("switch.bin"), &switch)?;
        write(&out.join("params.bin"), &params_blob(&g, &a.nlocal, 1)?)?;
        write(&out.join("fparams.bin"), &a.fparams)?;
        write(&out.join("posin.bin"), &a.posin)?;
        write(&out.join("velin.bin"), &a.velin)?;
        let lanes = out.join("lanes.paint");
        std::fs::write(&lanes, lanes_paint(&g))
            .map_err(|e| format!("cannot write `{}`: {e}", lanes.display()))?;
        let classes = out.join("mdlj-classes.paint");
        std::fs::write(&classes, mdlj_classes_paint(&g))
            .map_err(|e| format!("cannot write `{}`: {e}", classes.display()))?;
        println!(
            "{} atoms on {} PEs: NLOCMAX {nlocmax}, NMAX {} (the exchange needs {})",
            a.nlocal.iter().map(|&n| usize::from(n)).sum::<usize>(),
            a.nlocal.len(),
            nmax.unwrap_or(a.nmax_needed),
            a.nmax_needed
        );
        return Ok(());
    }
    let (nx, ny, nzx, nzy, out, mode) = match args {
        [nx, ny, nzx, nzy, out] => (nx, ny, nzx, nzy, out, "moat"),
        [nx, ny, nzx, nzy, out, mode] => (nx, ny, nzx, nzy, out, mode.as_str()),
        _ => return Err(USAGE.into()),
    };
    let g = geometry(nx, ny, nzx, nzy)?;
    let out = PathBuf::from(out);
    match mode {
        "moat" => {
            let nlocal = vec![0u16; g.width() * g.height()];
            write(&out.join("router.bin"), &router_table(&g))?;
            write(&out.join("switch.bin"), &switch_table(&g))?;
            write(&out.join("params.bin"), &params_blob(&g, &nlocal, 1)?)?;
        }
        "relay" => {
            let (router, switch) = relay_tables(&g);
            write(&out.join("router.bin"), &router)?;
            write(&out.join("switch.bin"), &switch)?;
            write(
                &out.join("params.bin"),
                &params_blob(&g, &relay_counts(&g), 1)?,
            )?;
            let lanes = out.join("lanes.paint");
            std::fs::write(&lanes, lanes_paint(&g))
                .map_err(|e| format!("cannot write `{}`: {e}", lanes.display()))?;
        }
        other => {
            return Err(format!(
                "unknown table set `{other}` (moat or relay)\n{USAGE}"
            ));
        }
    }
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
