#!/usr/bin/env bash
# Fast re-execution on NP ranks (tests/mpi/resume_probe.cpp): a run that crashes after
# loop call STOP, resumed with --strata-resume, ends with the losses and arrays of an
# uninterrupted run, byte for byte. Checkpoints every EVERY-th changing call, so the
# resumed run also replays calls after the newest checkpoint.
#   resume_probe_test.sh PROBE SCRATCH NP
set -uo pipefail
probe=$1
dir=$2
np=$3
mpiexec=${MPIEXEC:-mpirun}
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
run() { "$mpiexec" -np "$np" "$probe" "$@"; }

run full.bin >full.txt 2>&1 || fail "uninterrupted run: $(cat full.txt)"
# (stop, every): crash after call 7 with a checkpoint every changing call; after call
# 10 with one every second changing call (the resumed run re-runs calls after it).
for case in 7:1 10:2 13:3; do
  stop=${case%:*}
  every=${case#*:}
  ck=ck-$stop-$every
  run crashed.bin --stop-after "$stop" --strata-checkpoint-dir "$ck" --strata-checkpoint-every "$every" \
    >crash-$stop.txt 2>&1 && fail "the run told to crash after call $stop exited 0"
  [ -f "$ck/latest" ] || { fail "no checkpoint written before call $stop: $(cat crash-$stop.txt)"; continue; }
  run resumed-$stop.bin --strata-resume "$ck" --strata-checkpoint-dir "$ck" --strata-checkpoint-every "$every" \
    >resume-$stop.txt 2>&1 || fail "resumed run ($case): $(cat resume-$stop.txt)"
  grep -q "skipped [1-9]" resume-$stop.txt || fail "resumed run ($case) skipped nothing: $(cat resume-$stop.txt)"
  cmp -s full.bin resumed-$stop.bin ||
    fail "resumed run ($case) differs from the uninterrupted one: $(grep losses full.txt) vs $(grep losses resume-$stop.txt)"
done
echo "resume_probe_test np$np: $failures failure(s)"
[ "$failures" -eq 0 ]
