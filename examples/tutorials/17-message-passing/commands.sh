#!/usr/bin/env bash
# Tutorial 17 (message passing, WSE-3 only): a 4x3 grid at (4,1) needs an 11x5 fabric.
# Needs `cslc` and `cs_python` on PATH.
set -euo pipefail

cslc --arch=wse3 ./layout.csl --fabric-dims=11,5 --fabric-offsets=4,1 \
  --params=W:4,H:3,N:8 --memcpy --channels=1 -o out
cs_python run.py --name out
