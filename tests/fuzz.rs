//! Fuzzing the front end and the checker: random mutations of real CSL programs (every
//! `.csl` file under `tests/`, `examples/` and `stdlib/`, plus `tests/fuzz/corpus/`) are
//! lexed, parsed, analysed and compiled; none may panic (a panic inside analysis comes back
//! as an "internal compiler error" diagnostic, which fails the test).
//!
//! `FUZZ_CASES=N` sets the number of cases (default 300, which CI runs); `FUZZ_SECONDS=S`
//! keeps going for S seconds instead; `FUZZ_KEEP_LAST=1` writes each input to
//! `target/fuzz-crashes/last.csl` before compiling it (to catch aborts such as stack
//! overflows). Inputs that crash are written to
//! `target/fuzz-crashes/` for minimising and adding to `tests/fuzz/corpus/`.

#![allow(clippy::unwrap_used)]

use cslc::driver::{Options, compile_sources};
use cslc::source::SourceMap;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::time::{Duration, Instant};

fn corpus() -> Vec<(String, String)> {
    let dirs = [
        "tests/ui",
        "tests/programs",
        "tests/fuzz/corpus",
        "examples",
        "stdlib",
    ];
    csl_tests::repo_files(&dirs, "csl")
        .into_iter()
        .filter_map(|f| Some((f.display().to_string(), std::fs::read_to_string(&f).ok()?)))
        .collect()
}

/// Fragments spliced into programs: CSL tokens and snippets likely to reach odd paths.
const FRAGMENTS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ";",
    ",",
    ".",
    ".*",
    "&",
    "@",
    "=",
    "==",
    "+",
    "-",
    "*",
    "/",
    "%",
    "<<",
    ">>",
    "|",
    "^",
    "~",
    "!",
    "and",
    "or",
    "if",
    "else",
    "while",
    "for",
    "switch",
    "break",
    "continue",
    "return",
    "comptime",
    "const",
    "var",
    "param",
    "fn",
    "task",
    "layout",
    "struct",
    "enum",
    "0",
    "1",
    "-1",
    "65536",
    "0x7fff",
    "1.5",
    "\"s\"",
    "'c'",
    "@as(i16, ",
    "@get_dsd(mem1d_dsd, .{",
    "@range(i16, 4)",
    "@import_module(\"<time>\")",
    ".{}",
    "|i|{4} -> a[i]",
    "[4]f32",
    "[*]f32",
    "*const i16",
    "u16",
    "f32",
    "@fadds(",
    ".async = true",
    "@activate(",
    "@bind_local_task(",
    "@set_tile_code(0, 0)",
    "@set_rectangle(1, 1)",
    "undefined_name",
    "x.y.z",
    "a[i, j]",
];

#[derive(Clone, Debug)]
enum Mutation {
    /// Replace the word (identifier or number) at `at` by the `with`-th word of the file:
    /// keeps the syntax valid, so the checker sees the program.
    ReplaceWord {
        at: usize,
        with: usize,
    },
    Delete {
        at: usize,
        len: usize,
    },
    Insert {
        at: usize,
        frag: usize,
    },
    Duplicate {
        at: usize,
        len: usize,
    },
    Swap {
        a: usize,
        b: usize,
        len: usize,
    },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), any::<usize>()).prop_map(|(at, with)| Mutation::ReplaceWord { at, with }),
        1 => (any::<usize>(), 1usize..40).prop_map(|(at, len)| Mutation::Delete { at, len }),
        1 => (any::<usize>(), 0..FRAGMENTS.len()).prop_map(|(at, frag)| Mutation::Insert { at, frag }),
        1 => (any::<usize>(), 1usize..80).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
        1 => (any::<usize>(), any::<usize>(), 1usize..20).prop_map(|(a, b, len)| Mutation::Swap { a, b, len }),
    ]
}

