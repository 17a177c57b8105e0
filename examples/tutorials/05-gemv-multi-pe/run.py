#!/usr/bin/env cs_python
"""Tutorial 05 host program: GEMV with the rows of A spread over a column of PEs.

Usage: cs_python run.py --name out
"""

import argparse
import json

import numpy as np

from cerebras.sdk.runtime.sdkruntimepybind import (  # pylint: disable=no-name-in-module
    MemcpyDataType,
    MemcpyOrder,
    SdkRuntime,
)

parser = argparse.ArgumentParser(description="GEMV over a column of PEs")
parser.add_argument("--name", default="out", help="directory written by cslc -o")
parser.add_argument("--cmaddr", help="IP:port of a CS system (omit to simulate)")
args = parser.parse_args()

with open(f"{args.name}/out.json", encoding="utf-8") as f:
    params = json.load(f)["params"]
M, N, P = int(params["M"]), int(params["N"]), int(params["P"])
rows = M // P

rng = np.random.default_rng(5)
A = rng.standard_normal((M, N)).astype(np.float32)
x = rng.standard_normal(N).astype(np.float32)
b = rng.standard_normal(M).astype(np.float32)
y_expected = A @ x + b

runner = SdkRuntime(args.name, cmaddr=args.cmaddr)
runner.load()
runner.run()

copy = dict(streaming=False, data_type=MemcpyDataType.MEMCPY_32BIT,
            order=MemcpyOrder.ROW_MAJOR, nonblock=False)
# Region: column 0, rows 0..P-1 (w=1, h=P). In row-major order PE p's elements are the
# p-th run of `rows*N` values, which is exactly its block of rows of A.
runner.memcpy_h2d(runner.get_id("A"), A.ravel(), 0, 0, 1, P, rows * N, **copy)
runner.memcpy_h2d(runner.get_id("b"), b, 0, 0, 1, P, rows, **copy)
# Every PE needs all of x: colbcast sends the same vector to each PE of the column.
runner.memcpy_h2d_colbcast(runner.get_id("x"), x, 0, 0, 1, P, N, **copy)

runner.launch("compute", nonblock=False)

y = np.zeros(M, dtype=np.float32)
runner.memcpy_d2h(y, runner.get_id("y"), 0, 0, 1, P, rows, **copy)
runner.stop()

print("y (device)    =", y)
print("y (reference) =", y_expected)
np.testing.assert_allclose(y, y_expected, rtol=1e-5, atol=1e-6)
print("SUCCESS!")
