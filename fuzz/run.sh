#!/usr/bin/env bash
# Runs one fuzz target for a while on a corpus seeded from this repository's own files.
# Usage: fuzz/run.sh TARGET SECONDS   (TARGET: compile gen_csl tungsten paint image md_dump)
# Build first with fuzz/build.sh. Findings land in fuzz/artifacts/TARGET/; a crash found
# this way is minimised (the binary's -minimize_crash=1) and becomes a regression test.
set -euo pipefail
cd "$(dirname "$0")"
target=${1:?usage: run.sh TARGET SECONDS}
seconds=${2:?usage: run.sh TARGET SECONDS}
root=..
corpus=corpus/$target
mkdir -p "$corpus" "artifacts/$target"
seed() { for f in "$@"; do [ -f "$f" ] && cp "$f" "$corpus/" || true; done; }
case $target in
  compile)  seed "$root"/tests/fuzz/corpus/*.csl "$root"/tests/ui/*/*.csl "$root"/examples/tutorials/*/*.csl ;;
  tungsten) seed "$root"/tests/ui/tungsten/*.w "$root"/examples/tungsten/*/*.w "$root"/tests/programs/pairs/*.w ;;
  paint)    seed "$root"/tests/ui/paint/*.paint "$root"/examples/tungsten/*/*.paint "$root"/tests/programs/pairs/*.paint ;;
  md_dump)  seed "$root"/examples/md/data/*.dump seeds/md_dump/* ;;
  image)
    # Real images: the Tungsten tutorials' floorplans and a few CSL tutorials, compiled
    # with the workspace's tools (built on demand).
    (cd "$root" && cargo build --release -q -p cslc --bin cslc --bin paint)
    for d in "$root"/examples/tungsten/0[1-6]*/; do
      p=$(ls "$d"*.paint | head -1)
      "$root"/target/release/paint "$p" lib="$d" out="$corpus/$(basename "$d").obj" map=/dev/null >/dev/null 2>&1 || true
    done
    for spec in "01-gemv 8,3 M:4,N:6" "06-routes-two-pes 9,3 n:6" "10-switches 10,3 n:8" \
                "12-filters 11,3 P:3,k:4"; do
      set -- $spec
      "$root"/target/release/cslc --arch=wse2 "$root/examples/tutorials/$1/layout.csl" \
        --fabric-dims="$2" --fabric-offsets=4,1 --params="$3" --memcpy --channels=1 \
        -o "$corpus/$1.out" >/dev/null 2>&1 || true
      [ -f "$corpus/$1.out/out.elf" ] && mv "$corpus/$1.out/out.elf" "$corpus/$1.elf"
      rm -rf "$corpus/$1.out"
    done ;;
  gen_csl)  seed seeds/gen_csl/* ;;
  *) echo "unknown target $target" >&2; exit 2 ;;
esac
bin=target/x86_64-unknown-linux-gnu/release/$target
exec "$bin" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -max_len=8192 -artifact_prefix="artifacts/$target/" -print_final_stats=1
