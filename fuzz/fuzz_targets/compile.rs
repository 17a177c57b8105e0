//! Fuzz target: any UTF-8 text compiled as a top-level CSL file (layout, analysis,
//! optimisation, code generation, linking). The compiler must return diagnostics, never
//! panic, abort or run away (a small comptime fuel keeps runs short).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let mut sources = cslc::source::SourceMap::new();
        let top = sources.add("fuzz.csl".into(), None, text.to_string());
        let opts = cslc::driver::Options {
            fuel: 20_000,
            ..cslc::driver::Options::default()
        };
        let _ = cslc::driver::compile_sources(sources, top, &opts);
    }
});
