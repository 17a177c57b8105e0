//! The fabric: every PE and router of the program rectangle, a global clock, the loop that
//! advances them together, host-side wavelet streams, deadlock reports and statistics.
//!
//! # One cycle
//!
//! 1. Host streams (streaming `memcpy`) inject or collect at most one wavelet per PE.
//! 2. Every router on the router worklist moves wavelets ([`crate::router`]).
//! 3. Every PE on the PE worklist runs its compute engine for one cycle (module `ce`).
//!
//! Worklists are visited in ascending PE index (row-major), so runs are deterministic.
//! Idle routers and PEs cost nothing: an entity stays on its worklist only while it makes
//! progress or waits for a wavelet already in flight; otherwise it sleeps until something
//! it depends on changes (a wavelet pushed into one of its buffers, a slot freed in a
//! buffer it feeds, a host command). Every wake-up takes effect in the next cycle. A cycle
//! in which nothing moved and nothing is in flight did not happen: the clock does not
//! advance, and [`Simulator::run_until`] returns [`RunEnd::Idle`].
//!
//! PEs outside the program rectangle are not simulated.

use crate::ce::{self, CeOut};
use crate::class::Class;
use crate::dist::DistSlot;
use crate::dsd::{DsdExec, Env};
use crate::error::{
    PeLoc, RoutingError, SimError, Stuck, StuckPlace, StuckWhy, WaitOn, WaitReason, Waiting,
};
use crate::par::{self, ChunkWords, for_bits};
use crate::params::SimParams;
use crate::pe::{HostCall, NO_QUEUE, Pe};
use crate::perfetto::{PeRecorder, PerfettoConfig, PerfettoTrace};
use crate::ring::Wavelet;
use crate::router::{Chunk, Geometry, Move, RAMP, Router, RouterPlan, dir_of};
pub use crate::stats::{PeStats, RunStats};
use crate::trace::Tracer;
use crate::worklist::{Timers, WorkSet, set_bit};
use csl_arch::fabric::{Arch, NUM_COLORS, PeCoord};
use csl_arch::image::{ColorConfig, Image, ImageError, SECTION_ROUTES};
use csl_arch::isa::Op;
use std::sync::Arc;

/// How [`Simulator::run_until`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunEnd {
    /// The condition held.
    Condition,
    /// Nothing could progress before the condition held.
    Idle,
}

/// One PE of a streaming `memcpy_h2d`.
#[derive(Clone, Debug)]
struct H2dPe {
    /// The PE's index.
    pe: usize,
    words: Vec<u32>,
    /// Wavelets that have left the host (into the memcpy path).
    sent: usize,
    /// Wavelets that have entered the PE's CE input buffer.
    delivered: usize,
}

/// A streaming `memcpy_h2d`: the command is complete once every wavelet has left the host
/// (`pending`, the number of PEs with wavelets still at the host, is 0); the stream lives
/// on until the memcpy path has delivered them all (`SimParams::h2d_path_depth`).
#[derive(Clone, Debug)]
struct H2d {
    color: u8,
    start: u64,
    /// In ascending PE index.
    pes: Vec<H2dPe>,
    pending: usize,
}

impl H2d {
    /// Whether wavelets of this stream for PE `i` have not reached its CE yet.
    fn holds(&self, i: usize) -> bool {
        self.pes
            .binary_search_by_key(&i, |e| e.pe)
            .ok()
            .and_then(|k| self.pes.get(k))
            .is_some_and(|e| e.delivered < e.words.len())
    }

    /// Whether every wavelet has reached its CE.
    fn delivered(&self) -> bool {
        self.pes.iter().all(|e| e.delivered == e.words.len())
    }
}

/// A streaming `memcpy_d2h` in progress: per PE, the wavelets collected and how many are
/// wanted.
#[derive(Clone, Debug)]
struct D2h {
    color: u8,
    start: u64,
    pes: Vec<(usize, Vec<u32>, usize)>,
    pending: usize,
}

/// A host callback polled while the fabric runs ([`Simulator::set_interrupt`]): returning
/// `true` stops the run with [`SimError::Interrupted`]. The Python binding uses it to
/// notice Ctrl-C.
#[derive(Clone)]
pub struct InterruptCheck(pub std::sync::Arc<dyn Fn() -> bool + Send + Sync>);

impl std::fmt::Debug for InterruptCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InterruptCheck")
    }
}

/// Loop iterations (cycles, or clock jumps) between two polls of the interrupt check.
const INTERRUPT_POLL: u32 = 4096;

/// Estimated simulator bytes per PE besides its memory pages (the PE and router records,
/// CE input buffers, registers).
const PE_OVERHEAD_BYTES: u64 = 4096;

