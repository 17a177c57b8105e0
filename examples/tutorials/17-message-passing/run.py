#!/usr/bin/env cs_python
"""Tutorial 17 host program: every PE sums its slice of v and sends the sum to the
collector PE (the south-east corner) as a message; the collector files each sum under the
sender's index.
Usage: cs_python run.py --name out
"""

import numpy as np

from cslsim.script import COPY, compiled_params, parse_args, start

args = parse_args("message passing")

params = compiled_params(args.name)
w, h, n = (int(params[k]) for k in ("W", "H", "N"))

rng = np.random.default_rng(17)
# v[y, x, :] is the slice of PE (x, y).
v = rng.standard_normal((h, w, n)).astype(np.float32)
expected = np.zeros(w * h, dtype=np.float32)
for y in range(h):
    for x in range(w):
        s = np.float32(0.0)
        for i in range(n):  # the device's order of additions
            s = np.float32(s + v[y, x, i])
        expected[y * w + x] = s

runner = start(args)
runner.memcpy_h2d(runner.get_id("v"), v.ravel(), 0, 0, w, h, n, **COPY)
runner.launch("compute", nonblock=False)
sums = np.zeros(w * h, dtype=np.float32)
runner.memcpy_d2h(sums, runner.get_id("sums"), w - 1, h - 1, 1, 1, w * h, **COPY)
runner.stop()

print("partial sums (row-major by PE):", sums)
np.testing.assert_array_equal(sums, expected)
print("SUCCESS!")
