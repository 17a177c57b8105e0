//! End-to-end tests of the SdkLayout model ([`cslc::sdklayout`]): layouts of the small
//! regions under `tests/programs/sdklayout/` are compiled, run on the simulator (with host
//! streams through [`cslsim::host::SdkRuntime`]), and the results are compared with values
//! computed here.

#![allow(clippy::unwrap_used)]

use csl_arch::Arch;
use csl_arch::image::Image;
use cslc::sdklayout::{
    Dir, Edge, LayoutDesc, ParamValue, Position, SdkLayout, SdkLayoutError, SdkLayoutOptions,
    SdkLayoutOutput, compile, parse,
};
use cslsim::Simulator;
use cslsim::host::SdkRuntime;
use serde_json::{Value, json};
use std::path::PathBuf;

fn program_dir() -> PathBuf {
    csl_tests::repo_root().join("tests/programs/sdklayout")
}

fn region(name: &str, file: &str, w: u32, h: u32) -> Value {
    json!({
        "name": name,
        "file": program_dir().join(file),
        "width": w,
        "height": h,
        "params": [],
        "paints": [],
        "symbols": [],
    })
}

fn param(rect: [u32; 4], name: &str, kind: &str, value: Value) -> Value {
    json!({ "rect": rect, "name": name, "value": { "kind": kind, "value": value } })
}

fn port(region: usize, color: &str, edge: &str, input: bool, size: u32) -> Value {
    let pos = if input {
        json!({ "tx": ["ramp"] })
    } else {
        json!({ "rx": ["ramp"] })
    };
    json!({ "region": region, "color": color, "edge": edge, "input": input,
            "positions": [pos], "size": size })
}

