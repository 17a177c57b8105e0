"""Tests of the host-array helpers (cerebras.sdk.sdk_utils)."""

import numpy as np
import pytest

from cerebras.sdk.sdk_utils import calculate_cycles, input_array_to_u32, memcpy_view


def test_memcpy_view_16bit_writes_low_halves():
    container = np.full(4, 0xABCD0000, dtype=np.uint32)
    view = memcpy_view(container, np.float16)
    view[:] = [0.5, 1.0, -2.0, 3.0]
    np.testing.assert_array_equal(container >> 16, [0xABCD] * 4)
    np.testing.assert_array_equal(
        (container & 0xFFFF).astype(np.uint16).view(np.float16), [0.5, 1.0, -2.0, 3.0])
    np.testing.assert_array_equal(memcpy_view(container, np.float16), view)


def test_memcpy_view_other_widths():
    words = np.array([0x11223344, 0x55667788], dtype=np.uint32)
    np.testing.assert_array_equal(memcpy_view(words, np.uint8), [0x44, 0x88])
    assert memcpy_view(words, np.float32).dtype == np.float32
    with pytest.raises(ValueError):
        memcpy_view(np.zeros(2, np.uint16), np.uint8)
    with pytest.raises(ValueError):
        memcpy_view(words, np.float64)


def test_input_array_to_u32():
    f = np.array([1.0, -2.0, 0.5], dtype=np.float16)
    w = input_array_to_u32(f, None, 3)
    assert w.dtype == np.uint32
    np.testing.assert_array_equal(w, f.view(np.uint16).astype(np.uint32))
    idx = input_array_to_u32(np.array([7, 8, 9, 10], dtype=np.int16), 1, 2)
    np.testing.assert_array_equal(idx >> 16, [0, 1, 0, 1])
    np.testing.assert_array_equal(idx & 0xFFFF, [7, 8, 9, 10])
    neg = input_array_to_u32(np.array([-1], dtype=np.int16), None, 1)
    assert int(neg[0]) == 0xFFFF
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(input_array_to_u32(x, None, 1), x.view(np.uint32))
    with pytest.raises(ValueError):
        input_array_to_u32(np.zeros(2, np.float64), None, 1)


def test_calculate_cycles():
    start, end = 0x0000_1234_5678_9ABC, 0x0000_1234_5679_0000
    s = [start & 0xFFFF, (start >> 16) & 0xFFFF, start >> 32]
    e = [end & 0xFFFF, (end >> 16) & 0xFFFF, end >> 32]
    words = np.array([s[0] | s[1] << 16, s[2] | e[0] << 16, e[1] | e[2] << 16], dtype=np.uint32)
    assert calculate_cycles(words) == end - start
    assert calculate_cycles(words.view(np.float32)) == end - start
    assert isinstance(calculate_cycles(words), np.int64)
    with pytest.raises(ValueError):
        calculate_cycles(np.zeros(2, np.uint32))


def test_progress_line(monkeypatch):
    """A command running longer than the delay shows a progress line, then erases it."""
    import io
    import time

    from cslsim import runtime

    monkeypatch.setattr(runtime._Progress, "DELAY", 0.01)
    monkeypatch.setattr(runtime._Progress, "PERIOD", 0.01)
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    with runtime._Progress("launch `f`", True):
        time.sleep(0.2)
    text = err.getvalue()
    assert "[cslsim] launch `f`: simulating..." in text
    assert text.endswith("\r\033[K")
    err.truncate(0)
    with runtime._Progress("launch `f`", False):
        time.sleep(0.05)
    assert err.getvalue() == ""
