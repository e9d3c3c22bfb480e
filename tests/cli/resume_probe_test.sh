#!/usr/bin/env bash
# Fast re-execution and replay on NP ranks (tests/mpi/resume_probe.cpp):
# * a run that crashes after loop call STOP, resumed with --strata-resume, ends with the
#   losses and arrays of an uninterrupted run, byte for byte (checkpoints every
#   EVERY-th changing call, so the resumed run also reruns calls after the newest);
# * a recorded run replays on the same ranks (2-D, groups, buffered, relaxed and
#   sync_for loops) and in one process on one thread, its losses and arrays byte for
#   byte;
#   so does a stale-synchronous record, whose cache versions (which depend on
#   timing) the record keeps;
#   records with managed communication and with Hybrid consistency (2 threads a rank)
#   replay in one process from their timing logs, byte for byte, and are refused on
#   the recorded layout, saying why; a torn timing log is refused; a one-process,
#   one-thread Hybrid record replays from its log;
#   a replay of a record that does not match stops naming the call and the array.
#   resume_probe_test.sh PROBE SCRATCH NP
source "$(dirname "${BASH_SOURCE[0]}")/probe_test_lib.sh" "$@"

run full.bin >full.txt 2>&1 || fail "uninterrupted run: $(cat full.txt)"
# (stop, every[, how]): crash after call 8 with a checkpoint every changing call; after
# call 12 with one every second changing call (the resumed run re-runs calls after
# it); checkpoints are written in the background unless `how` says inline.
for case in 8:1 12:2 17:3 12:2:inline; do
  IFS=: read -r stop every how <<<"$case"
  ck=ck-$stop-$every-${how:-background}
  run crashed.bin --stop-after "$stop" --strata-checkpoint-dir "$ck" --strata-checkpoint-every "$every" \
    --strata-checkpoint-write "${how:-background}" >crash-$stop.txt 2>&1 &&
    fail "the run told to crash after call $stop exited 0"
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
# Managed communication and Hybrid: what reads saw (and managed owners applied)
# depends on timing; the record logs it and the one-process replay reads the log.
for kind in managed hybrid; do
  run rec-$kind.bin --$kind --strata-threads 2 --strata-record rec-$kind >rec-$kind.txt 2>&1 ||
    fail "recorded $kind run: $(cat rec-$kind.txt)"
  ls rec-$kind/timing-*-0.bin >/dev/null 2>&1 || fail "the $kind record keeps no timing log"
  "$probe" serial-$kind.bin --$kind --strata-replay rec-$kind --strata-threads 1 >serial-$kind.txt 2>&1 ||
    fail "single-process replay of the $np-rank $kind record: $(cat serial-$kind.txt)"
  cmp -s rec-$kind.bin serial-$kind.bin ||
    fail "the single-process replay's losses or arrays differ from the $np-rank $kind run's: $(grep losses rec-$kind.txt) vs $(grep losses serial-$kind.txt)"
  run replay-$kind.bin --$kind --strata-threads 2 --strata-replay rec-$kind >replay-$kind.txt 2>&1 &&
    fail "a replay of the $kind record on the recorded layout should be refused"
  grep -q "whose values depend on timing; a replay on the recorded ranks and threads cannot" replay-$kind.txt ||
    fail "$kind refusal does not say why: $(cat replay-$kind.txt)"
done
grep -q "deltas of z sent early: [1-9]" rec-managed.txt ||
  fail "no delta was sent early, so the managed case proves little: $(grep early rec-managed.txt)"
cp -r rec-managed torn && f=$(ls torn/timing-*-0.bin | head -1) && truncate -s -5 "$f"
"$probe" torn.bin --managed --strata-replay torn --strata-threads 1 >torn.txt 2>&1 &&
  fail "a replay of a torn timing log exited 0"
grep -q "timing-.*truncated or corrupt" torn.txt || fail "torn timing log message: $(cat torn.txt)"
if [ "$np" -eq 1 ]; then
  "$probe" rec-h1.bin --hybrid --strata-threads 1 --strata-record rec-h1 >rec-h1.txt 2>&1 ||
    fail "recorded 1x1 hybrid run: $(cat rec-h1.txt)"
  "$probe" replay-h1.bin --hybrid --strata-threads 1 --strata-replay rec-h1 >replay-h1.txt 2>&1 ||
    fail "replay of the 1x1 hybrid record: $(cat replay-h1.txt)"
  cmp -s rec-h1.bin replay-h1.bin || fail "the replay of the 1x1 hybrid record differs"
fi

# A record that does not match (a fingerprint edited) stops the replay at that call.
cp -r rec bad && sed -i '0,/changed [0-9]*:/s/\(changed [0-9]*:\)[0-9a-f]*/\10123456789abcdef/' bad/record.txt
run bad.bin --strata-replay bad >bad.txt 2>&1 && fail "a replay of a mismatching record exited 0"
grep -q "after loop call 1 at resume_probe.cpp.* differs from the record" bad.txt ||
  fail "mismatch message: $(cat bad.txt)"

echo "resume_probe_test np$np: $failures failure(s)"
[ "$failures" -eq 0 ]
