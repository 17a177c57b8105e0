#!/usr/bin/env cs_python
"""Tutorial 16 host program: the middle PE receives from both neighbours at once and
computes v_west + v_east - 2 v_middle (a discrete second difference).
Usage: cs_python run.py --name out
"""

import numpy as np

from cslsim.script import COPY, compiled_params, parse_args, start

args = parse_args("microthreads")

n = int(compiled_params(args.name)["n"])

rng = np.random.default_rng(16)
v = rng.standard_normal((3, n)).astype(np.float32)
expected = (np.float32(-2.0) * v[1] + v[0]) + v[2]

runner = start(args)
runner.memcpy_h2d(runner.get_id("v"), v.ravel(), 0, 0, 3, 1, n, **COPY)
runner.launch("compute", nonblock=False)
result = np.zeros(n, dtype=np.float32)
runner.memcpy_d2h(result, runner.get_id("result"), 1, 0, 1, 1, n, **COPY)
runner.stop()

print("second difference:", result)
np.testing.assert_allclose(result, expected, rtol=1e-6, atol=1e-6)
print("SUCCESS!")
