#!/usr/bin/env cs_python
"""Tutorial 11 host program: two rounds of reset / data / done on the receiving PE.

Usage: cs_python run.py --name out
"""

import numpy as np

from cslsim.script import COPY, compiled_params, parse_args, start

args = parse_args("control wavelets and control tasks")

n = int(compiled_params(args.name)["n"])

runner = start(args)

rng = np.random.default_rng(11)
for round_no, tag in enumerate([0x1234, 0xBEEF], start=1):
    x = rng.integers(0, 1000, n, dtype=np.uint32)
    runner.memcpy_h2d(runner.get_id("x"), x, 0, 0, 1, 1, n, **COPY)
    runner.launch("send", np.uint16(tag), nonblock=False)
    result = np.zeros(4, dtype=np.uint32)
    runner.memcpy_d2h(result, runner.get_id("result"), 1, 0, 1, 1, 4, **COPY)
    print(f"round {round_no}: sum={result[0]} tag={result[1]:#x} resets={result[2]} count={result[3]}")
    # reset ran once per round and cleared the sum: only this round's data is counted.
    assert result[0] == x.sum(), "sum"
    assert result[1] == tag, "tag"
    assert result[2] == round_no, "reset count"
    assert result[3] == n, "data wavelets"
runner.stop()
print("SUCCESS!")
