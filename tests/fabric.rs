//! Multi-PE end-to-end tests: CSL programs under `tests/programs/` that talk over the
//! fabric (routes, colours, data and control tasks, fabric DSDs, switches), compiled and
//! run on both architectures, with answers computed here.

#![allow(clippy::unwrap_used)]

use csl_arch::Arch;
use csl_tests::d2h_u32;
use cslsim::host::{MemcpyDataType, Region, SdkRuntime, Transfer};
use std::path::PathBuf;

const ARCHS: [Arch; 2] = [Arch::Wse2, Arch::Wse3];

fn build(program: &str, arch: Arch, dims: (u32, u32)) -> SdkRuntime {
    build_with(program, arch, dims, &[])
}

/// Builds `program`, launches `start`, and reads the exported `symbol` back (`region`:
/// width, height and words per PE from the rectangle's origin).
fn start_and_read(
    program: &str,
    arch: Arch,
    dims: (u32, u32),
    symbol: &str,
    (w, h, n): (u32, u32, u32),
) -> Vec<u32> {
    run_and_read(&mut build(program, arch, dims), "start", symbol, (w, h, n))
}

/// Launches `func`, reads the exported `symbol` back (`region`: width, height and words
/// per PE from the rectangle's origin) and stops.
fn run_and_read(
    rt: &mut SdkRuntime,
    func: &str,
    symbol: &str,
    (w, h, n): (u32, u32, u32),
) -> Vec<u32> {
    rt.launch(func, &[], false).unwrap();
    let got = d2h_u32(rt, symbol, w, h, n);
    rt.stop().unwrap();
    got
}

/// The error of launching `start` of `program`.
fn start_error(program: &str, arch: Arch, dims: (u32, u32)) -> String {
    match build(program, arch, dims).launch("start", &[], false) {
        Ok(()) => panic!("{arch}: `start` of {program} did not fail"),
        Err(e) => e.to_string(),
    }
}

/// Asserts that the report `err` mentions every one of `parts`.
fn mentions(err: &str, arch: Arch, parts: &[&str]) {
    for p in parts {
        assert!(
            err.contains(p),
            "{arch}: the report must mention `{p}`: {err}"
        );
    }
}

/// Runs `start` of `program` (two PEs on a 9x3 fabric), on each arch, and checks that the
/// second PE's `got` is `want`.
fn pe1_gets(program: &str, want: u32) {
    for arch in ARCHS {
        let got = start_and_read(program, arch, (9, 3), "got", (2, 1, 1));
        assert_eq!(got[1], want, "{arch}");
    }
}

/// The f32 values of the exported array `name` ([`d2h_u32`]).
fn d2h_f32(rt: &mut SdkRuntime, name: &str, w: u32, h: u32, n: u32) -> Vec<f32> {
    d2h_u32(rt, name, w, h, n)
        .into_iter()
        .map(f32::from_bits)
        .collect()
}

/// [`build`] with layout parameters (each run in its own directory).
fn build_with(program: &str, arch: Arch, dims: (u32, u32), params: &[(&str, &str)]) -> SdkRuntime {
    let tag: String = params.iter().map(|(k, v)| format!("-{k}{v}")).collect();
    // Tests run in parallel and some build the same program: one directory per test.
    let test = std::thread::current()
        .name()
        .unwrap_or("main")
        .replace("::", "-");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("fabric-{program}{tag}-{arch}-{test}"));
    csl_tests::compile_to(
        &format!("tests/programs/{program}/layout.csl"),
        arch,
        dims,
        params,
        &dir,
    );
    let mut rt = SdkRuntime::new(&dir).unwrap().with_max_cycles(10_000_000);
    rt.load().unwrap();
    rt.run().unwrap();
    rt
}

#[test]
fn relay_along_a_row_with_alternating_colours() {
    for arch in ARCHS {
        let got = start_and_read("relay", arch, (11, 3), "result", (4, 1, 1));
        assert_eq!(got, vec![100, 101, 102, 103], "{arch}");
    }
}

