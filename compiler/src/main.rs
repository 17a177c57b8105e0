//! `cslc`: the command-line compiler. Accepts the vendor compiler's spelling of its flags.
//!
//! Exit codes: 0 success, 1 errors in the program or the command line.

use clap::Parser;
use csl_arch::Arch;
use cslc::diag::{Diagnostic, codes, render_all};
use cslc::driver::{Options, compile_file};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Compile a CSL program (the file holding the `layout` block) into a fabric image.
#[derive(Parser, Debug)]
#[command(name = "cslc", version, about)]
struct Cli {
    /// The top-level CSL file (the one with the `layout` block).
    file: PathBuf,
    /// Target architecture: wse2 or wse3.
    #[arg(long, default_value = "wse2")]
    arch: String,
    /// Size of the simulated fabric, `W,H`.
    #[arg(long = "fabric-dims")]
    fabric_dims: Option<String>,
    /// Position of the program rectangle's north-west PE, `X,Y`.
    #[arg(long = "fabric-offsets")]
    fabric_offsets: Option<String>,
    /// Top-level params, `NAME:VALUE[,NAME:VALUE]` (repeatable).
    #[arg(long = "params")]
    params: Vec<String>,
    /// Colour params of the top-level file, `NAME:ID[,NAME:ID]` (repeatable).
    #[arg(long = "colors")]
    colors: Vec<String>,
    /// Include the host-transfer (memcpy) infrastructure.
    #[arg(long)]
    memcpy: bool,
    /// Number of host I/O channels.
    #[arg(long, default_value_t = 1)]
    channels: u32,
    /// Memcpy buffer columns on the west side.
    #[arg(long = "width-west-buf", default_value_t = 0)]
    width_west_buf: u32,
    /// Memcpy buffer columns on the east side.
    #[arg(long = "width-east-buf", default_value_t = 0)]
    width_east_buf: u32,
    /// Output: a path ending in `.elf` is written as one file; anything else is a
    /// directory that receives `out.elf` and `out.json`.
    #[arg(short = 'o', default_value = "out")]
    output: PathBuf,
    /// Only analyse the program; write nothing.
    #[arg(long)]
    check: bool,
    /// The runtime 16-bit float format `@fp16()` names: f16, bf16 or cb16.
    #[arg(long = "fp16-format", default_value = "f16")]
    fp16_format: String,
    /// Analyse every function and task of every module, even those nothing reaches.
    #[arg(long = "check-all")]
    check_all: bool,
    /// Print the disassembly of every program class.
    #[arg(long = "emit-asm")]
    emit_asm: bool,
    /// Print a summary of what was compiled (program classes and their PEs) to stderr.
    #[arg(long)]
    verbose: bool,
    /// Comptime evaluation budget: statements and loop iterations executed at compile time
    /// before the compiler reports a runaway loop [default: 10,000,000 plus 200 per PE of
    /// the fabric]
    #[arg(long = "comptime-fuel")]
    comptime_fuel: Option<u64>,
    /// Deepest nesting of expressions and statements analysed (a longer operator chain
    /// is an error, not a crash); larger values also give analysis a larger stack.
    #[arg(long = "max-nesting-depth", default_value_t = cslc::driver::DEFAULT_MAX_NESTING,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    max_nesting_depth: u32,
    /// Most module instances one program class may create (`@import_module` calls
    /// evaluated, plus its root file).
    #[arg(long = "max-module-instances", default_value_t = cslc::driver::DEFAULT_MAX_MODULES,
          value_parser = clap::value_parser!(u32).range(1..))]
    max_module_instances: u32,
    /// Treat warnings (the static route checks E0701-E0707 among them) as errors: report
    /// them as errors and write nothing.
    #[arg(long = "deny-warnings")]
    deny_warnings: bool,
    /// Write the route graph in Graphviz format to FILE (e.g. routes.dot): one node per
    /// (PE, colour, input port) buffer and per colour delivered to a CE, one edge per hop,
    /// labelled with its switch position. `FILE:COLOR` (e.g. routes.dot:3) keeps one colour.
    #[arg(long = "emit-routes", value_name = "FILE[:COLOR]")]
    emit_routes: Option<String>,
    /// Keep only this colour in the `--emit-routes` graph (same as `FILE:COLOR`).
    #[arg(long = "emit-routes-color", value_name = "COLOR")]
    emit_routes_color: Option<u8>,
    /// Optimisation level: 0 turns the IR optimiser off, 1 (the default) runs it.
    #[arg(short = 'O', default_value_t = 1, value_parser = clap::value_parser!(u8).range(0..=1))]
    opt_level: u8,
    /// FILE is an SdkLayout description (JSON, as the Python `SdkLayout.compile` writes
    /// it) instead of a CSL file; `-o` names the output directory, which also receives the
    /// generated CSL. `--arch` and the fabric flags are taken from the description.
    #[arg(long)]
    sdklayout: bool,
}

