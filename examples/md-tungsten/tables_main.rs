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
    relay_tables, router_table, switch_table, z_chain_local,
};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Writes the tables and inputs of the padded rectangle NX × NY of NZX × NZY folds
/// (`mdlj-tables NX NY NZX NZY OUTDIR [moat|relay|atoms DUMP [NLOCMAX [NMAX]]]`), or checks
/// what a run of one of the md-tungsten programs left (the `check-*` commands).
#[derive(clap::Parser)]
#[command(
    name = "mdlj-tables",
    version,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
struct Cli {
    /// Cells along x.
    #[arg(value_name = "NX", required = true)]
    nx: Option<usize>,
    /// Cells along y.
    #[arg(value_name = "NY", required = true)]
    ny: Option<usize>,
    /// Cells of z folded along x.
    #[arg(value_name = "NZX", required = true)]
    nzx: Option<usize>,
    /// Cells of z folded along y.
    #[arg(value_name = "NZY", required = true)]
    nzy: Option<usize>,
    /// Where to write the tables.
    #[arg(value_name = "OUTDIR", required = true)]
    out: Option<PathBuf>,
    /// The table set.
    #[arg(value_name = "SET", value_enum, default_value = "moat")]
    set: TableSet,
    /// The LAMMPS dump to bin (`atoms` only).
    #[arg(value_name = "DUMP", required_if_eq("set", "atoms"))]
    dump: Option<PathBuf>,
    /// Atoms a PE holds at most (`atoms` only; default the seed's 20).
    #[arg(value_name = "NLOCMAX", requires = "dump")]
    nlocmax: Option<usize>,
    /// Atoms with the halo a PE holds at most (`atoms` only; default what the exchange needs).
    #[arg(value_name = "NMAX", requires = "nlocmax")]
    nmax: Option<usize>,
    #[command(subcommand)]
    check: Option<Check>,
}

/// The padded rectangle's dimensions (the globals `paint` gets).
#[derive(clap::Args)]
struct Dims {
    /// Cells along x.
    #[arg(value_name = "NX")]
    nx: usize,
    /// Cells along y.
    #[arg(value_name = "NY")]
    ny: usize,
    /// Cells of z folded along x.
    #[arg(value_name = "NZX")]
    nzx: usize,
    /// Cells of z folded along y.
    #[arg(value_name = "NZY")]
    nzy: usize,
}

impl Dims {
    fn geometry(&self) -> Result<Geometry, String> {
        Geometry::new(self.nx, self.ny, self.nzx, self.nzy)
    }
}

/// Which tables (and inputs) to write.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum TableSet {
    /// The moat check's tables, atom counts 0.
    Moat,
    /// The switch-machine relay's tables, the count relay's counts and `lanes.paint`.
    Relay,
    /// The relay's tables and `mdlj.w`'s inputs from the LAMMPS dump DUMP.
    Atoms,
}

