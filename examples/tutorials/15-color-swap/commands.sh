#!/usr/bin/env bash
# Tutorial 15 (colour swap, a WSE-2 feature): a 5x1 row at (4,1) needs a 12x3 fabric.
# Needs `cslc` and `cs_python` on PATH. With --arch=wse3 the layout uses alternating
# colours instead.
set -euo pipefail

cslc --arch=wse2 ./layout.csl --fabric-dims=12,3 --fabric-offsets=4,1 \
  --params=width:5,n:4 --memcpy --channels=1 -o out
cs_python run.py --name out
