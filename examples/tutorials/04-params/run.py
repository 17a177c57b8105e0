#!/usr/bin/env cs_python
"""Tutorial 04 host program: read the compile-time params back from out.json.

The program's shape (PEs, elements per PE, exponent) was fixed by `cslc --params`; the
host needs the same numbers to size its arrays, and cslc records them in out.json.
Usage: cs_python run.py --name out
"""

import numpy as np

from cslsim.script import COPY, parse_args, read_compile_data, start

args = parse_args("compile-time params")

# out.json lists the params given on the cslc command line, as strings. A param left at
# its default in layout.csl is not listed, so fall back to the same default here.
compile_data = read_compile_data(args.name)
params = compile_data["params"]
width = int(params.get("width", 3))
size = int(params.get("size", 8))
power = int(params.get("power", 3))
print(f"compiled with width={width}, size={size}, power={power}")

rng = np.random.default_rng(4)
x = rng.uniform(-2.0, 2.0, width * size).astype(np.float32)
y_expected = np.ones_like(x)
for _ in range(power):
    y_expected = y_expected * x

runner = start(args)

# The whole row at once: PE px gets x[px*size : (px+1)*size].
runner.memcpy_h2d(runner.get_id("x"), x, 0, 0, width, 1, size, **COPY)
runner.launch("compute", nonblock=False)

y = np.zeros(width * size, dtype=np.float32)
runner.memcpy_d2h(y, runner.get_id("y"), 0, 0, width, 1, size, **COPY)
index = np.zeros(width * size, dtype=np.int32)
runner.memcpy_d2h(index, runner.get_id("index"), 0, 0, width, 1, size, **COPY)
runner.stop()

np.testing.assert_array_equal(index, np.arange(width * size, dtype=np.int32))
np.testing.assert_allclose(y, y_expected, rtol=1e-6, atol=1e-6)
print("y =", y)
print("SUCCESS!")
