#!/usr/bin/env bash
# A whole wafer on one machine: the public csl-examples `single-tile-matvec` benchmark at
# its full size (a 743 x 992 program rectangle on the 750 x 994 CS-2 fabric, 25 x 25 tiles),
# compiled with this repository's `cslc` and run with the benchmark's own, unmodified
# `run.py --verify` on the `cslsim` Python package. Prints the wall time and peak resident
# memory of the run (`/usr/bin/time -v`), which the README records.
#
# Usage: CSL_EXAMPLES=/path/to/csl-examples VENV=/path/to/venv \
#          bash runtime-sim/benches/wafer-matvec.sh [WIDTH HEIGHT]
#   WIDTH HEIGHT   program rectangle (default 743 992; the fabric is WIDTH+7 x HEIGHT+2)
# Environment:
#   CARGO_TARGET_DIR   where `cslc` was built (release); default target/
#   VENV               a virtual environment with the cslsim package installed
#   ARCH               wse2 or wse3 (default wse3, as the benchmark's commands_wse3.sh)
#   MAX_RSS_GIB        the run is killed if its resident memory passes this (default 15):
#                      the machine is shared
#   CSLSIM_THREADS     simulator threads (default: the available cores)
set -uo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
examples="${CSL_EXAMPLES:?set CSL_EXAMPLES to a csl-examples checkout}"
venv="${VENV:?set VENV to a virtual environment with the cslsim package}"
bin="${CARGO_TARGET_DIR:-$repo/target}/release"
width="${1:-743}"
height="${2:-992}"
arch="${ARCH:-wse3}"
max_kib=$(( ${MAX_RSS_GIB:-15} * 1024 * 1024 ))
work="$(mktemp -d "${TMPDIR:-/tmp}/wafer-matvec.XXXXXX")"
cp -r "$examples/benchmarks/single-tile-matvec" "$work/"
cd "$work/single-tile-matvec" || exit 2

echo "wafer-matvec: compiling ${width}x${height} (fabric $((width + 7)),$((height + 2)), $arch)"
/usr/bin/time -f "compile: %e s wall, %M KiB peak RSS" \
  "$bin/cslc" ./src/layout_matvec.csl --arch "$arch" \
  --fabric-dims=$((width + 7)),$((height + 2)) --fabric-offsets=4,1 \
  --params=width:$width,height:$height,tile_size:25,iters:1 \
  -o out --memcpy --channels=1 || exit 1

echo "wafer-matvec: running run.py --verify"
PATH="$bin:$venv/bin:$PATH" /usr/bin/time -v -o time.txt "$venv/bin/cs_python" ./run.py \
  --name out --verify >run.log 2>&1 &
pid=$!
peak=0
while kill -0 "$pid" 2>/dev/null; do
  # The resident memory of the run (the time process and everything under it).
  rss=$(ps -o rss= --ppid "$pid" 2>/dev/null | awk '{s += $1} END {print s + 0}')
  [ "$rss" -gt "$peak" ] && peak=$rss
  if [ "$rss" -gt "$max_kib" ]; then
    echo "wafer-matvec: resident memory ${rss} KiB passed the limit: killing the run" >&2
    pkill -P "$pid"
    kill "$pid"
    break
  fi
  sleep 1
done
wait "$pid"
rc=$?
cat run.log
grep -E "Elapsed|Maximum resident" time.txt
echo "wafer-matvec: exit status $rc, watched peak RSS ${peak} KiB (logs in $work)"
grep -q "SUCCESS" run.log && [ $rc -eq 0 ]
