//! Persistent batches of cycles (SIMULATOR.md §12.7): with several threads, a run
//! (`run_until_idle`, a launch, `advance`) steps many cycles inside one
//! `std::thread::scope` whose helper threads live for the whole batch and wait for the
//! next phase by spinning on an atomic, so that handing a phase to them costs well under
//! a microsecond instead of a `rayon` scope per phase (`par::run`).
//!
//! For the batch, the PE and router vectors are taken out of the [`Simulator`] and cut
//! into a fixed set of parts (balanced by the routers and CEs with work when the batch
//! starts), each behind an `RwLock`: while routers plan, every thread read-locks the
//! parts (a plan reads its neighbours' routers); while a part commits and ticks, the
//! thread that claimed it holds its write lock. A phase claims every part exactly once
//! (an atomic per part holding the last phase that claimed it), so the locks are never
//! contended: they are the safe form of "this thread may now write these PEs". Between
//! phases the caller merges the parts' results in part order, exactly as the chunks of
//! `sim_step.rs` are merged, so a batch gives the same cycles, statistics and results as
//! the step-by-step path (the determinism tests run both).
//!
//! Only what never reads PE memory runs between a batch's cycles: the stop condition is
//! one of [`Until`], host streams end the batch (they touch PEs), and traced or
//! distributed runs never start one. No `unsafe`.

use super::{CeChunkOut, Simulator, Ticker};
use crate::class::Class;
use crate::dsd::Env;
use crate::error::SimError;
use crate::par::{ChunkWords, entity_bounds, for_bits};
use crate::pe::Pe;
use crate::router::{
    self, Chunk, CommitEnv, Geometry, Move, PartView, PlanEnv, Router, RouterPlan,
};
use crate::worklist::{WorkSet, set_bit};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

/// Parts per thread in a batch. One: each thread's part stays in its core's cache. With
/// two, the thread that finished first took the other's second part in most cycles, and
/// moving those lines between the cores cost more than the balance gained (SIMULATOR.md
/// §12.11). A thread that is late still loses its whole part to one that is on time.
const PARTS_PER_THREAD: usize = 1;
/// Cycles after which a batch ends (and the next one re-balances its parts).
const BATCH_CYCLES: u64 = 8192;
/// Default fewest routers or CEs with work for a cycle to be shared in a batch (lower
/// than [`super::SPLIT_MIN_ACTIVE`]: a batch's hand-over is cheap).
pub const BATCH_SPLIT_MIN: usize = 512;
/// Consecutive cycles below the threshold after which a batch ends.
const SOLO_END: u32 = 1024;
/// How long a helper spins for the next phase before it yields its core, and how long
/// it yields before it naps (its caller then steps the parts alone).
const SPIN: Duration = Duration::from_micros(30);
const YIELD: Duration = Duration::from_micros(500);
const NAP: Duration = Duration::from_micros(200);
/// How long the caller spins on parts claimed by a helper before it yields its core.
const WAIT_SPIN: Duration = Duration::from_micros(50);

/// Cycles of a tuning epoch, and how many of them at its start run alone and then shared
/// to measure which is faster.
const EPOCH: u32 = 4096;
const PROBE: u32 = 48;
/// The first cycles of each probe, not timed: they pay for moving the parts' cache lines
/// between the cores (to the caller in the alone probe, back in the shared one), which
/// the rest of the epoch does not.
const WARM: u32 = 16;

/// Whether the cycles worth sharing are shared: from the wall time per active entity of
/// [`PROBE`] cycles run alone and [`PROBE`] shared at the start of every [`EPOCH`] (the
/// first [`WARM`] of each not timed), so that a busy machine (helpers descheduled, caches
/// shared with other processes) falls back to one thread and a quiet one uses both. The
/// caller goes alone only when that was at least 1.5 times faster. Only who steps a part depends on it.
#[derive(Default)]
struct Tuner {
    i: u32,
    share: bool,
    /// Nanoseconds and active entities of the probes: alone, shared.
    sums: [(u128, u128); 2],
}

impl Tuner {
    /// Whether the next cycle is shared (wakes the helpers when sharing starts).
    fn share(&self, b: &Batch<'_>) -> bool {
        let share = match self.i {
            i if i < PROBE => false,
            i if i < 2 * PROBE => true,
            _ => self.share,
        };
        if share && (self.i == PROBE || self.i == 2 * PROBE) {
            b.wake();
        }
        share
    }

