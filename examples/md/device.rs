//! Runs the device program: bins the atoms into cells, sizes the per-PE arrays, compiles
//! `examples/md/layout.csl` for the geometry, copies every PE's data in, launches
//! `run_md`, and reads the energies, timestamps, diagnostics and final atoms back.

use super::dump::{Atom, Dump};
use super::energies::EnergyRow;
use super::geometry::{Geometry, RANGE};
use super::rings;
use csl_arch::Arch;
use cslsim::host::{Region, SdkRuntime, Transfer};
use std::path::Path;

/// What to run.
#[derive(Clone, Debug)]
pub struct Config {
    /// The decomposition.
    pub geometry: Geometry,
    /// Outer iterations.
    pub steps: u32,
    /// Inner steps per outer iteration.
    pub ninner: u32,
    /// Outer iterations per sample (energy record and global barrier).
    pub nsample: u32,
    /// Time step.
    pub dt: f64,
    /// Cutoff.
    pub rcut: f64,
    /// Target architecture.
    pub arch: Arch,
    /// Capacity overrides (atoms owned, resident records, pairs per PE).
    pub nloc: Option<u32>,
    /// See `nloc`.
    pub nmax: Option<u32>,
    /// See `nloc`.
    pub npair: Option<u32>,
    /// Simulated-cycle bound of the run.
    pub max_cycles: u64,
    /// Threads that step the fabric (`None`: the simulator's default; results are the
    /// same for every number).
    pub threads: Option<usize>,
    /// Stepping knobs for the determinism tests (`None`: the simulator's defaults): the
    /// fewest active routers or CEs for a phase to be split among the threads, and
    /// whether cycles are stepped in persistent batches (`runtime-sim/SIMULATOR.md` §10).
    pub split: Option<usize>,
    /// See `split`.
    pub persistent: Option<bool>,
    /// Samples per launch of the device program (see [`SAMPLES_PER_LAUNCH`]).
    pub samples_per_launch: u32,
    /// Let the pair list leave out the minimum image where the positions allow it and
    /// narrow each atom's search to its own reach, where the host finds that they pay
    /// (`icfg[25]` bits 20–26). The rows are the same bits either way; `false` is for
    /// the test that checks it.
    pub pair_shortcuts: bool,
    /// Run the compiler's IR optimiser (`-O0` turns it off).
    pub optimize: bool,
    /// How the steps done are reported on standard error.
    pub progress: Progress,
    /// How the x and y halos travel (see `rings::Relay`).
    pub relay: rings::Relay,
    /// Write a timeline (Perfetto JSON) of the PEs of the rectangle to the file.
    pub perfetto: Option<(String, cslsim::PeRect)>,
    /// Write a heatmap (PNG) of the run to the file.
    pub heatmap: Option<String>,
}

/// The capacities the device program was compiled with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capacities {
    /// Atoms owned per PE.
    pub nloc: u32,
    /// Resident records (own plus halo copies) per PE.
    pub nmax: u32,
    /// Pair-list entries per PE.
    pub npair: u32,
}

/// Samples (energy records) per launch of the device program by default: longer runs are
/// split into several launches, which keeps the record arrays small whatever the number
/// of steps.
pub const SAMPLES_PER_LAUNCH: u32 = 50;

/// Words of the device's `icfg` array (see md.csl).
const ICFG_LEN: usize = 27;

/// The role of coordinate `c` on an axis of `n` PEs in the barrier's gather (md.csl
/// `BAR_*`, layout.csl `bar_role`): 0 the low end, 1 the low half, 2 the middle `n / 2`,
/// 3 the high half, 4 the high end. Runtime data (`icfg[26]`: along the row, in the middle
/// column along the column) rather than a
/// param, so that it does not split the tiles into more program classes.
fn bar_role(c: usize, n: usize) -> u32 {
    if c == n / 2 {
        2
    } else if c == 0 {
        0
    } else if c == n - 1 {
        4
    } else if c < n / 2 {
        1
    } else {
        3
    }
}

/// Words of the device's `diag` array (see md.csl).
pub const DIAG_LEN: usize = 32;