/// The simulated program rectangle.
#[derive(Clone, Debug)]
pub struct Simulator {
    arch: Arch,
    params: SimParams,
    env: Env,
    classes: Vec<Class>,
    pes: Vec<Pe>,
    routers: Vec<Router>,
    width: u32,
    height: u32,
    cycle: u64,
    /// Routers and PEs to visit next cycle (the CEs: after this cycle's routers).
    router_next: WorkSet,
    ce_next: WorkSet,
    /// The sets being visited (empty between phases; swapped with the next ones).
    router_cur: WorkSet,
    ce_cur: WorkSet,
    /// Reused buffers of the router phase.
    plans: Vec<RouterPlan>,
    moves: Vec<Move>,
    /// Per-chunk planning buffers, reused every cycle.
    plan_outs: Vec<PlanOut>,
    /// PEs sleeping through a stall (off the CE worklist) and when each wakes.
    sleepers: Timers,
    /// How many PEs sleep (each counts as busy in every cycle until it wakes).
    sleeping: usize,
    /// Reused per-chunk worklist words of a split phase.
    chunk_words: Vec<ChunkWords>,
    /// Sleeper lists of finished CE chunks, cleared, for the next cycle's chunks (the step
    /// path; a batch keeps one per part).
    sleep_bufs: Vec<Vec<(u64, u32)>>,
    /// Threads that step the fabric (1: the caller's thread only).
    threads: usize,
    /// Fewest entities with work for a phase to be split among the threads.
    split_min: usize,
    pool: Option<Arc<rayon::ThreadPool>>,
    /// Whether the pool's helpers are worth waking (`sim_step.rs`).
    helpers: Helpers,
    /// Whether runs step their cycles in persistent batches (`sim_batch.rs`).
    persistent: bool,
    /// PEs that stored to `HOST_CMD_UNBLOCK` since the last host call was issued.
    unblocked: usize,
    /// Host-to-device streams, oldest first (earlier ones may still be in the memcpy
    /// path after their command completed).
    h2d: Vec<H2d>,
    d2h: Option<D2h>,
    trace: Option<Tracer>,
    /// Some PE records a timeline (`set_perfetto`): checked once per phase so that runs
    /// without one do not look at every PE's recorder.
    recording: bool,
    wavelet_hops: u64,
    /// Polled every [`INTERRUPT_POLL`] loop iterations of a run.
    interrupt: Option<InterruptCheck>,
    /// Iterations until the next poll.
    poll_in: u32,
    /// This rank of a distributed run (`crate::dist`), if it is one.
    dist: DistSlot,
}

fn bad_routes(reason: String) -> ImageError {
    ImageError::BadSection {
        section: SECTION_ROUTES.into(),
        reason,
    }
}

impl Simulator {
    /// Builds the rectangle of `image` in its reset state with default parameters.
    pub fn new(image: &Image) -> Result<Simulator, ImageError> {
        Simulator::with_params(image, SimParams::default())
    }

    /// Builds the rectangle of `image` in its reset state (checks each class and the colour
    /// configuration first).
    pub fn with_params(image: &Image, params: SimParams) -> Result<Simulator, ImageError> {
        image.validate()?;
        let classes = image
            .classes
            .iter()
            .enumerate()
            .map(|(n, c)| Class::prepare(n, c))
            .collect::<Result<Vec<_>, _>>()?;
        let classes = share_identical_code(classes);
        let meta = &image.meta;
        let arch = meta.arch;
        let n = image.placement.len();
        let mut pes = Vec::with_capacity(n);
        for (i, &c) in image.placement.iter().enumerate() {
            let i = i as u32;
            // `validate` guarantees width > 0 when there is a placement entry.
            let rel = PeCoord {
                x: i % meta.width.max(1),
                y: i / meta.width.max(1),
            };
            let abs = PeCoord {
                x: rel.x + meta.offset_x,
                y: rel.y + meta.offset_y,
            };
            let Some(class) = classes.get(c as usize) else {
                return Err(ImageError::BadSection {
                    section: csl_arch::image::SECTION_PLACEMENT.into(),
                    reason: format!("class {c} does not exist"),
                });
            };
            pes.push(Pe::new(
                PeLoc { rel, abs },
                c as usize,
                class,
                arch,
                &params,
            ));
        }
        // Per-tile memory (`miset`, core files) over the class's initial memory;
        // `validate` checked every patch's tile and range.
        for p in &image.tile_memory {
            let idx = (p.y * meta.width + p.x) as usize;
            if let Some(pe) = pes.get_mut(idx) {
                pe.write_bytes(p.addr, &p.bytes);
            }
        }
        let mut per_pe: Vec<Vec<&ColorConfig>> = vec![Vec::new(); n];
        for cfg in image.routes.iter() {
            if cfg.x >= meta.width || cfg.y >= meta.height {
                return Err(bad_routes(format!(
                    "colour {} is configured at ({},{}), outside the {}x{} rectangle",
                    cfg.color, cfg.x, cfg.y, meta.width, meta.height
                )));
            }
            if cfg.color >= NUM_COLORS {
                return Err(bad_routes(format!("colour {} does not exist", cfg.color)));
            }
            let idx = (cfg.y * meta.width + cfg.x) as usize;
            let Some(list) = per_pe.get_mut(idx) else {
                continue;
            };
            if list.iter().any(|c| c.color == cfg.color) {
                return Err(bad_routes(format!(
                    "colour {} is configured twice at ({},{})",
                    cfg.color, cfg.x, cfg.y
                )));
            }
            list.push(cfg.shared());
        }
        let routers = per_pe.iter().map(|l| Router::new(l)).collect();
        let env = Env {
            arch,
            ramp: u64::from(params.ramp_latency),
            setup: params.dsd_setup_cycles,
            branch_taken_extra: params.branch_taken_cycles.saturating_sub(1),
            branch_not_taken_extra: params.branch_not_taken_cycles.saturating_sub(1),
            fmacs_extra: params.fmacs_cycles_per_element.saturating_sub(1),
            run_ahead: true,
        };
        let mut sim = Simulator {
            arch,
            params,
            env,
            classes,
            pes,
            routers,
            width: meta.width,
            height: meta.height,
            cycle: 0,
            router_next: WorkSet::new(n),
            ce_next: WorkSet::new(n),
            router_cur: WorkSet::new(n),
            ce_cur: WorkSet::new(n),
            plans: Vec::new(),
            moves: Vec::new(),
            plan_outs: Vec::new(),
            sleepers: Timers::default(),
            sleeping: 0,
            chunk_words: Vec::new(),
            sleep_bufs: Vec::new(),
            threads: par::default_threads(),
            split_min: SPLIT_MIN_ACTIVE,
            pool: None,
            helpers: Helpers::default(),
            persistent: batch_ops::persistent_default(),
            unblocked: 0,
            h2d: Vec::new(),
            d2h: None,
            trace: None,
            recording: false,
            wavelet_hops: 0,
            interrupt: None,
            poll_in: INTERRUPT_POLL,
            dist: DistSlot::default(),
        };
        for i in 0..n {
            if sim.pes.get(i).is_some_and(Pe::has_work) {
                sim.ce_next.insert(i);
            }
        }
        Ok(sim)
    }

