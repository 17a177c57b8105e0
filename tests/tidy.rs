//! Tidy checks: conventions of the repository enforced as tests.

use std::path::Path;

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

/// Asserts that `f` compiles with `opts` without errors (`what` follows its name in the
/// message).
fn assert_compiles(f: &Path, opts: &cslc::Options, what: &str) {
    let comp = cslc::compile_file(f, opts);
    assert!(
        !comp.has_errors(),
        "{}{what}:\n{}",
        f.display(),
        cslc::diag::render_all(&comp.diagnostics, &comp.sources, false)
    );
}

#[test]
fn every_rust_module_starts_with_a_doc_comment() {
    let root = csl_tests::repo_root();
    let mut missing = Vec::new();
    let dirs = [
        "compiler/src",
        "runtime-sim/src",
        "runtime-sim/arch/src",
        "tests",
        "examples",
        "lsp",
    ];
    for f in csl_tests::repo_files(&dirs, "rs") {
        let text = read(&f);
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        if !first.starts_with("//!") {
            missing.push(f.strip_prefix(&root).unwrap_or(&f).display().to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "modules without a `//!` header: {missing:?}"
    );
}

#[test]
fn the_simulator_never_depends_on_the_compiler() {
    let root = csl_tests::repo_root();
    for manifest in ["runtime-sim/Cargo.toml", "runtime-sim/arch/Cargo.toml"] {
        let text = read(&root.join(manifest));
        let depends = text.lines().any(|l| {
            let l = l.trim_start();
            l.starts_with("cslc ") || l.starts_with("cslc.") || l.starts_with("cslc=")
        });
        assert!(!depends, "{manifest} must not depend on the compiler");
    }
}

#[test]
fn no_unreviewed_snapshots() {
    let root = csl_tests::repo_root();
    let pending: Vec<_> = csl_tests::files_with_ext(&root.join("tests"), "new")
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".snap.new"))
        .collect();
    assert!(pending.is_empty(), "unreviewed snapshots: {pending:?}");
}

#[test]
fn memcpy_library_uses_the_arch_unblock_register() {
    // The CSL library cannot import Rust constants, so this test keeps the two in step.
    let src = cslc::stdlib::lookup("memcpy/memcpy").unwrap_or("");
    let want = format!("0x{:x}", csl_arch::fabric::mmio::HOST_CMD_UNBLOCK);
    assert!(src.contains(&want), "<memcpy/memcpy> must store to {want}");
}

#[test]
fn libraries_use_the_arch_register_addresses() {
    use csl_arch::fabric::mmio;
    for (lib, addr) in [
        ("layout", mmio::COL_ID),
        ("layout", mmio::ROW_ID),
        ("message_passing", mmio::ROW_ID),
        ("time", mmio::TSC),
        ("simprint", mmio::PRINT_CHAR),
        ("tile_config/task_priority", mmio::TASK_PRIORITY),
        ("tile_config/teardown", mmio::TEARDOWN_EXIT),
        ("tile_config/teardown", mmio::TEARDOWN_PENDING),
        ("tile_config/color_config", mmio::COLOR_CONFIG),
        ("tile_config/switch_config", mmio::SWITCH_CONFIG),
    ] {
        let src = cslc::stdlib::lookup(lib).unwrap_or("");
        let want = format!("0x{addr:x}");
        assert!(
            src.contains(&want),
            "<{lib}> must use register address {want}"
        );
    }
}

#[test]
fn message_passing_library_uses_the_arch_header_layout() {
    use csl_arch::fabric::message as m;
    let src = cslc::stdlib::lookup("message_passing").unwrap_or("");
    for want in [
        format!("const dest_col_shift: u32 = {};", m::DEST_COL_SHIFT),
        format!("const dest_row_shift: u32 = {};", m::DEST_ROW_SHIFT),
        format!("const coord_mask: u32 = 0x{:x};", m::COORD_MASK),
        format!("const north_bit: u32 = 0x{:x};", m::NORTH),
        format!("const south_bit: u32 = 0x{:x};", m::SOUTH),
        format!("const ctrl_term_bit: u32 = 0x{:x};", m::CTRL_TERM),
        format!("const len_mask: u32 = 0x{:x};", m::LEN_MASK),
        format!(
            "const mp_comm_color: color = @get_color({});",
            m::COMM_COLOR
        ),
    ] {
        assert!(src.contains(&want), "<message_passing> must have `{want}`");
    }
}

#[test]
fn every_stdlib_file_is_bundled() {
    let root = csl_tests::repo_root();
    for f in csl_tests::files_with_ext(&root.join("stdlib"), "csl") {
        let rel = f
            .strip_prefix(root.join("stdlib"))
            .unwrap_or(&f)
            .with_extension("");
        let name = rel.to_string_lossy().replace('\\', "/");
        assert!(
            cslc::stdlib::lookup(&name).is_some(),
            "stdlib/{name}.csl is not listed in compiler/src/stdlib.rs"
        );
    }
}

