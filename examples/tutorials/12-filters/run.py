#!/usr/bin/env cs_python
"""Tutorial 12 host program: one stream, three range filters, three slices.

Usage: cs_python run.py --name out
"""

import numpy as np

from cerebras.sdk.runtime.sdkruntimepybind import (  # pylint: disable=no-name-in-module
    MemcpyDataType,
    MemcpyOrder,
)
from cerebras.sdk.sdk_utils import input_array_to_u32, memcpy_view
from cslsim.script import compiled_params, parse_args, start

args = parse_args("range filters")

params = compiled_params(args.name)
P, k = int(params["P"]), int(params["k"])
total = P * k

rng = np.random.default_rng(12)
values = rng.integers(-30000, 30000, total, dtype=np.int16)
# 32-bit words with the value in the low half and its index (i % total) in the high half.
words = input_array_to_u32(values, 1, total)

runner = start(args)

runner.memcpy_h2d(runner.get_id("packed"), words, 0, 0, 1, 1, total, streaming=False,
                  data_type=MemcpyDataType.MEMCPY_32BIT, order=MemcpyOrder.ROW_MAJOR,
                  nonblock=False)
runner.launch("scatter", nonblock=False)

out = np.zeros(P * k, dtype=np.uint32)
runner.memcpy_d2h(out, runner.get_id("slice"), 1, 0, P, 1, k, streaming=False,
                  data_type=MemcpyDataType.MEMCPY_16BIT, order=MemcpyOrder.ROW_MAJOR,
                  nonblock=False)
runner.stop()

slices = memcpy_view(out, np.dtype(np.int16)).reshape(P, k)
for p in range(P):
    print(f"PE {p + 1} kept indices {p * k}..{p * k + k - 1}: {slices[p]}")
np.testing.assert_array_equal(slices.ravel(), values)
print("SUCCESS!")
