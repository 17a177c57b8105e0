//! Timelines of a run for ui.perfetto.dev and chrome://tracing (`cslsim --perfetto FILE`):
//! the Chrome trace-event JSON format, one process per PE (`PE(x,y)`) with these threads:
//!
//! * `tasks`: one complete (`X`) span per task, named after the function bound to the task
//!   (the image's function name; `task@ID` if none), with the synchronous DSD operations
//!   that held the task as spans nested inside;
//! * `microthread U`: the asynchronous DSD operations of microthread `U`;
//! * `stalls`: the stretches of cycles in which the PE had a running task or microthread
//!   but could not progress (the `stalled_cycles` of `sim_stats.json`);
//! * `router out` / `router in`: one-cycle spans where a sampled wavelet left or reached
//!   the PE's router, joined by flow arrows (`s` / `f` events) from sender to receiver;
//!
//! and a counter (`C` events) `CE input queue` per PE with the depth of each CE input
//! queue (`qN`: colour N on WSE-2, queue N on WSE-3), sampled after every cycle in which
//! the PE's compute engine ran.
//!
//! Time: one microsecond on the trace's time axis is one simulated cycle.
//!
//! Recording: each recorded PE (those in the [`PeRect`] filter) keeps its own events while
//! the fabric runs (a PE is stepped by one thread at a time, so recording is
//! deterministic for any thread count); [`build`] merges them in PE order. A PE outside the
//! filter has no recorder and pays nothing; with the option off no PE has one. Recording
//! only observes: results are the same with and without it.
//!
//! Flow arrows are sampled: a wavelet hop (one copy sent on one link, between two PEs of
//! the filter) is drawn iff its ordinal (counting from 1) among the hops its sending PE
//! made is a multiple of `S`, the smallest power of two for which at most
//! [`PerfettoConfig::max_flows`] hops are drawn in the whole run.

use crate::class::Class;
use crate::pe::Pe;
use crate::router::Geometry;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::Path;

/// Default cap on drawn flow arrows per run ([`PerfettoConfig::max_flows`]).
pub const DEFAULT_MAX_FLOWS: usize = 10_000;

/// Most spans, or counter samples, one PE keeps of each kind (later ones are dropped and
/// counted in the trace's `otherData.dropped_events`).
pub const MAX_EVENTS_PER_PE: usize = 1 << 20;

/// A rectangle of PEs, rectangle-relative coordinates, both corners included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeRect {
    /// Leftmost column.
    pub x0: u32,
    /// Top row.
    pub y0: u32,
    /// Rightmost column.
    pub x1: u32,
    /// Bottom row.
    pub y1: u32,
}

impl PeRect {
    /// Every PE.
    pub const ALL: PeRect = PeRect {
        x0: 0,
        y0: 0,
        x1: u32::MAX,
        y1: u32::MAX,
    };

    /// Parses `X0,Y0:X1,Y1` (corners included, in any order) or `X,Y` (one PE).
    pub fn parse(s: &str) -> Result<PeRect, String> {
        let point = |p: &str| -> Result<(u32, u32), String> {
            let (x, y) = p
                .split_once(',')
                .ok_or_else(|| format!("`{p}` is not `X,Y`"))?;
            let num = |v: &str| {
                v.trim()
                    .parse::<u32>()
                    .map_err(|_| format!("`{}` in `{p}` is not a PE coordinate", v.trim()))
            };
            Ok((num(x)?, num(y)?))
        };
        let (a, b) = match s.split_once(':') {
            Some((a, b)) => (point(a)?, point(b)?),
            None => {
                let a = point(s)?;
                (a, a)
            }
        };
        Ok(PeRect {
            x0: a.0.min(b.0),
            y0: a.1.min(b.1),
            x1: a.0.max(b.0),
            y1: a.1.max(b.1),
        })
    }

    /// Whether the PE at `(x, y)` is in the rectangle.
    pub fn contains(&self, x: u32, y: u32) -> bool {
        (self.x0..=self.x1).contains(&x) && (self.y0..=self.y1).contains(&y)
    }
}

/// What [`crate::Simulator::set_perfetto`] records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PerfettoConfig {
    /// The PEs recorded.
    pub pes: PeRect,
    /// Most flow arrows (wavelet hops) drawn in the whole run.
    pub max_flows: usize,
}

impl Default for PerfettoConfig {
    fn default() -> PerfettoConfig {
        PerfettoConfig {
            pes: PeRect::ALL,
            max_flows: DEFAULT_MAX_FLOWS,
        }
    }
}

