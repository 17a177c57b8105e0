#!/usr/bin/env bash
# Tutorial 1: build, load, run and check the row relay with the four tools.
set -euo pipefail
N=6
python3 make_input.py "$N" val.bin
paint relay.paint N="$N" arch=sdr out=relay.obj map=relay.map
miset image=relay.obj out=relay.img map=relay.map symbol=row.val order="y x _word" data=val.bin
simfabric image=relay.img cycles=100000
miget image=relay-sim.core map=relay.map symbol=row.sum order="y x _word" data=sum.bin
python3 check.py "$N" val.bin sum.bin
