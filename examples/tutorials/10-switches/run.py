#!/usr/bin/env cs_python
"""Tutorial 10 host program: the middle PE deals x alternately east and west; check each
neighbour's hand. Usage: cs_python run.py --name out
"""

import argparse
import json

import numpy as np

from cerebras.sdk.runtime.sdkruntimepybind import (  # pylint: disable=no-name-in-module
    MemcpyDataType,
    MemcpyOrder,
    SdkRuntime,
)

parser = argparse.ArgumentParser(description="switches")
parser.add_argument("--name", default="out", help="directory written by cslc -o")
parser.add_argument("--cmaddr", help="IP:port of a CS system (omit to simulate)")
args = parser.parse_args()

with open(f"{args.name}/out.json", encoding="utf-8") as f:
    n = int(json.load(f)["params"]["n"])

x = np.arange(1, n + 1, dtype=np.float32) * 1.5

runner = SdkRuntime(args.name, cmaddr=args.cmaddr)
runner.load()
runner.run()

copy = dict(streaming=False, data_type=MemcpyDataType.MEMCPY_32BIT,
            order=MemcpyOrder.ROW_MAJOR, nonblock=False)
runner.memcpy_h2d(runner.get_id("x"), x, 1, 0, 1, 1, n, **copy)   # dealer only
runner.launch("deal", nonblock=False)

hands = np.zeros(3 * (n // 2), dtype=np.float32)
runner.memcpy_d2h(hands, runner.get_id("hand"), 0, 0, 3, 1, n // 2, **copy)
runner.stop()

west, _, east = hands.reshape(3, n // 2)
print("east hand:", east)
print("west hand:", west)
# Switch position 0 (EAST) for even k, position 1 (WEST) for odd k.
np.testing.assert_array_equal(east, x[0::2])
np.testing.assert_array_equal(west, x[1::2])
print("SUCCESS!")
