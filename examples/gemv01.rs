//! Tutorial 01 host side: copy A, x and b to the PE, launch `compute`, copy y back and
//! compare it with y = A·x + b computed here on the host.

use cslsim::host::{MemcpyDataType, MemcpyOrder, Region, SdkRuntime, Transfer};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What a run produced.
pub struct GemvResult {
    /// y as computed by the device.
    pub device: Vec<f32>,
    /// y as computed on the host.
    pub expected: Vec<f32>,
    /// Simulated cycles of the whole run.
    pub cycles: u64,
}

/// Runs the compiled tutorial at `out` (a directory with `out.elf`, or an `.elf` file).
pub fn run(out: &Path) -> Result<GemvResult, String> {
    let meta = crate::read_metadata(out);
    let m = crate::param_i64(meta.as_ref(), "M").unwrap_or(4) as usize;
    let n = crate::param_i64(meta.as_ref(), "N").unwrap_or(6) as usize;

    let a = crate::lcg_f32(1, m * n);
    let x = crate::lcg_f32(2, n);
    let b = crate::lcg_f32(3, m);

    // The reference, in the same order of operations as the device code.
    let expected: Vec<f32> = (0..m)
        .map(|i| {
            let mut sum = 0.0f32;
            for j in 0..n {
                sum += a[i * n + j] * x[j];
            }
            sum + b[i]
        })
        .collect();

    let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<u32>>();
    let err = |e: cslsim::host::HostError| e.to_string();
    let mut rt = SdkRuntime::new(out).map_err(err)?;
    rt.load().map_err(err)?;
    rt.run().map_err(err)?;
    let (f32_, row) = (MemcpyDataType::Bit32, MemcpyOrder::RowMajor);
    for (name, data) in [("A", &a), ("x", &x), ("b", &b)] {
        let id = rt.get_id(name).map_err(err)?;
        rt.h2d(
            id,
            &bits(data),
            Region::new(0, 0, 1, 1, data.len() as u32),
            Transfer::COPY.data_type(f32_).order(row),
        )
        .map_err(err)?;
    }
    rt.launch("compute", &[], false).map_err(err)?;
    let mut y = vec![0u32; m];
    let id = rt.get_id("y").map_err(err)?;
    rt.d2h(
        &mut y,
        id,
        Region::new(0, 0, 1, 1, m as u32),
        Transfer::COPY.data_type(f32_).order(row),
    )
    .map_err(err)?;
    rt.stop().map_err(err)?;
    let device = y.into_iter().map(f32::from_bits).collect();
    Ok(GemvResult {
        device,
        expected,
        cycles: rt.cycles(),
    })
}

/// Whether two results agree to a relative tolerance.
pub fn matches(device: &[f32], expected: &[f32]) -> bool {
    device.len() == expected.len()
        && device
            .iter()
            .zip(expected)
            .all(|(d, e)| (d - e).abs() <= 1e-6 * (1.0 + e.abs()))
}

/// The command line of the tutorials' host binaries.
#[derive(clap::Parser)]
struct Args {
    /// The output directory of `cslc -o OUT`.
    #[arg(long, value_name = "OUT", default_value = "out")]
    name: PathBuf,
}

/// The command line of the tutorials' host binaries (`BIN --name OUT`, `BIN --help`): runs
/// the GEMV at OUT, prints y and `SUCCESS!` when it matches the host's reference.
pub fn main_for(bin: &'static str) -> ExitCode {
    use clap::{CommandFactory, FromArgMatches};
    let cli = Args::command()
        .name(bin)
        .about(
            "Runs the tutorial's GEMV on the simulator and checks y against the host's reference",
        )
        .get_matches();
    let name = match Args::from_arg_matches(&cli) {
        Ok(a) => a.name,
        Err(e) => e.exit(),
    };
    match run(&name) {
        Ok(r) => {
            println!("y (device)    = {:?}", r.device);
            println!("y (reference) = {:?}", r.expected);
            println!("simulated cycles: {}", r.cycles);
            if matches(&r.device, &r.expected) {
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
