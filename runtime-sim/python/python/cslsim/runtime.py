"""``SdkRuntime``: the vendor-style host API on top of the Rust runtime (``cslsim._native``).

Commands run **serially, in issue order, and complete before the call returns**. A call
with ``nonblock=True`` therefore also returns after the command has completed; it
returns a :class:`Task` that is already done, so ``task_wait`` returns at once and
``is_task_done`` is ``True``. (The vendor runtime also executes commands in order; only
the moment the Python caller regains control differs.)

A program compiled from an ``SdkLayout`` (``cslsim.layout``) is the exception: it runs by
itself, with host streams instead of memcpy. ``send``/``receive`` with ``nonblock=True``
start their transfers and return; the fabric runs when something waits (a blocking
``send``/``receive``, or ``stop()``, which also runs it until nothing can progress).
"""

import operator
import os
import sys
import threading
import time

import numpy as np

from . import _native
from . import debug as _debug
from .enums import MemcpyDataType, MemcpyOrder, SdkTarget
from .errors import (
    ArraySizeError,
    DTypeError,
    ImageReadError,
    LaunchArgumentError,
    NoSystemError,
    RegionError,
    UnsupportedError,
)

__all__ = [
    "SdkRuntime",
    "Task",
    "SimfabConfig",
    "SdkCompileArtifacts",
    "get_platform",
    "get_simulator",
    "get_system",
]


# --------------------------------------------------------------------------------------
# Tasks, platforms, artifacts


class Task:
    """Handle returned by every command. Commands complete before returning, so a task
    is always done."""

    __slots__ = ("id", "command")

    _next = 0

    def __init__(self, command):
        Task._next += 1
        self.id = Task._next
        self.command = command

    def done(self):
        """Always ``True``: the command completed before the call returned."""
        return True

    def wait(self):
        """Returns at once (the command has completed)."""

    def __repr__(self):
        return f"<Task {self.id}: {self.command} (done)>"


class SimfabConfig:
    """Simulator settings of a platform. Accepted for compatibility; cslsim ignores
    ``num_threads``/``suppress_trace`` and cannot dump core files."""

    def __init__(self, num_threads=16, suppress_trace=False, dump_core=False, core_path=None):
        self.num_threads = num_threads
        self.suppress_trace = suppress_trace
        self.dump_core = dump_core
        self.core_path = core_path

    def __repr__(self):
        return (
            f"SimfabConfig(num_threads={self.num_threads}, suppress_trace={self.suppress_trace}, "
            f"dump_core={self.dump_core}, core_path={self.core_path!r})"
        )


class _Platform:
    """What ``get_platform``/``get_simulator`` return: a simulator of a target."""

    def __init__(self, config, target):
        self.config = config if config is not None else SimfabConfig()
        self.target = SdkTarget(target)

    def __repr__(self):
        return f"<cslsim simulator platform {self.target.name}>"


def _no_system(cmaddr):
    return NoSystemError(
        f"cmaddr={cmaddr!r}: cslsim is a simulator and cannot connect to a CS system. "
        "Leave cmaddr unset (for example omit --cmaddr) to run the program on the simulator."
    )


def get_platform(cmaddr=None, config=None, target=SdkTarget.WSE3):
    """The platform to run on: only the simulator (``cmaddr=None``) is available."""
    if cmaddr:
        raise _no_system(cmaddr)
    return _Platform(config, target)


def get_simulator(config=None, target=SdkTarget.WSE3):
    """A simulator platform."""
    return _Platform(config, target)


def get_system(cmaddr):
    """A real CS system: not available in cslsim."""
    raise _no_system(cmaddr)


class SdkCompileArtifacts:
    """Compile output given by path (the directory written by ``cslc -o DIR``)."""

    def __init__(self, path):
        self.path = os.fspath(path)

    def __fspath__(self):
        return self.path

    def __repr__(self):
        return f"SdkCompileArtifacts({self.path!r})"


