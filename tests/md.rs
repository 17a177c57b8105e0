//! The molecular-dynamics flagship end to end: the CSL device program compiled for several
//! geometries, run on the simulator, and checked against the shared reference energies
//! (an independent MD engine), against exact replica scaling, and against the host's
//! recomputation of every PE's halo (the exchange oracle).

use csl_arch::Arch;
use csl_examples::md::device::{self, Config, Outcome};
use csl_examples::md::dump::Dump;
use csl_examples::md::energies::{self, EnergyRow};
use csl_examples::md::generate;
use csl_examples::md::geometry::Geometry;
use csl_examples::md::reference::{Params, System};
use csl_examples::md::rings::Relay;

fn lj108() -> Dump {
    let path = csl_tests::repo_root().join("examples/md/data/lj108.dump");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Dump::parse(&text).unwrap_or_else(|e| panic!("lj108.dump: {e}"))
}

fn reference() -> Vec<EnergyRow> {
    let path = csl_tests::repo_root().join("examples/md/data/lj108_10.tsv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    energies::parse(&text).unwrap_or_else(|e| panic!("lj108_10.tsv: {e}"))
}

/// A run with the default relay (the switch machine along x, y and z).
fn config(dims: [usize; 4], steps: u32, arch: Arch) -> Config {
    Config {
        geometry: Geometry::new(dims[0], dims[1], dims[2], dims[3])
            .unwrap_or_else(|e| panic!("{e}")),
        steps,
        ninner: 1,
        nsample: 1,
        dt: 0.001,
        rcut: 2.5,
        arch,
        nloc: None,
        nmax: None,
        npair: None,
        max_cycles: 500_000_000,
        threads: None,
        split: None,
        persistent: None,
        samples_per_launch: device::SAMPLES_PER_LAUNCH,
        pair_shortcuts: true,
        optimize: true,
        progress: device::Progress::Lines(0),
        relay: Relay::Switch,
        perfetto: None,
        heatmap: None,
    }
}

fn run(d: &Dump, cfg: &Config) -> Outcome {
    let out = device::run(d, cfg).unwrap_or_else(|e| panic!("{:?}: {e}", cfg.geometry));
    device::check_exchange(&cfg.geometry, &out).unwrap_or_else(|e| panic!("exchange oracle: {e}"));
    out
}

/// Checks the first `got.len()` rows of the reference.
fn check(got: &[EnergyRow]) {
    let r = reference();
    let worst = energies::compare(got, &r[..got.len()]).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        worst.iter().all(|&e| e <= 1e-5),
        "energies differ from the reference: {worst:?}\n{got:?}"
    );
}

#[test]
fn seed_geometry_passes_the_reference_check() {
    // nx = ny = 8, nzx = 4, nzy = 2: 512 cells on a 32 × 16 patch, 10 steps.
    let out = run(&lj108(), &config([8, 8, 4, 2], 10, Arch::Wse2));
    assert_eq!(out.energies.len(), 11);
    check(&out.energies);
    assert!(out.cycles_per_step > 0.0);
    // The final state has every atom once, where the f64 reference integrator puts it.
    assert_eq!(out.atoms.len(), 108);
    final_state_matches_the_reference(&lj108(), &out, 10);
}

/// Positions (minimum image) and velocities of the device's final atoms against the f64
/// reference integrator after the same number of steps.
fn final_state_matches_the_reference(d: &Dump, out: &Outcome, steps: u64) {
    let mut sys = System::<f64>::from_dump(d);
    sys.run(steps, &Params::default());
    let b = d.box_len();
    let (mut dx, mut dv) = (0.0f64, 0.0f64);
    for (i, a) in d.atoms.iter().enumerate() {
        let got = out
            .atoms
            .iter()
            .find(|g| g.id == a.id)
            .unwrap_or_else(|| panic!("atom {} lost", a.id));
        assert_eq!(got.typ, a.typ, "atom {} changed type", a.id);
        let (want_x, want_v) = (sys.positions()[i], sys.velocities()[i]);
        for (k, len) in b.iter().enumerate() {
            let e = got.pos[k] - want_x[k];
            dx = dx.max((e - len * (e / len).round()).abs());
            dv = dv.max((got.vel[k] - want_v[k]).abs());
        }
    }
    assert!(
        dx < 1e-4 && dv < 1e-4,
        "final state differs from the reference: |dx| {dx:e}, |dv| {dv:e}"
    );
}

