#!/usr/bin/env bash
# Tutorial 13 (collectives): a 4x3 grid at (4,1) needs an 11x5 fabric. Needs `cslc` and
# `cs_python` on PATH. Replace wse2 by wse3 for the other architecture.
set -euo pipefail

cslc --arch=wse2 ./layout.csl --fabric-dims=11,5 --fabric-offsets=4,1 \
  --params=Pw:4,Ph:3,n:5 --memcpy --channels=1 -o out
cs_python run.py --name out