/// What a run produced.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Energies of frames 0, nsample, 2·nsample, … outer iterations (summed over PEs).
    pub energies: Vec<EnergyRow>,
    /// Simulated cycles per timestep (first to last frame, on the slowest PE).
    pub cycles_per_step: f64,
    /// Simulated cycles of the whole run (including loading and copies).
    pub total_cycles: u64,
    /// Capacities used.
    pub caps: Capacities,
    /// The final atoms (positions wrapped into the box), sorted by id.
    pub atoms: Vec<Atom>,
    /// Each PE's `diag` words, indexed `py * width + px`.
    pub diag: Vec<[u32; DIAG_LEN]>,
    /// Wall time of the simulation (load to stop), in seconds.
    pub wall_seconds: f64,
    /// PE-cycles summed over the rectangle: busy, stalled (waiting inside a task), idle.
    pub pe_cycles: [u64; 3],
    /// Instructions executed by all PEs.
    pub instructions: u64,
    /// Cycles per timestep in each phase of the device program, averaged over PEs, in the
    /// order of [`PHASES`].
    pub phase_cycles: [f64; 7],
    /// The same per PE: the median over PEs, and the largest with its PE `(x, y)`.
    pub phase_spread: [PhaseSpread; 7],
}

/// How one phase's cycles per timestep spread over the PEs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PhaseSpread {
    pub median: f64,
    pub max: f64,
    /// The PE with the largest count (the first in row-major order on a tie).
    pub max_pe: (usize, usize),
}

/// The phases of the device program's cycle profile.
pub const PHASES: [&str; 7] = [
    "halo exchange",
    "pair list",
    "forces",
    "force reduction",
    "integration",
    "migration",
    "barrier",
];

/// The cell of a coordinate along an axis of `n` cells (lower faces inclusive).
fn cell_of(x: f64, lo: f64, len: f64, n: usize) -> usize {
    let mut u = (x - lo) / len;
    u -= u.floor();
    ((u * n as f64) as usize).min(n - 1)
}

/// Atoms per cell, indexed `(z * ny + y) * nx + x`.
pub fn bin(d: &Dump, g: &Geometry) -> Vec<Vec<usize>> {
    let b = d.box_len();
    let n = [g.nx, g.ny, g.nz()];
    let mut cells = vec![Vec::new(); g.nx * g.ny * g.nz()];
    for (i, a) in d.atoms.iter().enumerate() {
        let c: Vec<usize> = (0..3)
            .map(|k| cell_of(a.pos[k], d.lo[k], b[k], n[k]))
            .collect();
        cells[(c[2] * g.ny + c[1]) * g.nx + c[0]].push(i);
    }
    cells
}

/// The centre (in box coordinates) and the edge lengths of cell (x, y, z) of the dump's
/// box cut as `g` cuts it.
pub fn cell_frame(
    d: &Dump,
    g: &Geometry,
    (x, y, z): (usize, usize, usize),
) -> ([f64; 3], [f64; 3]) {
    let b = d.box_len();
    let n = [g.nx, g.ny, g.nz()];
    let idx = [x, y, z];
    let width: [f64; 3] = std::array::from_fn(|k| b[k] / n[k] as f64);
    let centre = std::array::from_fn(|k| d.lo[k] + (idx[k] as f64 + 0.5) * width[k]);
    (centre, width)
}

/// The halo regions of the PE of cell (x, y, z), as the device builds them: per region
/// the cells in order (xm, x0, xp, z lines, ym, y0, yp), each cell as (x, y, z).
pub struct Regions {
    /// Cells x−1..x−3.
    pub xm: Vec<(usize, usize, usize)>,
    /// Cells x+1..x+3.
    pub xp: Vec<(usize, usize, usize)>,
    /// Cells y−1..y−3.
    pub ym: Vec<(usize, usize, usize)>,
    /// Cells y+1..y+3.
    pub yp: Vec<(usize, usize, usize)>,
}

fn regions(g: &Geometry, x: usize, y: usize, z: usize) -> Regions {
    let back = |v: usize, k: usize, n: usize| (v + n * RANGE - k) % n;
    let fwd = |v: usize, k: usize, n: usize| (v + k) % n;
    Regions {
        xm: (1..=RANGE).map(|k| (back(x, k, g.nx), y, z)).collect(),
        xp: (1..=RANGE).map(|k| (fwd(x, k, g.nx), y, z)).collect(),
        ym: (1..=RANGE).map(|k| (x, back(y, k, g.ny), z)).collect(),
        yp: (1..=RANGE).map(|k| (x, fwd(y, k, g.ny), z)).collect(),
    }
}

