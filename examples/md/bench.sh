#!/usr/bin/env bash
# The flagship's benchmark: simulated cycles per timestep, the projected rate at 850 MHz
# and the simulator's wall time per timestep, for the shipped input and two larger ones
# made by mdgen. Prints one Markdown table row per run (the table in examples/md/README.md).
# Usage: bash examples/md/bench.sh [STEPS_LARGE]   (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/../.."
large_steps=${1:-2}
cargo build --release --bin mdlj --bin mdgen >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
target/release/mdgen --replicate 2 --dump examples/md/data/lj108.dump > "$tmp/lj864.dump"
target/release/mdgen --fcc 10 --density 0.1 --temperature 1 > "$tmp/fcc4000.dump"

row() { # label dump nx ny nzx nzy steps
  local out
  out=$(target/release/mdlj --dump "$2" --nx "$3" --ny "$4" --nzx "$5" --nzy "$6" --steps "$7" --check-host)
  local cyc rate wall
  cyc=$(sed -n 's/^cycles per timestep: //p' <<<"$out")
  rate=$(sed -n 's/^projected timesteps per second at 850 MHz: //p' <<<"$out")
  wall=$(sed -n 's/.*(\([0-9.]*\) s per timestep)$/\1/p' <<<"$out")
  echo "| $1 | $3×$4×$(($5 * $6)) ($5×$6) | $(($3 * $5))×$(($4 * $6)) | $7 | $cyc | $rate | $wall s |"
}

echo "| input | cells (fold) | PEs | steps | cycles / timestep | projected timesteps/s | simulator wall time / timestep |"
echo "|---|---|---|---|---|---|---|"
row "lj108 (108 atoms)" examples/md/data/lj108.dump 8 8 4 2 10
row "lj108 replicated 2×2×2 (864 atoms)" "$tmp/lj864.dump" 16 16 4 4 "$large_steps"
row "fcc, density 0.1 (4000 atoms)" "$tmp/fcc4000.dump" 16 16 4 4 "$large_steps"