/// Slot of the main thread's synchronous DSD operation among a recorder's open operations
/// (slots `0..MICROTHREADS` are the microthreads).
pub(crate) const MAIN_SLOT: usize = crate::pe::MICROTHREADS;

#[derive(Clone, Copy, Debug)]
struct TaskSpan {
    start: u64,
    end: u64,
    id: u8,
    func: u32,
}

#[derive(Clone, Copy, Debug)]
struct OpSpan {
    start: u64,
    end: u64,
    slot: u8,
    name: &'static str,
}

#[derive(Clone, Copy, Debug)]
struct Flow {
    seq: u64,
    sent: u64,
    arrives: u64,
    to: u32,
    dir: u8,
    color: u8,
    data: u32,
}

/// The events of one PE, recorded while the fabric runs.
#[derive(Clone, Debug)]
pub(crate) struct PeRecorder {
    rect: PeRect,
    max_flows: usize,
    tasks: Vec<TaskSpan>,
    open_task: Option<TaskSpan>,
    ops: Vec<OpSpan>,
    open_ops: [Option<OpSpan>; MAIN_SLOT + 1],
    stalls: Vec<(u64, u64)>,
    stall_since: Option<u64>,
    /// `(cycle, queue, depth)`.
    depths: Vec<(u64, u8, u8)>,
    last_depth: Vec<u8>,
    flows: Vec<Flow>,
    /// Hops into the filter sent so far (a hop's `seq` is its ordinal minus one).
    flow_seq: u64,
    /// Only hops whose ordinal is a multiple of this are kept (a power of two).
    stride: u64,
    dropped: u64,
}

/// Appends `e` unless `v` is full (then counts it as dropped).
fn push_capped<T>(v: &mut Vec<T>, e: T, dropped: &mut u64) {
    if v.len() < MAX_EVENTS_PER_PE {
        v.push(e);
    } else {
        *dropped += 1;
    }
}

impl PeRecorder {
    pub(crate) fn new(cfg: &PerfettoConfig, queues: usize) -> PeRecorder {
        PeRecorder {
            rect: cfg.pes,
            max_flows: cfg.max_flows,
            tasks: Vec::new(),
            open_task: None,
            ops: Vec::new(),
            open_ops: [None; MAIN_SLOT + 1],
            stalls: Vec::new(),
            stall_since: None,
            depths: Vec::new(),
            last_depth: vec![0; queues],
            flows: Vec::new(),
            flow_seq: 0,
            stride: 1,
            dropped: 0,
        }
    }

    /// A DSD operation started on `slot` (a microthread or [`MAIN_SLOT`]) in cycle `now`.
    #[cold]
    #[inline(never)]
    pub(crate) fn op_start(&mut self, slot: usize, name: &'static str, now: u64) {
        if let Some(s) = self.open_ops.get_mut(slot) {
            *s = Some(OpSpan {
                start: now,
                end: now,
                slot: slot as u8,
                name,
            });
        }
    }

    /// The operation on `slot` finished in cycle `now`.
    #[cold]
    #[inline(never)]
    pub(crate) fn op_end(&mut self, slot: usize, now: u64) {
        if let Some(mut op) = self.open_ops.get_mut(slot).and_then(Option::take) {
            op.end = now + 1;
            push_capped(&mut self.ops, op, &mut self.dropped);
        }
    }

    /// What the compute engine of `pe` did in cycle `now` (after its tick): task starts
    /// and ends, stalls, queue depths.
    #[cold]
    #[inline(never)]
    pub(crate) fn after_tick(&mut self, pe: &Pe, progressed: bool, started: Option<u8>, now: u64) {
        if pe.task.is_none()
            && let Some(mut t) = self.open_task.take()
        {
            t.end = now + 1;
            push_capped(&mut self.tasks, t, &mut self.dropped);
        }
        if let Some(id) = started {
            if let Some(mut t) = self.open_task.take() {
                t.end = now;
                push_capped(&mut self.tasks, t, &mut self.dropped);
            }
            self.open_task = Some(TaskSpan {
                start: now,
                end: now,
                id,
                func: pe.cur.func,
            });
        }
        let stalled = !progressed && (pe.task.is_some() || pe.ut_busy != 0);
        match (stalled, self.stall_since) {
            (true, None) => self.stall_since = Some(now),
            (false, Some(s)) => {
                self.stall_since = None;
                push_capped(&mut self.stalls, (s, now), &mut self.dropped);
            }
            _ => {}
        }
        for (b, ring) in pe.inq.iter().enumerate() {
            let d = ring.len().min(usize::from(u8::MAX)) as u8;
            if let Some(last) = self.last_depth.get_mut(b)
                && *last != d
            {
                *last = d;
                push_capped(&mut self.depths, (now, b as u8, d), &mut self.dropped);
            }
        }
    }

