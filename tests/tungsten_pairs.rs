//! The same fabric program written in CSL and in Tungsten gives the same results on the
//! simulator. Each pair lives in `tests/programs/pairs/NAME/`: `layout.csl` + `pe.csl`
//! (compiled by `cslc`, run through the memcpy host runtime) and `NAME.w` + `NAME.paint`
//! (compiled by `paint`, run from reset as `simfabric` does). Both results are also
//! compared with a value computed here in fp32.

use csl_arch::Arch;
use csl_tests::{Run, launch_and_read, repo_root};
use cslc::paint::{PaintOptions, compile_floorplan};
use cslsim::Simulator;

/// Compiles `pairs/NAME/NAME.paint` for `arch` with `globals`, runs it to quiescence and
/// returns the 32-bit words of `REGION.SYMBOL` on every tile of the region (row-major),
/// `n` words per tile.
fn run_tungsten(name: &str, arch: Arch, globals: &[(&str, i64)], path: &str, n: usize) -> Vec<u32> {
    let file = repo_root().join(format!("tests/programs/pairs/{name}/{name}.paint"));
    let opts = PaintOptions {
        arch,
        globals: globals.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        ..PaintOptions::default()
    };
    let comp = compile_floorplan(&file, &opts);
    let rendered = cslc::diag::render_all(&comp.diagnostics, &comp.sources, false);
    let (Some(image), Some(map)) = (comp.image, comp.map) else {
        panic!("{name}.paint does not compile for {arch}:\n{rendered}");
    };
    let mut sim = Simulator::new(&image).unwrap_or_else(|e| panic!("{name}: {e}"));
    match sim.run_until(|_| false, 1_000_000) {
        Ok(cslsim::RunEnd::Idle) => {}
        other => panic!("{name} on {arch}: the run did not end quietly: {other:?}"),
    }
    let (region, sym) = map.lookup(path).unwrap_or_else(|e| panic!("{e}"));
    let mut out = Vec::new();
    for &(x, y) in &region.tiles {
        let pe = sim.pe(x, y).unwrap_or_else(|| panic!("no PE ({x}, {y})"));
        let mem = pe.memory();
        for k in 0..n {
            let a = sym.addr as usize + 4 * k;
            out.push(u32::from_le_bytes([
                mem[a],
                mem[a + 1],
                mem[a + 2],
                mem[a + 3],
            ]));
        }
    }
    out
}

/// Compiles `tests/programs/pairs/{name}` for `arch` on a `dims` fabric, launches `start`
/// and reads `read` from the `(w, h, n)` region.
fn run_csl(
    arch: Arch,
    name: &str,
    dims: (u32, u32),
    read: &str,
    region: (u32, u32, u32),
) -> Vec<u32> {
    let tmp = std::env::temp_dir().join(format!("csl-pairs-{}", std::process::id()));
    let layout = format!("tests/programs/pairs/{name}/layout.csl");
    let run = Run {
        layout: &layout,
        arch,
        dims,
        launch: "start",
        read,
        region,
    };
    launch_and_read(&run, &tmp, name)
}

fn f32s(words: &[u32]) -> Vec<f32> {
    words.iter().map(|w| f32::from_bits(*w)).collect()
}

#[test]
fn relay_sum_is_the_same_in_csl_and_tungsten() {
    let width = 5;
    // Partial sums of 1.5 * (x + 1), in fp32, in the order the relay adds them.
    let mut expected = Vec::new();
    let mut acc = 0.0f32;
    for x in 0..width {
        let own = 1.5 * (x + 1) as f32;
        acc = if x == 0 { own } else { own + acc };
        expected.push(acc);
    }
    for arch in [Arch::Wse2, Arch::Wse3] {
        let csl = run_csl(arch, "relay_sum", (12, 6), "sum", (width, 1, 1));
        let tungsten = run_tungsten("relay_sum", arch, &[("N", i64::from(width))], "row.sum", 1);
        assert_eq!(f32s(&csl), expected, "CSL on {arch}");
        assert_eq!(f32s(&tungsten), expected, "Tungsten on {arch}");
    }
}

#[test]
fn saxpy_is_the_same_in_csl_and_tungsten() {
    let expected: Vec<f32> = (0..16)
        .map(|i| {
            let (x, y) = (0.5 * i as f32, 1.0 + i as f32);
            y + x * 3.0
        })
        .collect();
    for arch in [Arch::Wse2, Arch::Wse3] {
        let csl = run_csl(arch, "saxpy", (8, 3), "y", (1, 1, 16));
        let tungsten = run_tungsten("saxpy", arch, &[], "pe.y", 16);
        assert_eq!(csl, tungsten, "CSL and Tungsten differ on {arch}");
        assert_eq!(f32s(&csl), expected, "on {arch}");
    }
}
