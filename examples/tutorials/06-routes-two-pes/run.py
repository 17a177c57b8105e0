#!/usr/bin/env cs_python
"""Tutorial 06 host program: the left PE sends its x to the right PE, which computes
y = x_right + x_left. Usage: cs_python run.py --name out
"""

import numpy as np

from cslsim.script import COPY, compiled_params, parse_args, start

args = parse_args("routes between two PEs")

n = int(compiled_params(args.name)["n"])

rng = np.random.default_rng(6)
x = rng.standard_normal((2, n)).astype(np.float32)   # x[0]: left PE, x[1]: right PE
y_expected = x[1] + x[0]

runner = start(args)

runner.memcpy_h2d(runner.get_id("x"), x.ravel(), 0, 0, 2, 1, n, **COPY)
runner.launch("compute", nonblock=False)

# Only the right PE (column 1) has a result.
y = np.zeros(n, dtype=np.float32)
runner.memcpy_d2h(y, runner.get_id("y"), 1, 0, 1, 1, n, **COPY)
runner.stop()

print("y =", y)
np.testing.assert_array_equal(y, y_expected)
print("SUCCESS!")