def _layout_streams(path):
    """The host streams an SdkLayout compilation recorded in ``out.json``, or ``None``
    for other programs."""
    meta = os.path.join(path, "out.json") if os.path.isdir(path) else None
    if meta is None or not os.path.isfile(meta):
        return None
    import json

    try:
        with open(meta) as f:
            layout = json.load(f).get("sdklayout")
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(layout, dict):
        return None
    return list(layout.get("streams", []))


# --------------------------------------------------------------------------------------
# Argument checking and conversion


def _u32(what, value):
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an integer, got {type(value).__name__}") from None
    if v < 0 or v > 0xFFFFFFFF:
        raise RegionError(f"{what} must be a non-negative 32-bit integer, got {v}")
    return v


def _enum(enum, value, what):
    if isinstance(value, enum):
        return int(value)
    # Other enums with the same member names (our cslsim enums, pybind-like objects).
    name = getattr(value, "name", None)
    if isinstance(name, str) and name in enum.__members__:
        return int(enum[name])
    try:
        return int(enum(operator.index(value)))
    except (TypeError, ValueError):
        choices = ", ".join(f"{enum.__name__}.{m}" for m in enum.__members__)
        raise TypeError(f"{what} must be one of {choices}; got {value!r}") from None


_WORD_DTYPES = (np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.uint32))


def _check_word_dtype(arr, what, data_type):
    dt = arr.dtype
    if dt.kind in "fiu" and dt.itemsize == 4:
        return
    hint = ""
    if dt.itemsize == 2:
        hint = (
            " 16-bit data travels in 32-bit host words: widen it with "
            "cerebras.sdk.sdk_utils.input_array_to_u32(arr, None, 1), or fill a uint32 "
            "container through memcpy_view(container, np.float16)."
        )
    elif dt.itemsize == 8:
        hint = " Convert it first, e.g. arr.astype(np.float32) or arr.astype(np.uint32)."
    mode = "MEMCPY_16BIT" if data_type == MemcpyDataType.MEMCPY_16BIT else "MEMCPY_32BIT"
    raise DTypeError(
        f"{what} has dtype {dt}; memcpy ({mode}) needs an array of 32-bit elements "
        f"(float32, int32 or uint32).{hint}"
    )


def _h2d_bytes(src, data_type):
    """The host array as little-endian 32-bit words (bytes)."""
    if not isinstance(src, np.ndarray):
        if isinstance(src, (list, tuple)):
            raise DTypeError(
                "memcpy_h2d needs a numpy array of float32, int32 or uint32 elements, got "
                f"a {type(src).__name__}; use np.array(..., dtype=np.float32) (or uint32)"
            )
        raise DTypeError(
            f"memcpy_h2d needs a numpy array, got {type(src).__name__}"
        )
    _check_word_dtype(src, "the source array", data_type)
    native = np.ascontiguousarray(src, dtype=src.dtype.newbyteorder("="))
    words = native.view(np.uint32).reshape(-1)
    # The native module takes little-endian words.
    return words.astype("<u4", copy=False).tobytes(), words.size


def _d2h_target(dest, data_type):
    """A writable flat uint32 view of the caller's array."""
    if not isinstance(dest, np.ndarray):
        raise DTypeError(
            "memcpy_d2h needs a preallocated numpy array to write into (for example "
            f"np.zeros(n, dtype=np.uint32)), got {type(dest).__name__}"
        )
    _check_word_dtype(dest, "the destination array", data_type)
    if not dest.flags.c_contiguous:
        raise DTypeError(
            "memcpy_d2h writes into the destination array in place; it must be C-contiguous "
            "(use np.ascontiguousarray or np.zeros(...))"
        )
    if not dest.flags.writeable:
        raise DTypeError("memcpy_d2h: the destination array is read-only")
    if not dest.dtype.isnative:
        raise DTypeError(
            f"memcpy_d2h: the destination array has non-native byte order ({dest.dtype.str})"
        )
    return dest.reshape(-1).view(np.uint32)


