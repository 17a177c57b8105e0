#!/usr/bin/env bash
# Tutorial 2: every worked conversion of the Tungsten cast reference, on the simulator.
set -euo pipefail
paint casts.paint arch=sdr out=casts.obj map=casts.map
simfabric image=casts.obj cycles=10000
for s in r_xp r_fold r_hp r_cmp r_u32 r_sp; do
  miget image=casts-sim.core map=casts.map symbol=east.$s order="y x _word" data=$s.bin
done
python3 check.py