    /// Router `p` sent copies of a wavelet (colour `color`, payload `data`) on the link
    /// ports `links` (bits 0..=3, [`crate::router`] order) in cycle `now`.
    #[cold]
    #[inline(never)]
    pub(crate) fn sends(
        &mut self,
        p: usize,
        links: u8,
        geo: &Geometry,
        now: u64,
        color: u8,
        data: u32,
    ) {
        let w = geo.width.max(1) as usize;
        let mut m = links;
        while m != 0 {
            let d = m.trailing_zeros() as usize;
            m &= m - 1;
            let Some(q) = geo.neighbour(p, d) else {
                continue;
            };
            if !self.rect.contains((q % w) as u32, (q / w) as u32) {
                continue;
            }
            let seq = self.flow_seq;
            self.flow_seq += 1;
            if !(seq + 1).is_multiple_of(self.stride) {
                continue;
            }
            self.flows.push(Flow {
                seq,
                sent: now,
                arrives: now + geo.hop,
                to: q as u32,
                dir: d as u8,
                color,
                data,
            });
            if self.flows.len() > self.max_flows {
                self.stride = self.stride.saturating_mul(2);
                let s = self.stride;
                self.flows.retain(|f| (f.seq + 1).is_multiple_of(s));
            }
        }
    }
}

/// Thread ids within a PE's process.
const TID_TASKS: u32 = 1;
const TID_STALLS: u32 = 2;
const TID_ROUTER_OUT: u32 = 3;
const TID_ROUTER_IN: u32 = 4;
/// Microthread `u` is thread `TID_MICROTHREAD + u`.
const TID_MICROTHREAD: u32 = 10;

/// Arguments of an event.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum Args {
    /// A metadata event's name (`process_name`, `thread_name`).
    Name {
        /// The name.
        name: String,
    },
    /// A metadata event's sort index.
    SortIndex {
        /// The index.
        sort_index: u64,
    },
    /// A task span.
    Task {
        /// The task id.
        task_id: u8,
    },
    /// A DSD operation span.
    Dsd {
        /// `main` (synchronous) or the microthread number.
        thread: String,
    },
    /// A flow arrow (one wavelet hop).
    Wavelet {
        /// The colour.
        colour: u8,
        /// The direction it left the sender in.
        direction: &'static str,
        /// The payload, in hex.
        data: String,
    },
    /// Counter values (one series per key).
    Counter(BTreeMap<String, u64>),
}

/// One trace event (Chrome trace-event format).
#[derive(Clone, Debug, Serialize)]
pub struct Event {
    /// Name shown in the UI.
    pub name: String,
    /// Category.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cat: Option<&'static str>,
    /// Phase: `M` metadata, `X` complete span, `s`/`f` flow start/end, `C` counter.
    pub ph: &'static str,
    /// Start, in microseconds (= cycles).
    pub ts: u64,
    /// Duration of an `X` span.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dur: Option<u64>,
    /// Process: the PE's row-major index plus one.
    pub pid: u32,
    /// Thread within the PE.
    pub tid: u32,
    /// Flow id (`s` and `f`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    /// Binding point of a flow end (`e`: the enclosing span).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bp: Option<&'static str>,
    /// Arguments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<Args>,
}

/// Facts about the run kept in the trace (`otherData`).
#[derive(Clone, Debug, Serialize)]
pub struct OtherData {
    /// `cslsim`.
    pub generator: &'static str,
    /// What one unit of the time axis is.
    pub time_unit: &'static str,
    /// Simulated cycles of the run.
    pub cycles: u64,
    /// The recorded rectangle, `x0,y0:x1,y1` (clipped to the program rectangle).
    pub pes: String,
    /// Wavelet hops between recorded PEs.
    pub wavelet_hops: u64,
    /// Hops drawn as flow arrows.
    pub flows_drawn: u64,
    /// One hop in this many (per sending PE) is drawn.
    pub flow_stride: u64,
    /// Spans and samples dropped past [`MAX_EVENTS_PER_PE`].
    pub dropped_events: u64,
}

/// A trace document: `{"traceEvents": [...], "otherData": {...}}`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PerfettoTrace {
    /// The events: metadata first, then each recorded PE's, in PE order.
    pub trace_events: Vec<Event>,
    /// Facts about the run.
    pub other_data: OtherData,
}

