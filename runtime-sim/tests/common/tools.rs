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

/// The arguments `image=IMAGE [out=OUT] map=MAP ARGS... data=DATA` of a tool.
fn tool_args(
    image: &Path,
    out: Option<&Path>,
    map: &Path,
    args: &[&str],
    data: &Path,
) -> Vec<String> {
    let mut all = vec![arg("image", image)];
    all.extend(out.map(|o| arg("out", o)));
    all.push(arg("map", map));
    all.extend(args.iter().map(|a| a.to_string()));
    all.push(arg("data", data));
    all
}

/// `miget image=IMAGE map=MAP ARGS... data=DATA` (ARGS: `symbol=...`, `order=...`), which
/// must succeed.
pub fn get_ok(image: &Path, map: &Path, args: &[&str], data: &Path) {
    let all = tool_args(image, None, map, args, data);
    let (code, _, err) = miget(&all.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 0, "miget {all:?}: {err}");
}

/// `miset image=IMAGE out=OUT map=MAP ARGS... data=DATA`, which must succeed.
pub fn set_ok(image: &Path, out: &Path, map: &Path, args: &[&str], data: &Path) {
    let all = tool_args(image, Some(out), map, args, data);
    let (code, _, err) = miset(&all.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 0, "miset {all:?}: {err}");
}

/// The symbol map of the 3x2 test images on `arch` (`wse2`, `wse3`): region `all` (every
/// tile), region `odd` (three tiles, not a rectangle) and `v` (3 words at 0x10) on `all`,
/// then the lines `more`.
pub fn map_3x2(arch: &str, more: &str) -> String {
    format!(
        "# csl symbol map 1\nfabric 3 2 {arch}\nregion all rect 0 0 3 2\n\
         region odd tiles 2,0 0,0 1,1\n\
         symbol all.v addr=0x0010 bytes=6 elem=xp order=\"y x _word\"\n{more}"
    )
}

/// Asserts a one-line error with exit status 1 whose text contains every `needles`.
pub fn assert_error(r: (i32, String, String), needles: &[&str]) {
    let (code, _, err) = r;
    assert_eq!(code, 1, "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    for n in needles {
        assert!(err.contains(n), "`{n}` missing from: {err}");
    }
}
