#!/usr/bin/env cs_python
"""Tutorial 10 host program: the middle PE deals x alternately east and west; check each
neighbour's hand. Usage: cs_python run.py --name out
"""

import numpy as np

from cslsim.script import COPY, compiled_params, parse_args, start

args = parse_args("switches")

n = int(compiled_params(args.name)["n"])

x = np.arange(1, n + 1, dtype=np.float32) * 1.5

runner = start(args)

runner.memcpy_h2d(runner.get_id("x"), x, 1, 0, 1, 1, n, **COPY)   # dealer only
runner.launch("deal", nonblock=False)

hands = np.zeros(3 * (n // 2), dtype=np.float32)
runner.memcpy_d2h(hands, runner.get_id("hand"), 0, 0, 3, 1, n // 2, **COPY)
runner.stop()

west, _, east = hands.reshape(3, n // 2)
print("east hand:", east)
print("west hand:", west)
# Switch position 0 (EAST) for even k, position 1 (WEST) for odd k.
np.testing.assert_array_equal(east, x[0::2])
np.testing.assert_array_equal(west, x[1::2])
print("SUCCESS!")
