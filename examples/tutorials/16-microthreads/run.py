#!/usr/bin/env cs_python
"""Tutorial 16 host program: the middle PE receives from both neighbours at once and
computes v_west + v_east - 2 v_middle (a discrete second difference).
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

parser = argparse.ArgumentParser(description="microthreads")
parser.add_argument("--name", default="out", help="directory written by cslc -o")
parser.add_argument("--cmaddr", help="IP:port of a CS system (omit to simulate)")
args = parser.parse_args()

with open(f"{args.name}/out.json", encoding="utf-8") as f:
    n = int(json.load(f)["params"]["n"])

rng = np.random.default_rng(16)
v = rng.standard_normal((3, n)).astype(np.float32)
expected = (np.float32(-2.0) * v[1] + v[0]) + v[2]

runner = SdkRuntime(args.name, cmaddr=args.cmaddr)
runner.load()
runner.run()
copy = dict(streaming=False, data_type=MemcpyDataType.MEMCPY_32BIT,
            order=MemcpyOrder.ROW_MAJOR, nonblock=False)
runner.memcpy_h2d(runner.get_id("v"), v.ravel(), 0, 0, 3, 1, n, **copy)
runner.launch("compute", nonblock=False)
result = np.zeros(n, dtype=np.float32)
runner.memcpy_d2h(result, runner.get_id("result"), 1, 0, 1, 1, n, **copy)
runner.stop()

print("second difference:", result)
np.testing.assert_allclose(result, expected, rtol=1e-6, atol=1e-6)
print("SUCCESS!")
