//! Drives the built `csl-lsp` binary over standard input and output, as an editor does:
//! Content-Length framed JSON-RPC messages for the handshake, opening documents,
//! diagnostics, hover, go to definition, document symbols, completion, malformed
//! requests, shutdown and exit. Also checks that the VS Code extension's JSON files parse.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

/// A running server.
struct Client {
    child: Child,
    stdin: ChildStdin,
    rx: Receiver<Value>,
    next_id: i64,
    /// Messages read but not yet asked for.
    pending: Vec<Value>,
}

const TIMEOUT: Duration = Duration::from_secs(60);

/// The requests about one position of a document.
const POSITION_REQUESTS: &[&str] = &[
    "textDocument/hover",
    "textDocument/definition",
    "textDocument/completion",
];

impl Client {
    fn start(init_options: Value) -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_csl-lsp"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start csl-lsp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut len = None;
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(v) = line.strip_prefix("Content-Length: ") {
                        len = v.parse::<usize>().ok();
                    }
                }
                let mut buf = vec![0; len.expect("a Content-Length header")];
                if r.read_exact(&mut buf).is_err() {
                    return;
                }
                let v: Value = serde_json::from_slice(&buf).expect("JSON from the server");
                if tx.send(v).is_err() {
                    return;
                }
            }
        });
        let mut c = Client {
            child,
            stdin,
            rx,
            next_id: 1,
            pending: Vec::new(),
        };
        let init = c.request(
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": {}, "initializationOptions": init_options}),
        );
        assert!(
            init["result"]["capabilities"]["hoverProvider"]
                .as_bool()
                .unwrap_or(false),
            "{init}"
        );
        c.notify("initialized", json!({}));
        c
    }

    fn send_raw(&mut self, body: &str) {
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("write");
        self.stdin.flush().expect("flush");
    }

    fn send(&mut self, v: Value) {
        self.send_raw(&v.to_string());
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and waits for its response.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.wait(|m| m["id"] == json!(id) && m.get("method").is_none())
    }

    /// A request about one position (`textDocument/hover`, `.../definition`, ...).
    fn at(&mut self, method: &str, uri: &str, position: Value) -> Value {
        self.request(
            method,
            json!({"textDocument": {"uri": uri}, "position": position}),
        )
    }

    /// The text of the hover at `position` of `uri` (empty without one), and the response.
    fn hover(&mut self, uri: &str, position: Value) -> (String, Value) {
        let h = self.at("textDocument/hover", uri, position);
        let text = h["result"]["contents"]["value"]
            .as_str()
            .unwrap_or("")
            .to_string();
        (text, h)
    }

    /// Replaces the whole text of the open document `uri` (as its version `version`).
    fn change(&mut self, uri: &str, version: i64, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
        );
    }

    /// The names of the document symbols of `uri`, and the response.
    fn symbol_names(&mut self, uri: &str) -> (Vec<String>, Value) {
        let s = self.request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": uri}}),
        );
        let names = s["result"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x["name"].as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        (names, s)
    }

    /// Checks that each of `methods` about (`line`, `character`) of `uri` gets an answer
    /// that is not an error.
    fn all_answer(&mut self, uri: &str, line: usize, character: usize, methods: &[&str]) {
        let pos = json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}});
        for method in methods {
            let r = self.request(method, pos.clone());
            assert!(
                r.get("error").is_none(),
                "{method} at {line}:{character}: {r}"
            );
        }
    }

    /// The first message (already read or arriving) that satisfies `pred`.
    fn wait(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.pending.iter().position(&pred) {
            return self.pending.remove(i);
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let m = self
                .rx
                .recv_timeout(left)
                .expect("the server answered in time");
            if pred(&m) {
                return m;
            }
            self.pending.push(m);
        }
    }

    /// The next diagnostics published for `uri`.
    fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        let m = self.wait(|m| {
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri
        });
        m["params"]["diagnostics"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// The diagnostics published for version `version` of `uri`.
    fn diagnostics_of_version(&mut self, uri: &str, version: i64) -> Vec<Value> {
        let m = self.wait(|m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && m["params"]["version"] == version
        });
        m["params"]["diagnostics"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    fn open(&mut self, uri: &str, lang: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": lang, "version": 1, "text": text}}),
        );
    }

    fn finish(mut self) {
        let r = self.request("shutdown", Value::Null);
        assert!(r.get("error").is_none(), "{r}");
        self.notify("exit", Value::Null);
        let status = self.child.wait().expect("the server exits");
        assert!(status.success(), "exit status {status}");
    }
}

