#!/usr/bin/env cs_python
"""Tutorial 03 host program: copy mode on a 2x2 rectangle with 16-bit elements.

The input goes in column-major order and the result comes back in row-major order, so
the script shows both host layouts. Usage: cs_python run.py --name out
"""

import numpy as np

from cerebras.sdk.runtime.sdkruntimepybind import (  # pylint: disable=no-name-in-module
    MemcpyDataType,
    MemcpyOrder,
)
from cerebras.sdk.sdk_utils import input_array_to_u32, memcpy_view
from cslsim.script import compiled_params, parse_args, start

args = parse_args("memcpy on a 2x2 rectangle, 16-bit data")

params = compiled_params(args.name)
N = int(params["N"])
W, H = 2, 2

# x[row][column][k]: the vector of PE (column, row) is x[row, column, :].
rng = np.random.default_rng(3)
x = rng.integers(-1000, 1000, size=(H, W, N), dtype=np.int16)

# The reference: 2x plus a tag of 100*row + 10*column.
rows = np.arange(H, dtype=np.int16).reshape(H, 1, 1)
cols = np.arange(W, dtype=np.int16).reshape(1, W, 1)
y_expected = (2 * x + 100 * rows + 10 * cols).astype(np.int16)

runner = start(args)

# Host arrays are always 32-bit words; with MEMCPY_16BIT the device value is the low
# half. COL_MAJOR is numpy's Fortran order of the [H][W][N] array (the row index varies
# fastest); ROW_MAJOR is C order.
x_words = input_array_to_u32(x.ravel(order="F"), None, N)
runner.memcpy_h2d(runner.get_id("x"), x_words, 0, 0, W, H, N, streaming=False,
                  data_type=MemcpyDataType.MEMCPY_16BIT, order=MemcpyOrder.COL_MAJOR,
                  nonblock=False)

runner.launch("compute", nonblock=False)

y_words = np.zeros(W * H * N, dtype=np.uint32)
runner.memcpy_d2h(y_words, runner.get_id("y"), 0, 0, W, H, N, streaming=False,
                  data_type=MemcpyDataType.MEMCPY_16BIT, order=MemcpyOrder.ROW_MAJOR,
                  nonblock=False)
runner.stop()

# Keep the low 16 bits of each word and read them as int16, in C order.
y = memcpy_view(y_words, np.dtype(np.int16)).reshape(H, W, N)

for r in range(H):
    for c in range(W):
        print(f"PE ({c},{r}): y = {y[r, c]}")
np.testing.assert_array_equal(y, y_expected)
print("SUCCESS!")