#[test]
fn fabric_dsd_chain_sums_vectors_along_a_row() {
    for arch in ARCHS {
        let mut rt = build("chain", arch, (11, 3));
        let (w, n) = (4usize, 8usize);
        let v: Vec<f32> = (0..w * n).map(|i| (i as f32) * 0.5 - 3.0).collect();
        let bits: Vec<u32> = v.iter().map(|f| f.to_bits()).collect();
        csl_tests::h2d_u32(&mut rt, "v", &bits, w as u32, 1, n as u32);
        let total = run_and_read(&mut rt, "compute", "total", (w as u32, 1, n as u32));
        // The last PE holds the element-wise sum, added in PE order.
        for k in 0..n {
            let mut expect = 0.0f32;
            for x in 0..w {
                expect = if x == 0 { v[k] } else { expect + v[x * n + k] };
            }
            let got = f32::from_bits(total[(w - 1) * n + k]);
            assert_eq!(got, expect, "{arch} element {k}");
        }
    }
}

#[test]
fn broadcast_down_a_column() {
    for arch in ARCHS {
        let mut rt = build("broadcast", arch, (8, 6));
        let (h, n) = (4u32, 5u32);
        let root: Vec<u32> = (0..n).map(|i| 7 * i + 1).collect();
        csl_tests::h2d_u32(&mut rt, "buf", &root, 1, 1, n);
        let got = run_and_read(&mut rt, "go", "buf", (1, h, n));
        for y in 0..h as usize {
            assert_eq!(
                &got[y * n as usize..(y + 1) * n as usize],
                root.as_slice(),
                "{arch} row {y}"
            );
        }
    }
}

#[test]
fn control_wavelets_advance_a_switch_to_four_neighbours() {
    for arch in ARCHS {
        let got = start_and_read("switches", arch, (10, 5), "got", (3, 3, 1));
        let at = |x: usize, y: usize| got[y * 3 + x];
        assert_eq!(
            (at(2, 1), at(1, 2), at(1, 0), at(0, 1)),
            (10, 11, 12, 13),
            "{arch}: east, south, north, west"
        );
    }
}

#[test]
fn control_wavelet_enters_a_control_task() {
    pe1_gets("control_task", 0x1234);
}

#[test]
fn deadlock_names_the_waiting_pe_and_colour() {
    for arch in ARCHS {
        let err = start_error("deadlock", arch, (9, 3));
        mentions(&err, arch, &["deadlock"]);
        assert!(
            err.contains("PE(1,0)") || err.contains("(1, 0)"),
            "{arch}: report must name PE (1,0): {err}"
        );
        assert!(
            err.contains("colour 2") || err.contains("color 2"),
            "{arch}: report must name the colour: {err}"
        );
        // The receiver's `@mov32(buf_dsd, in_dsd)`, from the image's line table.
        mentions(&err, arch, &["deadlock/pe.csl:20)"]);
    }
}

/// A fabric DSD operation longer than its memory destination (the length set at run time)
/// faults at the operation, naming the PE, the function and the pc.
#[test]
fn fabric_operation_longer_than_its_memory_operand_faults() {
    for arch in ARCHS {
        let err = start_error("dsd_overrun", arch, (9, 3));
        // `dsd_overrun/pe.csl:22`: the receive `@fmovs(dst, in)`, from the image's line
        // table.
        mentions(
            &err,
            arch,
            &[
                "fault on PE(1,0)",
                "function `start`, pc ",
                "dsd_overrun/pe.csl:22, cycle ",
                "fabric DSD operation of 6 elements, but the destination is a memory descriptor of 4",
            ],
        );
    }
}

#[test]
fn range_filter_selects_what_reaches_the_ce() {
    for arch in ARCHS {
        let out = start_and_read("filter", arch, (10, 3), "out", (3, 1, 2));
        // PE 1 sees indices 2..=4 only (data 30, 40, 50); PE 2 sees all eight.
        assert_eq!(&out[2..4], &[3, 120], "{arch}: filtered PE");
        assert_eq!(&out[4..6], &[8, 360], "{arch}: PE behind the filter");
    }
}

