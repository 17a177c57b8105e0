#!/usr/bin/env cs_python
"""Tutorial 08 host program: stream n values to each PE, stream back their running sums.

Usage: cs_python run.py --name out
"""

import numpy as np

from cslsim.script import STREAM, compiled_params, parse_args, start

args = parse_args("streaming memcpy")

params = compiled_params(args.name)
n, h2d_color, d2h_color = (int(params[k]) for k in ("n", "MEMCPYH2D_DATA_1_ID", "MEMCPYD2H_DATA_1_ID"))
W = 2

rng = np.random.default_rng(8)
x = rng.standard_normal((W, n)).astype(np.float32)
expected = np.cumsum(x, axis=1, dtype=np.float32)

runner = start(args)

# In streaming mode the destination (or source) is the colour id, not a symbol.
# data_type is ignored: every element travels as one 32-bit wavelet.
runner.memcpy_h2d(h2d_color, x.ravel(), 0, 0, W, 1, n, **STREAM)

sums = np.zeros(W * n, dtype=np.float32)
runner.memcpy_d2h(sums, d2h_color, 0, 0, W, 1, n, **STREAM)
runner.stop()

sums = sums.reshape(W, n)
print("running sums:", sums)
np.testing.assert_allclose(sums, expected, rtol=1e-6, atol=1e-6)
print("SUCCESS!")
