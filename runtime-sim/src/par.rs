//! Threads for the simulator's step: the default thread count, one shared `rayon` pool
//! per thread count, and [`run`], which maps a function over a phase's chunks on the pool
//! (or on the caller's thread) and returns the results in chunk order.
//!
//! It also cuts a phase into chunks ([`entity_bounds`], [`split_chunks`]) and merges the
//! chunks' worklist words afterwards ([`merge_chunks`]).
//!
//! Determinism does not rest on this module: every chunk computes from the state at the
//! start of its phase and writes only its own PEs, routers and worklist words, and the
//! results are merged in chunk order (`sim.rs`).

use crate::pe::Pe;
use crate::router::{Chunk, Router};
use crate::worklist::WorkSet;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

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

/// The shared pool of `threads` threads (`None` if it cannot be built: the step then runs
/// on the caller's thread, with the same results).
pub(crate) fn pool(threads: usize) -> Option<Arc<rayon::ThreadPool>> {
    static POOLS: OnceLock<Mutex<BTreeMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let pools = POOLS.get_or_init(|| Mutex::new(BTreeMap::new()));
    let mut map = pools.lock().ok()?;
    if let Some(p) = map.get(&threads) {
        return Some(Arc::clone(p));
    }
    let p = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("cslsim-{i}"))
            .build()
            .ok()?,
    );
    map.insert(threads, Arc::clone(&p));
    Some(p)
}

/// `f` applied to every item, results in item order: on `pool` when there is one and more
/// than one item, else on this thread.
pub(crate) fn run<I, O, F>(pool: Option<&rayon::ThreadPool>, items: Vec<I>, f: F) -> Vec<O>
where
    I: Send,
    O: Send,
    F: Fn(I) -> O + Sync + Send,
{
    match pool {
        Some(p) if items.len() > 1 => p.install(|| items.into_par_iter().map(f).collect()),
        _ => items.into_iter().map(f).collect(),
    }
}

/// The PEs `bounds[j - 1]..bounds[j]` of chunk `j`, covering `lo..n` (a rank of a
/// distributed run steps only its strip, `crate::dist`): one chunk for `k == 1`; else about
/// `k` chunks with equal numbers of members of `cur` (whole 64-PE words when the
/// rectangle has enough of them, else equal numbers of PEs).
pub(crate) fn entity_bounds(cur: &WorkSet, lo: usize, n: usize, k: usize) -> Vec<usize> {
    if k <= 1 || n <= lo + 1 {
        return vec![lo, n];
    }
    let words = cur.words();
    let mut b = vec![lo];
    if words.len() >= k {
        let total = cur.len().max(1);
        let mut seen = 0usize;
        for (wi, w) in words.iter().enumerate() {
            seen += w.count_ones() as usize;
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

/// Splits the rectangle into the chunks of `bounds`. With one chunk it writes the
/// worklists directly; with several each writes its own words in `bufs` (pairs of
/// next-router and next-CE bits from its first PE on), merged by [`merge_chunks`].
pub(crate) fn split_chunks<'a>(
    bounds: &[usize],
    mut routers: &'a mut [Router],
    mut pes: &'a mut [Pe],
    router_next: &'a mut WorkSet,
    ce_next: &'a mut WorkSet,
    bufs: &'a mut Vec<(Vec<u64>, Vec<u64>)>,
) -> Vec<Chunk<'a>> {
    let k = bounds.len().saturating_sub(1);
    if k <= 1 && bounds.first() == Some(&0) && bounds.get(1) == Some(&routers.len()) {
        return vec![Chunk {
            lo: 0,
            routers,
            pes,
            router_next: router_next.words_mut(),
            ce_next: ce_next.words_mut(),
        }];
    }
    if bufs.len() < k {
        bufs.resize_with(k, Default::default);
    }
    // A rank of a distributed run starts at its strip.
    let skip = bounds.first().copied().unwrap_or(0);
    routers = routers.get_mut(skip..).unwrap_or_default();
    pes = pes.get_mut(skip..).unwrap_or_default();
    let mut out = Vec::with_capacity(k);
    for (j, (rb, cb)) in bufs.iter_mut().enumerate().take(k) {
        let (lo, hi) = (bounds[j], bounds[j + 1]);
        let nw = (hi - lo).div_ceil(64);
        rb.clear();
        rb.resize(nw, 0);
        cb.clear();
        cb.resize(nw, 0);
        let (r, rest) = std::mem::take(&mut routers).split_at_mut(hi - lo);
        routers = rest;
        let (p, rest) = std::mem::take(&mut pes).split_at_mut(hi - lo);
        pes = rest;
        out.push(Chunk {
            lo,
            routers: r,
            pes: p,
            router_next: rb,
            ce_next: cb,
        });
    }
    out
}

/// Merges the chunks' words (see [`split_chunks`]) into the worklists, or, with one chunk
/// (which wrote them directly), recounts them.
pub(crate) fn merge_chunks(
    bounds: &[usize],
    n: usize,
    bufs: &mut [(Vec<u64>, Vec<u64>)],
    router_next: &mut WorkSet,
    ce_next: &mut WorkSet,
) {
    let k = bounds.len().saturating_sub(1);
    if k <= 1 && bounds.first() == Some(&0) && bounds.get(1) == Some(&n) {
        router_next.recount();
        ce_next.recount();
        return;
    }
    for (j, (rb, cb)) in bufs.iter().enumerate().take(k) {
        router_next.or_shifted(bounds[j], rb);
        ce_next.or_shifted(bounds[j], cb);
    }
}
