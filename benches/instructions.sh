#!/usr/bin/env bash
# Instruction-count benchmark: runs the same workloads with two builds under valgrind's
# cachegrind and prints, per workload, the instructions each build executed and their
# ratio. The counts are the same on every run whatever else the machine does, so this
# compares two builds on a shared machine whose wall times swing by 2x (the method of
# runtime-sim/SIMULATOR.md §12.10). Instructions are not time (cache misses and branch
# mispredictions are not in them): confirm a gain with alternating wall-time rounds.
#
# Usage: bash benches/instructions.sh BASE_DIR NEW_DIR
#        (each a directory holding the release binaries simbench, mdlj and cslc, e.g. a
#        copy of target/release from before a change, and target/release)
# Needs valgrind (Debian package `valgrind`). Takes about three minutes per build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 2 ] || { echo "usage: $0 BASE_DIR NEW_DIR" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 1; }
for d in "$1" "$2"; do
  for b in simbench mdlj cslc; do
    [ -x "$d/$b" ] || { echo "no $d/$b" >&2; exit 1; }
  done
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
md=$root/examples/md
# The MD flagship's device program as `mdlj --nx 8 --ny 8 --nzx 4 --nzy 2` compiles it for
# lj108 (capacities as `mdlj` prints them).
md_params=nx:8,ny:8,nzx:4,nzy:2,nloc:5,nmax:26,npair:28,nframes:2,express_x:0,express_y:0,switch_x:1,switch_y:1,switch_z:1
workloads=(
  "simbench 32x32, --iters 400|simbench --threads 1 --iters 400"
  "mdlj lj108 on 32x16 PEs, 2 steps (compile + simulation)|mdlj --dump $md/data/lj108.dump --nx 8 --ny 8 --nzx 4 --nzy 2 --steps 2 --threads 1"
  "cslc, the MD flagship on 32x16 PEs|cslc $md/layout.csl --fabric-dims=39,18 --fabric-offsets=4,1 --params=$md_params -o $out/md.elf"
)
# Instructions of one run of `cmd` with the binaries of directory `dir`.
count() {
  local dir=$1 cmd=$2
  local bin=${cmd%% *} args=${cmd#* }
  # shellcheck disable=SC2086 # the arguments are split on purpose
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
    "$dir/$bin" $args >"$out/stdout" 2>"$out/log" || {
    echo "failed: $dir/$bin $args" >&2
    tail -5 "$out/log" >&2
    exit 1
  }
  sed -n 's/.*I *refs: *//p' "$out/log" | tr -d ','
}
printf '%-58s %15s %15s %8s\n' workload base new new/base
for w in "${workloads[@]}"; do
  name=${w%%|*} cmd=${w#*|}
  a=$(count "$1" "$cmd")
  b=$(count "$2" "$cmd")
  printf '%-58s %15s %15s %8s\n' "$name" "$a" "$b" "$(awk "BEGIN{printf \"%.3f\", $b / $a}")"
done
