# Helpers the end-to-end tests of the `strata` command share; source it after setting
# `strata` (the binary) and entering the scratch directory.

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
