#!/usr/bin/env cs_python
"""Tutorial 15 host program: running sums along a row whose PEs all use the same colours
thanks to colour swap. Usage: cs_python run.py --name out
"""

import argparse
import json

import numpy as np

from cerebras.sdk.runtime.sdkruntimepybind import (  # pylint: disable=no-name-in-module
    MemcpyDataType,
    MemcpyOrder,
    SdkRuntime,
)

parser = argparse.ArgumentParser(description="colour swap")
parser.add_argument("--name", default="out", help="directory written by cslc -o")
parser.add_argument("--cmaddr", help="IP:port of a CS system (omit to simulate)")
args = parser.parse_args()

with open(f"{args.name}/out.json", encoding="utf-8") as f:
    compile_data = json.load(f)
params = compile_data["params"]
width, n = int(params["width"]), int(params["n"])

rng = np.random.default_rng(15)
v = rng.standard_normal((width, n)).astype(np.float32)
expected = np.cumsum(v, axis=0, dtype=np.float32)

runner = SdkRuntime(args.name, cmaddr=args.cmaddr)
runner.load()
runner.run()
copy = dict(streaming=False, data_type=MemcpyDataType.MEMCPY_32BIT,
            order=MemcpyOrder.ROW_MAJOR, nonblock=False)
runner.memcpy_h2d(runner.get_id("v"), v.ravel(), 0, 0, width, 1, n, **copy)
runner.launch("compute", nonblock=False)
sums = np.zeros(width * n, dtype=np.float32)
runner.memcpy_d2h(sums, runner.get_id("sums"), 0, 0, width, 1, n, **copy)
runner.stop()

sums = sums.reshape(width, n)
print("running sums (one row per PE):\n", sums)
np.testing.assert_allclose(sums, expected, rtol=1e-6, atol=1e-6)
print("SUCCESS!")