fn uri(p: &Path) -> String {
    format!("file://{}", p.display())
}

/// A fresh directory with the given files (paths may name subdirectories).
fn workspace(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (f, text) in files {
        let path = dir.join(f);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir.canonicalize().unwrap()
}

/// (line, character) of the first occurrence of `needle` in `text`, plus `extra`
/// characters (ASCII text).
fn pos_of(text: &str, needle: &str, extra: usize) -> Value {
    let at = text.find(needle).expect("needle in text") + extra;
    let line = text[..at].matches('\n').count();
    let col = at - text[..at].rfind('\n').map_or(0, |i| i + 1);
    json!({"line": line, "character": col})
}

const LIB: &str = "// A module.\nparam scale: u16 = 3;\nconst k: u16 = 7 * scale;\nfn twice(x: u16) u16 {\n  return x * 2;\n}\n";

const MAIN: &str = "const lib = @import_module(\"lib.csl\");\nconst n: u16 = lib.k + 1;\nvar buf: [4]f32 = @zeros([4]f32);\nconst Pair = struct { a: i16, b: i16 };\n\nfn f(v: u16) u16 {\n  const y = n + v;\n  buf[0] = 1.0;\n  return lib.twice(y);\n}\n\ntask t() void {\n  const r: u16 = f(2);\n  buf[1] = @as(f32, r);\n}\n";

#[test]
fn csl_diagnostics_hover_definition_symbols_completion() {
    let dir = workspace(
        "csl",
        &[
            ("lib.csl", LIB),
            ("main.csl", MAIN),
            (
                "bad.csl",
                "var x: u16 = 0;\nfn g() void {\n  x = true;\n}\n",
            ),
        ],
    );
    let main_uri = uri(&dir.join("main.csl"));
    let lib_uri = uri(&dir.join("lib.csl"));
    let bad_uri = uri(&dir.join("bad.csl"));
    let mut c = Client::start(json!({}));

    // An error points at the right range.
    let bad = "var x: u16 = 0;\nfn g() void {\n  x = true;\n}\n";
    c.open(&bad_uri, "csl", bad);
    let diags = c.diagnostics(&bad_uri);
    assert!(!diags.is_empty(), "no diagnostics for bad.csl");
    let d = &diags[0];
    assert_eq!(d["severity"], 1, "{d}");
    assert_eq!(d["source"], "cslc");
    assert!(d["code"].as_str().unwrap_or("").starts_with('E'), "{d}");
    assert_eq!(
        d["range"]["start"],
        json!({"line": 2, "character": 6}),
        "{d}"
    );
    assert_eq!(
        d["range"]["end"],
        json!({"line": 2, "character": 10}),
        "{d}"
    );

    // A module without a layout: no "no layout" error.
    c.open(&main_uri, "csl", MAIN);
    let diags = c.diagnostics(&main_uri);
    assert!(
        diags.iter().all(|d| d["severity"] != 1),
        "spurious errors in main.csl: {diags:?}"
    );

    // Hover: the type and the comptime value.
    let (text, h) = c.hover(&main_uri, pos_of(MAIN, "n + v", 0));
    assert!(text.contains("u16"), "{h}");
    assert!(text.contains("22"), "{h}");

    // Hover on a runtime variable: its type.
    let (text, h) = c.hover(&main_uri, pos_of(MAIN, "buf[0]", 1));
    assert!(text.contains("[4]f32"), "{h}");

    // Hover on a builtin: its signature.
    let (text, h) = c.hover(&main_uri, pos_of(MAIN, "@zeros", 2));
    assert!(text.contains("@zeros("), "{h}");

    // Definitions: across the import (in lib.csl, on `k`); the import path (the file); a
    // function called through the module; a local and a top-level constant in the same
    // file. (needle and offset in MAIN, the file and the start of the definition.)
    let cases = [
        ("lib.k", 4, Some(&lib_uri), Some(pos_of(LIB, "k:", 0))),
        ("lib.csl", 1, Some(&lib_uri), None),
        ("twice(y)", 1, Some(&lib_uri), Some(pos_of(LIB, "twice", 0))),
        (
            "twice(y)",
            6,
            Some(&main_uri),
            Some(pos_of(MAIN, "y = n", 0)),
        ),
        ("n + v", 0, None, Some(pos_of(MAIN, "n: u16", 0))),
    ];
    for (needle, extra, want_uri, want_start) in cases {
        let at = pos_of(MAIN, needle, extra);
        let d = c.at("textDocument/definition", &main_uri, at);
        if let Some(u) = want_uri {
            assert_eq!(d["result"]["uri"], u.as_str(), "{needle}: {d}");
        }
        if let Some(start) = want_start {
            assert_eq!(d["result"]["range"]["start"], start, "{needle}: {d}");
        }
    }

    // Document symbols.
    let (names, s) = c.symbol_names(&main_uri);
    for want in ["lib", "n", "buf", "Pair", "f", "t"] {
        assert!(
            names.iter().any(|n| n == want),
            "{want} missing from {names:?}"
        );
    }
    let pair = s["result"]
        .as_array()
        .and_then(|a| a.iter().find(|x| x["name"] == "Pair"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(pair["kind"], 23, "Pair is a struct: {pair}");

    // Completion of builtins after `@`, with signatures.
    let edited = format!("{MAIN}fn h() void {{ @fm }}\n");
    c.change(&main_uri, 2, &edited);
    let r = c.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": main_uri}, "position": pos_of(&edited, "@fm ", 3)}),
    );
    let items = r["result"].as_array().cloned().unwrap_or_default();
    let fmacs = items
        .iter()
        .find(|i| i["label"] == "@fmacs")
        .unwrap_or_else(|| panic!("no @fmacs in {r}"));
    assert!(
        fmacs["detail"]
            .as_str()
            .unwrap_or("")
            .starts_with("@fmacs("),
        "{fmacs}"
    );

    // Identifiers in scope, and members of an imported module.
    let r = c.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": main_uri}, "position": pos_of(MAIN, "y = n", 4)}),
    );
    let names = labels(&r);
    assert!(
        names.contains(&"v".to_string()) && names.contains(&"buf".to_string()),
        "{names:?}"
    );
    let r = c.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": main_uri}, "position": pos_of(MAIN, "lib.k", 4)}),
    );
    let names = labels(&r);
    assert!(names.contains(&"twice".to_string()), "{names:?}");

    // The unsaved text of an open module is what importers see.
    let lib_changed = LIB.replace("7 * scale", "true");
    c.open(&lib_uri, "csl", &lib_changed);
    let _ = c.diagnostics(&lib_uri);
    c.change(&main_uri, 3, MAIN);
    let diags = c.diagnostics_of_version(&main_uri, 3);
    assert!(
        diags
            .iter()
            .any(|d| d["severity"] == 1 && d["message"].as_str().unwrap_or("").contains("lib.csl")),
        "the overlay of lib.csl was not used: {diags:?}"
    );
    c.finish();
}

