//! Shared helpers of the integration tests: the `//@` header of test cases and
//! compile-and-run helpers.

use csl_arch::Arch;
use cslc::driver::{Options, compile_file};
use std::path::{Path, PathBuf};

#[path = "tungsten_util.rs"]
pub mod tungsten;

/// The `//@ key: value` lines at the top of a test case.
#[derive(Default, Debug)]
pub struct Header {
    /// Diagnostic codes that must appear.
    pub expect: Vec<String>,
    /// Target architecture.
    pub arch: Option<Arch>,
    /// Comptime budget.
    pub fuel: Option<u64>,
    /// Nesting depth limit (`cslc --max-nesting-depth`).
    pub max_nesting: Option<u32>,
    /// Module instance limit (`cslc --max-module-instances`).
    pub max_modules: Option<u32>,
    /// Command-line params (`cslc --params`), as `NAME:VALUE` pairs separated by commas.
    pub params: Vec<(String, String)>,
}

impl Header {
    /// Reads the header of a case.
    pub fn parse(src: &str) -> Header {
        let mut h = Header::default();
        for (key, value) in header_fields(src, "//@", "") {
            let value = value.trim();
            match key {
                "expect" => h.expect.extend(
                    value
                        .split(|c: char| c.is_whitespace() || c == ',')
                        .filter(|s| !s.is_empty())
                        .map(str::to_string),
                ),
                "arch" => h.arch = Arch::from_name(value),
                "fuel" => h.fuel = value.parse().ok(),
                "max-nesting-depth" => h.max_nesting = value.parse().ok(),
                "max-module-instances" => h.max_modules = value.parse().ok(),
                "params" => h.params.extend(value.split(',').filter_map(|p| {
                    let (k, v) = p.split_once(':')?;
                    Some((k.trim().to_string(), v.trim().to_string()))
                })),
                _ => {}
            }
        }
        h
    }
}

/// Checks a diagnostic snapshot case and returns the text its snapshot holds: every code
/// in `expect` must be among `diags`, and a case that expects none must compile without
/// errors (`compiled` says whether the front end produced its output). The text is the
/// case's source and its rendered diagnostics (`(none)` when there are none).
pub fn ui_snapshot(
    case: &Path,
    src: &str,
    expect: &[String],
    diags: &[cslc::Diagnostic],
    sources: &cslc::SourceMap,
    compiled: bool,
) -> String {
    let rendered = cslc::diag::render_all(diags, sources, false);
    for code in expect {
        assert!(
            diags.iter().any(|d| d.code == code),
            "{}: expected {code}, got:\n{rendered}",
            case.display()
        );
    }
    if expect.is_empty() {
        assert!(
            compiled && !diags.iter().any(cslc::Diagnostic::is_error),
            "{}: unexpected errors (or no output):\n{rendered}",
            case.display()
        );
    }
    format!(
        "----- SOURCE\n{src}\n----- DIAGNOSTICS\n{}",
        if rendered.is_empty() {
            "(none)\n"
        } else {
            &rendered
        }
    )
}

/// A ui case: its path relative to this crate's directory (the tests' working directory,
/// so that paths in messages and snapshot names do not depend on where the repository
/// is) and its text.
pub fn ui_case(path: &Path) -> (PathBuf, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rel = path.strip_prefix(root).unwrap_or(path).to_path_buf();
    let src = std::fs::read_to_string(path).unwrap_or_default();
    (rel, src)
}

/// The `key: value` fields of a case's header: the lines that start with `open` (such as
/// `//@`), without the `close` that ends them (if any).
pub fn header_fields<'a>(
    src: &'a str,
    open: &'a str,
    close: &'a str,
) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
    src.lines().filter_map(move |line| {
        let rest = line.trim().strip_prefix(open)?;
        let rest = rest.trim_end().trim_end_matches(close);
        let (key, value) = rest.split_once(':')?;
        Some((key.trim(), value))
    })
}

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// Every file with the given extension under the repository folders `dirs` (recursively),
/// folder by folder, each folder's sorted.
pub fn repo_files(dirs: &[&str], ext: &str) -> Vec<PathBuf> {
    let root = repo_root();
    dirs.iter()
        .flat_map(|d| files_with_ext(&root.join(d), ext))
        .collect()
}

/// Every file under `dir` (recursively) with the given extension, sorted.
pub fn files_with_ext(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n != "target" && n != ".git") {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|x| x == ext) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Compiler options for `arch` on a `dims` fabric, the rectangle at offsets 4,1.
pub fn options(arch: Arch, dims: (u32, u32)) -> Options {
    Options {
        arch,
        fabric_dims: dims,
        fabric_offsets: (4, 1),
        ..Options::default()
    }
}

/// Compiles `layout` (relative to the repository root) for `arch` on a `dims` fabric
/// (offsets 4,1) into `dir/out.elf` and `dir/out.json`, panicking with the rendered
/// diagnostics if it does not compile. Returns `dir`.
pub fn compile_to(
    layout: &str,
    arch: Arch,
    dims: (u32, u32),
    params: &[(&str, &str)],
    dir: &Path,
) -> PathBuf {
    let opts = Options {
        params: params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..options(arch, dims)
    };
    compile_with(&repo_root().join(layout), &opts, dir)
}

