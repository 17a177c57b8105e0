"""Decoding the trace buffers written by the <debug> library (format documented at the
top of stdlib/debug.csl).

    from debug_trace import read_trace
    records = read_trace(debug_util(out), col, row, "newton")

`read_trace` reads the PE's `trace_buffer` variable with `debug_util.get_symbol` and
returns its records as Python values: bool, int, float, str, or ("timestamp", cycles).
"""

import struct

import numpy as np

MAGIC = 0xDEB6

_ONE_WORD = {1: "bool", 2: "u8", 3: "i8", 4: "u16", 5: "i16", 6: "f16"}
_TWO_WORDS = {7: "u32", 8: "i32", 9: "f32"}


def decode(words):
    """(key, records, dropped) of one buffer given as 16-bit words."""
    words = [int(w) for w in words]
    if not words or words[0] != MAGIC:
        raise ValueError("not a <debug> trace buffer (bad magic word)")
    used, dropped, key_len = words[1], words[2], words[3]
    key_words = (key_len + 1) // 2
    key_bytes = b"".join(struct.pack("<H", w) for w in words[4:4 + key_words])[:key_len]
    pos = 4 + key_words
    end = pos + used
    records = []
    while pos < end:
        tag = words[pos]
        kind, extra = tag & 0xFF, tag >> 8
        pos += 1
        if kind in _ONE_WORD:
            w = words[pos]
            pos += 1
            name = _ONE_WORD[kind]
            if name == "bool":
                records.append(bool(w))
            elif name == "i8":
                records.append(int(np.uint16(w).view(np.int16)))
            elif name == "i16":
                records.append(int(np.uint16(w).view(np.int16)))
            elif name == "f16":
                records.append(float(np.uint16(w).view(np.float16)))
            else:
                records.append(w)
        elif kind in _TWO_WORDS:
            v = words[pos] | (words[pos + 1] << 16)
            pos += 2
            name = _TWO_WORDS[kind]
            if name == "i32":
                records.append(int(np.uint32(v).view(np.int32)))
            elif name == "f32":
                records.append(float(np.uint32(v).view(np.float32)))
            else:
                records.append(v)
        elif kind == 10:
            n = extra
            raw = b"".join(struct.pack("<H", w) for w in words[pos:pos + (n + 1) // 2])
            records.append(raw[:n].decode("ascii"))
            pos += (n + 1) // 2
        elif kind == 11:
            t = words[pos] | (words[pos + 1] << 16) | (words[pos + 2] << 32)
            records.append(("timestamp", t))
            pos += 3
        else:
            raise ValueError(f"unknown record tag {tag:#06x} at word {pos - 1}")
    return key_bytes.decode("ascii"), records, dropped


def read_trace(dbg, col, row, key, symbol="trace_buffer"):
    """The records of `key` at PE (col, row), absolute fabric coordinates."""
    words = dbg.get_symbol(col, row, symbol, np.uint16)
    found, records, dropped = decode(words)
    if found != key:
        raise KeyError(f"PE ({col},{row}): `{symbol}` holds key {found!r}, not {key!r}")
    if dropped:
        print(f"warning: PE ({col},{row}): {dropped} trace records did not fit")
    return records
