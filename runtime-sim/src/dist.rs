//! Distributed runs: the program rectangle cut into strips of whole rows, one per rank (a
//! process under `mpirun`, module `mpi`, or a thread in the tests, [`ThreadTransport`]),
//! each rank stepping its own strip with the same core loop as a single process
//! (`sim.rs`, `router.rs`). Results are bit-identical to one process.
//!
//! # What crosses a cut, and when
//!
//! Every rank holds the whole rectangle but steps only its strip: its worklists are
//! masked to it before every cycle, and the commit of the router phase is the
//! single-process commit of one chunk, the strip. Per cycle:
//!
//! 1. After the routers planned: the moves of the strip's first row go to the rank
//!    above, those of its last row to the rank below ([`Dist::exchange_moves`]). They
//!    carry the wavelets that cross the cut and the slots they free (back-pressure
//!    released); merged in PE order with the rank's own moves, they are exactly what the
//!    single-process commit of the strip reads.
//! 2. After the compute engines ticked: the routers of the strip's first and last row that
//!    changed go to the neighbours, which replace their copies ([`Dist::end_cycle`]): the
//!    next cycle's plans read them (room in the buffers facing the cut, i.e.
//!    back-pressure, and the colour configuration).
//! 3. One sum over all ranks: whether anything happened (the clock advances only then),
//!    the launch's unblock count, and which ranks failed; the first failure in PE order
//!    is then sent to every rank.
//!
//! A wavelet needs `hop` ≥ 1 cycles to cross a link, so what one rank sends in cycle `t`
//! is first needed by the other in cycle `t + 1`: the lookahead is one cycle and the
//! exchange is one ordered message per neighbour and phase.
//!
//! Host commands run on every rank alike (the host program is replicated, which is cheap
//! and deterministic): writes go to every copy, reads of PE memory first fetch the bytes
//! from the owning rank ([`crate::Simulator::sync_memory`]), host conditions and
//! reports are combined over the ranks, and [`crate::Simulator::gather`] brings the
//! final state of every PE to every rank before results are written.

use crate::Router;
use crate::error::SimError;
use crate::router::{Move, RouterPlan};
use serde::{Serialize, de::DeserializeOwned};
use std::sync::mpsc::{Receiver, Sender, channel};

/// Moves bytes between the ranks of a distributed run. Every rank calls the same methods
/// in the same order (the run is the same program on every rank).
pub trait Transport: Send {
    /// This rank, `0..size`.
    fn rank(&self) -> usize;
    /// Number of ranks.
    fn size(&self) -> usize;
    /// Sends `to_prev` to rank `rank - 1` and `to_next` to rank `rank + 1` (when they
    /// exist) and returns what they sent this rank (empty when they do not exist).
    fn swap_neighbours(&mut self, to_prev: Vec<u8>, to_next: Vec<u8>) -> (Vec<u8>, Vec<u8>);
    /// Element-wise sum of `vals` over all ranks, in place.
    fn sum(&mut self, vals: &mut [u64]);
    /// Every rank's `mine`, in rank order.
    fn allgather(&mut self, mine: Vec<u8>) -> Vec<Vec<u8>>;
}

/// This process's place in an MPI run, once [`init_mpi`] ran: rank and number of ranks.
static MPI_WORLD: std::sync::OnceLock<(usize, usize)> = std::sync::OnceLock::new();

/// Keeps MPI running while alive (hold it until the end of `main`); nothing without the
/// `mpi` feature.
pub struct MpiSession {
    #[cfg(feature = "mpi")]
    _s: crate::mpi::Session,
}

/// Starts MPI when this build has it (cargo feature `mpi`) and the process may be one
/// rank of several (`mpirun -n R`); without the feature it does nothing and the process
/// is rank 0 of 1.
pub fn init_mpi() -> MpiSession {
    #[cfg(feature = "mpi")]
    {
        let (s, r, n) = crate::mpi::start();
        let _ = MPI_WORLD.set((r, n));
        MpiSession { _s: s }
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = MPI_WORLD.set((0, 1));
        MpiSession {}
    }
}

/// This process's MPI rank and the number of ranks ((0, 1) without MPI).
pub fn mpi_world() -> (usize, usize) {
    MPI_WORLD.get().copied().unwrap_or((0, 1))
}

