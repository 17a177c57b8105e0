//! Fuzz target: well-typed CSL programs generated from the fuzzer's bytes (grammar-aware),
//! so that most inputs get past parsing into comptime evaluation, type checking, the
//! optimiser, code generation and linking, where text mutation rarely reaches. The
//! program is a one-tile layout plus a tile file with globals, arrays, comptime
//! constants, helper functions, loops, conditionals and DSD operations over four integer
//! types and `f32`. Comptime errors the generator cannot rule out (an overflow, a
//! division by zero) are fine; a panic, abort or runaway is a finding.

#![no_main]

use arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use std::fmt::Write as _;

const TYPES: [&str; 5] = ["i16", "u16", "i32", "u32", "f32"];
const INT_OPS: [&str; 10] = ["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"];
const FLOAT_OPS: [&str; 4] = ["+", "-", "*", "/"];
const CMP: [&str; 6] = ["==", "!=", "<", "<=", ">", ">="];
/// Length of every generated array (and of the DSDs over them).
const N: usize = 8;

/// The names among `named` (name, type index) whose type is `t`.
fn of_type(named: &[(String, usize)], t: usize) -> Vec<String> {
    named
        .iter()
        .filter(|n| n.1 == t)
        .map(|n| n.0.clone())
        .collect()
}

struct Gen<'a, 'b> {
    u: &'a mut Unstructured<'b>,
    /// Scalars in scope: (name, type index), globals first.
    vars: Vec<(String, usize)>,
    /// Arrays: (name, type index), all `[N]T` globals.
    arrays: Vec<(String, usize)>,
    /// Helper functions: (name, type index of both parameters and the result).
    funcs: Vec<(String, usize)>,
    /// Comptime constants: (name, type index).
    consts: Vec<(String, usize)>,
    out: String,
    fresh: usize,
}

impl Gen<'_, '_> {
    fn name(&mut self, stem: &str) -> String {
        self.fresh += 1;
        format!("{stem}{}", self.fresh)
    }

    fn literal(&mut self, t: usize) -> Result<String> {
        Ok(match TYPES[t] {
            "f32" => {
                let v: i16 = self.u.arbitrary()?;
                format!("@as(f32, {}.{})", v / 16, v.unsigned_abs() % 10)
            }
            "i16" | "i32" => format!(
                "@as({}, {})",
                TYPES[t],
                i64::from(self.u.arbitrary::<i8>()?)
            ),
            _ => {
                let big: bool = self.u.arbitrary()?;
                let v: u32 = if big {
                    self.u.arbitrary::<u16>()?.into()
                } else {
                    self.u.int_in_range(0..=40)?
                };
                format!("@as({}, {v})", TYPES[t])
            }
        })
    }

    /// An expression of type `t`; `comptime_only` restricts it to literals and constants.
    fn expr(&mut self, t: usize, depth: u32, comptime_only: bool) -> Result<String> {
        if depth == 0 || self.u.ratio(1, 3)? {
            return self.leaf(t, comptime_only);
        }
        let float = TYPES[t] == "f32";
        Ok(match self.u.int_in_range(0..=5)? {
            0 if !comptime_only && !self.funcs.is_empty() => {
                let cands = of_type(&self.funcs, t);
                match cands.is_empty() {
                    true => self.leaf(t, comptime_only)?,
                    false => {
                        let f = self.u.choose(&cands)?.clone();
                        let a = self.expr(t, depth - 1, false)?;
                        let b = self.expr(t, depth - 1, false)?;
                        format!("{f}({a}, {b})")
                    }
                }
            }
            1 => {
                // A cast from another type.
                let s = self.u.int_in_range(0..=TYPES.len() - 1)?;
                let inner = self.expr(s, depth - 1, comptime_only)?;
                if float || TYPES[s] == "f32" || self.u.ratio(1, 2)? {
                    format!("@as({}, {inner})", TYPES[t])
                } else if TYPES[s].ends_with("16") == TYPES[t].ends_with("16") {
                    format!("@bitcast({}, {inner})", TYPES[t])
                } else {
                    format!("@as({}, {inner})", TYPES[t])
                }
            }
            2 => {
                let c = self.cond(depth - 1, comptime_only)?;
                let a = self.expr(t, depth - 1, comptime_only)?;
                let b = self.expr(t, depth - 1, comptime_only)?;
                format!("(if ({c}) {a} else {b})")
            }
            _ => {
                let a = self.expr(t, depth - 1, comptime_only)?;
                let op = if float {
                    *self.u.choose(&FLOAT_OPS)?
                } else {
                    *self.u.choose(&INT_OPS)?
                };
                let b = if op == "<<" || op == ">>" {
                    let sh = if TYPES[t].ends_with("16") {
                        "u16"
                    } else {
                        "u32"
                    };
                    format!("@as({sh}, {})", self.u.int_in_range(0..=15)?)
                } else {
                    self.expr(t, depth - 1, comptime_only)?
                };
                format!("({a} {op} {b})")
            }
        })
    }

