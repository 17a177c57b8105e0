//! End-to-end tests: compile example programs with the compiler library, run them on the
//! simulator through the host runtime, and compare with answers computed on the host.

#![allow(clippy::unwrap_used)]

use csl_arch::Arch;
use cslc::driver::{Options, compile_file};
use std::path::PathBuf;

/// Compiles `layout` for `arch` on a 16x8 fabric into a fresh output directory and
/// returns it.
fn compile_to_dir(layout: &str, arch: Arch, name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{arch}"));
    csl_tests::compile_to(layout, arch, (16, 8), &[], &dir)
}

const ARCHS: [Arch; 2] = [Arch::Wse2, Arch::Wse3];

/// Compiles `tests/programs/PROGRAM/layout.csl`, launches `launch` and reads `name` back
/// from the `region` (width, height, words per PE).
fn run_program(
    program: &str,
    arch: Arch,
    dims: (u32, u32),
    launch: &str,
    name: &str,
    region: (u32, u32, u32),
) -> Vec<u32> {
    let layout = format!("tests/programs/{program}/layout.csl");
    let run = csl_tests::Run {
        layout: &layout,
        arch,
        dims,
        launch,
        read: name,
        region,
    };
    let tag = format!("{program}-layout.csl");
    csl_tests::launch_and_read(&run, &PathBuf::from(env!("CARGO_TARGET_TMPDIR")), &tag)
}

/// [`run_program`] launching `go`.
fn read_back(
    program: &str,
    arch: Arch,
    dims: (u32, u32),
    name: &str,
    region: (u32, u32, u32),
) -> Vec<u32> {
    run_program(program, arch, dims, "go", name, region)
}

/// Words as the f32 values whose bits they hold.
fn f32s(words: &[u32]) -> Vec<f32> {
    words.iter().map(|&b| f32::from_bits(b)).collect()
}

/// `rt` loaded and running, ready for host commands.
fn started(mut rt: cslsim::host::SdkRuntime) -> cslsim::host::SdkRuntime {
    rt.load().unwrap();
    rt.run().unwrap();
    rt
}

fn gemv_tutorial(arch: Arch, name: &str) {
    let dir = compile_to_dir(&format!("examples/tutorials/{name}/layout.csl"), arch, name);
    let r = csl_examples::gemv01::run(&dir).unwrap();
    assert_eq!(r.device.len(), 4);
    assert!(
        csl_examples::gemv01::matches(&r.device, &r.expected),
        "device {:?} vs host {:?}",
        r.device,
        r.expected
    );
    assert!(r.cycles > 0);
}

#[test]
fn gemv_01() {
    for arch in ARCHS {
        gemv_tutorial(arch, "01-gemv");
    }
}

#[test]
fn gemv_02_memory_dsds() {
    for arch in ARCHS {
        gemv_tutorial(arch, "02-gemv-dsd");
    }
}

#[test]
fn local_tasks_and_control_flow() {
    for arch in ARCHS {
        local_tasks(arch);
    }
}

fn local_tasks(arch: Arch) {
    let log = run_program("tasks", arch, (16, 8), "start", "log", (2, 2, 8));
    for y in 0..2i32 {
        for x in 0..2i32 {
            let base = ((y * 2 + x) * 8) as usize;
            let got: Vec<i32> = log[base..base + 8].iter().map(|&v| v as i32).collect();
            // a, then c (b is blocked), then b: fib(10), the odd numbers below 10, the
            // per-PE param, and the loop counter left by `break`.
            let seed = x + 10 * y;
            assert_eq!(
                got,
                vec![1, 3, 2, 55, 25, seed * 3 - 7, 2, 0],
                "PE ({x}, {y}) on {arch}"
            );
        }
    }
}

fn task_param(arch: Arch) {
    let out = run_program("task_param", arch, (16, 8), "start", "out", (2, 1, 4));
    for x in 0..2usize {
        let k = (x + 2) as f32;
        let got = f32s(&out[x * 4..x * 4 + 4]);
        assert_eq!(
            got,
            vec![k, 2.0 * k, 3.0 * k, 4.0 * k + 100.0],
            "PE {x} on {arch}"
        );
    }
}

#[test]
fn task_param_activated_by_named_dsd_settings() {
    for arch in ARCHS {
        task_param(arch);
    }
}

#[test]
fn layout_and_time_libraries() {
    for arch in ARCHS {
        let out = read_back("libs", arch, (10, 4), "out", (3, 2, 4));
        for y in 0..2u32 {
            for x in 0..3u32 {
                let o = &out[((y * 3 + x) * 4) as usize..][..4];
                assert_eq!((o[0], o[1]), (x, y), "{arch}: coordinates of PE ({x}, {y})");
                // 50 iterations of a loop take at least 50 cycles and not absurdly many.
                assert!(o[2] >= 50 && o[2] < 5000, "{arch}: elapsed cycles {}", o[2]);
                assert_eq!(o[3], (0..50).sum::<u32>(), "{arch}");
            }
        }
    }
}