/// Set once a distributed run returned an error that every rank returns with it (a
/// failure the ranks agreed on in the cycle protocol: fault, routing error, cycle limit,
/// deadlock), see [`exit_error`].
static SHARED_FAILURE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Records that the failure this rank is about to report is every rank's: the run agreed
/// on it (`SdkRuntime`'s failed commands, `simfabric`'s failed run).
pub(crate) fn mark_shared_failure() {
    SHARED_FAILURE.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Whether this process is a rank of a distributed run whose simulation failed on every
/// rank alike (then the ranks may still take part in collective operations such as
/// [`crate::Simulator::gather`]; after any other error they must not).
pub fn failure_shared() -> bool {
    SHARED_FAILURE.load(std::sync::atomic::Ordering::Relaxed)
}

/// Ends `main` after an error: prints `message` on standard error and returns exit
/// status `code`, as a single process always does. A rank of an MPI run (several ranks)
/// must not simply return through `MPI_Finalize` (the other ranks may be waiting in a
/// collective operation for it): if every other rank gets to the end of `main` too
/// (having failed alike, or done), rank 0 prints the message once and every rank ends
/// normally; if not (within 2 s, unless the run agreed on the failure), this rank prints
/// its message and ends the whole job with `MPI_Abort` (SIMULATOR.md §15).
pub fn exit_error(code: u8, message: &str) -> std::process::ExitCode {
    #[cfg(feature = "mpi")]
    {
        if mpi_world().1 > 1 {
            return crate::mpi::fail(code, message, failure_shared());
        }
    }
    eprintln!("{message}");
    std::process::ExitCode::from(code)
}

/// Parses the command line into `C` for a tool that may run as one rank of `mpirun -n R`
/// (after [`init_mpi`]). `--help` and `--version` are printed once, by rank 0, and give
/// `Err(ExitCode::SUCCESS)`: a normal return, so that MPI is finalised. A usage error
/// gives `Err` with status `usage_status`; under several ranks every rank meets it and it
/// is reported once ([`exit_error`]). Under several ranks the text is never styled: each
/// rank writes to a pseudo-terminal whatever `mpirun`'s own output is, so clap would add
/// terminal escapes to output that may be going to a file or a pipe.
#[cfg(feature = "cli")]
pub fn parse_cli<C: clap::Parser>(usage_status: u8) -> Result<C, std::process::ExitCode> {
    use std::process::ExitCode;
    let ranks = mpi_world().1;
    let mut cmd = C::command();
    if ranks > 1 {
        cmd = cmd.color(clap::ColorChoice::Never);
    }
    let parsed = cmd
        .try_get_matches()
        .and_then(|mut m| C::from_arg_matches_mut(&mut m).map_err(|e| e.format(&mut C::command())));
    match parsed {
        Ok(c) => Ok(c),
        Err(e) if e.use_stderr() && ranks > 1 => {
            Err(exit_error(usage_status, e.render().to_string().trim_end()))
        }
        Err(e) => {
            if is_root() {
                let _ = e.print();
            }
            Err(if e.use_stderr() {
                ExitCode::from(usage_status)
            } else {
                ExitCode::SUCCESS
            })
        }
    }
}

/// Whether this process writes the results: rank 0 (or the only process).
pub fn is_root() -> bool {
    mpi_world().0 == 0
}

/// Makes `sim` this process's rank of the MPI run when there are several ranks (after
/// [`init_mpi`]); nothing otherwise.
pub fn join_mpi(sim: &mut crate::Simulator) -> Result<(), CutError> {
    #[cfg(feature = "mpi")]
    if mpi_world().1 > 1 {
        return sim.set_transport(Box::new(crate::mpi::MpiTransport::world()));
    }
    let _ = sim;
    Ok(())
}

/// `sim`, or an error if it is a rank of a distributed run: streaming transfers (streaming
/// `memcpy`, SdkLayout streams) are not distributed yet.
pub(crate) fn no_streams(
    sim: &mut crate::Simulator,
) -> Result<&mut crate::Simulator, crate::HostError> {
    match sim.rank() {
        None => Ok(sim),
        Some(_) => Err(crate::HostError::BadArgument {
            what: "streaming transfers are not supported in a distributed (MPI) run yet; \
                   use copy-mode memcpy or run in one process"
                .into(),
        }),
    }
}

/// A distributed run's rank: its transport and the strips of all ranks.
pub struct Dist {
    t: Box<dyn Transport>,
    rank: usize,
    width: usize,
    /// PE index range of each rank's strip.
    spans: Vec<(usize, usize)>,
    /// The boundary routers as last sent up and down (only changed ones are sent).
    sent_prev: Vec<Router>,
    sent_next: Vec<Router>,
    /// Wavelet hops of the other ranks added to this rank's count by the last gather
    /// (so that gathering again does not count them twice).
    pub(crate) hops_extra: u64,
}

impl std::fmt::Debug for Dist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Dist {{ rank: {}, spans: {:?} }}", self.rank, self.spans)
    }
}

