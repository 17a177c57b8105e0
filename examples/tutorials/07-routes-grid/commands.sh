#!/usr/bin/env bash
# Tutorial 07 (routes on a grid): a 4x3 grid of PEs at (4,1) needs an 11x5 fabric.
# Needs `cslc` and `cs_python` on PATH. Replace wse2 by wse3 for the other architecture.
set -euo pipefail

cslc --arch=wse2 ./layout.csl --fabric-dims=11,5 --fabric-offsets=4,1 \
  --params=M:6,N:8,Pw:4,Ph:3 --memcpy --channels=1 -o out
cs_python run.py --name out
