#!/usr/bin/env bash
# Tutorial 09 (pipeline with a FIFO): one PE at (4,1) of an 8x3 fabric, 32-element
# streams and a 32-element FIFO. Needs `cslc` and `cs_python` on PATH.
set -euo pipefail

cslc --arch=wse2 ./layout.csl --fabric-dims=8,3 --fabric-offsets=4,1 \
  --params=n:32,fifo_size:32,MEMCPYH2D_DATA_1_ID:2,MEMCPYD2H_DATA_1_ID:3 \
  --memcpy --channels=1 -o out
cs_python run.py --name out
