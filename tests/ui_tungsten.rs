//! Diagnostic snapshot tests of the Tungsten front end: every `ui/tungsten/*.w` file is
//! compiled with `cslc::tungsten::compile_class`, and its source and rendered diagnostics
//! are compared with a committed insta snapshot.
//!
//! Header lines (`//@ key: value`) at the top of a case:
//! * `expect: E1101 E1104` — codes that must be reported (none: the case must compile
//!   without errors);
//! * `arch: wse3` — target (default wse2);
//! * `sockets: tx=3 rx=4:5` — socket bindings `NAME=RX[:TX]` (TX defaults to RX);
//! * `params: N=4 X=1.5` — param overrides (integers or floats).
//!
//! Bless with `INSTA_UPDATE=always cargo test -p csl-tests --test ui_tungsten`, then
//! review every changed `.snap` file.

use csl_arch::Arch;
use cslc::source::SourceMap;
use cslc::tungsten::{ClassSpec, ParamValue, SocketBinding, compile_class};

/// The spec a case's header asks for.
fn spec_of(src: &str) -> (ClassSpec, Vec<String>) {
    let mut spec = ClassSpec::new(Arch::Wse2);
    let mut expect = Vec::new();
    for (key, value) in csl_tests::header_fields(src, "//@", "") {
        let words = value.split_whitespace().map(str::to_string);
        match key {
            "expect" => expect.extend(words),
            "arch" => spec.arch = Arch::from_name(value.trim()).unwrap_or(Arch::Wse2),
            "sockets" => {
                for w in words {
                    let (name, cols) = w
                        .split_once('=')
                        .unwrap_or_else(|| panic!("`{w}`: a socket is NAME=RX[:TX]"));
                    let (rx, tx) = cols.split_once(':').unwrap_or((cols, cols));
                    spec.sockets.push((
                        name.to_string(),
                        SocketBinding {
                            rx: rx.parse().unwrap_or_else(|e| panic!("`{w}`: {e}")),
                            tx: tx.parse().unwrap_or_else(|e| panic!("`{w}`: {e}")),
                        },
                    ));
                }
            }
            "params" => {
                for w in words {
                    let (name, v) = w
                        .split_once('=')
                        .unwrap_or_else(|| panic!("`{w}`: a param is NAME=VALUE"));
                    let v = match v.parse::<i64>() {
                        Ok(i) => ParamValue::Int(i),
                        Err(_) => {
                            ParamValue::Float(v.parse().unwrap_or_else(|e| panic!("`{w}`: {e}")))
                        }
                    };
                    spec.params.push((name.to_string(), v));
                }
            }
            _ => {}
        }
    }
    (spec, expect)
}

#[test]
fn ui_tungsten() {
    insta::glob!("ui/tungsten/*.w", |path| {
        let (rel, src) = csl_tests::ui_case(path);
        let (mut spec, expect) = spec_of(&src);
        // Relative to the crate directory (the tests' working directory), so that paths in
        // messages do not depend on where the repository is.
        spec.lib_dirs
            .push(std::path::PathBuf::from("ui/tungsten/lib"));
        let mut sources = SourceMap::new();
        let file = sources.add(
            rel.display().to_string(),
            Some(rel.to_path_buf()),
            src.clone(),
        );
        let mut diags = Vec::new();
        let prog = compile_class(&mut sources, file, &spec, &mut diags);
        insta::assert_snapshot!(csl_tests::ui_snapshot(
            &rel,
            &src,
            &expect,
            &diags,
            &sources,
            prog.is_some()
        ));
    });
}
