//! The host runtime: a Rust mirror of the vendor's `SdkRuntime` (libraries.md §1–2) driving
//! the simulated fabric.
//!
//! Protocol: [`SdkRuntime::new`] reads the image, [`SdkRuntime::load`] builds the fabric,
//! [`SdkRuntime::run`] starts it, then host commands (`memcpy_h2d`, `memcpy_d2h`,
//! `launch`), then [`SdkRuntime::stop`]. Commands execute **serially in issue order**: each
//! call returns once its command has completed on the fabric, so a command always waits
//! for the previous one (a launch completes when every PE has called
//! `unblock_cmd_stream()`). `nonblock = true` is accepted and behaves like `false` (the
//! vendor also completes commands in order; only the Python caller regains control early).
//!
//! Time (ours): the fabric runs only while a command waits or takes time. A copy-mode
//! memcpy takes [`MEMCPY_SETUP_CYCLES`] plus one cycle per element per PE of a row (rows
//! stream in parallel), during which the fabric keeps running; its data moves at the end
//! of that time. Copy mode does not need the PEs' cooperation (it does not wait for a busy
//! CE). A launch starts the function on each PE as a task under
//! [`LAUNCH_TASK_ID`](csl_arch::fabric::LAUNCH_TASK_ID) as soon as that PE is not running
//! another task (see [`crate::pe`] for the picker order).

mod error;
mod memcpy;
pub mod values;

pub use error::HostError;
pub use memcpy::{MEMCPY_SETUP_CYCLES, MemcpyDataType, MemcpyOrder, Region, Transfer};

use crate::alu;
use crate::error::{PeLoc, SimError};
use crate::params::SimParams;
use crate::perfetto::PerfettoConfig;
use crate::sim::{RunEnd, RunStats, Simulator};
use crate::trace::Tracer;
use csl_arch::image::{ExportKind, Image, SymbolTarget};
use std::path::Path;
use std::sync::Arc;

/// Default bound on simulated cycles ([`SdkRuntime::with_max_cycles`]).
pub const DEFAULT_MAX_CYCLES: u64 = 1_000_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Created,
    Loaded,
    Running,
    Stopped,
}

/// The host's handle on a simulated program (vendor `SdkRuntime`).
#[derive(Debug)]
pub struct SdkRuntime {
    image: Image,
    state: State,
    sim: Option<Simulator>,
    max_cycles: u64,
    /// The error that ended the simulation, repeated by later commands.
    failed: Option<SimError>,
    /// For each program class, the first PE (row-major index) that runs it.
    first_pe: Vec<Option<usize>>,
    params: SimParams,
    /// An unknown `CSLSIM_TIMING` value, reported by `load` unless `with_params` was called.
    timing_error: Option<String>,
    trace: Option<Tracer>,
    interrupt: Option<crate::sim::InterruptCheck>,
    /// Threads that step the fabric (`None`: [`crate::default_threads`]).
    threads: Option<usize>,
    /// See [`Simulator::set_split_threshold`].
    split_min: Option<usize>,
    /// See [`Simulator::set_persistent`].
    persistent: Option<bool>,
    /// Timelines to record ([`SdkRuntime::with_perfetto`]).
    perfetto: Option<PerfettoConfig>,
    /// Reads past the end of an array only warn ([`SdkRuntime::with_lenient_reads`]).
    lenient_reads: bool,
}

/// The environment variable that, set to `warn`, makes `memcpy_d2h` past the end of an
/// array a warning instead of an error ([`SdkRuntime::with_lenient_reads`]).
pub const MEMCPY_BOUNDS_ENV: &str = "CSLSIM_MEMCPY_BOUNDS";

impl SdkRuntime {
    /// Reads an image: `path` is an `.elf` file or a directory containing `out.elf`.
    pub fn new(path: impl AsRef<Path>) -> Result<Self, HostError> {
        let path = path.as_ref();
        let file = if path.is_dir() {
            path.join("out.elf")
        } else {
            path.to_path_buf()
        };
        let bytes = std::fs::read(&file).map_err(|source| HostError::Io { path: file, source })?;
        Ok(Self::from_image(Image::from_elf(&bytes)?))
    }