/// Compiles the layout file `layout` with `opts` into `dir/out.elf` and `dir/out.json`,
/// panicking with the rendered diagnostics if it does not compile. Returns `dir`.
pub fn compile_with(layout: &Path, opts: &Options, dir: &Path) -> PathBuf {
    let comp = compile_file(layout, opts);
    let rendered = cslc::diag::render_all(&comp.diagnostics, &comp.sources, false);
    let Some(out) = comp.output else {
        panic!(
            "{} does not compile for {}:\n{rendered}",
            layout.display(),
            opts.arch
        )
    };
    std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    let elf = out.image.to_elf().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.join("out.elf"), elf).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.join("out.json"), out.metadata.to_string())
        .unwrap_or_else(|e| panic!("{e}"));
    dir.to_path_buf()
}

/// Copies `out.len()` 32-bit words of tensor `id` from the `w`×`h` region at the
/// rectangle's origin, `n` per PE, row-major (copy mode), panicking on a host error.
pub fn d2h_into(
    rt: &mut cslsim::host::SdkRuntime,
    out: &mut [u32],
    id: u32,
    w: u32,
    h: u32,
    n: u32,
) {
    use cslsim::host::{Region, Transfer};
    if let Err(e) = rt.d2h(out, id, Region::new(0, 0, w, h, n), Transfer::COPY) {
        panic!("memcpy_d2h of {w}x{h}x{n} words: {e}");
    }
}

/// The 32-bit words of the exported tensor `name` on the `w`×`h` region at the
/// rectangle's origin, `n` per PE, row-major.
pub fn d2h_u32(rt: &mut cslsim::host::SdkRuntime, name: &str, w: u32, h: u32, n: u32) -> Vec<u32> {
    let id = match rt.get_id(name) {
        Ok(id) => id,
        Err(e) => panic!("no symbol `{name}`: {e}"),
    };
    let mut out = vec![0u32; (w * h * n) as usize];
    d2h_into(rt, &mut out, id, w, h, n);
    out
}

/// What [`launch_and_read`] runs: a program, where it is built, and what it reads back.
pub struct Run<'a> {
    /// The layout file, relative to the repository root.
    pub layout: &'a str,
    /// Target architecture.
    pub arch: Arch,
    /// Fabric dimensions (the rectangle sits at offsets 4,1).
    pub dims: (u32, u32),
    /// The function to launch.
    pub launch: &'a str,
    /// The exported array to read back.
    pub read: &'a str,
    /// The region read, from the rectangle's origin: width, height, and words per PE.
    pub region: (u32, u32, u32),
}

/// Compiles `r.layout` into a directory of its own under `tmp` (named `tag`), loads it,
/// launches `r.launch`, and returns the words of `r.read` (row-major, copy mode), panicking
/// with a clear message on any failure.
pub fn launch_and_read(r: &Run, tmp: &Path, tag: &str) -> Vec<u32> {
    let dir = tmp.join(format!("{tag}-{}", r.arch));
    compile_to(r.layout, r.arch, r.dims, &[], &dir);
    let mut rt = match cslsim::host::SdkRuntime::new(&dir) {
        Ok(rt) => rt,
        Err(e) => panic!("{}: cannot open the image: {e}", r.layout),
    };
    let step = |what: &str, res: Result<(), cslsim::host::HostError>| {
        if let Err(e) = res {
            panic!("{} on {}: {what}: {e}", r.layout, r.arch);
        }
    };
    step("load", rt.load());
    step("run", rt.run());
    step("launch", rt.launch(r.launch, &[], false));
    let (w, h, n) = r.region;
    let out = d2h_u32(&mut rt, r.read, w, h, n);
    step("stop", rt.stop());
    out
}

/// Copies the 32-bit words `data` into the exported tensor `name` of the `w`×`h` region at
/// the rectangle's origin, `n` per PE, row-major (copy mode), panicking on a host error.
pub fn h2d_u32(
    rt: &mut cslsim::host::SdkRuntime,
    name: &str,
    data: &[u32],
    w: u32,
    h: u32,
    n: u32,
) {
    use cslsim::host::{MemcpyDataType, MemcpyOrder, Region, Transfer};
    let id = match rt.get_id(name) {
        Ok(id) => id,
        Err(e) => panic!("no symbol `{name}`: {e}"),
    };
    let (ty, order) = (MemcpyDataType::Bit32, MemcpyOrder::RowMajor);
    if let Err(e) = rt.h2d(
        id,
        data,
        Region::new(0, 0, w, h, n),
        Transfer::COPY.data_type(ty).order(order),
    ) {
        panic!("memcpy_h2d of {w}x{h}x{n} words into `{name}`: {e}");
    }
}

/// The bytes of the first global of PE (`x`, `y`)'s class whose name `is_it` accepts, as
/// the simulator holds them; panics when the class has none.
pub fn global_bytes(
    sim: &cslsim::Simulator,
    image: &csl_arch::image::Image,
    (x, y): (u32, u32),
    is_it: impl Fn(&str) -> bool,
) -> Vec<u8> {
    let class = image.placement[(y * image.meta.width + x) as usize] as usize;
    let Some(g) = image.classes[class]
        .info
        .globals
        .iter()
        .find(|g| is_it(&g.name))
    else {
        panic!("no such global on PE ({x}, {y})");
    };
    let Some(pe) = sim.pe(x, y) else {
        panic!("no PE ({x}, {y}) in the simulator");
    };
    pe.memory()[g.addr as usize..(g.addr + g.size) as usize].to_vec()
}
