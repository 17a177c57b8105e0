//! The builtin table (`cslc::sema::builtins::BUILTINS`): every builtin called with a wrong
//! number of arguments is an arity diagnostic (`E0502`) at the call, naming the expected
//! count and the builtin's signature.

use cslc::driver::{Compilation, Options, compile_sources};
use cslc::sema::builtins::{BUILTINS, BuiltinInfo, Where};
use cslc::source::SourceMap;

/// Compiles `text` as the top-level file `case.csl`.
fn compile_text(text: &str) -> Compilation {
    let mut sources = SourceMap::new();
    let top = sources.add("case.csl".into(), None, text.to_string());
    compile_sources(sources, top, &Options::default())
}

const LAYOUT: &str = "layout { @set_rectangle(1, 1); @set_tile_code(0, 0); }";

/// A one-PE program that calls `call` where builtin `b` may be used.
fn program(b: &BuiltinInfo, call: &str) -> String {
    match b.place {
        Where::Layout => {
            format!("layout {{ @set_rectangle(1, 1); @set_tile_code(0, 0); {call}; }}\n")
        }
        Where::Runtime | Where::TopComptimeOrRuntime => format!(
            "{LAYOUT}\ntask t() void {{ {call}; }}\n\
             comptime {{ @bind_local_task(t, @get_local_task_id(8)); }}\n"
        ),
        Where::Any | Where::Comptime | Where::TopComptime => {
            format!("{LAYOUT}\ncomptime {{ {call}; }}\n")
        }
    }
}

/// Fails the test with every collected failure, one per line.
fn assert_no_failures(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Checks that `text` reports the arity of `b` at `call`, with `n` arguments given.
fn check(b: &BuiltinInfo, n: usize, text: &str, call: &str, failures: &mut Vec<String>) {
    let c = compile_text(text);
    let rendered = cslc::diag::render_all(&c.diagnostics, &c.sources, false);
    let start = text.find(call).unwrap_or(usize::MAX);
    let sig = b.signature();
    let ok = c.diagnostics.iter().any(|d| {
        d.code == "E0502"
            && d.message.starts_with(&format!(
                "`@{}` takes {} argument",
                b.name,
                b.arity.describe()
            ))
            && d.message.ends_with(&format!(
                ", but {n} {} given",
                if n == 1 { "was" } else { "were" }
            ))
            && d.help.as_deref().is_some_and(|h| h.contains(&sig))
            && d.primary.as_ref().is_some_and(|l| {
                l.span.start as usize == start && l.span.end as usize == start + call.len()
            })
    });
    if !ok {
        failures.push(format!(
            "@{} with {n} argument(s):\n{text}\n{rendered}",
            b.name
        ));
    }
}

#[test]
fn every_builtin_checks_its_arity() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for b in BUILTINS {
        let top = b.arity.max().map_or(b.arity.min(), |m| m + 1);
        for n in (0..=top).filter(|&n| !b.arity.accepts(n)) {
            let call = format!("@{}({})", b.name, vec!["0"; n].join(", "));
            check(b, n, &program(b, &call), &call, &mut failures);
            checked += 1;
        }
    }
    assert!(checked > BUILTINS.len(), "only {checked} calls checked");
    assert_no_failures(&failures);
}

/// A runtime `for` over `@range` is lowered without going through the builtin dispatch; its
/// arity comes from the same row.
#[test]
fn runtime_range_loop_checks_its_arity() {
    let Some(b) = BUILTINS.iter().find(|b| b.name == "range") else {
        panic!("no @range row");
    };
    let mut failures = Vec::new();
    for n in (0..=5).filter(|&n| !b.arity.accepts(n)) {
        let args: Vec<&str> = std::iter::once("u16")
            .chain(std::iter::repeat_n("1", n.saturating_sub(1)))
            .take(n)
            .collect();
        let call = format!("@range({})", args.join(", "));
        let text = format!(
            "{LAYOUT}\nvar x: u16 = 0;\ntask t() void {{ for ({call}) |i| {{ x += i; }} }}\n\
             comptime {{ @bind_local_task(t, @get_local_task_id(8)); }}\n"
        );
        check(b, n, &text, &call, &mut failures);
    }
    assert_no_failures(&failures);
}

/// Calls that analysis never reaches (a function never called, an unused constant, a
/// branch folded away) are checked too: the arity is checked when the file is parsed.
#[test]
fn unreached_calls_check_their_arity() {
    let mut failures = Vec::new();
    for b in BUILTINS.iter().filter(|b| b.arity.min() > 0) {
        let call = format!("@{}()", b.name);
        for text in [
            format!("{LAYOUT}\nfn unused() void {{ {call}; }}\n"),
            format!("{LAYOUT}\nconst unused = {call};\n"),
            format!("{LAYOUT}\ncomptime {{ if (false) {{ {call}; }} }}\n"),
        ] {
            check(b, 0, &text, &call, &mut failures);
        }
    }
    assert_no_failures(&failures);
}

/// A call analysed more than once (a generic function instantiated twice) or after the
/// file is parsed still gets the diagnostic once.
#[test]
fn arity_is_reported_once() {
    let text = format!(
        "{LAYOUT}\nfn g(comptime T: type) T {{ return @as(T); }}\n\
         comptime {{ _ = g(u16); _ = g(i32); }}\n"
    );
    let c = compile_text(&text);
    let n = c.diagnostics.iter().filter(|d| d.code == "E0502").count();
    let rendered = cslc::diag::render_all(&c.diagnostics, &c.sources, false);
    assert_eq!(n, 1, "{rendered}");
}

#[test]
fn signatures_mark_optional_and_repeated_arguments() {
    let sig = |name: &str| {
        BUILTINS
            .iter()
            .find(|b| b.name == name)
            .map(BuiltinInfo::signature)
            .unwrap_or_default()
    };
    assert_eq!(sig("as"), "@as(type, value)");
    assert_eq!(sig("fp16"), "@fp16()");
    assert_eq!(
        sig("set_tile_code"),
        "@set_tile_code(int, int[, comptime_string, struct])"
    );
    assert_eq!(
        sig("import_module"),
        "@import_module(comptime_string[, struct])"
    );
    assert_eq!(sig("strcat"), "@strcat(comptime_string...)");
    assert_eq!(sig("map"), "@map(fn, value...)");
    for b in BUILTINS {
        // One kind per argument; a variadic builtin names at least the one that repeats.
        let kinds = b.arity.max().unwrap_or(b.arity.min().max(1));
        assert_eq!(b.params.len(), kinds, "@{}: {:?}", b.name, b.params);
    }
}

/// `@get_rectangle` gives `u16` fields, as the SDK documents, also in its nested structs.
#[test]
fn get_rectangle_fields_are_u16() {
    let text = "layout { @set_rectangle(1, 1); @set_tile_code(0, 0); \
                const r = @get_rectangle(); \
                @comptime_assert(@is_same_type(@type_of(r.width), u16)); \
                @comptime_assert(@is_same_type(@type_of(r.height), u16)); \
                @comptime_assert(@is_same_type(@type_of(r.fabric.width), u16)); \
                @comptime_assert(@is_same_type(@type_of(r.offsets.height), u16)); \
                @comptime_assert(r.width == 1 and r.height == 1); }\n";
    let c = compile_text(text);
    let rendered = cslc::diag::render_all(&c.diagnostics, &c.sources, false);
    assert!(!c.has_errors(), "{rendered}");
}
