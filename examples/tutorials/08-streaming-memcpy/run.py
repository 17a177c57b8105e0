#!/usr/bin/env cs_python
"""Tutorial 08 host program: stream n values to each PE, stream back their running sums.

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

parser = argparse.ArgumentParser(description="streaming memcpy")
parser.add_argument("--name", default="out", help="directory written by cslc -o")
parser.add_argument("--cmaddr", help="IP:port of a CS system (omit to simulate)")
args = parser.parse_args()

with open(f"{args.name}/out.json", encoding="utf-8") as f:
    params = json.load(f)["params"]
n = int(params["n"])
h2d_color = int(params["MEMCPYH2D_DATA_1_ID"])
d2h_color = int(params["MEMCPYD2H_DATA_1_ID"])
W = 2

rng = np.random.default_rng(8)
x = rng.standard_normal((W, n)).astype(np.float32)
expected = np.cumsum(x, axis=1, dtype=np.float32)

runner = SdkRuntime(args.name, cmaddr=args.cmaddr)
runner.load()
runner.run()

# In streaming mode the destination (or source) is the colour id, not a symbol.
# data_type is ignored: every element travels as one 32-bit wavelet.
stream = dict(streaming=True, data_type=MemcpyDataType.MEMCPY_32BIT,
              order=MemcpyOrder.ROW_MAJOR, nonblock=False)
runner.memcpy_h2d(h2d_color, x.ravel(), 0, 0, W, 1, n, **stream)

sums = np.zeros(W * n, dtype=np.float32)
runner.memcpy_d2h(sums, d2h_color, 0, 0, W, 1, n, **stream)
runner.stop()

sums = sums.reshape(W, n)
print("running sums:", sums)
np.testing.assert_allclose(sums, expected, rtol=1e-6, atol=1e-6)
print("SUCCESS!")