#[derive(clap::Subcommand)]
enum Check {
    /// Checks `core.got` of the moat check (`moatcheck.w`).
    #[command(name = "check-moat")]
    Moat {
        #[command(flatten)]
        dims: Dims,
        /// `core.got` as miget wrote it.
        #[arg(value_name = "GOT")]
        got: PathBuf,
    },
    /// Checks `core.got` of the count relay (`relay.w`); with `core.stamp`, prints the
    /// cycles of each relay.
    #[command(name = "check-relay")]
    Relay {
        #[command(flatten)]
        dims: Dims,
        /// `core.got` as miget wrote it.
        #[arg(value_name = "GOT")]
        got: PathBuf,
        /// `core.stamp` as miget wrote it.
        #[arg(value_name = "STAMP")]
        stamp: Option<PathBuf>,
    },
    /// Checks the count relay's variable-length bursts and reverse relays; with
    /// `core.bstamp`, prints the cycles of each.
    #[command(name = "check-burst")]
    Burst {
        #[command(flatten)]
        dims: Dims,
        /// `core.burst` as miget wrote it.
        #[arg(value_name = "BURST")]
        burst: PathBuf,
        /// `core.fx` as miget wrote it.
        #[arg(value_name = "FX")]
        fx: PathBuf,
        /// `core.fy` as miget wrote it.
        #[arg(value_name = "FY")]
        fy: PathBuf,
        /// `core.zrec` as miget wrote it.
        #[arg(value_name = "ZREC")]
        zrec: PathBuf,
        /// `core.bstamp` as miget wrote it.
        #[arg(value_name = "BSTAMP")]
        bstamp: Option<PathBuf>,
    },
    /// Checks the barrier test (`pingtest.w`'s `core.stamp`, `pingorigin.w`'s `ping.frame`).
    #[command(name = "check-ping")]
    Ping {
        #[command(flatten)]
        dims: Dims,
        /// `core.stamp` as miget wrote it.
        #[arg(value_name = "STAMP")]
        stamp: PathBuf,
        /// `ping.frame` as miget wrote it.
        #[arg(value_name = "FRAME")]
        frame: PathBuf,
    },
    /// Checks a run of `mdlj.w` from what miget wrote into DIR against the reference
    /// energies REF (and the CSL flagship's own table FLAGSHIP); writes `DIR/energies.tsv`.
    #[command(name = "check-energies")]
    Energies {
        #[command(flatten)]
        dims: Dims,
        /// The folder with `epot.bin`, `ekin.bin`, `diag.bin`, `tstamp.bin`, `xchg.bin`,
        /// `prof.bin` and `frame.bin`.
        #[arg(value_name = "DIR")]
        dir: PathBuf,
        /// The reference energy table.
        #[arg(value_name = "REF")]
        reference: PathBuf,
        /// The CSL flagship's energy table for the same input.
        #[arg(value_name = "FLAGSHIP")]
        flagship: Option<PathBuf>,
    },
}

fn write(path: &Path, words: &[u16]) -> Result<(), String> {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(path, bytes).map_err(|e| format!("cannot write `{}`: {e}", path.display()))
}

fn write_text(path: &Path, text: String) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write `{}`: {e}", path.display()))
}

/// Barriers in the barrier test (`B` in ping.paint).
const PING_BARRIERS: usize = 3;

fn read_words(path: &Path) -> Result<Vec<u16>, String> {
    let p = path.display();
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read `{p}`: {e}"))?;
    if bytes.len() % 2 != 0 {
        return Err(format!("`{p}` is not a whole number of 16-bit words"));
    }
    Ok(bytes
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect())
}

/// Limit of the comparison with the CSL flagship's energies on the same input (issue 17).
const FLAGSHIP_LIMIT: f64 = 1e-6;

fn read_table(path: &Path) -> Result<Vec<energies::EnergyRow>, String> {
    let p = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read `{p}`: {e}"))?;
    energies::parse(&text).map_err(|e| format!("{p}: {e}"))
}

/// Prints `what: NAME VALUE, ...` for the named phases' values.
fn print_phases<T: std::fmt::Display>(what: &str, names: &[&str], values: &[T]) {
    let parts: Vec<String> = names
        .iter()
        .zip(values)
        .map(|(p, c)| format!("{p} {c}"))
        .collect();
    println!("{what}: {}", parts.join(", "));
}

/// With `stamps`, prints the cycles of each of `names` (as `phase_cycles` counts them).
fn print_stamp_cycles(
    g: &Geometry,
    what: &str,
    names: &[&str],
    stamps: Option<&PathBuf>,
) -> Result<(), String> {
    if let Some(stamps) = stamps {
        let cycles = phase_cycles(g, &read_words(stamps)?, names.len())?;
        print_phases(what, names, &cycles);
    }
    Ok(())
}

