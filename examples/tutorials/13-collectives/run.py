#!/usr/bin/env cs_python
"""Tutorial 13 host program: row broadcast, row reduction, column reduction.

Usage: cs_python run.py --name out [--root-x COLUMN] [--root-y ROW]
"""

import numpy as np

from cslsim.script import COPY, arg_parser, compiled_params, start

parser = arg_parser("collectives over rows and columns")
parser.add_argument("--root-x", type=int, default=1, help="root column")
parser.add_argument("--root-y", type=int, default=0, help="root row")
args = parser.parse_args()

params = compiled_params(args.name)
Pw, Ph, n = int(params["Pw"]), int(params["Ph"]), int(params["n"])
root_x, root_y = args.root_x, args.root_y

rng = np.random.default_rng(13)
# One vector per row, on the root column.
vectors = rng.integers(0, 100, (Ph, n), dtype=np.uint32)

# PE (x, y) contributes vectors[y] * (x + 1) + y; row y sums over x; the column sums
# over y.
x_scale = np.arange(1, Pw + 1, dtype=np.float32).sum()
row_totals = vectors.astype(np.float32) * x_scale + (Pw * np.arange(Ph, dtype=np.float32))[:, None]
grand_expected = row_totals.sum(axis=0)

runner = start(args)

runner.memcpy_h2d(runner.get_id("buf"), vectors.ravel(), root_x, 0, 1, Ph, n, **COPY)
runner.launch("compute", np.uint16(root_x), np.uint16(root_y), nonblock=False)

totals = np.zeros(Ph * n, dtype=np.float32)
runner.memcpy_d2h(totals, runner.get_id("total"), root_x, 0, 1, Ph, n, **COPY)
grand = np.zeros(n, dtype=np.float32)
runner.memcpy_d2h(grand, runner.get_id("grand"), root_x, root_y, 1, 1, n, **COPY)
runner.stop()

print("row totals:\n", totals.reshape(Ph, n))
print("grand total:", grand)
np.testing.assert_allclose(totals.reshape(Ph, n), row_totals, rtol=1e-6)
np.testing.assert_allclose(grand, grand_expected, rtol=1e-6)
print("SUCCESS!")
