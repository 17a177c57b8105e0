//! Threads for the simulator's step: the default thread count, one shared `rayon` pool
//! of helpers per thread count, and [`run`], which maps a function over a phase's chunks
//! on the caller's thread and the helpers and returns the results in chunk order.
//!
//! It also cuts a phase into chunks ([`entity_bounds`], [`split_chunks`]) and merges the
//! chunks' worklist words afterwards ([`merge_chunks`]).
//!
//! Determinism does not rest on this module: every chunk computes from the state at the
//! start of its phase and writes only its own PEs, routers and worklist words, and the
//! results are merged in chunk order (`sim_step.rs`).

use crate::pe::Pe;
use crate::router::{Chunk, Router};
use crate::worklist::WorkSet;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The environment variable that sets the default thread count (`CSLSIM_THREADS=N`).
pub const THREADS_ENV: &str = "CSLSIM_THREADS";

/// The default number of threads: `CSLSIM_THREADS` if it is a positive number, else the
/// available cores.
pub fn default_threads() -> usize {
    std::env::var(THREADS_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The shared pool of helpers for `threads` threads: `threads - 1` workers, the caller
/// being the other (`None` if it cannot be built: the step then runs on the caller's
/// thread, with the same results).
pub(crate) fn pool(threads: usize) -> Option<Arc<rayon::ThreadPool>> {
    static POOLS: OnceLock<Mutex<BTreeMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let pools = POOLS.get_or_init(|| Mutex::new(BTreeMap::new()));
    let mut map = pools.lock().ok()?;
    if let Some(p) = map.get(&threads) {
        return Some(Arc::clone(p));
    }
    let p = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads.saturating_sub(1).max(1))
            .thread_name(|i| format!("cslsim-{i}"))
            .build()
            .ok()?,
    );
    map.insert(threads, Arc::clone(&p));
    Some(p)
}

/// How long the caller spins for helpers that are still working before it blocks.
const SPIN: Duration = Duration::from_micros(50);