    /// Wraps an image already in memory.
    pub fn from_image(image: Image) -> Self {
        let mut first_pe = vec![None; image.classes.len()];
        for (i, &c) in image.placement.iter().enumerate() {
            if let Some(slot @ None) = first_pe.get_mut(c as usize) {
                *slot = Some(i);
            }
        }
        // `CSLSIM_TIMING` picks the timing preset (`with_params` overrides it); a value
        // it does not name is reported by `load`.
        let (params, timing_error) = match std::env::var(crate::params::TIMING_ENV) {
            Ok(v) => match crate::params::Timing::parse(&v) {
                Ok(t) => (t.params(), None),
                Err(e) => (
                    SimParams::default(),
                    Some(format!("{}: {e}", crate::params::TIMING_ENV)),
                ),
            },
            Err(_) => (SimParams::default(), None),
        };
        SdkRuntime {
            image,
            state: State::Created,
            sim: None,
            max_cycles: DEFAULT_MAX_CYCLES,
            failed: None,
            first_pe,
            params,
            timing_error,
            trace: None,
            interrupt: None,
            threads: None,
            split_min: None,
            persistent: None,
            perfetto: None,
            lenient_reads: std::env::var(MEMCPY_BOUNDS_ENV).is_ok_and(|v| v == "warn"),
        }
    }

    /// Uses the given model parameters (before `load`).
    pub fn with_params(mut self, params: SimParams) -> Self {
        self.params = params;
        self.timing_error = None;
        self
    }

    /// Polls `check` while the fabric runs (every few thousand cycles); when it returns
    /// `true` the command stops with [`SimError::Interrupted`] (before `load`).
    pub fn with_interrupt(mut self, check: crate::sim::InterruptCheck) -> Self {
        self.interrupt = Some(check);
        self
    }

    /// Traces instructions and wavelets of the PEs the tracer selects (before `load`).
    pub fn with_trace(mut self, tracer: Tracer) -> Self {
        self.trace = Some(tracer);
        self
    }

    /// Makes a `memcpy_d2h` that reads past the end of the array its symbol points at a
    /// warning on stderr instead of [`HostError::PastEndOfArray`]: the copy returns the
    /// words that follow the array in PE memory, as the hardware's memcpy does. Writes past
    /// the end stay errors (they would overwrite other variables). Also on when the
    /// environment variable [`MEMCPY_BOUNDS_ENV`] is `warn`; for running vendor programs
    /// that over-read (the public 25-pt-stencil reads 6 words of a 5-word array).
    pub fn with_lenient_reads(mut self, on: bool) -> Self {
        self.lenient_reads = on;
        self
    }

    /// Records timelines of the PEs `cfg` selects for [`SdkRuntime::write_perfetto`]
    /// (before `load`; see [`crate::perfetto`]). Results are the same with or without it.
    pub fn with_perfetto(mut self, cfg: PerfettoConfig) -> Self {
        self.perfetto = Some(cfg);
        self
    }

    /// Writes the timelines recorded so far (see [`SdkRuntime::with_perfetto`]) as a
    /// Chrome trace-event JSON file for ui.perfetto.dev (after `load`).
    pub fn write_perfetto(&self, path: &Path) -> Result<(), HostError> {
        let sim = self.sim.as_ref().ok_or(HostError::NotLoaded)?;
        Ok(sim.perfetto_trace().write(path)?)
    }

    /// Writes a heatmap of the run so far (per-PE busy/stalled/idle shares and link use,
    /// [`crate::heatmap`]) as a PNG file (after `load`).
    pub fn write_heatmap(&self, path: &Path) -> Result<(), HostError> {
        let sim = self.sim.as_ref().ok_or(HostError::NotLoaded)?;
        let pic = crate::heatmap::render(&sim.stats(), sim.width(), sim.height());
        Ok(pic.write_png(path)?)
    }

    /// Steps the fabric on `n` threads (at least 1; default [`crate::default_threads`]:
    /// `CSLSIM_THREADS` or the available cores). Results, cycle counts, statistics and
    /// traces are the same for every `n`.
    pub fn with_threads(mut self, n: usize) -> Self {
        self.threads = Some(n.max(1));
        if let Some(sim) = &mut self.sim {
            sim.set_threads(n);
        }
        self
    }

