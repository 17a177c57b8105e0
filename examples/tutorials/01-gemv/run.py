#!/usr/bin/env cs_python
"""Tutorial 01 host program: y = A·x + b on one PE.

Copies A, x and b to the PE, launches `compute`, copies y back and checks it against
numpy. Usage: cs_python run.py --name out   (out = the cslc -o directory)

`cslsim.script` holds what every host script repeats (the --name/--cmaddr command line,
reading out.json, starting the runtime, the usual memcpy keyword arguments).
"""

import numpy as np

from cslsim.script import COPY, compiled_params, parse_args, start

args = parse_args("GEMV on a single PE")

# The matrix size was fixed at compile time (--params=M:..,N:..); cslc records it.
params = compiled_params(args.name)
M = int(params["M"])
N = int(params["N"])

# Inputs and the host reference.
rng = np.random.default_rng(2024)
A = rng.standard_normal((M, N)).astype(np.float32)
x = rng.standard_normal(N).astype(np.float32)
b = rng.standard_normal(M).astype(np.float32)
y_expected = A @ x + b

runner = start(args)

# One PE at (0, 0) of the program rectangle; all arrays are 32-bit, row-major (COPY).
runner.memcpy_h2d(runner.get_id("A"), A.ravel(), 0, 0, 1, 1, M * N, **COPY)
runner.memcpy_h2d(runner.get_id("x"), x, 0, 0, 1, 1, N, **COPY)
runner.memcpy_h2d(runner.get_id("b"), b, 0, 0, 1, 1, M, **COPY)

runner.launch("compute", nonblock=False)

y = np.zeros(M, dtype=np.float32)
runner.memcpy_d2h(y, runner.get_id("y"), 0, 0, 1, 1, M, **COPY)

runner.stop()

print("y (device)    =", y)
print("y (reference) =", y_expected)
np.testing.assert_allclose(y, y_expected, rtol=1e-5, atol=1e-6)
print("SUCCESS!")
