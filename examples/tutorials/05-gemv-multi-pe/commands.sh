#!/usr/bin/env bash
# Tutorial 05 (GEMV split over a column of PEs): a 1x4 rectangle at (4,1) needs an 8x6
# fabric. Needs `cslc` and `cs_python` on PATH.
set -euo pipefail

cslc --arch=wse2 ./layout.csl --fabric-dims=8,6 --fabric-offsets=4,1 \
  --params=M:8,N:5,P:4 --memcpy --channels=1 -o out
cs_python run.py --name out
