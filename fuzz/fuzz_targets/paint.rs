//! Fuzz target: any UTF-8 text compiled as a Paint floorplan, with the Tungsten tutorials'
//! directories on the library path so that `code('relay)` and friends place real
//! programs (seed the corpus with the tutorials' `.paint` files). Evaluation, routing,
//! placement and linking must return diagnostics, never panic or run away.

#![no_main]

use cslc::paint::{PaintOptions, compile_source};
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;

fn lib_dirs() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/tungsten");
    std::fs::read_dir(&root)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default()
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let opts = PaintOptions {
        lib_dirs: lib_dirs(),
        ..PaintOptions::default()
    };
    let _ = compile_source("fuzz.paint", text, &opts);
});
