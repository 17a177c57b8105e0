#!/usr/bin/env bash
# Tutorial 08 (streaming memcpy): a 2x1 rectangle at (4,1) on a 9x3 fabric; H2D stream on
# colour 2, D2H stream on colour 3. Needs `cslc` and `cs_python` on PATH.
set -euo pipefail

cslc --arch=wse2 ./layout.csl --fabric-dims=9,3 --fabric-offsets=4,1 \
  --params=n:8,MEMCPYH2D_DATA_1_ID:2,MEMCPYD2H_DATA_1_ID:3 \
  --memcpy --channels=1 -o out
cs_python run.py --name out
