#!/usr/bin/env cs_python
"""Tutorial 15 host program: running sums along a row whose PEs all use the same colours
thanks to colour swap. Usage: cs_python run.py --name out
"""

import numpy as np

from cslsim.script import COPY, compiled_params, parse_args, start

args = parse_args("colour swap")

params = compiled_params(args.name)
width, n = int(params["width"]), int(params["n"])

rng = np.random.default_rng(15)
v = rng.standard_normal((width, n)).astype(np.float32)
expected = np.cumsum(v, axis=0, dtype=np.float32)

runner = start(args)
runner.memcpy_h2d(runner.get_id("v"), v.ravel(), 0, 0, width, 1, n, **COPY)
runner.launch("compute", nonblock=False)
sums = np.zeros(width * n, dtype=np.float32)
runner.memcpy_d2h(sums, runner.get_id("sums"), 0, 0, width, 1, n, **COPY)
runner.stop()

sums = sums.reshape(width, n)
print("running sums (one row per PE):\n", sums)
np.testing.assert_allclose(sums, expected, rtol=1e-6, atol=1e-6)
print("SUCCESS!")