    fn leaf(&mut self, t: usize, comptime_only: bool) -> Result<String> {
        let mut cands: Vec<String> = self
            .consts
            .iter()
            .filter(|c| c.1 == t)
            .map(|c| c.0.clone())
            .collect();
        if !comptime_only {
            cands.extend(self.vars.iter().filter(|v| v.1 == t).map(|v| v.0.clone()));
            for (a, _) in self.arrays.iter().filter(|a| a.1 == t) {
                cands.push(format!("{a}[{}]", self.u.int_in_range(0..=N - 1)?));
            }
        }
        if cands.is_empty() || self.u.ratio(1, 3)? {
            self.literal(t)
        } else {
            Ok(self.u.choose(&cands)?.clone())
        }
    }

    fn cond(&mut self, depth: u32, comptime_only: bool) -> Result<String> {
        let t = self.u.int_in_range(0..=TYPES.len() - 1)?;
        let a = self.expr(t, depth, comptime_only)?;
        let b = self.expr(t, depth, comptime_only)?;
        let op = self.u.choose(&CMP)?;
        Ok(format!("{a} {op} {b}"))
    }

    fn stmt(&mut self, indent: usize, depth: u32) -> Result<()> {
        let pad = " ".repeat(indent);
        match self.u.int_in_range(0..=7)? {
            0 if depth > 0 => {
                let c = self.cond(2, false)?;
                let _ = writeln!(self.out, "{pad}if ({c}) {{");
                self.block(indent + 2, depth - 1)?;
                let _ = writeln!(self.out, "{pad}}} else {{");
                self.block(indent + 2, depth - 1)?;
                let _ = writeln!(self.out, "{pad}}}");
            }
            1 if depth > 0 && !self.arrays.is_empty() => {
                let i = self.name("i");
                let (a, t) = self.u.choose(&self.arrays)?.clone();
                let _ = writeln!(self.out, "{pad}for (@range(i16, {N})) |{i}| {{");
                self.vars.push((i.clone(), 0));
                let e = self.expr(t, 2, false)?;
                let _ = writeln!(self.out, "{pad}  {a}[{i}] = {e};");
                self.vars.pop();
                let _ = writeln!(self.out, "{pad}}}");
            }
            2 if depth > 0 => {
                let k = self.name("k");
                let lim = self.u.int_in_range(0..=5)?;
                let _ = writeln!(
                    self.out,
                    "{pad}var {k}: u16 = 0;\n{pad}while ({k} < {lim}) : ({k} += 1) {{"
                );
                self.block(indent + 2, depth - 1)?;
                let _ = writeln!(self.out, "{pad}}}");
            }
            3 if !self.arrays.is_empty() => self.dsd_op(&pad)?,
            4 => {
                let t = self.u.int_in_range(0..=TYPES.len() - 1)?;
                let v = self.name("l");
                let e = self.expr(t, 3, false)?;
                let _ = writeln!(self.out, "{pad}var {v}: {} = {e};", TYPES[t]);
                self.vars.push((v, t));
            }
            _ => {
                let globals: Vec<(String, usize)> = self
                    .vars
                    .iter()
                    .filter(|v| v.0.starts_with('g'))
                    .cloned()
                    .collect();
                if globals.is_empty() {
                    return Ok(());
                }
                let (g, t) = self.u.choose(&globals)?.clone();
                let e = self.expr(t, 3, false)?;
                let _ = writeln!(self.out, "{pad}{g} = {e};");
            }
        }
        Ok(())
    }

    fn block(&mut self, indent: usize, depth: u32) -> Result<()> {
        let scope = self.vars.len();
        for _ in 0..self.u.int_in_range(1..=4)? {
            self.stmt(indent, depth)?;
        }
        self.vars.truncate(scope);
        Ok(())
    }

