//! The [`Simulator`]'s cycle: host streams, then the routers plan (read only, in parallel
//! over chunks of PEs), then each chunk commits its routers' moves and ticks its CEs in
//! one parallel step (the *fused* step), so a split cycle hands work to the threads twice.
//!
//! # Why a chunk may tick its CEs right after its own commit
//!
//! The one-by-one order is: every router commits, then every CE ticks. A chunk's commit
//! (`router::commit`) reads only the cycle's plans and moves (fixed before any commit) and
//! the chunk's own routers and PEs, and writes only those and the chunk's worklist bits;
//! a CE tick (`ce::tick`) reads and writes only its own PE and router. So no chunk reads
//! anything another chunk writes in the step, and "commit chunk `j`, tick chunk `j`" for
//! every `j`, in any order or in parallel, ends in the state of the one-by-one order. The
//! CEs a chunk ticks are those due when the cycle began (including the sleepers whose
//! stall ends now, added first: both only add members to the set) and those its own
//! commit wakes, which are its own PEs. Tested by the determinism tests, which split every
//! step (`Simulator::set_split_threshold(0)`) and compare 1, 2 and 3 threads.
//!
//! A cycle whose planning failed commits the moves before the failure and ticks nothing
//! (as before); a cycle with no router work ticks the CEs alone.

use super::{CeChunkOut, Cond, Simulator, Ticker};
use crate::error::SimError;
use crate::par::{
    self, FusedChunk, entity_bounds, for_bits, merge_chunks, merge_fused, split_chunks, split_fused,
};
use crate::router::{self, Chunk, CommitEnv, Move, PlanEnv, RouterPlan};
use std::sync::Arc;

/// Chunks per thread in a split phase (more chunks than threads balance uneven activity).
const CHUNKS_PER_THREAD: usize = 4;

/// Fewest phases a split phase runs on the caller's thread alone after a helper came too
/// late to take any chunk (doubling while it stays late, up to [`ALONE_MAX`]).
const ALONE_MIN: u32 = 16;
const ALONE_MAX: u32 = 4096;

/// Whether the helpers are worth waking: after a phase whose chunks the caller finished
/// before any helper started (a busy machine, or a phase too small), the next phases keep
/// their chunks but run them on the caller's thread alone. Only who computes a chunk
/// depends on it, never a result.
#[derive(Clone, Debug)]
pub(super) struct Helpers {
    /// Split phases left to run alone.
    alone: u32,
    /// How many to run alone after the next late phase.
    backoff: u32,
}

impl Default for Helpers {
    fn default() -> Self {
        Helpers {
            alone: 0,
            backoff: ALONE_MIN,
        }
    }
}

/// What planning one chunk of routers produced.
#[derive(Clone, Debug, Default)]
pub(super) struct PlanOut {
    plans: Vec<RouterPlan>,
    moves: Vec<Move>,
    err: Option<SimError>,
}

impl Simulator {
    /// How many chunks a phase with `active` entities is split into (1: run on this
    /// thread). The split never changes results, only who computes them.
    fn chunks_for(&mut self, active: usize) -> (usize, Option<Arc<rayon::ThreadPool>>) {
        if self.threads <= 1 || active < self.split_min || self.trace.is_some() {
            return (1, None);
        }
        let k = self.threads * CHUNKS_PER_THREAD;
        if self.helpers.alone > 0 {
            self.helpers.alone -= 1;
            return (k, None);
        }
        if self.pool.is_none() {
            self.pool = crate::par::pool(self.threads);
        }
        match &self.pool {
            Some(p) => (k, Some(Arc::clone(p))),
            None => (1, None),
        }
    }

    /// Notes whether a helper took part in a phase handed to the pool (see [`Helpers`]).
    fn helped(&mut self, helped: Option<bool>) {
        let h = &mut self.helpers;
        match helped {
            None => {}
            Some(true) => h.backoff = ALONE_MIN,
            Some(false) => {
                h.alone = h.backoff;
                h.backoff = (h.backoff * 2).min(ALONE_MAX);
            }
        }
    }

    /// Performs one cycle; returns whether anything moved or is in flight (otherwise the
    /// clock did not advance). Every entity's result depends only on the state at the
    /// start of its phase, so the run is the same for every number of threads.
    pub(super) fn step_cycle(&mut self) -> Result<bool, SimError> {
        self.step(None).map(|s| s.0)
    }

