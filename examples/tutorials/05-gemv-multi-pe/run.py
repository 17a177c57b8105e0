#!/usr/bin/env cs_python
"""Tutorial 05 host program: GEMV with the rows of A spread over a column of PEs.

Usage: cs_python run.py --name out
"""

import numpy as np

from cslsim.script import COPY, compiled_params, parse_args, start

args = parse_args("GEMV over a column of PEs")

params = compiled_params(args.name)
M, N, P = int(params["M"]), int(params["N"]), int(params["P"])
rows = M // P

rng = np.random.default_rng(5)
A = rng.standard_normal((M, N)).astype(np.float32)
x = rng.standard_normal(N).astype(np.float32)
b = rng.standard_normal(M).astype(np.float32)

runner = start(args)

# Region: column 0, rows 0..P-1 (w=1, h=P). In row-major order PE p's elements are the
# p-th run of `rows*N` values, which is exactly its block of rows of A.
runner.memcpy_h2d(runner.get_id("A"), A.ravel(), 0, 0, 1, P, rows * N, **COPY)
runner.memcpy_h2d(runner.get_id("b"), b, 0, 0, 1, P, rows, **COPY)
# Every PE needs all of x: colbcast sends the same vector to each PE of the column.
runner.memcpy_h2d_colbcast(runner.get_id("x"), x, 0, 0, 1, P, N, **COPY)

runner.launch("compute", nonblock=False)

y = np.zeros(M, dtype=np.float32)
runner.memcpy_d2h(y, runner.get_id("y"), 0, 0, 1, P, rows, **COPY)
runner.stop()

y_expected = A @ x + b   # the host reference
print("y (device)    =", y)
print("y (reference) =", y_expected)
np.testing.assert_allclose(y, y_expected, rtol=1e-5, atol=1e-6)
print("SUCCESS!")