#[test]
fn every_csl_file_in_examples_and_stdlib_parses() {
    let mut failures = Vec::new();
    for f in csl_tests::repo_files(&["examples", "stdlib"], "csl") {
        let mut sources = cslc::SourceMap::new();
        let text = read(&f);
        let id = sources.add(f.display().to_string(), None, text.clone());
        let (_, diags) = cslc::syntax::parse(id, &text);
        if !diags.is_empty() {
            failures.push(cslc::diag::render_all(&diags, &sources, false));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_example_layout_compiles_for_both_archs() {
    let root = csl_tests::repo_root();
    for f in csl_tests::files_with_ext(&root.join("examples"), "csl") {
        if f.file_name().is_none_or(|n| n != "layout.csl") {
            continue;
        }
        // A program for one architecture says so in a `//@ arch:` line.
        let only = csl_tests::Header::parse(&read(&f)).arch;
        for arch in [csl_arch::Arch::Wse2, csl_arch::Arch::Wse3] {
            if only.is_some_and(|a| a != arch) {
                continue;
            }
            let opts = cslc::Options {
                arch,
                ..cslc::Options::default()
            };
            assert_compiles(&f, &opts, &format!(" ({arch})"));
        }
    }
}

/// Codes that do not have a ui case yet. This list may only shrink.
const CODES_WITHOUT_CASES: &[&str] = &["E0901"];

#[test]
fn every_diagnostic_code_has_a_ui_case() {
    let root = csl_tests::repo_root();
    let mut all_cases = String::new();
    for f in csl_tests::files_with_ext(&root.join("tests/ui"), "csl") {
        all_cases.push_str(&read(&f));
    }
    for f in csl_tests::files_with_ext(&root.join("tests/ui"), "w") {
        all_cases.push_str(&read(&f));
    }
    for f in csl_tests::files_with_ext(&root.join("tests/ui"), "paint") {
        all_cases.push_str(&read(&f));
    }
    let missing: Vec<&str> = cslc::diag::codes::ALL
        .iter()
        .map(|(c, _)| *c)
        .filter(|c| {
            !all_cases.contains(&format!("expect: {c}")) && !all_cases.contains(&format!(" {c}"))
        })
        .filter(|c| !CODES_WITHOUT_CASES.contains(c))
        .collect();
    assert!(
        missing.is_empty(),
        "diagnostic codes without a tests/ui case: {missing:?}"
    );
}

#[test]
fn every_library_analyses_completely() {
    // A generated program imports every bundled library that needs no params and
    // analyses every function and task in it (`--check-all`), reached or not.
    let libs: Vec<&str> = cslc::stdlib::all()
        .iter()
        .filter(|(_, src)| {
            !src.lines().any(|l| {
                let l = l.trim_start();
                l.starts_with("param ") && !l.contains('=')
            })
        })
        .map(|(name, _)| *name)
        .collect();
    assert!(libs.len() >= 3, "{libs:?}");
    let mut src = String::from("layout { @set_rectangle(1, 1); @set_tile_code(0, 0); }\n");
    for (i, l) in libs.iter().enumerate() {
        src.push_str(&format!("const lib{i} = @import_module(\"<{l}>\");\n"));
    }
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("stdlib-all");
    std::fs::create_dir_all(&dir).unwrap_or_default();
    let file = dir.join("all.csl");
    std::fs::write(&file, &src).unwrap_or_default();
    for arch in [csl_arch::Arch::Wse2, csl_arch::Arch::Wse3] {
        let opts = cslc::Options {
            arch,
            analyse_all: true,
            ..cslc::Options::default()
        };
        let comp = cslc::compile_file(&file, &opts);
        assert!(
            !comp.has_errors(),
            "libraries {libs:?} on {arch}:\n{}",
            cslc::diag::render_all(&comp.diagnostics, &comp.sources, false)
        );
    }
}

#[test]
fn every_example_layout_analyses_completely() {
    let root = csl_tests::repo_root();
    for dir in ["examples", "tests/programs"] {
        for f in csl_tests::files_with_ext(&root.join(dir), "csl") {
            if f.file_name().is_none_or(|n| n != "layout.csl") {
                continue;
            }
            // A `//@ arch: wse3` line marks a program for one architecture only.
            let header = csl_tests::Header::parse(&read(&f));
            let opts = cslc::Options {
                arch: header.arch.unwrap_or(csl_arch::Arch::Wse2),
                fabric_dims: (40, 40),
                analyse_all: true,
                ..cslc::Options::default()
            };
            assert_compiles(&f, &opts, "");
        }
    }
}