#[test]
fn counter_filters_deal_a_stream_out_in_turn() {
    // limit1 = 2, max_counter = 0: the counter cycles 0, 1, 2 and a wavelet reaches the CE
    // when it finds the counter at 0; initial counters 0, 2, 1 give PE 1 wavelets 0 and 3,
    // PE 2 wavelets 1 and 4, PE 3 wavelets 2 and 5 (the pattern of the vendor's 2D FFT
    // transpose). Counting after the decision is what lets a counter start at 0 pass.
    for arch in ARCHS {
        let out = start_and_read("counter_filter", arch, (10, 3), "out", (4, 1, 2));
        assert_eq!(&out[2..], &[10, 40, 20, 50, 30, 60], "{arch}");
    }
}

#[test]
fn fifo_between_two_async_operations() {
    for arch in ARCHS {
        let mut rt = build("fifo", arch, (10, 3));
        let n = 6usize;
        let v: Vec<f32> = (0..n).map(|i| i as f32 * 1.5 - 2.0).collect();
        let bits: Vec<u32> = v.iter().map(|f| f.to_bits()).collect();
        // Only PE 0's vector matters; the others are overwritten or unused.
        csl_tests::h2d_u32(&mut rt, "v", &bits, 1, 1, n as u32);
        let got = run_and_read(&mut rt, "start", "v", (3, 1, n as u32));
        let last: Vec<f32> = got[2 * n..].iter().map(|&b| f32::from_bits(b)).collect();
        let want: Vec<f32> = v.iter().map(|x| x + 1.0).collect();
        assert_eq!(last, want, "{arch}");
    }
}

#[test]
fn wse3_explicit_microthreads() {
    let mut rt = build("microthreads", Arch::Wse3, (9, 3));
    let n = 5u32;
    let x: Vec<u32> = (0..n).map(|i| 100 + i).collect();
    let y: Vec<u32> = (0..n).map(|i| 200 + 3 * i).collect();
    for (name, data) in [("x", &x), ("y", &y)] {
        let id = rt.get_id(name).unwrap();
        rt.h2d(id, data, Region::new(0, 0, 1, 1, n), Transfer::COPY)
            .unwrap();
    }
    rt.launch("start", &[], false).unwrap();
    let gx = d2h_u32(&mut rt, "x", 2, 1, n);
    let gy = d2h_u32(&mut rt, "y", 2, 1, n);
    rt.stop().unwrap();
    assert_eq!(&gx[n as usize..], x.as_slice());
    assert_eq!(&gy[n as usize..], y.as_slice());
}

#[test]
fn dfilt_drops_data_until_control_wavelets_pass() {
    pe1_gets("dfilt", 77);
}

#[test]
fn teardown_handler_runs_and_exits_teardown() {
    for arch in ARCHS {
        let log = start_and_read("teardown", arch, (9, 3), "log", (2, 1, 4));
        // PE 1: both values, in order, and its handler ran; PE 0's handler ran too.
        assert_eq!(&log[4..8], &[11, 22, 1, 2], "{arch}");
        assert_eq!(
            log[2], 1,
            "{arch}: the sender's router also entered teardown"
        );
    }
}

#[test]
fn runtime_dsr_loads_keep_save_address_and_completion() {
    for arch in ARCHS {
        let mut rt = build("dsr_map", arch, (8, 3));
        rt.launch("compute", &[], false).unwrap();
        // The move sets y[3] = x[1] = 10 and its DSR's completion task adds 5 (without
        // the task the launch never completes).
        rt.launch("copy", &[], false).unwrap();
        let y = d2h_f32(&mut rt, "y", 1, 1, 4);
        rt.stop().unwrap();
        // Each @map call continues at the next column of A (save_address), y restarts.
        assert_eq!(y, [321.0, 654.0, 987.0, 15.0], "{arch}");
    }
}

