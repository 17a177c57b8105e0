//! `cslsim._native`: the Python extension module wrapping [`cslsim::host::SdkRuntime`].
//!
//! This layer is deliberately thin and numpy-free: host arrays cross it as `bytes` of
//! little-endian 32-bit words, enums as small integers. The Python package `cslsim`
//! (and the vendor-compatible `cerebras.sdk...` modules built on it) does the array
//! handling, argument conversion and the vendor-style API.
//!
//! Every call that may run the fabric releases the GIL (other Python threads, such as the
//! progress line, keep running) and catches panics, so a bug in the simulator becomes a
//! Python exception (`cslsim.errors.InternalError`) instead of killing the interpreter.
//! Errors are raised as the exception classes of `cslsim.errors`, chosen from the
//! [`HostError`] / [`SimError`] variant. While the fabric runs, Python's signal handlers
//! are run every 50 ms (`Python::check_signals`), so Ctrl-C stops a long `launch()` or
//! memcpy promptly with `KeyboardInterrupt`.

use csl_arch::image::{ExportKind, Image};
use cslsim::host::{HostError, MemcpyDataType, MemcpyOrder, Region, SdkRuntime, Transfer};
use cslsim::sim::InterruptCheck;
use cslsim::{PeRect, PerfettoConfig, SimError};
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// A failure on the Rust side: the name of the `cslsim.errors` class and the message.
type Failure = (&'static str, String);

/// A program's name and its globals: `(name, byte_address, size_bytes)`.
type ProgramGlobals = (String, Vec<(String, u32, u32)>);

/// The `cslsim.errors` class for a host error.
fn class_of(e: &HostError) -> &'static str {
    #[allow(unreachable_patterns)]
    match e {
        HostError::NotLoaded
        | HostError::AlreadyLoaded
        | HostError::NotRunning
        | HostError::AlreadyRunning
        | HostError::Stopped => "RuntimeStateError",
        HostError::Io { .. } | HostError::Image(_) => "ImageReadError",
        HostError::UnknownSymbol { .. } | HostError::UnknownSymbolId { .. } => "UnknownSymbolError",
        HostError::SymbolMissingOnPe { .. } => "SymbolMissingError",
        HostError::WrongSymbolKind { .. } => "SymbolKindError",
        HostError::ImmutableSymbol { .. } => "ImmutableSymbolError",
        HostError::RegionOutsideRectangle { .. } => "RegionError",
        HostError::SymbolOutOfBounds { .. } => "SymbolBoundsError",
        HostError::WrongArraySize { .. } => "ArraySizeError",
        HostError::WrongArgCount { .. } => "LaunchArgumentError",
        HostError::InvalidColor { .. } => "InvalidColorError",
        HostError::Unsupported(_) => "UnsupportedError",
        HostError::Sim(s) => sim_class_of(s),
        _ => "CslsimError",
    }
}

fn sim_class_of(e: &SimError) -> &'static str {
    #[allow(unreachable_patterns)]
    match e {
        SimError::Fault { .. } => "DeviceFaultError",
        SimError::Deadlock { .. } => "DeadlockError",
        SimError::Routing { .. } => "RoutingError",
        SimError::CycleLimit { .. } => "CycleLimitError",
        _ => "SimulationError",
    }
}

/// The pseudo-class of a run stopped by the interrupt check (see [`signal_check`]).
const INTERRUPTED: &str = "<interrupted>";

fn host_failure(e: &HostError) -> Failure {
    if let HostError::Sim(SimError::Interrupted { .. }) = e {
        return (INTERRUPTED, e.to_string());
    }
    let mut msg = e.to_string();
    if let HostError::Sim(SimError::CycleLimit { .. }) = e {
        msg.push_str(" [from Python: SdkRuntime(path, max_cycles=N)]");
    }
    (class_of(e), msg)
}

