#!/usr/bin/env bash
# Tutorial 4: senders take turns on one colour, switched by flip and by control wavelets.
set -euo pipefail
N=4
K=4
python3 make_input.py "$N" "$K" data.bin
paint switches.paint N="$N" K="$K" arch=sdr out=switches.obj map=switches.map
miset image=switches.obj out=switches.img map=switches.map symbol=senders.data order="y x _word" data=data.bin
simfabric image=switches.img cycles=100000
miget image=switches-sim.core map=switches.map symbol=collector.got order="y x _word" data=got.bin
python3 check.py "$N" "$K"
