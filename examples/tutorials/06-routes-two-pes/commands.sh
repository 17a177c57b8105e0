#!/usr/bin/env bash
# Tutorial 06 (routes between two PEs): a 2x1 rectangle at (4,1) needs a 9x3 fabric.
# Needs `cslc` and `cs_python` on PATH. Replace wse2 by wse3 for the other architecture.
set -euo pipefail

cslc --arch=wse2 ./layout.csl --fabric-dims=9,3 --fabric-offsets=4,1 \
  --params=n:6 --memcpy --channels=1 -o out
cs_python run.py --name out