#[test]
fn map_over_memory_dsds() {
    for arch in ARCHS {
        let out = read_back("map", arch, (8, 3), "out", (1, 1, 6));
        let got = f32s(&out);
        let want: Vec<f32> = (0..6)
            .map(|i| ((i + 1) as f32).powi(2) + (2 * i) as f32 * 0.5)
            .collect();
        assert_eq!(got, want, "{arch}");
    }
}

#[test]
fn simprint_writes_the_simulator_log() {
    use cslsim::host::SdkRuntime;
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("simprint");
    csl_tests::compile_to(
        "tests/programs/simprint/layout.csl",
        Arch::Wse2,
        (9, 3),
        &[],
        &dir,
    );
    let mut rt = started(SdkRuntime::new(&dir).unwrap());
    rt.launch("go", &[], false).unwrap();
    rt.stop().unwrap();
    let log = rt.sim_log();
    assert_eq!(log.len(), 2, "{log:?}");
    for (x, line) in log.iter().enumerate() {
        let text = line.split_once(": ").map(|(_, t)| t).unwrap_or("");
        assert!(
            line.starts_with('@') && line.contains(&format!("PE({x},0)")),
            "{line}"
        );
        assert_eq!(
            text,
            format!("x={x} big=4000000000 neg=-1234 hex=0xbeef f=-2.250000")
        );
    }
}

#[test]
fn map_reduction_into_a_pointer_and_flat_view_of_a_2d_array() {
    let out = read_back("map_reduce", Arch::Wse2, (8, 3), "sum", (1, 1, 1));
    assert_eq!(f32::from_bits(out[0]), (0..25).sum::<i32>() as f32);
}

#[test]
fn explicit_dsrs_with_save_address() {
    for arch in ARCHS {
        let out = read_back("dsr", arch, (8, 3), "out", (1, 1, 8));
        let got = f32s(&out);
        assert_eq!(
            got,
            (1..=8).map(|i| i as f32 + 10.0).collect::<Vec<_>>(),
            "{arch}"
        );
    }
}

#[test]
fn task_priorities_from_tile_config() {
    for arch in ARCHS {
        let out = read_back("priority", arch, (8, 3), "order", (1, 1, 3));
        assert_eq!(out, vec![12, 10, 11], "{arch}");
    }
}

#[test]
fn task_picker_takes_turns_above_the_last_task() {
    for arch in ARCHS {
        let out = read_back("round_robin", arch, (8, 3), "order", (1, 1, 3));
        // Task 15 ran last: 20 is the next id above it, then the picker wraps to 9 and 12.
        assert_eq!(out, vec![20, 9, 12], "{arch}");
    }
}

/// A copy-mode memcpy longer than the array the exported pointer points at is a host
/// error naming the symbol, the PE and the array (it used to overwrite the next global).
#[test]
fn memcpy_past_the_end_of_the_array_is_a_host_error() {
    use cslsim::host::{HostError, Region, SdkRuntime, Transfer};
    let dir = compile_to_dir(
        "examples/tutorials/01-gemv/layout.csl",
        Arch::Wse2,
        "past-end",
    );
    let mut rt = started(SdkRuntime::new(&dir).unwrap());
    // The tutorial's default y has M = 4 elements.
    let y = rt.get_id("y").unwrap();
    let mut out = vec![0u32; 5];
    let err = rt
        .d2h(&mut out, y, Region::new(0, 0, 1, 1, 5), Transfer::COPY)
        .unwrap_err();
    assert!(
        matches!(
            &err,
            HostError::PastEndOfArray {
                room: 16,
                bytes: 20,
                ..
            }
        ),
        "{err}"
    );
    let text = err.to_string();
    assert!(text.contains("`y`") && text.contains("16 bytes"), "{text}");
    let b = rt.get_id("b").unwrap();
    let err = rt
        .h2d(b, &[0; 5], Region::new(0, 0, 1, 1, 5), Transfer::COPY)
        .unwrap_err();
    assert!(matches!(err, HostError::PastEndOfArray { .. }), "{err}");
    // The exact length still works.
    rt.d2h(&mut out[..4], y, Region::new(0, 0, 1, 1, 4), Transfer::COPY)
        .unwrap();
}

