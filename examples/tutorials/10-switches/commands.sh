#!/usr/bin/env bash
# Tutorial 10 (switches): a 3x1 row at (4,1) needs a 10x3 fabric. Needs `cslc` and
# `cs_python` on PATH. Replace wse2 by wse3 for the other architecture.
set -euo pipefail

cslc --arch=wse2 ./layout.csl --fabric-dims=10,3 --fabric-offsets=4,1 \
  --params=n:8 --memcpy --channels=1 -o out
cs_python run.py --name out