/// `f` applied to every item, results in item order, and, if the items were handed to
/// helpers, whether a helper computed any of them: with a `pool` and more than one item,
/// the caller and the pool's workers share them, else all run on this thread (`None`).
///
/// The hand-over is built to cost little when it happens thousands of times a second:
/// one job per helper is spawned into an in-place scope (the caller is not a pool thread,
/// so `install` would cost it a sleep and a wake-up per phase); every thread takes
/// the items it prefers first (item `t * n / threads` on: the same PEs from phase to
/// phase, which keeps them in that core's cache), then any item no one has taken, so a
/// helper that is slow to start (a busy machine) leaves its items to the others; the
/// caller spins on a counter of finished items while a helper works, before it falls
/// back to the scope's blocking wait. Which thread computes an item never changes its
/// result.
pub(crate) fn run<I, O, F>(
    pool: Option<&rayon::ThreadPool>,
    items: Vec<I>,
    f: F,
) -> (Vec<O>, Option<bool>)
where
    I: Send,
    O: Send,
    F: Fn(I) -> O + Sync + Send,
{
    let p = match pool {
        Some(p) if items.len() > 1 => p,
        _ => return (items.into_iter().map(f).collect(), None),
    };
    let n = items.len();
    let slots: Vec<Mutex<Option<I>>> = items.into_iter().map(|i| Mutex::new(Some(i))).collect();
    let outs: Vec<Mutex<Option<O>>> = (0..n).map(|_| Mutex::new(None)).collect();
    // Items finished, and items finished by helpers.
    let (done, helped) = (AtomicUsize::new(0), AtomicUsize::new(0));
    // Helpers that started: the caller spins only while one works.
    let started = AtomicUsize::new(0);
    // Takes the items from `first` on (wrapping), skipping those taken or being taken.
    let work = |first: usize, helper: bool| {
        for j in (first..n).chain(0..first) {
            let item = slots
                .get(j)
                .and_then(|s| s.try_lock().ok().and_then(|mut s| s.take()));
            if let (Some(item), Some(out)) = (item, outs.get(j)) {
                let o = f(item);
                if let Ok(mut slot) = out.lock() {
                    *slot = Some(o);
                }
                done.fetch_add(1, Ordering::Release);
                if helper {
                    helped.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    };
    let helpers = p.current_num_threads().min(n - 1);
    p.in_place_scope(|s| {
        for t in 1..=helpers {
            let (work, started) = (&work, &started);
            s.spawn(move |_| {
                started.fetch_add(1, Ordering::Relaxed);
                work(t * n / (helpers + 1), true);
            });
        }
        work(0, false);
        let start = Instant::now();
        let mut spins = 0u32;
        while done.load(Ordering::Acquire) < n && started.load(Ordering::Relaxed) > 0 {
            std::hint::spin_loop();
            spins += 1;
            if spins.is_multiple_of(64) && start.elapsed() > SPIN {
                break;
            }
        }
    });
    let outs = outs
        .into_iter()
        .filter_map(|o| o.into_inner().ok().flatten())
        .collect();
    (outs, Some(helped.into_inner() > 0))
}

/// The PEs `bounds[j - 1]..bounds[j]` of chunk `j`, covering `lo..n` (a rank of a
/// distributed run steps only its strip, `crate::dist`): one chunk for `k == 1`; else about
/// `k` chunks with equal numbers of members of the sets `cur` together (whole 64-PE words
/// when the rectangle has enough of them, else equal numbers of PEs).
pub(crate) fn entity_bounds(cur: &[&WorkSet], lo: usize, n: usize, k: usize) -> Vec<usize> {
    if k <= 1 || n <= lo + 1 {
        return vec![lo, n];
    }
    let nw = cur.first().map_or(0, |s| s.words().len());
    let mut b = vec![lo];
    if nw >= k {
        let count = |wi: usize| -> usize {
            cur.iter()
                .map(|s| s.words().get(wi).map_or(0, |w| w.count_ones() as usize))
                .sum()
        };
        let total = cur.iter().map(|s| s.len()).sum::<usize>().max(1);
        let mut seen = 0usize;
        for wi in 0..nw {
            seen += count(wi);
            let j = b.len();
            if j < k && seen * k >= j * total && (wi + 1) * 64 > lo {
                b.push(((wi + 1) * 64).min(n));
            }
        }
    } else {
        b.extend((1..k).map(|j| lo + j * (n - lo) / k));
    }
    b.push(n);
    b.dedup();
    b
}

/// Calls `f` on the members of a worklist (`words`) in `lo..hi`, ascending, until it
/// returns `false`.
#[inline(always)]
pub(crate) fn for_bits(words: &[u64], lo: usize, hi: usize, mut f: impl FnMut(usize) -> bool) {
    let (w0, w1) = (lo / 64, hi.div_ceil(64));
    for (wi, &word) in words.iter().enumerate().take(w1).skip(w0) {
        let base = wi * 64;
        let mut bits = word;
        if base < lo {
            bits &= !0u64 << (lo - base);
        }
        if base + 64 > hi {
            bits &= !(!0u64 << (hi - base));
        }
        while bits != 0 {
            let i = base + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if !f(i) {
                return;
            }
        }
    }
}

/// The worklist words one chunk of a split phase writes (bit 0 = its first PE), kept from
/// phase to phase.
#[derive(Clone, Debug, Default)]
pub(crate) struct ChunkWords {
    /// Routers to visit next cycle.
    pub(crate) router: Vec<u64>,
    /// CEs to tick next cycle (in a router commit alone: this cycle).
    pub(crate) ce: Vec<u64>,
    /// A fused step's CEs to tick this cycle ([`FusedChunk::ce_now`]).
    pub(crate) ce_now: Vec<u64>,
}

/// Zeroed words for `len` PEs in `v`.
fn zeroed(v: &mut Vec<u64>, len: usize) -> &mut [u64] {
    v.clear();
    v.resize(len.div_ceil(64), 0);
    v
}

/// Whether `bounds` is one chunk over the whole rectangle of `n` PEs (which writes the
/// worklists directly).
fn whole(bounds: &[usize], n: usize) -> bool {
    bounds.len() <= 2 && bounds.first() == Some(&0) && bounds.get(1) == Some(&n)
}

/// Cuts `routers` and `pes` (from PE `bounds[0]` on) into the chunks of `bounds`.
fn cut<'a>(
    bounds: &[usize],
    mut routers: &'a mut [Router],
    mut pes: &'a mut [Pe],
) -> Vec<(usize, &'a mut [Router], &'a mut [Pe])> {
    // A rank of a distributed run starts at its strip.
    let skip = bounds.first().copied().unwrap_or(0);
    routers = routers.get_mut(skip..).unwrap_or_default();
    pes = pes.get_mut(skip..).unwrap_or_default();
    let mut out = Vec::with_capacity(bounds.len());
    for b in bounds.windows(2) {
        let (lo, hi) = (b[0], b[1]);
        let (r, rest) = std::mem::take(&mut routers).split_at_mut(hi - lo);
        routers = rest;
        let (p, rest) = std::mem::take(&mut pes).split_at_mut(hi - lo);
        pes = rest;
        out.push((lo, r, p));
    }
    out
}

/// Splits the rectangle into the chunks of `bounds`. With one chunk it writes the
/// worklists directly; with several each writes its own words in `bufs`, merged by
/// [`merge_chunks`].
pub(crate) fn split_chunks<'a>(
    bounds: &[usize],
    routers: &'a mut [Router],
    pes: &'a mut [Pe],
    router_next: &'a mut WorkSet,
    ce_next: &'a mut WorkSet,
    bufs: &'a mut Vec<ChunkWords>,
) -> Vec<Chunk<'a>> {
    if whole(bounds, routers.len()) {
        return vec![Chunk {
            lo: 0,
            routers,
            pes,
            router_next: router_next.words_mut(),
            ce_next: ce_next.words_mut(),
        }];
    }
    let k = bounds.len().saturating_sub(1);
    if bufs.len() < k {
        bufs.resize_with(k, Default::default);
    }
    cut(bounds, routers, pes)
        .into_iter()
        .zip(bufs.iter_mut())
        .map(|((lo, routers, pes), b)| {
            let n = pes.len();
            Chunk {
                lo,
                routers,
                pes,
                router_next: zeroed(&mut b.router, n),
                ce_next: zeroed(&mut b.ce, n),
            }
        })
        .collect()
}

