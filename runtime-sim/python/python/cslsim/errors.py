"""Exceptions raised by cslsim.

Every error of the runtime derives from :class:`CslsimError`, itself a ``RuntimeError``.
Where a standard category fits, a class also derives from it (for example
:class:`ArraySizeError` is a ``ValueError`` and :class:`UnsupportedError` a
``NotImplementedError``), so both ``except CslsimError`` and the usual ``except
ValueError`` work.

The native module raises these classes by name, one per ``HostError`` / ``SimError``
variant of the Rust runtime (see ``src/lib.rs``).
"""


class CslsimError(RuntimeError):
    """Base class of every cslsim error."""


class RuntimeStateError(CslsimError):
    """A call in the wrong order: a command before ``load()``/``run()``, after ``stop()``,
    or ``load()``/``run()``/``stop()`` twice."""


class ImageReadError(CslsimError):
    """The program could not be read: missing directory or file, or not a cslc image."""


class UnknownSymbolError(CslsimError, LookupError):
    """No ``@export_name`` has this name, or a symbol id that ``get_id`` did not return."""


class SymbolMissingError(UnknownSymbolError):
    """The name exists but some PE's program does not ``@export_symbol`` it (or, for the
    debug helpers, the PE's program has no variable of that name)."""


class SymbolKindError(CslsimError, TypeError):
    """A function given where a tensor is needed (memcpy) or the reverse (launch)."""


class ImmutableSymbolError(CslsimError):
    """``memcpy_h2d`` into a tensor exported as immutable."""


class RegionError(CslsimError, ValueError):
    """The memcpy region (or a debug coordinate) is outside the program rectangle."""


class SymbolBoundsError(CslsimError, ValueError):
    """A copy or read would pass the end of a PE's memory."""


class ArraySizeError(CslsimError, ValueError):
    """The host array does not hold ``w * h * elem_per_pe`` elements."""


class DTypeError(CslsimError, TypeError):
    """The host array's dtype is not a 32-bit type (float32, int32 or uint32)."""


class LaunchArgumentError(CslsimError, TypeError):
    """``launch``/``call`` with the wrong number of arguments, or an argument that does
    not fit the declared parameter type."""


class InvalidColorError(CslsimError, ValueError):
    """A streaming memcpy names a colour id that does not exist."""


class UnsupportedError(CslsimError, NotImplementedError):
    """A feature of the vendor runtime that cslsim does not provide (yet)."""


class NoSystemError(UnsupportedError):
    """A real CS system was requested (``cmaddr``): cslsim only simulates."""


class DebugUnsupportedError(UnsupportedError):
    """A debug facility that cslsim cannot provide."""


class SimulationError(CslsimError):
    """The simulation failed; the runtime repeats this error for later commands."""


class DeviceFaultError(SimulationError):
    """A PE faulted (bad memory access, failed ``@assert``, unimplemented instruction...)."""


class DeadlockError(SimulationError):
    """A command waits for PEs that have nothing left to run (for example a launched
    function that never calls ``unblock_cmd_stream()``)."""


class RoutingError(SimulationError):
    """The fabric cannot carry a wavelet (no route, a wavelet off the fabric's edge...)."""


class CycleLimitError(SimulationError):
    """The simulated clock reached the cycle limit (``SdkRuntime(..., max_cycles=N)``)."""


class InternalError(CslsimError):
    """A bug in the simulator (it panicked); the runtime cannot be used any more."""


__all__ = [name for name in dir() if name.endswith("Error")]
