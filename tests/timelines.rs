//! Timelines (`--perfetto`) and heatmaps (`--heatmap`) of a tutorial run: tutorial 06
//! (a sender PE streams `n` wavelets east to a receiver PE, whose data task `recv` runs
//! once per wavelet). Checks the trace's tracks, spans and arrows, that recording changes
//! nothing and is the same for every thread count, and the heatmap's size and colours.

#![allow(clippy::unwrap_used)]

use csl_arch::Arch;
use cslsim::heatmap;
use cslsim::host::{Region, SdkRuntime, Transfer};
use cslsim::{PeRect, PerfettoConfig, RunStats};
use serde_json::Value;
use std::path::PathBuf;

const N: usize = 6;

fn out_dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("timelines-{name}"))
}

/// Tutorial 06 compiled for `arch` into a directory of its own for each test (`tag`):
/// tests run in parallel.
fn compiled(arch: Arch, tag: &str) -> PathBuf {
    csl_tests::compile_to(
        "examples/tutorials/06-routes-two-pes/layout.csl",
        arch,
        (9, 3),
        &[("n", "6")],
        &out_dir(&format!("06-{arch}-{tag}")),
    )
}

/// Runs tutorial 06 (its `run.py`), optionally recording; returns the runtime (stopped),
/// the answer and the statistics.
fn run(
    dir: &PathBuf,
    perfetto: Option<PerfettoConfig>,
    threads: usize,
) -> (SdkRuntime, Vec<u32>, RunStats) {
    let mut rt = SdkRuntime::new(dir)
        .unwrap()
        .with_max_cycles(10_000_000)
        .with_threads(threads)
        .with_split_threshold(0);
    if let Some(cfg) = perfetto {
        rt = rt.with_perfetto(cfg);
    }
    rt.load().unwrap();
    rt.run().unwrap();
    let x: Vec<u32> = (0..2 * N)
        .map(|k| (k as f32 * 0.5 + 1.0).to_bits())
        .collect();
    let id = rt.get_id("x").unwrap();
    rt.h2d(id, &x, Region::new(0, 0, 2, 1, N as u32), Transfer::COPY)
        .unwrap();
    rt.launch("compute", &[], false).unwrap();
    let mut y = vec![0u32; N];
    let id = rt.get_id("y").unwrap();
    rt.d2h(
        &mut y,
        id,
        Region::new(1, 0, 1, 1, N as u32),
        Transfer::COPY,
    )
    .unwrap();
    rt.stop().unwrap();
    let stats = rt.stats();
    (rt, y, stats)
}

fn trace_of(rt: &SdkRuntime, name: &str) -> (String, Value) {
    let path = out_dir(name).with_extension("json");
    rt.write_perfetto(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    (text, doc)
}

fn events(doc: &Value) -> &Vec<Value> {
    doc["traceEvents"].as_array().unwrap()
}

/// The pid of the process named `PE(x,y)`.
fn pid_of(doc: &Value, pe: &str) -> Option<u64> {
    events(doc)
        .iter()
        .find(|e| e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == pe)
        .and_then(|e| e["pid"].as_u64())
}

fn spans<'a>(doc: &'a Value, pid: u64, cat: &str) -> Vec<&'a Value> {
    events(doc)
        .iter()
        .filter(|e| e["ph"] == "X" && e["pid"] == pid && e["cat"] == cat)
        .collect()
}

