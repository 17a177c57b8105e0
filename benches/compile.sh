#!/usr/bin/env bash
# Compile-speed benchmark: `cslc` on the public csl-examples game-of-life layout at growing
# rectangle sizes, up to the whole WSE-2 wafer (743 x 992 PEs on a 750 x 994 fabric).
# Prints one line per size: PEs, wall seconds, CPU seconds (user + system), peak resident
# memory, image size, and the time per phase that `cslc --verbose` reports. With RUNS=N
# each size is compiled N times and the fastest run (by wall time) is shown: on a shared
# machine the wall time depends on the load, which the first line reports.
#
# Usage: [RUNS=N] CSL_EXAMPLES=/path/to/csl-examples bash benches/compile.sh [SIZES...]
#        (SIZES default to "100 200 400 full"; `full` is 743x992; `matvec` is the
#        single-tile-matvec benchmark on the whole wafer, 743x992 tiles of 25x25)
# Uses target/release/cslc (or $CARGO_TARGET_DIR/release/cslc); build it first with
# `cargo build --release -p cslc`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cslc=${CSLC:-${CARGO_TARGET_DIR:-$root/target}/release/cslc}
: "${CSL_EXAMPLES:?set CSL_EXAMPLES to a csl-examples checkout}"
layout=$CSL_EXAMPLES/benchmarks/game-of-life/layout.csl
matvec=$CSL_EXAMPLES/benchmarks/single-tile-matvec/src/layout_matvec.csl
[ -f "$layout" ] || { echo "no $layout" >&2; exit 1; }
[ -x "$cslc" ] || { echo "no $cslc: run cargo build --release -p cslc" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (package: time)" >&2; exit 1; }
runs=${RUNS:-1}
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(100 200 400 full)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg); best of $runs run(s) per size"
printf '%-10s %9s %9s %9s %9s  %s\n' "PEs" "wall s" "CPU s" "peak MB" "image MB" "phases"
for n in "${sizes[@]}"; do
  src=$layout name=
  case $n in
    full) w=743 h=992 fw=750 fh=994 ;;
    matvec) w=743 h=992 fw=750 fh=994 src=$matvec name=" matvec" ;;
    *) w=$n h=$n fw=$((n + 7)) fh=$((n + 2)) ;;
  esac
  if [ "$n" = matvec ]; then
    params=width:$w,height:$h,tile_size:25,iters:1
  else
    params=x_dim:$w,y_dim:$h
  fi
  best= failed=
  for ((r = 0; r < runs; r++)); do
    /usr/bin/time -f "%e %U %S %M" -o "$out/time" "$cslc" --arch=wse2 "$src" \
      --fabric-dims=$fw,$fh --fabric-offsets=4,1 --params=$params \
      --memcpy --channels=1 -o "$out/img" --verbose 2>"$out/log" >/dev/null || {
      failed=1; break; }
    read -r wall user sys rss <"$out/time"
    if [ -z "$best" ] || awk "BEGIN{exit !($wall < $best)}"; then
      best=$wall
      cpu=$(awk "BEGIN{print $user + $sys}")
      peak=$rss
      phases=$(grep -E '^cslc: [a-z ]+: [0-9.]+ s$' "$out/log" | sed 's/^cslc: //' | paste -sd';' -)
      img=$(stat -c %s "$out/img/out.elf")
    fi
  done
  if [ -n "$failed" ]; then
    echo "${w}x${h}${name}: cslc failed:"; grep -m3 -i error "$out/log"; continue
  fi
  printf '%-10s %9.2f %9.2f %9d %9.1f  %s\n' "${w}x${h}${name}" "$best" "$cpu" \
    $((peak / 1024)) "$(awk "BEGIN{print $img / 1048576}")" "$phases"
done
