//! The `cslsim` binary: output, exit codes, and no panics on bad input.

mod common;

use common::{Asm, export_func, image, temp_file};
use std::process::Command;

fn cslsim(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cslsim"))
        .args(args)
        .output()
        .expect("run cslsim");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs cslsim with `args` and checks that it fails (exit code 1) saying `needle`.
fn refused(args: &[&str], needle: &str) {
    let (code, _, err) = cslsim(args);
    assert_eq!(code, 1, "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err}");
}

/// The class `main.csl` with an exported function `go` that unblocks the command stream.
fn go_class() -> Asm {
    let mut a = Asm::new("main.csl");
    let go = a.func("go", 1, 0, 0);
    a.unblock_cmd_stream(0);
    a.ret_void();
    a.export_func("go", go);
    a
}

fn program() -> Vec<u8> {
    let mut a = go_class();
    let quiet = a.func("quiet", 0, 0, 0);
    a.ret_void();
    a.export_func("quiet", quiet);
    let spin = a.func("spin", 0, 0, 0);
    a.op(csl_arch::isa::Op::Jump { target: a.here() });
    a.export_func("spin", spin);
    let img = image(
        2,
        1,
        vec![a.build()],
        vec![0, 0],
        vec![
            export_func("go", vec![]),
            export_func("quiet", vec![]),
            export_func("spin", vec![]),
        ],
    );
    img.to_elf().expect("encode")
}

#[test]
fn runs_launches_and_reports() {
    let path = temp_file(&program());
    let p = path.to_str().expect("utf-8 path");
    let (code, out, err) = cslsim(&[p, "--launch", "go", "--launch", "go", "--disas"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("class 0 `main.csl`:"), "{out}");
    assert!(out.contains("ret_void"), "{out}");
    assert!(out.contains("simulated cycles: "), "{out}");
    assert!(out.contains("PE(1,0) [fabric (5,1)]: busy "), "{out}");

    let (code, _, err) = cslsim(&[p, "--launch", "quiet"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("deadlock") && err.contains("unblock_cmd_stream"),
        "{err}"
    );

    refused(
        &[p, "--launch", "spin", "--max-cycles", "500"],
        "cycle limit",
    );

    refused(&[p, "--launch", "nope"], "no exported name `nope`");
    let _ = std::fs::remove_file(&path);
}

#[test]
fn bad_input_exits_with_1() {
    let (code, _, err) = cslsim(&["/nonexistent/image.elf"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.starts_with("cslsim: error: cannot read"), "{err}");
    let path = temp_file(b"\x7fELF garbage");
    let (code, _, err) = cslsim(&[path.to_str().expect("utf-8")]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("not a CSL fabric image"), "{err}");
    let (code, _, _) = cslsim(&["--bogus-flag"]);
    assert_eq!(code, 1);
    let (code, out, _) = cslsim(&["--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("--launch"));
}

#[test]
fn writes_stats_and_traces_one_pe() {
    let img = cslsim::bench::busy_grid(csl_arch::fabric::Arch::Wse2, 3, 2, 8);
    let path = temp_file(&img.to_elf().expect("encode"));
    let p = path.to_str().expect("utf-8 path");
    let stats = std::env::temp_dir().join(format!("cslsim-stats-{}.json", std::process::id()));
    let s = stats.to_str().expect("utf-8 path");
    let (code, out, err) = cslsim(&[p, "--stats", s, "--trace", "1,0"]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).expect("stats written"))
            .expect("json");
    let _ = std::fs::remove_file(&stats);
    assert_eq!(doc["completed"], true);
    assert_eq!(doc["arch"], "wse2");
    assert_eq!(doc["pes"].as_array().map(Vec::len), Some(6));
    assert_eq!(doc["wavelet_hops"], 2 * 2 * 2 * 8);
    assert_eq!(doc["pes"][0]["links_out"]["east"]["wavelets"], 8);
    assert!(doc["pes"][1]["busy_cycles"].as_u64().is_some_and(|b| b > 0));
    assert!(out.contains("@0 PE(1,0): task 10 starts `main`"), "{out}");
    assert!(out.contains("PE(1,0): router colour 0 data"), "{out}");
    assert!(!out.contains("PE(0,0):"), "{out}");
    assert!(out.contains("wavelet hops: 64"), "{out}");
    refused(&[p, "--trace", "nonsense"], "neither `all` nor `X,Y`");
}

/// Flags outside their ranges are refused with a message naming the flag and the range
/// (issue 11: `--buffer-depth 0` and a hop latency of 2^32 - 1 were accepted).
#[test]
fn out_of_range_flags_are_refused() {
    let path = temp_file(&program());
    let p = path.to_str().expect("utf-8 path");
    for (flag, value, range) in [
        ("--buffer-depth", "0", "1..=8"),
        ("--buffer-depth", "9", "1..=8"),
        ("--hop-latency", "4294967295", "1..=65536"),
        ("--hop-latency", "0", "1..=65536"),
        ("--dsd-setup-cycles", "4294967295", "0..=65536"),
        ("--max-cycles", "0", "1.."),
        ("--max-memory-mib", "0", "1.."),
    ] {
        let (code, _, err) = cslsim(&[p, flag, value, "--launch", "go"]);
        assert_eq!(code, 1, "{flag} {value}: {err}");
        assert!(
            err.contains(flag) && err.contains(range),
            "{flag} {value}: {err}"
        );
    }
    let (code, _, err) = cslsim(&[
        p,
        "--buffer-depth",
        "8",
        "--hop-latency",
        "3",
        "--launch",
        "go",
    ]);
    assert_eq!(code, 0, "{err}");
    let _ = std::fs::remove_file(&path);
}

/// An image larger than the memory limit is refused before loading, with the estimate and
/// the flag that raises the limit (instead of aborting on a failed allocation).
#[test]
fn too_large_images_say_how_much_memory_they_need() {
    let path = temp_file(&program());
    let p = path.to_str().expect("utf-8 path");
    let (code, _, err) = cslsim(&[p, "--max-memory-mib", "1000", "--launch", "go"]);
    assert_eq!(code, 0, "{err}");
    // Two PEs need about 10 KiB (paged memory): a 1 MiB limit passes, so use the library
    // for a tiny one.
    let img = csl_arch::image::Image::from_elf(&program()).expect("decode");
    let params = cslsim::SimParams {
        memory_limit_bytes: Some(4 << 10),
        ..cslsim::SimParams::default()
    };
    let mut rt = cslsim::SdkRuntime::from_image(img).with_params(params);
    let err = rt.load().expect_err("too large").to_string();
    assert!(
        err.contains("2 PEs need about") && err.contains("--max-memory-mib"),
        "{err}"
    );
    let _ = std::fs::remove_file(&path);
}

/// A 2x1 image exporting `v`, four f32 elements at 0x100 on each PE (a global the
/// pointer at 0x80 points at), and a launchable `go`.
fn tensor_program() -> Vec<u8> {
    let mut a = go_class();
    a.export_tensor("v", 0x80, 0x100);
    a.poke(0x100, &[0; 16]);
    let mut class = a.build();
    class.info.globals.push(csl_arch::image::GlobalInfo {
        name: "v".into(),
        addr: 0x100,
        size: 16,
    });
    let img = image(
        2,
        1,
        vec![class],
        vec![0, 0],
        vec![
            export_func("go", vec![]),
            common::export_tensor("v", csl_arch::isa::NumTy::F32, true),
        ],
    );
    img.to_elf().expect("encode")
}

#[test]
fn set_and_dump_move_tensors_through_text_files() {
    let path = temp_file(&tensor_program());
    let p = path.to_str().expect("utf-8 path");
    let input = temp_file(b"# two PEs, four each\n1 2 3 4\n5.5, 6, 7, -8\n");
    let dump = temp_file(b"");
    let (i, d) = (
        format!("v={}", input.display()),
        format!("v={}", dump.display()),
    );
    let (code, _, err) = cslsim(&[p, "--set", &i, "--launch", "go", "--dump", &d]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&dump).expect("dump written");
    assert_eq!(
        text,
        "# v: 2 x 1 PEs, 4 F32 elements each, one line per PE (row-major)\n1 2 3 4\n5.5 6 7 -8\n"
    );
    // A dump reads back as the same input.
    let again = temp_file(text.as_bytes());
    let (code, _, err) = cslsim(&[p, "--set", &format!("v={}", again.display())]);
    assert_eq!(code, 0, "{err}");

    // Too many values for the array, a bad number, an unknown name.
    let long = temp_file(b"1 2 3 4 5 6 7 8 9");
    refused(
        &[p, "--set", &format!("v={}", long.display())],
        "do not split evenly over the 2 PEs",
    );
    let ten = temp_file(b"1 2 3 4 5 6 7 8 9 10");
    let (code, _, err) = cslsim(&[p, "--set", &format!("v={}", ten.display())]);
    assert_eq!(code, 1);
    assert!(
        err.contains("needs 20 bytes") && err.contains("has 16 bytes"),
        "{err}"
    );
    let bad = temp_file(b"1 two");
    refused(
        &[p, "--set", &format!("v={}", bad.display())],
        "`two` is not a F32 value",
    );
    refused(&[p, "--dump", "w=out.txt"], "no exported name `w`");
    refused(&[p, "--set", "v"], "is not NAME=FILE");
}

#[test]
fn a_run_without_launches_says_that_nothing_ran() {
    let path = temp_file(&program());
    let p = path.to_str().expect("utf-8 path");
    let (code, _, err) = cslsim(&[p]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("nothing ran"), "{err}");
    assert!(
        err.contains("`go`") && err.contains("--launch NAME"),
        "{err}"
    );
    let (_, _, err) = cslsim(&[p, "--launch", "go"]);
    assert!(!err.contains("nothing ran"), "{err}");
}