    /// Splits a cycle's phase among the threads only when at least `n` PEs have work in
    /// it ([`Simulator::set_split_threshold`]; results never depend on it).
    pub fn with_split_threshold(mut self, n: usize) -> Self {
        self.split_min = Some(n);
        if let Some(sim) = &mut self.sim {
            sim.set_split_threshold(n);
        }
        self
    }

    /// Whether runs step their cycles in persistent batches
    /// ([`Simulator::set_persistent`]; default on unless `CSLSIM_PERSISTENT=0`; results
    /// never depend on it).
    pub fn with_persistent(mut self, on: bool) -> Self {
        self.persistent = Some(on);
        if let Some(sim) = &mut self.sim {
            sim.set_persistent(on);
        }
        self
    }

    /// Bounds the simulated clock: a run reaching `n` cycles fails with
    /// [`SimError::CycleLimit`].
    pub fn with_max_cycles(mut self, n: u64) -> Self {
        self.max_cycles = n;
        self
    }

    /// The image.
    pub fn image(&self) -> &Image {
        &self.image
    }

    /// The simulated fabric (after `load`).
    pub fn simulator(&self) -> Option<&Simulator> {
        self.sim.as_ref()
    }

    /// Builds the fabric in its reset state.
    pub fn load(&mut self) -> Result<(), HostError> {
        if self.state != State::Created {
            return Err(HostError::AlreadyLoaded);
        }
        if let Some(e) = &self.timing_error {
            return Err(HostError::BadParams(e.clone()));
        }
        self.params.check().map_err(HostError::BadParams)?;
        // Refuse, with the figure, an image too large for this machine rather than abort
        // on a failed allocation half-way through building it.
        let needed = Simulator::memory_estimate(&self.image);
        let (limit, source) = match self.params.memory_limit_bytes {
            Some(l) => (Some(l), "set by the caller"),
            None => (available_memory(), "the memory available on this machine"),
        };
        if let Some(limit) = limit
            && needed > limit
        {
            return Err(HostError::TooLarge {
                pes: u64::from(self.image.meta.width) * u64::from(self.image.meta.height),
                needed,
                limit,
                source,
            });
        }
        let mut sim = Simulator::with_params(&self.image, self.params)?;
        // Under `mpirun -n R` (feature `mpi`) this process steps its strip of rows.
        crate::dist::join_mpi(&mut sim).map_err(|e| HostError::BadArgument {
            what: e.to_string(),
        })?;
        if let Some(t) = self.threads {
            sim.set_threads(t);
        }
        if let Some(n) = self.split_min {
            sim.set_split_threshold(n);
        }
        if let Some(on) = self.persistent {
            sim.set_persistent(on);
        }
        sim.set_trace(self.trace.clone());
        sim.set_perfetto(self.perfetto);
        sim.set_interrupt(self.interrupt.clone());
        self.sim = Some(sim);
        self.state = State::Loaded;
        Ok(())
    }

    /// Starts the fabric.
    pub fn run(&mut self) -> Result<(), HostError> {
        match self.state {
            State::Created => Err(HostError::NotLoaded),
            State::Loaded => {
                self.state = State::Running;
                Ok(())
            }
            State::Running => Err(HostError::AlreadyRunning),
            State::Stopped => Err(HostError::Stopped),
        }
    }

    /// Ends the session. Commands complete when issued, so there is nothing pending.
    pub fn stop(&mut self) -> Result<(), HostError> {
        match self.state {
            State::Created => Err(HostError::NotLoaded),
            State::Loaded => Err(HostError::NotRunning),
            State::Running => {
                self.state = State::Stopped;
                self.gather();
                Ok(())
            }
            State::Stopped => Err(HostError::Stopped),
        }
    }

    /// Brings every PE's state to every rank of a distributed run (`crate::dist`; done by
    /// [`SdkRuntime::stop`]), so that statistics and the log cover the whole rectangle;
    /// nothing to do otherwise. Every rank must call it.
    pub fn gather(&mut self) {
        if let Some(sim) = &mut self.sim {
            sim.gather();
        }
    }