#[test]
fn layout_file_and_warnings() {
    let pe = "param n: u16;\nvar x: u16 = n;\ntask main() void { x += 1; }\ncomptime { @bind_local_task(main, @get_local_task_id(8)); }\n";
    let layout = "param width: u16;\nlayout {\n  @set_rectangle(width, 1);\n  for (@range(u16, width)) |x| {\n    @set_tile_code(x, 0, \"pe.csl\", .{ .n = x, .extra = 1 });\n  }\n}\n";
    let dir = workspace("layout", &[("pe.csl", pe), ("layout.csl", layout)]);
    let layout_uri = uri(&dir.join("layout.csl"));
    let pe_uri = uri(&dir.join("pe.csl"));
    let mut c = Client::start(json!({"params": {"width": "2"}}));
    c.open(&layout_uri, "csl", layout);
    let diags = c.diagnostics(&layout_uri);
    assert!(diags.iter().all(|d| d["severity"] != 1), "{diags:?}");

    // The tile code path goes to the PE file; the param's value is known.
    let d = c.at(
        "textDocument/definition",
        &layout_uri,
        pos_of(layout, "pe.csl", 1),
    );
    assert_eq!(d["result"]["uri"], pe_uri.as_str(), "{d}");
    let (text, h) = c.hover(&layout_uri, pos_of(layout, "width, 1", 0));
    assert!(text.contains("u16") && text.contains('2'), "{h}");
    // The PE file is analysed through the layout that places it: its param has the
    // values the tiles give it.
    c.open(&pe_uri, "csl", pe);
    let diags = c.diagnostics(&pe_uri);
    assert!(diags.iter().all(|d| d["severity"] != 1), "{diags:?}");
    let (text, h) = c.hover(&pe_uri, pos_of(pe, "n;", 0));
    assert!(text.contains("u16") && text.contains("differs"), "{h}");
    // A mistake in the PE file is reported in it, once although two tiles run it.
    let broken = pe.replace("x += 1;", "x += true;");
    c.change(&pe_uri, 2, &broken);
    let diags = c.diagnostics_of_version(&pe_uri, 2);
    let errors: Vec<_> = diags.iter().filter(|d| d["severity"] == 1).collect();
    assert_eq!(errors.len(), 1, "{diags:?}");
    assert_eq!(
        errors[0]["range"]["start"],
        pos_of(&broken, "true", 0),
        "{diags:?}"
    );
    c.finish();
}