/// `check-energies`: reads `epot.bin`, `ekin.bin`, `diag.bin`, `tstamp.bin`, `xchg.bin`,
/// `prof.bin` and `frame.bin` (`ping.frame`, the barrier origin's count; as miget wrote
/// them) from `dir` and writes `dir/energies.tsv`.
fn check_energies(
    g: &Geometry,
    dir: &Path,
    reference: &Path,
    flagship: Option<&PathBuf>,
) -> Result<(), String> {
    let npe = g.width() * g.height();
    let [epot, ekin, diag, tstamp, xchg, prof, frame] =
        ["epot", "ekin", "diag", "tstamp", "xchg", "prof", "frame"]
            .map(|f| read_words(&dir.join(format!("{f}.bin"))));
    let diag = diag?;
    let (atoms, most, passes) = energy::check_diag(&diag, npe).map_err(|e| format!("FAIL: {e}"))?;
    energy::check_coords(&diag, g.width(), g.height())
        .map_err(|e| format!("FAIL: coordinate registers: {e}"))?;
    energy::check_exchange(g, &xchg?, &diag).map_err(|e| format!("FAIL: exchange oracle: {e}"))?;
    let table = energy::energy_table(&epot?, &ekin?, npe, 1)?;
    write_text(&dir.join("energies.tsv"), energies::write(&table))?;
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
    let phases: Vec<String> = phases.iter().map(|c| format!("{c:.0}")).collect();
    print_phases(
        "cycles per timestep by phase (mean over PEs)",
        &energy::PHASES,
        &phases,
    );
    let r = reference.display();
    let worst = energy::within(&table, &read_table(reference)?, energies::REFERENCE_LIMIT)
        .map_err(|e| format!("FAIL: against {r}: {e}"))?;
    let mut vs = String::from("; no CSL flagship table to compare with");
    if let Some(f) = flagship {
        let w = energy::within(&table, &read_table(f)?, FLAGSHIP_LIMIT)
            .map_err(|e| format!("FAIL: against the CSL flagship ({}): {e}", f.display()))?;
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

/// Prints the PASS line a check's result makes, or turns its error into a FAIL.
fn verdict<T>(result: Result<T, String>, pass: impl FnOnce(T) -> String) -> Result<(), String> {
    let v = result.map_err(|e| format!("FAIL: {e}"))?;
    println!("PASS: {}", pass(v));
    Ok(())
}

fn run_check(check: &Check) -> Result<(), String> {
    match check {
        Check::Moat { dims, got } => {
            let g = dims.geometry()?;
            let words = read_words(got)?;
            verdict(check_moat(&g, &words), |n| {
                format!("{n} turnarounds through the moat, every PE's cell as folded")
            })
        }
        Check::Energies {
            dims,
            dir,
            reference,
            flagship,
        } => check_energies(&dims.geometry()?, dir, reference, flagship.as_ref()),
        Check::Relay { dims, got, stamp } => {
            let g = dims.geometry()?;
            let words = read_words(got)?;
            print_stamp_cycles(
                &g,
                "cycles per relay of three shifts (last PE to last PE)",
                &RELAY_PHASES,
                stamp.as_ref(),
            )?;
            verdict(check_relay(&g, &words), |n| {
                let z = if z_chain_local(&g) {
                    "x, y, z- and z+ (tour) halos"
                } else {
                    "x, y, z- and z+ (1 x n line) halos"
                };
                format!(
                    "count relay, {z} and region starts as the CSL flagship's oracle ({n} words)"
                )
            })
        }
        Check::Burst {
            dims,
            burst,
            fx,
            fy,
            zrec,
            bstamp,
        } => {
            let g = dims.geometry()?;
            print_stamp_cycles(
                &g,
                "cycles per variable-length relay of three shifts (last PE to last PE)",
                &BURST_PHASES,
                bstamp.as_ref(),
            )?;
            let words = [
                read_words(burst)?,
                read_words(fx)?,
                read_words(fy)?,
                read_words(zrec)?,
            ];
            verdict(
                check_burst(&g, &words[0], &words[1], &words[2], &words[3]),
                |n| {
                    format!(
                        "count relay as the oracle; variable-length bursts x+ x- y+ y- and z- \
                         (x-lines) word for word and the reverse x and y relays (<+-) as the host's sums ({n} words)"
                    )
                },
            )
        }
        Check::Ping { dims, stamp, frame } => {
            let g = dims.geometry()?;
            let result = check_ping(&g, PING_BARRIERS, &read_words(stamp)?, &read_words(frame)?);
            verdict(result, |(spread, release)| {
                format!(
                    "{PING_BARRIERS} barriers, no PE left one before the last arrived \
                     (arrivals spread over up to {spread} cycles; the last arrival to a \
                     departure up to {release} cycles)"
                )
            })
        }
    }
}

/// Writes the relay's tables (`router.bin`, `switch.bin`), `params.bin` with `nlocal`
/// and `lanes.paint` into `out`.
fn write_relay(g: &Geometry, out: &Path, nlocal: &[u16]) -> Result<(), String> {
    let (router, switch) = relay_tables(g);
    write(&out.join("router.bin"), &router)?;
    write(&out.join("switch.bin"), &switch)?;
    write(&out.join("params.bin"), &params_blob(g, nlocal, 1)?)?;
    write_text(&out.join("lanes.paint"), lanes_paint(g))
}

fn run_tables(t: &Cli) -> Result<(), String> {
    let (Some(nx), Some(ny), Some(nzx), Some(nzy), Some(out)) = (t.nx, t.ny, t.nzx, t.nzy, &t.out)
    else {
        return Err("no tables to write and no check to run (see --help)".into());
    };
    let g = Geometry::new(nx, ny, nzx, nzy)?;
    if t.set != TableSet::Atoms && t.dump.is_some() {
        return Err("DUMP, NLOCMAX and NMAX go with `atoms` only".into());
    }
    match (t.set, &t.dump) {
        (TableSet::Moat, _) => {
            let nlocal = vec![0u16; g.width() * g.height()];
            write(&out.join("router.bin"), &router_table(&g))?;
            write(&out.join("switch.bin"), &switch_table(&g))?;
            write(&out.join("params.bin"), &params_blob(&g, &nlocal, 1)?)?;
        }
        (TableSet::Relay, _) => write_relay(&g, out, &relay_counts(&g))?,
        (TableSet::Atoms, None) => return Err("`atoms` needs a DUMP".into()),
        (TableSet::Atoms, Some(dump)) => {
            let p = dump.display();
            let text =
                std::fs::read_to_string(dump).map_err(|e| format!("cannot read `{p}`: {e}"))?;
            let d = Dump::parse(&text).map_err(|e| format!("{p}: {e}"))?;
            let nlocmax = t.nlocmax.unwrap_or(NLOCMAX);
            let a = atom_inputs(&d, &g, nlocmax, t.nmax)?;
            write_relay(&g, out, &a.nlocal)?;
            write(&out.join("fparams.bin"), &a.fparams)?;
            write(&out.join("posin.bin"), &a.posin)?;
            write(&out.join("velin.bin"), &a.velin)?;
            write_text(&out.join("mdlj-classes.paint"), mdlj_classes_paint(&g))?;
            println!(
                "{} atoms on {} PEs: NLOCMAX {nlocmax}, NMAX {} (the exchange needs {})",
                a.nlocal.iter().map(|&n| usize::from(n)).sum::<usize>(),
                a.nlocal.len(),
                t.nmax.unwrap_or(a.nmax_needed),
                a.nmax_needed
            );
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    use clap::Parser as _;
    let cli = Cli::parse();
    let result = match &cli.check {
        Some(check) => run_check(check),
        None => run_tables(&cli),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mdlj-tables: error: {e}");
            ExitCode::FAILURE
        }
    }
}
