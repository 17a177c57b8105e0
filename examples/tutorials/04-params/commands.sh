#!/usr/bin/env bash
# Tutorial 04 (compile-time params): four PEs of five elements each, y = x^2. The row of
# 4 PEs at (4,1) needs an 11x3 fabric. Needs `cslc` and `cs_python` on PATH.
set -euo pipefail

cslc --arch=wse2 ./layout.csl --fabric-dims=11,3 --fabric-offsets=4,1 \
  --params=width:4,size:5,power:2 --memcpy --channels=1 -o out
cs_python run.py --name out