/// Builds the Python exception `cslsim.errors.<class>(message)`.
fn raise(py: Python<'_>, (class, msg): Failure) -> PyErr {
    let made = py
        .import("cslsim.errors")
        .and_then(|m| m.getattr(class))
        .and_then(|c| c.call1((msg.clone(),)));
    match made {
        Ok(obj) => PyErr::from_value(obj),
        // The Python half of the package is missing: still fail with the message.
        Err(_) => PyRuntimeError::new_err(msg),
    }
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// Value `v` of a vendor enum whose values are the indices of `members`, or an error
/// naming `what` and every member.
fn vendor_enum<T: Copy>(v: u32, what: &str, members: &[(T, &str)]) -> PyResult<T> {
    let found = usize::try_from(v).ok().and_then(|i| members.get(i));
    found.map(|&(t, _)| t).ok_or_else(|| {
        let names: Vec<String> = members
            .iter()
            .enumerate()
            .map(|(i, (_, name))| format!("{name} ({i})"))
            .collect();
        PyValueError::new_err(format!("{what} must be {}, got {v}", names.join(" or ")))
    })
}

fn data_type(v: u32) -> PyResult<MemcpyDataType> {
    let members = [
        (MemcpyDataType::Bit32, "MEMCPY_32BIT"),
        (MemcpyDataType::Bit16, "MEMCPY_16BIT"),
    ];
    vendor_enum(v, "data_type", &members)
}

fn order(v: u32) -> PyResult<MemcpyOrder> {
    let members = [
        (MemcpyOrder::RowMajor, "ROW_MAJOR"),
        (MemcpyOrder::ColMajor, "COL_MAJOR"),
    ];
    vendor_enum(v, "order", &members)
}

/// A memcpy region as the Python layer passes it: `(px, py, w, h, elem_per_pe)`.
type RegionArgs = (u32, u32, u32, u32, u32);

/// How a memcpy moves its data, as the Python layer passes it: `(streaming, data_type,
/// order)` with the vendor enum values.
type TransferArgs = (bool, u32, u32);

fn region_of((px, py, w, h, elem_per_pe): RegionArgs) -> Region {
    Region::new(px, py, w, h, elem_per_pe)
}

fn transfer_of((streaming, dt, ord): TransferArgs) -> PyResult<Transfer> {
    Ok(Transfer::new(streaming, data_type(dt)?, order(ord)?))
}

fn words_of(bytes: &[u8]) -> PyResult<Vec<u32>> {
    if !bytes.len().is_multiple_of(4) {
        return Err(PyValueError::new_err(format!(
            "host data must be a whole number of 32-bit words, got {} bytes",
            bytes.len()
        )));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

struct Inner {
    rt: SdkRuntime,
    /// Where `stop()` writes the recorded timeline (`perfetto=`).
    perfetto: Option<PathBuf>,
    /// Set when the simulator panicked: its state can no longer be trusted.
    broken: Option<String>,
}

/// A simulated program: `Runtime(path, max_cycles=None, threads=None, perfetto=None,
/// perfetto_pes=None)` with `path` an `.elf` file or a `cslc -o` directory; `perfetto`: a
/// file `stop()` writes a timeline to, of the PEs of `perfetto_pes` (`"x0,y0:x1,y1"`).
/// Low-level; scripts use `cslsim.SdkRuntime`.
#[pyclass(module = "cslsim._native", name = "Runtime", frozen)]
struct Runtime {
    inner: Mutex<Inner>,
    /// The exception (normally `KeyboardInterrupt`) a signal handler raised while the
    /// fabric ran; the interrupted call re-raises it.
    interrupt: Arc<Mutex<Option<PyErr>>>,
}

/// How often a running simulation looks at Python's signal flags: at most this often, so
/// that the GIL is taken briefly a few times a second at most.
const SIGNAL_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// The interrupt check given to the simulator: every [`SIGNAL_POLL`], take the GIL and
/// run Python's signal handlers (`Python::check_signals`); if one raised (Ctrl-C raises
/// `KeyboardInterrupt`), keep the exception in `slot` and stop the run.
fn signal_check(slot: Arc<Mutex<Option<PyErr>>>) -> InterruptCheck {
    let last = Mutex::new(std::time::Instant::now());
    InterruptCheck(Arc::new(move || {
        let mut at = last.lock().unwrap_or_else(|p| p.into_inner());
        if at.elapsed() < SIGNAL_POLL {
            return false;
        }
        *at = std::time::Instant::now();
        match Python::attach(|py| py.check_signals()) {
            Ok(()) => false,
            Err(e) => {
                *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                true
            }
        }
    }))
}

impl Runtime {
    /// Runs `f` on the runtime with the GIL released, turning errors and panics into
    /// Python exceptions.
    fn with<T, F>(&self, py: Python<'_>, f: F) -> PyResult<T>
    where
        T: Send,
        F: FnOnce(&mut SdkRuntime) -> Result<T, Failure> + Send,
    {
        let r = py.detach(|| {
            let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(why) = &g.broken {
                return Err((
                    "InternalError",
                    format!("this runtime is unusable after an internal simulator error: {why}"),
                ));
            }
            match catch_unwind(AssertUnwindSafe(|| f(&mut g.rt))) {
                Ok(r) => r,
                Err(p) => {
                    let m = panic_message(p.as_ref());
                    g.broken = Some(m.clone());
                    Err((
                        "InternalError",
                        format!("internal error in the simulator (a bug; please report it): {m}"),
                    ))
                }
            }
        });
        r.map_err(|e| {
            // An interrupted run re-raises what the signal handler raised.
            let pending = self
                .interrupt
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take();
            match pending {
                Some(err) if e.0 == INTERRUPTED => err,
                _ if e.0 == INTERRUPTED => PyKeyboardInterrupt::new_err(e.1),
                _ => raise(py, e),
            }
        })
    }

    /// Like [`Runtime::with`] for calls returning a [`HostError`].
    fn host<T, F>(&self, py: Python<'_>, f: F) -> PyResult<T>
    where
        T: Send,
        F: FnOnce(&mut SdkRuntime) -> Result<T, HostError> + Send,
    {
        self.with(py, |rt| f(rt).map_err(|e| host_failure(&e)))
    }
}

/// Which class (index) runs the PE at rectangle-relative `(x, y)`, or why none does.
fn class_at(image: &Image, x: u32, y: u32) -> Result<usize, Failure> {
    let (w, h) = (image.meta.width, image.meta.height);
    if x >= w || y >= h {
        return Err((
            "RegionError",
            format!("PE ({x},{y}) is outside the {w}x{h} program rectangle"),
        ));
    }
    let i = y as usize * w as usize + x as usize;
    image
        .placement
        .get(i)
        .map(|&c| c as usize)
        .ok_or_else(|| ("ImageReadError", format!("no placement for PE ({x},{y})")))
}

#[pymethods]
impl Runtime {
    #[new]
    #[pyo3(signature = (path, max_cycles=None, threads=None, perfetto=None, perfetto_pes=None))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        max_cycles: Option<u64>,
        threads: Option<usize>,
        perfetto: Option<PathBuf>,
        perfetto_pes: Option<String>,
    ) -> PyResult<Self> {
        let pes = match &perfetto_pes {
            None => PeRect::ALL,
            Some(s) => PeRect::parse(s)
                .map_err(|e| PyValueError::new_err(format!("SdkRuntime(perfetto_pes=...): {e}")))?,
        };
        let r = py.detach(|| {
            catch_unwind(|| SdkRuntime::new(&path))
                .map_err(|p| {
                    (
                        "InternalError",
                        format!(
                            "internal error reading the image (a bug; please report it): {}",
                            panic_message(p.as_ref())
                        ),
                    )
                })?
                .map_err(|e| host_failure(&e))
        });
        let interrupt = Arc::new(Mutex::new(None));
        let mut rt = r
            .map_err(|e| raise(py, e))?
            .with_interrupt(signal_check(interrupt.clone()));
        if let Some(n) = max_cycles {
            rt = rt.with_max_cycles(n);
        }
        if let Some(n) = threads {
            rt = rt.with_threads(n);
        }
        if perfetto.is_some() {
            rt = rt.with_perfetto(PerfettoConfig {
                pes,
                ..PerfettoConfig::default()
            });
        }
        Ok(Runtime {
            inner: Mutex::new(Inner {
                rt,
                perfetto,
                broken: None,
            }),
            interrupt,
        })
    }

    /// Builds the fabric.
    fn load(&self, py: Python<'_>) -> PyResult<()> {
        self.host(py, |rt| rt.load())
    }

    /// Starts the fabric.
    fn run(&self, py: Python<'_>) -> PyResult<()> {
        self.host(py, |rt| rt.run())
    }

    /// Ends the session (and writes the timeline, if one was asked for).
    fn stop(&self, py: Python<'_>) -> PyResult<()> {
        let path = self
            .inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .perfetto
            .clone();
        self.host(py, move |rt| {
            rt.stop()?;
            match &path {
                Some(p) => rt.write_perfetto(p),
                None => Ok(()),
            }
        })
    }

    /// Runs the fabric until no PE has work.
    fn run_until_idle(&self, py: Python<'_>) -> PyResult<()> {
        self.host(py, |rt| rt.run_until_idle())
    }

    /// Id of an exported name.
    fn get_id(&self, py: Python<'_>, name: String) -> PyResult<u32> {
        self.host(py, move |rt| rt.get_id(&name))
    }

    /// Launches `name` with one raw 32-bit word per declared parameter.
    fn launch(&self, py: Python<'_>, name: String, args: Vec<u32>) -> PyResult<()> {
        self.host(py, move |rt| rt.launch(&name, &args, false))
    }

    /// H2D of `data`, `w*h*elem_per_pe` little-endian 32-bit words, into `dest` (a symbol
    /// id, or a colour in streaming mode).
    fn memcpy_h2d(
        &self,
        py: Python<'_>,
        dest: u32,
        data: &[u8],
        region: RegionArgs,
        how: TransferArgs,
    ) -> PyResult<()> {
        let (region, how) = (region_of(region), transfer_of(how)?);
        let src = words_of(data)?;
        self.host(py, move |rt| rt.h2d(dest, &src, region, how))
    }

    /// D2H of `src` (a symbol id, or a colour in streaming mode) into a host array of `n`
    /// words; returns them as bytes.
    fn memcpy_d2h<'py>(
        &self,
        py: Python<'py>,
        n: usize,
        src: u32,
        region: RegionArgs,
        how: TransferArgs,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let (region, how) = (region_of(region), transfer_of(how)?);
        let words = self.host(py, move |rt| {
            let mut dest = vec![0u32; n];
            rt.d2h(&mut dest, src, region, how).map(|()| dest)
        })?;
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        Ok(PyBytes::new(py, &bytes))
    }

    /// Starts an SdkLayout host-to-device stream of `data` (little-endian 32-bit words)
    /// into colour `color` of the stream proxy at `(x, y)`; returns at once.
    fn stream_send(&self, py: Python<'_>, x: u32, y: u32, color: u8, data: &[u8]) -> PyResult<()> {
        let words = words_of(data)?;
        self.host(py, move |rt| rt.stream_send(x, y, color, words))
    }

    /// Starts an SdkLayout device-to-host stream of `n` words from the stream proxy at
    /// `(x, y)`; returns at once.
    fn stream_receive(&self, py: Python<'_>, x: u32, y: u32, color: u8, n: usize) -> PyResult<()> {
        self.host(py, move |rt| rt.stream_receive(x, y, color, n))
    }

    /// Runs the fabric until the started streams finish; returns the received words as
    /// bytes (empty when no receive was started).
    fn stream_wait<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let words = self.host(py, |rt| rt.stream_wait())?;
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        Ok(PyBytes::new(py, &bytes))
    }

    /// Simulated cycles so far.
    fn cycles(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, |rt| Ok(rt.cycles()))
    }

    /// Counters: `{"cycles", "instructions", "pes": [{"x", "y", "busy_cycles",
    /// "instructions", "tasks_started"}]}` (x, y rectangle-relative).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.with(py, |rt| Ok(rt.stats()))?;
        let d = PyDict::new(py);
        d.set_item("cycles", s.cycles)?;
        d.set_item("instructions", s.instructions)?;
        let pes = PyList::empty(py);
        for p in &s.pes {
            let e = PyDict::new(py);
            e.set_item("x", p.pe.rel.x)?;
            e.set_item("y", p.pe.rel.y)?;
            e.set_item("busy_cycles", p.busy_cycles)?;
            e.set_item("instructions", p.instructions)?;
            e.set_item("tasks_started", p.tasks_started)?;
            pes.append(e)?;
        }
        d.set_item("pes", pes)?;
        Ok(d)
    }

    /// The export table, in id order: `(name, "tensor", elem_type, mutable)` or
    /// `(name, "func", [param_types])`, types named as in CSL (`f32`, `i16`, ...).
    fn exports<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let table = self.with(py, |rt| {
            Ok(rt
                .image()
                .exports
                .iter()
                .map(|e| match &e.kind {
                    ExportKind::Tensor { elem, mutable } => {
                        (e.name.clone(), true, vec![elem.name()], *mutable)
                    }
                    ExportKind::Func { params } => (
                        e.name.clone(),
                        false,
                        params.iter().map(|p| p.name()).collect(),
                        false,
                    ),
                })
                .collect::<Vec<_>>())
        })?;
        let out = PyList::empty(py);
        for (name, tensor, types, mutable) in table {
            if tensor {
                out.append((
                    name,
                    "tensor",
                    types.first().copied().unwrap_or(""),
                    mutable,
                ))?;
            } else {
                out.append((name, "func", types))?;
            }
        }
        Ok(out)
    }

    /// Image metadata: arch, fabric size, rectangle offsets and size, memcpy, params.
    fn meta<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let m = self.with(py, |rt| Ok(rt.image().meta.clone()))?;
        let d = PyDict::new(py);
        d.set_item("arch", m.arch.name())?;
        d.set_item("fabric_width", m.fabric_width)?;
        d.set_item("fabric_height", m.fabric_height)?;
        d.set_item("offset_x", m.offset_x)?;
        d.set_item("offset_y", m.offset_y)?;
        d.set_item("width", m.width)?;
        d.set_item("height", m.height)?;
        d.set_item("memcpy", m.memcpy)?;
        d.set_item("channels", m.channels)?;
        let p = PyDict::new(py);
        for (k, v) in &m.params {
            p.set_item(k, v)?;
        }
        d.set_item("params", p)?;
        Ok(d)
    }

    /// The globals of the program of the PE at rectangle-relative `(x, y)`:
    /// `[(name, byte_address, size_bytes)]`, plus its program name.
    fn globals<'py>(&self, py: Python<'py>, x: u32, y: u32) -> PyResult<ProgramGlobals> {
        self.with(py, move |rt| {
            let image = rt.image();
            let c = class_at(image, x, y)?;
            let class = image
                .classes
                .get(c)
                .ok_or_else(|| ("ImageReadError", format!("program class {c} is missing")))?;
            Ok((
                class.info.name.clone(),
                class
                    .info
                    .globals
                    .iter()
                    .map(|g| (g.name.clone(), g.addr, g.size))
                    .collect(),
            ))
        })
    }

    /// `n` bytes of the memory of the PE at rectangle-relative `(x, y)` from `addr`.
    fn read_memory<'py>(
        &self,
        py: Python<'py>,
        x: u32,
        y: u32,
        addr: u32,
        n: u32,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.with(py, move |rt| {
            class_at(rt.image(), x, y)?;
            let sim = rt.simulator().ok_or((
                "RuntimeStateError",
                "the runtime is not loaded yet: call load() first".to_string(),
            ))?;
            let pe = sim
                .pe(x, y)
                .ok_or_else(|| ("RegionError", format!("PE ({x},{y}) is not simulated")))?;
            pe.read_memory(addr, n as usize).ok_or_else(|| {
                (
                    "SymbolBoundsError",
                    format!(
                        "reading {n} bytes at 0x{addr:04x} passes the end of the {}-byte \
                             memory of PE ({x},{y})",
                        csl_arch::fabric::PE_MEMORY_BYTES
                    ),
                )
            })
        })?;
        Ok(PyBytes::new(py, &bytes))
    }
}

/// The extension module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Runtime>()?;
    m.add("DEFAULT_MAX_CYCLES", cslsim::DEFAULT_MAX_CYCLES)?;
    m.add("MEMCPY_SETUP_CYCLES", cslsim::host::MEMCPY_SETUP_CYCLES)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
