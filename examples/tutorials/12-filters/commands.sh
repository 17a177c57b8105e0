#!/usr/bin/env bash
# Tutorial 12 (filters): one sender and three receivers in a 4x1 row at (4,1) of an 11x3
# fabric. Needs `cslc` and `cs_python` on PATH.
set -euo pipefail

cslc --arch=wse2 ./layout.csl --fabric-dims=11,3 --fabric-offsets=4,1 \
  --params=P:3,k:4 --memcpy --channels=1 -o out
cs_python run.py --name out
