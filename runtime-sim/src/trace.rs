//! Instruction and wavelet traces (`cslsim --trace`): one line per event, in the style of
//! the vendor's `sim.log` (`@cycle PE(x,y): ...`).

use std::fmt;
use std::io::Write;
use std::sync::{Arc, Mutex};

/// Which PEs are traced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFilter {
    /// Every PE.
    All,
    /// One PE, by rectangle-relative coordinate.
    Pe {
        /// Column.
        x: u32,
        /// Row.
        y: u32,
    },
}

impl TraceFilter {
    /// Parses `all` or `X,Y`.
    pub fn parse(s: &str) -> Option<TraceFilter> {
        if s == "all" {
            return Some(TraceFilter::All);
        }
        let (x, y) = s.split_once(',')?;
        Some(TraceFilter::Pe {
            x: x.trim().parse().ok()?,
            y: y.trim().parse().ok()?,
        })
    }

    /// Whether the PE at rectangle-relative `(x, y)` is traced.
    pub fn matches(&self, x: u32, y: u32) -> bool {
        match *self {
            TraceFilter::All => true,
            TraceFilter::Pe { x: tx, y: ty } => (tx, ty) == (x, y),
        }
    }
}

/// Where trace lines go. Clones share the output.
#[derive(Clone)]
pub struct Tracer {
    pub(crate) filter: TraceFilter,
    out: Arc<Mutex<Box<dyn Write + Send>>>,
}

impl fmt::Debug for Tracer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tracer")
            .field("filter", &self.filter)
            .finish_non_exhaustive()
    }
}

impl Tracer {
    /// Traces the PEs selected by `filter` into `out`.
    pub fn new(filter: TraceFilter, out: Box<dyn Write + Send>) -> Tracer {
        Tracer {
            filter,
            out: Arc::new(Mutex::new(out)),
        }
    }

    /// Writes one line (write errors are ignored: tracing never stops a run).
    pub(crate) fn line(&self, args: fmt::Arguments<'_>) {
        if let Ok(mut out) = self.out.lock() {
            let _ = out.write_fmt(args);
            let _ = out.write_all(b"\n");
        }
    }

    /// Flushes the output.
    pub fn flush(&self) {
        if let Ok(mut out) = self.out.lock() {
            let _ = out.flush();
        }
    }
}