/// The `diag` words 6..30 (halo counts and region starts) a PE must report for the given
/// atoms per cell: the exchange oracle.
pub fn expected_exchange(
    g: &Geometry,
    count: &dyn Fn(usize, usize, usize) -> u32,
    x: usize,
    y: usize,
    z: usize,
) -> [u32; 24] {
    let r = regions(g, x, y, z);
    let c = |cells: &[(usize, usize, usize)]| -> Vec<u32> {
        cells.iter().map(|&(a, b, d)| count(a, b, d)).collect()
    };
    let own = count(x, y, z);
    let line = |zz: usize| -> u32 {
        let r = regions(g, x, y, zz);
        count(x, y, zz)
            + r.xm
                .iter()
                .chain(&r.xp)
                .map(|&(a, b, d)| count(a, b, d))
                .sum::<u32>()
    };
    let (xm, xp, ym, yp) = (c(&r.xm), c(&r.xp), c(&r.ym), c(&r.yp));
    let zl: Vec<u32> = (1..=RANGE).map(|k| line((z + k) % g.nz())).collect();
    let mut out = [0u32; 24];
    for (k, v) in [&xm, &xp, &ym, &yp, &zl].into_iter().enumerate() {
        out[3 * k..3 * k + 3].copy_from_slice(v);
    }
    // Region starts: own, xm, x0, xp, z lines, ym, y0, yp.
    let sum = |v: &[u32]| v.iter().sum::<u32>();
    let xline = own;
    let x0 = xline + sum(&xm);
    let xp0 = x0 + own;
    let xend = xp0 + sum(&xp);
    let zend = xend + sum(&zl);
    let yline = zend;
    let y0 = yline + sum(&ym);
    let yp0 = y0 + own;
    let yend = yp0 + sum(&yp);
    out[15..24].copy_from_slice(&[xline, x0, xp0, xend, zend, yline, y0, yp0, yend]);
    out
}

fn min_image(d: f64, l: f64) -> f64 {
    d - l * (d / l).round()
}

/// Capacities from the initial state: the largest cell, the largest halo, and the most
/// pairs a PE lists (with the cutoff widened by 10 %), each with a margin.
/// The automatic capacities (with margins for atoms that move), and the least the host
/// needs to place the initial atoms (`npair` is not bounded below).
fn capacities(d: &Dump, g: &Geometry, cells: &[Vec<usize>], rcut: f64) -> (Capacities, Capacities) {
    let idx = |x: usize, y: usize, z: usize| (z * g.ny + y) * g.nx + x;
    let count = |x: usize, y: usize, z: usize| cells[idx(x, y, z)].len() as u32;
    let maxcell = cells.iter().map(Vec::len).max().unwrap_or(0) as u32;
    let b = d.box_len();
    let r2 = (1.1 * rcut) * (1.1 * rcut);
    let close = |i: usize, j: usize| {
        let (p, q) = (&d.atoms[i].pos, &d.atoms[j].pos);
        (0..3)
            .map(|k| min_image(p[k] - q[k], b[k]).powi(2))
            .sum::<f64>()
            < r2
    };
    let (mut maxres, mut maxpairs) = (0u32, 0u32);
    for z in 0..g.nz() {
        for y in 0..g.ny {
            for x in 0..g.nx {
                let e = expected_exchange(g, &count, x, y, z);
                maxres = maxres.max(e[23]);
                // The device's pair sets: the y-line against the x+ halo and z+ x-lines;
                // the own cell against itself and the y+ halo.
                let r = regions(g, x, y, z);
                let atoms_of = |cs: &[(usize, usize, usize)]| -> Vec<usize> {
                    cs.iter()
                        .flat_map(|&(a, bb, c)| cells[idx(a, bb, c)].clone())
                        .collect()
                };
                let own = cells[idx(x, y, z)].clone();
                let mut yline = atoms_of(&r.ym);
                yline.extend(&own);
                yline.extend(atoms_of(&r.yp));
                let mut right = atoms_of(&r.xp);
                for k in 1..=RANGE {
                    let zz = (z + k) % g.nz();
                    let rz = regions(g, x, y, zz);
                    right.extend(atoms_of(&rz.xm));
                    right.extend(&cells[idx(x, y, zz)]);
                    right.extend(atoms_of(&rz.xp));
                }
                let mut n = yline
                    .iter()
                    .flat_map(|&i| right.iter().map(move |&j| (i, j)))
                    .filter(|&(i, j)| close(i, j))
                    .count();
                let ypl = atoms_of(&r.yp);
                for (a, &i) in own.iter().enumerate() {
                    n += own[a + 1..]
                        .iter()
                        .chain(&ypl)
                        .filter(|&&j| close(i, j))
                        .count();
                }
                maxpairs = maxpairs.max(n as u32);
            }
        }
    }
    let auto = Capacities {
        nloc: maxcell + 2 + maxcell / 2,
        nmax: maxres + maxres / 4 + 8,
        npair: maxpairs + maxpairs / 4 + 16,
    };
    // The host writes each cell's atoms into nloc- and nmax-sized slots, so both must hold
    // the fullest cell. (An nmax too small for the halo is the device's to report: it
    // flags the overflow and the run ends normally, naming --nmax.)
    let least = Capacities {
        nloc: maxcell,
        nmax: maxcell,
        npair: 0,
    };
    (auto, least)
}