    /// Lets the fabric run until nothing can progress (not a vendor call; for tools and
    /// tests). Fails with a deadlock if something is left stuck (see
    /// [`Simulator::run_until_idle`]).
    pub fn run_until_idle(&mut self) -> Result<(), HostError> {
        let max = self.max_cycles;
        let sim = self.ready()?;
        let r = sim.run_until_idle(max);
        self.record(r)
    }

    /// Starts an SdkLayout host-to-device stream (not a vendor call by this name; the
    /// Python `send` uses it): `words` enter the CE input queue of colour `color` of the PE
    /// at rectangle-relative `(x, y)` (the stream's proxy, see `cslc::sdklayout`), one
    /// per cycle at most. Returns at once; [`SdkRuntime::stream_wait`] runs the fabric.
    pub fn stream_send(
        &mut self,
        x: u32,
        y: u32,
        color: u8,
        words: Vec<u32>,
    ) -> Result<(), HostError> {
        let sim = crate::dist::no_streams(self.ready()?)?;
        let r = sim.start_h2d_stream(color, vec![((x, y), words)], MEMCPY_SETUP_CYCLES);
        self.record(r)
    }

    /// Starts an SdkLayout device-to-host stream: the next `n` wavelets the CE of PE
    /// `(x, y)` sends on `color` go to the host. One at a time: a second one while the
    /// first is unfinished is [`HostError::StreamBusy`]. Returns at once.
    pub fn stream_receive(&mut self, x: u32, y: u32, color: u8, n: usize) -> Result<(), HostError> {
        let sim = crate::dist::no_streams(self.ready()?)?;
        if sim.d2h_active() {
            return Err(HostError::StreamBusy);
        }
        sim.start_d2h_stream(color, &[(x, y)], n, MEMCPY_SETUP_CYCLES);
        Ok(())
    }

    /// Runs the fabric until every started stream has finished; returns the words of the
    /// device-to-host stream, if one was started (else nothing).
    pub fn stream_wait(&mut self) -> Result<Vec<u32>, HostError> {
        let max = self.max_cycles;
        let sim = self.ready()?;
        let r = match sim.run_until_known(crate::sim::Until::StreamsDone, max) {
            Ok(RunEnd::Condition) => Ok(()),
            Ok(RunEnd::Idle) => Err(sim.deadlock("SdkLayout streams (send/receive)", false)),
            Err(e) => Err(e),
        };
        if r.is_err() {
            sim.cancel_streams();
        }
        self.record(r)?;
        let sim = self.ready()?;
        Ok(sim.take_d2h().into_iter().flatten().collect())
    }

    /// Index of `name` among the image's exported names.
    pub fn get_id(&self, name: &str) -> Result<u32, HostError> {
        self.image
            .exports
            .iter()
            .position(|e| e.name == name)
            .map(|i| i as u32)
            .ok_or_else(|| self.unknown(name))
    }

    /// Simulated cycles so far.
    pub fn cycles(&self) -> u64 {
        self.sim.as_ref().map_or(0, Simulator::cycle)
    }

    /// The simulator log (`<simprint>` output), as `@cycle PE(x,y): text` lines.
    pub fn sim_log(&self) -> Vec<String> {
        self.simulator()
            .map(Simulator::log_lines)
            .unwrap_or_default()
    }

    /// Per-PE and total counters.
    pub fn stats(&self) -> RunStats {
        self.sim.as_ref().map(Simulator::stats).unwrap_or_default()
    }

