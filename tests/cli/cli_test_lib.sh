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
