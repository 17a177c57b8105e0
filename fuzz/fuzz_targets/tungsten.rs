//! Fuzz target: any UTF-8 text compiled as a Tungsten program (`.w`) for one tile class,
//! through parsing, analysis and lowering to the shared IR. Every socket the text appears
//! to declare (`socket a, b;`) is bound to a colour, so that socket code is reached. The
//! front end must return diagnostics, never panic or run away.

#![no_main]

use cslc::tungsten::{ClassSpec, SocketBinding, compile_class};
use libfuzzer_sys::fuzz_target;

/// The names after each `socket` keyword up to the next `;` (a cheap scan, not a parse:
/// a wrong guess only produces a binding diagnostic).
fn socket_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("socket") {
        let after = &rest[at + "socket".len()..];
        let end = after.find(';').unwrap_or(after.len());
        for word in after[..end].split(|c: char| c == ',' || c.is_whitespace()) {
            let word = word.trim_end_matches("[]");
            if !word.is_empty()
                && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !names.iter().any(|n| n == word)
                && names.len() < 8
            {
                names.push(word.to_string());
            }
        }
        rest = &after[end..];
    }
    names
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut spec = ClassSpec::new(csl_arch::Arch::Wse3);
    for (i, name) in socket_names(text).into_iter().enumerate() {
        let c = (2 * i) as u8;
        spec.sockets
            .push((name, SocketBinding { rx: c, tx: c + 1 }));
    }
    let mut sources = cslc::source::SourceMap::new();
    let file = sources.add("fuzz.w".into(), None, text.to_string());
    let mut diags = Vec::new();
    // Deep expressions recurse; give analysis the stack the real driver gives it.
    let run = std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || compile_class(&mut sources, file, &spec, &mut diags).is_some());
    if let Ok(handle) = run {
        // A panic on the analysis thread must reach libFuzzer as a crash.
        if let Err(p) = handle.join() {
            std::panic::resume_unwind(p);
        }
    }
});