#[test]
fn perfetto_timeline_of_tutorial_06() {
    for arch in [Arch::Wse2, Arch::Wse3] {
        let dir = compiled(arch, "perfetto");
        let (plain, y0, stats0) = run(&dir, None, 1);
        let (rt, y, stats) = run(&dir, Some(PerfettoConfig::default()), 1);
        // Recording changes nothing.
        assert_eq!(y, y0, "{arch}: answer");
        assert_eq!(stats, stats0, "{arch}: statistics");
        assert_eq!(rt.cycles(), plain.cycles(), "{arch}: cycles");

        let (text, doc) = trace_of(&rt, &format!("06-{arch}"));
        let sender = pid_of(&doc, "PE(0,0)").expect("a PE(0,0) track");
        let receiver = pid_of(&doc, "PE(1,0)").expect("a PE(1,0) track");
        // The receiver's data task runs once per wavelet, named after its function.
        let recv = spans(&doc, receiver, "task");
        let named_recv = recv
            .iter()
            .filter(|e| e["name"].as_str().unwrap().ends_with("recv"))
            .count();
        assert_eq!(named_recv, N, "{arch}: recv spans in {recv:?}");
        // The sender runs the launched `compute`, with its synchronous @fmovs inside.
        let compute = spans(&doc, sender, "task");
        let c = compute
            .iter()
            .find(|e| e["name"].as_str().unwrap().ends_with("compute"))
            .unwrap_or_else(|| panic!("{arch}: no compute span in {compute:?}"));
        let fmovs = spans(&doc, sender, "dsd");
        let f = fmovs
            .iter()
            .find(|e| e["name"] == "@fmovs")
            .unwrap_or_else(|| panic!("{arch}: no @fmovs span in {fmovs:?}"));
        let (cs, ce) = (c["ts"].as_u64().unwrap(), c["dur"].as_u64().unwrap());
        let (fs, fe) = (f["ts"].as_u64().unwrap(), f["dur"].as_u64().unwrap());
        assert!(
            cs <= fs && fs + fe <= cs + ce,
            "{arch}: @fmovs nests in compute"
        );
        // Arrows: every wavelet of colour c from the sender to the receiver.
        let starts: Vec<&Value> = events(&doc).iter().filter(|e| e["ph"] == "s").collect();
        assert_eq!(starts.len(), N, "{arch}: one arrow per wavelet");
        for s in &starts {
            assert_eq!(s["pid"], sender);
            let id = &s["id"];
            let end = events(&doc)
                .iter()
                .find(|e| e["ph"] == "f" && &e["id"] == id)
                .unwrap_or_else(|| panic!("{arch}: arrow {id} has no end"));
            assert_eq!(end["pid"], receiver);
            assert!(end["ts"].as_u64() > s["ts"].as_u64());
            assert_eq!(s["args"]["direction"], "EAST");
        }
        // Queue depths of the receiver's input queue.
        assert!(
            events(&doc)
                .iter()
                .any(|e| e["ph"] == "C" && e["pid"] == receiver),
            "{arch}: no queue counter"
        );
        assert_eq!(doc["otherData"]["cycles"], rt.cycles());

        // The same trace, byte for byte, on several threads (2 PEs stay in one chunk;
        // runtime-sim/tests/fabric.rs checks a rectangle whose phases are split).
        let (rt2, _, _) = run(&dir, Some(PerfettoConfig::default()), 3);
        let (text2, _) = trace_of(&rt2, &format!("06-{arch}-threads"));
        assert_eq!(text, text2, "{arch}: trace depends on the thread count");

        // The PE filter keeps the receiver only: no arrows (their senders are outside).
        let only = PerfettoConfig {
            pes: PeRect::parse("1,0:1,0").unwrap(),
            ..PerfettoConfig::default()
        };
        let (rt3, _, _) = run(&dir, Some(only), 1);
        let (_, doc3) = trace_of(&rt3, &format!("06-{arch}-filter"));
        assert!(pid_of(&doc3, "PE(0,0)").is_none());
        let r3 = pid_of(&doc3, "PE(1,0)").unwrap();
        assert_eq!(spans(&doc3, r3, "task").len(), recv.len());
        assert!(!events(&doc3).iter().any(|e| e["ph"] == "s"));

        // Arrow sampling: at most the cap, every 2^k-th hop of each sender.
        let capped = PerfettoConfig {
            max_flows: 2,
            ..PerfettoConfig::default()
        };
        let (rt4, _, _) = run(&dir, Some(capped), 1);
        let (_, doc4) = trace_of(&rt4, &format!("06-{arch}-capped"));
        let n4 = events(&doc4).iter().filter(|e| e["ph"] == "s").count();
        assert_eq!(
            n4, 1,
            "{arch}: hop 4 of 6 (hops 2, 4, 6 at stride 2 are too many)"
        );
        assert_eq!(doc4["otherData"]["flow_stride"], 4);
    }
}

#[test]
fn pe_rect_parsing() {
    assert_eq!(
        PeRect::parse("4,4:0,1").unwrap(),
        PeRect {
            x0: 0,
            y0: 1,
            x1: 4,
            y1: 4
        }
    );
    assert!(PeRect::parse("2,3").unwrap().contains(2, 3));
    assert!(PeRect::parse("1:2").is_err());
    assert!(PeRect::parse("a,1").is_err());
}

#[test]
fn heatmap_of_tutorial_06() {
    let dir = compiled(Arch::Wse2, "heatmap");
    let (rt, _, stats) = run(&dir, None, 1);
    let path = out_dir("06-heatmap").with_extension("png");
    rt.write_heatmap(&path).unwrap();
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    // The documented size: pitch P = clamp(1280 / max(w, h), 8, 40); width = 56 + w·P +
    // 240, height = 40 + max(h·P, 232) + 40. Tutorial 06's rectangle is 2x1.
    let (w, h) = (2u32, 1u32);
    let p = (1280 / w.max(h)).clamp(8, 40);
    assert_eq!(
        (info.width, info.height),
        (56 + w * p + 240, 40 + (h * p).max(232) + 40)
    );
    let l = heatmap::layout(w, h);
    assert_eq!((l.width, l.height), (info.width, info.height));
    let pixel = |x: u32, y: u32| {
        let i = 3 * (y as usize * info.width as usize + x as usize);
        [buf[i], buf[i + 1], buf[i + 2]]
    };
    // Each cell's centre has the colour of its PE's busy and stalled shares; the busier
    // PE's differs from the other's.
    let cycles = stats.cycles as f64;
    let mut seen = Vec::new();
    for s in &stats.pes {
        let (x, y) = (s.pe.rel.x, s.pe.rel.y);
        let (cx, cy) = l.cell_origin(x, y);
        let got = pixel(cx + l.cell / 2, cy + l.cell / 2);
        let want = heatmap::pe_colour(
            s.busy_cycles as f64 / cycles,
            s.stalled_cycles as f64 / cycles,
        );
        assert_eq!(got, want, "PE({x},{y})");
        seen.push((s.busy_cycles, got));
    }
    seen.sort();
    let (idle, busy) = (seen[0], seen[seen.len() - 1]);
    assert!(busy.0 > idle.0);
    assert_ne!(busy.1, idle.1, "busy and idle PEs look the same");
    // The eastbound link from PE(0,0) carried the wavelets: not the zero-link colour
    // of the westbound one below it.
    let (cx, cy) = l.cell_origin(0, 0);
    let east = pixel(cx + l.cell + 1, cy + 2);
    let west = pixel(cx + l.cell + 1, cy + l.cell - 2);
    assert_ne!(east, west, "link colours");
}
