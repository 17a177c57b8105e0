//! Persistent batches of cycles (SIMULATOR.md §12.7): with several threads, a run
//! (`run_until_idle`, a launch, `advance`) steps many cycles inside one
//! `std::thread::scope` whose helper threads live for the whole batch and wait for the
//! next phase by spinning on an atomic, so that handing a phase to them costs well under
//! a microsecond instead of a `rayon` scope per phase (`par::run`). With one thread a
//! batch has one part and no helper, and is used for every cycle with work: its loop,
//! with the worklists and sleepers kept in the part, is cheaper than the step-by-step
//! path's (SIMULATOR.md §12.12).
//!
//! For the batch, the PE and router vectors are taken out of the [`Simulator`] and cut
//! into a fixed set of parts (balanced by the routers and CEs with work when the batch
//! starts), each behind an `RwLock`: while routers plan, every thread read-locks the
//! parts (a plan reads its neighbours' routers); while a part commits and ticks, the
//! thread that claimed it holds its write lock. A phase claims every part exactly once
//! (an atomic per part holding the last phase that claimed it), so the locks are never
//! contended: they are the safe form of "this thread may now write these PEs". Each part
//! also keeps its own share of the worklists and of the sleepers' timers for the whole
//! batch, so between phases the caller only adds up a few counts per part (in part
//! order: hops, unblocked PEs, the first error) and decides the next phase; the routers
//! and CEs of the next cycle never leave the core that found them. The worklists and
//! timers are bit sets and wake-up lists whose results do not depend on how they are
//! cut, so a batch gives the same cycles, statistics and results as the step-by-step
//! path (the determinism tests run both).
//!
//! Only what never reads PE memory runs between a batch's cycles: the stop condition is
//! one of [`Until`], host streams end the batch (they touch PEs), and traced or
//! distributed runs never start one. No `unsafe`.

use super::{Simulator, Ticker};
use crate::class::Class;
use crate::dsd::Env;
use crate::error::SimError;
use crate::par::{ChunkWords, entity_bounds, for_bits};
use crate::pe::Pe;
use crate::router::{
    self, Chunk, CommitEnv, Geometry, Move, PartView, PlanEnv, Router, RouterPlan,
};
use crate::worklist::{Timers, WorkSet, set_bit};
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

/// Cycles of a tuning epoch, and how many of them at its start run under each policy
/// ([`Policy`]) to measure which is fastest.
const EPOCH: u32 = 4096;
const PROBE: u32 = 48;
/// The first cycles of each probe, not timed: they pay for moving the parts' cache lines
/// between the cores (back to the helpers in the first shared probe, to the caller in
/// the alone one), which the rest of the epoch does not.
const WARM: u32 = 16;

/// Which cycles of a batch the helpers share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Policy {
    /// None: the caller steps every part.
    Alone,
    /// Those with at least the batch threshold of active entities
    /// ([`BATCH_SPLIT_MIN`]); the caller steps the others alone.
    Big,
    /// Every cycle.
    All,
}

/// Which cycles are shared: from the wall time per active entity of [`PROBE`] cycles
/// under each [`Policy`] at the start of every [`EPOCH`] (the first [`WARM`] of each not
/// timed), so that a busy machine (helpers descheduled, caches shared with other
/// processes) falls back to one thread and a quiet one uses both, and so that the small
/// cycles are shared where that pays (`simbench`: three cycles in four have ~50 active
/// entities, each a PE that runs ahead for several cycles) and stepped alone where it
/// does not. The caller goes alone only when that was at least 1.5 times faster than
/// the better way of sharing. Only who steps a part depends on it.
struct Tuner {
    i: u32,
    policy: Policy,
    /// Nanoseconds and active entities of the probes, by policy.
    sums: [(u128, u128); 3],
}

impl Default for Tuner {
    fn default() -> Tuner {
        Tuner {
            i: 0,
            policy: Policy::Big,
            sums: [(0, 0); 3],
        }
    }
}

impl Tuner {
    /// The policy of the next cycle.
    fn policy(&self) -> Policy {
        match self.i / PROBE {
            0 => Policy::Big,
            1 => Policy::All,
            2 => Policy::Alone,
            _ => self.policy,
        }
    }

