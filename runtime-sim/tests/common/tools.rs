//! Running the Tungsten-flow tool binaries (`miset`, `miget`, `simfabric`) from tests, and
//! the files they read and write.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs a tool binary: (exit code, stdout, stderr).
pub fn tool(exe: &str, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(exe).args(args).output().expect("run tool");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

pub fn miset(args: &[&str]) -> (i32, String, String) {
    tool(env!("CARGO_BIN_EXE_miset"), args)
}

pub fn miget(args: &[&str]) -> (i32, String, String) {
    tool(env!("CARGO_BIN_EXE_miget"), args)
}

pub fn simfabric(args: &[&str]) -> (i32, String, String) {
    tool(env!("CARGO_BIN_EXE_simfabric"), args)
}

/// A fresh directory for one test (`suite` keeps test binaries apart).
pub fn dir(suite: &str, name: &str) -> PathBuf {
    let pid = std::process::id();
    let d = std::env::temp_dir().join(format!("cslsim-{suite}-{pid}-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// `key=PATH`, a tool argument.
pub fn arg(key: &str, p: &Path) -> String {
    format!("{key}={}", p.to_str().expect("utf-8 path"))
}

/// Writes 16-bit little-endian words, the tools' data format.
pub fn write_words(p: &Path, words: &[u16]) {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(p, bytes).expect("write data");
}

/// Reads 16-bit little-endian words.
pub fn read_words(p: &Path) -> Vec<u16> {
    std::fs::read(p)
        .expect("read data")
        .chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect()
}
