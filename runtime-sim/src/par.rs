//! Threads for the simulator's step: the default thread count, one shared `rayon` pool
//! per thread count, and [`run`], which maps a function over a phase's chunks on the pool
//! (or on the caller's thread) and returns the results in chunk order.
//!
//! Determinism does not rest on this module: every chunk computes from the state at the
//! start of its phase and writes only its own PEs, routers and worklist words, and the
//! results are merged in chunk order (`sim.rs`).

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
