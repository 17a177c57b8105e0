#!/usr/bin/env bash
# The whole test suite: every Rust test (release mode), then the Python package's tests
# against a fresh virtual environment. Needs the Rust toolchain and python3 with venv/pip.
set -euo pipefail
cd "$(dirname "$0")/.."
# One target directory for the Rust build, the tests and the Python package (below).
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"

cargo build --release --workspace --bins
cargo test --release --workspace

# The MD flagship's Tungsten form (mdlj.w on lj108, and its building blocks), every test.rc row.
make -s -C examples/md-tungsten check TEST='*'

# The Python package (SdkRuntime compatibility layer), installed the way users install it.
venv="target/test-venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
# The extension module's crate is a member of this workspace: maturin builds it into the
# same target directory (exported above, so pip's build backend sees it) with the same profile
# and features, so it reuses the simulator compiled above and compiles only PyO3 and the
# bindings. pip's --verbose shows cargo's progress meanwhile.
echo "all.sh: building and installing the Python package (cslsim extension module)..."
SECONDS=0
"$venv/bin/pip" install --verbose --disable-pip-version-check ./runtime-sim/python pytest \
  2>&1 | { grep -E "Compiling|Finished|Successfully|[Ee]rror" || true; }
echo "all.sh: the Python package took ${SECONDS}s"
bin="$CARGO_TARGET_DIR/release"
CSLC="$bin/cslc" PATH="$bin:$PWD/$venv/bin:$PATH" \
  "$venv/bin/python" -m pytest -q runtime-sim/python/tests

# Distributed runs under MPI (installs OpenMPI if missing; builds with the `cslsim/mpi`
# feature in its own target directory): 2 and 3 ranks against one process.
bash tests/mpi.sh

# Conformance with the public csl-examples programs (skips, saying so, unless
# CSL_EXAMPLES names a checkout). Some of their run.py scripts import plotting and
# scientific packages, installed only then.
if [ -n "${CSL_EXAMPLES:-}" ]; then
  "$venv/bin/pip" install -q --disable-pip-version-check matplotlib scipy pandas
fi
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}" CONFORMANCE_VENV="$PWD/$venv" \
  bash tests/conformance.sh
