# What the end-to-end tests of the `strata` command share. A test script sources it
# with its own arguments, STRATA_BINARY SCRATCH_DIR:
#   source "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" "$@"
# which sets `strata` (the binary), `dir` (the scratch directory, emptied and entered)
# and `mpiexec` (MPIEXEC, or mpirun).
strata=$1
dir=$2
mpiexec=${MPIEXEC:-mpirun}
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" || exit 1

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect_error CODE PATTERN ARGS...: exits with CODE, stderr is one line matching PATTERN.
expect_error() {
  local code=$1 pattern=$2
  shift 2
  "$strata" "$@" >out.txt 2>err.txt
  local rc=$?
  [ "$rc" -eq "$code" ] || fail "strata $*: exit $rc, wanted $code ($(head -c 300 err.txt))"
  [ "$(wc -l <err.txt)" -eq 1 ] || fail "strata $*: stderr has $(wc -l <err.txt) lines: $(head -c 600 err.txt)"
  grep -q -- "$pattern" err.txt || fail "strata $*: stderr '$(head -c 300 err.txt)' lacks '$pattern'"
}

# csv_column FILE NAME: the number of column NAME in a --metrics file (its header follows a comment line).
csv_column() { grep -v '^#' "$1" | head -1 | tr ',' '\n' | grep -n "^$2\$" | cut -d: -f1; }

# check_thread_replicas APP METRIC TOLERANCE ARGS...: `--replicas thread` on a Hybrid
# app. Two runs on 2 threads print the same columns from the training loss to the
# held-out METRIC every pass (a replica per thread makes a run deterministic) and say
# how they clock, the last held-out METRIC is within
# TOLERANCE (a fraction) of the serial program's, one thread equals the serial program
# pass by pass (one worker has nothing to merge), the run says so, and SSP refuses it.
check_thread_replicas() {
  local app=$1 metric=$2 tolerance=$3
  shift 3
  "$strata" train "$app" "$@" --serial --metrics rs.csv >rs.txt 2>&1 || fail "$app serial: $(cat rs.txt)"
  local k
  for k in 1 2; do
    "$strata" train "$app" "$@" --threads 2 --replicas thread --metrics r$k.csv >r.txt 2>&1 ||
      fail "$app --replicas thread: $(cat r.txt)"
  done
  grep -q "Hybrid, a replica per thread, a clock every" r.txt ||
    fail "$app --replicas thread: the run does not say so: $(sed -n 2p r.txt)"
  local m l
  m=$(csv_column r1.csv "$metric")
  l=$(csv_column r1.csv loss)
  [ -n "$m" ] && [ -n "$l" ] || fail "$app: no $metric or loss column in $(grep -v '^#' r1.csv | head -1)"
  local cols="$l-$m"  # the training loss to the metric (the same columns in every file: tools/strata/main.cpp)
  [ "$l" -lt "$m" ] || cols="$l,$m"
  [ "$(grep -v '^#' r1.csv | cut -d, -f1,"$cols")" = "$(grep -v '^#' r2.csv | cut -d, -f1,"$cols")" ] ||
    fail "$app: two runs with a replica per thread differ: $(paste -d'|' r1.csv r2.csv | tail -2)"
  local a b
  a=$(tail -1 r1.csv | cut -d, -f"$m")
  b=$(tail -1 rs.csv | cut -d, -f"$(csv_column rs.csv "$metric")")
  awk -v a="$a" -v b="$b" -v t="$tolerance" 'BEGIN { d = a - b; if (d < 0) d = -d; s = b < 0 ? -b : b; exit !(d <= t * s) }' ||
    fail "$app: held-out $metric $a with a replica per thread is not within $tolerance of serial's $b"
  "$strata" train "$app" "$@" --threads 1 --replicas thread --metrics r1t.csv >r.txt 2>&1 ||
    fail "$app --replicas thread, 1 thread: $(cat r.txt)"
  [ "$(grep -v '^#' r1t.csv | cut -d, -f1,"$cols")" = "$(grep -v '^#' rs.csv | cut -d, -f1,"$cols")" ] ||
    fail "$app: one thread with --replicas thread differs from serial: $(paste -d'|' r1t.csv rs.csv | tail -2)"
  expect_error 1 "--replicas thread goes with --consistency hybrid" train "$app" "$@" --replicas thread --consistency ssp
}

# The test's last line: says how it went and exits 0 only if nothing failed.
finish() {
  local name
  name=$(basename "$0" .sh)
  if [ "$failures" -eq 0 ]; then
    echo "$name: all passed"
    exit 0
  fi
  echo "$name: $failures failure(s)"
  exit 1
}