_INT_RANGES = {
    "i8": (-(1 << 7), (1 << 7) - 1),
    "u8": (0, (1 << 8) - 1),
    "i16": (-(1 << 15), (1 << 15) - 1),
    "u16": (0, (1 << 16) - 1),
    "i32": (-(1 << 31), (1 << 31) - 1),
    "u32": (0, (1 << 32) - 1),
}

_NUMPY_FOR = {
    "i8": "np.int8",
    "u8": "np.uint8",
    "i16": "np.int16",
    "u16": "np.uint16",
    "i32": "np.int32",
    "u32": "np.uint32",
    "f16": "np.float16",
    "f32": "np.float32",
    "bool": "np.bool_",
}


def _arg_word(func, index, value, ty):
    """One launch argument as the 32-bit word the device function receives."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    where = f"argument {index + 1} of `{func}` (declared {ty})"
    kind = type(value).__name__
    is_bool = isinstance(value, (bool, np.bool_))
    is_int = isinstance(value, (int, np.integer)) and not is_bool
    is_float = isinstance(value, (float, np.floating))
    suggestion = f"; pass e.g. {_NUMPY_FOR.get(ty, ty)}(value)"
    if ty == "bool":
        if is_bool or (is_int and int(value) in (0, 1)):
            return int(bool(value))
        raise LaunchArgumentError(f"{where} must be a bool, got {kind} {value!r}{suggestion}")
    if ty in ("f32", "f16"):
        if not (is_float or is_int):
            raise LaunchArgumentError(f"{where} must be a number, got {kind} {value!r}{suggestion}")
        if ty == "f32":
            return int(np.array(value, dtype=np.float32).view(np.uint32))
        return int(np.array(value, dtype=np.float16).view(np.uint16))
    if ty in _INT_RANGES:
        if not is_int:
            raise LaunchArgumentError(
                f"{where} must be an integer, got {kind} {value!r}{suggestion}"
            )
        lo, hi = _INT_RANGES[ty]
        v = int(value)
        if not lo <= v <= hi:
            raise LaunchArgumentError(f"{where}: {v} does not fit in {ty} [{lo}, {hi}]")
        return v & 0xFFFFFFFF
    raise LaunchArgumentError(f"{where}: parameter type {ty} is not supported by launch")


def _call_words(args):
    """The argument array of ``call`` as a list of 32-bit words."""
    arr = np.asarray(args)
    if arr.size == 0:
        return []
    flat = arr.reshape(-1)
    if flat.dtype.itemsize == 4 and flat.dtype.kind in "fiu":
        return [int(w) for w in np.ascontiguousarray(flat).view(np.uint32)]
    if flat.dtype.kind in "iub":
        out = []
        for w in flat:
            w = int(w)
            if not -(1 << 31) <= w <= 0xFFFFFFFF:
                raise LaunchArgumentError(f"call: argument word {w} does not fit in 32 bits")
            out.append(w & 0xFFFFFFFF)
        return out
    raise LaunchArgumentError(
        f"call needs an array of 32-bit words (uint32, int32 or float32), got dtype {arr.dtype}"
    )


# --------------------------------------------------------------------------------------
# Progress line


class _Progress:
    """Shows ``[cslsim] <command>: running 12s`` on stderr while a command runs longer
    than a second (the native call releases the GIL, so this thread keeps running)."""

    DELAY = 1.0
    PERIOD = 0.5

    def __init__(self, label, enabled):
        self.label = label
        self.enabled = enabled
        self.stop = None
        self.thread = None
        self.shown = False

    def __enter__(self):
        if self.enabled:
            self.stop = threading.Event()
            self.thread = threading.Thread(target=self._loop, name="cslsim-progress", daemon=True)
            self.thread.start()
        return self

    def _loop(self):
        start = time.monotonic()
        if self.stop.wait(self.DELAY):
            return
        while True:
            line = f"[cslsim] {self.label}: simulating... {time.monotonic() - start:.0f}s"
            try:
                sys.stderr.write("\r" + line + "\033[K")
                sys.stderr.flush()
            except (OSError, ValueError):
                return
            self.shown = True
            if self.stop.wait(self.PERIOD):
                return

    def __exit__(self, *exc):
        if self.thread is not None:
            self.stop.set()
            self.thread.join()
            if self.shown:
                try:
                    sys.stderr.write("\r\033[K")
                    sys.stderr.flush()
                except (OSError, ValueError):
                    pass
        return False


def _progress_default():
    env = os.environ.get("CSLSIM_PROGRESS")
    if env is not None:
        return env.strip().lower() not in ("", "0", "no", "false", "off")
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


# --------------------------------------------------------------------------------------
# The runtime


_IGNORED_KWARGS = ("suppress_simfab_trace", "simfab_numthreads", "msg_level", "memcpy_required")


class SdkRuntime:
    """A compiled CSL program on the simulated fabric (vendor ``SdkRuntime``).

    ``SdkRuntime(bindir, platform=None, *, cmaddr=None, **kwargs)``:

    * ``bindir``: the directory written by ``cslc -o DIR`` (containing ``out.elf``), an
      ``.elf`` file, or an :class:`SdkCompileArtifacts`.
    * ``platform``: optional, from :func:`get_platform` / :func:`get_simulator`.
    * ``cmaddr``: must be ``None``; cslsim cannot drive a real system.
    * ``suppress_simfab_trace``, ``simfab_numthreads``, ``msg_level``,
      ``memcpy_required``: accepted and ignored.
    * cslsim extras: ``max_cycles`` (bound on the simulated clock; exceeding it raises
      :class:`~cslsim.errors.CycleLimitError`), ``progress`` (show a progress line on
      stderr during long commands; default: when stderr is a terminal, or per the
      ``CSLSIM_PROGRESS`` environment variable), ``threads`` (threads that step the
      fabric, at least 1; default: the ``CSLSIM_THREADS`` environment variable, else the
      available cores; results are bit-identical for every number), ``perfetto`` (a
      file path: record a timeline of the run and write it there at ``stop()``, as
      Chrome trace-event JSON for ui.perfetto.dev), ``perfetto_pes`` (only record the
      PEs of the rectangle ``"x0,y0:x1,y1"``, corners included).

    Protocol: ``load()``, ``run()``, then commands (``memcpy_h2d``, ``launch``,
    ``memcpy_d2h``, ...), then ``stop()``. Commands run serially and complete before
    returning (see the module documentation).
    """

    def __init__(self, bindir, platform=None, **kwargs):
        cmaddr = kwargs.pop("cmaddr", None)
        max_cycles = kwargs.pop("max_cycles", None)
        progress = kwargs.pop("progress", None)
        threads = kwargs.pop("threads", None)
        perfetto = kwargs.pop("perfetto", None)
        perfetto_pes = kwargs.pop("perfetto_pes", None)
        if perfetto_pes is not None and perfetto is None:
            raise ValueError("SdkRuntime(perfetto_pes=...) needs perfetto=FILE")
        if threads is not None and (
            isinstance(threads, bool) or not isinstance(threads, int) or threads < 1
        ):
            raise ValueError(f"SdkRuntime(threads=...) must be a positive int, got {threads!r}")
        for k in _IGNORED_KWARGS:
            kwargs.pop(k, None)
        if kwargs:
            raise TypeError(
                "SdkRuntime() got unexpected keyword argument(s): " + ", ".join(sorted(kwargs))
            )
        if cmaddr:
            raise _no_system(cmaddr)
        if platform is not None and not isinstance(platform, _Platform):
            raise TypeError(
                f"SdkRuntime(bindir, platform): platform must come from get_platform() or "
                f"get_simulator(), got {type(platform).__name__}"
            )
        path = os.fspath(bindir)
        if not os.path.exists(path):
            raise ImageReadError(
                f"{path!r} does not exist: pass the output directory of `cslc -o DIR` "
                "(containing out.elf) or an .elf file"
            )
        if os.path.isdir(path) and not os.path.isfile(os.path.join(path, "out.elf")):
            raise ImageReadError(
                f"{path!r} has no out.elf: pass the output directory of `cslc -o DIR` "
                "or an .elf file"
            )
        self._path = path
        self._rt = _native.Runtime(
            path,
            None if max_cycles is None else int(max_cycles),
            threads,
            None if perfetto is None else os.fspath(perfetto),
            perfetto_pes,
        )
        self._meta = self._rt.meta()
        self._exports = {}
        for i, e in enumerate(self._rt.exports()):
            self._exports[e[0]] = (i, e)
        if platform is not None:
            want = platform.target.name.lower()
            if want != self._meta["arch"]:
                raise ImageReadError(
                    f"{path!r} was compiled for {self._meta['arch']} but the platform targets "
                    f"{platform.target.name}"
                )
        self._progress = _progress_default() if progress is None else bool(progress)
        # An SdkLayout program (cslc --sdklayout): its host streams, from out.json.
        self._streams = _layout_streams(path)
        self._pending_receive = None

    # ---- protocol -----------------------------------------------------------------

    def load(self):
        """Builds the fabric and loads the program."""
        self._rt.load()
        _debug._register(self._path, self._rt)

    def run(self):
        """Starts the fabric."""
        self._rt.run()

    def stop(self):
        """Ends the session (every command has already completed); writes the timeline
        if ``perfetto=FILE`` was given. An SdkLayout program first finishes its streams
        and runs until nothing can progress (it needs no host command to run)."""
        if self._streams is not None:
            with _Progress("stop", self._progress):
                self._wait_streams()
                self._rt.run_until_idle()
        self._rt.stop()

    def _exec(self, label, fn, *args):
        with _Progress(label, self._progress):
            fn(*args)
        return Task(label)

    # ---- symbols ------------------------------------------------------------------

    def get_id(self, name):
        """The id of an exported name (``@export_name``), for memcpy's ``dest``/``src``."""
        if not isinstance(name, str):
            raise TypeError(f"get_id needs a symbol name (str), got {type(name).__name__}")
        return self._rt.get_id(name)

    #: Older name of :meth:`get_id` used by some examples.
    get_symbol = get_id

    # ---- kernel launch ------------------------------------------------------------

    def launch(self, name, *args, nonblock=False):
        """Runs the exported function ``name`` on every PE of the rectangle with ``args``
        and waits until every PE has called ``unblock_cmd_stream()``.

        Arguments are converted to the parameter types declared by ``@export_name``
        (numpy scalars such as ``np.int16(n)``, or Python numbers); an argument of the
        wrong kind (float for an integer parameter, ...) or out of range raises
        :class:`~cslsim.errors.LaunchArgumentError`.
        """
        if not isinstance(name, str):
            raise TypeError(f"launch needs a function name (str), got {type(name).__name__}")
        entry = self._exports.get(name)
        if entry is None or entry[1][1] != "func" or len(entry[1][2]) != len(args):
            # Let the runtime report the problem (state, unknown name, kind, count).
            self._rt.launch(name, [0] * len(args))
            return Task(f"launch {name}")
        params = entry[1][2]
        words = [_arg_word(name, i, a, t) for i, (a, t) in enumerate(zip(args, params))]
        return self._exec(f"launch `{name}`", self._rt.launch, name, words)

    def call(self, name, args=(), nonblock=False):
        """Low-level launch: ``args`` is an array of raw 32-bit words, one per declared
        parameter (uint32/int32/float32 array or a list of integers)."""
        if not isinstance(name, str):
            raise TypeError(f"call needs a function name (str), got {type(name).__name__}")
        words = _call_words(args)
        return self._exec(f"call `{name}`", self._rt.launch, name, words)

    # ---- memcpy -------------------------------------------------------------------

    def memcpy_h2d(self, dest, src, px, py, w, h, elem_per_pe, streaming=False,
                   data_type=MemcpyDataType.MEMCPY_32BIT, order=MemcpyOrder.ROW_MAJOR,
                   nonblock=False):
        """Copies the host array ``src`` to the region of ``w x h`` PEs at ``(px, py)``
        (relative to the program rectangle), ``elem_per_pe`` elements each.

        ``dest`` is a :meth:`get_id` value (copy mode). ``src`` is a numpy array of
        ``w*h*elem_per_pe`` 32-bit elements (float32/int32/uint32; its bits are copied);
        for ``MEMCPY_16BIT`` the low 16 bits of each word are copied.
        """
        dt = _enum(MemcpyDataType, data_type, "data_type")
        od = _enum(MemcpyOrder, order, "order")
        data, _n = _h2d_bytes(src, dt)
        region = [_u32(k, v) for k, v in
                  (("px", px), ("py", py), ("w", w), ("h", h), ("elem_per_pe", elem_per_pe))]
        dest = _u32("dest", dest)
        return self._exec("memcpy_h2d", self._rt.memcpy_h2d, dest, data, tuple(region),
                          (bool(streaming), dt, od))

    def memcpy_d2h(self, dest, src, px, py, w, h, elem_per_pe, streaming=False,
                   data_type=MemcpyDataType.MEMCPY_32BIT, order=MemcpyOrder.ROW_MAJOR,
                   nonblock=False):
        """Copies ``elem_per_pe`` elements of ``src`` (a :meth:`get_id` value) from each PE
        of the region into the caller's array ``dest`` (written in place; a C-contiguous
        float32/int32/uint32 array of ``w*h*elem_per_pe`` elements). With
        ``MEMCPY_16BIT`` each word receives the 16-bit value in its low half and zero in
        its high half (see ``memcpy_view``)."""
        dt = _enum(MemcpyDataType, data_type, "data_type")
        od = _enum(MemcpyOrder, order, "order")
        target = _d2h_target(dest, dt)
        region = [_u32(k, v) for k, v in
                  (("px", px), ("py", py), ("w", w), ("h", h), ("elem_per_pe", elem_per_pe))]
        src = _u32("src", src)
        out = {}

        def run():
            out["data"] = self._rt.memcpy_d2h(target.size, src, tuple(region),
                                              (bool(streaming), dt, od))

        task = self._exec("memcpy_d2h", run)
        target[...] = np.frombuffer(out["data"], dtype="<u4")
        return task

    def _bcast(self, kind, dest, src, px, py, w, h, elem_per_pe, streaming, data_type,
               order, nonblock):
        dt = _enum(MemcpyDataType, data_type, "data_type")
        od = _enum(MemcpyOrder, order, "order")
        if not isinstance(src, np.ndarray):
            raise DTypeError(f"memcpy_h2d_{kind}bcast needs a numpy array, got {type(src).__name__}")
        _check_word_dtype(src, "the source array", dt)
        w_, h_, l_ = (_u32("w", w), _u32("h", h), _u32("elem_per_pe", elem_per_pe))
        # One vector per row (rowbcast: A[h][l]) or per column (colbcast: A[w][l]).
        lines = h_ if kind == "row" else w_
        flat = src.reshape(-1)
        if flat.size != lines * l_:
            what = "h * elem_per_pe" if kind == "row" else "w * elem_per_pe"
            raise ArraySizeError(
                f"memcpy_h2d_{kind}bcast: host array has {flat.size} elements; "
                f"{what} = {lines * l_}"
            )
        fortran = od == MemcpyOrder.COL_MAJOR
        vec = flat.reshape((lines, l_), order="F" if fortran else "C")
        if kind == "row":
            full = np.broadcast_to(vec[:, None, :], (h_, w_, l_))
        else:
            full = np.broadcast_to(vec[None, :, :], (h_, w_, l_))
        host = full.reshape(-1, order="F" if fortran else "C")
        return self.memcpy_h2d(dest, np.ascontiguousarray(host), px, py, w, h, elem_per_pe,
                               streaming=streaming, data_type=dt, order=od, nonblock=nonblock)

    def memcpy_h2d_rowbcast(self, dest, src, px, py, w, h, elem_per_pe, streaming=False,
                            data_type=MemcpyDataType.MEMCPY_32BIT,
                            order=MemcpyOrder.ROW_MAJOR, nonblock=False):
        """Like :meth:`memcpy_h2d`, but ``src`` holds one vector of ``elem_per_pe``
        elements per row of the region (``A[h][l]``), copied to every PE of that row."""
        return self._bcast("row", dest, src, px, py, w, h, elem_per_pe, streaming, data_type,
                           order, nonblock)

    def memcpy_h2d_colbcast(self, dest, src, px, py, w, h, elem_per_pe, streaming=False,
                            data_type=MemcpyDataType.MEMCPY_32BIT,
                            order=MemcpyOrder.ROW_MAJOR, nonblock=False):
        """Like :meth:`memcpy_h2d`, but ``src`` holds one vector of ``elem_per_pe``
        elements per column of the region (``A[w][l]``), copied to every PE of that
        column."""
        return self._bcast("col", dest, src, px, py, w, h, elem_per_pe, streaming, data_type,
                           order, nonblock)

    # ---- tasks --------------------------------------------------------------------

    def task_wait(self, task):
        """Waits for a task returned by a ``nonblock=True`` command (returns at once:
        commands complete before returning)."""
        if not isinstance(task, Task):
            raise TypeError(f"task_wait needs a Task, got {type(task).__name__}")

    def is_task_done(self, task):
        """Whether a task has completed (always ``True``)."""
        if not isinstance(task, Task):
            raise TypeError(f"is_task_done needs a Task, got {type(task).__name__}")
        return True

    # ---- debugging and extras -----------------------------------------------------

    def read_symbol(self, x, y, name, dtype="uint8"):
        """The value of the program variable ``name`` on the PE at absolute fabric
        coordinates ``(x, y)``, as a 1-D array of ``dtype``."""
        return _debug._read_symbol(self._rt, self._meta, x, y, name, dtype)

    def coord_logical_to_physical(self, coord):
        """Absolute fabric coordinates of a program-rectangle coordinate ``(x, y)``."""
        x, y = coord
        return (int(x) + self._meta["offset_x"], int(y) + self._meta["offset_y"])

    def cycles(self):
        """Simulated cycles so far (cslsim extra)."""
        return self._rt.cycles()

    def stats(self):
        """Run counters (cslsim extra): ``{"cycles", "instructions", "pes": [...]}``."""
        return self._rt.stats()

    @property
    def metadata(self):
        """Image metadata (cslsim extra): arch, fabric size, offsets, rectangle, params."""
        return dict(self._meta)

    def run_until_idle(self):
        """Lets the fabric run until no PE has work (cslsim extra)."""
        with _Progress("run_until_idle", self._progress):
            self._rt.run_until_idle()

    def __repr__(self):
        return f"<cslsim SdkRuntime {self._path!r}>"

    # ---- vendor calls cslsim does not provide -------------------------------------

    def _unsupported(self, what, why):
        raise UnsupportedError(f"SdkRuntime.{what} is not supported by cslsim: {why}")

    def memcpy_h2d_stride(self, *args, **kwargs):
        self._unsupported("memcpy_h2d_stride", "not implemented yet")

    # ---- SdkLayout streams -----------------------------------------------------------

    def _stream(self, stream, want_input, what):
        from .layout import Stream

        if self._streams is None:
            raise UnsupportedError(
                f"SdkRuntime.{what}: this program has no streams (it was not compiled from "
                "an SdkLayout)"
            )
        if not isinstance(stream, Stream):
            raise TypeError(f"{what} needs a stream from SdkLayout, got {type(stream).__name__}")
        if stream._index >= len(self._streams):
            raise ValueError(f"{what}: stream {stream._index} is not one of this program's")
        if stream.input != want_input:
            kind = "an input" if want_input else "an output"
            raise ValueError(f"{what} needs {kind} stream, got {stream!r}")
        return self._streams[stream._index]

    def send(self, stream, data, nonblock=False):
        """Sends the elements of ``data`` (2- or 4-byte elements, one wavelet each) into
        an input stream. ``nonblock=True`` returns once the send has started; the fabric
        runs when something waits (a blocking call, ``receive`` or ``stop``)."""
        info = self._stream(stream, True, "send")
        arr = np.ascontiguousarray(np.asarray(data)).reshape(-1)
        if arr.dtype.itemsize == 4:
            words = arr.view(np.uint32)
        elif arr.dtype.itemsize == 2:
            words = arr.view(np.uint16).astype(np.uint32)
        else:
            raise DTypeError(f"send: elements of 2 or 4 bytes, not {arr.dtype}")
        self._rt.stream_send(info["x"], info["y"], info["color"], words.astype("<u4").tobytes())
        if not nonblock:
            self._exec("send", self._wait_streams)
        return Task("send")

    def receive(self, stream, dest, size, nonblock=False):
        """Receives ``size`` wavelets of an output stream into the array ``dest`` (2- or
        4-byte elements). With ``nonblock=True`` ``dest`` is filled once the fabric has
        run (at the next blocking call or ``stop``)."""
        info = self._stream(stream, False, "receive")
        if not isinstance(dest, np.ndarray) or not dest.flags.writeable:
            raise TypeError("receive: dest must be a writable numpy array")
        size = _u32("size", size)
        if size > dest.size:
            raise ArraySizeError(f"receive: {size} elements do not fit in dest of {dest.size}")
        if dest.dtype.itemsize not in (2, 4):
            raise DTypeError(f"receive: elements of 2 or 4 bytes, not {dest.dtype}")
        if self._pending_receive is not None:
            self._wait_streams()
        self._rt.stream_receive(info["x"], info["y"], info["color"], size)
        self._pending_receive = (dest, size)
        if not nonblock:
            self._exec("receive", self._wait_streams)
        return Task("receive")

    def _wait_streams(self):
        data = self._rt.stream_wait()
        pending, self._pending_receive = self._pending_receive, None
        if pending is None:
            return
        dest, size = pending
        words = np.frombuffer(data, dtype="<u4")[:size]
        flat = dest.reshape(-1)
        if dest.dtype.itemsize == 4:
            flat.view(np.uint32)[: len(words)] = words
        else:
            flat.view(np.uint16)[: len(words)] = (words & 0xFFFF).astype(np.uint16)

    def receive_tofile(self, *args, **kwargs):
        self._unsupported("receive_tofile", "not implemented for SdkLayout streams yet")

    def get_port_id(self, *args, **kwargs):
        self._unsupported("get_port_id", "not implemented for SdkLayout streams yet")

    def report_port_infos(self, *args, **kwargs):
        self._unsupported("report_port_infos", "not implemented for SdkLayout streams yet")

    def dump_core(self, *args, **kwargs):
        self._unsupported(
            "dump_core",
            "there is no core file format; use cerebras.sdk.debug.debug_util or read_symbol "
            "in the same process",
        )

    def dump_elf_core(self, *args, **kwargs):
        self._unsupported("dump_elf_core", "there is no core file format")