    /// Bytes the simulator needs for `image`, estimated before anything is allocated:
    /// per PE [`PE_OVERHEAD_BYTES`] plus the memory pages a PE typically writes (those
    /// its class's data spans, and one for its stack; module `mem`). A run that writes
    /// more of its memory grows by up to 48 KB per PE.
    pub fn memory_estimate(image: &Image) -> u64 {
        let page = crate::mem::PAGE_BYTES as u64;
        let full = u64::from(csl_arch::fabric::PE_MEMORY_BYTES);
        let per_class: Vec<u64> = image
            .classes
            .iter()
            .map(|c| ((c.data.len() as u64).div_ceil(page) * page + page).min(full))
            .collect();
        image.placement.iter().fold(0u64, |sum, &c| {
            let pages = per_class.get(c as usize).copied().unwrap_or(full);
            sum.saturating_add(PE_OVERHEAD_BYTES + pages)
        })
    }

    /// Sets (or clears) the callback polled while the fabric runs.
    pub fn set_interrupt(&mut self, check: Option<InterruptCheck>) {
        self.interrupt = check;
    }

    /// Polls the interrupt check every [`INTERRUPT_POLL`] calls.
    fn interrupted(&mut self) -> Result<(), SimError> {
        self.poll_in -= 1;
        if self.poll_in == 0 {
            self.poll_in = INTERRUPT_POLL;
            if let Some(check) = &self.interrupt
                && (check.0)()
            {
                return Err(SimError::Interrupted { cycle: self.cycle });
            }
        }
        Ok(())
    }

    /// Sets the number of threads that step the fabric (at least 1; default
    /// [`crate::default_threads`]). Results, cycle counts, statistics and traces are the
    /// same for every number.
    pub fn set_threads(&mut self, threads: usize) {
        let t = threads.max(1);
        if t != self.threads {
            self.threads = t;
            self.pool = None;
        }
    }

    /// Splits a phase (the routers' or the CEs' part of a cycle) among the threads only
    /// when at least `n` routers or CEs have work in it (default [`SPLIT_MIN_ACTIVE`],
    /// and for the persistent batches of [`Simulator::set_persistent`] the smaller of
    /// `n` and [`BATCH_SPLIT_MIN`]; 0 splits every phase, as the determinism tests do).
    /// Chunks are whole 64-PE words of the worklists when the rectangle has enough of
    /// them; a traced run is never split (its lines come out in PE order). Results never
    /// depend on it.
    pub fn set_split_threshold(&mut self, n: usize) {
        self.split_min = n;
    }

    /// Lets synchronous DSD operations on memory and runs of instructions (register
    /// arithmetic, SRAM loads and stores, returns, the issue of a synchronous DSD
    /// operation) run ahead, DSD setup cycles become stall cycles, and stalled PEs sleep
    /// (the default), or not. None of it changes a result, cycle count or statistic
    /// (SIMULATOR.md §12.2, §12.4); turning it off is for tests that compare the two.
    pub fn set_run_ahead(&mut self, on: bool) {
        self.env.run_ahead = on;
    }

    /// The number of threads that step the fabric.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The target architecture.
    pub fn arch(&self) -> Arch {
        self.arch
    }
    /// The model parameters.
    pub fn params(&self) -> &SimParams {
        &self.params
    }
    /// Width of the program rectangle.
    pub fn width(&self) -> u32 {
        self.width
    }
    /// Height of the program rectangle.
    pub fn height(&self) -> u32 {
        self.height
    }
    /// Simulated cycles so far.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }
    /// The prepared program classes.
    pub fn classes(&self) -> &[Class] {
        &self.classes
    }
    /// The simulator log: every `<simprint>` line as `@cycle PE(x,y): text`, in cycle
    /// order (PEs in row-major order within a cycle). Coordinates are rectangle-relative.
    pub fn log_lines(&self) -> Vec<String> {
        let mut lines: Vec<(u64, usize, String)> = Vec::new();
        for (i, pe) in self.pes().iter().enumerate() {
            for (cycle, text) in pe.log() {
                lines.push((*cycle, i, text.clone()));
            }
        }
        lines.sort_by_key(|(c, i, _)| (*c, *i));
        let w = self.width().max(1) as usize;
        lines
            .into_iter()
            .map(|(c, i, t)| format!("@{c} PE({},{}): {t}", i % w, i / w))
            .collect()
    }

    /// All PEs, row-major.
    pub fn pes(&self) -> &[Pe] {
        &self.pes
    }
    /// The PE at rectangle-relative `(x, y)`.
    pub fn pe(&self, x: u32, y: u32) -> Option<&Pe> {
        self.index(x, y).and_then(|i| self.pes.get(i))
    }
    /// The PE at rectangle-relative `(x, y)`, writable.
    pub fn pe_mut(&mut self, x: u32, y: u32) -> Option<&mut Pe> {
        self.index(x, y).and_then(|i| self.pes.get_mut(i))
    }
    /// The router of the PE at rectangle-relative `(x, y)`.
    pub fn router(&self, x: u32, y: u32) -> Option<&Router> {
        self.index(x, y).and_then(|i| self.routers.get(i))
    }
    fn index(&self, x: u32, y: u32) -> Option<usize> {
        (x < self.width && y < self.height).then(|| y as usize * self.width as usize + x as usize)
    }

    /// Whether the PE at rectangle-relative `(x, y)` is quiescent: no task running or
    /// ready, and neither its compute engine nor its router has work for the next cycle
    /// (no microthread that can progress, no wavelet buffered for a task that can take
    /// it, none in flight towards it or waiting to move on), and no streamed host wavelet
    /// is on its way to it. What waits for something that only another PE or the host can
    /// provide does not count. A PE outside the rectangle is quiescent.
    pub fn pe_quiescent(&self, x: u32, y: u32) -> bool {
        let Some(i) = self.index(x, y) else {
            return true;
        };
        if self.dist.with(|d| !d.owns(i)) == Some(true) {
            return true; // its rank answers (host conditions are combined over ranks)
        }
        self.pes.get(i).is_none_or(Pe::main_thread_free)
            && !self.ce_next.contains(i)
            && !self.router_next.contains(i)
            && !self.h2d.iter().any(|h| h.holds(i))
    }