    /// [`Simulator::step_cycle`]; a rank of a distributed run also returns whether `cond`
    /// then holds on every rank and whether any has work (one reduction for both).
    pub(super) fn step(
        &mut self,
        cond: Option<Cond<'_>>,
    ) -> Result<(bool, Option<(bool, bool)>), SimError> {
        let now = self.cycle;
        let mut happened = false;
        if !self.h2d.is_empty() || self.d2h.is_some() {
            happened |= self.stream_step(now)?;
        }
        let (lo, hi) = self.own_strip();
        // The sleepers whose stall ends now join this cycle's CEs.
        self.wake_due(now);
        let mut outs = Vec::new();
        if !self.router_next.is_empty() || self.dist.on() {
            std::mem::swap(&mut self.router_cur, &mut self.router_next);
            let active = self.router_cur.len().max(self.ce_next.len());
            let (k, pool) = self.chunks_for(active);
            let pool = pool.as_deref();
            let (plans, moves, failed) = self.plan_routers(now, lo, hi, k, pool);
            happened |= !plans.is_empty();
            if let Some(e) = failed {
                self.commit_only(now, lo, hi, k, pool, &plans, &moves);
                self.plans = plans;
                self.moves = moves;
                return Err(e);
            }
            outs = self.commit_and_tick(now, lo, hi, k, pool, &plans, &moves);
            self.plans = plans;
            self.moves = moves;
        } else if !self.ce_next.is_empty() {
            let (k, pool) = self.chunks_for(self.ce_next.len());
            outs = self.tick_only(now, lo, hi, k, pool.as_deref());
        }
        // Every CE of the cycle ticked; the first fault in PE order is reported.
        let mut failed = self.absorb_ticks(outs, now, &mut happened);
        // A sleeping PE is busy (stalled) in every cycle until it wakes.
        happened |= self.sleeping > 0;
        let known = self.end_cycle(&mut happened, &mut failed, cond);
        if let Some(e) = failed {
            return Err(e);
        }
        if happened {
            self.cycle += 1;
        }
        Ok((happened, known))
    }

    /// Plans the moves of the routers of `router_cur` (in parallel over `k` chunks; no
    /// state is written); returns every plan and move in router order, and the first
    /// routing error (the moves of the routers before it, in PE order, are kept, as if
    /// the routers had moved one after another). A rank of a distributed run adds the
    /// moves that cross its cuts.
    fn plan_routers(
        &mut self,
        now: u64,
        lo: usize,
        hi: usize,
        k: usize,
        pool: Option<&rayon::ThreadPool>,
    ) -> (Vec<RouterPlan>, Vec<Move>, Option<SimError>) {
        let bounds = entity_bounds(&[&self.router_cur], lo, hi, k);
        let penv = PlanEnv {
            lo: 0,
            routers: &self.routers,
            others: &[],
            pes: &self.pes,
            geo: self.geometry(),
        };
        let cur = self.router_cur.words();
        // Each chunk plans into its own buffers, kept from cycle to cycle (no allocation
        // once they have grown).
        let mut outs = std::mem::take(&mut self.plan_outs);
        outs.resize_with(bounds.len() - 1, PlanOut::default);
        let items: Vec<(usize, &mut PlanOut)> =
            outs.iter_mut().zip(1..).map(|(o, j)| (j, o)).collect();
        let (_, helped) = par::run(pool, items, |(j, o)| {
            o.plans.clear();
            o.moves.clear();
            o.err = None;
            for_bits(cur, bounds[j - 1], bounds[j], |p| {
                match router::plan(p, &penv, now, &mut o.moves, &mut o.plans) {
                    Ok(()) => true,
                    Err(e) => {
                        o.err = Some(e);
                        false
                    }
                }
            });
        });
        self.helped(helped);
        let mut plans = std::mem::take(&mut self.plans);
        let mut moves = std::mem::take(&mut self.moves);
        plans.clear();
        moves.clear();
        let mut failed = None;
        if let [o] = outs.as_mut_slice() {
            std::mem::swap(&mut plans, &mut o.plans);
            std::mem::swap(&mut moves, &mut o.moves);
            failed = o.err.take();
        } else {
            for o in &mut outs {
                plans.extend_from_slice(&o.plans);
                moves.extend_from_slice(&o.moves);
                if o.err.is_some() {
                    failed = o.err.take();
                    break;
                }
            }
        }
        self.plan_outs = outs;
        self.dist
            .with(|d| d.exchange_moves(&mut moves, &mut plans, &mut failed));
        (plans, moves, failed)
    }

    /// Commits `plans` and `moves` without ticking the CEs (after a routing error).
    #[allow(clippy::too_many_arguments)]
    fn commit_only(
        &mut self,
        now: u64,
        lo: usize,
        hi: usize,
        k: usize,
        pool: Option<&rayon::ThreadPool>,
        plans: &[RouterPlan],
        moves: &[Move],
    ) {
        let bounds = entity_bounds(&[&self.router_cur], lo, hi, k);
        self.router_cur.clear();
        let mut bufs = std::mem::take(&mut self.chunk_words);
        let cenv = CommitEnv {
            geo: self.geometry(),
            classes: &self.classes,
            trace: self.trace.as_ref(),
            record: self.recording,
        };
        let items = split_chunks(
            &bounds,
            &mut self.routers,
            &mut self.pes,
            &mut self.router_next,
            &mut self.ce_next,
            &mut bufs,
        );
        let (outs, helped) = par::run(pool, items, |chunk| {
            router::commit(chunk, &[plans], &[moves], &cenv, now)
        });
        self.helped(helped);
        self.wavelet_hops += outs.iter().map(|o| o.hops).sum::<u64>();
        let n = self.pes.len();
        merge_chunks(&bounds, n, &bufs, &mut self.router_next, &mut self.ce_next);
        self.chunk_words = bufs;
    }

