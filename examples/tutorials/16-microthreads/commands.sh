#!/usr/bin/env bash
# Tutorial 16 (microthreads): a 3x1 row at (4,1) needs a 10x3 fabric. Needs `cslc` and
# `cs_python` on PATH. WSE-3 names the microthreads; --arch=wse2 works too.
set -euo pipefail

cslc --arch=wse3 ./layout.csl --fabric-dims=10,3 --fabric-offsets=4,1 \
  --params=n:6 --memcpy --channels=1 -o out
cs_python run.py --name out