fn build(desc: &Value, tag: &str) -> Result<SdkLayoutOutput, SdkLayoutError> {
    let desc: LayoutDesc = parse(&desc.to_string()).unwrap();
    let work = std::env::temp_dir().join(format!("csl-sdklayout-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let out = compile(
        &desc,
        &SdkLayoutOptions {
            base_dir: program_dir(),
            work_dir: work.clone(),
            optimize: true,
        },
    );
    let _ = std::fs::remove_dir_all(&work);
    out
}

/// Whatever the compiler produced, written and read back as the loader reads it.
fn reload(image: &Image) -> Image {
    Image::from_elf(&image.to_elf().unwrap()).unwrap()
}

fn read_u16(sim: &Simulator, image: &Image, x: u32, y: u32, name: &str) -> Vec<u16> {
    let suffix = format!(".{name}");
    csl_tests::global_bytes(sim, image, (x, y), |g| g == name || g.ends_with(&suffix))
        .chunks_exact(2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .collect()
}

/// source -> scale -> sink, three placed regions joined by two connections; the scale
/// region's weights come from `set_symbol_all`.
fn pipeline(arch: &str) -> Value {
    let size = 6u32;
    let mut source = region("source", "source.csl", 1, 1);
    source["place"] = json!([1, 5]);
    source["params"] = json!([
        param([0, 0, 1, 1], "size", "int", json!(size)),
        param([0, 0, 1, 1], "base", "int", json!(100)),
        param([0, 0, 1, 1], "tx", "color", json!("source.tx")),
    ]);
    let mut scale = region("scale", "scale.csl", 1, 1);
    scale["place"] = json!([6, 2]);
    scale["params"] = json!([
        param([0, 0, 1, 1], "size", "int", json!(size)),
        param([0, 0, 1, 1], "rx", "color", json!("scale.rx")),
        param([0, 0, 1, 1], "tx", "color", json!("scale.tx")),
    ]);
    scale["symbols"] = json!([{
        "name": "weights", "data": [3, 1, 4, 1, 5, 9], "elem_bytes": 2, "width": 6, "height": 1
    }]);
    let mut sink = region("sink", "sink.csl", 1, 1);
    sink["place"] = json!([0, 0]);
    sink["params"] = json!([
        param([0, 0, 1, 1], "size", "int", json!(size)),
        param([0, 0, 1, 1], "rx", "color", json!("sink.rx")),
    ]);
    json!({
        "arch": arch,
        "regions": [source, scale, sink],
        "ports": [
            port(0, "source.tx", "right", false, size),
            port(1, "scale.rx", "left", true, size),
            port(1, "scale.tx", "top", false, size),
            port(2, "sink.rx", "bottom", true, size),
        ],
        "connections": [[0, 1], [2, 3]],
        "streams": [],
    })
}

#[test]
fn connected_regions_pass_values_along_routes_the_compiler_finds() {
    for arch in ["wse2", "wse3"] {
        let out = build(&pipeline(arch), &format!("pipe-{arch}")).unwrap_or_else(|e| panic!("{e}"));
        // The connected ports' colours were unified; the three classes got distinct colours.
        assert_eq!(out.colors["source.tx"], out.colors["scale.rx"]);
        assert_eq!(out.colors["scale.tx"], out.colors["sink.rx"]);
        assert_ne!(out.colors["source.tx"], out.colors["sink.rx"]);
        let image = reload(&out.image);
        let mut sim = Simulator::new(&image).unwrap();
        sim.run_until_idle(1_000_000)
            .unwrap_or_else(|e| panic!("{arch}: {e}"));
        let weights = [3u16, 1, 4, 1, 5, 9];
        let expect: Vec<u16> = (0..6u16).map(|i| (100 + i) * weights[i as usize]).collect();
        assert_eq!(read_u16(&sim, &image, 0, 0, "result"), expect, "{arch}");
    }
}

#[test]
fn host_streams_feed_and_drain_a_region_through_proxies() {
    // Built with the Rust form of the Python API, as sdklayout-04's run.py builds its
    // layout.
    let size = 5u32;
    let weights = [2u32, 7, 1, 8, 2];
    for arch in [Arch::Wse2, Arch::Wse3] {
        let mut layout = SdkLayout::new(arch);
        let scale = layout.create_code_region(program_dir().join("scale.csl"), "scale", 1, 1);
        layout.set_param_all(scale, "size", ParamValue::Int(i64::from(size)));
        layout.set_param_all(scale, "rx", ParamValue::Color("rx".into()));
        layout.set_param_all(scale, "tx", ParamValue::Color("tx".into()));
        layout.set_symbol_all(scale, "weights", weights.to_vec(), 2, size, 1);
        let rx = layout.create_input_port(
            scale,
            "rx",
            Edge::Left,
            vec![Position::new(&[], &[Dir::Ramp])],
            size,
        );
        let tx = layout.create_output_port(
            scale,
            "tx",
            Edge::Right,
            vec![Position::new(&[Dir::Ramp], &[])],
            size,
        );
        layout.place(scale, 3, 1);
        let sin = layout.create_stream(rx);
        let sout = layout.create_stream(tx);
        let work = std::env::temp_dir().join(format!(
            "csl-sdklayout-{}-streams-{arch}",
            std::process::id()
        ));
        std::fs::create_dir_all(&work).unwrap();
        let out = layout
            .compile(&SdkLayoutOptions {
                base_dir: program_dir(),
                work_dir: work.clone(),
                optimize: true,
            })
            .unwrap_or_else(|e| panic!("{e}"));
        let _ = std::fs::remove_dir_all(&work);
        assert_eq!(out.streams.len(), 2);
        let (inp, outp) = (&out.streams[sin.0], &out.streams[sout.0]);
        assert!(inp.input && !outp.input);
        // The proxies sit on free PEs beside the ports.
        assert_eq!((inp.x, inp.y), (2, 1));
        assert_eq!((outp.x, outp.y), (4, 1));
        let mut rt = SdkRuntime::from_image(reload(&out.image));
        rt.load().unwrap();
        rt.run().unwrap();
        let data = vec![11u32, 12, 13, 14, 15];
        rt.stream_send(inp.x, inp.y, inp.color, data.clone())
            .unwrap();
        rt.stream_receive(outp.x, outp.y, outp.color, size as usize)
            .unwrap();
        let got = rt.stream_wait().unwrap();
        let expect: Vec<u32> = data.iter().zip(weights).map(|(d, w)| d * w).collect();
        let low: Vec<u32> = got.iter().map(|w| w & 0xFFFF).collect();
        assert_eq!(low, expect, "{arch}");
        // A second receive while one is unfinished is refused.
        rt.stream_receive(outp.x, outp.y, outp.color, 1).unwrap();
        assert!(rt.stream_receive(outp.x, outp.y, outp.color, 1).is_err());
        rt.stop().unwrap();
    }
}

#[test]
fn painted_routes_carry_a_colour_between_the_pes_of_one_region() {
    // Two neighbouring one-PE regions and no ports: the source paints RAMP -> EAST, the
    // sink WEST -> RAMP, both on the one named colour `c`.
    let mut source = region("source", "source.csl", 1, 1);
    source["place"] = json!([0, 0]);
    source["params"] = json!([
        param([0, 0, 1, 1], "size", "int", json!(4)),
        param([0, 0, 1, 1], "base", "int", json!(7)),
        param([0, 0, 1, 1], "tx", "color", json!("c")),
    ]);
    source["paints"] = json!([{ "rect": [0, 0, 1, 1], "color": "c",
        "positions": [{ "rx": ["ramp"], "tx": ["east"] }] }]);
    let mut sink = region("sink", "sink.csl", 1, 1);
    sink["place"] = json!([1, 0]);
    sink["params"] = json!([
        param([0, 0, 1, 1], "size", "int", json!(4)),
        param([0, 0, 1, 1], "rx", "color", json!("c")),
    ]);
    sink["paints"] = json!([{ "rect": [0, 0, 1, 1], "color": "c",
        "positions": [{ "rx": ["west"], "tx": ["ramp"] }] }]);
    let desc = json!({ "arch": "wse3", "regions": [source, sink] });
    let out = build(&desc, "paint").unwrap_or_else(|e| panic!("{e}"));
    let image = reload(&out.image);
    let mut sim = Simulator::new(&image).unwrap();
    sim.run_until_idle(1_000_000).unwrap();
    assert_eq!(read_u16(&sim, &image, 1, 0, "result"), vec![7, 8, 9, 10]);
}

#[test]
fn layout_mistakes_are_reported_not_panicked_on() {
    // Overlapping placed regions.
    let mut d = pipeline("wse2");
    d["regions"][1]["place"] = json!([1, 5]);
    let e = build(&d, "overlap").err().unwrap();
    assert!(
        matches!(&e, SdkLayoutError::Invalid(m) if m.contains("overlaps")),
        "{e}"
    );
    // Connected ports of different sizes.
    let mut d = pipeline("wse2");
    d["ports"][1]["size"] = json!(7);
    let e = build(&d, "sizes").err().unwrap();
    assert!(e.to_string().contains("differ in size"), "{e}");
    // Connecting an input port as the source.
    let mut d = pipeline("wse2");
    d["connections"] = json!([[1, 0]]);
    let e = build(&d, "direction").err().unwrap();
    assert!(e.to_string().contains("output port"), "{e}");
    // An unknown arch, and a param the program does not declare (a CSL diagnostic).
    let mut d = pipeline("wse2");
    d["arch"] = json!("wse9");
    assert!(build(&d, "arch").is_err());
    let mut d = pipeline("wse2");
    d["regions"][2]["params"] = json!([param([0, 0, 1, 1], "size", "int", json!(6)),]);
    let e = build(&d, "unbound").err().unwrap();
    assert!(matches!(e, SdkLayoutError::Compile(_)), "{e}");
    // A port whose positions the paint of its PE contradicts.
    let mut d = pipeline("wse2");
    d["regions"][1]["paints"] = json!([{ "rect": [0, 0, 1, 1], "color": "scale.rx",
        "positions": [{ "rx": ["west"], "tx": ["east"] }] }]);
    let e = build(&d, "paint-port").err().unwrap();
    assert!(e.to_string().contains("does not have"), "{e}");
    // Malformed JSON.
    assert!(parse("{ \"arch\": 3 }").is_err());
}
