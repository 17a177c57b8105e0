//! Diagnostic snapshot tests of the Paint front end: every `ui/paint/*.paint` file is
//! compiled with [`cslc::paint::compile_floorplan`] (relative to this crate, with
//! `lib=ui/paint/lib`, where the small Tungsten programs the cases place live), and its
//! source and rendered diagnostics are compared with a committed insta snapshot.
//!
//! Header lines (`(*@ key: value *)`) at the top of a case:
//! * `expect: E1208 E1213` — codes that must be reported (warnings included).
//! * `arch: wse2` — target (default wse3).
//! * `args: N=4 K=2` — `NAME=VALUE` globals, as on the `paint` command line.
//!
//! Bless new or changed snapshots with `INSTA_UPDATE=always cargo test -p csl-tests --test
//! ui_paint`, then review every changed `.snap` file.

#![allow(clippy::unwrap_used)]

use csl_arch::Arch;
use cslc::paint::{PaintOptions, compile_floorplan};
use std::path::PathBuf;

/// The `(*@ key: value *)` header of a case.
#[derive(Default)]
struct Header {
    expect: Vec<String>,
    arch: Option<Arch>,
    globals: Vec<(String, i64)>,
}

fn header(src: &str) -> Header {
    let mut h = Header::default();
    for (key, value) in csl_tests::header_fields(src, "(*@", "*)") {
        let words = value.split_whitespace().map(str::to_string);
        match key {
            "expect" => h.expect.extend(words),
            "arch" => h.arch = Arch::from_name(value.trim()),
            "args" => {
                for w in words {
                    let (k, v) = w.split_once('=').unwrap();
                    h.globals.push((k.to_string(), v.parse().unwrap()));
                }
            }
            _ => {}
        }
    }
    h
}

#[test]
fn ui_paint() {
    insta::glob!("ui/paint/*.paint", |path| {
        let (rel, src) = csl_tests::ui_case(path);
        let h = header(&src);
        let opts = PaintOptions {
            arch: h.arch.unwrap_or(Arch::Wse3),
            lib_dirs: vec![PathBuf::from("ui/paint/lib")],
            globals: h.globals,
            optimize: true,
        };
        // Compile relative to the crate directory so that paths in messages are stable.
        let comp = compile_floorplan(&rel, &opts);
        let compiled = comp.image.is_some() && comp.map.is_some();
        insta::assert_snapshot!(csl_tests::ui_snapshot(
            &rel,
            &src,
            &h.expect,
            &comp.diagnostics,
            &comp.sources,
            compiled
        ));
    });
}