fn char_floor(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Byte ranges of the words (identifiers, keywords, numbers) of `s`.
fn words(s: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in s.char_indices() {
        let w = c.is_ascii_alphanumeric() || c == '_';
        match (w, start) {
            (true, None) => start = Some(i),
            (false, Some(a)) => {
                out.push((a, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(a) = start {
        out.push((a, s.len()));
    }
    out
}

#[derive(PartialEq, Eq)]
enum WordClass {
    Number,
    Keyword,
    Ident,
}

/// Words the mutator treats as keywords: the language's keywords plus `undefined`.
fn is_keyword(w: &str) -> bool {
    w == "undefined" || cslc::syntax::token::KEYWORDS.contains(&w)
}

fn word_class(w: &str) -> WordClass {
    if w.starts_with(|c: char| c.is_ascii_digit()) {
        WordClass::Number
    } else if is_keyword(w) {
        WordClass::Keyword
    } else {
        WordClass::Ident
    }
}

fn apply(src: &str, muts: &[Mutation]) -> String {
    let mut s = src.to_string();
    for m in muts {
        let n = s.len().max(1);
        match *m {
            Mutation::ReplaceWord { at, with } => {
                let ws = words(&s);
                if ws.is_empty() {
                    continue;
                }
                let (a, b) = ws[at % ws.len()];
                let class = word_class(&s[a..b]);
                if class == WordClass::Keyword {
                    continue;
                }
                // Another word of the same class (identifier or number) keeps the syntax.
                let same: Vec<(usize, usize)> = ws
                    .iter()
                    .copied()
                    .filter(|&(c, d)| word_class(&s[c..d]) == class)
                    .collect();
                let (c, d) = same[with % same.len()];
                let w = s[c..d].to_string();
                s.replace_range(a..b, &w);
            }
            Mutation::Delete { at, len } => {
                let a = char_floor(&s, at % n);
                let b = char_floor(&s, a + len);
                s.replace_range(a..b, "");
            }
            Mutation::Insert { at, frag } => {
                let a = char_floor(&s, at % n);
                s.insert_str(a, FRAGMENTS[frag]);
            }
            Mutation::Duplicate { at, len } => {
                let a = char_floor(&s, at % n);
                let b = char_floor(&s, a + len);
                let piece = s[a..b].to_string();
                s.insert_str(b, &piece);
            }
            Mutation::Swap { a, b, len } => {
                let (a, b) = (char_floor(&s, a % n), char_floor(&s, b % n));
                let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
                let lo_end = char_floor(&s, (lo + len).min(hi));
                let hi_end = char_floor(&s, hi + len);
                let (x, y) = (s[lo..lo_end].to_string(), s[hi..hi_end].to_string());
                s.replace_range(hi..hi_end, &x);
                s.replace_range(lo..lo_end, &y);
            }
        }
    }
    s
}

fn check_one(name: &str, text: &str) -> Result<(), TestCaseError> {
    // A stack overflow aborts the process before any report: keep the input on disk first.
    if std::env::var("FUZZ_KEEP_LAST").is_ok() {
        let dir = csl_tests::repo_root().join("target/fuzz-crashes");
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(dir.join("last.csl"), text);
        let _ = std::fs::write(dir.join("last.name"), name);
    }
    let mut sources = SourceMap::new();
    // Keep the real path so relative imports still resolve.
    let top = sources.add(
        name.to_string(),
        Some(std::path::PathBuf::from(name)),
        text.to_string(),
    );
    let opts = Options {
        fuel: 20_000,
        ..Options::default()
    };
    let comp = compile_sources(sources, top, &opts);
    let crashed = comp
        .diagnostics
        .iter()
        .any(|d| d.message.contains("internal compiler error"));
    if crashed {
        let dir = csl_tests::repo_root().join("target/fuzz-crashes");
        let _ = std::fs::create_dir_all(&dir);
        let file = dir.join(format!("crash-{:016x}.csl", fxhash(text)));
        let _ = std::fs::write(&file, text);
        return Err(TestCaseError::fail(format!(
            "analysis panicked on a mutation of {name}; input saved to {}",
            file.display()
        )));
    }
    Ok(())
}

fn fxhash(s: &str) -> u64 {
    s.bytes().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
    })
}

#[test]
fn mutated_programs_never_crash_the_compiler() {
    let corpus = corpus();
    assert!(
        corpus.len() > 50,
        "the corpus is too small: {}",
        corpus.len()
    );
    let seconds: Option<u64> = std::env::var("FUZZ_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok());
    let cases: u32 = std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let deadline = seconds.map(|s| Instant::now() + Duration::from_secs(s));
    let mut total = 0u64;
    loop {
        let mut runner = TestRunner::new(Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        });
        // Half the cases only swap words within their class, so the program still parses
        // and the checker does the work; the other half also break the syntax.
        let word = (any::<usize>(), any::<usize>())
            .prop_map(|(at, with)| Mutation::ReplaceWord { at, with });
        let muts = prop_oneof![
            prop::collection::vec(word, 1..4),
            prop::collection::vec(mutation(), 1..4)
        ];
        let strategy = (0..corpus.len(), muts);
        let result = runner.run(&strategy, |(i, muts)| {
            let (name, text) = &corpus[i];
            check_one(name, &apply(text, &muts))
        });
        total += u64::from(cases);
        if let Err(e) = result {
            panic!("{e}");
        }
        match deadline {
            Some(d) if Instant::now() < d => continue,
            _ => break,
        }
    }
    eprintln!("fuzz: {total} mutated programs analysed without a crash");
}
