//! MPI for distributed runs (cargo feature `mpi`, over the system's MPI library): starts
//! MPI once per process and connects a [`Simulator`](crate::Simulator) to the other
//! ranks of `MPI_COMM_WORLD` ([`MpiTransport`], the [`Transport`] of `crate::dist`).
//! Only the thread that started MPI talks to it (the simulator's worker threads never do).

use crate::dist::Transport;
use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

/// Keeps MPI running; MPI is finalised when it is dropped (at the end of `main`).
pub struct Session(#[allow(dead_code)] Option<mpi::environment::Universe>);

/// Starts MPI (`None` inside if it could not start or was started before) and returns
/// this process's rank and the number of ranks.
pub(crate) fn start() -> (Session, usize, usize) {
    match mpi::initialize_with_threading(mpi::Threading::Funneled) {
        Some((u, _)) => {
            let w = u.world();
            let (r, n) = (w.rank().max(0) as usize, w.size().max(1) as usize);
            (Session(Some(u)), r, n)
        }
        None => (Session(None), 0, 1),
    }
}

/// The ranks of `MPI_COMM_WORLD` (the communicator is looked up per call, so the
/// transport can move between threads with the simulator).
pub struct MpiTransport {
    rank: usize,
    size: usize,
}

impl MpiTransport {
    /// This process's end (MPI must be running).
    pub fn world() -> MpiTransport {
        let w = SimpleCommunicator::world();
        MpiTransport {
            rank: w.rank().max(0) as usize,
            size: w.size().max(1) as usize,
        }
    }
}

impl Transport for MpiTransport {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn swap_neighbours(&mut self, to_prev: Vec<u8>, to_next: Vec<u8>) -> (Vec<u8>, Vec<u8>) {
        let w = SimpleCommunicator::world();
        let (r, n) = (self.rank as i32, self.size as i32);
        mpi::request::scope(|scope| {
            let up = (r > 0).then(|| w.process_at_rank(r - 1).immediate_send(scope, &to_prev[..]));
            let down =
                (r + 1 < n).then(|| w.process_at_rank(r + 1).immediate_send(scope, &to_next[..]));
            let a = if r > 0 {
                w.process_at_rank(r - 1).receive_vec::<u8>().0
            } else {
                Vec::new()
            };
            let b = if r + 1 < n {
                w.process_at_rank(r + 1).receive_vec::<u8>().0
            } else {
                Vec::new()
            };
            for req in [up, down].into_iter().flatten() {
                req.wait();
            }
            (a, b)
        })
    }

    fn sum(&mut self, vals: &mut [u64]) {
        let w = SimpleCommunicator::world();
        let mut out = vec![0u64; vals.len()];
        w.all_reduce_into(&vals[..], &mut out[..], SystemOperation::sum());
        vals.copy_from_slice(&out);
    }

    fn allgather(&mut self, mine: Vec<u8>) -> Vec<Vec<u8>> {
        let w = SimpleCommunicator::world();
        let n = self.size;
        let len = i32::try_from(mine.len()).unwrap_or(i32::MAX);
        let mut counts = vec![0i32; n];
        w.all_gather_into(&len, &mut counts[..]);
        let mut displs = Vec::with_capacity(n);
        let mut total = 0i32;
        for &c in &counts {
            displs.push(total);
            total = total.saturating_add(c);
        }
        let mut buf = vec![0u8; total.max(0) as usize];
        {
            let mut part = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
            w.all_gather_varcount_into(&mine[..], &mut part);
        }
        counts
            .iter()
            .zip(&displs)
            .map(|(&c, &d)| {
                buf.get(d as usize..(d + c) as usize)
                    .unwrap_or_default()
                    .to_vec()
            })
            .collect()
    }
}