#[test]
fn other_geometries_agree_with_the_reference_and_each_other() {
    let d = lj108();
    let a = run(&d, &config([8, 8, 2, 4], 4, Arch::Wse2));
    let b = run(&d, &config([7, 7, 7, 1], 4, Arch::Wse2));
    check(&a.energies);
    check(&b.energies);
    for (x, y) in a.energies.iter().zip(&b.energies) {
        assert!(
            (x.total - y.total).abs() <= 1e-6 * x.total.abs(),
            "{x:?} vs {y:?}"
        );
    }
}

#[test]
fn the_ce_and_express_relays_give_the_same_rows_as_the_switch_relay() {
    // The baseline (`mdlj --relay ce`: every PE's CE relays every block), the express
    // relay (`--relay express`: nzx CE hops per cell shift along x), the switch machine
    // along x only (`--relay switch-x`) and along x and y (`--relay switch-xy`): the same
    // halos in the same order as the default switch relay (the machine on every axis), so
    // the same sums: the rows are bit-identical, and the simulated cycles per step fall
    // from the CE relay to the machine along x and y (z's machine is compared with z's
    // tour in the next test).
    let d = lj108();
    let with = |relay: Relay| {
        let mut cfg = config([8, 8, 4, 2], 2, Arch::Wse2);
        cfg.relay = relay;
        run(&d, &cfg)
    };
    let (ce, ex, sx, sxy, sw) = (
        with(Relay::Ce),
        with(Relay::Express),
        with(Relay::SwitchX),
        with(Relay::SwitchXy),
        with(Relay::Switch),
    );
    check(&sw.energies);
    for other in [&ce, &ex, &sx, &sxy] {
        assert_eq!(
            format!("{:?}", other.energies),
            format!("{:?}", sw.energies)
        );
    }
    assert!(
        sxy.cycles_per_step < sx.cycles_per_step
            && sx.cycles_per_step < ex.cycles_per_step
            && ex.cycles_per_step < ce.cycles_per_step,
        "switch {} vs switch-xy {} vs switch-x {} vs express {} vs CE {} cycles per step",
        sw.cycles_per_step,
        sxy.cycles_per_step,
        sx.cycles_per_step,
        ex.cycles_per_step,
        ce.cycles_per_step
    );
}

#[test]
fn the_z_machine_gives_the_same_rows_and_atoms_as_the_tour() {
    // Seed 002's machine along z (the default `--relay switch`: the three-position machine on the
    // block's tour, trailers (adv, rst) then (adv)) against the tour over the channels
    // (`--relay switch-xy`): the same blocks in the same order, so the rows and
    // final atoms are bit-identical, and the exchange oracle passes; on the seed's 4 × 2
    // block, the transposed 2 × 4 one on an odd rectangle (7 × 7 cells), and a dense
    // input whose blocks outgrow the router buffers; and on WSE-3, where the block column
    // of the barrier's middle column keeps the tour (its PEs need every channel's input
    // queue) and the others run the machine on the north and south channels' queues.
    // The force reduction runs z's headerless path on the machine, interleaved with y's
    // (DESIGN.md, "The z machine", "The force reduction"), the dense input's blocks
    // outgrowing the buffers on both architectures.
    let with = |d: &Dump, dims: [usize; 4], arch: Arch, relay: Relay| {
        let mut cfg = config(dims, 2, arch);
        cfg.relay = relay;
        run(d, &cfg)
    };
    let dense = generate::fcc(6, 0.8, 1.0, 1);
    for (d, dims, arch) in [
        (lj108(), [8, 8, 4, 2], Arch::Wse2),
        (lj108(), [7, 7, 2, 4], Arch::Wse2),
        (dense.clone(), [7, 7, 2, 4], Arch::Wse2),
        (lj108(), [8, 8, 4, 2], Arch::Wse3),
        (dense, [7, 7, 2, 4], Arch::Wse3),
    ] {
        let tour = with(&d, dims, arch, Relay::SwitchXy);
        let machine = with(&d, dims, arch, Relay::Switch);
        assert_eq!(
            format!("{:?}", machine.energies),
            format!("{:?}", tour.energies),
            "{dims:?} {arch}"
        );
        assert_eq!(
            format!("{:?}", machine.atoms),
            format!("{:?}", tour.atoms),
            "{dims:?} {arch}"
        );
    }
}

#[test]
fn odd_axes_fold_back_over_express_turnarounds() {
    // 7 × 7 cells with a 2 × 4 block: both rings turn round at the far end in the other
    // direction (an odd number of column and row groups): along x the east end PE is on
    // the low lane, and its switch machine takes the high lane's colour; along y the
    // same with the south end PE. On WSE-3 too (its barrier releases over the channels
    // when y runs on the machine): the same rows.
    let a = run(&lj108(), &config([7, 7, 2, 4], 2, Arch::Wse2));
    check(&a.energies);
    let b = run(&lj108(), &config([7, 7, 2, 4], 2, Arch::Wse3));
    assert_eq!(format!("{:?}", a.energies), format!("{:?}", b.energies));
}