    /// Whether the next cycle is shared (`small`: it has fewer active entities than the
    /// batch threshold).
    fn share(&self, b: &Batch<'_>, small: bool) -> bool {
        // Napping helpers wake for the first probe and when the probes chose to share.
        if self.i == 0 || (self.i == 3 * PROBE && self.policy != Policy::Alone) {
            b.wake();
        }
        match self.policy() {
            Policy::Alone => false,
            Policy::Big => !small,
            Policy::All => true,
        }
    }

    /// Whether the next cycle is part of a probe (and its wall time wanted).
    fn probing(&self) -> bool {
        self.i < 3 * PROBE
    }

    /// Notes a cycle's wall time (measured in probes) and active entities.
    fn note(&mut self, t: Option<Duration>, active: usize) {
        let k = (self.i / PROBE) as usize;
        if self.i % PROBE >= WARM
            && let Some(t) = t
            && let Some(s) = self.sums.get_mut(k)
        {
            s.0 += t.as_nanos();
            s.1 += active as u128;
        }
        self.i += 1;
        if self.i == 3 * PROBE {
            self.policy = self.choose();
            self.sums = [(0, 0); 3];
        }
        if self.i >= EPOCH {
            self.i = 0;
        }
    }

    /// The policy the probes measured best.
    fn choose(&self) -> Policy {
        let [big, all, alone] = self.sums;
        // `x` is faster per entity than `y` by the factor `num / den`.
        let faster = |x: (u128, u128), y: (u128, u128), num: u128, den: u128| {
            x.1 > 0 && y.1 > 0 && num * x.0 * y.1 < den * y.0 * x.1
        };
        let (shared, best) = if faster(all, big, 1, 1) {
            (all, Policy::All)
        } else {
            (big, Policy::Big)
        };
        // Alone only when clearly faster: a probe is a few milliseconds of a noisy
        // clock, and a descheduled helper makes shared cycles many times slower.
        if faster(alone, shared, 3, 2) {
            Policy::Alone
        } else {
            best
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

/// What a phase does: `ROUTE` plans the routers, waits until every part has, then
/// commits and ticks (two claims of each part: phases `ph` and `ph + 1`); `TICK` ticks.
const ROUTE: u8 = 0;
const TICK: u8 = 1;
/// What a part's second step in a `ROUTE` phase does: commit and tick, or, when some
/// part's plan failed, commit the plans before the failure and stop.
const FUSED: u8 = 2;
const COMMIT: u8 = 3;

/// One part: routers and PEs `lo..lo + routers.len()`, with their own worklists and
/// sleepers for the batch. This and the parts' outputs sit on cache lines of their own:
/// neighbouring parts are written by different threads.
#[repr(align(128))]
struct Part<'a> {
    lo: usize,
    routers: &'a mut [Router],
    pes: &'a mut [Pe],
    local: Local,
}

/// A part's own worklists and sleepers during a batch (bit 0 = PE `lo`). Only the thread
/// stepping the part touches them, so between cycles the caller merges nothing but a few
/// counts ([`PartOut`]); the batch's end hands them back to the simulator.
#[derive(Default)]
struct Local {
    /// Routers to plan this cycle.
    router_cur: Vec<u64>,
    /// CEs to tick this cycle (the sleepers that wake then join them).
    ce_cur: Vec<u64>,
    /// The next cycle's lists while a phase builds them.
    words: ChunkWords,
    /// The part's sleeping PEs.
    timers: Timers,
    /// The buffer a tick collects new sleepers in.
    sleeps: Vec<(u64, u32)>,
}

/// Set bits of `words`.
fn ones(words: &[u64]) -> usize {
    words.iter().map(|w| w.count_ones() as usize).sum()
}

impl Local {
    /// The counts the caller decides the coming cycles by (cycle `now` next).
    fn next(&self, now: u64) -> Next {
        let (wake, due) = self.timers.next_due(now);
        Next {
            routers: ones(&self.router_cur),
            ces: ones(&self.ce_cur),
            wake,
            due,
        }
    }
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
    hops: u64,
    /// The tick's results (`CeChunkOut` without its sleepers, which are in the part's
    /// timers: its buffer is freed by the thread that allocated it, since a free from
    /// another thread contends for the allocator's lock).
    ticked: bool,
    unblocked: usize,
    happened: bool,
    err: Option<SimError>,
    woke: usize,
    /// PEs that went to sleep.
    slept: usize,
    /// The part's routers planned a move (a `ROUTE` phase).
    planned: bool,
    /// Some part's plan failed: this part committed and stopped (`COMMIT`).
    stopped: bool,
    /// [`Local::next`] for the next cycle.
    next: Next,
}

/// What the caller decides the coming cycles by: one part's ([`Local::next`]) or the
/// batch's totals ([`Next::add`]).
#[derive(Clone, Copy, Debug)]
struct Next {
    /// Routers and CEs with work in the next cycle.
    routers: usize,
    ces: usize,
    /// The first cycle at which sleepers are due (`u64::MAX`: none), and how many then
    /// (an estimate, non-zero exactly when some are).
    wake: u64,
    due: usize,
}

impl Default for Next {
    fn default() -> Next {
        Next {
            routers: 0,
            ces: 0,
            wake: u64::MAX,
            due: 0,
        }
    }
}

impl Next {
    fn add(self, o: Next) -> Next {
        Next {
            routers: self.routers + o.routers,
            ces: self.ces + o.ces,
            wake: self.wake.min(o.wake),
            due: match self.wake.cmp(&o.wake) {
                std::cmp::Ordering::Less => self.due,
                std::cmp::Ordering::Equal => self.due + o.due,
                std::cmp::Ordering::Greater => o.due,
            },
        }
    }

    /// The sleepers due in cycle `now`.
    fn due_at(&self, now: u64) -> usize {
        if self.wake <= now { self.due.max(1) } else { 0 }
    }
}

/// A batch: the parts, the per-phase state and the phase counter the helpers watch.
struct Batch<'a> {
    parts: Vec<RwLock<Part<'a>>>,
    plans: Vec<RwLock<PlanOut>>,
    outs: Vec<Mutex<PartOut>>,
    /// The last phase that claimed each part.
    claimed: Vec<AtomicU64>,
    /// The cycle, the phase published to the helpers, and what it does (the cycle and
    /// the kind are stored before the phase).
    now: AtomicU64,
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

/// Adds to `ce_now` (bit 0 = PE `lo`) the PEs of `pes` in `timers` whose stall ends in
/// cycle `now` ([`Simulator::wake_due`] for one part).
fn wake_part(timers: &mut Timers, lo: usize, pes: &[Pe], now: u64, ce_now: &mut [u64]) {
    timers.due(now, |p| {
        let p = p as usize;
        if pes
            .get(p.wrapping_sub(lo))
            .is_some_and(|pe| pe.stall_ends(now))
        {
            set_bit(ce_now, lo, p);
        }
    });
}

/// Zeroed words for `len` PEs in `v`.
fn zeroed(v: &mut Vec<u64>, len: usize) -> &mut [u64] {
    v.clear();
    v.resize(len.div_ceil(64), 0);
    v
}

impl Batch<'_> {
    /// Claims the parts of phase `ph` that no one has claimed, from part `first` on
    /// (wrapping), lazily: each as the iterator reaches it.
    fn claims(&self, ph: u64, first: usize) -> impl Iterator<Item = usize> + '_ {
        let k = self.parts.len();
        // Only while phase `ph` is the current one can a claim succeed (every phase claims
        // every part once), so what is read after a claim is that phase's.
        (first..k).chain(0..first).filter(move |&j| {
            self.claimed.get(j).is_some_and(|c| {
                c.compare_exchange(ph - 1, ph, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
            })
        })
    }

    /// Reports `n` parts done.
    fn report(&self, n: usize) {
        if n > 0 {
            self.done.0.fetch_add(n as u64, Ordering::Release);
        }
    }

    /// Waits until the parts of phase `ph` are done.
    fn wait(&self, ph: u64) {
        let target = ph * self.parts.len() as u64;
        // The clock is read only once the wait is longer than a few spins.
        let mut start = None;
        let mut spins = 0u32;
        while self.done.0.load(Ordering::Acquire) < target {
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(64)
                && start.get_or_insert_with(Instant::now).elapsed() > WAIT_SPIN
            {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }

    /// Steps the parts of the phase published as `ph` that this thread can claim. The
    /// locks a thread reads through are dropped before it reports its parts done, so the
    /// next step never waits for them.
    fn work(&self, ph: u64, first: usize) {
        let mut claims = self.claims(ph, first);
        let Some(j0) = claims.next() else {
            // A thread that claimed no plan leaves the commits to those that did.
            return;
        };
        // What the phase does is read once a claim succeeded: the phase is then current.
        let kind = self.kind.load(Ordering::Acquire);
        let now = self.now.load(Ordering::Acquire);
        let mut n = 0;
        if kind == TICK {
            for j in std::iter::once(j0).chain(claims) {
                self.commit_tick(j, TICK, now, &[], &[]);
                n += 1;
            }
            self.report(n);
            return;
        }
        {
            let guards: Vec<_> = self.parts.iter().map(read).collect();
            let views: Vec<PartView<'_>> = guards
                .iter()
                .map(|g| (g.lo, &*g.routers, &*g.pes))
                .collect();
            let curs: Vec<&[u64]> = guards.iter().map(|g| &g.local.router_cur[..]).collect();
            for j in std::iter::once(j0).chain(claims) {
                self.plan(j, &views, &curs, now);
                n += 1;
            }
        }
        self.report(n);
        // Every part planned, this thread claims every commit it can (also those of a
        // thread that woke too late to plan).
        self.wait(ph);
        let guards: Vec<_> = self.plans.iter().map(read).collect();
        // The plans up to the first that failed are committed, and then the cycle stops.
        let failed = guards.iter().position(|g| g.err.is_some());
        let live = guards
            .get(..failed.map_or(guards.len(), |i| i + 1))
            .unwrap_or(&[]);
        let step = if failed.is_some() { COMMIT } else { FUSED };
        let plans: Vec<&[RouterPlan]> = live.iter().map(|g| &g.plans[..]).collect();
        let moves: Vec<&[Move]> = live.iter().map(|g| &g.moves[..]).collect();
        let mut m = 0;
        for j in self.claims(ph + 1, first) {
            self.commit_tick(j, step, now, &plans, &moves);
            m += 1;
        }
        drop(guards);
        self.report(m);
    }

    /// Plans the routers of part `j` (`curs`: each part's routers with work, bit 0 = its
    /// first).
    fn plan(&self, j: usize, views: &[PartView<'_>], curs: &[&[u64]], now: u64) {
        let (Some(&(lo, routers, pes)), Some(cur), Some(out)) =
            (views.get(j), curs.get(j), self.plans.get(j))
        else {
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
        let err = &mut o.err;
        for_bits(cur, 0, routers.len(), |i| {
            match router::plan(lo + i, &penv, now, &mut o.moves, &mut o.plans) {
                Ok(()) => true,
                Err(e) => {
                    *err = Some(e);
                    false
                }
            }
        });
    }

    /// Commits and ticks part `j` (`FUSED`), ticks it (`TICK`) or commits it (`COMMIT`,
    /// a cycle that stopped at a routing error), as the chunks of `sim_step.rs` do, and
    /// keeps the next cycle's worklists and sleepers in the part.
    fn commit_tick(
        &self,
        j: usize,
        kind: u8,
        now: u64,
        plans: &[&[RouterPlan]],
        moves: &[&[Move]],
    ) {
        let (Some(part), Some(out)) = (self.parts.get(j), self.outs.get(j)) else {
            return;
        };
        let mut part = write(part);
        let Part {
            lo,
            routers,
            pes,
            local,
        } = &mut *part;
        let (lo, n) = (*lo, pes.len());
        let Local {
            router_cur,
            ce_cur,
            words,
            timers,
            sleeps,
        } = &mut *local;
        let mut o = lock(out);
        let o = &mut *o;
        let cenv = CommitEnv {
            geo: self.geo,
            classes: self.classes,
            trace: None,
            record: self.record,
        };
        let ChunkWords { router, ce, .. } = words;
        let router_next = zeroed(router, n);
        let ce_next = zeroed(ce, n);
        // This cycle's CEs: the list and the sleepers whose stall ends now.
        ce_cur.resize(n.div_ceil(64), 0);
        wake_part(timers, lo, pes, now, ce_cur);
        o.hops = 0;
        o.slept = 0;
        o.planned = plans.get(j).is_some_and(|p| !p.is_empty());
        o.stopped = kind == COMMIT;
        if kind != TICK {
            let commit = Chunk {
                lo,
                routers,
                pes,
                router_next: &mut *router_next,
                ce_next: &mut *ce_cur,
            };
            o.hops = router::commit(commit, plans, moves, &cenv, now).hops;
        }
        if kind == COMMIT {
            // The cycle stopped: what the commit woke waits for the next run.
            o.ticked = false;
            std::mem::swap(router_cur, router);
        } else {
            let ticker = Ticker {
                classes: self.classes,
                env: &self.env,
                trace: None,
                record: self.record,
                now,
            };
            let chunk = Chunk {
                lo,
                routers,
                pes,
                router_next,
                ce_next,
            };
            let c = ticker.tick_into(chunk, ce_cur, lo, std::mem::take(sleeps));
            o.slept = c.sleeps.len();
            for &(wake, p) in &c.sleeps {
                timers.add(now, wake, p);
            }
            *sleeps = c.sleeps;
            o.ticked = true;
            o.unblocked = c.unblocked;
            o.happened = c.happened;
            o.err = c.err;
            o.woke = c.woke;
            std::mem::swap(router_cur, router);
            std::mem::swap(ce_cur, ce);
        }
        o.next = local.next(now + 1);
    }

    /// A helper's life: wait for each phase, step the parts it can claim.
    fn helper(&self, t: usize) {
        let first = t * self.parts.len() / self.threads;
        let mut seen = self.phase.load(Ordering::Acquire);
        loop {
            // The clock is read only once the wait is longer than a few spins.
            let mut start = None;
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
                    let waited = start.get_or_insert_with(Instant::now).elapsed();
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

    /// The caller's side of phase `ph` in cycle `now`: publishes it (unless `alone`),
    /// steps what it can claim and waits until every part is done; returns the last
    /// phase number it used.
    fn run_phase(&self, ph: u64, kind: u8, now: u64, alone: bool) -> u64 {
        self.kind.store(kind, Ordering::Release);
        self.now.store(now, Ordering::Release);
        if !alone {
            self.phase.store(ph, Ordering::Release);
        }
        // A thread that planned a part goes on to claim every commit left, so the caller
        // never waits for a helper that woke too late to plan.
        self.work(ph, 0);
        let last = if kind == ROUTE { ph + 1 } else { ph };
        self.wait(last);
        last
    }

    /// Wakes napping helpers (before the caller shares cycles again).
    fn wake(&self) {
        for t in lock(&self.helpers).iter() {
            t.unpark();
        }
    }
}

impl Simulator {
    /// Sets whether runs step their cycles in persistent batches
    /// (SIMULATOR.md §12.7; default on unless `CSLSIM_PERSISTENT=0`). Results never
    /// depend on it.
    pub fn set_persistent(&mut self, on: bool) {
        self.persistent = on;
    }

    /// The threshold of a batch: [`BATCH_SPLIT_MIN`], or lower if the split threshold is
    /// lower ([`Simulator::set_split_threshold`]).
    fn batch_min(&self) -> usize {
        if self.threads <= 1 {
            // One thread: a batch is the cheaper loop for any cycle with work.
            return 1;
        }
        self.split_min.min(BATCH_SPLIT_MIN)
    }

    /// Whether the next cycle should start a batch.
    fn batch_wanted(&self) -> bool {
        self.persistent
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
        if !self.persistent || self.dist.on() {
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
                match self.batch(|s, b, t| s.batch_loop(b, t, Some(until), u64::MAX, max_cycles))? {
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
                match self.batch(|s, b, t| s.batch_loop(b, t, None, target, max_cycles))? {
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

    /// Runs `body` with a batch: the PE and router vectors cut into parts (each with its
    /// share of the worklists and sleepers), helper threads that live until `body`
    /// returns; everything is put back afterwards.
    fn batch<R>(&mut self, body: impl FnOnce(&mut Simulator, &Batch<'_>, Next) -> R) -> R {
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
        let now = self.cycle;
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
                let mut local = Local {
                    router_cur: vec![0; len.div_ceil(64)],
                    ce_cur: vec![0; len.div_ceil(64)],
                    words: ChunkWords::default(),
                    timers: self.sleepers.split_off(b[0] as u32, b[1] as u32),
                    sleeps: Vec::new(),
                };
                self.router_next
                    .copy_range(b[0], len, &mut local.router_cur);
                self.ce_next.copy_range(b[0], len, &mut local.ce_cur);
                parts.push(RwLock::new(Part {
                    lo: b[0],
                    routers: r,
                    pes: p,
                    local,
                }));
            }
        }
        // The parts hold the worklists now.
        self.router_next.clear();
        self.ce_next.clear();
        let totals = parts
            .iter()
            .fold(Next::default(), |t, p| t.add(read(p).local.next(now)));
        let nparts = parts.len();
        let (r, parts) = {
            let batch = Batch {
                parts,
                plans: (0..nparts).map(|_| RwLock::default()).collect(),
                outs: (0..nparts).map(|_| Mutex::default()).collect(),
                claimed: (0..nparts).map(|_| AtomicU64::new(0)).collect(),
                now: AtomicU64::new(now),
                phase: AtomicU64::new(0),
                kind: AtomicU8::new(ROUTE),
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
                let r = body(self, &batch, totals);
                batch.stop.store(true, Ordering::Release);
                r
            });
            (r, batch.parts)
        };
        for part in parts {
            let part = part.into_inner().unwrap_or_else(PoisonError::into_inner);
            self.router_next.or_shifted(part.lo, &part.local.router_cur);
            self.ce_next.or_shifted(part.lo, &part.local.ce_cur);
            self.sleepers.absorb(part.local.timers);
        }
        self.pes = pes;
        self.routers = routers;
        self.classes = classes;
        r
    }

    /// The cycles of a batch: stops at `until` (a run) or at cycle `target` (`advance`),
    /// when nothing can progress, or at the batch's end (`Stop::Leave`, always at a
    /// cycle boundary). `t`: the parts' worklist and sleeper counts for this cycle.
    fn batch_loop(
        &mut self,
        b: &Batch<'_>,
        mut t: Next,
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
            // `Simulator::local_work` over the parts (a batch has no host streams).
            let work = t.routers > 0 || t.ces > 0 || self.sleeping > 0;
            match until {
                Some(u) => {
                    if u.holds(self, b.n) {
                        return Ok(Stop::Cond);
                    }
                    if !work {
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
                    if !work {
                        return Ok(Stop::Idle);
                    }
                }
            }
            self.interrupted()?;
            // The sleepers due count: in programs whose PEs run ahead they are most of a
            // cycle's work.
            let active = t.routers.max(t.ces + t.due_at(self.cycle));
            let small = active < self.batch_min();
            // One thread has no one to share with, and nothing to tune.
            let tune = b.threads > 1;
            let share = tune && tuner.share(b, small);
            solo = if small && !share { solo + 1 } else { 0 };
            let start = (tune && tuner.probing()).then(Instant::now);
            let happened = self.batch_step(b, &mut t, &mut ph, !share)?;
            if tune {
                tuner.note(start.map(|s| s.elapsed()), active);
            }
            if !happened {
                return Ok(Stop::Idle);
            }
        }
        Ok(Stop::Cond)
    }

    /// One cycle of a batch ([`Simulator::step`] without host streams or ranks); `t`
    /// holds the parts' counts for this cycle and then for the next; `alone`: the caller
    /// steps every part itself.
    fn batch_step(
        &mut self,
        b: &Batch<'_>,
        t: &mut Next,
        ph: &mut u64,
        alone: bool,
    ) -> Result<bool, SimError> {
        let now = self.cycle;
        let mut happened = false;
        let kind = if t.routers > 0 {
            ROUTE
        } else if t.ces > 0 || t.due_at(now) > 0 {
            TICK
        } else {
            happened |= self.sleeping > 0;
            if happened {
                self.cycle += 1;
            }
            return Ok(happened);
        };
        *ph = b.run_phase(*ph + 1, kind, now, alone);
        let mut failed = None;
        let mut stopped = false;
        let mut next = Next::default();
        for out in &b.outs {
            let mut o = lock(out);
            self.wavelet_hops += o.hops;
            stopped |= o.stopped;
            happened |= o.planned;
            next = next.add(o.next);
            if o.ticked {
                self.unblocked += o.unblocked;
                happened |= o.happened;
                if failed.is_none() {
                    failed = o.err.take();
                }
                self.sleeping = (self.sleeping + o.slept).saturating_sub(o.woke);
            }
        }
        if stopped {
            // The parts committed the plans up to the first that failed, in part order;
            // what the commits woke, and the sleepers due, wait in the parts for the
            // next run.
            if let Some(e) = b.plans.iter().find_map(|p| write(p).err.take()) {
                return Err(e);
            }
        }
        *t = next;
        happened |= self.sleeping > 0;
        if let Some(e) = failed {
            return Err(e);
        }
        if happened {
            self.cycle += 1;
        }
        Ok(happened)
    }
}