fn main() -> ExitCode {
    let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 1 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    if cli.sdklayout {
        return compile_sdklayout(&cli);
    }
    let opts = match options(&cli) {
        Ok(o) => o,
        Err(d) => {
            eprint!("{}", cslc::diag::render(&d, &cslc::SourceMap::new(), color));
            return ExitCode::from(1);
        }
    };
    let routes_dot = match routes_target(&cli) {
        Ok(t) => t,
        Err(d) => {
            eprint!("{}", cslc::diag::render(&d, &cslc::SourceMap::new(), color));
            return ExitCode::from(1);
        }
    };
    let mut comp = compile_file(&cli.file, &opts);
    for line in &comp.prints {
        eprintln!("{line}");
    }
    if cli.deny_warnings && cslc::diag::deny_warnings(&mut comp.diagnostics) {
        comp.output = None;
    }
    eprint!("{}", render_all(&comp.diagnostics, &comp.sources, color));
    let Some(out) = comp.output else {
        let n = comp.diagnostics.iter().filter(|d| d.is_error()).count();
        eprintln!(
            "error: could not compile `{}` ({n} error{})",
            cli.file.display(),
            if n == 1 { "" } else { "s" }
        );
        return ExitCode::from(1);
    };
    if cli.verbose {
        for (phase, t) in &comp.phases {
            eprintln!("cslc: {phase}: {:.3} s", t.as_secs_f64());
        }
        let m = &out.image.meta;
        eprintln!(
            "cslc: {} program class(es) for a {}x{} rectangle at ({},{}) of a {}x{} {} fabric",
            out.image.classes.len(),
            m.width,
            m.height,
            m.offset_x,
            m.offset_y,
            m.fabric_width,
            m.fabric_height,
            m.arch.name()
        );
        for (i, c) in out.image.classes.iter().enumerate() {
            let pes = out
                .image
                .placement
                .iter()
                .filter(|&&p| p == i as u32)
                .count();
            eprintln!(
                "cslc:   class {i}: {} ({} PE(s), {} instructions)",
                c.info.name,
                pes,
                c.code.len()
            );
        }
    }
    if let Some((path, only)) = &routes_dot {
        let text = cslc::fabric_check::dot(&out.image.meta, &out.image.routes, *only);
        if let Err(e) = std::fs::write(path, text) {
            eprintln!(
                "error[{}]: cannot write `{}`: {e}",
                codes::BAD_ARGUMENT,
                path.display()
            );
            return ExitCode::from(1);
        }
    }
    if cli.emit_asm {
        let text = cslc::link::disassembly(&out.image);
        // A closed pipe (e.g. `| head`) is not an error worth a panic.
        let _ = std::io::Write::write_all(&mut std::io::stdout(), text.as_bytes());
    }
    if cli.check {
        return ExitCode::SUCCESS;
    }
    match write_output(&cli.output, &out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("error[{}]: {msg}", codes::BAD_ARGUMENT);
            ExitCode::from(1)
        }
    }
}

/// `cslc --sdklayout DESC.json -o DIR`: compiles an SdkLayout description
/// ([`cslc::sdklayout`]) into `DIR/out.elf` and `DIR/out.json`.
fn compile_sdklayout(cli: &Cli) -> ExitCode {
    let fail = |msg: String| {
        eprintln!("error[{}]: {msg}", codes::BAD_ARGUMENT);
        ExitCode::from(1)
    };
    let text = match std::fs::read_to_string(&cli.file) {
        Ok(t) => t,
        Err(e) => return fail(format!("cannot read `{}`: {e}", cli.file.display())),
    };
    let desc = match cslc::sdklayout::parse(&text) {
        Ok(d) => d,
        Err(e) => return fail(e.to_string()),
    };
    if cli.output.extension().is_some_and(|e| e == "elf") {
        return fail("--sdklayout writes a directory: give -o DIR".into());
    }
    if let Err(e) = std::fs::create_dir_all(&cli.output) {
        return fail(format!("cannot create `{}`: {e}", cli.output.display()));
    }
    let opts = cslc::sdklayout::SdkLayoutOptions {
        base_dir: PathBuf::from("."),
        work_dir: cli.output.clone(),
        optimize: cli.opt_level > 0,
    };
    let out = match cslc::sdklayout::compile(&desc, &opts) {
        Ok(o) => o,
        Err(e) => return fail(e.to_string()),
    };
    if !out.warnings.is_empty() && cli.verbose {
        eprint!("{}", out.warnings);
    }
    let out = cslc::driver::Output {
        image: out.image,
        metadata: out.metadata,
    };
    match write_output(&cli.output, &out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => fail(msg),
    }
}