#[test]
fn a_y_machine_next_to_an_x_ce_ring_on_wse3() {
    // 7 × 8 × 7 folded 1 × 7: x has fold 1 and keeps the CE ring, y's machine has 7 slots
    // per cell (a partial segment at the column's end), and WSE-3 releases the barrier
    // over the channels; the rows are those of the express relay, bit for bit.
    let d = lj108();
    let sw = run(&d, &config([7, 8, 1, 7], 2, Arch::Wse3));
    check(&sw.energies);
    let mut cfg = config([7, 8, 1, 7], 2, Arch::Wse3);
    cfg.relay = Relay::Express;
    let ex = run(&d, &cfg);
    assert_eq!(format!("{:?}", ex.energies), format!("{:?}", sw.energies));
}

#[test]
fn dense_cells_send_long_blocks_through_the_overlapped_streams() {
    // An fcc lattice at density 0.8 on 7 × 7 × 8 cells (2 × 4 fold): about 2.2 atoms per
    // cell, so a block is up to tens of words, more than a router or queue buffer holds,
    // and a backward block issued with the forward one waits in its queue while the PE
    // works through the forward stream ("Overlapped streams"). Nothing deadlocks, and
    // the rows and final atoms are the express relay's (no switch machine), bit for bit,
    // on WSE-2 and WSE-3.
    let d = generate::fcc(6, 0.8, 1.0, 1);
    for arch in [Arch::Wse2, Arch::Wse3] {
        let sw = run(&d, &config([7, 7, 2, 4], 2, arch));
        let mut cfg = config([7, 7, 2, 4], 2, arch);
        cfg.relay = Relay::Express;
        let ex = run(&d, &cfg);
        assert_eq!(format!("{:?}", ex.energies), format!("{:?}", sw.energies));
        assert_eq!(format!("{:?}", ex.atoms), format!("{:?}", sw.atoms));
        assert!(sw.caps.nloc >= 4, "not dense enough: {:?}", sw.caps);
    }
}

#[test]
fn wse3_runs_the_same_program() {
    let out = run(&lj108(), &config([8, 8, 4, 2], 2, Arch::Wse3));
    check(&out.energies);
}

#[test]
fn a_replicated_system_has_exactly_scaled_energies() {
    // 2 × 2 × 2 copies of lj108 (864 atoms, same density): every energy is 8 times the
    // 108-atom reference.
    let d = generate::replicate(&lj108(), 2);
    let out = run(&d, &config([8, 8, 4, 2], 2, Arch::Wse2));
    let scaled: Vec<EnergyRow> = out
        .energies
        .iter()
        .map(|r| EnergyRow {
            step: r.step,
            potential: r.potential / 8.0,
            kinetic: r.kinetic / 8.0,
            total: r.total / 8.0,
        })
        .collect();
    check(&scaled);
    assert_eq!(out.atoms.len(), 864);
}

#[test]
fn the_pair_list_shortcuts_leave_every_bit_as_it_was() {
    // 2,048 atoms (an fcc lattice, 0.91 atoms per cell) on 15 × 15 × 10 cells, 1.8 and
    // 2.7 wide: the host turns on the minimum-image check along every axis and each
    // atom's own reach. PEs near the box's faces keep the minimum image (fused where they can),
    // the others leave it out; rows take both the vector and the scalar path. The run
    // without the shortcuts must give the same energies and final atoms, bit for bit.
    let d = generate::fcc(8, 0.1, 1.0, 1);
    let mut cfg = config([15, 15, 2, 5], 1, Arch::Wse2);
    let g = &cfg.geometry;
    assert_eq!(g.min_image_checks(), 7);
    assert!(g.atom_reach(d.box_len(), cfg.rcut));
    assert!(4 * d.atoms.len() >= 3 * g.nx * g.ny * g.nz());
    let with = run(&d, &cfg);
    cfg.pair_shortcuts = false;
    let without = run(&d, &cfg);
    assert_eq!(with.energies.len(), without.energies.len());
    for (a, b) in with.energies.iter().zip(&without.energies) {
        assert_eq!(
            (a.potential.to_bits(), a.kinetic.to_bits()),
            (b.potential.to_bits(), b.kinetic.to_bits()),
            "step {}: {a:?} against {b:?}",
            a.step
        );
    }
    assert_eq!(with.atoms, without.atoms);
    assert!(
        with.cycles_per_step < without.cycles_per_step,
        "{} cycles per timestep with the shortcuts, {} without",
        with.cycles_per_step,
        without.cycles_per_step
    );
}

