#!/usr/bin/env bash
# Tutorial 14 (<debug> and <simprint>): a 2x1 row at (4,1) on a 9x3 fabric. Needs `cslc`
# and `cs_python` on PATH. Replace wse2 by wse3 for the other architecture.
set -euo pipefail

cslc --arch=wse2 ./layout.csl --fabric-dims=9,3 --fabric-offsets=4,1 \
  --params=iterations:6 --memcpy --channels=1 -o out
cs_python run.py --name out

# The <simprint> lines: the cslsim command-line runner prints the simulator log.
# Without the host's inputs, each PE computes sqrt(2.0), the initial value of `a`.
cslsim out/out.elf --launch compute
