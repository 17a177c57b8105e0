#!/usr/bin/env cs_python
"""Tutorial 07 host program: GEMV on a 2-D grid of PEs. The host sends each PE its tile
of A, the top row its blocks of x, the east column its blocks of b, and reads y from the
east column. Usage: cs_python run.py --name out
"""

import numpy as np

from cslsim.script import COPY, compiled_params, parse_args, start

args = parse_args("GEMV on a grid of PEs")

params = compiled_params(args.name)
M, N = int(params["M"]), int(params["N"])
Pw, Ph = int(params["Pw"]), int(params["Ph"])
Mt, Nt = M // Ph, N // Pw

rng = np.random.default_rng(7)
A = rng.standard_normal((M, N)).astype(np.float32)
x = rng.standard_normal(N).astype(np.float32)
b = rng.standard_normal(M).astype(np.float32)
y_expected = A @ x + b

# Row-major host order is [PE row][PE column][element]; PE (px, py) must get tile
# A[py*Mt:(py+1)*Mt, px*Nt:(px+1)*Nt] flattened row by row.
tiles = A.reshape(Ph, Mt, Pw, Nt).transpose(0, 2, 1, 3)

runner = start(args)
runner.memcpy_h2d(runner.get_id("A"), tiles.ravel(), 0, 0, Pw, Ph, Mt * Nt, **COPY)
# x to the top row only (the PEs below get it over the fabric).
runner.memcpy_h2d(runner.get_id("x"), x, 0, 0, Pw, 1, Nt, **COPY)
# b to the east column only.
runner.memcpy_h2d(runner.get_id("b"), b, Pw - 1, 0, 1, Ph, Mt, **COPY)

runner.launch("compute", nonblock=False)

y = np.zeros(M, dtype=np.float32)
runner.memcpy_d2h(y, runner.get_id("y"), Pw - 1, 0, 1, Ph, Mt, **COPY)
runner.stop()

print("y (device)    =", y)
print("y (reference) =", y_expected)
np.testing.assert_allclose(y, y_expected, rtol=1e-5, atol=1e-5)
print("SUCCESS!")
