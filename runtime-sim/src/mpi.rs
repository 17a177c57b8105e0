//! MPI for distributed runs (cargo feature `mpi`, over the system's MPI library): starts
//! MPI once per process and connects a [`Simulator`](crate::Simulator) to the other
//! ranks of `MPI_COMM_WORLD` ([`MpiTransport`], the [`Transport`] of `crate::dist`).
//! Only the thread that started MPI talks to it (the simulator's worker threads never do),
//! but for [`abort`] from the panic hook, which may run on any thread.
//!
//! A failure on one rank must end the whole job (SIMULATOR.md §15): the binaries' error
//! exits go through [`fail`] (via `crate::dist::exit_error`), a panic through [`abort`].

use crate::dist::Transport;
use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::cell::{Cell, RefCell};
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Keeps MPI running; MPI is finalised when it is dropped (at the end of `main`).
pub struct Session(#[allow(dead_code)] Option<mpi::environment::Universe>);

impl Drop for Session {
    /// The end of `main`: a rank that did not fail takes part in the exit agreement
    /// ([`agree_exit`]; rank 0 prints the messages of ranks that failed), then the
    /// agreement's communicator is freed and MPI is finalised (with the universe).
    fn drop(&mut self) {
        if self.0.is_some() && !EXIT_DONE.get() {
            agree_exit(None, None);
        }
        let _ = EXIT_COMM.try_with(|c| c.borrow_mut().take());
    }
}

thread_local! {
    /// A duplicate of `MPI_COMM_WORLD` kept for [`fail`] (on the thread that started MPI,
    /// the only one that talks to MPI): its barrier can never be matched with a
    /// collective of the run, which uses the world communicator.
    static EXIT_COMM: RefCell<Option<SimpleCommunicator>> = const { RefCell::new(None) };
    /// Whether this process took part in the exit agreement already ([`fail`]).
    static EXIT_DONE: Cell<bool> = const { Cell::new(false) };
}

/// How long a failing rank waits for the other ranks to fail too ([`fail`]) before it
/// ends the job with `MPI_Abort`.
pub const FAIL_WAIT: Duration = Duration::from_secs(2);

/// Starts MPI (`None` inside if it could not start or was started before) and returns
/// this process's rank and the number of ranks. With several ranks it also installs a
/// panic hook that ends the whole job ([`abort`]) and checks that every rank was started
/// with the same command line ([`same_command`]); if not, rank 0 says so and every
/// process ends here with status 1 (after `MPI_Finalize`).
pub(crate) fn start() -> (Session, usize, usize) {
    match mpi::initialize_with_threading(mpi::Threading::Funneled) {
        Some((u, _)) => {
            let w = u.world();
            let (r, n) = (w.rank().max(0) as usize, w.size().max(1) as usize);
            if n > 1 {
                EXIT_COMM.with(|c| *c.borrow_mut() = Some(w.duplicate()));
                panic_aborts(r, n);
                if let Some(why) = same_command(&w) {
                    if r == 0 {
                        eprintln!("error: {why}");
                    }
                    EXIT_COMM.with(|c| c.borrow_mut().take());
                    drop(u);
                    std::process::exit(1);
                }
            }
            (Session(Some(u)), r, n)
        }
        None => (Session(None), 0, 1),
    }
}

/// Ends the whole MPI job at once with exit status `code` (`MPI_Abort` on
/// `MPI_COMM_WORLD`: `mpirun` stops every rank), after flushing this process's standard
/// output and error. For a failure that the other ranks do not share: returning through
/// `MPI_Finalize` instead would leave them (or this rank) waiting for each other.
pub fn abort(code: i32) -> ! {
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    SimpleCommunicator::world().abort(code)
}

/// A panic on any rank (any thread) ends the job: the message is printed as usual (the
/// previous hook), then [`abort`] with status 101 (Rust's for a panic), since unwinding
/// to `main` would call `MPI_Finalize` while the other ranks wait in a collective.
fn panic_aborts(rank: usize, size: usize) {
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        prev(info);
        eprintln!("note: rank {rank} of {size} panicked; ending the MPI job (MPI_Abort)");
        abort(101)
    }));
}

/// The environment variables that change what a run computes (so every rank must see the
/// same): `CSLSIM_*` but the thread count.
fn relevant_env() -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.to_string_lossy().into_owned())))
        .filter(|(k, _)| k.starts_with("CSLSIM_") && k != "CSLSIM_THREADS")
        .collect();
    v.sort();
    v
}