    /// Follows the PEs selected by the tracer (`None`: stop tracing).
    pub fn set_trace(&mut self, tracer: Option<Tracer>) {
        self.wake_all();
        for pe in &mut self.pes {
            pe.traced = tracer
                .as_ref()
                .is_some_and(|t| t.filter.matches(pe.loc.rel.x, pe.loc.rel.y));
        }
        self.trace = tracer;
    }

    /// Records the timelines of the PEs `cfg` selects (`None`: stop recording and forget
    /// what was recorded); see [`crate::perfetto`]. Results do not depend on it.
    pub fn set_perfetto(&mut self, cfg: Option<PerfettoConfig>) {
        self.wake_all();
        for pe in &mut self.pes {
            pe.perf = cfg
                .filter(|c| c.pes.contains(pe.loc.rel.x, pe.loc.rel.y))
                .map(|c| Box::new(PeRecorder::new(&c, usize::from(pe.ninq))));
        }
        self.recording = self.pes.iter().any(|pe| pe.perf.is_some());
    }

    /// The timelines recorded so far (empty if [`Simulator::set_perfetto`] was not called).
    pub fn perfetto_trace(&self) -> PerfettoTrace {
        crate::perfetto::build(
            &self.pes,
            &self.classes,
            self.width,
            self.height,
            self.cycle,
        )
    }

    /// Whether anything is scheduled to happen (a PE or router with work, a host stream).
    pub fn has_work(&self) -> bool {
        self.global_state(true).1
    }

    /// Whether this process has work (its own part of [`Simulator::has_work`]).
    fn local_work(&self) -> bool {
        !self.ce_next.is_empty()
            || self.sleeping > 0
            || !self.router_next.is_empty()
            || !self.h2d.is_empty()
            || self.d2h.is_some()
    }

    /// Queues a host call on every PE: `funcs[class]` is the function to start on PEs of
    /// that class (`None`: the class is not used by any PE). Resets every PE's
    /// "unblocked the command stream" flag.
    pub fn issue_host_call(&mut self, funcs: &[Option<u32>], args: Arc<[u32]>) {
        self.unblocked = 0;
        for (i, pe) in self.pes.iter_mut().enumerate() {
            pe.cmd_unblocked = false;
            if let Some(Some(func)) = funcs.get(pe.class) {
                pe.host_calls.push_back(HostCall {
                    func: *func,
                    args: args.clone(),
                });
                self.ce_next.insert(i);
            }
        }
    }

    /// Whether every PE stored to `HOST_CMD_UNBLOCK` since the last host call.
    pub fn all_unblocked(&self) -> bool {
        let (lo, hi) = self.owned_range(); // a rank's own PEs; `run_until` combines ranks
        self.unblocked >= hi - lo
    }

    /// The PEs that have not unblocked the command stream, and why.
    pub fn not_unblocked(&self) -> Vec<Waiting> {
        self.pes
            .iter()
            .filter(|pe| !pe.cmd_unblocked)
            .map(|pe| Waiting {
                pe: pe.loc,
                reason: WaitReason::NeverUnblockedCmdStream {
                    blocked_tasks: pe.active & pe.blocked,
                },
            })
            .collect()
    }

    /// Starts a host-to-device stream on colour `color`: `data` lists, per PE
    /// (rectangle-relative), the wavelets it receives in its CE input queue for that colour,
    /// one per cycle at most, from `delay` cycles on, through the memcpy path
    /// (`SimParams::h2d_path_depth`). The stream's command is complete
    /// ([`Simulator::streams_done`]) once every wavelet has left the host.
    pub fn start_h2d_stream(
        &mut self,
        color: u8,
        data: Vec<((u32, u32), Vec<u32>)>,
        delay: u64,
    ) -> Result<(), SimError> {
        let mut pes = Vec::with_capacity(data.len());
        for ((x, y), words) in data {
            let Some(i) = self.index(x, y) else {
                continue;
            };
            let Some(pe) = self.pes.get(i) else {
                continue;
            };
            if pe.ce_room(color, self.cycle).is_none() {
                return Err(SimError::Routing {
                    pe: pe.loc,
                    color,
                    cycle: self.cycle,
                    kind: RoutingError::NoInputQueue,
                });
            }
            if !words.is_empty() {
                pes.push(H2dPe {
                    pe: i,
                    words,
                    sent: 0,
                    delivered: 0,
                });
            }
        }
        pes.sort_by_key(|e| e.pe);
        let pending = pes.len();
        if pending > 0 {
            self.h2d.push(H2d {
                color,
                start: self.cycle + delay,
                pes,
                pending,
            });
        }
        Ok(())
    }

    /// Starts a device-to-host stream on colour `color`: each listed PE's CE output on that
    /// colour (its router's RAMP input) goes to the host instead of the fabric, one
    /// wavelet per cycle at most, from `delay` cycles on, until `per_pe` wavelets came
    /// from each.
    pub fn start_d2h_stream(&mut self, color: u8, pes: &[(u32, u32)], per_pe: usize, delay: u64) {
        let mut list = Vec::with_capacity(pes.len());
        for &(x, y) in pes {
            let Some(i) = self.index(x, y) else {
                continue;
            };
            if let Some(cs) = self.routers.get_mut(i).and_then(|r| r.ensure_color(color)) {
                cs.capture = true;
            }
            list.push((i, Vec::with_capacity(per_pe), per_pe));
        }
        let pending = list.iter().filter(|e| e.2 > 0).count();
        self.d2h = Some(D2h {
            color,
            start: self.cycle + delay,
            pes: list,
            pending,
        });
        if pending == 0 {
            self.finish_d2h();
        }
    }