#[test]
fn routes_and_switches_change_at_run_time() {
    use csl_arch::fabric::control::{self, CE_FILTER, NOP, SWITCH_ADV, TEARDOWN};
    // The payloads <memcpy/memcpy_switches> builds: every command CE-filtered, no task.
    let payload = |cmds: &[u8]| {
        (0..control::MAX_CMDS).fold(0x1f << 16, |p, i| {
            control::with_command(p, i, cmds.get(i).copied().unwrap_or(NOP) | CE_FILTER)
        })
    };
    let teardown = payload(&[TEARDOWN]);
    // The value the SDK's allreduce library documents for its teardown wavelet.
    assert_eq!(teardown, 0x09df_9249);
    for arch in ARCHS {
        let mut rt = build("runtime_routes", arch, (10, 3));
        rt.launch("configure", &[], false).unwrap();
        rt.launch("go1", &[], false).unwrap();
        let log = run_and_read(&mut rt, "go2", "log", (3, 1, 8));
        let (pe0, pe1, pe2) = (&log[0..8], &log[8..16], &log[16..24]);
        assert_eq!(
            &pe1[0..2],
            &[11, 1],
            "{arch}: PE 1 received the first value"
        );
        assert_eq!(
            &pe2[0..2],
            &[22, 1],
            "{arch}: the second passed PE 1's position 1"
        );
        // tx RAMP (bit 4), rx WEST (bit 0, shifted by 5).
        assert_eq!(
            pe1[2],
            (1 << 4) | (1 << 5),
            "{arch}: colour configuration word"
        );
        // Position 1: tx EAST (port 1, output side); 2 and 3 invalid (port 5).
        assert_eq!(
            pe1[3],
            1 | (5 << 4) | (5 << 8),
            "{arch}: switch configuration word"
        );
        assert_eq!(pe1[4], 1, "{arch}: current position");
        let want = [
            teardown,
            payload(&[SWITCH_ADV, SWITCH_ADV]),
            payload(&[SWITCH_ADV]),
        ];
        assert_eq!(&pe0[5..8], &want, "{arch}: control payloads");
    }
}

#[test]
fn an_invalid_switch_position_keeps_its_side_bit() {
    // The SDK's allreduce (spmv-hypersparse) turns a `pos1 = .{ .rx = RAMP }` off and on
    // again by rewriting only the port bits of the switch configuration word: the side
    // bit (bit 3, 1 = input) must survive the invalid setting, or position 1 comes back
    // as tx RAMP and the PE's own wavelets never leave (a deadlock).
    let arch = Arch::Wse2;
    let mut rt = build("switch_invalid_keep", arch, (10, 3));
    rt.launch("configure", &[], false).unwrap();
    let log = run_and_read(&mut rt, "go", "log", (3, 1, 5));
    // PE 1 holds the switch, PE 2 receives.
    let (pe0, pe1) = (&log[5..10], &log[10..15]);
    // Position 1: RAMP (port 4) on the input side (bit 3); 2 and 3 invalid; ring mode.
    let loaded = 0xc | (5 << 4) | (5 << 8) | (1 << 12);
    assert_eq!(pe0[2], loaded, "{arch}: the word as loaded");
    assert_eq!(
        pe0[3],
        loaded & !7 | 5,
        "{arch}: position 1 invalid, side kept"
    );
    assert_eq!(pe0[4], loaded, "{arch}: position 1 restored");
    assert_eq!(&pe1[0..2], &[11, 1], "{arch}: PE 1 sent from its RAMP");
}

#[test]
fn operations_on_fabric_dsrs_take_their_queues_microthreads() {
    // spmv-hypersparse issues its receives and sends through explicit DSRs loaded with
    // fabric DSDs: each must run on its queue's microthread, not all on microthread 0.
    let arch = Arch::Wse2;
    let log = run_and_read(
        &mut build("dsr_microthreads", arch, (8, 3)),
        "go",
        "log",
        (1, 1, 2),
    );
    assert_eq!(
        log,
        [77, 1],
        "{arch}: the receive got the value the send sent"
    );
}

#[test]
fn fabout_zero_clears_the_first_source_as_it_is_sent() {
    for arch in ARCHS {
        let mut rt = build("fabout_zero", arch, (9, 3));
        rt.launch("start", &[], false).unwrap();
        let buf = d2h_f32(&mut rt, "buf", 2, 1, 4);
        let keep = d2h_f32(&mut rt, "keep", 2, 1, 4);
        rt.stop().unwrap();
        assert_eq!(&buf[..4], &[0.0; 4], "{arch}: the sender's buf is cleared");
        assert_eq!(
            &keep[..4],
            &[5.0, 6.0, 7.0, 8.0],
            "{arch}: the second source is kept"
        );
        assert_eq!(
            &buf[4..],
            &[6.0, 8.0, 10.0, 12.0],
            "{arch}: the receiver got the sums"
        );
    }
}