#[test]
fn geometries_the_relay_cannot_serve_are_rejected_before_running() {
    let d = lj108();
    // Too few cells on an axis.
    assert!(Geometry::new(6, 8, 4, 2).is_err());
    // Three cells narrower than the cutoff.
    let mut cfg = config([8, 8, 4, 2], 1, Arch::Wse2);
    cfg.rcut = 4.0;
    let e = device::run(&d, &cfg).err().unwrap_or_default();
    assert!(e.contains("do not reach the cutoff"), "{e}");
}

#[test]
fn a_pair_list_overflow_is_reported() {
    let mut cfg = config([8, 8, 4, 2], 1, Arch::Wse2);
    cfg.npair = Some(2);
    let e = device::run(&lj108(), &cfg).err().unwrap_or_default();
    assert!(e.contains("npair = 2") && e.contains("overflowed"), "{e}");
}

#[test]
fn a_halo_overflow_is_reported_without_a_fault() {
    // The PE flags the overflow, keeps relaying (no neighbour waits forever) and touches
    // no region, so the run ends normally and the host names the capacity to raise.
    let mut cfg = config([8, 8, 4, 2], 1, Arch::Wse2);
    cfg.nmax = Some(3);
    let e = device::run(&lj108(), &cfg).err().unwrap_or_default();
    assert!(e.contains("nmax = 3") && !e.contains("internal"), "{e}");
}

#[test]
fn a_run_split_over_several_launches_continues_exactly() {
    // 5 steps in launches of 2, 2 and 1 samples: the device keeps its state between
    // launches, and the rows match the reference as one launch does.
    let mut cfg = config([8, 8, 4, 2], 5, Arch::Wse2);
    cfg.samples_per_launch = 2;
    let out = run(&lj108(), &cfg);
    assert_eq!(
        out.energies.iter().map(|r| r.step).collect::<Vec<_>>(),
        [0, 1, 2, 3, 4, 5]
    );
    check(&out.energies);
}

#[test]
fn the_flagship_runs_identically_on_every_thread_count() {
    // The seed geometry (512 PEs), 2 steps: energies, final atoms, per-PE diagnostics,
    // cycle counts and PE-cycle statistics are bit-identical for 1, 2 and 3 threads, with
    // every phase split, in persistent batches and phase by phase.
    let d = lj108();
    let observe = |threads: usize, persistent: bool| {
        let mut cfg = config([8, 8, 4, 2], 2, Arch::Wse2);
        cfg.threads = Some(threads);
        cfg.split = Some(0);
        cfg.persistent = Some(persistent);
        let out = run(&d, &cfg);
        (
            format!("{:?} {:?}", out.energies, out.atoms),
            out.total_cycles,
            out.cycles_per_step.to_bits(),
            out.diag,
            out.pe_cycles,
            out.instructions,
            out.phase_cycles.map(f64::to_bits),
        )
    };
    let one = observe(1, false);
    for threads in [2, 3] {
        for persistent in [true, false] {
            assert!(
                observe(threads, persistent) == one,
                "{threads} threads (persistent {persistent}) differ from 1"
            );
        }
    }
}

/// The number of program classes `cslc` makes of `layout.csl` for cells `dims` and
/// `relay`, with the capacities of lj108.
fn program_classes(dims: [usize; 4], relay: Relay) -> u64 {
    let mut cfg = config(dims, 1, Arch::Wse2);
    cfg.relay = relay;
    let caps = device::Capacities {
        nloc: 5,
        nmax: 26,
        npair: 28,
    };
    let out = device::compile(&cfg.geometry, caps, 2, &cfg).unwrap_or_else(|e| panic!("{e}"));
    out.metadata["program_classes"]
        .as_u64()
        .unwrap_or_else(|| panic!("no program_classes in {}", out.metadata))
}

#[test]
fn tiles_share_program_classes_on_any_rectangle() {
    // Only the colour parities, the relay roles of the PE's column and row, and the
    // barrier's ends and middle make tiles differ (the coordinates are runtime data): at
    // most 73 classes on either rectangle (13 to 73 by relay), not one per PE (512 on
    // 32 × 16 and 4,096 on 64 × 64 when the coordinates were params).
    for relay in [
        Relay::SwitchXy,
        Relay::Switch,
        Relay::SwitchX,
        Relay::Express,
        Relay::Ce,
    ] {
        for dims in [[8, 8, 4, 2], [16, 16, 4, 4]] {
            let n = program_classes(dims, relay);
            assert!(n <= 80, "{dims:?} {relay:?}: {n} program classes");
        }
    }
}