fn write_output(path: &Path, out: &cslc::driver::Output) -> Result<(), String> {
    let elf = out.image.to_elf().map_err(|e| e.to_string())?;
    let json = serde_json::to_string_pretty(&out.metadata).map_err(|e| e.to_string())?;
    let is_file = path.extension().is_some_and(|e| e == "elf");
    if is_file {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create `{}`: {e}", parent.display()))?;
        }
        std::fs::write(path, elf).map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
    } else {
        std::fs::create_dir_all(path)
            .map_err(|e| format!("cannot create `{}`: {e}", path.display()))?;
        let elf_path = path.join("out.elf");
        std::fs::write(&elf_path, elf)
            .map_err(|e| format!("cannot write `{}`: {e}", elf_path.display()))?;
        let json_path = path.join("out.json");
        std::fs::write(&json_path, json)
            .map_err(|e| format!("cannot write `{}`: {e}", json_path.display()))?;
    }
    Ok(())
}

/// Where `--emit-routes` writes and which colour it keeps: `FILE`, `FILE:COLOR`, or
/// `FILE` with `--emit-routes-color=COLOR`.
fn routes_target(cli: &Cli) -> Result<Option<(PathBuf, Option<u8>)>, Box<Diagnostic>> {
    let Some(arg) = &cli.emit_routes else {
        if cli.emit_routes_color.is_some() {
            return Err(bad("--emit-routes-color needs --emit-routes=FILE".into()));
        }
        return Ok(None);
    };
    let (file, color) = match arg.rsplit_once(':') {
        Some((f, c)) if !c.is_empty() && c.bytes().all(|b| b.is_ascii_digit()) => {
            let n = c
                .parse::<u8>()
                .ok()
                .filter(|&n| n < csl_arch::fabric::NUM_COLORS);
            match n {
                Some(n) => (f, Some(n)),
                None => {
                    return Err(bad(format!(
                        "--emit-routes: `{c}` is not a colour (0 to {})",
                        csl_arch::fabric::NUM_COLORS - 1
                    )));
                }
            }
        }
        _ => (arg.as_str(), None),
    };
    let color = match (color, cli.emit_routes_color) {
        (Some(a), Some(b)) if a != b => {
            return Err(bad(format!(
                "--emit-routes names colour {a} but --emit-routes-color names {b}"
            )));
        }
        (a, b) => a.or(b),
    };
    if let Some(c) = color
        && c >= csl_arch::fabric::NUM_COLORS
    {
        return Err(bad(format!(
            "--emit-routes-color: {c} is not a colour (0 to {})",
            csl_arch::fabric::NUM_COLORS - 1
        )));
    }
    if file.is_empty() {
        return Err(bad("--emit-routes needs a file name".into()));
    }
    Ok(Some((PathBuf::from(file), color)))
}

fn bad(msg: String) -> Box<Diagnostic> {
    Box::new(Diagnostic::global(codes::BAD_ARGUMENT, msg))
}

fn pair(flag: &str, s: &str) -> Result<(u32, u32), Box<Diagnostic>> {
    let parts: Vec<&str> = s.split(',').collect();
    match parts.as_slice() {
        [a, b] => match (a.trim().parse(), b.trim().parse()) {
            (Ok(a), Ok(b)) => Ok((a, b)),
            _ => Err(bad(format!(
                "{flag} expects two non-negative integers `A,B`, got `{s}`"
            ))),
        },
        _ => Err(bad(format!("{flag} expects `A,B`, got `{s}`"))),
    }
}