    /// A DSD operation over whole arrays of one type.
    fn dsd_op(&mut self, pad: &str) -> Result<()> {
        let t = self.u.choose(&self.arrays)?.1;
        let same = of_type(&self.arrays, t);
        let ops: &[&str] = match TYPES[t] {
            "f32" => &["@fadds", "@fsubs", "@fmuls", "@fmovs"],
            "i16" | "u16" => &["@add16", "@sub16", "@mov16", "@and16", "@or16", "@xor16"],
            _ => &["@mov32"],
        };
        let op = *self.u.choose(ops)?;
        let dsd = |g: &mut Self| -> Result<String> {
            let a = g.u.choose(&same)?.clone();
            let stride = *g.u.choose(&[1usize, 2])?;
            Ok(format!(
                "@get_dsd(mem1d_dsd, .{{ .tensor_access = |i|{{{}}} -> {a}[i * {stride}] }})",
                N / stride
            ))
        };
        let d = dsd(self)?;
        let len = if d.contains("* 2]") { N / 2 } else { N };
        let fix = |s: String| {
            s.replace(&format!("|i|{{{}}}", N / 2), &format!("|i|{{{len}}}"))
                .replace(&format!("|i|{{{N}}}"), &format!("|i|{{{len}}}"))
        };
        let s1 = fix(dsd(self)?);
        if op.contains("mov") {
            let src = if self.u.ratio(1, 3)? {
                self.literal(t)?
            } else {
                s1
            };
            let _ = writeln!(self.out, "{pad}{op}({d}, {src});");
        } else {
            let s2 = if self.u.ratio(1, 3)? {
                self.literal(t)?
            } else {
                fix(dsd(self)?)
            };
            let _ = writeln!(self.out, "{pad}{op}({d}, {s1}, {s2});");
        }
        Ok(())
    }

    fn program(&mut self) -> Result<String> {
        self.out.push_str("param memcpy_params: comptime_struct;\nconst sys_mod = @import_module(\"<memcpy/memcpy>\", memcpy_params);\n");
        for _ in 0..self.u.int_in_range(0..=3)? {
            let t = self.u.int_in_range(0..=TYPES.len() - 1)?;
            let c = self.name("K");
            let e = self.expr(t, 4, true)?;
            let _ = writeln!(self.out, "const {c}: {} = {e};", TYPES[t]);
            self.consts.push((c, t));
        }
        for _ in 0..self.u.int_in_range(1..=4)? {
            let t = self.u.int_in_range(0..=TYPES.len() - 1)?;
            let g = self.name("g");
            let e = self.literal(t)?;
            let _ = writeln!(self.out, "var {g}: {} = {e};", TYPES[t]);
            self.vars.push((g, t));
        }
        for _ in 0..self.u.int_in_range(0..=3)? {
            let t = self.u.int_in_range(0..=TYPES.len() - 1)?;
            let a = self.name("arr");
            let _ = writeln!(self.out, "var {a} = @zeros([{N}]{});", TYPES[t]);
            self.arrays.push((a, t));
        }
        for _ in 0..self.u.int_in_range(0..=2)? {
            let t = self.u.int_in_range(0..=TYPES.len() - 1)?;
            let f = self.name("f");
            let ty = TYPES[t];
            let _ = writeln!(self.out, "fn {f}(a: {ty}, b: {ty}) {ty} {{");
            let scope = self.vars.len();
            self.vars.push(("a".into(), t));
            self.vars.push(("b".into(), t));
            self.block(2, 2)?;
            let e = self.expr(t, 3, false)?;
            let _ = writeln!(self.out, "  return {e};\n}}");
            self.vars.truncate(scope);
            self.funcs.push((f, t));
        }
        self.out.push_str("fn go() void {\n");
        self.block(2, 3)?;
        self.out
            .push_str("  sys_mod.unblock_cmd_stream();\n}\ncomptime {\n  @export_symbol(go);\n}\n");
        Ok(std::mem::take(&mut self.out))
    }
}

const LAYOUT: &str =
    "const memcpy = @import_module(\"<memcpy/get_params>\", .{ .width = 1, .height = 1 });
layout {
  @set_rectangle(1, 1);
  @set_tile_code(0, 0, \"pe.csl\", .{ .memcpy_params = memcpy.get_params(0) });
  @export_name(\"go\", fn() void);
}
";

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let mut g = Gen {
        u: &mut u,
        vars: Vec::new(),
        arrays: Vec::new(),
        funcs: Vec::new(),
        consts: Vec::new(),
        out: String::new(),
        fresh: 0,
    };
    let Ok(pe) = g.program() else {
        return;
    };
    if std::env::var_os("GEN_CSL_PRINT").is_some() {
        println!("{pe}");
    }
    // In-memory files at a path that does not exist: imports find them in the source map.
    let mut sources = cslc::source::SourceMap::new();
    let top = sources.add(
        "layout.csl".into(),
        Some("/fuzz-gen/layout.csl".into()),
        LAYOUT.into(),
    );
    sources.add("pe.csl".into(), Some("/fuzz-gen/pe.csl".into()), pe);
    let opts = cslc::driver::Options {
        arch: csl_arch::Arch::Wse2,
        fabric_dims: (8, 3),
        fuel: 50_000,
        ..cslc::driver::Options::default()
    };
    let c = cslc::driver::compile_sources(sources, top, &opts);
    if std::env::var_os("GEN_CSL_PRINT").is_some() {
        for d in &c.diagnostics {
            println!("{}", d.message);
        }
    }
});