/// Why a rectangle cannot be cut for a distributed run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CutError {
    /// Ranks asked for.
    pub ranks: usize,
    /// Rows of the rectangle.
    pub rows: u32,
}

impl std::fmt::Display for CutError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot cut a rectangle of {} row(s) into {} strips: run with at most {} ranks",
            self.rows, self.ranks, self.rows
        )
    }
}

impl std::error::Error for CutError {}

/// The rows of each of `ranks` strips of a `height`-row rectangle (as equal as can be).
pub fn strips(height: u32, ranks: usize) -> Vec<(u32, u32)> {
    let h = u64::from(height);
    let r = ranks.max(1) as u64;
    (0..r)
        .map(|k| ((k * h / r) as u32, ((k + 1) * h / r) as u32))
        .collect()
}

impl Dist {
    /// This rank of a run over `t` on a `width`×`height` rectangle whose routers start as
    /// `routers` (fails if some strip would be empty).
    pub(crate) fn new(
        t: Box<dyn Transport>,
        width: u32,
        height: u32,
        routers: &[Router],
    ) -> Result<Dist, CutError> {
        let size = t.size();
        if size == 0 || size > height as usize {
            return Err(CutError {
                ranks: size,
                rows: height,
            });
        }
        let w = width as usize;
        let spans: Vec<(usize, usize)> = strips(height, size)
            .into_iter()
            .map(|(a, b)| (a as usize * w, b as usize * w))
            .collect();
        let rank = t.rank();
        let (lo, hi) = spans.get(rank).copied().unwrap_or((0, 0));
        Ok(Dist {
            t,
            rank,
            width: w,
            sent_prev: routers.get(lo..lo + w).unwrap_or(&[]).to_vec(),
            sent_next: routers
                .get(hi.saturating_sub(w)..hi)
                .unwrap_or(&[])
                .to_vec(),
            spans,
            hops_extra: 0,
        })
    }

    /// This rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Number of ranks.
    pub fn size(&self) -> usize {
        self.spans.len()
    }

    /// The PE index range this rank steps.
    pub fn owned(&self) -> (usize, usize) {
        self.spans.get(self.rank).copied().unwrap_or((0, 0))
    }

    /// Whether this rank steps PE `i`.
    pub fn owns(&self, i: usize) -> bool {
        let (lo, hi) = self.owned();
        (lo..hi).contains(&i)
    }

    /// The rank that steps PE `i`.
    pub fn owner(&self, i: usize) -> usize {
        self.spans
            .iter()
            .position(|&(lo, hi)| (lo..hi).contains(&i))
            .unwrap_or(0)
    }

    /// Element-wise sum over the ranks.
    pub(crate) fn sum(&mut self, vals: &mut [u64]) {
        self.t.sum(vals);
    }

    /// Every rank's `v`, concatenated in rank order (PE order for per-PE lists).
    pub(crate) fn concat<T: Serialize + DeserializeOwned>(&mut self, v: Vec<T>) -> Vec<T> {
        let parts = self.t.allgather(encode(&v));
        parts
            .iter()
            .flat_map(|b| decode::<Vec<T>>(b).unwrap_or_default())
            .collect()
    }

    /// Every rank's `v`, in rank order.
    pub(crate) fn allgather<T: Serialize + DeserializeOwned>(&mut self, v: &T) -> Vec<Option<T>> {
        let parts = self.t.allgather(encode(v));
        parts.iter().map(|b| decode::<T>(b)).collect()
    }

