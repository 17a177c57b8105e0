#!/usr/bin/env bash
# Tutorial 5: message passing by address on WSE-3 (arch=sdr).
set -euo pipefail
NX=4
NY=3
GX=1
GY=1
python3 make_input.py "$NX" "$NY" val.bin
paint mail.paint arch=sdr NX="$NX" NY="$NY" GX="$GX" GY="$GY" out=mail.obj map=mail.map
miset image=mail.obj out=mail.img map=mail.map symbol=grid.val order="y x _word" data=val.bin
simfabric image=mail.img cycles=100000
miget image=mail-sim.core map=mail.map symbol=grid.got order="y x _word" data=got.bin
miget image=mail-sim.core map=mail.map symbol=grid.order order="y x _word" data=order.bin
python3 check.py "$NX" "$NY" "$GX" "$GY"
