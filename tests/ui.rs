//! Diagnostic snapshot tests: every `ui/**/*.csl` file is compiled, and its source and
//! rendered diagnostics are compared with a committed insta snapshot.
//!
//! Header lines (`//@ key: value`) at the top of a case:
//! * `expect: E0101 E0201` — codes that must be reported (the snapshot alone records the
//!   rendering; the header states the intent).
//! * `arch: wse3` — target (default wse2).
//! * `fuel: N` — comptime budget, for cases that test the runaway-loop diagnostic.
//! * `params: NAME:VALUE,...` — `cslc --params`, for cases about command-line params.
//! * `max-nesting-depth: N`, `max-module-instances: N` — the other analysis limits
//!   (`cslc` flags of the same names), for cases that test their diagnostics.
//!
//! Bless new or changed snapshots with `INSTA_UPDATE=always cargo test -p csl-tests --test
//! ui`, then review every changed `.snap` file.

use csl_arch::Arch;
use cslc::driver::{Options, compile_file};

#[test]
fn ui() {
    insta::glob!("ui/**/*.csl", |path| {
        let (rel, src) = csl_tests::ui_case(path);
        let header = csl_tests::Header::parse(&src);
        let opts = Options {
            arch: header.arch.unwrap_or(Arch::Wse2),
            fabric_dims: (64, 64),
            fabric_offsets: (4, 1),
            fuel: header.fuel.unwrap_or(cslc::driver::DEFAULT_FUEL),
            max_nesting: header
                .max_nesting
                .unwrap_or(cslc::driver::DEFAULT_MAX_NESTING),
            max_modules: header
                .max_modules
                .unwrap_or(cslc::driver::DEFAULT_MAX_MODULES),
            params: header.params.clone(),
            ..Options::default()
        };
        // Compile relative to the crate directory so that paths in messages are stable.
        let comp = compile_file(&rel, &opts);
        let compiled = comp.output.is_some();
        insta::assert_snapshot!(csl_tests::ui_snapshot(
            &rel,
            &src,
            &header.expect,
            &comp.diagnostics,
            &comp.sources,
            compiled
        ));
    });
}