    /// Step 1 of a cycle: sends the moves of this strip's boundary rows to the neighbours
    /// and merges theirs into `moves` (PE order). If some rank failed to plan, only the
    /// moves before the failure (in PE order) stay, as in one process, and `failed` is the
    /// failure on every rank; this rank's `plans` are dropped if they come after it.
    pub(crate) fn exchange_moves(
        &mut self,
        moves: &mut Vec<Move>,
        plans: &mut Vec<RouterPlan>,
        failed: &mut Option<SimError>,
    ) {
        let (lo, hi) = self.owned();
        let w = self.width;
        let up: Vec<Move> = moves
            .iter()
            .filter(|m| (m.p as usize) < lo + w)
            .copied()
            .collect();
        let down: Vec<Move> = moves
            .iter()
            .filter(|m| (m.p as usize) + w >= hi)
            .copied()
            .collect();
        let (from_prev, from_next) = self.t.swap_neighbours(encode(&up), encode(&down));
        let first_failed = self.first_failure(failed, &mut []);
        let keep = |r: usize| r <= first_failed;
        let mut merged: Vec<Move> = Vec::with_capacity(moves.len());
        if self.rank > 0 && keep(self.rank - 1) {
            merged.extend(decode::<Vec<Move>>(&from_prev).unwrap_or_default());
        }
        if keep(self.rank) {
            merged.append(moves);
        } else {
            plans.clear();
        }
        if keep(self.rank + 1) {
            merged.extend(decode::<Vec<Move>>(&from_next).unwrap_or_default());
        }
        *moves = merged;
    }

    /// Sums `extra` over the ranks together with the ranks' failure flags; returns the
    /// first failing rank (`size()` if none) and, if there is one, puts its error in
    /// `failed` on every rank.
    fn first_failure(&mut self, failed: &mut Option<SimError>, extra: &mut [u64]) -> usize {
        let size = self.size();
        let words = size.div_ceil(64);
        let mut vals = vec![0u64; extra.len() + words];
        vals[..extra.len()].copy_from_slice(extra);
        if failed.is_some()
            && let Some(w) = vals.get_mut(extra.len() + self.rank / 64)
        {
            *w |= 1 << (self.rank % 64);
        }
        self.t.sum(&mut vals);
        extra.copy_from_slice(&vals[..extra.len()]);
        let first = vals[extra.len()..]
            .iter()
            .enumerate()
            .find(|(_, w)| **w != 0)
            .map_or(size, |(k, w)| k * 64 + w.trailing_zeros() as usize);
        if first < size {
            let mine = if self.rank == first {
                failed.clone()
            } else {
                None
            };
            let all = self.allgather(&mine);
            if let Some(Some(Some(e))) = all.into_iter().nth(first) {
                *failed = Some(e);
            }
        }
        first
    }

    /// Step 2 of a cycle: sends this strip's changed boundary routers to the neighbours
    /// and takes theirs into `routers`.
    pub(crate) fn swap_routers(&mut self, routers: &mut [Router]) {
        let (lo, hi) = self.owned();
        let w = self.width;
        let up = changed(routers, lo, &mut self.sent_prev);
        let down = changed(routers, hi.saturating_sub(w), &mut self.sent_next);
        let (from_prev, from_next) = self.t.swap_neighbours(up, down);
        for (bytes, base) in [(from_prev, lo.wrapping_sub(w)), (from_next, hi)] {
            for (k, r) in decode::<Vec<(u32, Router)>>(&bytes).unwrap_or_default() {
                if let Some(slot) = routers.get_mut(base.wrapping_add(k as usize)) {
                    *slot = r;
                }
            }
        }
    }

    /// Step 3 of a cycle: one sum over the ranks of whether anything happened, which
    /// ranks failed (the first failure then goes to every rank), whether the caller's
    /// condition fails somewhere and whether some rank has work. Returns the last two as
    /// (condition holds on every rank, some rank has work).
    pub(crate) fn end_cycle(
        &mut self,
        happened: &mut bool,
        failed: &mut Option<SimError>,
        cond: bool,
        work: bool,
    ) -> (bool, bool) {
        let mut extra = [u64::from(*happened), u64::from(!cond), u64::from(work)];
        self.first_failure(failed, &mut extra);
        *happened = extra[0] > 0;
        (extra[1] == 0, extra[2] > 0)
    }
}

/// The simulator's slot for its rank of a distributed run (`None`: one process). A clone
/// of a simulator is a local copy, not a rank.
#[derive(Default)]
pub(crate) struct DistSlot(pub Option<Box<std::sync::Mutex<Dist>>>);

impl DistSlot {
    /// `f` applied to this rank (`None` in a single-process run).
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut Dist) -> R) -> Option<R> {
        let m = self.0.as_ref()?;
        let mut g = m.lock().ok()?;
        Some(f(&mut g))
    }

    /// Whether the run is distributed.
    pub(crate) fn on(&self) -> bool {
        self.0.is_some()
    }
}

impl Clone for DistSlot {
    fn clone(&self) -> Self {
        DistSlot(None)
    }
}

impl std::fmt::Debug for DistSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.with(|d| (d.rank, d.size())) {
            Some((r, n)) => write!(f, "rank {r} of {n}"),
            None => f.write_str("single process"),
        }
    }
}

