#!/usr/bin/env bash
# Tutorial 6: a vector kernel with forall, against the same kernel as scalar loops.
set -euo pipefail
N=4
L=64
python3 make_input.py "$N" "$L"
for SCALAR in 0 1; do
  echo "== SCALAR=$SCALAR"
  paint kernel.paint N="$N" L="$L" SCALAR="$SCALAR" arch=sdr out=kernel$SCALAR.obj map=kernel.map asm=kernel$SCALAR.asm
  miset image=kernel$SCALAR.obj out=kernel$SCALAR.img map=kernel.map symbol=row.x order="y x _word" data=x.bin
  miset image=kernel$SCALAR.img out=kernel$SCALAR.img map=kernel.map symbol=row.y order="y x _word" data=y.bin
  simfabric image=kernel$SCALAR.img cycles=100000
  miget image=kernel$SCALAR-sim.core map=kernel.map symbol=row.y order="y x _word" data=y_out.bin
  miget image=kernel$SCALAR-sim.core map=kernel.map symbol=row.p order="y x _word" data=p.bin
  python3 check.py "$N" "$L"
done
echo "== DSD operations in the forall version:"
grep -o "dsd_op op=[a-z0-9]*" kernel0.asm | uniq -c
