#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/, clang-16, ASan + UBSan) and runs each for a
# while, then prints per harness: seconds, executions, executions per second, coverage
# (cov: edges, ft: features) and whether it ran clean.
#   scripts/fuzz.sh                     every harness, 60 s each
#   scripts/fuzz.sh 600 numbers journal  those two, 10 minutes each
#   STRATA_FUZZ_JOBS=2 scripts/fuzz.sh   two harnesses at a time (one core each)
#   STRATA_FUZZ_KEEP_GOING=1 scripts/fuzz.sh 600 journal
#                                         goes on after a crash (libFuzzer's fork mode),
#                                         to look past a known bug; counts the crashes
# New inputs go to build-fuzz/fuzz/corpus/<harness>/ (kept between runs), crashes to
# build-fuzz/fuzz/crashes/, each run's output to build-fuzz/fuzz/logs/<harness>.log.
# Exits non-zero when any harness crashed; copy a crashing input into
# fuzz/corpus/<harness>/ with the fix (docs/fuzzing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh
strata_ensure_packages
strata_ccache_setup

seconds=${1:-60}
[ $# -gt 0 ] && shift
out=build-fuzz/fuzz
harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then  # every harness: each is one fuzz/<name>.cpp
  for f in fuzz/*.cpp; do harnesses+=("$(basename "$f" .cpp)"); done
fi
targets=()
for h in "${harnesses[@]}"; do
  [ -f "fuzz/$h.cpp" ] || { echo "fuzz.sh: no harness '$h' (fuzz/$h.cpp)" >&2; exit 2; }
  targets+=("fuzz_$h")
done

echo "== build (clang-16, libFuzzer + ASan + UBSan): ${harnesses[*]}"
cmake -S . -B build-fuzz -G Ninja "${STRATA_FUZZ_CMAKE_ARGS[@]}" >/dev/null
cmake --build build-fuzz -j "$(strata_jobs)" --target "${targets[@]}"

mkdir -p "$out/logs" "$out/crashes"
# Stack traces with file:line need llvm-symbolizer, given by its real path (the
# sanitizers do not take Debian's versioned symlinks for one).
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ]; then
  for s in llvm-symbolizer-16 llvm-symbolizer; do
    if command -v "$s" >/dev/null; then export ASAN_SYMBOLIZER_PATH=$(readlink -f "$(command -v "$s")"); break; fi
  done
fi
# One harness: its log, then a summary line from libFuzzer's final stats.
run_one() {
  local h=$1 dict=()
  [ -f "fuzz/dict/$h.dict" ] && dict=("-dict=fuzz/dict/$h.dict")
  mkdir -p "$out/corpus/$h"
  local rc=0 keep_going=()
  [ "${STRATA_FUZZ_KEEP_GOING:-0}" = 1 ] && keep_going=(-fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1)
  "build-fuzz/fuzz/fuzz_$h" "${keep_going[@]}" -max_len=4096 -timeout=10 -malloc_limit_mb=64 -rss_limit_mb=2048 \
    -print_final_stats=1 "${dict[@]}" -max_total_time="$seconds" -artifact_prefix="$out/crashes/$h-" \
    "$out/corpus/$h" "fuzz/corpus/$h" >"$out/logs/$h.log" 2>&1 || rc=$?
  local log="$out/logs/$h.log"
  local execs rate cov ft result=clean
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  if [ ${#keep_going[@]} -gt 0 ]; then  # fork mode: the last status line has the totals
    local last
    last=$(grep -E '^#[0-9]+: cov:' "$log" | tail -1)
    execs=$(echo "$last" | sed -n 's/^#\([0-9]*\):.*/\1/p')
    rate=$(echo "$last" | sed -n 's/.*exec\/s: \([0-9]*\).*/\1/p')
    local crashes
    crashes=$(echo "$last" | sed -n 's/.*oom\/timeout\/crash: \([0-9/]*\).*/\1/p')
    [ "${crashes:-0/0/0}" != "0/0/0" ] && result="oom/timeout/crash ${crashes} (inputs in $out/crashes/)" && rc=1
  fi
  [ "$rc" -ne 0 ] && [ "$result" = clean ] &&
    result="CRASH (exit $rc; $(grep -m1 -o 'Test unit written to .*' "$log" || echo "see $log"))"
  printf '%-20s %6ss %12s %9s/s %7s %7s  %s\n' "$h" "$seconds" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" \
    "$result" >"$out/logs/$h.summary"
  return "$rc"
}

jobs=${STRATA_FUZZ_JOBS:-1}
echo "== fuzzing ${#harnesses[@]} harness(es), $seconds s each, $jobs at a time"
failed=0
running=0
for h in "${harnesses[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || failed=1
    running=$((running - 1))
  fi
  run_one "$h" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || failed=1
  running=$((running - 1))
done

printf '%-20s %7s %12s %11s %7s %7s  %s\n' harness time executions rate cov ft result
for h in "${harnesses[@]}"; do cat "$out/logs/$h.summary"; done
exit "$failed"
