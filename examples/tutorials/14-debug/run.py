#!/usr/bin/env cs_python
"""Tutorial 14 host program: run Newton's method on two PEs, then read their trace
buffers with debug_util. Usage: cs_python run.py --name out
"""

import argparse
import json
import math

import numpy as np

from cerebras.sdk.debug.debug_util import debug_util
from cerebras.sdk.runtime.sdkruntimepybind import (  # pylint: disable=no-name-in-module
    MemcpyDataType,
    MemcpyOrder,
    SdkRuntime,
)
from debug_trace import read_trace

parser = argparse.ArgumentParser(description="<debug> and <simprint>")
parser.add_argument("--name", default="out", help="directory written by cslc -o")
parser.add_argument("--cmaddr", help="IP:port of a CS system (omit to simulate)")
args = parser.parse_args()

with open(f"{args.name}/out.json", encoding="utf-8") as f:
    compile_data = json.load(f)
iterations = int(compile_data["params"].get("iterations", 6))
# debug_util takes absolute fabric coordinates: the rectangle starts at the offsets.
ox, oy = compile_data["offsets"]["x"], compile_data["offsets"]["y"]

a = np.array([2.0, 30.0], dtype=np.float32)

runner = SdkRuntime(args.name, cmaddr=args.cmaddr)
runner.load()
runner.run()
copy = dict(streaming=False, data_type=MemcpyDataType.MEMCPY_32BIT,
            order=MemcpyOrder.ROW_MAJOR, nonblock=False)
runner.memcpy_h2d(runner.get_id("a"), a, 0, 0, 2, 1, 1, **copy)
runner.launch("compute", nonblock=False)
root = np.zeros(2, dtype=np.float32)
runner.memcpy_d2h(root, runner.get_id("root"), 0, 0, 2, 1, 1, **copy)
runner.stop()

dbg = debug_util(args.name)
for px in range(2):
    records = read_trace(dbg, ox + px, oy, "newton")
    print(f"PE ({px},0) trace:", records)
    # "PE", x, start time, (k, r) per iteration, converged flag, end time.
    assert records[0] == "PE" and records[1] == px
    start, end = records[2], records[-1]
    assert start[0] == "timestamp" and end[0] == "timestamp" and end[1] > start[1]
    iterates = records[3:3 + 2 * iterations]
    assert iterates[0::2] == list(range(iterations))
    assert math.isclose(iterates[-1], math.sqrt(a[px]), rel_tol=1e-6)
    assert records[3 + 2 * iterations] is True
    print(f"  {end[1] - start[1]} cycles between the two timestamps")

np.testing.assert_allclose(root, np.sqrt(a), rtol=1e-6)
print("SUCCESS!")