    /// Notes a cycle's wall time and active entities.
    fn note(&mut self, share: bool, t: Duration, active: usize) {
        if self.i < 2 * PROBE
            && self.i % PROBE >= WARM
            && let Some(s) = self.sums.get_mut(usize::from(share))
        {
            s.0 += t.as_nanos();
            s.1 += active as u128;
        }
        self.i += 1;
        if self.i == 2 * PROBE {
            let [(ta, na), (ts, ns)] = self.sums;
            // Alone only when clearly faster: a probe is a few milliseconds of a noisy
            // clock, and a descheduled helper makes shared cycles many times slower.
            self.share = na > 0 && ns > 0 && 2 * ts * na < 3 * ta * ns;
            self.sums = Default::default();
        }
        if self.i >= EPOCH {
            self.i = 0;
        }
    }
}

/// The environment variable that turns persistent batches off (`CSLSIM_PERSISTENT=0`;
/// SIMULATOR.md §12.7, §12.9).
pub const PERSISTENT_ENV: &str = "CSLSIM_PERSISTENT";

/// Whether persistent batches are on by default: yes, unless `CSLSIM_PERSISTENT=0`
/// (measured faster than the per-phase path with two free cores, SIMULATOR.md §12.9; on a
/// busy machine the tuner keeps the cycles on the caller's thread).
pub(super) fn persistent_default() -> bool {
    !std::env::var(PERSISTENT_ENV).is_ok_and(|v| v.trim() == "0")
}

/// What a run stops at (conditions that read no PE state, so a batch can check them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Until {
    /// Nothing to stop at (`run_until_idle`).
    Never,
    /// [`Simulator::all_unblocked`].
    AllUnblocked,
    /// [`Simulator::streams_done`].
    StreamsDone,
}

impl Until {
    /// Whether the condition holds; `n` is the number of PEs (inside a batch the PE
    /// vector is out of the simulator).
    fn holds(self, s: &Simulator, n: usize) -> bool {
        match self {
            Until::Never => false,
            Until::AllUnblocked => s.unblocked >= n,
            Until::StreamsDone => s.streams_done(),
        }
    }

    /// The condition as [`Simulator::run_until`] takes it.
    fn check(self, s: &Simulator) -> bool {
        match self {
            Until::Never => false,
            Until::AllUnblocked => s.all_unblocked(),
            Until::StreamsDone => s.streams_done(),
        }
    }
}

/// Why a batch's loop returned.
enum Stop {
    /// The condition held.
    Cond,
    /// Nothing can progress.
    Idle,
    /// The batch ended (its length, a host stream, too little work): go on step by step.
    Leave,
}

/// What a phase does.
const PLAN: u8 = 0;
const FUSED: u8 = 1;
const TICK: u8 = 2;
const COMMIT: u8 = 3;

/// One part: routers and PEs `lo..lo + routers.len()`. This and the parts' outputs sit
/// on cache lines of their own: neighbouring parts are written by different threads.
#[repr(align(128))]
struct Part<'a> {
    lo: usize,
    routers: &'a mut [Router],
    pes: &'a mut [Pe],
}

/// What planning a part produced (read by every part's commit: the moves are not
/// copied into one list).
#[derive(Default)]
#[repr(align(128))]
struct PlanOut {
    plans: Vec<RouterPlan>,
    moves: Vec<Move>,
    err: Option<SimError>,
}

/// What a part's commit and tick produced.
#[derive(Default)]
#[repr(align(128))]
struct PartOut {
    words: ChunkWords,
    hops: u64,
    ce: Option<CeChunkOut>,
}

/// What every thread reads in a phase (written by the caller between phases).
struct Shared {
    now: u64,
    router_cur: WorkSet,
    ce_cur: WorkSet,
    /// The sleepers due this cycle, not yet checked against their PE: each part wakes its
    /// own ([`wake_part`]), so the caller never reads the PEs a helper steps (reading
    /// their lines had made the helper's next writes cache misses).
    due: WorkSet,
    /// The parts whose plans are committed (all, or up to the first that failed).
    upto: usize,
}