/// `None` if every rank was started with the same arguments (the program name aside) and
/// the same `CSLSIM_*` settings, else why not. Ranks that differ would take different
/// paths through the run's collective operations and wait for each other forever.
fn same_command(w: &SimpleCommunicator) -> Option<String> {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    args.hash(&mut h);
    relevant_env().hash(&mut h);
    let mine = h.finish();
    let mut all = vec![0u64; w.size().max(1) as usize];
    w.all_gather_into(&mine, &mut all[..]);
    let differ: Vec<String> = all
        .iter()
        .enumerate()
        .filter(|&(_, &x)| x != all[0])
        .map(|(r, _)| r.to_string())
        .collect();
    (!differ.is_empty()).then(|| {
        format!(
            "the ranks of this MPI run were started with different arguments or CSLSIM_* \
             settings (rank(s) {} differ from rank 0); every rank must run the same command",
            differ.join(", ")
        )
    })
}

/// Ends a distributed run after an error on this rank (`message`, already formatted):
/// [`agree_exit`], waiting without limit if the error is known to be every rank's
/// (`shared`: the run agreed on it) and up to [`FAIL_WAIT`] otherwise; returns `code`
/// when every rank got there (`main` then returns through `MPI_Finalize`), else this rank
/// prints its message and ends the whole job with [`abort`].
pub(crate) fn fail(code: u8, message: &str, shared: bool) -> ExitCode {
    agree_exit(Some((message, code)), (!shared).then_some(FAIL_WAIT));
    ExitCode::from(code)
}

/// The exit agreement, the last thing every rank of a distributed run does: a barrier on
/// a communicator of its own (a duplicate of `MPI_COMM_WORLD`, so it never matches a
/// collective operation of the run, which may be where another rank still is), then
/// every rank's error message (none on success) to rank 0, which prints each distinct
/// one once (those other than its own prefixed `rank R:`). A rank that failed waits for
/// the barrier at most `wait` (`None`: without limit); when it runs out, the other ranks
/// are somewhere else (in the run, waiting for this one): the rank prints its message
/// and [`abort`]s the job. Ranks without an error wait without limit (the failing rank
/// either arrives or aborts).
fn agree_exit(failure: Option<(&str, u8)>, wait: Option<Duration>) {
    EXIT_DONE.set(true);
    let messages = EXIT_COMM.with(|c| {
        let c = c.borrow();
        let comm = c.as_ref()?;
        let mut req = comm.immediate_barrier();
        let deadline = wait.map(|w| Instant::now() + w);
        loop {
            match req.test() {
                Ok(_) => break,
                Err(r) => req = r,
            }
            if let (Some(d), Some((message, code))) = (deadline, failure)
                && Instant::now() >= d
            {
                eprintln!("{message}");
                eprintln!(
                    "note: rank {} of {} failed alone; ending the MPI job (MPI_Abort)",
                    comm.rank(),
                    comm.size()
                );
                abort(i32::from(code.max(1)))
            }
            // Polled rather than waited on: a rank that is done must not take a core
            // from one still at work (ranks may share cores).
            std::thread::sleep(Duration::from_millis(1));
        }
        let mine = failure.map_or(&[][..], |(m, _)| m.as_bytes());
        Some((comm.rank(), gather_bytes(comm, mine)))
    });
    if let Some((0, all)) = messages {
        let mut shown: Vec<&[u8]> = Vec::new();
        for (r, m) in all.iter().enumerate() {
            if m.is_empty() || shown.contains(&&m[..]) {
                continue;
            }
            let text = String::from_utf8_lossy(m);
            if r == 0 {
                eprintln!("{text}");
            } else {
                eprintln!("rank {r}: {text}");
            }
            shown.push(m);
        }
    }
}

/// Every rank's `mine`, in rank order (all ranks call it). Each part travels behind one
/// byte, so that no buffer is empty: the address Rust gives an empty slice (1) is Open
/// MPI's `MPI_IN_PLACE`.
fn gather_bytes(comm: &SimpleCommunicator, mine: &[u8]) -> Vec<Vec<u8>> {
    let n = comm.size().max(1) as usize;
    let mut send = Vec::with_capacity(mine.len() + 1);
    send.push(0u8);
    send.extend_from_slice(mine);
    let len = i32::try_from(send.len()).unwrap_or(i32::MAX);
    let mut counts = vec![0i32; n];
    comm.all_gather_into(&len, &mut counts[..]);
    let mut displs = Vec::with_capacity(n);
    let mut total = 0i32;
    for &c in &counts {
        displs.push(total);
        total = total.saturating_add(c);
    }
    let mut buf = vec![0u8; total.max(1) as usize];
    {
        let mut part = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
        comm.all_gather_varcount_into(&send[..], &mut part);
    }
    counts
        .iter()
        .zip(&displs)
        .map(|(&c, &d)| {
            buf.get(d as usize + 1..(d + c) as usize)
                .unwrap_or_default()
                .to_vec()
        })
        .collect()
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
        gather_bytes(&SimpleCommunicator::world(), &mine)
    }
}
