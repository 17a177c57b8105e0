//! `mdlj` and `mdgen` command lines: `--help` works, and every bad input is refused up
//! front (issue 11), before the device program is compiled or run, with a message naming
//! the line or the flag; never a panic.

use std::path::PathBuf;
use std::process::Command;

fn lj108() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("md/data/lj108.dump")
}

/// Runs mdlj; returns (exit code, stderr).
fn mdlj(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mdlj"))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run mdlj: {e}"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A copy of lj108.dump with line `n` (1-based) replaced by `with`.
fn edited(name: &str, n: usize, with: &str) -> PathBuf {
    let text = std::fs::read_to_string(lj108()).unwrap_or_else(|e| panic!("{e}"));
    let mut lines: Vec<&str> = text.lines().collect();
    lines[n - 1] = with;
    let path = std::env::temp_dir().join(format!("mdlj-{}-{name}.dump", std::process::id()));
    std::fs::write(&path, lines.join("\n") + "\n").unwrap_or_else(|e| panic!("{e}"));
    path
}

#[test]
fn bad_inputs_are_refused_up_front_naming_the_line_or_flag() {
    let dump = lj108();
    let d = dump.to_str().unwrap_or_default();
    let nan_box = edited("nanbox", 6, "0 nan");
    let inf_pos = edited(
        "infpos",
        10,
        "1 1 inf 2.698658403579095 9.2739848884528282 0.5 1.0 -1.2",
    );
    let count = edited("count", 4, "100");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--dump", nan_box.to_str().unwrap_or_default()],
            "line 6: box bounds must be finite",
        ),
        (
            vec!["--dump", inf_pos.to_str().unwrap_or_default()],
            "line 10: atom 1: positions and velocities must be finite",
        ),
        (
            vec!["--dump", count.to_str().unwrap_or_default()],
            "line 110: more atom rows than the 100",
        ),
        (
            vec!["--dump", d, "--steps", "4294967295", "--ninner", "2"],
            "--steps 4294967295 times --ninner 2",
        ),
        (
            vec!["--dump", d, "--dt", "1e-50"],
            "--dt: 1e-50 becomes 0 in f32",
        ),
        (
            vec!["--dump", d, "--ninner", "0"],
            "--ninner must be between 1 and 1000",
        ),
        (
            vec!["--dump", d, "--nloc", "1"],
            "--nloc 1 is smaller than the 2 atoms of the fullest cell",
        ),
        (
            vec!["--dump", d, "--nmax", "1"],
            "--nmax 1 is smaller than the 2 atoms of the fullest cell",
        ),
        (
            vec!["--dump", d, "--energies", "/nonexistent-dir/e.tsv"],
            "--energies /nonexistent-dir/e.tsv: cannot be written",
        ),
        (
            vec!["--dump", d, "--dump-out", "/"],
            "--dump-out /: is a directory",
        ),
        (
            vec!["--dump", d, "--heatmap", "/nonexistent-dir/h.png"],
            "--heatmap /nonexistent-dir/h.png: cannot be written",
        ),
        (
            vec!["--dump", d, "--perfetto", "/"],
            "--perfetto /: is a directory",
        ),
        (
            vec!["--dump", d, "--nx", "100000000", "--nzx", "100000000"],
            "over 4096 PEs",
        ),
        (
            vec!["--dump", d, "--relay", "moat"],
            "--relay: `moat` is not switch, switch-xy, switch-x, express or ce",
        ),
    ];
    for (args, want) in cases {
        let (code, err) = mdlj(&args);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: expected `{want}` in:\n{err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    for p in [nan_box, inf_pos, count] {
        let _ = std::fs::remove_file(p);
    }
}

#[test]
fn help_lists_every_flag_with_its_default_and_exits_0() {
    for bin in [env!("CARGO_BIN_EXE_mdlj"), env!("CARGO_BIN_EXE_mdgen")] {
        let out = Command::new(bin)
            .arg("--help")
            .output()
            .unwrap_or_else(|e| panic!("cannot run {bin}: {e}"));
        assert_eq!(out.status.code(), Some(0), "{bin} --help");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("Usage:"), "{bin}: {text}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_mdlj"))
        .arg("--help")
        .output()
        .unwrap_or_else(|e| panic!("cannot run mdlj: {e}"));
    let text = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--dump",
        "--nx",
        "--ny",
        "--nzx",
        "--nzy",
        "--steps",
        "--ninner",
        "--nsample",
        "--dt",
        "--rcut",
        "--arch",
        "--energies",
        "--check",
        "--check-host",
        "--dump-out",
        "--nloc",
        "--nmax",
        "--npair",
        "--max-cycles",
        "--threads",
        "--relay",
        "--profile",
        "--perfetto",
        "--perfetto-pes",
        "--heatmap",
        "-O",
    ] {
        assert!(text.contains(flag), "mdlj --help lacks {flag}:\n{text}");
    }
    for default in [
        "[default: 8]",
        "[default: 10]",
        "[default: 0.001]",
        "[default: switch]",
    ] {
        assert!(
            text.contains(default),
            "mdlj --help lacks {default}:\n{text}"
        );
    }
}
