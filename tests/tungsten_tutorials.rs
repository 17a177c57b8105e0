//! Runs every Tungsten tutorial's `commands.sh` as a user would: from a copy of its
//! directory, with the release builds of `paint`, `miset`, `simfabric` and `miget` first on
//! `PATH`, and `python3` for the tutorials' input generators and checks. A tutorial passes
//! when the script exits 0 and its check printed `SUCCESS`.
//!
//! The tools must be built first (`cargo build --release --bins`, as `tests/all.sh` does);
//! the test looks for them next to its own executable's profile directory.

use csl_tests::repo_root;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The directory holding the workspace's binaries for this test's profile.
fn tool_dir() -> PathBuf {
    // The test executable is `target/<profile>/deps/NAME-HASH`.
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("no test executable path: {e}"));
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .unwrap_or_else(|| panic!("unexpected test path {}", exe.display()))
        .to_path_buf();
    for tool in ["paint", "miset", "simfabric", "miget"] {
        assert!(
            dir.join(tool).is_file(),
            "`{tool}` is not built in {}; run `cargo build --release --bins` (tests/all.sh does)",
            dir.display()
        );
    }
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let entry = entry.unwrap_or_else(|e| panic!("{e}"));
        let path = entry.path();
        if path.is_file() {
            std::fs::copy(&path, to.join(entry.file_name()))
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }
}

#[test]
fn every_tutorial_runs_as_written() {
    let tools = tool_dir();
    let root = repo_root().join("examples/tungsten");
    let mut tutorials: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("commands.sh").is_file())
        .collect();
    tutorials.sort();
    assert!(
        tutorials.len() >= 2,
        "no tutorials found in {}",
        root.display()
    );
    let path = format!(
        "{}:{}",
        tools.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let scratch = std::env::temp_dir().join(format!("tungsten-tutorials-{}", std::process::id()));
    let mut failures = Vec::new();
    for t in &tutorials {
        let name = t
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let dir = scratch.join(&name);
        // Only the committed files: copy before anything was generated in the source tree.
        copy_dir(t, &dir);
        let out = Command::new("bash")
            .arg("commands.sh")
            .current_dir(&dir)
            .env("PATH", &path)
            .output()
            .unwrap_or_else(|e| panic!("cannot run bash: {e}"));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() || !stdout.contains("SUCCESS") {
            failures.push(format!(
                "{name}: {}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
                out.status
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