    /// Whether a device-to-host stream is started and not yet taken.
    pub fn d2h_active(&self) -> bool {
        self.d2h.is_some()
    }

    /// Whether the host streams' commands are complete: every host-to-device wavelet has
    /// left the host, every device-to-host wavelet has arrived.
    pub fn streams_done(&self) -> bool {
        self.h2d.iter().all(|h| h.pending == 0) && self.d2h.as_ref().is_none_or(|d| d.pending == 0)
    }

    /// The wavelets collected by the last device-to-host stream, per listed PE, and ends it.
    pub fn take_d2h(&mut self) -> Vec<Vec<u32>> {
        self.finish_d2h();
        self.d2h
            .take()
            .map(|d| d.pes.into_iter().map(|e| e.1).collect())
            .unwrap_or_default()
    }

    /// Returns the captured colour's RAMP input to the router.
    fn finish_d2h(&mut self) {
        if let Some(d) = &self.d2h {
            for &(i, _, _) in &d.pes {
                if let Some(cs) = self.routers.get_mut(i).and_then(|r| r.color_mut(d.color)) {
                    cs.capture = false;
                }
                self.router_next.insert(i);
            }
        }
    }

    /// Abandons unfinished host streams (after a failed command).
    pub fn cancel_streams(&mut self) {
        self.h2d.clear();
        self.finish_d2h();
        self.d2h = None;
    }

    /// Runs cycles until `cond` holds (checked before every cycle) or nothing can
    /// progress. Fails with [`SimError::CycleLimit`] if the clock reaches `max_cycles`
    /// first, or with a routing error or fault.
    ///
    /// `cond` should read the clock, task, queue and stream state, not PE memory: while
    /// the run is under way a PE's memory may already hold stores that ran ahead of the
    /// clock (SIMULATOR.md §12.4); they are taken back when the run returns, so memory
    /// read after it is exact.
    pub fn run_until(
        &mut self,
        cond: impl FnMut(&Simulator) -> bool,
        max_cycles: u64,
    ) -> Result<RunEnd, SimError> {
        self.resume();
        let r = self.run_until_inner(cond, max_cycles);
        self.settle();
        r
    }

    fn run_until_inner(
        &mut self,
        mut cond: impl FnMut(&Simulator) -> bool,
        max_cycles: u64,
    ) -> Result<RunEnd, SimError> {
        let mut known = None;
        loop {
            let (done, work) = match known.take() {
                Some(k) => k,
                None => self.global_state(cond(self)),
            };
            if done {
                return Ok(RunEnd::Condition);
            }
            if !work {
                return Ok(RunEnd::Idle);
            }
            if self.cycle >= max_cycles {
                return Err(SimError::CycleLimit { cycle: self.cycle });
            }
            self.interrupted()?;
            let happened;
            (happened, known) = self.step(Some(&mut cond))?;
            if !happened {
                return Ok(RunEnd::Idle);
            }
        }
    }

    /// Runs until nothing can progress. Fails with [`SimError::Deadlock`] if something is
    /// left waiting then: a synchronous DSD operation, an asynchronous one blocked on a
    /// full output, or wavelets in any buffer. (An asynchronous operation waiting for
    /// input that never comes is a normal end state.)
    pub fn run_until_idle(&mut self, max_cycles: u64) -> Result<(), SimError> {
        self.run_until_known(Until::Never, max_cycles)?;
        let (waiting, stuck) = self.blocked_report(false);
        if waiting.is_empty() && stuck.is_empty() {
            Ok(())
        } else {
            Err(SimError::Deadlock {
                cycle: self.cycle,
                command: "the run".into(),
                waiting,
                stuck,
            })
        }
    }

    /// Lets `cycles` cycles pass: whatever has work runs; if nothing has, the clock jumps.
    pub fn advance(&mut self, cycles: u64, max_cycles: u64) -> Result<(), SimError> {
        self.resume();
        // Without persistent batches (`batch_wanted` false) this is the plain cycle loop.
        let r = self.advance_batched(cycles, max_cycles);
        self.settle();
        r
    }

    fn geometry(&self) -> Geometry {
        Geometry {
            width: self.width,
            height: self.height,
            hop: self.params.hop(self.arch),
            ramp: self.env.ramp,
            depth: self.params.buffer_depth(),
        }
    }

    /// One cycle of the host streams; returns whether anything moved or waits for time.
    fn stream_step(&mut self, now: u64) -> Result<bool, SimError> {
        let mut happened = false;
        let ramp = self.env.ramp;
        let depth = self.params.h2d_path_depth as usize;
        for s in 0..self.h2d.len() {
            let (earlier, rest) = self.h2d.split_at_mut(s);
            let Some(h) = rest.first_mut() else {
                continue;
            };
            if now < h.start {
                happened = true;
                continue;
            }
            let color = h.color;
            for e in h.pes.iter_mut() {
                // The path of a PE is first in, first out: an earlier stream's wavelets
                // for this PE go first.
                if e.delivered == e.words.len() || earlier.iter().any(|o| o.holds(e.pe)) {
                    continue;
                }
                let Some(pe) = self.pes.get_mut(e.pe) else {
                    continue;
                };
                // At most one wavelet leaves the host and one enters the CE per cycle; a
                // wavelet may do both in the same cycle.
                let mut delivered = false;
                let deliver = |pe: &mut Pe, e: &mut H2dPe| {
                    if e.delivered < e.sent
                        && pe.ce_room(color, now) == Some(true)
                        && let Some(&w) = e.words.get(e.delivered)
                    {
                        pe.ce_push(
                            color,
                            Wavelet {
                                data: w,
                                flags: 0,
                                ready: now + ramp,
                            },
                        );
                        e.delivered += 1;
                        return true;
                    }
                    false
                };
                delivered |= deliver(pe, e);
                if e.sent < e.words.len()
                    && (e.sent - e.delivered < depth
                        || (!delivered && pe.ce_room(color, now) == Some(true)))
                {
                    e.sent += 1;
                    if e.sent == e.words.len() {
                        h.pending -= 1;
                    }
                    happened = true;
                    if !delivered {
                        delivered |= deliver(pe, e);
                    }
                }
                if delivered {
                    self.ce_next.insert(e.pe);
                    happened = true;
                }
            }
        }
        self.h2d.retain(|h| h.pending > 0 || !h.delivered());
        let mut finished = false;
        if let Some(d) = &mut self.d2h
            && d.pending > 0
        {
            if now < d.start {
                happened = true;
            } else {
                for (i, got, want) in d.pes.iter_mut() {
                    if got.len() >= *want {
                        continue;
                    }
                    let Some(r) = self.routers.get_mut(*i) else {
                        continue;
                    };
                    let head = r
                        .color(d.color)
                        .and_then(|cs| cs.rings.get(RAMP))
                        .and_then(|ring| ring.front())
                        .map(|w| w.ready);
                    match head {
                        Some(t) if t <= now => {
                            if let Some(w) = r.pop(d.color, RAMP, now) {
                                got.push(w.data);
                            }
                            if got.len() >= *want {
                                d.pending -= 1;
                            }
                            self.ce_next.insert(*i);
                            happened = true;
                        }
                        Some(_) => happened = true,
                        None => {}
                    }
                }
            }
            finished = d.pending == 0;
        }
        if finished {
            self.finish_d2h();
        }
        Ok(happened)
    }