/// A copy-mode memcpy of 32-bit words, `per` per PE, over the whole `region` (width,
/// height), row-major: host to device when `to_device`, else device to host.
fn transfer(
    rt: &mut SdkRuntime,
    name: &str,
    data: &mut [u32],
    region: (u32, u32),
    per: usize,
    to_device: bool,
) -> Result<(), String> {
    let id = rt.get_id(name).map_err(host_err)?;
    let region = Region::new(0, 0, region.0, region.1, per as u32);
    if to_device {
        rt.h2d(id, data, region, Transfer::COPY)
    } else {
        rt.d2h(data, id, region, Transfer::COPY)
    }
    .map_err(host_err)
}

fn host_err(e: cslsim::host::HostError) -> String {
    e.to_string()
}

/// Compiles the device program for `g` and `caps`, with `frames` energy records per PE
/// and `cfg`'s relay, architecture and optimisation level.
pub fn compile(
    g: &Geometry,
    caps: Capacities,
    frames: u32,
    cfg: &Config,
) -> Result<cslc::driver::Output, String> {
    let layout = Path::new(env!("CARGO_MANIFEST_DIR")).join("md/layout.csl");
    let params = [
        ("nx", g.nx as u32),
        ("ny", g.ny as u32),
        ("nzx", g.nzx as u32),
        ("nzy", g.nzy as u32),
        ("nloc", caps.nloc),
        ("nmax", caps.nmax),
        ("npair", caps.npair),
        ("nframes", frames),
        ("express_x", u32::from(cfg.relay.express_on(g, 0))),
        ("express_y", u32::from(cfg.relay.express_on(g, 1))),
        ("switch_x", u32::from(cfg.relay.switch_on(g, 0))),
        ("switch_y", u32::from(cfg.relay.switch_on(g, 1))),
        ("switch_z", u32::from(cfg.relay.z_machine(g))),
    ];
    let opts = cslc::driver::Options {
        arch: cfg.arch,
        optimize: cfg.optimize,
        fabric_dims: (g.width() as u32 + 7, g.height() as u32 + 2),
        fabric_offsets: (4, 1),
        params: params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..cslc::driver::Options::default()
    };
    let comp = cslc::driver::compile_file(&layout, &opts);
    let rendered = cslc::diag::render_all(&comp.diagnostics, &comp.sources, false);
    comp.output
        .ok_or_else(|| format!("the device program does not compile:\n{rendered}"))
}

/// Runs the device program on `d`.
/// Progress reports of a run, on standard error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// One line rewritten after every launch (`\r`), for a terminal.
    Terminal,
    /// A line each time this many more steps are done (0: never), for a log file.
    Lines(u64),
}

