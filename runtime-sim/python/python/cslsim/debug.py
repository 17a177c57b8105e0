"""Reading program variables after (or during) a run: the vendor ``debug_util``.

The vendor tool reads a core file the simulator writes. cslsim writes no core file: it
reads the memory of the simulated fabric directly. So ``debug_util(bindir)`` works in
the Python process that ran ``SdkRuntime(bindir)`` (after ``load()``, usually after
``stop()``); it reads the most recent runtime loaded from that program.

Variable names are the names of the globals of the PE's program. A name matches a
global whose full (module-qualified) name equals it, or whose last component does.
"""

import operator
import os

import numpy as np

from .errors import (
    DebugUnsupportedError,
    RegionError,
    SymbolBoundsError,
    SymbolMissingError,
)

__all__ = ["debug_util"]

# Runtime of the most recent load() per program file (absolute path of the .elf).
_REGISTRY = {}


def _key(path):
    path = os.fspath(path)
    if os.path.isdir(path):
        path = os.path.join(path, "out.elf")
    return os.path.realpath(path)


def _register(path, rt):
    _REGISTRY[_key(path)] = rt


def _last_part(name):
    for sep in ("::", "."):
        if sep in name:
            name = name.rsplit(sep, 1)[1]
    return name


def _find_global(globals_, name):
    exact = [g for g in globals_ if g[0] == name]
    if exact:
        return exact[0]
    tail = [g for g in globals_ if _last_part(g[0]) == name]
    if len(tail) == 1:
        return tail[0]
    if len(tail) > 1:
        names = ", ".join(g[0] for g in tail)
        raise SymbolMissingError(f"`{name}` is ambiguous; use one of: {names}")
    return None


def _read_symbol(rt, meta, col, row, name, dtype):
    """``name`` on the PE at absolute fabric coordinates ``(col, row)``."""
    col, row = operator.index(col), operator.index(row)
    ox, oy, w, h = meta["offset_x"], meta["offset_y"], meta["width"], meta["height"]
    x, y = col - ox, row - oy
    if not (0 <= x < w and 0 <= y < h):
        raise RegionError(
            f"PE ({col},{row}) is not in the program rectangle: it spans columns {ox}..{ox + w - 1} "
            f"and rows {oy}..{oy + h - 1} (debug coordinates are absolute fabric coordinates)"
        )
    program, globals_ = rt.globals(x, y)
    g = _find_global(globals_, name)
    if g is None:
        shown = ", ".join(sorted(_last_part(n) for n, _, _ in globals_)[:40])
        raise SymbolMissingError(
            f"the program of PE ({col},{row}) (`{program}`) has no variable `{name}` "
            f"(variables: {shown or 'none'})"
        )
    _, addr, size = g
    dt = np.dtype(dtype)
    if size % dt.itemsize:
        raise SymbolBoundsError(
            f"`{name}` is {size} bytes, not a whole number of {dt} elements"
        )
    data = rt.read_memory(x, y, addr, size)
    return np.frombuffer(data, dtype=dt).copy()


class debug_util:  # noqa: N801 (vendor name)
    """``debug_util(bindir)``: read variables of a program simulated in this process.

    Coordinates are absolute fabric coordinates (the program rectangle starts at the
    ``--fabric-offsets`` given to cslc).
    """

    def __init__(self, bindir):
        key = _key(bindir)
        rt = _REGISTRY.get(key)
        if rt is None:
            raise DebugUnsupportedError(
                f"debug_util({os.fspath(bindir)!r}): no simulation of this program ran in this "
                "Python process. cslsim writes no core files; create SdkRuntime(bindir), "
                "load() and run it in the same process before reading variables."
            )
        self._rt = rt
        self._meta = rt.meta()

    def get_symbol(self, col, row, symbol, dtype):
        """The variable ``symbol`` at PE ``(col, row)`` as a 1-D array of ``dtype``."""
        return _read_symbol(self._rt, self._meta, col, row, symbol, dtype)

    def get_symbol_rect(self, rectangle, symbol, dtype):
        """The variable on every PE of ``rectangle = ((col, row), (width, height))``:
        an array indexed ``[column, row, element]`` relative to the rectangle."""
        (col, row), (width, height) = rectangle
        width, height = operator.index(width), operator.index(height)
        rows = []
        for i in range(width):
            rows.append([
                _read_symbol(self._rt, self._meta, col + i, row + j, symbol, dtype)
                for j in range(height)
            ])
        sizes = {a.size for r in rows for a in r}
        if len(sizes) > 1:
            raise SymbolBoundsError(
                f"`{symbol}` has different sizes on the PEs of the rectangle: {sorted(sizes)}"
            )
        n = sizes.pop() if sizes else 0
        out = np.zeros((width, height, n), dtype=np.dtype(dtype))
        for i, r in enumerate(rows):
            for j, a in enumerate(r):
                out[i, j, :] = a
        return out

    def read_trace(self, px, py, name):
        """Not available: cslsim does not implement the ``<debug>`` library's trace
        buffers."""
        raise DebugUnsupportedError(
            "debug_util.read_trace: trace buffers of the <debug> library are not supported "
            "by cslsim; read the variables you need with get_symbol instead"
        )