    /// Runs the exported function `name` on every PE of the rectangle with `args` (one raw
    /// 32-bit word per declared parameter, normalised to the parameter's type) and waits
    /// until every PE has called `unblock_cmd_stream()`.
    pub fn launch(&mut self, name: &str, args: &[u32], _nonblock: bool) -> Result<(), HostError> {
        self.ready()?;
        let export = self
            .image
            .exports
            .iter()
            .find(|e| e.name == name)
            .ok_or_else(|| self.unknown(name))?;
        let ExportKind::Func { params } = &export.kind else {
            return Err(HostError::WrongSymbolKind {
                name: name.into(),
                expected: "a function",
                found: "a tensor",
            });
        };
        if args.len() != params.len() {
            return Err(HostError::WrongArgCount {
                name: name.into(),
                expected: params.len(),
                got: args.len(),
            });
        }
        let words: Arc<[u32]> = args
            .iter()
            .zip(params)
            .map(|(&a, &t)| alu::normalize(t, a))
            .collect();
        let mut funcs = Vec::with_capacity(self.image.classes.len());
        for c in 0..self.image.classes.len() {
            funcs.push(match self.lookup(c, name)? {
                None => None,
                Some(SymbolTarget::Func { func }) => Some(func),
                Some(SymbolTarget::Tensor { .. }) => {
                    return Err(HostError::WrongSymbolKind {
                        name: name.into(),
                        expected: "a function",
                        found: "a tensor on some PEs",
                    });
                }
            });
        }
        let max = self.max_cycles;
        let sim = self.ready()?;
        sim.issue_host_call(&funcs, words);
        let r = match sim.run_until_known(crate::sim::Until::AllUnblocked, max) {
            Ok(RunEnd::Condition) => Ok(()),
            Ok(RunEnd::Idle) => Err(sim.deadlock(&format!("launch `{name}`"), true)),
            Err(e) => Err(e),
        };
        self.record(r)
    }

    /// The running fabric, or why commands cannot run now.
    fn ready(&mut self) -> Result<&mut Simulator, HostError> {
        match self.state {
            State::Created => return Err(HostError::NotLoaded),
            State::Loaded => return Err(HostError::NotRunning),
            State::Stopped => return Err(HostError::Stopped),
            State::Running => {}
        }
        if let Some(e) = &self.failed {
            return Err(HostError::Sim(e.clone()));
        }
        self.sim.as_mut().ok_or(HostError::NotLoaded)
    }

    /// Remembers a simulation failure so that later commands repeat it.
    fn record(&mut self, r: Result<(), SimError>) -> Result<(), HostError> {
        r.map_err(|e| {
            // In a distributed run every rank fails here alike (the ranks agree on faults,
            // the clock and deadlock reports), but for an interrupt, which is this
            // process's own.
            if self.sim.as_ref().is_some_and(|s| s.rank().is_some())
                && !matches!(e, SimError::Interrupted { .. })
            {
                crate::dist::mark_shared_failure();
            }
            self.failed = Some(e.clone());
            HostError::Sim(e)
        })
    }

    fn unknown(&self, name: &str) -> HostError {
        HostError::UnknownSymbol {
            name: name.into(),
            known: self.image.exports.iter().map(|e| e.name.clone()).collect(),
        }
    }

    /// What class `c` exports as `name`: `Ok(None)` if no PE runs class `c`, an error if
    /// a PE runs it and it lacks the symbol.
    fn lookup(&self, c: usize, name: &str) -> Result<Option<SymbolTarget>, HostError> {
        let Some(&Some(pe_index)) = self.first_pe.get(c) else {
            return Ok(None);
        };
        self.lookup_on(c, pe_index, name).map(Some)
    }

    fn lookup_on(&self, c: usize, pe_index: usize, name: &str) -> Result<SymbolTarget, HostError> {
        let class = self.image.classes.get(c);
        let found = class.and_then(|cl| cl.info.symbols.iter().find(|s| s.name == name));
        found
            .map(|s| s.target.clone())
            .ok_or_else(|| HostError::SymbolMissingOnPe {
                name: name.into(),
                pe: self.loc_of(pe_index),
                class: class.map_or_else(String::new, |cl| cl.info.name.clone()),
            })
    }

    fn loc_of(&self, pe_index: usize) -> PeLoc {
        let m = &self.image.meta;
        let i = pe_index as u32;
        let rel = csl_arch::fabric::PeCoord {
            x: i % m.width.max(1),
            y: i / m.width.max(1),
        };
        PeLoc {
            rel,
            abs: csl_arch::fabric::PeCoord {
                x: rel.x + m.offset_x,
                y: rel.y + m.offset_y,
            },
        }
    }
}

/// The memory the operating system reports available (`MemAvailable` of `/proc/meminfo`),
/// or `None` where it reports nothing.
fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}