impl PerfettoTrace {
    /// Writes the trace as JSON to `path`.
    pub fn write(&self, path: &Path) -> Result<(), crate::error::WriteError> {
        let err = |source| crate::error::WriteError {
            path: path.to_path_buf(),
            source,
        };
        let file = std::fs::File::create(path).map_err(err)?;
        let mut out = std::io::BufWriter::new(file);
        serde_json::to_writer(&mut out, self).map_err(|e| err(std::io::Error::from(e)))?;
        out.write_all(b"\n").map_err(err)?;
        out.flush().map_err(err)
    }
}

fn meta(name: &str, pid: u32, tid: u32, args: Args) -> Event {
    Event {
        name: name.into(),
        cat: None,
        ph: "M",
        ts: 0,
        dur: None,
        pid,
        tid,
        id: None,
        bp: None,
        args: Some(args),
    }
}

fn span(name: String, cat: &'static str, pid: u32, tid: u32, start: u64, end: u64) -> Event {
    Event {
        name,
        cat: Some(cat),
        ph: "X",
        ts: start,
        dur: Some(end.saturating_sub(start)),
        pid,
        tid,
        id: None,
        bp: None,
        args: None,
    }
}

const DIR_NAMES: [&str; 4] = ["NORTH", "SOUTH", "EAST", "WEST"];