/// Copies `values` (16-bit elements) from the host into tensor `name` on PE (`x`, 0).
fn h2d16(rt: &mut SdkRuntime, name: &str, x: u32, values: &[u16]) {
    let id = rt.get_id(name).unwrap();
    let words: Vec<u32> = values.iter().map(|&v| u32::from(v)).collect();
    rt.h2d(
        id,
        &words,
        Region::new(x, 0, 1, 1, values.len() as u32),
        Transfer::COPY.data_type(MemcpyDataType::Bit16),
    )
    .unwrap();
}

/// `n` 16-bit elements of tensor `name` on PE (`x`, 0).
fn d2h16(rt: &mut SdkRuntime, name: &str, x: u32, n: usize) -> Vec<u16> {
    let id = rt.get_id(name).unwrap();
    let mut out = vec![0u32; n];
    rt.d2h(
        &mut out,
        id,
        Region::new(x, 0, 1, 1, n as u32),
        Transfer::COPY.data_type(MemcpyDataType::Bit16),
    )
    .unwrap();
    out.into_iter().map(|v| v as u16).collect()
}

/// One SIMD mode (`mode` = 32, 64 or 96 for simd_32_or_64) of `simd_fabric`: PE 0 packs
/// 11 16-bit values into 6 wavelets (element 2j low, 2j + 1 high, the last high half 0),
/// which PE 1 reads as raw words; then PE 0 sends 6 raw words that PE 1 unpacks into 11
/// values plus 100 (the last word's high half unused).
fn simd_round_trip(mode: &str) {
    let (n, w) = (11usize, 6usize);
    let src: Vec<u16> = (0..n)
        .map(|i| 0x1000 * (i as u16 % 7) + 3 * i as u16 + 1)
        .collect();
    let packed: Vec<u32> = (0..w as u32)
        .map(|j| 0x8000_0000 | (j * 0x0101_0000) | (0xff00 - j * 0x11))
        .collect();
    let mut want_raw = vec![0u32; w];
    for (i, &v) in src.iter().enumerate() {
        want_raw[i / 2] |= u32::from(v) << (16 * (i % 2));
    }
    let want_got: Vec<u16> = (0..n)
        .map(|i| ((packed[i / 2] >> (16 * (i % 2))) as u16).wrapping_add(100))
        .collect();
    for arch in ARCHS {
        let mut rt = build_with("simd_fabric", arch, (9, 3), &[("mode", mode)]);
        h2d16(&mut rt, "src", 0, &src);
        csl_tests::h2d_u32(&mut rt, "packed", &packed, 1, 1, w as u32);
        rt.launch("start", &[], false).unwrap();
        let raw = d2h_u32(&mut rt, "raw", 2, 1, w as u32);
        let got = d2h16(&mut rt, "got", 1, n);
        rt.stop().unwrap();
        assert_eq!(&raw[w..], &want_raw[..], "{arch} mode {mode}: packing");
        assert_eq!(got, want_got, "{arch} mode {mode}: unpacking");
    }
}

#[test]
fn simd_32_packs_two_16_bit_values_per_wavelet() {
    simd_round_trip("32");
}

#[test]
fn simd_64_packs_two_16_bit_values_per_wavelet() {
    simd_round_trip("64");
}

#[test]
fn simd_32_or_64_packs_two_16_bit_values_per_wavelet() {
    simd_round_trip("96");
}

/// `simd_stall`: what PE 1's 4-value SIMD fabin has stored after the first of its two
/// wavelets, and after both.
fn simd_stall(arch: Arch, mode: &str) -> (Vec<u16>, Vec<u16>) {
    let mut rt = build_with("simd_stall", arch, (9, 3), &[("mode", mode)]);
    rt.launch("arm", &[], false).unwrap();
    rt.launch("send_first", &[], false).unwrap();
    let early = d2h16(&mut rt, "got", 1, 4);
    rt.launch("send_second", &[], false).unwrap();
    let late = d2h16(&mut rt, "got", 1, 4);
    rt.stop().unwrap();
    (early, late)
}

