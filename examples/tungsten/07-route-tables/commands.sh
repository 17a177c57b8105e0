#!/usr/bin/env bash
# Tutorial 7: tutorial 4's program, its routes written into the image as tables.
set -euo pipefail
N=4
K=4
C=3
python3 ../04-switches/make_input.py "$N" "$K" data.bin
python3 make_tables.py "$N" "$C" router.bin switch.bin
paint tables.paint N="$N" K="$K" arch=sdr out=tables.obj map=tables.map
miset image=tables.obj out=tables.img map=tables.map symbol=senders.data order="y x _word" data=data.bin
miset image=tables.img out=tables.img map=tables.map symbol=router order="y x r" data=router.bin
miset image=tables.img out=tables.img map=tables.map symbol=switch order="y x r n" data=switch.bin
miget image=tables.img map=tables.map symbol=router order="y x r" data=router-back.bin
miget image=tables.img map=tables.map symbol=switch order="y x r n" data=switch-back.bin
cmp router.bin router-back.bin
cmp switch.bin switch-back.bin
simfabric image=tables.img cycles=100000
miget image=tables-sim.core map=tables.map symbol=collector.got order="y x _word" data=got.bin
python3 ../04-switches/check.py "$N" "$K"
