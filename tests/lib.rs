//! Shared helpers of the integration tests: the `//@` header of test cases and
//! compile-and-run helpers.

use csl_arch::Arch;
use std::path::{Path, PathBuf};

/// The `//@ key: value` lines at the top of a test case.
#[derive(Default, Debug)]
pub struct Header {
    /// Diagnostic codes that must appear.
    pub expect: Vec<String>,
    /// Target architecture.
    pub arch: Option<Arch>,
    /// Comptime budget.
    pub fuel: Option<u64>,
}

impl Header {
    /// Reads the header of a case.
    pub fn parse(src: &str) -> Header {
        let mut h = Header::default();
        for line in src.lines() {
            let Some(rest) = line.trim().strip_prefix("//@") else { continue };
            let Some((key, value)) = rest.split_once(':') else { continue };
            let value = value.trim();
            match key.trim() {
                "expect" => h.expect.extend(value.split(|c: char| c.is_whitespace() || c == ',').filter(|s| !s.is_empty()).map(str::to_string)),
                "arch" => h.arch = Arch::from_name(value),
                "fuel" => h.fuel = value.parse().ok(),
                _ => {}
            }
        }
        h
    }
}

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// Every file under `dir` (recursively) with the given extension, sorted.
pub fn files_with_ext(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n != "target" && n != ".git") {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|x| x == ext) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