/// A batch: the parts, the per-phase state and the phase counter the helpers watch.
struct Batch<'a> {
    parts: Vec<RwLock<Part<'a>>>,
    plans: Vec<RwLock<PlanOut>>,
    outs: Vec<Mutex<PartOut>>,
    /// The last phase that claimed each part.
    claimed: Vec<AtomicU64>,
    shared: RwLock<Shared>,
    /// The phase published to the helpers, and what it does.
    phase: AtomicU64,
    kind: AtomicU8,
    /// Parts finished, over all phases (on its own cache line: the helpers spin on
    /// `phase`).
    done: Padded<AtomicU64>,
    stop: AtomicBool,
    /// The helper threads (to wake them from a nap).
    helpers: Mutex<Vec<std::thread::Thread>>,
    threads: usize,
    n: usize,
    geo: Geometry,
    classes: &'a [Class],
    env: Env,
    record: bool,
}

fn read<T>(l: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(PoisonError::into_inner)
}

fn write<T>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(PoisonError::into_inner)
}

fn lock<T>(l: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    l.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A value on a cache line of its own.
#[repr(align(128))]
struct Padded<T>(T);

/// Adds to `ce_now` (bit 0 = PE `lo`) the PEs of `pes` that are in `due` and whose stall
/// ends in cycle `now` ([`Simulator::wake_due`] for one part).
fn wake_part(due: &WorkSet, lo: usize, pes: &[Pe], now: u64, ce_now: &mut [u64]) {
    if due.is_empty() {
        return;
    }
    for_bits(due.words(), lo, lo + pes.len(), |p| {
        if pes.get(p - lo).is_some_and(|pe| pe.stall_ends(now)) {
            set_bit(ce_now, lo, p);
        }
        true
    });
}

/// Zeroed words for `len` PEs in `v`.
fn zeroed(v: &mut Vec<u64>, len: usize) -> &mut [u64] {
    v.clear();
    v.resize(len.div_ceil(64), 0);
    v
}

impl Batch<'_> {
    /// Steps every part of phase `ph` that no one has claimed, from part `first` on
    /// (wrapping); returns how many this thread stepped. The locks a thread reads
    /// through are taken at its first claim and dropped before it reports its parts
    /// done, so the next phase never waits for them.
    fn work(&self, ph: u64, first: usize) -> usize {
        let k = self.parts.len();
        // Only while phase `ph` is the current one can a claim succeed (every phase claims
        // every part once), so what is read after a claim is that phase's.
        let mut claims = (first..k).chain(0..first).filter(|&j| {
            self.claimed.get(j).is_some_and(|c| {
                c.compare_exchange(ph - 1, ph, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
            })
        });
        let Some(j0) = claims.next() else {
            return 0;
        };
        let kind = self.kind.load(Ordering::Acquire);
        let sh = read(&self.shared);
        let mut stepped = 1;
        if kind == PLAN {
            let guards: Vec<_> = self.parts.iter().map(read).collect();
            let views: Vec<PartView<'_>> = guards
                .iter()
                .map(|g| (g.lo, &*g.routers, &*g.pes))
                .collect();
            self.plan(j0, &views, &sh);
            for j in claims {
                self.plan(j, &views, &sh);
                stepped += 1;
            }
        } else {
            let upto = if kind == TICK { 0 } else { sh.upto };
            let guards: Vec<_> = self.plans.iter().take(upto).map(read).collect();
            let plans: Vec<&[RouterPlan]> = guards.iter().map(|g| &g.plans[..]).collect();
            let moves: Vec<&[Move]> = guards.iter().map(|g| &g.moves[..]).collect();
            self.commit_tick(j0, kind, &sh, &plans, &moves);
            for j in claims {
                self.commit_tick(j, kind, &sh, &plans, &moves);
                stepped += 1;
            }
        }
        drop(sh);
        self.done.0.fetch_add(stepped as u64, Ordering::Release);
        stepped
    }

    /// Plans the routers of part `j`.
    fn plan(&self, j: usize, views: &[PartView<'_>], sh: &Shared) {
        let (Some(&(lo, routers, pes)), Some(out)) = (views.get(j), self.plans.get(j)) else {
            return;
        };
        let penv = PlanEnv {
            lo,
            routers,
            pes,
            others: views,
            geo: self.geo,
        };
        let mut o = write(out);
        let o = &mut *o;
        o.plans.clear();
        o.moves.clear();
        o.err = None;
        let (now, err) = (sh.now, &mut o.err);
        for_bits(
            sh.router_cur.words(),
            lo,
            lo + routers.len(),
            |p| match router::plan(p, &penv, now, &mut o.moves, &mut o.plans) {
                Ok(()) => true,
                Err(e) => {
                    *err = Some(e);
                    false
                }
            },
        );
    }

    /// Commits and ticks part `j` (`FUSED`), ticks it (`TICK`) or commits it (`COMMIT`),
    /// as the chunks of `sim_step.rs` do.
    fn commit_tick(
        &self,
        j: usize,
        kind: u8,
        sh: &Shared,
        plans: &[&[RouterPlan]],
        moves: &[&[Move]],
    ) {
        let (Some(part), Some(out)) = (self.parts.get(j), self.outs.get(j)) else {
            return;
        };
        let mut part = write(part);
        let Part { lo, routers, pes } = &mut *part;
        let (lo, n) = (*lo, pes.len());
        let mut o = lock(out);
        let o = &mut *o;
        let now = sh.now;
        let cenv = CommitEnv {
            geo: self.geo,
            classes: self.classes,
            trace: None,
            record: self.record,
        };
        let ChunkWords { router, ce, ce_now } = &mut o.words;
        let router_next = zeroed(router, n);
        let ce_next = zeroed(ce, n);
        let (classes, env) = (self.classes, &self.env);
        let ticker = Ticker {
            classes,
            env,
            trace: None,
            record: self.record,
            now,
        };
        let tick = |chunk: Chunk<'_>, cur: &[u64], base: usize| ticker.tick(chunk, cur, base);
        match kind {
            FUSED => {
                let ce_now = zeroed(ce_now, n);
                sh.ce_cur.copy_range(lo, n, ce_now);
                wake_part(&sh.due, lo, pes, now, ce_now);
                let commit = Chunk {
                    lo,
                    routers,
                    pes,
                    router_next: &mut *router_next,
                    ce_next: &mut *ce_now,
                };
                o.hops = router::commit(commit, plans, moves, &cenv, now).hops;
                let chunk = Chunk {
                    lo,
                    routers,
                    pes,
                    router_next,
                    ce_next,
                };
                o.ce = Some(tick(chunk, ce_now, lo));
            }
            _ => {
                let chunk = Chunk {
                    lo,
                    routers,
                    pes,
                    router_next,
                    ce_next,
                };
                if kind == TICK {
                    let ce_now = zeroed(ce_now, n);
                    sh.ce_cur.copy_range(lo, n, ce_now);
                    wake_part(&sh.due, lo, chunk.pes, now, ce_now);
                    o.hops = 0;
                    o.ce = Some(tick(chunk, ce_now, lo));
                } else {
                    o.hops = router::commit(chunk, plans, moves, &cenv, now).hops;
                    o.ce = None;
                }
            }
        }
    }

    /// A helper's life: wait for each phase, step the parts it can claim.
    fn helper(&self, t: usize) {
        let first = t * self.parts.len() / self.threads;
        let mut seen = self.phase.load(Ordering::Acquire);
        loop {
            let start = Instant::now();
            let mut spins = 0u32;
            let ph = loop {
                if self.stop.load(Ordering::Acquire) {
                    return;
                }
                let ph = self.phase.load(Ordering::Acquire);
                if ph != seen {
                    break ph;
                }
                spins = spins.wrapping_add(1);
                if spins.is_multiple_of(64) {
                    let waited = start.elapsed();
                    if waited > SPIN + YIELD {
                        std::thread::park_timeout(NAP);
                    } else if waited > SPIN {
                        std::thread::yield_now();
                    }
                } else {
                    std::hint::spin_loop();
                }
            };
            seen = ph;
            self.work(ph, first);
        }
    }

    /// The caller's side of phase `ph`: publishes it (unless `alone`), steps what it can
    /// claim and waits until every part is done.
    fn run_phase(&self, ph: u64, kind: u8, alone: bool) {
        self.kind.store(kind, Ordering::Release);
        if !alone {
            self.phase.store(ph, Ordering::Release);
        }
        self.work(ph, 0);
        let target = ph * self.parts.len() as u64;
        let start = Instant::now();
        let mut spins = 0u32;
        while self.done.0.load(Ordering::Acquire) < target {
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(64) && start.elapsed() > WAIT_SPIN {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }

    /// Wakes napping helpers (before the caller shares cycles again).
    fn wake(&self) {
        for t in lock(&self.helpers).iter() {
            t.unpark();
        }
    }
}

impl Simulator {
    /// Sets whether runs with several threads step their cycles in persistent batches
    /// (SIMULATOR.md §12.7; default on unless `CSLSIM_PERSISTENT=0`). Results never
    /// depend on it.
    pub fn set_persistent(&mut self, on: bool) {
        self.persistent = on;
    }

    /// The threshold of a batch: [`BATCH_SPLIT_MIN`], or lower if the split threshold is
    /// lower ([`Simulator::set_split_threshold`]).
    fn batch_min(&self) -> usize {
        self.split_min.min(BATCH_SPLIT_MIN)
    }

    /// Whether the next cycle should start a batch.
    fn batch_wanted(&self) -> bool {
        self.persistent
            && self.threads > 1
            && self.trace.is_none()
            && !self.dist.on()
            && self.h2d.is_empty()
            && self.d2h.is_none()
            && self
                .router_next
                .len()
                .max(self.ce_next.len() + self.sleepers.due_at(self.cycle))
                >= self.batch_min().max(1)
    }

    /// [`Simulator::run_until`] with a condition that reads no PE: cycles with enough
    /// work run in persistent batches.
    pub(crate) fn run_until_known(
        &mut self,
        until: Until,
        max_cycles: u64,
    ) -> Result<super::RunEnd, SimError> {
        if !self.persistent || self.threads <= 1 || self.dist.on() {
            return self.run_until(move |s| until.check(s), max_cycles);
        }
        self.resume();
        let r = self.run_known_inner(until, max_cycles);
        self.settle();
        r
    }

    fn run_known_inner(
        &mut self,
        until: Until,
        max_cycles: u64,
    ) -> Result<super::RunEnd, SimError> {
        use super::RunEnd;
        loop {
            if self.batch_wanted() {
                match self.batch(|s, b| s.batch_loop(b, Some(until), u64::MAX, max_cycles))? {
                    Stop::Cond => return Ok(RunEnd::Condition),
                    Stop::Idle => return Ok(RunEnd::Idle),
                    Stop::Leave => {}
                }
                // A batch left at a cycle boundary; continue step by step.
            }
            let n = self.pes.len();
            if until.holds(self, n) {
                return Ok(RunEnd::Condition);
            }
            if !self.local_work() {
                return Ok(RunEnd::Idle);
            }
            if self.cycle >= max_cycles {
                return Err(SimError::CycleLimit { cycle: self.cycle });
            }
            self.interrupted()?;
            if !self.step_cycle()? {
                return Ok(RunEnd::Idle);
            }
        }
    }

    /// [`Simulator::advance`]'s loop: cycles with enough work (and persistent batches on)
    /// run in persistent batches, the others one by one.
    pub(super) fn advance_batched(&mut self, cycles: u64, max_cycles: u64) -> Result<(), SimError> {
        let target = self.cycle.saturating_add(cycles);
        while self.cycle < target {
            if self.batch_wanted() {
                match self.batch(|s, b| s.batch_loop(b, None, target, max_cycles))? {
                    Stop::Idle => self.cycle = target.min(max_cycles),
                    Stop::Cond | Stop::Leave => {}
                }
                continue;
            }
            if self.cycle >= max_cycles {
                return Err(SimError::CycleLimit { cycle: self.cycle });
            }
            self.interrupted()?;
            if !self.has_work() || !self.step_cycle()? {
                self.cycle = target.min(max_cycles);
            }
        }
        Ok(())
    }

    /// Runs `body` with a batch: the PE and router vectors cut into parts, helper
    /// threads that live until `body` returns; the vectors are put back afterwards.
    fn batch<R>(&mut self, body: impl FnOnce(&mut Simulator, &Batch<'_>) -> R) -> R {
        let mut pes = std::mem::take(&mut self.pes);
        let mut routers = std::mem::take(&mut self.routers);
        let classes = std::mem::take(&mut self.classes);
        let n = pes.len();
        let k = self.threads * PARTS_PER_THREAD;
        // Balanced by the PEs with work or asleep in a stall (they wake within cycles):
        // the active sets alone miss the sleepers, which in programs whose PEs run ahead
        // are most of the work.
        let mut live = WorkSet::new(n);
        for (p, pe) in pes.iter().enumerate() {
            if pe.sleep_until != 0 {
                live.insert(p);
            }
        }
        let bounds = entity_bounds(&[&self.router_next, &self.ce_next, &live], 0, n, k);
        let mut parts = Vec::with_capacity(bounds.len());
        {
            let (mut rs, mut ps) = (routers.as_mut_slice(), pes.as_mut_slice());
            for b in bounds.windows(2) {
                let len = b[1] - b[0];
                let (lr, lp) = (len.min(rs.len()), len.min(ps.len()));
                let (r, rest) = std::mem::take(&mut rs).split_at_mut(lr);
                rs = rest;
                let (p, rest) = std::mem::take(&mut ps).split_at_mut(lp);
                ps = rest;
                parts.push(RwLock::new(Part {
                    lo: b[0],
                    routers: r,
                    pes: p,
                }));
            }
        }
        let nparts = parts.len();
        let shared = Shared {
            now: self.cycle,
            router_cur: std::mem::take(&mut self.router_cur),
            ce_cur: std::mem::take(&mut self.ce_cur),
            due: WorkSet::new(n),
            upto: 0,
        };
        let (r, shared) = {
            let batch = Batch {
                parts,
                plans: (0..nparts).map(|_| RwLock::default()).collect(),
                outs: (0..nparts).map(|_| Mutex::default()).collect(),
                claimed: (0..nparts).map(|_| AtomicU64::new(0)).collect(),
                shared: RwLock::new(shared),
                phase: AtomicU64::new(0),
                kind: AtomicU8::new(PLAN),
                done: Padded(AtomicU64::new(0)),
                stop: AtomicBool::new(false),
                helpers: Mutex::default(),
                threads: self.threads.min(nparts).max(1),
                n,
                geo: self.geometry(),
                classes: &classes,
                env: self.env,
                record: self.recording,
            };
            let r = std::thread::scope(|s| {
                for t in 1..batch.threads {
                    let b = &batch;
                    let h = s.spawn(move || b.helper(t));
                    lock(&batch.helpers).push(h.thread().clone());
                }
                let r = body(self, &batch);
                batch.stop.store(true, Ordering::Release);
                r
            });
            let shared = batch
                .shared
                .into_inner()
                .unwrap_or_else(PoisonError::into_inner);
            (r, shared)
        };
        self.router_cur = shared.router_cur;
        self.ce_cur = shared.ce_cur;
        self.pes = pes;
        self.routers = routers;
        self.classes = classes;
        r
    }

    /// The cycles of a batch: stops at `until` (a run) or at cycle `target` (`advance`),
    /// when nothing can progress, or at the batch's end (`Stop::Leave`, always at a
    /// cycle boundary).
    fn batch_loop(
        &mut self,
        b: &Batch<'_>,
        until: Option<Until>,
        target: u64,
        max_cycles: u64,
    ) -> Result<Stop, SimError> {
        let end = self.cycle.saturating_add(BATCH_CYCLES);
        let mut ph = 0u64;
        let mut solo = 0u32;
        let mut tuner = Tuner::default();
        while self.cycle < target {
            if self.cycle >= end || solo >= SOLO_END || !self.h2d.is_empty() || self.d2h.is_some() {
                return Ok(Stop::Leave);
            }
            match until {
                Some(u) => {
                    if u.holds(self, b.n) {
                        return Ok(Stop::Cond);
                    }
                    if !self.local_work() {
                        return Ok(Stop::Idle);
                    }
                    if self.cycle >= max_cycles {
                        return Err(SimError::CycleLimit { cycle: self.cycle });
                    }
                }
                None => {
                    if self.cycle >= max_cycles {
                        return Err(SimError::CycleLimit { cycle: self.cycle });
                    }
                    if !self.local_work() {
                        return Ok(Stop::Idle);
                    }
                }
            }
            self.interrupted()?;
            // The sleepers due count: in programs whose PEs run ahead they are most of a
            // cycle's work.
            let due = self.take_due(b);
            let active = self.router_next.len().max(self.ce_next.len() + due);
            let small = active < self.batch_min();
            solo = if small { solo + 1 } else { 0 };
            if small {
                if !self.batch_step(b, &mut ph, true, due)? {
                    return Ok(Stop::Idle);
                }
                continue;
            }
            let share = tuner.share(b);
            let start = Instant::now();
            let happened = self.batch_step(b, &mut ph, !share, due)?;
            tuner.note(share, start.elapsed(), active);
            if !happened {
                return Ok(Stop::Idle);
            }
        }
        Ok(Stop::Cond)
    }

    /// One cycle of a batch ([`Simulator::step`] without host streams or ranks), whose
    /// `due` sleepers due are in the shared state ([`Simulator::take_due`]); `alone`: the
    /// caller steps every part itself.
    fn batch_step(
        &mut self,
        b: &Batch<'_>,
        ph: &mut u64,
        alone: bool,
        due: usize,
    ) -> Result<bool, SimError> {
        let now = self.cycle;
        let mut happened = false;
        let mut phase = |kind: u8| {
            *ph += 1;
            b.run_phase(*ph, kind, alone);
        };
        let mut ticked = false;
        if !self.router_next.is_empty() {
            {
                let mut sh = write(&b.shared);
                sh.now = now;
                std::mem::swap(&mut sh.router_cur, &mut self.router_next);
            }
            phase(PLAN);
            let failed = {
                // The moves stay in the parts' buffers: each commit reads them there.
                let mut failed = None;
                let mut upto = 0;
                for out in &b.plans {
                    let mut o = write(out);
                    happened |= !o.plans.is_empty();
                    upto += 1;
                    if o.err.is_some() {
                        failed = o.err.take();
                        break;
                    }
                }
                let mut sh = write(&b.shared);
                sh.upto = upto;
                if failed.is_none() {
                    std::mem::swap(&mut sh.ce_cur, &mut self.ce_next);
                }
                failed
            };
            if let Some(e) = failed {
                phase(COMMIT);
                self.merge_parts(b, false);
                write(&b.shared).router_cur.clear();
                self.wake_due_parts(b);
                return Err(e);
            }
            phase(FUSED);
            ticked = true;
        } else if !self.ce_next.is_empty() || due > 0 {
            {
                let mut sh = write(&b.shared);
                sh.now = now;
                std::mem::swap(&mut sh.ce_cur, &mut self.ce_next);
            }
            phase(TICK);
            ticked = true;
        }
        let mut failed = None;
        if ticked {
            let outs = self.merge_parts(b, true);
            failed = self.absorb_ticks(outs, now, &mut happened);
            let mut sh = write(&b.shared);
            sh.router_cur.clear();
            sh.ce_cur.clear();
            sh.due.clear();
        }
        happened |= self.sleeping > 0;
        if let Some(e) = failed {
            return Err(e);
        }
        if happened {
            self.cycle += 1;
        }
        Ok(happened)
    }

    /// Merges the parts' worklist words and hops (in part order) and takes their CE
    /// results (with `ces`).
    fn merge_parts(&mut self, b: &Batch<'_>, ces: bool) -> Vec<CeChunkOut> {
        let mut outs = Vec::with_capacity(if ces { b.outs.len() } else { 0 });
        for (part, out) in b.parts.iter().zip(&b.outs) {
            let lo = read(part).lo;
            let mut o = lock(out);
            self.router_next.or_shifted(lo, &o.words.router);
            self.ce_next.or_shifted(lo, &o.words.ce);
            self.wavelet_hops += o.hops;
            if ces && let Some(c) = o.ce.take() {
                outs.push(c);
            }
        }
        outs
    }

    /// Moves the sleepers due this cycle from the timers to the shared state, where each
    /// part checks its own; returns how many (stale entries included).
    fn take_due(&mut self, b: &Batch<'_>) -> usize {
        let now = self.cycle;
        let mut sh = write(&b.shared);
        let due = &mut sh.due;
        self.sleepers.due(now, |p| due.insert(p as usize));
        due.len()
    }

    /// [`Simulator::wake_due`] by the caller for the sleepers left in the shared state
    /// (a cycle that stopped at a routing error: they wake when the run goes on).
    fn wake_due_parts(&mut self, b: &Batch<'_>) {
        let mut sh = write(&b.shared);
        let guards: Vec<_> = b.parts.iter().map(read).collect();
        let now = self.cycle;
        for g in &guards {
            let mut words = vec![0u64; g.pes.len().div_ceil(64)];
            wake_part(&sh.due, g.lo, g.pes, now, &mut words);
            self.ce_next.or_shifted(g.lo, &words);
        }
        sh.due.clear();
    }
}
