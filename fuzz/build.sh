#!/usr/bin/env bash
# Builds every fuzz target with libFuzzer's coverage instrumentation on the stable
# toolchain (what `cargo fuzz build --sanitizer none` does). Usage: fuzz/build.sh [TARGET...]
set -euo pipefail
cd "$(dirname "$0")"
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
bins=()
for t in "$@"; do bins+=(--bin "$t"); done
[ ${#bins[@]} -eq 0 ] && bins=(--bins)
# An explicit --target keeps build scripts and proc macros uninstrumented.
cargo build --release --target x86_64-unknown-linux-gnu "${bins[@]}"