#[test]
fn simd_64_steps_wait_for_both_wavelets() {
    let all = vec![0x1111, 0x2222, 0x3333, 0x4444];
    for arch in ARCHS {
        let (early, late) = simd_stall(arch, "32");
        assert_eq!(
            early,
            [0x1111, 0x2222, 0, 0],
            "{arch} simd_32 after one wavelet"
        );
        assert_eq!(late, all, "{arch} simd_32");
        let (early, late) = simd_stall(arch, "64");
        assert_eq!(early, [0; 4], "{arch} simd_64 after one wavelet");
        assert_eq!(late, all, "{arch} simd_64");
    }
}

#[test]
fn control_transform_carries_a_control_wavelet_through_memory() {
    let payload: u32 = (40 << 16) | 0x1234;
    for arch in ARCHS {
        let mut rt = build("control_transform", arch, (9, 3));
        rt.launch("start", &[], false).unwrap();
        let words = d2h_u32(&mut rt, "words", 3, 1, 3);
        let got = d2h_u32(&mut rt, "got", 3, 1, 2);
        let ctl = d2h_u32(&mut rt, "ctl", 3, 1, 2);
        rt.stop().unwrap();
        assert_eq!(
            &words[3..6],
            &[0x11, payload | 0xc000_0000, 0x22],
            "{arch}: PE 1 stores the control wavelet as a marked word"
        );
        assert_eq!(&got[4..6], &[0x11, 0x22], "{arch}: PE 2 gets the data");
        assert_eq!(
            &ctl[4..6],
            &[payload, 1],
            "{arch}: PE 2's control task gets the original payload, once"
        );
        assert_eq!(
            &ctl[..4],
            &[0; 4],
            "{arch}: no control task ran on PEs 0 and 1"
        );
    }
}

#[test]
fn wse3_message_passing_routes_by_header() {
    let (w, h, n) = (4usize, 3usize, 24usize);
    let got = run_and_read(
        &mut build("message_passing", Arch::Wse3, (11, 5)),
        "start",
        "res",
        (w as u32, h as u32, n as u32),
    );
    let at = |x: usize, y: usize| &got[(y * w + x) * n..(y * w + x + 1) * n];
    let a1: Vec<u32> = (0..5).map(|i| 1000 + 7 * i).collect();
    let a2: Vec<u32> = (0..3).map(|i| 2000 + i).collect();
    let b: Vec<u32> = (0..4).map(|i| 3000 + 11 * i).collect();
    let c: Vec<u32> = vec![5, 6, 0xffff, 9];
    let d: Vec<u32> = (0..6).map(|i| 4000 + i).collect();
    let padded = |v: &[u32], len: usize| {
        let mut p = v.to_vec();
        p.resize(len, 0);
        p
    };
    // The sender's `sent` task (on_term activate of its first message) wrote 77.
    assert_eq!(at(1, 0), padded(&[77], n).as_slice());
    // (0,2): B, received with on_term unblock; (2,1): C, 16-bit elements.
    assert_eq!(at(0, 2), padded(&b, n).as_slice());
    assert_eq!(at(2, 1), padded(&c, n).as_slice());
    // (3,2): three whole messages in arrival order; A1 before A2 (same sender and path).
    let slots: Vec<Vec<u32>> = at(3, 2)
        .chunks(8)
        .map(|s| s.iter().copied().take_while(|&v| v != 0).collect())
        .collect();
    let pos = |m: &Vec<u32>| slots.iter().position(|s| s == m);
    let (p1, p2, pd) = (pos(&a1), pos(&a2), pos(&d));
    assert!(p1.is_some() && p2.is_some() && pd.is_some(), "{slots:?}");
    assert!(p1 < p2, "{slots:?}");
    // Every other PE is untouched.
    for y in 0..h {
        for x in 0..w {
            if ![(1, 0), (0, 2), (2, 1), (3, 2)].contains(&(x, y)) {
                assert_eq!(at(x, y), vec![0; n].as_slice(), "({x},{y})");
            }
        }
    }
}
#[test]
fn wse3_message_lost_at_a_pe_without_message_passing_is_a_fault() {
    use cslsim::error::{RoutingError, SimError};
    use cslsim::host::HostError;
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fabric-message_passing-hole");
    csl_tests::compile_to(
        "tests/programs/message_passing/layout.csl",
        Arch::Wse3,
        (11, 5),
        &[("hole", "true")],
        &dir,
    );
    let mut rt = SdkRuntime::new(&dir).unwrap().with_max_cycles(1_000_000);
    rt.load().unwrap();
    rt.run().unwrap();
    let err = rt.launch("start", &[], false).unwrap_err();
    let HostError::Sim(SimError::Routing {
        pe, color, kind, ..
    }) = err
    else {
        panic!("expected a routing fault, got {err}");
    };
    assert_eq!((pe.rel.x, pe.rel.y, color), (2, 0, 14));
    assert_eq!(
        kind,
        RoutingError::MessagePassingOff {
            from: csl_arch::fabric::Direction::West
        }
    );
}

