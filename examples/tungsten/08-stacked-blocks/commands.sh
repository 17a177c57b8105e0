#!/usr/bin/env bash
# Tutorial 8: a grid of relays built by stacking copies of one tile, read whole and in pieces.
set -euo pipefail
N=5
ROWS=3
python3 make_input.py "$N" "$ROWS" val.bin
paint grid.paint N="$N" ROWS="$ROWS" arch=sdr out=grid.obj map=grid.map
miset image=grid.obj out=grid.img map=grid.map symbol=grid.val order="y x _word" data=val.bin
simfabric image=grid.img cycles=100000
miget image=grid-sim.core map=grid.map symbol=grid.sum order="y x _word" data=sum.bin
miget image=grid-sim.core map=grid.map symbol=last.sum order="y x _word" data=last.bin
miget image=grid-sim.core map=grid.map symbol=first.sum order="y x _word" data=first.bin
python3 check.py "$N" "$ROWS" val.bin sum.bin last.bin first.bin