/// One chunk of a fused step: the chunk's router commit, then its CE ticks
/// (`sim_step.rs`). Bit 0 of every word slice is PE `lo`.
pub(crate) struct FusedChunk<'a> {
    pub lo: usize,
    pub routers: &'a mut [Router],
    pub pes: &'a mut [Pe],
    /// Routers to visit next cycle (the commit and the ticks set bits).
    pub router_next: &'a mut [u64],
    /// CEs to tick this cycle: those already due when the cycle began, to which the
    /// commit adds the CEs it wakes.
    pub ce_now: &'a mut [u64],
    /// CEs to tick next cycle.
    pub ce_next: &'a mut [u64],
}

/// Splits the rectangle into the chunks of a fused step. `ce_now` holds this cycle's CEs
/// (empty afterwards: see [`merge_fused`]), `router_next` and `ce_next` receive the next
/// cycle's. With one chunk the chunk writes the sets directly; with several each chunk
/// gets its own words in `bufs` (its `ce_now` a copy of its part of the set).
pub(crate) fn split_fused<'a>(
    bounds: &[usize],
    routers: &'a mut [Router],
    pes: &'a mut [Pe],
    sets: [&'a mut WorkSet; 3],
    bufs: &'a mut Vec<ChunkWords>,
) -> Vec<FusedChunk<'a>> {
    let [router_next, ce_now, ce_next] = sets;
    if whole(bounds, routers.len()) {
        return vec![FusedChunk {
            lo: 0,
            routers,
            pes,
            router_next: router_next.words_mut(),
            ce_now: ce_now.words_mut(),
            ce_next: ce_next.words_mut(),
        }];
    }
    let k = bounds.len().saturating_sub(1);
    if bufs.len() < k {
        bufs.resize_with(k, Default::default);
    }
    let now: &WorkSet = ce_now;
    cut(bounds, routers, pes)
        .into_iter()
        .zip(bufs.iter_mut())
        .map(|((lo, routers, pes), b)| {
            let n = pes.len();
            let ce_now = zeroed(&mut b.ce_now, n);
            now.copy_range(lo, n, ce_now);
            FusedChunk {
                lo,
                routers,
                pes,
                router_next: zeroed(&mut b.router, n),
                ce_now,
                ce_next: zeroed(&mut b.ce, n),
            }
        })
        .collect()
}

