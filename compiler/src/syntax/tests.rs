//! Parser tests: whole programs, AST shapes (printed as S-expressions), error recovery
//! and a property test that no input makes the front end panic.

use super::ast::*;
use super::parse;
use super::token::{KEYWORDS, Token};
use crate::diag::{Diagnostic, render_all};
use crate::source::SourceMap;
use proptest::prelude::*;

// ---- an S-expression printer for checking tree shapes ----

struct Printer<'a> {
    ast: &'a Ast,
}

impl Printer<'_> {
    fn e(&self, id: ExprId) -> String {
        let list = |ids: &[ExprId]| ids.iter().map(|&i| self.e(i)).collect::<Vec<_>>().join(" ");
        let init = |l: &InitList| match l {
            InitList::Fields(fs) => fs
                .iter()
                .map(|f| format!("(.{} {})", f.name.name, self.e(f.value)))
                .collect::<Vec<_>>()
                .join(" "),
            InitList::Elems(es) => list(es),
        };
        let k = &self.ast.exprs[id].kind;
        match k {
            ExprKind::Int(v) => v.to_string(),
            ExprKind::Float(v) => format!("{v:?}"),
            ExprKind::Str(s) => format!("{s:?}"),
            ExprKind::Bool(b) => b.to_string(),
            ExprKind::Ident(n) => n.to_string(),
            ExprKind::Builtin { name, args } => format!("(@{} {})", name.name, list(args)),
            ExprKind::Unary { op, operand } => format!("({op:?} {})", self.e(*operand)),
            ExprKind::Binary { op, lhs, rhs } => {
                format!("({} {} {})", op.symbol(), self.e(*lhs), self.e(*rhs))
            }
            ExprKind::Call { callee, args } => format!("(call {} {})", self.e(*callee), list(args)),
            ExprKind::Index { base, indices } => {
                format!("(index {} {})", self.e(*base), list(indices))
            }
            ExprKind::Field { base, name } => format!("(. {} {})", self.e(*base), name.name),
            ExprKind::Deref(b) => format!("(deref {})", self.e(*b)),
            ExprKind::AnonInit(l) => format!("(anon {})", init(l)),
            ExprKind::TypedInit { ty, init: l } => format!("(init {} {})", self.e(*ty), init(l)),
            ExprKind::If {
                cond,
                then,
                otherwise,
            } => {
                format!(
                    "(if {} {} {})",
                    self.e(*cond),
                    self.e(*then),
                    self.e(*otherwise)
                )
            }
            ExprKind::Switch { scrutinee, cases } => {
                let cases: Vec<String> = cases
                    .iter()
                    .map(|c| {
                        let items: Vec<String> = c
                            .items
                            .iter()
                            .map(|i| match i {
                                SwitchItem::Value(v) => self.e(*v),
                                SwitchItem::Range(a, b) => {
                                    format!("{}...{}", self.e(*a), self.e(*b))
                                }
                            })
                            .collect();
                        let items = if items.is_empty() {
                            "else".to_string()
                        } else {
                            items.join(" ")
                        };
                        format!("({items} => {})", self.e(c.body))
                    })
                    .collect();
                format!("(switch {} {})", self.e(*scrutinee), cases.join(" "))
            }
            ExprKind::Block(b) => self.block(b),
            ExprKind::Comptime(e) => format!("(comptime {})", self.e(*e)),
            ExprKind::ArrayType { dims, elem } => {
                format!("(array [{}] {})", list(dims), self.e(*elem))
            }
            ExprKind::PtrType { is_const, elem } | ExprKind::ManyPtrType { is_const, elem } => {
                let many = if matches!(k, ExprKind::ManyPtrType { .. }) {
                    "many-"
                } else {
                    ""
                };
                let c = if *is_const { "-const" } else { "" };
                format!("({many}ptr{c} {})", self.e(*elem))
            }
            ExprKind::FnType { params, ret } => {
                format!("(fn-type [{}] {})", list(params), self.e(*ret))
            }
            ExprKind::TaskType { params, ret } => {
                format!("(task-type [{}] {})", list(params), self.e(*ret))
            }
            ExprKind::StructType(fields) => {
                let fs: Vec<String> = fields
                    .iter()
                    .map(|f| match f.default {
                        Some(d) => format!("({} {} {})", f.name.name, self.e(f.ty), self.e(d)),
                        None => format!("({} {})", f.name.name, self.e(f.ty)),
                    })
                    .collect();
                format!("(struct {})", fs.join(" "))
            }
            ExprKind::EnumType { tag, members } => {
                let ms: Vec<String> = members
                    .iter()
                    .map(|m| match m.value {
                        Some(v) => format!("({} {})", m.name.name, self.e(v)),
                        None => m.name.name.to_string(),
                    })
                    .collect();
                format!(
                    "(enum {} {})",
                    tag.map_or("_".to_string(), |t| self.e(t)),
                    ms.join(" ")
                )
            }
            ExprKind::TensorAccess {
                vars,
                extents,
                access,
            } => {
                let vs: Vec<&str> = vars.iter().map(|v| v.name.as_str()).collect();
                format!(
                    "(tensor [{}] [{}] {})",
                    vs.join(" "),
                    list(extents),
                    self.e(*access)
                )
            }
            ExprKind::Error => "<error>".to_string(),
        }
    }

    fn block(&self, b: &Block) -> String {
        let stmts: Vec<String> = b.stmts.iter().map(|s| self.s(s)).collect();
        match &b.label {
            Some(l) => format!("({}: {{{}}})", l.name, stmts.join(" ")),
            None => format!("{{{}}}", stmts.join(" ")),
        }
    }

    fn var(&self, v: &VarDecl) -> String {
        let mut s = format!("({:?} {:?} {}", v.linkage, v.mutability, v.name.name);
        for (tag, part) in [
            ("ty", v.ty),
            ("align", v.align),
            ("section", v.linksection),
            ("linkname", v.linkname),
            ("=", v.init),
        ] {
            if let Some(e) = part {
                s.push_str(&format!(" {tag} {}", self.e(e)));
            }
        }
        s.push(')');
        s
    }

    fn s(&self, s: &Stmt) -> String {
        let label = |l: &Option<Ident>| {
            l.as_ref()
                .map_or(String::new(), |l| format!("{}: ", l.name))
        };
        match &s.kind {
            StmtKind::Local(v) => self.var(v),
            StmtKind::Expr(e) => format!("{};", self.e(*e)),
            StmtKind::Assign { op, target, value } => {
                let op = match op {
                    AssignOp::Assign => "=".to_string(),
                    AssignOp::Compound(b) => format!("{}=", b.symbol()),
                };
                format!("({op} {} {})", self.e(*target), self.e(*value))
            }
            StmtKind::If {
                cond,
                then,
                otherwise,
            } => match otherwise {
                Some(o) => format!(
                    "(if {} {} else {})",
                    self.e(*cond),
                    self.block(then),
                    self.block(o)
                ),
                None => format!("(if {} {})", self.e(*cond), self.block(then)),
            },
            StmtKind::While {
                label: l,
                cond,
                cont,
                body,
            } => {
                let cont = cont
                    .as_ref()
                    .map_or(String::new(), |c| format!(" : {}", self.s(c)));
                format!(
                    "({}while {}{cont} {})",
                    label(l),
                    self.e(*cond),
                    self.block(body)
                )
            }
            StmtKind::For {
                label: l,
                iter,
                capture,
                index,
                body,
            } => {
                let idx = index
                    .as_ref()
                    .map_or(String::new(), |i| format!(", {}", i.name));
                format!(
                    "({}for {} |{}{idx}| {})",
                    label(l),
                    self.e(*iter),
                    capture.name,
                    self.block(body)
                )
            }
            StmtKind::Break { label: l, value } => {
                let l = l
                    .as_ref()
                    .map_or(String::new(), |l| format!(" :{}", l.name));
                let v = value.map_or(String::new(), |v| format!(" {}", self.e(v)));
                format!("(break{l}{v})")
            }
            StmtKind::Continue { label: l } => {
                format!(
                    "(continue{})",
                    l.as_ref()
                        .map_or(String::new(), |l| format!(" :{}", l.name))
                )
            }
            StmtKind::Return(v) => format!(
                "(return{})",
                v.map_or(String::new(), |v| format!(" {}", self.e(v)))
            ),
            StmtKind::Block(b) => self.block(b),
            StmtKind::Comptime(b) => format!("(comptime {})", self.block(b)),
            StmtKind::Error => "<error>".to_string(),
        }
    }

    fn params(&self, ps: &[FnParam]) -> String {
        ps.iter()
            .map(|p| {
                let ty = p.ty.map_or("anytype".to_string(), |t| self.e(t));
                format!(
                    "{}{}: {ty}",
                    if p.is_comptime { "comptime " } else { "" },
                    p.name.name
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn d(&self, d: &Decl) -> String {
        match &d.kind {
            DeclKind::Param { name, ty, default } => format!(
                "(param {}{}{})",
                name.name,
                ty.map_or(String::new(), |t| format!(" ty {}", self.e(t))),
                default.map_or(String::new(), |t| format!(" = {}", self.e(t)))
            ),
            DeclKind::Var(v) => self.var(v),
            DeclKind::Fn(f) => format!(
                "({:?}{} fn {}({}){} {} {})",
                f.linkage,
                if f.is_inline { " inline" } else { "" },
                f.name.name,
                self.params(&f.params),
                f.linkname
                    .map_or(String::new(), |l| format!(" linkname {}", self.e(l))),
                self.e(f.ret),
                f.body.as_ref().map_or(";".to_string(), |b| self.block(b))
            ),
            DeclKind::Task(t) => format!(
                "(task {}({}) {} {})",
                t.name.name,
                self.params(&t.params),
                t.ret.map_or("_".to_string(), |r| self.e(r)),
                self.block(&t.body)
            ),
            DeclKind::Comptime(b) => format!("(comptime {})", self.block(b)),
            DeclKind::Layout(b) => format!("(layout {})", self.block(b)),
            DeclKind::Error => "<error>".to_string(),
        }
    }
}

/// Parses and renders the diagnostics (empty string if none).
fn parse_and_render(text: &str) -> (Ast, Vec<Diagnostic>, String) {
    let mut sources = SourceMap::new();
    let id = sources.add("test.csl".to_string(), None, text.to_string());
    let (ast, diags) = parse(id, text);
    let rendered = render_all(&diags, &sources, false);
    (ast, diags, rendered)
}

/// Parses a program that must be free of errors and prints its declarations.
fn ok(text: &str) -> Vec<String> {
    let (ast, diags, rendered) = parse_and_render(text);
    assert!(diags.is_empty(), "unexpected diagnostics:\n{rendered}");
    let p = Printer { ast: &ast };
    ast.decls.iter().map(|d| p.d(d)).collect()
}

/// Parses `const x = <expr>;` and prints the expression.
fn expr(src: &str) -> String {
    let decls = ok(&format!("const x = {src};"));
    let d = decls.first().cloned().unwrap_or_default();
    d.strip_prefix("(Internal Const x = ")
        .and_then(|s| s.strip_suffix(')'))
        .unwrap_or(&d)
        .to_string()
}

/// Parses `fn f() void { <stmts> }` and prints the body.
fn body(src: &str) -> String {
    let decls = ok(&format!("fn f() void {{ {src} }}"));
    let d = decls.first().cloned().unwrap_or_default();
    d.strip_prefix("(Internal fn f() void ")
        .and_then(|s| s.strip_suffix(')'))
        .unwrap_or(&d)
        .to_string()
}

/// The codes of the diagnostics for `text`, in order.
fn codes_of(text: &str) -> Vec<&'static str> {
    let (_, diags, _) = parse_and_render(text);
    diags.iter().map(|d| d.code).collect()
}

// ---- whole programs ----

const GEMV: &str = r#"
param memcpy_params: comptime_struct;
param M: i16;
param N: i16;
const sys_mod = @import_module("<memcpy/memcpy>", memcpy_params);
var A: [M*N]f32 = @zeros([M*N]f32);
var y: [M]f32;
var y_ptr: [*]f32 = &y;
fn gemv() void {
  for (@range(i16, M)) |i| {
    var tmp: f32 = 0.0;
    for (@range(i16, N)) |j| { tmp += A[i*N + j] * x[j]; }
    y[i] = tmp + b[i];
  }
}
fn compute() void { gemv(); sys_mod.unblock_cmd_stream(); }
comptime {
  @export_symbol(y_ptr, "y");
  @export_symbol(compute);
}
"#;

const LAYOUT: &str = r#"
const memcpy = @import_module("<memcpy/get_params>", .{ .width = 1, .height = 1 });
layout {
  @set_rectangle(1, 1);
  @set_tile_code(0, 0, "pe_program.csl", .{ .memcpy_params = memcpy.get_params(0), .M = 4, .N = 6 });
  @export_name("y", [*]f32, true);
  @export_name("compute", fn()void);
}
"#;

/// Structs, enums, switch, labelled blocks, tensor access, while with continue, for with
/// index, generics, pointers and the storage-class forms.
const KITCHEN_SINK: &str = r#"
//! A file that uses most of the syntax.
param width: i16 = 4;
param USER_IN_1 = {};
param f_callback: fn ()void;
const Color = enum(u16) { red, white = 4, blue, };
const Point = struct { x: i16, y: f32 = 1.5, };
const origin = Point{ .x = 0, .y = 0.0 };
const table = [3]i16{ 1, 2, 3 };
const grid: [2, 2]f32 = @zeros([2, 2]f32);
export var counter: u32 align(4) linksection(".data") linkname("ctr") = 0;
extern var ext_buf: [*]const u16;
extern fn ext_fn(i16, f32) linkname("ext") void;
export inline fn twice(comptime T: type, x: anytype) @type_of(x) { return x + x; }
var fp: *const fn(i16, f32) f32 = &foo;
const dsd = @get_dsd(mem1d_dsd, .{ .tensor_access = |i|{width} -> table[i * 2 + 1] });
const dsd2 = @get_dsd(mem4d_dsd, .{ .tensor_access = |i, j,|{2, 2,} -> grid[i, j,] });
fn Pair(comptime T: type) type { return struct { a: T, b: T }; }
task recv(data: u16, index: u16) void {
  const c: Color = @as(Color, data);
  switch (c) {
    Color.red, Color.blue => counter += 1,
    Color.white => { counter = 0; },
    else => {},
  }
  const v = switch (index) { 0 => 1, 1...5 => 2, else => 3 };
  const w = blk: {
    if (v > 1) break :blk v * 2;
    break :blk 0;
  };
  var i: u16 = 0;
  outer: while (i < 10) : (i += 1) {
    if (i % 2 == 0) continue;
    if (i == 7) { break :outer; } else if (i == 8) continue :outer; else { i += 0; }
    comptime var k = 0;
    k = k + 1;
  }
  for (table) |elem, idx| {
    ext_buf[idx] = @as(u16, elem);
  }
  var p: *i16 = &origin.x;
  p.* = -p.* + ~w & (1 << 3);
  var q = ptr.*[2];
  const r = if (w != 0 and !(v == 1) or true) 'a' else '\n';
  @activate(recv_id);
  comptime { @comptime_assert(width > 0); };
  {}
  return;
}
comptime {
  @bind_data_task(recv, @get_data_task_id(@get_color(0)));
}
"#;

#[test]
fn gemv_program() {
    let decls = ok(GEMV);
    assert_eq!(decls.len(), 10);
    assert_eq!(
        decls[4],
        "(Internal Var A ty (array [(* M N)] f32) = (@zeros (array [(* M N)] f32)))"
    );
    assert_eq!(
        decls[6],
        "(Internal Var y_ptr ty (many-ptr f32) = (AddrOf y))"
    );
    assert_eq!(
        decls[7],
        "(Internal fn gemv() void {(for (@range i16 M) |i| {(Internal Var tmp ty f32 = 0.0) \
         (for (@range i16 N) |j| {(+= tmp (* (index A (+ (* i N) j)) (index x j)))}) \
         (= (index y i) (+ tmp (index b i)))})})"
    );
}

#[test]
fn layout_program() {
    let decls = ok(LAYOUT);
    assert_eq!(decls.len(), 2);
    assert!(
        decls[1].contains("(@export_name \"compute\" (fn-type [] void))"),
        "{}",
        decls[1]
    );
    assert!(
        decls[1].contains("(@export_name \"y\" (many-ptr f32) true)"),
        "{}",
        decls[1]
    );
}

#[test]
fn kitchen_sink_program() {
    let decls = ok(KITCHEN_SINK);
    let all = decls.join("\n");
    for needle in [
        "(param USER_IN_1 = {})",
        "(param f_callback ty (fn-type [] void))",
        "(enum u16 red (white 4) blue)",
        "(struct (x i16) (y f32 1.5))",
        "(init Point (.x 0) (.y 0.0))",
        "(init (array [3] i16) 1 2 3)",
        "(array [2 2] f32)",
        "(Export Var counter ty u32 align 4 section \".data\" linkname \"ctr\" = 0)",
        "(Extern Var ext_buf ty (many-ptr-const u16))",
        "(Extern fn ext_fn(_: i16, _: f32) linkname \"ext\" void ;)",
        "(Export inline fn twice(comptime T: type, x: anytype) (@type_of x)",
        "(ptr-const (fn-type [i16 f32] f32))",
        "(tensor [i] [width] (index table (+ (* i 2) 1)))",
        "(tensor [i j] [2 2] (index grid i j))",
        "(return (struct (a T) (b T)))",
        "(task recv(data: u16, index: u16) void",
        "((. Color red) (. Color blue) => {(+= counter 1)})",
        "((. Color white) => {(= counter 0)})",
        "(else => {})",
        "(switch index (0 => 1) (1...5 => 2) (else => 3))",
        "(blk: {(if (> v 1) {(break :blk (* v 2))}) (break :blk 0)})",
        "(outer: while (< i 10) : (+= i 1) {",
        "(if (== (% i 2) 0) {(continue)})",
        "(if (== i 7) {(break :outer)} else {(if (== i 8) {(continue :outer)} else {(+= i 0)})})",
        "(Internal ComptimeVar k = 0)",
        "(for table |elem, idx| {(= (index ext_buf idx) (@as u16 elem))})",
        "(Internal Var p ty (ptr i16) = (AddrOf (. origin x)))",
        "(= (deref p) (& (+ (Neg (deref p)) (BitNot w)) (<< 1 3)))",
        "(index (deref ptr) 2)",
        "(if (or (and (!= w 0) (Not (== v 1))) true) 97 10)",
        "(@activate recv_id);",
        "(comptime {(@comptime_assert (> width 0));})",
        "{} (return)",
    ] {
        assert!(all.contains(needle), "missing {needle} in\n{all}");
    }
}

#[test]
fn spec_layout_example() {
    // The layout example from the language reference (section 10).
    ok(r#"
param cols: i16;                                   // e.g. cslc --params=cols:4
const mc = @import_module("<memcpy/get_params>", .{ .width = cols, .height = 1 });
const c0: color = @get_color(0);
layout {
  @set_rectangle(cols, 1);
  for (@range(i16, cols)) |px| {
    @set_tile_code(px, 0, "kernel.csl", .{ .memcpy_params = mc.get_params(px), .K = 8 });
    const r = if (px == 0) .{ .rx = .{RAMP}, .tx = .{EAST} } else .{ .rx = .{WEST}, .tx = .{RAMP} };
    @set_color_config(px, 0, c0, .{ .routes = r });
  }
  @export_name("out", [*]f32, false);
  @export_name("go", fn()void);
}
"#);
}

#[test]
fn spec_snippets() {
    // Idioms quoted in the language reference and library notes.
    ok(r#"
param RXACT_X: color = @get_color(15);
const S = struct { a: i16, b: f32 };
const s = S{ .a = 1, .b = 2.0 };
const dirs = [2]direction{WEST, RAMP};
var fp: *const fn(i16, f32) f32 = foo;
fn f(x: anytype, y: @type_of(x)) @type_of(x) { return x; }
fn P(comptime T: type) type { return struct { t: T }; }
fn read() u16 { return @bitcast(*u16, addr).*; }
param X: *[ARRAY_LEN]tensor_type;
const tally = @import_module("<kernels/tally/pe>",
  @concat_structs(tally_params, .{
    .output_queues=[2]u16{4, 5}, // a trailing comma
  }));
const ns_mdsd = @get_dsd(mem1d_dsd, .{.tensor_access=|i|{1}->stage_ns[i]});
fn fft(f: *[N]tensor_type) void {
  while (offset < N) : (offset += stride) {
    c1a = (f.*)[offset];
    @fmach(imag_dstDSD, imag_dstDSD, real_srcDSD, -c1b);
    baseA = 0;baseB = 0;
  }
}
fn sel() void { switch(@as(mode, select)) { mode.send => @activate(a), mode.recv => @block(b), } }
comptime {
  @set_local_color_config(c, .{ .routes = .{ .rx = .{ WEST }, .tx = .{ RAMP } },
    .switches = .{ .pos1 = .{ .rx = EAST }, .ring_mode = true, .pop_mode = .{ .always_pop = true } } });
  @initialize_queue(@get_input_queue(2), .{ .color = c });
  const cfg = @get_config(@get_config_addr(0));
  @field(s, "a") = 3;
}
"#);
}

// ---- expression shapes and precedence ----

/// Every case of `parse_cases.txt` (expressions, operator precedence, literals, types,
/// initialisers, statements with dangling `else` and loop bodies) prints the tree it lists.
#[test]
fn parses_every_listed_case() {
    let mut failures = Vec::new();
    for (n, line) in include_str!("parse_cases.txt").lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (kind, rest) = line
            .split_once(": ")
            .expect("a case starts with `expr: ` or `body: `");
        let (src, want) = rest.split_once(" ==> ").expect("a case has ` ==> `");
        let got = match kind {
            "expr" => expr(src),
            "body" => body(src),
            _ => panic!("line {}: unknown case kind {kind}", n + 1),
        };
        if got != want {
            failures.push(format!(
                "line {}: {src}\n  want {want}\n  got  {got}",
                n + 1
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_assignment_operator() {
    let b = body(
        "a = 1; a += 1; a -= 1; a *= 1; a /= 1; a %= 1; a <<= 1; a >>= 1; a &= 1; a |= 1; a ^= 1;",
    );
    assert_eq!(
        b,
        "{(= a 1) (+= a 1) (-= a 1) (*= a 1) (/= a 1) (%= a 1) (<<= a 1) (>>= a 1) (&= a 1) (|= a 1) (^= a 1)}"
    );
}

#[test]
fn spans_cover_the_source() {
    let text = "const x = a + b * c;";
    let (ast, diags, _) = parse_and_render(text);
    assert!(diags.is_empty());
    let Some(Decl {
        kind: DeclKind::Var(v),
        span,
    }) = ast.decls.first()
    else {
        panic!("no var")
    };
    assert_eq!((span.start, span.end), (0, 20));
    let init = v.init.expect("init");
    let e = &ast.exprs[init];
    assert_eq!(
        &text[e.span.start as usize..e.span.end as usize],
        "a + b * c"
    );
    assert_eq!(
        &text[v.name.span.start as usize..v.name.span.end as usize],
        "x"
    );
}

// ---- errors and recovery ----

#[test]
fn recovers_at_statements_and_declarations() {
    let text = "fn f() void {\n  x = ;\n  y = 1 +;\n  ok();\n}\nconst a = ;\nconst b = 2;\n";
    let (ast, diags, rendered) = parse_and_render(text);
    assert_eq!(diags.len(), 3, "{rendered}");
    assert!(diags.iter().all(|d| d.code == "E0004"), "{rendered}");
    let p = Printer { ast: &ast };
    let decls: Vec<String> = ast.decls.iter().map(|d| p.d(d)).collect();
    assert_eq!(decls.len(), 3, "{decls:?}");
    assert!(decls[0].contains("(call ok );"), "{decls:?}");
    assert_eq!(decls[2], "(Internal Const b = 2)");
}

#[test]
fn error_codes() {
    assert_eq!(codes_of("const x = $;"), ["E0001"]);
    assert_eq!(codes_of("const x = 1; $"), ["E0001"]);
    assert_eq!(codes_of("const s = \"abc;\n"), ["E0002"]);
    assert_eq!(codes_of("const c = 'a;\n"), ["E0002"]);
    assert_eq!(codes_of("const s = \"a\\qb\";"), ["E0007"]);
    assert_eq!(codes_of("const n = 0x;"), ["E0003"]);
    assert_eq!(codes_of("const n = 1\nconst m = 2;"), ["E0004"]);
    assert_eq!(codes_of("fn f() void {\n  g();\n"), ["E0006"]);
    assert_eq!(codes_of("fn f() void {}\n}\n"), ["E0006"]);
    assert_eq!(codes_of("const x = 1"), ["E0005"]);
}

#[test]
fn labels_point_at_the_right_place() {
    let (_, diags, rendered) = parse_and_render("fn f() void {\n  g(1, 2;\n}\n");
    assert_eq!(diags.len(), 1, "{rendered}");
    assert!(rendered.contains("unexpected token ';'"), "{rendered}");
    assert!(rendered.contains("expected ')' or ','"), "{rendered}");

    let (_, _, rendered) = parse_and_render("const a = 1\nconst b = 2;\n");
    assert!(rendered.contains("missing ';'"), "{rendered}");
    assert!(rendered.contains("test.csl:1:"), "{rendered}");

    let (_, _, rendered) = parse_and_render("fn f() void {\n  if (x) {\n    g();\n  }\n");
    assert!(rendered.contains("this '{' is never closed"), "{rendered}");
    assert!(rendered.contains("test.csl:1:13"), "{rendered}");
}

// ---- robustness ----

/// Fragments that random inputs are built from (with [`KEYWORDS`]): CSL punctuation,
/// names and literals.
const PIECES: &[&str] = &[
    "(", ")", "[", "]", "{", "}", "[*]", ",", ";", ":", ".", ".*", "...", "=>", "->", "+", "-",
    "*", "/", "%", "<<", ">>", "&", "|", "^", "~", "!", "==", "!=", "<", "<=", ">", ">=", "=",
    "+=", "<<=", "x", "_", "blk", "@f", "@", "0", "0x1f", "1.5", "1e-5", "0x", "12ab", "'a'", "'",
    "\"s\"", "\"", "\"\\q\"", "\\", "$", "#", "λ", "//c\n", "\n", " ",
];

/// [`PIECES`] and every keyword.
fn pieces() -> Vec<&'static str> {
    PIECES.iter().chain(KEYWORDS).copied().collect()
}

#[test]
fn every_keyword_lexes_as_one_keyword_token() {
    for kw in KEYWORDS {
        let (tokens, errors) = crate::syntax::lexer::tokenize(kw);
        assert!(errors.is_empty(), "{kw}");
        assert_eq!(tokens.len(), 1, "{kw}");
        assert!(
            !matches!(tokens[0].1, Token::Ident(_)),
            "`{kw}` lexes as an identifier"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn never_panics_on_ascii(text in "[ -~\\t\\n]{0,200}") {
        let _ = parse_and_render(&text);
    }

    #[test]
    fn never_panics_on_token_soup(pieces in proptest::collection::vec(proptest::sample::select(pieces()), 0..80)) {
        let text: String = pieces.join(" ");
        let _ = parse_and_render(&text);
        let glued: String = pieces.concat();
        let _ = parse_and_render(&glued);
    }

    #[test]
    fn never_panics_on_damaged_programs(cut in 0usize..2000, len in 0usize..40, junk in "[ -~]{0,5}") {
        for program in [GEMV, LAYOUT, KITCHEN_SINK] {
            let mut text = program.to_string();
            let start = cut.min(text.len());
            let end = (start + len).min(text.len());
            if text.is_char_boundary(start) && text.is_char_boundary(end) {
                text.replace_range(start..end, &junk);
            }
            let _ = parse_and_render(&text);
        }
    }
}

// ---- the syntax ui cases ----

/// Every `tests/ui/syntax/*.csl` case reports exactly the codes in its `//@ expect:`
/// header (none without one). (The snapshot harness lives in the tests crate; this only checks codes.) Run
/// with `--nocapture` to see the rendered diagnostics.
#[test]
fn ui_cases_report_their_codes() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/ui/syntax");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("ui dir")
        .map(|e| e.expect("entry").path())
        .collect();
    paths.sort();
    assert!(paths.len() >= 14);
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("read");
        // A case without an `//@ expect:` first line must parse cleanly.
        let header = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("//@ expect:"))
            .unwrap_or("");
        let expected: Vec<&str> = header
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|c| !c.is_empty())
            .collect();
        let (_, diags, rendered) = parse_and_render(&text);
        println!("== {}\n{rendered}", path.display());
        let got: Vec<&str> = diags.iter().map(|d| d.code).collect();
        assert_eq!(got, expected, "{}:\n{rendered}", path.display());
    }
}

#[test]
fn deep_nesting_is_cut_off_not_a_stack_overflow() {
    let deep_blocks = format!(
        "fn f() void {{ {} {} }}",
        "{".repeat(50_000),
        "}".repeat(50_000)
    );
    let else_if_chain = format!(
        "fn f() void {{ if (a) {{ x; }} {} }}",
        "else if (a) { x; } ".repeat(5_000)
    );
    let braceless = format!(
        "fn f() void {{ {} x(); }}",
        "while (a) if (b) ".repeat(5_000)
    );
    for text in [deep_blocks, else_if_chain, braceless] {
        assert_eq!(codes_of(&text), ["E0210"]);
    }
    // Expressions live in an arena: deep ones are fine, and so are long flat files.
    let parens = format!("const x = {}1{};", "(".repeat(20_000), ")".repeat(20_000));
    assert!(codes_of(&parens).is_empty());
    let long_chain = format!(
        "fn f() void {{ if (a) {{ x; }} {} }}",
        "else if (a) { x; } ".repeat(100)
    );
    assert!(codes_of(&long_chain).is_empty());
    let many = "fn f() void { if (a) { while (b) { x(); } } }\n".repeat(2_000);
    assert!(codes_of(&many).is_empty());
}
