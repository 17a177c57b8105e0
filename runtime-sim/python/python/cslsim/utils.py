"""Host-array helpers (the functions of the vendor ``cerebras.sdk.sdk_utils``).

* :func:`memcpy_view` — view the low 8/16 bits (or all 32) of each 32-bit host word.
* :func:`input_array_to_u32` — widen 16-bit data to the 32-bit words memcpy moves.
* :func:`calculate_cycles` — elapsed cycles from the 3-word timestamp idiom of ``<time>``.
"""

import struct
import sys

import numpy as np

__all__ = [
    "memcpy_view",
    "input_array_to_u32",
    "calculate_cycles",
    "make_u48",
    "sub_ts",
    "float_to_hex",
]


def memcpy_view(arr, dtype):
    """A view of the low part of every 32-bit element of ``arr`` as ``dtype``.

    ``arr`` must be an array of a 4-byte type (usually ``uint32``, the container memcpy
    reads and writes). For a 2-byte ``dtype`` (``float16``, ``int16``, ``uint16``) the
    view holds the low 16 bits of each word, for a 1-byte type the low 8 bits, for a
    4-byte type the whole word. It is a view: writing it writes ``arr`` (the high bits
    are left as they are), so it is also the way to fill a 32-bit container with 16-bit
    data before ``memcpy_h2d(..., data_type=MEMCPY_16BIT)``.
    """
    if not isinstance(arr, np.ndarray):
        raise TypeError(
            f"memcpy_view needs a numpy array, got {type(arr).__name__}"
        )
    dtype = np.dtype(dtype)
    if arr.dtype.itemsize != 4:
        raise ValueError(
            f"memcpy_view needs an array of 32-bit elements (the memcpy container), "
            f"got dtype {arr.dtype}"
        )
    size = dtype.itemsize
    if size not in (1, 2, 4):
        raise ValueError(f"memcpy_view: dtype {dtype} is not 8, 16 or 32 bits wide")
    if arr.ndim == 0:
        arr = arr.reshape(1)
    view = arr.view(dtype)
    step = 4 // size
    if step == 1:
        return view
    # The low part is the first piece of each word on a little-endian host.
    first = 0 if sys.byteorder == "little" else step - 1
    return view[..., first::step]


def input_array_to_u32(np_arr, sentinel, fast_dim_sz):
    """The 32-bit host words for memcpy of ``np_arr`` (flattened in C order).

    * 32-bit data is returned reinterpreted as ``uint32`` (no copy when contiguous).
    * 16-bit data (``float16``, ``int16``, ``uint16``) is widened: the low half of each
      word holds the 16 data bits. If ``sentinel`` is ``None`` the high half is zero;
      otherwise it holds the element's index within the fastest-varying dimension of
      size ``fast_dim_sz`` (``i % fast_dim_sz``), the format streaming kernels decode
      with a data task taking ``(u16, u16)`` arguments.
    """
    arr = np.asarray(np_arr)
    flat = arr.reshape(-1)
    size = flat.dtype.itemsize
    if size == 4:
        return flat.view(np.uint32)
    if size != 2:
        raise ValueError(
            f"input_array_to_u32 takes 16- or 32-bit data, got dtype {arr.dtype}"
        )
    words = flat.view(np.uint16).astype(np.uint32)
    if sentinel is None:
        return words
    n = int(fast_dim_sz)
    if n <= 0:
        raise ValueError(f"input_array_to_u32: fast_dim_sz must be positive, got {n}")
    index = (np.arange(words.size, dtype=np.uint64) % n).astype(np.uint32) & 0xFFFF
    return words | (index << np.uint32(16))


def float_to_hex(f):
    """The bits of a float32 as a hex string (``'0x3f800000'`` for 1.0)."""
    return hex(struct.unpack("<I", struct.pack("<f", float(f)))[0])


def make_u48(words):
    """The 48-bit value of three 16-bit words, least significant first."""
    w = [int(x) & 0xFFFF for x in list(words)[:3]]
    return w[0] | (w[1] << 16) | (w[2] << 32)


def sub_ts(words):
    """Six 16-bit words = start and end timestamps; returns end - start."""
    w = list(words)
    return make_u48(w[3:6]) - make_u48(w[0:3])


def calculate_cycles(timestamp_buf):
    """Elapsed cycles recorded by the ``<time>`` timestamp idiom.

    The device packs two 48-bit timestamps (start, end), each three 16-bit words, into
    three 32-bit words (usually a ``[3]f32`` buffer copied back with memcpy):
    word 0 = start[0] | start[1] << 16, word 1 = start[2] | end[0] << 16,
    word 2 = end[1] | end[2] << 16. ``timestamp_buf`` holds those three words as
    float32, uint32 or int32 values; the result is ``end - start`` as ``numpy.int64``.
    """
    buf = np.asarray(timestamp_buf)
    if buf.size < 3:
        raise ValueError(
            f"calculate_cycles needs 3 words (two packed 48-bit timestamps), got {buf.size}"
        )
    flat = buf.reshape(-1)[:3]
    if flat.dtype.itemsize == 4 and flat.dtype.kind in "fiu":
        words = [int(x) for x in np.ascontiguousarray(flat).view(np.uint32)]
    elif flat.dtype.kind == "f":
        words = [int(x) for x in flat.astype(np.float32).view(np.uint32)]
    else:
        words = [int(x) & 0xFFFFFFFF for x in flat]
    halves = []
    for w in words:
        halves += [w & 0xFFFF, w >> 16]
    return np.int64(sub_ts(halves))
