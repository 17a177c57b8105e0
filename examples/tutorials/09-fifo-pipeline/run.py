#!/usr/bin/env cs_python
"""Tutorial 09 host program: stream x through the PE's two-stage pipeline, get 2x + 1.

Usage: cs_python run.py --name out
"""

import numpy as np

from cslsim.script import STREAM, compiled_params, parse_args, start

args = parse_args("pipeline with a FIFO")

params = compiled_params(args.name)
n = int(params["n"])
h2d_color = int(params["MEMCPYH2D_DATA_1_ID"])
d2h_color = int(params["MEMCPYD2H_DATA_1_ID"])

rng = np.random.default_rng(9)
x = rng.standard_normal(n).astype(np.float32)
expected = 2.0 * x + 1.0

runner = start(args)

# Host commands run one after the other: this H2D must be fully absorbed by the PE (its
# FIFO and queues) before the D2H below can start draining the results.
runner.memcpy_h2d(h2d_color, x, 0, 0, 1, 1, n, **STREAM)
y = np.zeros(n, dtype=np.float32)
runner.memcpy_d2h(y, d2h_color, 0, 0, 1, 1, n, **STREAM)
runner.stop()

print("y =", y)
np.testing.assert_allclose(y, expected, rtol=1e-6, atol=1e-6)
print("SUCCESS!")