#[test]
fn a_pe_file_without_its_layout_is_a_lone_module() {
    let pe = "const md = @import_module(\"mod.csl\", .{ .b = 2 });\nparam n: u16;\nparam m: u16 = 4;\nvar x: u16 = m;\nfn get() u16 { return n + x; }\ntask main() void { x += 1; }\ncomptime { @export_symbol(x); }\n";
    let dir = workspace(
        "lone",
        &[("pe.csl", pe), ("mod.csl", "param a: u16 = 1;\n")],
    );
    let pe_uri = uri(&dir.join("pe.csl"));
    let mut c = Client::start(json!({}));
    c.open(&pe_uri, "csl", pe);
    let diags = c.diagnostics(&pe_uri);
    assert!(diags.iter().all(|d| d["severity"] != 1), "{diags:?}");
    // `.b` names no param of mod.csl: a warning, as cslc prints it.
    let w = diags
        .iter()
        .find(|d| d["severity"] == 2)
        .unwrap_or_else(|| panic!("no warning: {diags:?}"));
    assert!(w["message"].as_str().unwrap_or("").contains("`b`"), "{w}");
    let (text, h) = c.hover(&pe_uri, pos_of(pe, "m;", 0));
    assert!(text.contains("u16") && text.contains('4'), "{h}");
    c.finish();
}

