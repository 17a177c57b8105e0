#!/usr/bin/env bash
# Tutorial 3: a four-neighbour exchange on a grid inside a mirroring moat.
set -euo pipefail
NX=4
NY=3
K=32
python3 make_input.py "$NX" "$NY" "$K" v.bin
paint exchange.paint NX="$NX" NY="$NY" K="$K" arch=sdr out=exchange.obj map=exchange.map
miset image=exchange.obj out=exchange.img map=exchange.map symbol=grid.v order="y x _word" data=v.bin
simfabric image=exchange.img cycles=100000 log=exchange.log
for s in from_w from_e from_n from_s; do
  miget image=exchange-sim.core map=exchange.map symbol=grid.$s order="y x _word" data=$s.bin
done
python3 check.py "$NX" "$NY" "$K"