fn options(cli: &Cli) -> Result<Options, Box<Diagnostic>> {
    let arch = Arch::from_name(&cli.arch).ok_or_else(|| {
        bad(format!(
            "unknown architecture `{}`; use wse2 or wse3",
            cli.arch
        ))
    })?;
    let offsets = match &cli.fabric_offsets {
        Some(s) => pair("--fabric-offsets", s)?,
        None => (4, 1),
    };
    let dims = match &cli.fabric_dims {
        Some(s) => pair("--fabric-dims", s)?,
        None => (757, 996),
    };
    let mut params = Vec::new();
    for group in &cli.params {
        for item in group.split(',').filter(|s| !s.trim().is_empty()) {
            let Some((name, value)) = item.split_once(':') else {
                return Err(bad(format!("--params expects NAME:VALUE, got `{item}`")));
            };
            let name = name.trim();
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(bad(format!("`{name}` is not a param name")));
            }
            params.push((name.to_string(), value.trim().to_string()));
        }
    }
    let mut colors = Vec::new();
    for group in &cli.colors {
        for item in group.split(',').filter(|s| !s.trim().is_empty()) {
            let parsed = item
                .split_once(':')
                .and_then(|(n, v)| Some((n.trim(), v.trim().parse::<u32>().ok()?)));
            let Some((name, id)) = parsed else {
                return Err(bad(format!(
                    "--colors expects NAME:ID with a colour number, got `{item}`"
                )));
            };
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(bad(format!("`{name}` is not a param name")));
            }
            colors.push((name.to_string(), id));
        }
    }
    if cli.channels == 0 || cli.channels > 16 {
        return Err(bad(format!(
            "--channels must be between 1 and 16, got {}",
            cli.channels
        )));
    }
    if cli.memcpy {
        // The vendor's rule for the memcpy halo: 4 + west buffer columns to the west, 3 + east
        // buffer columns to the east, one row above and below.
        let need_x = 4 + cli.width_west_buf;
        if offsets.0 < need_x || offsets.1 < 1 {
            return Err(bad(format!(
                "--memcpy needs --fabric-offsets of at least {need_x},1 to leave room for the memcpy columns (got {},{})",
                offsets.0, offsets.1
            )));
        }
    }
    Ok(Options {
        arch,
        fabric_dims: dims,
        fabric_offsets: offsets,
        params,
        colors,
        memcpy: cli.memcpy,
        channels: cli.channels,
        width_west_buf: cli.width_west_buf,
        width_east_buf: cli.width_east_buf,
        analyse_all: cli.check_all,
        optimize: cli.opt_level > 0,
        fuel: cli.comptime_fuel.unwrap_or_else(|| {
            let pes = u64::from(dims.0) * u64::from(dims.1);
            cslc::driver::DEFAULT_FUEL + cslc::driver::FUEL_PER_PE * pes
        }),
        max_nesting: cli.max_nesting_depth,
        max_modules: cli.max_module_instances,
        fp16_format: match cli.fp16_format.as_str() {
            f @ ("f16" | "bf16" | "cb16") => f.to_string(),
            other => {
                return Err(bad(format!(
                    "--fp16-format must be f16, bf16 or cb16, got `{other}`"
                )));
            }
        },
        ..Options::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(args: &[&str]) -> Result<Option<(PathBuf, Option<u8>)>, String> {
        let mut all = vec!["cslc", "layout.csl"];
        all.extend_from_slice(args);
        let cli = Cli::try_parse_from(all).map_err(|e| e.to_string())?;
        routes_target(&cli).map_err(|d| d.message)
    }

    #[test]
    fn emit_routes_takes_a_file_and_an_optional_colour() {
        assert_eq!(target(&[]), Ok(None));
        assert_eq!(
            target(&["--emit-routes=r.dot"]),
            Ok(Some((PathBuf::from("r.dot"), None)))
        );
        assert_eq!(
            target(&["--emit-routes=r.dot:3"]),
            Ok(Some((PathBuf::from("r.dot"), Some(3))))
        );
        assert_eq!(
            target(&["--emit-routes=r.dot", "--emit-routes-color=7"]),
            Ok(Some((PathBuf::from("r.dot"), Some(7))))
        );
        // A colon followed by something else is part of the file name.
        assert_eq!(
            target(&["--emit-routes=C:/x/r.dot"]),
            Ok(Some((PathBuf::from("C:/x/r.dot"), None)))
        );
        for bad in [
            &["--emit-routes=r.dot:24"][..],
            &["--emit-routes=r.dot", "--emit-routes-color=99"],
            &["--emit-routes=r.dot:3", "--emit-routes-color=4"],
            &["--emit-routes-color=4"],
            &["--emit-routes=:3"],
        ] {
            assert!(target(bad).is_err(), "{bad:?}");
        }
    }
}