#[test]
fn tungsten_and_paint_diagnostics() {
    let w_ok = "socket tx;\nxp param N = 4;\n{\n  i in [0, N) tx[] <- i;\n}\n";
    let w_bad = "{\n  xp a = undefined_name;\n}\n";
    let paint_bad = "let row = rect(0 0 2 1)\nrow : code('nope)\nunion(row)\n";
    let dir = workspace(
        "tungsten",
        &[("ok.w", w_ok), ("bad.w", w_bad), ("bad.paint", paint_bad)],
    );
    let mut c = Client::start(json!({}));
    let ok_uri = uri(&dir.join("ok.w"));
    c.open(&ok_uri, "tungsten", w_ok);
    let diags = c.diagnostics(&ok_uri);
    assert!(diags.iter().all(|d| d["severity"] != 1), "{diags:?}");
    let (names, s) = c.symbol_names(&ok_uri);
    assert_eq!(names, ["tx", "N", "entry"], "{s}");
    let bad_uri = uri(&dir.join("bad.w"));
    c.open(&bad_uri, "tungsten", w_bad);
    let diags = c.diagnostics(&bad_uri);
    let d = diags
        .iter()
        .find(|d| d["severity"] == 1)
        .unwrap_or_else(|| panic!("no error in bad.w: {diags:?}"));
    assert_eq!(
        d["range"]["start"],
        pos_of(w_bad, "undefined_name", 0),
        "{d}"
    );
    // A library (no entry block) is not a program missing its entry.
    let lib_uri = uri(&dir.join("lib.w"));
    c.open(
        &lib_uri,
        "tungsten",
        "twice(xp a) -> xp { return a * 2; }\n",
    );
    let diags = c.diagnostics(&lib_uri);
    assert!(diags.iter().all(|d| d["severity"] != 1), "{diags:?}");
    let paint_uri = uri(&dir.join("bad.paint"));
    c.open(&paint_uri, "paint", paint_bad);
    let diags = c.diagnostics(&paint_uri);
    assert!(diags.iter().any(|d| d["severity"] == 1), "{diags:?}");
    let (names, s) = c.symbol_names(&paint_uri);
    assert_eq!(names, ["row"], "{s}");
    // The outline of a floorplan: lets, functions, includes and named regions.
    let plan = "include \"lib.paint\"\ndefine frame(r c) = paint(ring(r) c [CXC])\nlet c = color()\nlet row = hstack(rep(tile(1 1) 4))\nrow : code('relay [a:c])\nrow : name('relays)\nunion(row ring(row))\n";
    let plan_uri = uri(&dir.join("plan.paint"));
    c.open(&plan_uri, "paint", plan);
    let (names, s) = c.symbol_names(&plan_uri);
    assert_eq!(names, ["lib.paint", "frame", "c", "row", "relays"], "{s}");
    // Completion: the file's names, the builtins and actions with their signatures.
    let r = c.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": plan_uri}, "position": {"line": 3, "character": 12}}),
    );
    let names = labels(&r);
    for n in [
        "frame", "c", "row", "hstack", "split", "paint", "name", "let",
    ] {
        assert!(names.contains(&n.to_string()), "no {n} in {names:?}");
    }
    let items = r["result"].as_array().cloned().unwrap_or_default();
    let split = items
        .iter()
        .find(|i| i["label"] == "split")
        .unwrap_or_else(|| panic!("no split in {r}"));
    assert_eq!(split["detail"], "split(r 'h|'v n i)", "{split}");
    // Hover and definition: a `let` used in an action, a builtin, a placed program.
    let relay = "socket a;\nxp param K = 2;\n{ a[] <- K; }\n";
    std::fs::write(dir.join("relay.w"), relay).unwrap();
    let at = |needle: &str, extra: usize| json!({"textDocument": {"uri": plan_uri}, "position": pos_of(plan, needle, extra)});
    let r = c.request("textDocument/definition", at("row : code", 0));
    assert_eq!(
        r["result"]["range"]["start"],
        pos_of(plan, "row =", 0),
        "{r}"
    );
    let r = c.request("textDocument/hover", at("hstack", 0));
    let h = r["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(h.contains("hstack(") && h.contains("(builtin)"), "{r}");
    let r = c.request("textDocument/hover", at("relay [", 1));
    let h = r["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        h.contains("relay.w") && h.contains("`a`") && h.contains("`K`"),
        "{r}"
    );
    let r = c.request("textDocument/definition", at("a:c", 0));
    assert!(
        r["result"]["uri"]
            .as_str()
            .unwrap_or_default()
            .ends_with("relay.w"),
        "{r}"
    );
    c.finish();
}

#[test]
fn tungsten_hover_definition_and_completion() {
    // `ports.w` lives in a library directory given by the settings.
    let lib = "socket rx;\nunion W { u32 u; xp w[2]; };\n";
    let main = "import \"ports.w\";\nsocket tx;\nxp param N = 4;\nhalf(sp x) -> sp { return x * 0.5; }\n{\n  union W h;\n  i in [0, N) {\n    h.u <- rx[];\n    tx[] <- half((sp)h.w[0]);\n  }\n}\n";
    let dir = workspace("tungsten_names", &[("lib/ports.w", lib), ("main.w", main)]);
    let mut c = Client::start(json!({"libDirs": [dir.join("lib").display().to_string()]}));
    let m_uri = uri(&dir.join("main.w"));
    c.open(&m_uri, "tungsten", main);
    let diags = c.diagnostics(&m_uri);
    assert!(diags.iter().all(|d| d["severity"] != 1), "{diags:?}");
    let at =
        |needle: &str| json!({"textDocument": {"uri": m_uri}, "position": pos_of(main, needle, 0)});
    // A socket declared in the imported file: its queue number and where it is declared.
    let r = c.request("textDocument/hover", at("rx[]"));
    let h = r["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(h.contains("socket 0") && h.contains("ports.w"), "{r}");
    let r = c.request("textDocument/definition", at("rx[]"));
    assert!(
        r["result"]["uri"]
            .as_str()
            .unwrap_or_default()
            .ends_with("lib/ports.w"),
        "{r}"
    );
    assert_eq!(
        r["result"]["range"]["start"],
        json!({"line": 0, "character": 7}),
        "{r}"
    );
    // The loop bound is the param; the call is the function; a field through the union.
    let r = c.request("textDocument/definition", at("N) {"));
    assert_eq!(r["result"]["range"]["start"], pos_of(main, "N =", 0), "{r}");
    let r = c.request("textDocument/definition", at("half((sp)"));
    assert_eq!(
        r["result"]["range"]["start"],
        pos_of(main, "half(sp", 0),
        "{r}"
    );
    let r = c.request("textDocument/definition", at("w[0]"));
    assert_eq!(
        r["result"]["range"]["start"],
        json!({"line": 1, "character": 20}),
        "{r}"
    );
    // An import path leads to the file.
    let r = c.request("textDocument/definition", at("ports.w"));
    assert!(
        r["result"]["uri"]
            .as_str()
            .unwrap_or_default()
            .ends_with("lib/ports.w"),
        "{r}"
    );
    // A keyword.
    let r = c.request("textDocument/hover", at("param"));
    let h = r["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(h.starts_with("`param`"), "{r}");
    // Completion inside the loop: the index, the file's and the import's names, keywords.
    let r = c.request("textDocument/completion", at("tx[] <- half"));
    let names = labels(&r);
    for n in ["i", "h", "N", "half", "rx", "tx", "W", "sp", "parallel"] {
        assert!(names.contains(&n.to_string()), "no {n} in {names:?}");
    }
    assert!(
        !names.contains(&"x".to_string()),
        "a parameter of another function: {names:?}"
    );
    c.finish();
}

#[test]
fn bad_input_gets_errors_not_a_crash() {
    let dir = workspace("bad_input", &[("x.csl", "const a = ;\nfn (\n")]);
    let x_uri = uri(&dir.join("x.csl"));
    let mut c = Client::start(json!({"arch": 42, "params": "no"}));
    c.open(&x_uri, "csl", "const a = ;\nfn (\n");
    let diags = c.diagnostics(&x_uri);
    assert!(!diags.is_empty());
    // Positions far out of range.
    c.all_answer(&x_uri, 9999, 9999, POSITION_REQUESTS);
    // Parameters of the wrong shape, an unknown method, a document that does not exist.
    let r = c.request("textDocument/hover", json!({"nonsense": true}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = c.request("textDocument/frobnicate", json!({}));
    assert_eq!(r["error"]["code"], -32601, "{r}");
    let r = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": "file:///no/such/file.csl"}, "position": {"line": 0, "character": 0}}),
    );
    assert!(r.get("error").is_some(), "{r}");
    // Notifications of the wrong shape are ignored.
    c.notify("textDocument/didOpen", json!({"textDocument": 5}));
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": "file:///nope.csl", "version": 1}, "contentChanges": []}),
    );
    // Incremental edits with ranges past the end.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": x_uri, "version": 2}, "contentChanges": [{"range": {"start": {"line": 50, "character": 0}, "end": {"line": 0, "character": 3}}, "text": "é"}]}),
    );
    let s = c.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": x_uri}}),
    );
    assert!(s.get("error").is_none(), "{s}");
    // Pathological nesting.
    let deep = format!(
        "fn f() void {{ {} }}\nconst z = {}1{};\n",
        "{".repeat(20000),
        "(".repeat(20000),
        ")".repeat(20000)
    );
    c.change(&x_uri, 3, &deep);
    let _ = c.diagnostics(&x_uri);
    c.all_answer(
        &x_uri,
        1,
        6,
        &[POSITION_REQUESTS, &["textDocument/documentSymbol"]].concat(),
    );
    c.finish();
}

#[test]
fn malformed_frames_end_the_server_quietly() {
    let mut c = Client::start(json!({}));
    c.send_raw("{not json");
    let status = c.child.wait().expect("exits");
    // The transport gives up on a broken stream; it must not be a panic (101).
    assert_ne!(status.code(), Some(101), "{status}");
}

#[test]
fn editor_files_parse() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../editors/vscode");
    for f in [
        "package.json",
        "language-configuration.json",
        "syntaxes/csl.tmLanguage.json",
        "syntaxes/tungsten.tmLanguage.json",
    ] {
        let text = std::fs::read_to_string(root.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(v.is_object(), "{f}");
    }
    let pkg: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("package.json")).unwrap()).unwrap();
    let main = pkg["main"]
        .as_str()
        .expect("package.json names its main script");
    assert!(root.join(main).is_file(), "{main} is missing");
}