pub fn run(d: &Dump, cfg: &Config) -> Result<Outcome, String> {
    let g = &cfg.geometry;
    let b = d.box_len();
    g.check_cutoff(b, cfg.rcut)?;
    if let Some(k) = (0..3).find(|&k| b[k] < 2.0 * cfg.rcut) {
        return Err(format!(
            "the box ({:.4} along axis {k}) is shorter than twice the cutoff {}",
            b[k], cfg.rcut
        ));
    }
    let cells = bin(d, g);
    let (auto, least) = capacities(d, g, &cells, cfg.rcut);
    let caps = Capacities {
        nloc: cfg.nloc.unwrap_or(auto.nloc),
        nmax: cfg.nmax.unwrap_or(auto.nmax),
        npair: cfg.npair.unwrap_or(auto.npair),
    };
    if cfg.nsample == 0 {
        return Err("nsample must be at least 1".into());
    }
    // Capacities given on the command line must hold every cell's atoms (the host writes
    // them into nloc- and nmax-sized slots). Checked before the long compile and run.
    for (flag, cap, need, what, auto) in [
        (
            "--nloc",
            caps.nloc,
            least.nloc,
            "atoms of the fullest cell",
            auto.nloc,
        ),
        (
            "--nmax",
            caps.nmax,
            least.nmax,
            "atoms of the fullest cell",
            auto.nmax,
        ),
    ] {
        if cap < need {
            return Err(format!(
                "{flag} {cap} is smaller than the {need} {what}; use at least {need} (or leave {flag} out: the automatic value is {auto})"
            ));
        }
    }
    // Long runs go in chunks of whole samples, so that the record arrays stay small.
    let samples = cfg.steps / cfg.nsample;
    let chunk = samples.clamp(1, cfg.samples_per_launch.max(1));
    let out = compile(g, caps, chunk + 1, cfg)?;
    let (w, h) = (g.width(), g.height());
    let npe = w * h;
    let rings = rings::build(g, cfg.relay)?;

    // Per-PE inputs, row-major over the rectangle.
    let (nloc, nmax) = (caps.nloc as usize, caps.nmax as usize);
    let mut icfg = vec![0u32; npe * ICFG_LEN];
    // The minimum-image check pays where rows are long: at three quarters of an atom per
    // cell or more (measured: 4,000 atoms on 16 × 16 × 16 cells, 0.98 per cell, 23,758
    // cycles per timestep with it, 24,300 without; 1,372 atoms on 15 × 15 × 10, 0.61 per
    // cell, 16,709 with it against 16,174 without; lj108's 0.2 per cell gives rows of a
    // few candidates).
    let dense = 4 * d.atoms.len() >= 3 * g.nx * g.ny * g.nz();
    let checks = if dense && cfg.pair_shortcuts {
        g.min_image_checks()
    } else {
        0
    };
    let own = cfg.pair_shortcuts && g.atom_reach(b, cfg.rcut);
    let shifts = checks & g.image_shifts();
    let reach = g.pair_reach(b, cfg.rcut) | checks << 20 | u32::from(own) << 23 | shifts << 24;
    let mut fcfg = vec![0u32; npe * 21];
    let mut pos = vec![0u32; npe * 4 * nmax];
    let mut vel = vec![0u32; npe * 3 * nloc];
    let f = |v: f64| (v as f32).to_bits();
    for py in 0..h {
        for px in 0..w {
            let p = py * w + px;
            let c = g.cell(px, py);
            let mine = &cells[(c.z * g.ny + c.y) * g.nx + c.x];
            if mine.len() > nloc {
                return Err(format!(
                    "cell ({}, {}, {}) holds {} atoms but the device keeps at most {nloc} (raise --nloc)",
                    c.x,
                    c.y,
                    c.z,
                    mine.len()
                ));
            }
            let ic = &mut icfg[p * ICFG_LEN..(p + 1) * ICFG_LEN];
            ic[0] = mine.len() as u32;
            ic[1] = cfg.steps;
            ic[2] = cfg.ninner;
            ic[21] = cfg.nsample;
            ic[25] = reach;
            ic[26] = if px == w / 2 {
                bar_role(py, h)
            } else {
                bar_role(px, w)
            };
            for ax in 0..3 {
                ic[3 + 6 * ax..9 + 6 * ax].copy_from_slice(&rings[p][ax].words());
                ic[22 + ax] = rings[p][ax].order_word();
            }
            for ax in 0..2 {
                if cfg.relay.switch_on(g, ax) {
                    ic[22 + ax] |= super::switch::order_bits(g, &c, ax);
                }
            }
            if cfg.relay.z_machine_at(g, cfg.arch, px) {
                ic[24] |= super::switch::order_bits(g, &c, 2);
            }
            let (centre, width) = cell_frame(d, g, (c.x, c.y, c.z));
            let fc = &mut fcfg[p * 21..(p + 1) * 21];
            fc[0] = f(cfg.dt);
            fc[1] = f(cfg.rcut * cfg.rcut);
            fc[2..6].copy_from_slice(&[f(1.0), f(1.0), f(1.0), f(1.0)]);
            for k in 0..3 {
                fc[6 + k] = f(b[k]);
                fc[9 + k] = f(1.0 / b[k]);
                fc[12 + k] = f(centre[k]);
                fc[15 + k] = f(-0.5 * width[k]);
                fc[18 + k] = f(0.5 * width[k]);
            }
            for (slot, &i) in mine.iter().enumerate() {
                let a = &d.atoms[i];
                let id = if a.typ == 1 {
                    -(a.id as f64)
                } else {
                    a.id as f64
                };
                let at = p * 4 * nmax + 4 * slot;
                pos[at..at + 4].copy_from_slice(&[f(a.pos[0]), f(a.pos[1]), f(a.pos[2]), f(id)]);
                let at = p * 3 * nloc + 3 * slot;
                vel[at..at + 3].copy_from_slice(&[f(a.vel[0]), f(a.vel[1]), f(a.vel[2])]);
            }
        }
    }

    let started = std::time::Instant::now();
    let mut rt = SdkRuntime::from_image(out.image).with_max_cycles(cfg.max_cycles);
    if let Some(t) = cfg.threads {
        rt = rt.with_threads(t);
    }
    if let Some(n) = cfg.split {
        rt = rt.with_split_threshold(n);
    }
    if let Some(on) = cfg.persistent {
        rt = rt.with_persistent(on);
    }
    // A development aid: `MDLJ_TRACE=X,Y` (a PE) or `all` writes the simulator's
    // instruction and wavelet trace to `MDLJ_TRACE_FILE` (default mdlj-trace.txt).
    if let Some(f) = std::env::var("MDLJ_TRACE")
        .ok()
        .and_then(|v| cslsim::TraceFilter::parse(&v))
    {
        let path = std::env::var("MDLJ_TRACE_FILE").unwrap_or_else(|_| "mdlj-trace.txt".into());
        let file = std::fs::File::create(&path).map_err(|e| format!("{path}: {e}"))?;
        rt = rt.with_trace(cslsim::Tracer::new(
            f,
            Box::new(std::io::BufWriter::new(file)),
        ));
    }
    if let Some((_, pes)) = &cfg.perfetto {
        rt = rt.with_perfetto(cslsim::PerfettoConfig {
            pes: *pes,
            ..cslsim::PerfettoConfig::default()
        });
    }
    rt.load().map_err(host_err)?;
    rt.run().map_err(host_err)?;
    let region = (w as u32, h as u32);
    let put = |rt: &mut SdkRuntime, name: &str, data: &[u32], per: usize| -> Result<(), String> {
        let mut buf = data.to_vec();
        transfer(rt, name, &mut buf, region, per, true)
    };
    put(&mut rt, "icfg", &icfg, ICFG_LEN)?;
    put(&mut rt, "fcfg", &fcfg, 21)?;
    put(&mut rt, "pos", &pos, 4 * nmax)?;
    put(&mut rt, "vel", &vel, 3 * nloc)?;
    let get = |rt: &mut SdkRuntime, name: &str, per: usize| -> Result<Vec<u32>, String> {
        let mut v = vec![0u32; npe * per];
        transfer(rt, name, &mut v, region, per, false)?;
        Ok(v)
    };
    let val = |v: u32| f64::from(f32::from_bits(v));
    let every = u64::from(cfg.nsample * cfg.ninner);
    let mut energies = Vec::new();
    let mut span = 0u64;
    let mut prof_sum = vec![0u64; npe * 8];
    let mut done = 0u32;
    loop {
        let n = (samples - done).min(chunk);
        // Each launch continues from the device's state (it keeps its own atom count in
        // icfg[0]); only the number of outer iterations changes.
        let mut ic = get(&mut rt, "icfg", ICFG_LEN)?;
        for p in 0..npe {
            ic[p * ICFG_LEN + 1] = n * cfg.nsample;
        }
        put(&mut rt, "icfg", &ic, ICFG_LEN)?;
        rt.launch("run_md", &[], false).map_err(host_err)?;
        let fr = n as usize + 1;
        let per = chunk as usize + 1;
        let epot = get(&mut rt, "epot", per)?;
        let ekin = get(&mut rt, "ekin", per)?;
        let tstamp = get(&mut rt, "tstamp", 3 * per)?;
        let prof = get(&mut rt, "prof", 8)?;
        // A continuation's frame 0 repeats the previous launch's last frame.
        let first = if done == 0 { 0 } else { 1 };
        for k in first..fr {
            let pot: f64 = (0..npe).map(|p| val(epot[p * per + k])).sum();
            let kin: f64 = (0..npe).map(|p| val(ekin[p * per + k])).sum();
            energies.push(EnergyRow {
                step: (u64::from(done) + k as u64) * every,
                potential: pot,
                kinetic: kin,
                total: pot + kin,
            });
        }
        let stamp = |p: usize, k: usize| -> u64 {
            let t = &tstamp[p * 3 * per + 3 * k..p * 3 * per + 3 * k + 3];
            u64::from(t[0] & 0xffff)
                | (u64::from(t[1] & 0xffff) << 16)
                | (u64::from(t[2] & 0xffff) << 32)
        };
        span += (0..npe)
            .map(|p| stamp(p, fr - 1).saturating_sub(stamp(p, 0)))
            .max()
            .unwrap_or(0);
        for (acc, &v) in prof_sum.iter_mut().zip(&prof) {
            *acc += u64::from(v);
        }
        let before = u64::from(done) * every;
        done += n;
        let (now, total) = (u64::from(done) * every, u64::from(samples) * every);
        match cfg.progress {
            Progress::Terminal => {
                eprint!("\r  {now} of {total} steps simulated");
                if done >= samples {
                    eprintln!();
                }
            }
            Progress::Lines(k) if k > 0 && now / k > before / k => {
                eprintln!("  {now} of {total} steps simulated");
            }
            Progress::Lines(_) => {}
        }
        if done >= samples {
            break;
        }
    }
    let diag_words = get(&mut rt, "diag", DIAG_LEN)?;
    let pos_out = get(&mut rt, "pos", 4 * nmax)?;
    let vel_out = get(&mut rt, "vel", 3 * nloc)?;
    rt.stop().map_err(host_err)?;
    // In an MPI run rank 0 writes the files (the other ranks would write the same paths).
    if let Some((path, _)) = cfg.perfetto.as_ref().filter(|_| cslsim::dist::is_root()) {
        rt.write_perfetto(Path::new(path)).map_err(host_err)?;
    }
    if let Some(path) = cfg.heatmap.as_ref().filter(|_| cslsim::dist::is_root()) {
        rt.write_heatmap(Path::new(path)).map_err(host_err)?;
    }
    let total_cycles = rt.cycles();
    let stats = rt.stats();
    let pe_cycles = [
        stats.pes.iter().map(|p| p.busy_cycles).sum(),
        stats.pes.iter().map(|p| p.stalled_cycles).sum(),
        stats.pes.iter().map(|p| p.idle_cycles).sum(),
    ];
    let wall_seconds = started.elapsed().as_secs_f64();

    let diag: Vec<[u32; DIAG_LEN]> = diag_words
        .chunks(DIAG_LEN)
        .map(|c| {
            let mut a = [0u32; DIAG_LEN];
            a.copy_from_slice(c);
            a
        })
        .collect();
    for (p, dg) in diag.iter().enumerate() {
        if dg[0] != 0 {
            return Err(overflow_message(dg[0], p % w, p / w, caps));
        }
    }
    let timesteps = (u64::from(samples) * every).max(1);
    let cycles_per_step = span as f64 / timesteps as f64;
    let mut phase_cycles = [0.0f64; 7];
    for (k, c) in phase_cycles.iter_mut().enumerate() {
        let sum: u64 = (0..npe).map(|p| prof_sum[p * 8 + k]).sum();
        *c = sum as f64 / npe as f64 / timesteps as f64;
    }
    // A development aid: `MDLJ_PROFILE_PES=FILE` writes every PE's phase cycles per
    // timestep (x, y, then the phases of PHASES) as TSV.
    if let Ok(path) = std::env::var("MDLJ_PROFILE_PES") {
        let mut t = String::from("x\ty\t");
        t.push_str(&PHASES.join("\t"));
        for p in 0..npe {
            t.push_str(&format!("\n{}\t{}", p % w, p / w));
            for k in 0..7 {
                t.push_str(&format!("\t{}", prof_sum[p * 8 + k] / timesteps));
            }
        }
        t.push('\n');
        std::fs::write(&path, t).map_err(|e| format!("{path}: {e}"))?;
    }
    let mut phase_spread = [PhaseSpread::default(); 7];
    for (k, sp) in phase_spread.iter_mut().enumerate() {
        let per = |p: usize| prof_sum[p * 8 + k] as f64 / timesteps as f64;
        let mut v: Vec<f64> = (0..npe).map(per).collect();
        let top = (0..npe).fold(0, |b, p| if per(p) > per(b) { p } else { b });
        v.sort_by(f64::total_cmp);
        *sp = PhaseSpread {
            median: v.get(npe / 2).copied().unwrap_or(0.0),
            max: per(top),
            max_pe: (top % w, top / w),
        };
    }

    let mut atoms = Vec::with_capacity(d.atoms.len());
    for p in 0..npe {
        let n = diag[p][1] as usize;
        for a in 0..n {
            let r = &pos_out[p * 4 * nmax + 4 * a..p * 4 * nmax + 4 * a + 4];
            let v = &vel_out[p * 3 * nloc + 3 * a..p * 3 * nloc + 3 * a + 3];
            let id = val(r[3]);
            let wrap = |x: f64, k: usize| d.lo[k] + (x - d.lo[k]).rem_euclid(b[k]);
            atoms.push(Atom {
                id: id.abs() as u32,
                typ: if id < 0.0 { 1 } else { 2 },
                pos: [wrap(val(r[0]), 0), wrap(val(r[1]), 1), wrap(val(r[2]), 2)],
                vel: [val(v[0]), val(v[1]), val(v[2])],
            });
        }
    }
    atoms.sort_by_key(|a| a.id);
    if atoms.len() != d.atoms.len() {
        return Err(format!(
            "the device holds {} atoms at the end, the input had {}",
            atoms.len(),
            d.atoms.len()
        ));
    }
    Ok(Outcome {
        energies,
        cycles_per_step,
        total_cycles,
        caps,
        atoms,
        diag,
        wall_seconds,
        pe_cycles,
        instructions: stats.instructions,
        phase_cycles,
        phase_spread,
    })
}