/// With lenient reads (the vendor programs' over-reads), a `memcpy_d2h` past the end of
/// the array returns the array followed by the next words of PE memory; a write past the
/// end is still an error.
#[test]
fn lenient_reads_return_the_words_after_the_array() {
    use cslsim::host::{HostError, Region, SdkRuntime, Transfer};
    let dir = compile_to_dir(
        "examples/tutorials/01-gemv/layout.csl",
        Arch::Wse2,
        "lenient",
    );
    let mut rt = started(SdkRuntime::new(&dir).unwrap().with_lenient_reads(true));
    let y = rt.get_id("y").unwrap();
    let mut exact = vec![0u32; 4];
    rt.d2h(&mut exact, y, Region::new(0, 0, 1, 1, 4), Transfer::COPY)
        .unwrap();
    let mut over = vec![0u32; 5];
    rt.d2h(&mut over, y, Region::new(0, 0, 1, 1, 5), Transfer::COPY)
        .unwrap();
    assert_eq!(over[..4], exact[..]);
    let b = rt.get_id("b").unwrap();
    let err = rt
        .h2d(b, &[0; 5], Region::new(0, 0, 1, 1, 5), Transfer::COPY)
        .unwrap_err();
    assert!(matches!(err, HostError::PastEndOfArray { .. }), "{err}");
}

/// A CSL program of one PE, compiled into a fresh directory: `start` adds to `x` in a loop
/// (lines 7 to 10), then `@assert`s on line 11 (false unless `x` starts at 2).
fn lines_program(name: &str, start: u32) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("e2e-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    let layout = "const memcpy = @import_module(\"<memcpy/get_params>\", .{ .width = 1, .height = 1 });\n\
                  layout {\n\
                  \x20 @set_rectangle(1, 1);\n\
                  \x20 @set_tile_code(0, 0, \"pe.csl\", .{ .memcpy_params = memcpy.get_params(0) });\n\
                  \x20 @export_name(\"start\", fn() void);\n\
                  }\n";
    let pe = format!(
        "param memcpy_params: comptime_struct;\n\
         const sys_mod = @import_module(\"<memcpy/memcpy>\", memcpy_params);\n\
         var x: u32 = {start};\n\
         \n\
         fn start() void {{\n\
         \x20 var i: u32 = 0;\n\
         \x20 while (i < 2) : (i += 1) {{\n\
         \x20   x += 1;\n\
         \x20   x += i;\n\
         \x20 }}\n\
         \x20 @assert(x == 5);\n\
         \x20 sys_mod.unblock_cmd_stream();\n\
         }}\n\
         \n\
         comptime {{\n\
         \x20 @export_symbol(start);\n\
         }}\n"
    );
    std::fs::write(dir.join("layout.csl"), layout).unwrap();
    std::fs::write(dir.join("pe.csl"), pe).unwrap();
    let opts = Options {
        fabric_dims: (8, 3),
        ..Options::default()
    };
    let comp = compile_file(&dir.join("layout.csl"), &opts);
    let rendered = cslc::diag::render_all(&comp.diagnostics, &comp.sources, false);
    let out = comp
        .output
        .unwrap_or_else(|| panic!("does not compile:\n{rendered}"));
    std::fs::write(dir.join("out.elf"), out.image.to_elf().unwrap()).unwrap();
    std::fs::write(dir.join("out.json"), out.metadata.to_string()).unwrap();
    dir
}

/// A `Write` whose bytes the test reads back.
#[derive(Clone, Default)]
struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The trace `cslsim --trace` prints names the source line of each instruction (from the
/// image's line table, library code included), and a fault report names the line of the
/// faulting instruction.
#[test]
fn traces_and_faults_name_source_lines() {
    use cslsim::{TraceFilter, Tracer};
    let buf = Shared::default();
    let tracer = Tracer::new(TraceFilter::All, Box::new(buf.clone()));
    let mut rt = started(
        cslsim::host::SdkRuntime::new(lines_program("lines", 2))
            .unwrap()
            .with_trace(tracer.clone()),
    );
    rt.launch("start", &[], false).unwrap();
    rt.stop().unwrap();
    tracer.flush();
    let out = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    assert!(out.contains("(<memcpy/memcpy>:"), "{out}");
    for line in [6, 7, 8, 9, 11, 12] {
        assert!(
            out.lines()
                .any(|l| l.contains("in `start` (") && l.contains(&format!("pe.csl:{line}): "))),
            "no trace line of pe.csl:{line}:\n{out}"
        );
    }
    let mut rt = started(cslsim::host::SdkRuntime::new(lines_program("fault", 3)).unwrap());
    let err = rt.launch("start", &[], false).unwrap_err().to_string();
    assert!(err.contains("assertion failed"), "{err}");
    assert!(err.contains("function `start`, pc "), "{err}");
    assert!(err.contains("pe.csl:11, cycle "), "{err}");
}
