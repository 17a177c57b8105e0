#!/usr/bin/env cs_python
"""Tutorial 07 host program: GEMV on a 2-D grid of PEs. The host sends each PE its tile
of A, the top row its blocks of x, the east column its blocks of b, and reads y from the
east column. Usage: cs_python run.py --name out
"""

import argparse
import json

import numpy as np

from cerebras.sdk.runtime.sdkruntimepybind import (  # pylint: disable=no-name-in-module
    MemcpyDataType,
    MemcpyOrder,
    SdkRuntime,
)

parser = argparse.ArgumentParser(description="GEMV on a grid of PEs")
parser.add_argument("--name", default="out", help="directory written by cslc -o")
parser.add_argument("--cmaddr", help="IP:port of a CS system (omit to simulate)")
args = parser.parse_args()

with open(f"{args.name}/out.json", encoding="utf-8") as f:
    params = json.load(f)["params"]
M, N = int(params["M"]), int(params["N"])
Pw, Ph = int(params["Pw"]), int(params["Ph"])
Mt, Nt = M // Ph, N // Pw

rng = np.random.default_rng(7)
A = rng.standard_normal((M, N)).astype(np.float32)
x = rng.standard_normal(N).astype(np.float32)
b = rng.standard_normal(M).astype(np.float32)
y_expected = A @ x + b

runner = SdkRuntime(args.name, cmaddr=args.cmaddr)
runner.load()
runner.run()

copy = dict(streaming=False, data_type=MemcpyDataType.MEMCPY_32BIT,
            order=MemcpyOrder.ROW_MAJOR, nonblock=False)

# Row-major host order is [PE row][PE column][element]; PE (px, py) must get tile
# A[py*Mt:(py+1)*Mt, px*Nt:(px+1)*Nt] flattened row by row.
tiles = A.reshape(Ph, Mt, Pw, Nt).transpose(0, 2, 1, 3)
runner.memcpy_h2d(runner.get_id("A"), tiles.ravel(), 0, 0, Pw, Ph, Mt * Nt, **copy)
# x to the top row only (the PEs below get it over the fabric).
runner.memcpy_h2d(runner.get_id("x"), x, 0, 0, Pw, 1, Nt, **copy)
# b to the east column only.
runner.memcpy_h2d(runner.get_id("b"), b, Pw - 1, 0, 1, Ph, Mt, **copy)

runner.launch("compute", nonblock=False)

y = np.zeros(M, dtype=np.float32)
runner.memcpy_d2h(y, runner.get_id("y"), Pw - 1, 0, 1, Ph, Mt, **copy)
runner.stop()

print("y (device)    =", y)
print("y (reference) =", y_expected)
np.testing.assert_allclose(y, y_expected, rtol=1e-5, atol=1e-5)
print("SUCCESS!")