    /// The fused step: each chunk commits its routers' moves, then ticks its CEs (this
    /// cycle's, `ce_next` when the cycle began, and those its commit wakes); see the
    /// module's doc for why chunks cannot see each other.
    #[allow(clippy::too_many_arguments)]
    fn commit_and_tick(
        &mut self,
        now: u64,
        lo: usize,
        hi: usize,
        k: usize,
        pool: Option<&rayon::ThreadPool>,
        plans: &[RouterPlan],
        moves: &[Move],
    ) -> Vec<CeChunkOut> {
        std::mem::swap(&mut self.ce_cur, &mut self.ce_next);
        // Balanced by the work of both halves: the routers and the CEs due.
        let bounds = entity_bounds(&[&self.router_cur, &self.ce_cur], lo, hi, k);
        self.router_cur.clear();
        let mut bufs = std::mem::take(&mut self.chunk_words);
        let cenv = CommitEnv {
            geo: self.geometry(),
            classes: &self.classes,
            trace: self.trace.as_ref(),
            record: self.recording,
        };
        let ticker = Ticker {
            classes: &self.classes,
            env: &self.env,
            trace: self.trace.as_ref(),
            record: self.recording,
            now,
        };
        let items = split_fused(
            &bounds,
            &mut self.routers,
            &mut self.pes,
            [&mut self.router_next, &mut self.ce_cur, &mut self.ce_next],
            &mut bufs,
        );
        let lists = super::sleep_ops::sleep_lists(&mut self.sleep_bufs, items.len());
        let items: Vec<_> = items.into_iter().zip(lists).collect();
        let (outs, helped) = par::run(pool, items, |(c, list): (FusedChunk<'_>, _)| {
            let FusedChunk {
                lo,
                routers,
                pes,
                router_next,
                ce_now,
                ce_next,
            } = c;
            let commit = Chunk {
                lo,
                routers: &mut *routers,
                pes: &mut *pes,
                router_next: &mut *router_next,
                ce_next: &mut *ce_now,
            };
            let hops = router::commit(commit, &[plans], &[moves], &cenv, now).hops;
            let tick = Chunk {
                lo,
                routers,
                pes,
                router_next,
                ce_next,
            };
            (hops, ticker.tick_into(tick, ce_now, lo, list))
        });
        self.helped(helped);
        let n = self.pes.len();
        merge_fused(
            &bounds,
            n,
            &bufs,
            &mut self.router_next,
            &mut self.ce_cur,
            &mut self.ce_next,
        );
        self.chunk_words = bufs;
        let mut ces = Vec::with_capacity(outs.len());
        for (hops, o) in outs {
            self.wavelet_hops += hops;
            ces.push(o);
        }
        ces
    }

    /// Ticks the CEs of `ce_next` (a cycle in which no router has work).
    fn tick_only(
        &mut self,
        now: u64,
        lo: usize,
        hi: usize,
        k: usize,
        pool: Option<&rayon::ThreadPool>,
    ) -> Vec<CeChunkOut> {
        std::mem::swap(&mut self.ce_cur, &mut self.ce_next);
        let bounds = entity_bounds(&[&self.ce_cur], lo, hi, k);
        let mut bufs = std::mem::take(&mut self.chunk_words);
        let items = split_chunks(
            &bounds,
            &mut self.routers,
            &mut self.pes,
            &mut self.router_next,
            &mut self.ce_next,
            &mut bufs,
        );
        let ticker = Ticker {
            classes: &self.classes,
            env: &self.env,
            trace: self.trace.as_ref(),
            record: self.recording,
            now,
        };
        let lists = super::sleep_ops::sleep_lists(&mut self.sleep_bufs, items.len());
        let items: Vec<_> = items.into_iter().zip(lists).collect();
        let cur = self.ce_cur.words();
        let (outs, helped) = par::run(pool, items, |(chunk, list)| {
            ticker.tick_into(chunk, cur, 0, list)
        });
        self.helped(helped);
        let n = self.pes.len();
        merge_chunks(&bounds, n, &bufs, &mut self.router_next, &mut self.ce_next);
        self.chunk_words = bufs;
        self.ce_cur.clear();
        outs
    }
}