/// Merges the chunks' words (see [`split_chunks`]) into the worklists, or, with one chunk
/// (which wrote them directly), recounts them.
pub(crate) fn merge_chunks(
    bounds: &[usize],
    n: usize,
    bufs: &[ChunkWords],
    router_next: &mut WorkSet,
    ce_next: &mut WorkSet,
) {
    if whole(bounds, n) {
        router_next.recount();
        ce_next.recount();
        return;
    }
    let k = bounds.len().saturating_sub(1);
    for (&lo, b) in bounds.iter().zip(bufs).take(k) {
        router_next.or_shifted(lo, &b.router);
        ce_next.or_shifted(lo, &b.ce);
    }
}

/// After a fused step ([`split_fused`]): merges the next cycle's words into the
/// worklists (or recounts them) and empties this cycle's CE set.
pub(crate) fn merge_fused(
    bounds: &[usize],
    n: usize,
    bufs: &[ChunkWords],
    router_next: &mut WorkSet,
    ce_now: &mut WorkSet,
    ce_next: &mut WorkSet,
) {
    merge_chunks(bounds, n, bufs, router_next, ce_next);
    // With one chunk the commit set bits in `ce_now` directly, uncounted.
    ce_now.clear_words();
}

#[cfg(test)]
mod tests {
    use super::{pool, run};

    #[test]
    fn every_item_runs_once_and_results_keep_item_order() {
        for threads in [2, 3] {
            let p = pool(threads);
            for n in [0usize, 1, 2, 3, 8, 13] {
                for _ in 0..50 {
                    let items: Vec<usize> = (0..n).collect();
                    let (out, _) = run(p.as_deref(), items, |i| i * 10 + 1);
                    let want: Vec<usize> = (0..n).map(|i| i * 10 + 1).collect();
                    assert_eq!(out, want, "{threads} threads, {n} items");
                }
            }
        }
        // On the caller alone (no pool): same results, no helper.
        let (out, helped) = run(None, vec![3, 4], |i: i32| -i);
        assert_eq!((out, helped), (vec![-3, -4], None));
    }

    #[test]
    fn items_may_borrow_the_callers_state_mutably() {
        let p = pool(2);
        let mut data = vec![0u64; 1000];
        for round in 1..=20u64 {
            let items: Vec<&mut [u64]> = data.chunks_mut(128).collect();
            let (sums, _) = run(p.as_deref(), items, |c: &mut [u64]| {
                c.iter_mut().for_each(|v| *v += round);
                c.iter().sum::<u64>()
            });
            let total: u64 = sums.iter().sum();
            assert_eq!(total, 1000 * round * (round + 1) / 2);
        }
    }
}
