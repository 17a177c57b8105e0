//! The [`Simulator`]'s side of a distributed run (`crate::dist`): joining a run as a
//! rank, the range of PEs it steps, combining reports over the ranks, fetching PE memory
//! from its owner for the host, and gathering the final state of every PE.

use super::{Cond, Simulator};
use crate::dist::{CutError, Dist, DistSlot, Transport};
use crate::error::{SimError, Stuck, Waiting};
use crate::pe::Pe;
use crate::ring::Ring;
use crate::router::Router;
use std::sync::Mutex;

/// What the owner of a PE sends at the end of a run ([`Simulator::gather`]): its index,
/// memory, `<simprint>` log, counters (busy, stalled, instructions, tasks started, DSD
/// elements), the cycle it stalled since, CE input queues, blocked-task bits and router.
type PeState = (
    u32,
    (Vec<u8>, Vec<u8>),
    Vec<(u64, String)>,
    [u64; 5],
    Option<u64>,
    Vec<Ring>,
    u64,
    Router,
);

impl Simulator {
    /// Makes this simulator one rank of a distributed run over `t` (every rank builds the
    /// same image and calls this in the same state): it steps its strip of rows and
    /// exchanges what crosses the cuts with its neighbours every cycle. Fails if the
    /// rectangle has fewer rows than there are ranks.
    pub fn set_transport(&mut self, t: Box<dyn Transport>) -> Result<(), CutError> {
        let d = Dist::new(t, self.width, self.height, &self.routers)?;
        self.dist = DistSlot(Some(Box::new(Mutex::new(d))));
        Ok(())
    }

    /// This rank and the number of ranks of a distributed run (`None`: one process).
    pub fn rank(&self) -> Option<(usize, usize)> {
        self.dist.with(|d| (d.rank(), d.size()))
    }

    /// The PE indices this process steps (all of them in a single-process run).
    pub(crate) fn owned_range(&self) -> (usize, usize) {
        self.dist.with(|d| d.owned()).unwrap_or((0, self.pes.len()))
    }

    /// The PE range this process steps in a cycle; a rank of a distributed run first
    /// drops the other ranks' PEs from its worklists (their ranks step them).
    pub(crate) fn own_strip(&mut self) -> (usize, usize) {
        let (lo, hi) = self.owned_range();
        if self.dist.on() {
            self.router_next.retain_range(lo, hi);
            self.ce_next.retain_range(lo, hi);
        }
        (lo, hi)
    }

    /// Whether `cond` holds on every rank and whether any rank has work (this process's
    /// own answers when the run is not distributed).
    pub(crate) fn global_state(&self, cond: bool) -> (bool, bool) {
        let work = self.local_work();
        self.dist
            .with(|d| {
                let mut v = [u64::from(!cond), u64::from(work)];
                d.sum(&mut v);
                (v[0] == 0, v[1] > 0)
            })
            .unwrap_or((cond, work))
    }

    /// The end of a cycle of a rank of a distributed run: the boundary routers go to the
    /// neighbours, then one reduction tells every rank whether anything happened, the
    /// first failure, and (for the caller's next check) whether `cond` holds everywhere
    /// and whether any rank has work. Nothing to do in a single-process run.
    pub(crate) fn end_cycle(
        &mut self,
        happened: &mut bool,
        failed: &mut Option<SimError>,
        cond: Option<Cond<'_>>,
    ) -> Option<(bool, bool)> {
        if !self.dist.on() {
            return None;
        }
        let routers = &mut self.routers;
        self.dist.with(|d| d.swap_routers(routers));
        let done = cond.is_none_or(|c| c(self));
        let work = self.local_work();
        self.dist
            .with(|d| d.end_cycle(happened, failed, done, work))
    }

    /// The PEs this process steps, with their routers and indices.
    pub(crate) fn owned_pes(&self) -> impl Iterator<Item = (usize, (&Pe, &Router))> {
        let (lo, hi) = self.owned_range();
        self.pes
            .iter()
            .zip(&self.routers)
            .enumerate()
            .take(hi)
            .skip(lo)
    }

