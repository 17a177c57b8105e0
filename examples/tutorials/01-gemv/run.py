#!/usr/bin/env cs_python
"""Tutorial 01 host program: y = A·x + b on one PE.

Copies A, x and b to the PE, launches `compute`, copies y back and checks it against
numpy. Usage: cs_python run.py --name out   (out = the cslc -o directory)
"""

import argparse
import json

import numpy as np

from cerebras.sdk.runtime.sdkruntimepybind import (  # pylint: disable=no-name-in-module
    MemcpyDataType,
    MemcpyOrder,
    SdkRuntime,
)

parser = argparse.ArgumentParser(description="GEMV on a single PE")
parser.add_argument("--name", default="out", help="directory written by cslc -o")
parser.add_argument("--cmaddr", help="IP:port of a CS system (omit to simulate)")
args = parser.parse_args()

# The matrix size was fixed at compile time (--params=M:..,N:..); cslc records it.
with open(f"{args.name}/out.json", encoding="utf-8") as f:
    params = json.load(f)["params"]
M = int(params["M"])
N = int(params["N"])

# Inputs and the host reference.
rng = np.random.default_rng(2024)
A = rng.standard_normal((M, N)).astype(np.float32)
x = rng.standard_normal(N).astype(np.float32)
b = rng.standard_normal(M).astype(np.float32)
y_expected = A @ x + b

runner = SdkRuntime(args.name, cmaddr=args.cmaddr)
runner.load()
runner.run()

# One PE at (0, 0) of the program rectangle; all arrays are 32-bit, row-major.
copy = dict(streaming=False, data_type=MemcpyDataType.MEMCPY_32BIT,
            order=MemcpyOrder.ROW_MAJOR, nonblock=False)
runner.memcpy_h2d(runner.get_id("A"), A.ravel(), 0, 0, 1, 1, M * N, **copy)
runner.memcpy_h2d(runner.get_id("x"), x, 0, 0, 1, 1, N, **copy)
runner.memcpy_h2d(runner.get_id("b"), b, 0, 0, 1, 1, M, **copy)

runner.launch("compute", nonblock=False)

y = np.zeros(M, dtype=np.float32)
runner.memcpy_d2h(y, runner.get_id("y"), 0, 0, 1, 1, M, **copy)

runner.stop()

print("y (device)    =", y)
print("y (reference) =", y_expected)
np.testing.assert_allclose(y, y_expected, rtol=1e-5, atol=1e-6)
print("SUCCESS!")
