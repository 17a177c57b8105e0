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
import struct

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

    def __init__(self, bindir, cmaddr=None):
        if cmaddr is not None:
            raise DebugUnsupportedError(
                "debug_util: cmaddr names a real system; cslsim only reads the simulated fabric"
            )
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
        """The records the ``<debug>`` library traced under key ``name`` at PE ``(px, py)``
        (absolute fabric coordinates): a list of bool, int, float and str values, with
        ``trace_timestamp`` records as ints (cycles)."""
        px, py = operator.index(px), operator.index(py)
        ox, oy, w, h = self._meta["offset_x"], self._meta["offset_y"], self._meta["width"], self._meta["height"]
        x, y = px - ox, py - oy
        if not (0 <= x < w and 0 <= y < h):
            raise RegionError(
                f"PE ({px},{py}) is not in the program rectangle: it spans columns {ox}..{ox + w - 1} "
                f"and rows {oy}..{oy + h - 1} (debug coordinates are absolute fabric coordinates)"
            )
        _, globals_ = self._rt.globals(x, y)
        keys = []
        for gname, addr, size in globals_:
            if _last_part(gname) != "trace_buffer":
                continue
            words = np.frombuffer(self._rt.read_memory(x, y, addr, size), dtype=np.uint16)
            found, records, _dropped = _decode_trace(words)
            if found == name:
                return records
            keys.append(found)
        raise SymbolMissingError(
            f"PE ({px},{py}) has no <debug> trace with key {name!r}"
            + (f" (keys: {', '.join(repr(k) for k in keys)})" if keys else " (it imports no <debug> module)")
        )


# The trace-buffer format of stdlib/debug.csl (see the table at the top of that file).
_TRACE_MAGIC = 0xDEB6
_ONE_WORD = {1: "bool", 2: "u8", 3: "i8", 4: "u16", 5: "i16", 6: "f16"}
_TWO_WORDS = {7: "u32", 8: "i32", 9: "f32"}


def _decode_trace(words):
    """(key, records, dropped) of one ``<debug>`` trace buffer given as 16-bit words."""
    words = [int(w) for w in words]
    if len(words) < 4 or words[0] != _TRACE_MAGIC:
        return None, [], 0
    used, dropped, key_len = words[1], words[2], words[3]
    key_words = (key_len + 1) // 2
    key = b"".join(struct.pack("<H", w) for w in words[4:4 + key_words])[:key_len].decode("ascii", "replace")
    pos = 4 + key_words
    end = min(pos + used, len(words))
    records = []
    while pos < end:
        tag = words[pos]
        kind, extra = tag & 0xFF, tag >> 8
        pos += 1
        if kind in _ONE_WORD:
            w = words[pos]
            pos += 1
            t = _ONE_WORD[kind]
            if t == "bool":
                records.append(bool(w))
            elif t in ("i8", "i16"):
                records.append(int(np.uint16(w).view(np.int16)))
            elif t == "f16":
                records.append(float(np.uint16(w).view(np.float16)))
            else:
                records.append(w)
        elif kind in _TWO_WORDS:
            v = words[pos] | (words[pos + 1] << 16)
            pos += 2
            t = _TWO_WORDS[kind]
            if t == "i32":
                records.append(int(np.uint32(v).view(np.int32)))
            elif t == "f32":
                records.append(float(np.uint32(v).view(np.float32)))
            else:
                records.append(v)
        elif kind == 10:
            n = extra
            raw = b"".join(struct.pack("<H", w) for w in words[pos:pos + (n + 1) // 2])
            records.append(raw[:n].decode("ascii", "replace"))
            pos += (n + 1) // 2
        elif kind == 11:
            records.append(words[pos] | (words[pos + 1] << 16) | (words[pos + 2] << 32))
            pos += 3
        else:
            break
    return key, records, dropped
