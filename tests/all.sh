#!/usr/bin/env bash
# The whole test suite: every Rust test (release mode), then the Python package's tests
# against a fresh virtual environment. Needs the Rust toolchain and python3 with venv/pip.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release --workspace --bins
cargo test --release --workspace

# The Python package (SdkRuntime compatibility layer), installed the way users install it.
venv="target/test-venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
# Building the extension module compiles the simulator once more (its own workspace, a
# few minutes on two cores); pip's --verbose shows cargo's progress meanwhile.
echo "all.sh: building and installing the Python package (cslsim extension module)..."
"$venv/bin/pip" install --verbose --disable-pip-version-check ./runtime-sim/python pytest \
  2>&1 | { grep -E "Compiling|Finished|Successfully|[Ee]rror" || true; }
bin="${CARGO_TARGET_DIR:-$PWD/target}/release"
CSLC="$bin/cslc" PATH="$bin:$PWD/$venv/bin:$PATH" \
  "$venv/bin/python" -m pytest -q runtime-sim/python/tests

# Conformance with the public csl-examples programs (skips, saying so, unless
# CSL_EXAMPLES names a checkout).
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}" CONFORMANCE_VENV="$PWD/$venv" \
  bash tests/conformance.sh
