#!/usr/bin/env bash
# Distributed runs under MPI (issue 13 item 5): builds the workspace with the `cslsim/mpi`
# feature in its own target directory, then runs, on 2 and 3 ranks of this machine
# (loopback), a Tungsten e2e program with `simfabric`, a CSL e2e program with `cslsim`
# (host transfers and a launch) and the MD flagship with `mdlj`,
# and compares every output byte for byte with the single-process run of the same binary;
# then checks that a failure on one rank (or on all) ends the job promptly with the error
# printed once and a non-zero status (SIMULATOR.md §15).
# Installs OpenMPI (Debian packages) if `mpirun` is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v mpirun >/dev/null || ! command -v mpicc >/dev/null; then
  echo "mpi.sh: installing OpenMPI..."
  sudo=()
  if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then sudo=(sudo); fi
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq libopenmpi-dev openmpi-bin libclang-dev >/dev/null
fi
target="${MPI_TARGET_DIR:-${CARGO_TARGET_DIR:-$PWD/target}-mpi}"
# Only the crates whose binaries run below (cslc: cslc, paint; cslsim: cslsim, simfabric,
# miset; csl-examples: mdlj).
CARGO_TARGET_DIR="$target" cargo build --release -p cslc -p cslsim -p csl-examples --features cslsim/mpi --bins
bin="$target/release"
export PATH="$bin:$PATH"
# Root in containers and more ranks than cores are both fine for these checks.
MPIRUN=(mpirun --oversubscribe --allow-run-as-root)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
root="$PWD"

