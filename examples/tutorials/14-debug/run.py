#!/usr/bin/env cs_python
"""Tutorial 14 host program: run Newton's method on two PEs, then read their trace
buffers with debug_util. Usage: cs_python run.py --name out
"""

import math

import numpy as np

from cerebras.sdk.debug.debug_util import debug_util
from cslsim.script import COPY, parse_args, read_compile_data, start

args = parse_args("<debug> and <simprint>")

compile_data = read_compile_data(args.name)
iterations = int(compile_data["params"].get("iterations", 6))
# debug_util takes absolute fabric coordinates: the rectangle starts at the offsets.
ox, oy = compile_data["offsets"]["x"], compile_data["offsets"]["y"]

a = np.array([2.0, 30.0], dtype=np.float32)

runner = start(args)
runner.memcpy_h2d(runner.get_id("a"), a, 0, 0, 2, 1, 1, **COPY)
runner.launch("compute", nonblock=False)
root = np.zeros(2, dtype=np.float32)
runner.memcpy_d2h(root, runner.get_id("root"), 0, 0, 2, 1, 1, **COPY)
runner.stop()

dbg = debug_util(args.name)
for px in range(2):
    records = dbg.read_trace(ox + px, oy, "newton")
    print(f"PE ({px},0) trace:", records)
    # "PE", x, start time, (k, r) per iteration, converged flag, end time (times in cycles).
    assert records[0] == "PE" and records[1] == px
    start, end = records[2], records[-1]
    assert end > start
    iterates = records[3:3 + 2 * iterations]
    assert iterates[0::2] == list(range(iterations))
    assert math.isclose(iterates[-1], math.sqrt(a[px]), rel_tol=1e-6)
    assert records[3 + 2 * iterations] is True
    print(f"  {end - start} cycles between the two timestamps")

np.testing.assert_allclose(root, np.sqrt(a), rtol=1e-6)
print("SUCCESS!")
