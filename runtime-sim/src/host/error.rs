//! [`HostError`]: why a host call failed (wrong call order, bad arguments, bad image, or a
//! failed simulation).

#[cfg(doc)]
use super::SdkRuntime;
use crate::error::{PeLoc, SimError};
use csl_arch::fabric::PE_MEMORY_BYTES;
use csl_arch::image::ImageError;
use std::fmt;
use std::path::PathBuf;

/// Why a host call failed.
#[derive(Debug)]
pub enum HostError {
    /// A command before [`SdkRuntime::load`].
    NotLoaded,
    /// [`SdkRuntime::load`] called twice.
    AlreadyLoaded,
    /// A command after `load` but before [`SdkRuntime::run`].
    NotRunning,
    /// [`SdkRuntime::run`] called twice.
    AlreadyRunning,
    /// A command after [`SdkRuntime::stop`].
    Stopped,
    /// The image file could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// An output file (a Perfetto trace, a heatmap, statistics) could not be written.
    Write {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The file is not a valid image.
    Image(ImageError),
    /// Host data given to a tool (e.g. `cslsim --set`) that does not fit the program.
    BadArgument {
        /// What is wrong, naming the option.
        what: String,
    },
    /// No `@export_name` has this name.
    UnknownSymbol {
        /// The name asked for.
        name: String,
        /// The names the image exports.
        known: Vec<String>,
    },
    /// A symbol id not returned by [`SdkRuntime::get_id`].
    UnknownSymbolId {
        /// The id.
        id: u32,
        /// Number of exported names.
        count: usize,
    },
    /// The name is of the wrong kind for the call (a function given to memcpy, ...).
    WrongSymbolKind {
        /// The name.
        name: String,
        /// What the call needs.
        expected: &'static str,
        /// What the name is.
        found: &'static str,
    },
    /// `memcpy_h2d` into a tensor exported as immutable.
    ImmutableSymbol {
        /// The name.
        name: String,
    },
    /// A PE's program does not `@export_symbol` the name.
    SymbolMissingOnPe {
        /// The name.
        name: String,
        /// The first PE lacking it.
        pe: PeLoc,
        /// Its program class.
        class: String,
    },
    /// The memcpy region is not inside the program rectangle.
    RegionOutsideRectangle {
        /// Region origin column.
        px: u32,
        /// Region origin row.
        py: u32,
        /// Region width.
        w: u32,
        /// Region height.
        h: u32,
        /// Rectangle width.
        width: u32,
        /// Rectangle height.
        height: u32,
    },
    /// The host array does not hold `w * h * elem_per_pe` elements.
    WrongArraySize {
        /// Elements needed.
        expected: u64,
        /// Elements given.
        got: usize,
    },
    /// `launch` with the wrong number of arguments.
    WrongArgCount {
        /// The function.
        name: String,
        /// Declared parameters.
        expected: usize,
        /// Arguments given.
        got: usize,
    },
    /// A memcpy would pass the end of a PE's memory.
    SymbolOutOfBounds {
        /// The symbol.
        name: String,
        /// The PE.
        pe: PeLoc,
        /// Start address of the tensor (or of its pointer variable).
        addr: u32,
        /// Bytes the copy needs from there.
        bytes: u64,
    },
    /// A memcpy would pass the end of the array the exported pointer points at.
    PastEndOfArray {
        /// The exported symbol.
        name: String,
        /// The PE.
        pe: PeLoc,
        /// The array the pointer points at (a global of the PE's program).
        array: String,
        /// Bytes of the array from the pointer's target to its end.
        room: u64,
        /// Bytes the copy needs.
        bytes: u64,
    },
    /// A streaming memcpy names a colour that does not exist.
    InvalidColor {
        /// The colour id given.
        color: u32,
    },
    /// A simulator parameter outside its range (`SimParams::check`).
    BadParams(String),
    /// An SdkLayout `receive` while another one is unfinished.
    StreamBusy,
    /// Simulating the image would need more memory than the limit allows.
    TooLarge {
        /// PEs in the program rectangle.
        pes: u64,
        /// Estimated bytes the simulator needs.
        needed: u64,
        /// The limit, in bytes.
        limit: u64,
        /// Where the limit comes from.
        source: &'static str,
    },
    /// A feature the simulator does not have yet.
    Unsupported(String),
    /// The simulation failed (fault, deadlock, cycle limit).
    Sim(SimError),
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostError::NotLoaded => f.write_str("the runtime is not loaded yet: call load() first"),
            HostError::AlreadyLoaded => f.write_str("load() was already called"),
            HostError::NotRunning => {
                f.write_str("the fabric is not running yet: call run() after load()")
            }
            HostError::AlreadyRunning => f.write_str("run() was already called"),
            HostError::Stopped => f.write_str("the runtime was stopped: no more commands"),
            HostError::BadArgument { what } => f.write_str(what),
            HostError::Io { path, source } => {
                write!(f, "cannot read `{}`: {source}", path.display())
            }
            HostError::Write { path, source } => {
                write!(f, "cannot write `{}`: {source}", path.display())
            }
            HostError::Image(e) => write!(f, "{e}"),
            HostError::UnknownSymbol { name, known } => {
                write!(f, "no exported name `{name}`")?;
                if known.is_empty() {
                    f.write_str(" (the program exports no names)")
                } else {
                    write!(f, " (exported: {})", known.join(", "))
                }
            }
            HostError::UnknownSymbolId { id, count } => {
                write!(
                    f,
                    "symbol id {id} is not valid (the program exports {count} names)"
                )
            }
            HostError::WrongSymbolKind {
                name,
                expected,
                found,
            } => {
                write!(f, "`{name}` is {found}, but this call needs {expected}")
            }
            HostError::ImmutableSymbol { name } => {
                write!(
                    f,
                    "`{name}` is exported as immutable; the host cannot write it"
                )
            }
            HostError::SymbolMissingOnPe { name, pe, class } => {
                write!(
                    f,
                    "{pe} (program `{class}`) does not export a symbol `{name}`"
                )
            }
            HostError::RegionOutsideRectangle {
                px,
                py,
                w,
                h,
                width,
                height,
            } => write!(
                f,
                "memcpy region at ({px},{py}) of {w}x{h} PEs is outside the {width}x{height} \
                 program rectangle"
            ),
            HostError::WrongArraySize { expected, got } => write!(
                f,
                "host array has {got} elements; w * h * elem_per_pe = {expected}"
            ),
            HostError::WrongArgCount {
                name,
                expected,
                got,
            } => {
                write!(f, "`{name}` takes {expected} arguments, {got} given")
            }
            HostError::SymbolOutOfBounds {
                name,
                pe,
                addr,
                bytes,
            } => write!(
                f,
                "memcpy of `{name}` on {pe} needs {bytes} bytes from address 0x{addr:04x}, \
                 past the end of the {PE_MEMORY_BYTES}-byte memory"
            ),
            HostError::PastEndOfArray {
                name,
                pe,
                array,
                room,
                bytes,
            } => write!(
                f,
                "memcpy of `{name}` on {pe} needs {bytes} bytes, but the array `{array}` it \
                 points at has {room} bytes from there (elem_per_pe too large?)"
            ),
            HostError::InvalidColor { color } => write!(
                f,
                "streaming memcpy on colour {color}: colours are 0 to {}",
                csl_arch::fabric::NUM_COLORS - 1
            ),
            HostError::Unsupported(what) => write!(f, "unsupported: {what}"),
            HostError::StreamBusy => write!(
                f,
                "a receive is already in progress: cslsim runs one device-to-host stream at a \
                 time (wait for the first, e.g. with a blocking receive)"
            ),
            HostError::BadParams(why) => write!(f, "bad simulator parameter: {why}"),
            HostError::TooLarge {
                pes,
                needed,
                limit,
                source,
            } => write!(
                f,
                "the image's {pes} PEs need about {} MiB of simulator memory ({} KiB per PE), \
                 more than the {} MiB limit ({source}); simulate a smaller rectangle, or raise \
                 the limit with `cslsim --max-memory-mib N` (`SimParams::memory_limit_bytes`)",
                needed >> 20,
                (needed / pes.max(&1)) >> 10,
                limit >> 20
            ),
            HostError::Sim(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for HostError {}

impl From<SimError> for HostError {
    fn from(e: SimError) -> Self {
        HostError::Sim(e)
    }
}

impl From<ImageError> for HostError {
    fn from(e: ImageError) -> Self {
        HostError::Image(e)
    }
}

impl From<crate::error::WriteError> for HostError {
    fn from(e: crate::error::WriteError) -> HostError {
        HostError::Write {
            path: e.path,
            source: e.source,
        }
    }
}
