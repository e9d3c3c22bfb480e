# Helpers the tests of Strata as an installed package share (tests/package/); source it.
# Outside projects are configured with these: Ninja, and ccache set up as Strata's own
# build sets it up (CMakeLists.txt), so a rerun of the suite compiles nothing again.

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
finish() {
  [ "$failures" -eq 0 ] && echo "PASS" && exit 0
  echo "$failures failure(s)"
  exit 1
}
mpiexec=${MPIEXEC:-mpirun}

# extract_snippets DOC DIR: writes each block of DOC marked `<!-- file: PATH -->` to
# DIR/PATH and each marked `<!-- run: NAME -->` to DIR/run/NAME.sh (docs/using.md).
extract_snippets() {
  awk -v dir="$2" '
    /^<!-- (file|run): [^ ]+ -->$/ {
      out = ($2 == "file:") ? dir "/" $3 : dir "/run/" $3 ".sh"
      system("mkdir -p \"$(dirname \"" out "\")\""); want = 1; next }
    want && /^```/ { want = 0; inside = 1; printf "" > out; next }
    inside && /^```$/ { inside = 0; close(out); n++; next }
    inside { print > out }
    END { if (n == 0) exit 1 }' "$1"
}

# configure SRC BUILD [cmake args...]: an outside project, through ccache when installed.
configure() {
  local src=$1 build=$2
  shift 2
  local launcher=()
  if command -v ccache >/dev/null 2>&1; then
    local env="CCACHE_BASEDIR=$ccache_base;CCACHE_NOHASHDIR=1"
    launcher=("-DCMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_COMMAND:-cmake};-E;env;$env;ccache")
  fi
  "${CMAKE_COMMAND:-cmake}" -S "$src" -B "$build" -G Ninja "${launcher[@]}" "$@" >"$build.configure.txt" 2>&1 ||
    { fail "configure $src: $(tail -20 "$build.configure.txt")"; return 1; }
}
ccache_base=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