# 1. simfabric on the neighbour-exchange tutorial (8x6 tiles: strips of 3 and 2 rows).
(
  cd "$work"
  cp "$root"/examples/tungsten/03-neighbour-exchange/*.{w,paint,py} .
  NX=8 NY=6 K=16
  python3 make_input.py "$NX" "$NY" "$K" v.bin
  paint exchange.paint NX="$NX" NY="$NY" K="$K" arch=sdr out=exchange.obj map=exchange.map >/dev/null
  miset image=exchange.obj out=exchange.img map=exchange.map symbol=grid.v order="y x _word" data=v.bin >/dev/null
  # Standard output and error: the same report as in the log (compared below).
  simfabric image=exchange.img cycles=100000 threads=1 core=one.core log=one.log >/dev/null 2>&1
  for r in 2 3; do
    "${MPIRUN[@]}" -n "$r" simfabric image=exchange.img cycles=100000 threads=1 \
      core="r$r.core" log="r$r.log" >/dev/null 2>&1
    cmp one.core "r$r.core"
    cmp one.log "r$r.log"
    echo "mpi.sh: simfabric on $r ranks: core and log identical to one process"
  done
)

# 2. cslsim with host transfers (set, launch, dump) on an e2e program: a column of 6 PEs
# whose root broadcasts down (the wavelets cross every cut); output and dump identical.
(
  cd "$work"
  cslc --arch=wse2 --fabric-dims=8,10 --fabric-offsets=4,1 --params=height:6,n:5 \
    "$root/tests/programs/broadcast/layout.csl" -o bc >/dev/null
  seq 1 30 > in.txt
  args=(bc --threads 1 --set buf=in.txt --launch go)
  cslsim "${args[@]}" --dump buf=one.txt > one.out
  for r in 2 3; do
    "${MPIRUN[@]}" -n "$r" cslsim "${args[@]}" --dump buf="r$r.txt" > "r$r.out"
    cmp one.txt "r$r.txt"
    cmp one.out "r$r.out"
    echo "mpi.sh: cslsim on $r ranks: output and dump identical to one process"
  done
)

# 3. The MD flagship (lj108 on 8x8 PEs, one step: about 49,000 cycles, each exchanged
# between the ranks): the energies file byte for byte.
md=(--dump "$root/examples/md/data/lj108.dump" --nx 8 --ny 8 --nzx 4 --nzy 2 --steps 1 --threads 1)
mdlj "${md[@]}" --energies "$work/one.tsv" >/dev/null
for r in 2 3; do
  SECONDS=0
  "${MPIRUN[@]}" -n "$r" mdlj "${md[@]}" --energies "$work/r$r.tsv" >/dev/null
  echo "mpi.sh: mdlj on $r ranks took ${SECONDS}s"
  cmp "$work/one.tsv" "$work/r$r.tsv"
  echo "mpi.sh: mdlj on $r ranks: energies identical to one process"
done
# 4. A failure on one rank must end the whole job promptly (no rank left waiting in a
# collective operation or in MPI_Finalize), with a non-zero status and the error printed
# once. `timeout` turns a regression (a hang) into a failure of this script.
fails=0
expect_failure() { # NAME PATTERN COMMAND...: status not 0 (nor timeout's 124), PATTERN once on stderr
  local name="$1" pattern="$2" status=0 n
  shift 2
  SECONDS=0
  timeout 60 "$@" >"$work/fail.out" 2>"$work/fail.err" || status=$?
  n="$(grep -c -- "$pattern" "$work/fail.err" || true)"
  if [ "$status" -eq 0 ] || [ "$status" -eq 124 ] || [ "$n" -ne 1 ]; then
    echo "mpi.sh: FAIL: $name: status $status (124: timed out), \`$pattern\` printed $n time(s):"
    cat "$work/fail.err"
    fails=$((fails + 1))
  else
    echo "mpi.sh: $name: the job ended in ${SECONDS}s with status $status, the error printed once"
  fi
}
(
  cd "$work"
  args=(bc --threads 1 --set buf=in.txt --launch go)
  # (a) Rank 0 alone writes the --dump file, after the run: it cannot (no such directory)
  # while rank 1 goes on to gather the final state.
  expect_failure "cslsim, rank 0 cannot write its output" "cslsim: error: cannot write \`missing/d.txt\`" \
    "${MPIRUN[@]}" -n 2 cslsim "${args[@]}" --dump buf=missing/d.txt
  # (b) Rank 1 cannot read its input (it runs in a directory without the --set file, as
  # on a node without the shared file system) while rank 0 is already in the run.
  mkdir -p r0 r1
  cp in.txt r0/
  expect_failure "cslsim, rank 1 cannot read its input" "cslsim: error: cannot read \`in.txt\`" \
    "${MPIRUN[@]}" -n 2 sh -c 'cd "r$OMPI_COMM_WORLD_RANK" && exec cslsim ../bc --threads 1 --set buf=in.txt --launch go'
  # (c) Ranks started with different arguments (they would diverge).
  expect_failure "cslsim, ranks with different arguments" "different arguments" \
    "${MPIRUN[@]}" -n 1 cslsim "${args[@]}" : -n 1 cslsim "${args[@]}" --max-cycles 100000
  # (d) An error every rank meets (a bad argument): printed once, by rank 0.
  expect_failure "simfabric, a bad argument on every rank" "simfabric: error: missing \`cycles=N\`" \
    "${MPIRUN[@]}" -n 2 simfabric image=exchange.img
  # (e) A fault every rank agrees on (the cycle limit): printed once, by rank 0.
  expect_failure "cslsim, the cycle limit on every rank" "cslsim: error: cycle limit reached" \
    "${MPIRUN[@]}" -n 2 cslsim "${args[@]}" --max-cycles 10
  # (f) Not a failure: `--help` on every rank prints the usage once (rank 0), as plain
  # text (ranks write to a pseudo-terminal, so clap used to add terminal escapes), and
  # every rank finalises MPI (clap's `exit` had skipped MPI_Finalize, so mpirun reported
  # the job as failed).
  for tool in mdlj cslsim; do
    status=0
    timeout 60 "${MPIRUN[@]}" -n 2 "$tool" --help >help.out 2>help.err || status=$?
    n="$(grep -c '^Usage:' help.out || true)"
    if [ "$status" -ne 0 ] || [ "$n" -ne 1 ] || grep -q $'\e' help.out ||
      grep -qi finaliz help.err; then
      echo "mpi.sh: FAIL: $tool --help on 2 ranks: status $status, usage printed $n time(s):"
      cat -v help.out help.err
      fails=$((fails + 1))
    else
      echo "mpi.sh: $tool --help on 2 ranks: plain usage printed once, status 0"
    fi
  done
  exit "$fails"
)
echo "mpi.sh: 13 passed, 0 failed"
