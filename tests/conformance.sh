#!/usr/bin/env bash
# Conformance with the public csl-examples programs: runs every tutorial's and
# benchmark's own commands_wse2.sh / commands_wse3.sh, unmodified, with this repository's
# `cslc` and `cs_python` first on PATH, and prints one line per (program, arch):
#
#   PASS  benchmarks/residual            wse2   12s
#   FAIL  benchmarks/fft-3d              wse3   3s  error[E0201]: ...
#
# then a total. A run passes when its script exits 0 and, where its run.py prints a
# success line ("SUCCESS"), that line appears in the output.
#
# Usage: CSL_EXAMPLES=/path/to/csl-examples tests/conformance.sh [FILTER...]
#   FILTER     only programs whose path (e.g. "benchmarks/bicgstab") contains one of them
# Environment:
#   CSL_EXAMPLES          the checkout (skips with a message when unset or absent)
#   CARGO_TARGET_DIR      where `cslc` was built (default: target/); release binaries
#   CONFORMANCE_VENV      a virtual environment with the cslsim package installed
#                         (default: target/test-venv, the one tests/all.sh makes)
#   CONFORMANCE_TIMEOUT   seconds per run (default 1800)
#   CONFORMANCE_LOGS      directory for each run's full output (default: a temporary one)
#
# The checkout is never written to: each program is copied to a scratch directory first.
#
# Runs read past the end of an array the way the vendor runtime does (with a warning):
# our default makes that a host error, and 25-pt-stencil reads 6 words of its 5-word
# `maxmin_time` buffer (the sixth is unused). Writes past the end stay errors.
# Exit status: 0 when every selected run passed, 1 otherwise.
set -uo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"

if [ -z "${CSL_EXAMPLES:-}" ] || [ ! -d "${CSL_EXAMPLES}/benchmarks" ]; then
  echo "conformance.sh: skipped (set CSL_EXAMPLES to a csl-examples checkout to run it)"
  exit 0
fi
examples="$(cd "$CSL_EXAMPLES" && pwd)"
bin="${CARGO_TARGET_DIR:-$repo/target}/release"
venv="${CONFORMANCE_VENV:-$repo/target/test-venv}"
if [ ! -x "$bin/cslc" ]; then
  echo "conformance.sh: no $bin/cslc (cargo build --release -p cslc first)" >&2
  exit 2
fi
if [ ! -x "$venv/bin/cs_python" ]; then
  echo "conformance.sh: no $venv/bin/cs_python (install runtime-sim/python there first," \
    "as tests/all.sh does, or set CONFORMANCE_VENV)" >&2
  exit 2
fi
export CSLSIM_MEMCPY_BOUNDS=warn
timeout_s="${CONFORMANCE_TIMEOUT:-1800}"
scratch="$(mktemp -d "${TMPDIR:-/tmp}/conformance.XXXXXX")"
logs="${CONFORMANCE_LOGS:-$scratch/logs}"
mkdir -p "$logs"
# Programs refer to siblings (benchmarks/benchmark-libs), so the copy keeps the layout.
cp -r "$examples/tutorials" "$examples/benchmarks" "$scratch/"

selected() {
  [ $# -eq 1 ] && return 0
  local prog="$1"
  shift
  for f in "$@"; do
    case "$prog" in *"$f"*) return 0 ;; esac
  done
  return 1
}

# The first line of a failed run's output that says what went wrong.
first_error() {
  local line
  # A compiler error, else the exception a Python traceback ends with, else any error.
  line="$(grep -m1 -E "^\[E[0-9]{4}\] Error|^error" "$1")"
  if [ -z "$line" ] && grep -q "^Traceback" "$1"; then
    line="$(grep -E "^[A-Za-z_.]*(Error|Exception|Exit)\b" "$1" | tail -n 1)"
  fi
  [ -n "$line" ] || line="$(grep -m1 -E "panicked|FAIL|[Aa]ssert|Timed out|Error" "$1")"
  [ -n "$line" ] || line="$(tail -n 1 "$1")"
  printf '%s' "${line:0:160}"
}

pass=0
fail=0
for script in "$scratch"/tutorials/*/commands_wse[23].sh "$scratch"/benchmarks/*/commands_wse[23].sh; do
  [ -f "$script" ] || continue
  dir="$(dirname "$script")"
  prog="${dir#"$scratch"/}"
  arch="$(basename "$script" .sh)"
  arch="${arch#commands_}"
  selected "$prog" "$@" || continue
  log="$logs/${prog//\//_}-$arch.log"
  start=$(date +%s)
  (cd "$dir" && PATH="$bin:$venv/bin:$PATH" timeout "$timeout_s" bash "./$(basename "$script")") \
    >"$log" 2>&1
  rc=$?
  secs=$(($(date +%s) - start))
  ok=0
  if [ $rc -eq 0 ]; then
    ok=1
    if grep -qs "SUCCESS" "$dir"/*.py && ! grep -q "SUCCESS" "$log"; then
      ok=0
      echo "(exit 0 but no SUCCESS line)" >>"$log"
    fi
  elif [ $rc -eq 124 ]; then
    echo "Timed out after ${timeout_s}s" >>"$log"
  fi
  if [ $ok -eq 1 ]; then
    pass=$((pass + 1))
    printf 'PASS  %-46s %-5s %5ss\n' "$prog" "$arch" "$secs"
  else
    fail=$((fail + 1))
    printf 'FAIL  %-46s %-5s %5ss  %s\n' "$prog" "$arch" "$secs" "$(first_error "$log")"
  fi
done
echo "conformance.sh: $pass passed, $fail failed, of $((pass + fail)) runs (logs in $logs)"
[ $fail -eq 0 ]