fn overflow_message(flags: u32, px: usize, py: usize, caps: Capacities) -> String {
    let mut what = Vec::new();
    if flags & 1 != 0 {
        what.push(format!(
            "more than nloc = {} atoms in one cell (raise --nloc)",
            caps.nloc
        ));
    }
    if flags & 2 != 0 {
        what.push(format!(
            "more than nmax = {} resident records (raise --nmax)",
            caps.nmax
        ));
    }
    if flags & 4 != 0 {
        what.push(format!(
            "more than npair = {} pairs (raise --npair)",
            caps.npair
        ));
    }
    if flags & 8 != 0 {
        what.push("a relayed block larger than the slot buffer (raise --nloc)".into());
    }
    // A region that did not fit leaves its returning force blocks short: not a bug of its own.
    if flags & 16 != 0 && flags & (2 | 8) == 0 {
        what.push(
            "a returning force block that does not match its halo region (internal error)".into(),
        );
    }
    format!("PE ({px}, {py}) overflowed: {}", what.join("; "))
}

/// Compares the halo counts and region starts every PE reported with those recomputed
/// from the final cell contents. Returns the number of PEs checked.
pub fn check_exchange(g: &Geometry, out: &Outcome) -> Result<usize, String> {
    let w = g.width();
    let mut count = vec![0u32; g.nx * g.ny * g.nz()];
    for py in 0..g.height() {
        for px in 0..w {
            let c = g.cell(px, py);
            count[(c.z * g.ny + c.y) * g.nx + c.x] = out.diag[py * w + px][1];
        }
    }
    let cnt = |x: usize, y: usize, z: usize| count[(z * g.ny + y) * g.nx + x];
    for py in 0..g.height() {
        for px in 0..w {
            let c = g.cell(px, py);
            let want = expected_exchange(g, &cnt, c.x, c.y, c.z);
            let got = &out.diag[py * w + px][6..30];
            if got != want {
                return Err(format!(
                    "PE ({px}, {py}) (cell {}, {}, {}) built the halo {got:?}, the host expects {want:?}",
                    c.x, c.y, c.z
                ));
            }
        }
    }
    Ok(w * g.height())
}