/// The trace of the PEs of `pes` (row-major, `width` wide), `now` being the current cycle
/// (spans still open end there).
pub(crate) fn build(
    pes: &[Pe],
    classes: &[Class],
    width: u32,
    height: u32,
    now: u64,
) -> PerfettoTrace {
    let w = width.max(1) as usize;
    let pid = |i: usize| i as u32 + 1;
    let mut events = Vec::new();
    let mut dropped = 0u64;
    // Flow sampling: the smallest power-of-two stride (at least every PE's own) that keeps
    // at most `max_flows` hops.
    let recs: Vec<(usize, &PeRecorder)> = pes
        .iter()
        .enumerate()
        .filter_map(|(i, pe)| pe.perf.as_deref().map(|r| (i, r)))
        .collect();
    let max_flows = recs.first().map_or(DEFAULT_MAX_FLOWS, |(_, r)| r.max_flows) as u64;
    let mut stride = recs.iter().map(|(_, r)| r.stride).max().unwrap_or(1);
    loop {
        let n: u64 = recs
            .iter()
            .map(|(_, r)| {
                r.flows
                    .iter()
                    .filter(|f| (f.seq + 1).is_multiple_of(stride))
                    .count() as u64
            })
            .sum();
        if n <= max_flows || stride >= 1 << 62 {
            break;
        }
        stride *= 2;
    }
    let hops: u64 = recs.iter().map(|(_, r)| r.flow_seq).sum();
    // Where sampled wavelets leave and arrive: one-cycle router spans to bind arrows to.
    let mut outs: BTreeMap<usize, BTreeSet<u64>> = BTreeMap::new();
    let mut ins: BTreeMap<usize, BTreeSet<u64>> = BTreeMap::new();
    for (i, r) in &recs {
        for f in r
            .flows
            .iter()
            .filter(|f| (f.seq + 1).is_multiple_of(stride))
        {
            outs.entry(*i).or_default().insert(f.sent);
            ins.entry(f.to as usize).or_default().insert(f.arrives);
        }
    }
    // Metadata: names and order of processes and threads.
    for (i, r) in &recs {
        let (x, y) = (i % w, i / w);
        let p = pid(*i);
        events.push(meta(
            "process_name",
            p,
            0,
            Args::Name {
                name: format!("PE({x},{y})"),
            },
        ));
        events.push(meta(
            "process_sort_index",
            p,
            0,
            Args::SortIndex {
                sort_index: *i as u64,
            },
        ));
        let mut threads = vec![
            (TID_TASKS, "tasks".to_string()),
            (TID_STALLS, "stalls".into()),
        ];
        if outs.contains_key(i) {
            threads.push((TID_ROUTER_OUT, "router out".into()));
        }
        if ins.contains_key(i) {
            threads.push((TID_ROUTER_IN, "router in".into()));
        }
        let mut uts = 0u8;
        for op in r.ops.iter().chain(r.open_ops.iter().flatten()) {
            if usize::from(op.slot) < MAIN_SLOT {
                uts |= 1 << op.slot;
            }
        }
        for u in 0..8u32 {
            if uts >> u & 1 == 1 {
                threads.push((TID_MICROTHREAD + u, format!("microthread {u}")));
            }
        }
        for (tid, name) in threads {
            events.push(meta("thread_name", p, tid, Args::Name { name }));
            events.push(meta(
                "thread_sort_index",
                p,
                tid,
                Args::SortIndex {
                    sort_index: u64::from(tid),
                },
            ));
        }
    }
    let mut next_flow = 0u64;
    for (i, r) in &recs {
        let p = pid(*i);
        dropped += r.dropped;
        let class = pes.get(*i).and_then(|pe| classes.get(pe.class));
        let task_name = |t: &TaskSpan| {
            class
                .and_then(|c| c.functions().get(t.func as usize))
                .map_or_else(|| format!("task@{}", t.id), |f| f.name.clone())
        };
        let open_task = r.open_task.map(|mut t| {
            t.end = now.max(t.start);
            t
        });
        for t in r.tasks.iter().chain(open_task.iter()) {
            let mut e = span(task_name(t), "task", p, TID_TASKS, t.start, t.end);
            e.args = Some(Args::Task { task_id: t.id });
            events.push(e);
        }
        let open_ops = r.open_ops.iter().flatten().map(|o| OpSpan {
            end: now.max(o.start),
            ..*o
        });
        for o in r.ops.iter().copied().chain(open_ops) {
            let (tid, thread) = if usize::from(o.slot) == MAIN_SLOT {
                (TID_TASKS, "main".to_string())
            } else {
                (TID_MICROTHREAD + u32::from(o.slot), o.slot.to_string())
            };
            let mut e = span(format!("@{}", o.name), "dsd", p, tid, o.start, o.end);
            e.args = Some(Args::Dsd { thread });
            events.push(e);
        }
        let open_stall = r.stall_since.map(|s| (s, now.max(s)));
        for &(s, e) in r.stalls.iter().chain(open_stall.iter()) {
            events.push(span("stalled".into(), "stall", p, TID_STALLS, s, e));
        }
        for &(t, b, d) in &r.depths {
            let mut values = BTreeMap::new();
            values.insert(format!("q{b}"), u64::from(d));
            events.push(Event {
                name: "CE input queue".into(),
                cat: Some("queue"),
                ph: "C",
                ts: t,
                dur: None,
                pid: p,
                tid: 0,
                id: None,
                bp: None,
                args: Some(Args::Counter(values)),
            });
        }
        for &t in outs.get(i).into_iter().flatten() {
            events.push(span("send".into(), "wavelet", p, TID_ROUTER_OUT, t, t + 1));
        }
        for &t in ins.get(i).into_iter().flatten() {
            events.push(span("arrive".into(), "wavelet", p, TID_ROUTER_IN, t, t + 1));
        }
        for f in r
            .flows
            .iter()
            .filter(|f| (f.seq + 1).is_multiple_of(stride))
        {
            let id = next_flow;
            next_flow += 1;
            let name = format!("wavelet c{}", f.color);
            let args = Args::Wavelet {
                colour: f.color,
                direction: DIR_NAMES.get(usize::from(f.dir)).copied().unwrap_or("?"),
                data: format!("0x{:08x}", f.data),
            };
            events.push(Event {
                name: name.clone(),
                cat: Some("wavelet"),
                ph: "s",
                ts: f.sent,
                dur: None,
                pid: p,
                tid: TID_ROUTER_OUT,
                id: Some(id),
                bp: None,
                args: Some(args.clone()),
            });
            events.push(Event {
                name,
                cat: Some("wavelet"),
                ph: "f",
                ts: f.arrives,
                dur: None,
                pid: pid(f.to as usize),
                tid: TID_ROUTER_IN,
                id: Some(id),
                bp: Some("e"),
                args: Some(args),
            });
        }
    }
    let rect = recs.first().map_or(PeRect::ALL, |(_, r)| r.rect);
    let clip = |v: u32, n: u32| v.min(n.saturating_sub(1));
    PerfettoTrace {
        trace_events: events,
        other_data: OtherData {
            generator: "cslsim",
            time_unit: "1 us = 1 simulated cycle",
            cycles: now,
            pes: format!(
                "{},{}:{},{}",
                clip(rect.x0, width),
                clip(rect.y0, height),
                clip(rect.x1, width),
                clip(rect.y1, height)
            ),
            wavelet_hops: hops,
            flows_drawn: next_flow,
            flow_stride: stride,
            dropped_events: dropped,
        },
    }
}
