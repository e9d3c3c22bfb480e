#!/usr/bin/env bash
# Fast re-execution and replay on NP ranks (tests/mpi/resume_probe.cpp):
# * a run that crashes after loop call STOP, resumed with --strata-resume, ends with the
#   losses and arrays of an uninterrupted run, byte for byte (checkpoints every
#   EVERY-th changing call, so the resumed run also reruns calls after the newest);
# * a recorded run replays on the same ranks (2-D, groups, buffered, relaxed and
#   sync_for loops) and in one process on one thread, its losses and arrays byte for
#   byte;
#   so does a stale-synchronous record, whose cache versions (which depend on
#   timing) the record keeps; a record with managed communication is refused in one
#   process, saying why;
#   a replay of a record that does not match stops naming the call and the array.
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
for case in 8:1 12:2 17:3; do
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
run rec.bin --strata-record rec >rec.txt 2>&1 || fail "recorded run: $(cat rec.txt)"
cmp -s full.bin rec.bin || fail "recording changed the results"
run replay.bin --strata-replay rec >replay.txt 2>&1 || fail "replay on $np rank(s): $(cat replay.txt)"
cmp -s rec.bin replay.bin || fail "the replay on $np rank(s) differs from the recorded run"
grep -q "order [0-9]" rec/record.txt || fail "no serial order recorded: $(cat rec/record.txt)"

"$probe" serial.bin --strata-replay rec --strata-threads 1 >serial.txt 2>&1 ||
  fail "single-process replay of the $np-rank record: $(cat serial.txt)"
# The arrays match (each call's fingerprints were checked too), and so do the losses:
# the replay sums an Accumulator per recorded worker and combines the sums as the
# recorded ranks did.
cmp -s rec.bin serial.bin ||
  fail "the single-process replay's losses or arrays differ from the $np-rank run's: $(grep losses rec.txt) vs $(grep losses serial.txt)"
# SSP: odd ranks sleep in the relaxed loop, so even ranks run ahead and read clocks
# one behind the newest while odd ranks do not; the replays must read the same.
run rec-ssp.bin --ssp --strata-record rec-ssp >rec-ssp.txt 2>&1 || fail "recorded SSP run: $(cat rec-ssp.txt)"
ls rec-ssp/versions-*.bin >/dev/null 2>&1 || fail "the SSP record keeps no cache versions"
if [ "$np" -gt 1 ]; then
  grep -q "clocks of z begun 0 and 1 clock(s) behind: [0-9]* [1-9]" rec-ssp.txt ||
    fail "rank 0 never read a stale clock, so the SSP case proves nothing: $(grep behind rec-ssp.txt)"
fi
run replay-ssp.bin --ssp --strata-replay rec-ssp >replay-ssp.txt 2>&1 ||
  fail "SSP replay on $np rank(s): $(cat replay-ssp.txt)"
cmp -s rec-ssp.bin replay-ssp.bin || fail "the SSP replay on $np rank(s) differs from the recorded run"
"$probe" serial-ssp.bin --ssp --strata-replay rec-ssp --strata-threads 1 >serial-ssp.txt 2>&1 ||
  fail "single-process replay of the $np-rank SSP record: $(cat serial-ssp.txt)"
cmp -s rec-ssp.bin serial-ssp.bin ||
  fail "the single-process replay's losses or arrays differ from the $np-rank SSP run's"
run rec-managed.bin --managed --strata-record rec-managed >rec-managed.txt 2>&1 ||
  fail "recorded managed run: $(cat rec-managed.txt)"
"$probe" serial-managed.bin --managed --strata-replay rec-managed --strata-threads 1 >serial-managed.txt 2>&1 &&
  fail "a single-process replay of managed communication should be refused"
grep -q "managed communication, whose values depend on timing" serial-managed.txt ||
  fail "refusal does not say why: $(cat serial-managed.txt)"

# A record that does not match (a fingerprint edited) stops the replay at that call.
cp -r rec bad && sed -i '0,/changed [0-9]*:/s/\(changed [0-9]*:\)[0-9a-f]*/\10123456789abcdef/' bad/record.txt
run bad.bin --strata-replay bad >bad.txt 2>&1 && fail "a replay of a mismatching record exited 0"
grep -q "after loop call 1 at resume_probe.cpp.* differs from the record" bad.txt ||
  fail "mismatch message: $(cat bad.txt)"

echo "resume_probe_test np$np: $failures failure(s)"
[ "$failures" -eq 0 ]
