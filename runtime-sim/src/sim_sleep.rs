//! The [`Simulator`]'s sleeping PEs: a PE whose next cycles are all stall cycles (an
//! instruction or DSD operation that ran ahead, a `copy`) leaves the CE worklist until its
//! stall ends (`sim::ce_chunk` puts it to sleep, `Timers` wakes it), and anything that
//! reaches it earlier (a wavelet, a host command) wakes it at once. `Pe::catch_up` counts
//! the cycles it slept as the ticks it skipped would have (one busy cycle each), so no
//! figure changes; a sleeping PE counts as busy in every cycle, so the clock runs on.
//! Between runs, stores that ran ahead of the clock are taken back (`settle`, `resume`).

use super::{CeChunkOut, SimError, Simulator};

/// Sleeper lists kept for reuse (more than the chunks of any cycle).
const SLEEP_BUFS_KEPT: usize = 256;

/// One sleeper list per CE chunk of the next cycle, from those the last cycle's chunks
/// returned to `pool` (none is allocated once the pool has filled).
pub(super) fn sleep_lists(pool: &mut Vec<Vec<(u64, u32)>>, n: usize) -> Vec<Vec<(u64, u32)>> {
    (0..n).map(|_| pool.pop().unwrap_or_default()).collect()
}

impl Simulator {
    /// Takes in what the CE chunks of cycle `now` did, in PE order: counts, the PEs that
    /// went to sleep (and woke), whether anything happened; returns the first fault.
    pub(super) fn absorb_ticks(
        &mut self,
        outs: impl IntoIterator<Item = CeChunkOut>,
        now: u64,
        happened: &mut bool,
    ) -> Option<SimError> {
        let mut failed = None;
        for o in outs {
            self.unblocked += o.unblocked;
            *happened |= o.happened;
            if failed.is_none() {
                failed = o.err;
            }
            self.sleeping = (self.sleeping + o.sleeps.len()).saturating_sub(o.woke);
            for &(wake, p) in &o.sleeps {
                self.sleepers.add(now, wake, p);
            }
            // The list goes back to the pool the next cycle's chunks take theirs from.
            if self.sleep_bufs.len() < SLEEP_BUFS_KEPT {
                self.sleep_bufs.push(o.sleeps);
            }
        }
        failed
    }

    /// Puts the sleepers whose stall ends in cycle `now` on the CE worklist.
    pub(super) fn wake_due(&mut self, now: u64) {
        let (pes, ce_next) = (&self.pes, &mut self.ce_next);
        self.sleepers.due(now, |p| {
            if pes.get(p as usize).is_some_and(|pe| pe.stall_ends(now)) {
                ce_next.insert(p as usize);
            }
        });
    }

    /// When a run returns: counts the cycles sleeping PEs have passed so far (they keep
    /// sleeping), so that their counters read as if they had been ticked, and takes back
    /// the stores that ran ahead of the clock (`Pe::hold_stores`), so that the host sees
    /// the memory of this cycle.
    pub(super) fn settle(&mut self) {
        let now = self.cycle;
        let sleeping = self.sleeping > 0;
        for pe in &mut self.pes {
            if sleeping {
                pe.catch_up(now);
            }
            if !pe.ahead_stores.is_empty() {
                pe.hold_stores(now);
            }
        }
    }

    /// When a run starts: makes the stores [`Simulator::settle`] took back again.
    pub(super) fn resume(&mut self) {
        let now = self.cycle;
        for pe in &mut self.pes {
            if pe.stores_held {
                pe.release_stores(now);
            }
        }
    }

    /// Puts every sleeping PE back on the CE worklist (the cycles it slept counted), so
    /// that a change which makes every tick observable (traces, timelines) sees them all.
    pub(super) fn wake_all(&mut self) {
        if self.sleeping == 0 {
            return;
        }
        let now = self.cycle;
        for (i, pe) in self.pes.iter_mut().enumerate() {
            if pe.sleep_until != 0 {
                pe.catch_up(now);
                pe.sleep_until = 0;
                self.ce_next.insert(i);
            }
        }
        self.sleeping = 0;
    }
}
