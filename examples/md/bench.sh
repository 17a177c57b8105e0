#!/usr/bin/env bash
# The flagship's benchmark: simulated cycles per timestep, the projected rate at 850 MHz
# and the simulator's wall time per timestep, for the shipped input and two larger ones
# made by mdgen, with the three relays side by side (the switch relay, mdlj's default,
# the express relay, `--relay express`, and the CE relay, `--relay ce`, the baseline). Prints one Markdown table row per input (the table in
# examples/md/README.md), and with PROFILE=1 each run's per-phase profile.
# Usage: bash examples/md/bench.sh [STEPS_LARGE]   (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/../.."
large_steps=${1:-2}
cargo build --release --bin mdlj --bin mdgen >/dev/null
bin=${CARGO_TARGET_DIR:-target}/release
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin/mdgen" --replicate 2 --dump examples/md/data/lj108.dump > "$tmp/lj864.dump"
"$bin/mdgen" --fcc 10 --density 0.1 --temperature 1 > "$tmp/fcc4000.dump"

# One run: prints "cycles|rate|wall" (every run passes --check-host).
one() { # relay dump nx ny nzx nzy steps
  local out
  out=$("$bin/mdlj" --relay "$1" --dump "$2" --nx "$3" --ny "$4" --nzx "$5" --nzy "$6" --steps "$7" --check-host --profile)
  if [[ ${PROFILE:-0} == 1 ]]; then
    sed -n '/^profile/,/stall fraction/p' <<<"$out" | sed "s/^/# $1: /" >&2
  fi
  local cyc rate wall
  cyc=$(sed -n 's/^cycles per timestep: //p' <<<"$out")
  rate=$(sed -n 's/^projected timesteps per second at 850 MHz: //p' <<<"$out")
  wall=$(sed -n 's/.*(\([0-9.]*\) s per timestep)$/\1/p' <<<"$out")
  echo "$cyc|$rate|$wall s"
}

row() { # label dump nx ny nzx nzy steps
  local sw ex ce
  sw=$(one switch "${@:2}")
  ex=$(one express "${@:2}")
  ce=$(one ce "${@:2}")
  echo "| $1 | $3×$4×$(($5 * $6)) ($5×$6) | $(($3 * $5))×$(($4 * $6)) | $7 | $sw | $ex | $ce |"
}

echo "| input | cells (fold) | PEs | steps | switch: cycles / timestep | timesteps/s at 850 MHz | simulator s / timestep | express: cycles / timestep | timesteps/s at 850 MHz | simulator s / timestep | CE relay: cycles / timestep | timesteps/s at 850 MHz | simulator s / timestep |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
row "lj108 (108 atoms)" examples/md/data/lj108.dump 8 8 4 2 10
row "lj108 replicated 2×2×2 (864 atoms)" "$tmp/lj864.dump" 16 16 4 4 "$large_steps"
row "fcc, density 0.1 (4000 atoms)" "$tmp/fcc4000.dump" 16 16 4 4 "$large_steps"
