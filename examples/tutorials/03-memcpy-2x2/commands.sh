#!/usr/bin/env bash
# Tutorial 03 (memcpy on a 2x2 rectangle, 16-bit data): a 2x2 program rectangle at (4,1)
# needs a 9x4 fabric (memcpy uses the columns and rows around it). Needs `cslc` and
# `cs_python` on PATH (cargo build --release -p cslc; pip install ./runtime-sim/python).
set -euo pipefail

cslc --arch=wse2 ./layout.csl --fabric-dims=9,4 --fabric-offsets=4,1 \
  --params=N:6 --memcpy --channels=1 -o out
cs_python run.py --name out
