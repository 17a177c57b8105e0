#!/usr/bin/env cs_python
"""Tutorial 09 host program: stream x through the PE's two-stage pipeline, get 2x + 1.

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

parser = argparse.ArgumentParser(description="pipeline with a FIFO")
parser.add_argument("--name", default="out", help="directory written by cslc -o")
parser.add_argument("--cmaddr", help="IP:port of a CS system (omit to simulate)")
args = parser.parse_args()

with open(f"{args.name}/out.json", encoding="utf-8") as f:
    params = json.load(f)["params"]
n = int(params["n"])
h2d_color = int(params["MEMCPYH2D_DATA_1_ID"])
d2h_color = int(params["MEMCPYD2H_DATA_1_ID"])

rng = np.random.default_rng(9)
x = rng.standard_normal(n).astype(np.float32)
expected = 2.0 * x + 1.0

runner = SdkRuntime(args.name, cmaddr=args.cmaddr)
runner.load()
runner.run()

stream = dict(streaming=True, data_type=MemcpyDataType.MEMCPY_32BIT,
              order=MemcpyOrder.ROW_MAJOR, nonblock=False)
# Host commands run one after the other: this H2D must be fully absorbed by the PE (its
# FIFO and queues) before the D2H below can start draining the results.
runner.memcpy_h2d(h2d_color, x, 0, 0, 1, 1, n, **stream)
y = np.zeros(n, dtype=np.float32)
runner.memcpy_d2h(y, d2h_color, 0, 0, 1, 1, n, **stream)
runner.stop()

print("y =", y)
np.testing.assert_allclose(y, expected, rtol=1e-6, atol=1e-6)
print("SUCCESS!")