#[test]
fn tally_library_counts_to_the_corner() {
    for arch in ARCHS {
        let got = run_and_read(
            &mut build("tally", arch, (10, 4)),
            "go",
            "result",
            (3, 1, 2),
        );
        // Row 0, row-major: the corner (x = 2) holds the total 1+2+3 + 2+4+6 = 18, once.
        assert_eq!(&got[4..6], &[18, 1], "{arch}");
    }
}

/// Runs `script` on `program` (built once per arch) with 1, 2 and 3 threads, every phase
/// split among them however few PEs have work, and checks that what the host sees, the
/// error text of a failed command, the cycle count and every statistic are identical.
fn same_for_every_thread_count(
    program: &str,
    arch: Arch,
    dims: (u32, u32),
    params: &[(&str, &str)],
    script: impl Fn(&mut SdkRuntime) -> String,
) {
    // Every phase split (threshold 0), with the persistent batches of SIMULATOR.md §12.7
    // (the default) and with a hand-over per phase.
    let run = |threads: usize, persistent: bool| {
        let rt = build_with(program, arch, dims, params);
        let mut rt = rt
            .with_threads(threads)
            .with_split_threshold(0)
            .with_persistent(persistent);
        let shown = script(&mut rt);
        let sim = rt.simulator().unwrap();
        let mems: Vec<Vec<u8>> = sim.pes().iter().map(|p| p.memory().to_vec()).collect();
        (shown, sim.cycle(), sim.stats(), mems, sim.log_lines())
    };
    let one = run(1, true);
    for threads in [2, 3] {
        for persistent in [true, false] {
            assert!(
                run(threads, persistent) == one,
                "{program} on {arch}: {threads} threads (persistent {persistent}) differ from 1"
            );
        }
    }
}

#[test]
fn fabric_programs_run_identically_on_every_thread_count() {
    for arch in ARCHS {
        same_for_every_thread_count("relay", arch, (11, 3), &[], |rt| {
            let r = rt.launch("start", &[], false);
            format!("{r:?} {:?}", d2h_u32(rt, "result", 4, 1, 1))
        });
        same_for_every_thread_count("switches", arch, (10, 5), &[], |rt| {
            let r = rt.launch("start", &[], false);
            format!("{r:?} {:?}", d2h_u32(rt, "got", 3, 3, 1))
        });
        same_for_every_thread_count("tally", arch, (10, 4), &[], |rt| {
            let r = rt.launch("go", &[], false);
            format!("{r:?} {:?}", d2h_u32(rt, "result", 3, 1, 2))
        });
        same_for_every_thread_count("chain", arch, (11, 3), &[], |rt| {
            let bits: Vec<u32> = (0..32).map(|i| (i as f32 * 0.5 - 3.0).to_bits()).collect();
            csl_tests::h2d_u32(rt, "v", &bits, 4, 1, 8);
            let r = rt.launch("compute", &[], false);
            format!("{r:?} {:?}", d2h_u32(rt, "total", 4, 1, 8))
        });
        // A deadlock report.
        same_for_every_thread_count("deadlock", arch, (9, 3), &[], |rt| {
            format!("{:?}", rt.launch("start", &[], false))
        });
    }
    same_for_every_thread_count("message_passing", Arch::Wse3, (11, 5), &[], |rt| {
        let r = rt.launch("start", &[], false);
        format!("{r:?} {:?}", d2h_u32(rt, "res", 4, 3, 24))
    });
    // A routing fault.
    same_for_every_thread_count(
        "message_passing",
        Arch::Wse3,
        (11, 5),
        &[("hole", "true")],
        |rt| format!("{:?}", rt.launch("start", &[], false)),
    );
}