/// The routers of the row from `base` that differ from `sent` (which is updated), encoded
/// with their column.
fn changed(routers: &[Router], base: usize, sent: &mut [Router]) -> Vec<u8> {
    let mut out: Vec<(u32, &Router)> = Vec::new();
    for (k, s) in sent.iter_mut().enumerate() {
        if let Some(r) = routers.get(base + k)
            && r != s
        {
            s.clone_from(r);
            out.push((k as u32, r));
        }
    }
    encode(&out)
}

/// `v` as bytes (empty if it cannot be encoded, which the simulator's types always can).
pub(crate) fn encode<T: Serialize + ?Sized>(v: &T) -> Vec<u8> {
    bincode::serialize(v).unwrap_or_default()
}

/// The value encoded in `b` by [`encode`] (`None` if it is not one).
pub(crate) fn decode<T: DeserializeOwned>(b: &[u8]) -> Option<T> {
    bincode::deserialize(b).ok()
}

/// Ranks as threads of one process, connected by channels: the distributed run's exact
/// exchange without MPI (the tests compare it with a single process).
pub struct ThreadTransport {
    rank: usize,
    /// `to[r]`: to rank `r`; `from[r]`: from rank `r` (FIFO per pair of ranks).
    to: Vec<Sender<Vec<u8>>>,
    from: Vec<Receiver<Vec<u8>>>,
}

impl ThreadTransport {
    /// The `ranks` connected ends, one per rank (move each into its thread).
    pub fn mesh(ranks: usize) -> Vec<ThreadTransport> {
        let mut senders: Vec<Vec<Option<Sender<Vec<u8>>>>> = Vec::new();
        let mut receivers: Vec<Vec<Option<Receiver<Vec<u8>>>>> = Vec::new();
        for _ in 0..ranks {
            senders.push((0..ranks).map(|_| None).collect());
            receivers.push((0..ranks).map(|_| None).collect());
        }
        for a in 0..ranks {
            for b in 0..ranks {
                let (tx, rx) = channel();
                senders[a][b] = Some(tx);
                receivers[b][a] = Some(rx);
            }
        }
        senders
            .into_iter()
            .zip(receivers)
            .enumerate()
            .map(|(rank, (to, from))| ThreadTransport {
                rank,
                to: to.into_iter().flatten().collect(),
                from: from.into_iter().flatten().collect(),
            })
            .collect()
    }

    fn send(&self, r: usize, b: Vec<u8>) {
        if let Some(s) = self.to.get(r) {
            // A closed peer has ended its run (after a failure): nothing to deliver.
            let _ = s.send(b);
        }
    }

    fn recv(&self, r: usize) -> Vec<u8> {
        self.from
            .get(r)
            .and_then(|c| c.recv().ok())
            .unwrap_or_default()
    }
}

impl Transport for ThreadTransport {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.to.len()
    }
    fn swap_neighbours(&mut self, to_prev: Vec<u8>, to_next: Vec<u8>) -> (Vec<u8>, Vec<u8>) {
        let (r, n) = (self.rank, self.size());
        if r > 0 {
            self.send(r - 1, to_prev);
        }
        if r + 1 < n {
            self.send(r + 1, to_next);
        }
        let a = if r > 0 { self.recv(r - 1) } else { Vec::new() };
        let b = if r + 1 < n {
            self.recv(r + 1)
        } else {
            Vec::new()
        };
        (a, b)
    }
    fn sum(&mut self, vals: &mut [u64]) {
        let mine = encode(&vals.to_vec());
        let all = self.allgather(mine);
        vals.fill(0);
        for b in all {
            for (v, x) in vals
                .iter_mut()
                .zip(decode::<Vec<u64>>(&b).unwrap_or_default())
            {
                *v = v.wrapping_add(x);
            }
        }
    }
    fn allgather(&mut self, mine: Vec<u8>) -> Vec<Vec<u8>> {
        let n = self.size();
        for r in (0..n).filter(|&r| r != self.rank) {
            self.send(r, mine.clone());
        }
        (0..n)
            .map(|r| {
                if r == self.rank {
                    mine.clone()
                } else {
                    self.recv(r)
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::strips;

    #[test]
    fn strips_cover_the_rows() {
        assert_eq!(strips(10, 3), vec![(0, 3), (3, 6), (6, 10)]);
        assert_eq!(strips(2, 2), vec![(0, 1), (1, 2)]);
        assert_eq!(strips(5, 1), vec![(0, 5)]);
    }
}
