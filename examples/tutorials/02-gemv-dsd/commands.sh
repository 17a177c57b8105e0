#!/usr/bin/env bash
# Tutorial 02 (GEMV with DSD operations): build the program for a 1x1 rectangle placed
# at (4,1) of an 8x3 fabric (room for the memcpy halo), with a 4x6 matrix, then run the
# host program on it. Needs `cslc` and `cs_python` on PATH
# (cargo build --release -p cslc; pip install ./runtime-sim/python).
set -euo pipefail

cslc --arch=wse2 ./layout.csl --fabric-dims=8,3 --fabric-offsets=4,1 \
  --params=M:4,N:6 --memcpy --channels=1 -o out
cs_python run.py --name out