    /// Per-PE report lists of every rank, in PE order (this rank's own otherwise).
    pub(crate) fn combine(
        &self,
        waiting: Vec<Waiting>,
        stuck: Vec<Stuck>,
    ) -> (Vec<Waiting>, Vec<Stuck>) {
        match self.dist.0.as_ref() {
            None => (waiting, stuck),
            Some(_) => self
                .dist
                .with(|d| (d.concat(waiting.clone()), d.concat(stuck.clone())))
                .unwrap_or((waiting, stuck)),
        }
    }

    /// Brings the bytes `addr..addr + len` of each listed PE (rectangle-relative `x`, `y`)
    /// from the rank that steps it into every rank's copy, before the host reads them.
    /// Nothing to do in a single-process run.
    pub fn sync_memory(&mut self, spans: &[(u32, u32, u32, u32)]) {
        if !self.dist.on() {
            return;
        }
        let (lo, hi) = self.owned_range();
        let mut mine: Vec<(u32, u32, Vec<u8>)> = Vec::new();
        for &(x, y, addr, len) in spans {
            let Some(i) = self.index(x, y).filter(|i| (lo..hi).contains(i)) else {
                continue;
            };
            // Only the span: `Pe::memory` would assemble all 48 KB of the PE.
            if let Some(bytes) = self
                .pes
                .get(i)
                .and_then(|pe| pe.read_memory(addr, len as usize))
            {
                mine.push((i as u32, addr, bytes));
            }
        }
        let all = self.dist.with(|d| d.concat(mine)).unwrap_or_default();
        for (i, addr, bytes) in all {
            let i = i as usize;
            if !(lo..hi).contains(&i)
                && let Some(pe) = self.pes.get_mut(i)
            {
                pe.write_bytes(addr, &bytes);
            }
        }
    }

    /// Brings the final state of every PE (memory, log, counters, CE input queues, router)
    /// from the rank that steps it into every rank's copy, and the run's wavelet hop count,
    /// so that [`Simulator::stats`], [`Simulator::log_lines`], memory reads and reports
    /// are those of the whole rectangle. Call it on every rank once the run is over (again
    /// if the run went on).
    /// Nothing to do in a single-process run.
    pub fn gather(&mut self) {
        if !self.dist.on() {
            return;
        }
        self.settle();
        let (lo, hi) = self.owned_range();
        let mut mine: Vec<PeState> = Vec::new();
        for (i, (pe, r)) in self.owned_pes() {
            mine.push((
                i as u32,
                // The written pages only: the others hold the class's initial data on
                // every rank, and a full copy would allocate all 48 KB of every PE.
                pe.mem.written_pages(),
                pe.log.clone(),
                [
                    pe.busy_cycles,
                    pe.stalled_cycles,
                    pe.instructions,
                    pe.tasks_started,
                    pe.dsd_elements,
                ],
                pe.stalled_since,
                pe.inq.clone(),
                pe.blocked,
                r.clone(),
            ));
        }
        let own = self.wavelet_hops;
        let (all, total) = self
            .dist
            .with(|d| {
                let local = own.saturating_sub(d.hops_extra);
                let mut hops = [local];
                d.sum(&mut hops);
                d.hops_extra = hops[0].saturating_sub(local);
                (d.concat(mine), hops[0])
            })
            .unwrap_or_default();
        self.wavelet_hops = total;
        for (i, mem, log, c, since, inq, blocked, router) in all {
            let i = i as usize;
            if (lo..hi).contains(&i) {
                continue;
            }
            if let Some(pe) = self.pes.get_mut(i) {
                pe.mem.write_pages(&mem.0, &mem.1);
                pe.log = log;
                [
                    pe.busy_cycles,
                    pe.stalled_cycles,
                    pe.instructions,
                    pe.tasks_started,
                    pe.dsd_elements,
                ] = c;
                pe.stalled_since = since;
                pe.inq = inq;
                pe.blocked = blocked;
            }
            if let Some(r) = self.routers.get_mut(i) {
                *r = router;
            }
        }
    }
}
