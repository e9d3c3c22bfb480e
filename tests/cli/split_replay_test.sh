#!/bin/bash
# Split conflict groups under record and replay (tests/mpi/split_probe.cpp), on NP
# ranks x 2 threads: a split run's order depends on timing, so two runs differ, and
# its record logs the order each call ran in (its tickets). A replay on the recorded
# layout follows that order, and so does a one-process, one-thread replay: both
# give the recorded run's bytes.
#   split_replay_test.sh PROBE DIR NP
source "$(dirname "${BASH_SOURCE[0]}")/probe_test_lib.sh" "$@"

run rec.bin --strata-threads 2 --strata-record rec >rec.txt 2>&1 || fail "recorded run: $(cat rec.txt)"
grep -q "split calls: 4" rec.txt || fail "the groups were not split at every call: $(cat rec.txt)"
[ "$(grep -c ' order [0-9]' rec/record.txt)" -eq 4 ] || fail "not every call's order was logged: $(cat rec/record.txt)"
# One rank's two threads interleave (each call runs 40,000 iterations), so the calls'
# orders differ: the test covers an order that depends on timing.
if [ "$np" -eq 1 ]; then
  orders=$(sed -n 's/.* order \([0-9]*\) .*/\1/p' rec/record.txt | sort -u | wc -l)
  [ "$orders" -ge 2 ] || fail "every call ran in one order, so the threads did not interleave: $(cat rec/record.txt)"
fi
run replay.bin --strata-threads 2 --strata-replay rec >replay.txt 2>&1 || fail "replay on $np rank(s): $(cat replay.txt)"
cmp -s rec.bin replay.bin || fail "the replay on $np rank(s) x 2 threads differs from the recorded run"
"$probe" serial.bin --strata-replay rec --strata-threads 1 >serial.txt 2>&1 ||
  fail "single-process replay of the $np-rank record: $(cat serial.txt)"
cmp -s rec.bin serial.bin || fail "the single-process replay differs from the recorded run"
[ "$failures" -eq 0 ] && echo "split replay test passed ($np rank(s))"
exit "$failures"
