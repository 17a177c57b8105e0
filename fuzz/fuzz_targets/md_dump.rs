//! Fuzz target: any UTF-8 text read as an MD dump (the `mdlj` input reader). Parsing must
//! return a `DumpError` naming the line, never panic; a dump that parses must write and
//! parse back to the same atoms.

#![no_main]

use csl_examples::md::dump::Dump;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(dump) = Dump::parse(text) else {
        return;
    };
    let again = Dump::parse(&dump.write()).expect("a dump that parsed must parse after writing");
    assert_eq!(
        again.atoms.len(),
        dump.atoms.len(),
        "round trip changed the atom count"
    );
});
