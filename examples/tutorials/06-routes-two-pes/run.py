#!/usr/bin/env cs_python
"""Tutorial 06 host program: the left PE sends its x to the right PE, which computes
y = x_right + x_left. Usage: cs_python run.py --name out
"""

import argparse
import json

import numpy as np

from cerebras.sdk.runtime.sdkruntimepybind import (  # pylint: disable=no-name-in-module
    MemcpyDataType,
    MemcpyOrder,
    SdkRuntime,
)

parser = argparse.ArgumentParser(description="routes between two PEs")
parser.add_argument("--name", default="out", help="directory written by cslc -o")
parser.add_argument("--cmaddr", help="IP:port of a CS system (omit to simulate)")
args = parser.parse_args()

with open(f"{args.name}/out.json", encoding="utf-8") as f:
    n = int(json.load(f)["params"]["n"])

rng = np.random.default_rng(6)
x = rng.standard_normal((2, n)).astype(np.float32)   # x[0]: left PE, x[1]: right PE
y_expected = x[1] + x[0]

runner = SdkRuntime(args.name, cmaddr=args.cmaddr)
runner.load()
runner.run()

copy = dict(streaming=False, data_type=MemcpyDataType.MEMCPY_32BIT,
            order=MemcpyOrder.ROW_MAJOR, nonblock=False)
runner.memcpy_h2d(runner.get_id("x"), x.ravel(), 0, 0, 2, 1, n, **copy)
runner.launch("compute", nonblock=False)

# Only the right PE (column 1) has a result.
y = np.zeros(n, dtype=np.float32)
runner.memcpy_d2h(y, runner.get_id("y"), 1, 0, 1, 1, n, **copy)
runner.stop()

print("y =", y)
np.testing.assert_array_equal(y, y_expected)
print("SUCCESS!")