    /// The waits and stuck wavelets of a fabric that cannot progress. With `strict`
    /// (a host command is incomplete) asynchronous operations waiting for input count too.
    pub fn blocked_report(&self, strict: bool) -> (Vec<Waiting>, Vec<Stuck>) {
        let mut waiting = Vec::new();
        let (lo, hi) = self.owned_range();
        for pe in self.pes.get(lo..hi).unwrap_or_default() {
            self.pe_waits(pe, strict, &mut waiting);
        }
        self.combine(waiting, self.stuck())
    }

    /// A deadlock error for a host command that cannot complete. `launch`: PEs that have
    /// not called `unblock_cmd_stream` are listed even if nothing else holds them.
    pub fn deadlock(&self, command: &str, launch: bool) -> SimError {
        let mut waiting = Vec::new();
        let (lo, hi) = self.owned_range();
        for (i, pe) in self.pes.iter().enumerate().take(hi).skip(lo) {
            let before = waiting.len();
            self.pe_waits(pe, true, &mut waiting);
            if launch && !pe.cmd_unblocked && waiting.len() == before {
                waiting.push(Waiting {
                    pe: pe.loc,
                    reason: WaitReason::NeverUnblockedCmdStream {
                        blocked_tasks: pe.active & pe.blocked,
                    },
                });
            }
            for h in &self.h2d {
                if let Ok(k) = h.pes.binary_search_by_key(&i, |e| e.pe)
                    && let Some(e) = h.pes.get(k)
                    && e.sent < e.words.len()
                {
                    waiting.push(Waiting {
                        pe: pe.loc,
                        reason: WaitReason::Stream {
                            h2d: true,
                            color: h.color,
                            done: e.sent as u32,
                            total: e.words.len() as u32,
                        },
                    });
                }
            }
            if let Some(d) = &self.d2h
                && let Some((_, got, want)) = d.pes.iter().find(|e| e.0 == i)
                && got.len() < *want
            {
                waiting.push(Waiting {
                    pe: pe.loc,
                    reason: WaitReason::Stream {
                        h2d: false,
                        color: d.color,
                        done: got.len() as u32,
                        total: *want as u32,
                    },
                });
            }
        }
        let (waiting, stuck) = self.combine(waiting, self.stuck());
        SimError::Deadlock {
            cycle: self.cycle,
            command: command.to_string(),
            waiting,
            stuck,
        }
    }

    fn pe_waits(&self, pe: &Pe, strict: bool, out: &mut Vec<Waiting>) {
        let Some(class) = self.classes.get(pe.class) else {
            return;
        };
        let name = |f: u32| class.func_name(f).to_string();
        let unknown = WaitOn::InputEmpty {
            color: None,
            queue: None,
        };
        if let Some(op) = &pe.main_op
            && pe.ahead > 0
        {
            // Issued ahead (`exec::run_ahead`): in this cycle the task still runs the
            // instructions before it, or stands at it (the case below).
            if pe.ahead == 1
                && let Some(Op::DsdOp { ut, .. }) = class.code().get(op.site.pc as usize)
            {
                out.push(Waiting {
                    pe: pe.loc,
                    reason: WaitReason::MicrothreadBusy {
                        ut: ut & 7,
                        task: op.site.task,
                        func: name(op.site.func),
                        pc: op.site.pc,
                        line: class.line_at(op.site.pc),
                    },
                });
            }
        } else if let Some(op) = &pe.main_op {
            out.push(Waiting {
                pe: pe.loc,
                reason: WaitReason::SyncOp {
                    task: op.site.task,
                    func: name(op.site.func),
                    pc: op.site.pc,
                    line: class.line_at(op.site.pc),
                    op: op.op.name(),
                    on: op.waiting.clone().unwrap_or(unknown.clone()),
                },
            });
        } else if pe.task.is_some()
            // (While instructions run ahead, `pc` is past them: the task is not waiting.)
            && pe.ahead == 0
            && let Some(Op::DsdOp { ut, .. }) = class.code().get(pe.cur.pc as usize)
        {
            out.push(Waiting {
                pe: pe.loc,
                reason: WaitReason::MicrothreadBusy {
                    ut: ut & 7,
                    task: pe.task,
                    func: name(pe.cur.func),
                    pc: pe.cur.pc,
                    line: class.line_at(pe.cur.pc),
                },
            });
        }
        for (u, op) in pe.uts.iter().enumerate() {
            let Some(op): Option<&Box<DsdExec>> = op.as_ref() else {
                continue;
            };
            let on = op.waiting.clone().unwrap_or(unknown.clone());
            let waits_for_input =
                matches!(on, WaitOn::InputEmpty { .. } | WaitOn::FifoEmpty { .. });
            if !strict && waits_for_input {
                continue;
            }
            out.push(Waiting {
                pe: pe.loc,
                reason: WaitReason::Microthread {
                    ut: u as u8,
                    task: op.site.task,
                    func: name(op.site.func),
                    pc: op.site.pc,
                    line: class.line_at(op.site.pc),
                    op: op.op.name(),
                    on,
                },
            });
        }
    }