#[test]
fn every_position_of_a_broken_file_is_answered() {
    let text = "// ünïcödé 𝄞 comment\nparam p: u16 = 2;\nconst s = struct { a: i16 };\nfn f(x: u16) u16 {\n  const y = x + p;\n  for (@range(u16, 3)) |i| { @fmov(y, i); }\n  return y +;\n}\ntask t() void { f(\"é\"); }\nlayout { @set_rectangle(1, 1) }\n";
    let dir = workspace("every_position", &[("e.csl", text)]);
    let e_uri = uri(&dir.join("e.csl"));
    let mut c = Client::start(json!({}));
    c.open(&e_uri, "csl", text);
    let _ = c.diagnostics(&e_uri);
    every_position(&mut c, &e_uri, text);
    // The same for a broken Tungsten file (names resolved over a tree with holes) and a
    // broken Paint file.
    let p = "(* ünï *) let c = color(\ndefine f(a b) = paint(a b [CXR|\nlet r = rect(0 0 NX\nr : code('w [s:c N:])\nf(r c\n";
    let p_uri = uri(&dir.join("e.paint"));
    c.open(&p_uri, "paint", p);
    let _ = c.diagnostics(&p_uri);
    every_position(&mut c, &p_uri, p);
    let w = "// ünïcödé 𝄞\nsocket s;\nunion U { u32 u; };\nf(sp a) -> sp { return a +; }\n{\n  union U v; v. ;\n  i in [0, ∞) v.u <- s[].;\n  forever dispatch(s) { wavelet(sp x) { x = ; } }\n";
    let w_uri = uri(&dir.join("e.w"));
    c.open(&w_uri, "tungsten", w);
    let _ = c.diagnostics(&w_uri);
    every_position(&mut c, &w_uri, w);
    c.finish();
}

/// Asks every position request at every position of `text` (one past each line's end
/// too), which must each be answered.
fn every_position(c: &mut Client, uri: &str, text: &str) {
    for (line, l) in text.split('\n').enumerate() {
        for character in 0..=l.encode_utf16().count() + 1 {
            c.all_answer(uri, line, character, POSITION_REQUESTS);
        }
    }
}

/// The labels of a completion response's items.
fn labels(r: &Value) -> Vec<String> {
    r["result"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|i| i["label"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}