    /// Every non-empty buffer, with why it cannot drain.
    fn stuck(&self) -> Vec<Stuck> {
        let mut out = Vec::new();
        for (idx, (pe, r)) in self.owned_pes() {
            // Router input buffers, by colour then port.
            for c in 0..NUM_COLORS {
                let Some(cs) = r.color(c) else {
                    continue;
                };
                for (port, ring) in cs.rings.iter().enumerate() {
                    if ring.is_empty() {
                        continue;
                    }
                    let why = if cs.teardown {
                        StuckWhy::Teardown
                    } else if !cs.configured {
                        StuckWhy::NoRoute
                    } else if cs.mp.is_some() {
                        if cs.mp_path_held(port, idx, self.width) {
                            StuckWhy::PathHeld
                        } else {
                            StuckWhy::Backpressure
                        }
                    } else if cs.route().rx & (1 << port) == 0 {
                        StuckWhy::NotAccepted
                    } else {
                        StuckWhy::Backpressure
                    };
                    out.push(Stuck {
                        pe: pe.loc,
                        color: c,
                        place: StuckPlace::RouterInput(dir_of(port)),
                        count: ring.len() as u32,
                        why,
                    });
                }
            }
            // CE input queues.
            let data_bound = self.classes.get(pe.class).map_or(0, |c| c.data_bound);
            for (b, ring) in pe.inq.iter().enumerate() {
                if ring.is_empty() {
                    continue;
                }
                let why = if pe.blocked >> b & 1 == 1 {
                    StuckWhy::ChannelBlocked
                } else if data_bound >> b & 1 == 1 {
                    StuckWhy::TaskNotRun
                } else {
                    StuckWhy::NoConsumer
                };
                let (color, queue) = match self.arch {
                    Arch::Wse2 => (b as u8, None),
                    Arch::Wse3 => (
                        pe.color_inq
                            .iter()
                            .position(|&q| q != NO_QUEUE && usize::from(q) == b)
                            .map_or(u8::MAX, |c| c as u8),
                        Some(b as u8),
                    ),
                };
                out.push(Stuck {
                    pe: pe.loc,
                    color,
                    place: StuckPlace::CeInput { queue },
                    count: ring.len() as u32,
                    why,
                });
            }
        }
        // Host-to-device wavelets waiting in the memcpy path for room in a CE input buffer.
        for h in &self.h2d {
            for e in &h.pes {
                if let (true, Some(pe)) = (e.delivered < e.sent, self.pes.get(e.pe)) {
                    out.push(Stuck {
                        pe: pe.loc,
                        color: h.color,
                        place: StuckPlace::HostPath,
                        count: (e.sent - e.delivered) as u32,
                        why: StuckWhy::Backpressure,
                    });
                }
            }
        }
        out
    }

    /// Counters of every PE.
    pub fn stats(&self) -> RunStats {
        let pes: Vec<PeStats> = self
            .pes
            .iter()
            .zip(&self.routers)
            .map(|(pe, r)| {
                let stalled = pe.stalled_cycles
                    + pe.stalled_since.map_or(0, |s| self.cycle.saturating_sub(s));
                let (slept, ahead) = pe.slept(self.cycle);
                let busy = pe.busy_cycles + u64::from(slept);
                PeStats {
                    pe: pe.loc,
                    busy_cycles: busy,
                    stalled_cycles: stalled,
                    idle_cycles: self.cycle.saturating_sub(busy + stalled),
                    instructions: pe.instructions + u64::from(ahead),
                    tasks_started: pe.tasks_started,
                    dsd_elements: pe.dsd_elements,
                    wavelets_sent: r.sent,
                    input_high_water: pe
                        .inq
                        .iter()
                        .map(|q| u32::from(q.high_water))
                        .max()
                        .unwrap_or(0),
                }
            })
            .collect();
        RunStats {
            cycles: self.cycle,
            instructions: pes.iter().map(|p| p.instructions).sum(),
            wavelet_hops: self.wavelet_hops,
            pes,
        }
    }
}

#[path = "sim_batch.rs"]
mod batch_ops;
#[path = "sim_dist.rs"]
mod dist_ops;
#[path = "sim_sleep.rs"]
mod sleep_ops;
#[path = "sim_step.rs"]
mod step_ops;
pub(crate) use batch_ops::Until;
pub use batch_ops::{BATCH_SPLIT_MIN, PERSISTENT_ENV};
use step_ops::{Helpers, PlanOut};

/// Lets classes with identical code share one copy of it (see [`Class::share_code`]).
fn share_identical_code(mut classes: Vec<Class>) -> Vec<Class> {
    let mut distinct: Vec<usize> = Vec::new();
    for i in 0..classes.len() {
        let (before, rest) = classes.split_at_mut(i);
        let Some(c) = rest.first_mut() else {
            continue;
        };
        match distinct.iter().find_map(|&d| {
            before
                .get(d)
                .filter(|o| o.code().len() == c.code().len() && o.code() == c.code())
        }) {
            Some(o) => c.share_code(o),
            None => distinct.push(i),
        }
    }
    classes
}

/// Trace lines of one CE cycle.
fn trace_ce(t: &Tracer, pe: &Pe, class: &Class, out: &CeOut, now: u64) {
    let loc = pe.loc.rel;
    if let Some(id) = out.started {
        let func = class.func_name(pe.cur.func);
        t.line(format_args!("@{now} {loc}: task {id} starts `{func}`"));
    }
    if let Some(pc) = out.retired
        && let Some(op) = class.code().get(pc as usize)
    {
        let func = class.func_name_at(pc);
        let line = class
            .line_at(pc)
            .map_or_else(String::new, |l| format!(" ({l})"));
        match op {
            Op::Call { func: callee, .. } => {
                let callee = class.func_name(*callee);
                t.line(format_args!(
                    "@{now} {loc}: pc {pc} in `{func}`{line}: {op}  ; calls `{callee}`"
                ));
            }
            _ => t.line(format_args!(
                "@{now} {loc}: pc {pc} in `{func}`{line}: {op}"
            )),
        }
    }
}

/// A host condition checked between cycles (see [`Simulator::run_until`]).
type Cond<'a> = &'a mut dyn FnMut(&Simulator) -> bool;

/// Default fewest routers or CEs with work in a phase for it to be split among threads
/// (below that the hand-over costs more than it saves; measured in SIMULATOR.md §12).
pub const SPLIT_MIN_ACTIVE: usize = 2048;
/// Fewest stall cycles for which a PE leaves the CE worklist (sleeps) instead of being
/// ticked through them.
const SLEEP_MIN_STALL: u32 = 2;
/// What one chunk of CEs did in a cycle.
#[derive(Default)]
struct CeChunkOut {
    unblocked: usize,
    happened: bool,
    err: Option<SimError>,
    /// PEs that went to sleep through a stall: (wake-up cycle, PE).
    sleeps: Vec<(u64, u32)>,
    /// Sleeping PEs this chunk ticked (woken by their timer or early).
    woke: usize,
}

/// What ticking a chunk of CEs needs besides the chunk: [`ce_chunk`] with the recording
/// instance picked at run time.
#[derive(Clone, Copy)]
struct Ticker<'a> {
    classes: &'a [Class],
    env: &'a Env,
    trace: Option<&'a Tracer>,
    record: bool,
    now: u64,
}

impl Ticker<'_> {
    /// [`Ticker::tick`] that collects the sleepers in `sleeps` (cleared first): a buffer
    /// kept from cycle to cycle allocates nothing.
    fn tick_into(
        &self,
        chunk: Chunk<'_>,
        cur: &[u64],
        base: usize,
        mut sleeps: Vec<(u64, u32)>,
    ) -> CeChunkOut {
        sleeps.clear();
        if self.record {
            ce_chunk::<true>(chunk, cur, base, self, sleeps)
        } else {
            ce_chunk::<false>(chunk, cur, base, self, sleeps)
        }
    }
}

/// Ticks the CEs of `chunk` that are members of `cur` (this cycle's CE worklist; bit 0
/// of its words is PE `base`), in ascending order. `REC`: some PE records a timeline (the instance without it has no
/// recording code in its loop).
fn ce_chunk<const REC: bool>(
    chunk: Chunk<'_>,
    cur: &[u64],
    base: usize,
    ticker: &Ticker<'_>,
    sleeps: Vec<(u64, u32)>,
) -> CeChunkOut {
    let Ticker {
        classes,
        env,
        trace,
        now,
        ..
    } = *ticker;
    let Chunk {
        lo,
        routers,
        pes,
        router_next,
        ce_next,
    } = chunk;
    let hi = lo + pes.len();
    let mut o = CeChunkOut {
        sleeps,
        ..CeChunkOut::default()
    };
    for_bits(cur, lo - base, hi - base, |k| {
        let i = k + base;
        let (Some(pe), Some(router)) = (pes.get_mut(i - lo), routers.get_mut(i - lo)) else {
            return true;
        };
        let Some(class) = classes.get(pe.class) else {
            return true;
        };
        if pe.sleep_until != 0 {
            pe.catch_up(now);
            pe.sleep_until = 0;
            o.woke += 1;
        }
        let mut out = CeOut::default();
        match ce::tick::<REC>(pe, router, class, env, now, &mut out) {
            Ok(()) => {}
            Err(f) => {
                if o.err.is_none() {
                    let (task, func, pc) = match f.site {
                        Some(s) => (s.task, s.func, s.pc),
                        None => (pe.task, pe.cur.func, pe.cur.pc),
                    };
                    o.err = Some(SimError::Fault {
                        pe: pe.loc,
                        task,
                        func: class.func_name(func).to_string(),
                        pc,
                        line: class.line_at(pc),
                        cycle: now,
                        kind: f.kind,
                    });
                }
                return true;
            }
        };
        if REC
            && pe.perf.is_some()
            && let Some(mut rec) = pe.perf.take()
        {
            rec.after_tick(pe, out.progressed, out.started, now);
            pe.perf = Some(rec);
        }
        if out.unblocked {
            o.unblocked += 1;
        }
        if out.wake_router {
            set_bit(router_next, lo, i);
        }
        if out.progressed || out.later {
            // A PE whose next cycles are all stall cycles (nothing but its counters
            // changes in them: no microthread, no control wavelet to dispatch) sleeps
            // until the stall ends; a wavelet or host command that reaches it wakes it
            // early (`Pe::catch_up` counts the cycles it slept).
            if !REC
                && env.run_ahead
                && pe.stall >= SLEEP_MIN_STALL
                && pe.ut_busy == 0
                && pe.ctrl_heads & !(pe.blocked as u32) & !pe.term_bufs == 0
                && !pe.traced
            {
                let wake = now + 1 + u64::from(pe.stall);
                pe.sleep_from = now + 1;
                pe.sleep_until = wake;
                o.sleeps.push((wake, i as u32));
            } else {
                set_bit(ce_next, lo, i);
            }
            o.happened = true;
        } else if pe.task.is_some() || pe.ut_busy != 0 {
            pe.stalled_since = Some(now + 1);
        }
        if pe.traced
            && let Some(t) = trace
        {
            trace_ce(t, pe, class, &out, now);
        }
        true
    });
    o
}
