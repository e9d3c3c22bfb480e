#!/usr/bin/env bash
# Strata as a subproject: docs/using.md's add_subdirectory project (parent/), with the
# source tree linked in as parent/strata, configured with no build type. Checks that
# Strata leaves the parent alone and builds what a program needs only:
# * the parent's CMAKE_BUILD_TYPE stays empty (Strata chooses one only when top level);
# * the parent's hello.cpp compiles without Strata's -Wall/-Werror/-march flags, as
#   C++20 (Strata::strata's compile feature), while Strata's own files keep -Wall;
# * no tests, benchmarks, apps, command or examples are configured;
# then builds hello and runs it on 2 ranks.
#   subproject_test.sh SOURCE_DIR SCRATCH
set -uo pipefail
src=$1
dir=$2
source "$(dirname "$0")/package_test_lib.sh"
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" || exit 1
extract_snippets "$src/docs/using.md" . || { fail "no snippets in docs/using.md"; finish; }
cp hello/hello.cpp parent/ && ln -s "$src" parent/strata || exit 1

configure parent build -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DSTRATA_WERROR=ON || finish
grep -qx 'CMAKE_BUILD_TYPE:STRING=' build/CMakeCache.txt ||
  fail "the parent's build type was set: $(grep '^CMAKE_BUILD_TYPE' build/CMakeCache.txt)"

# compile_commands.json: one {"directory", "command", "file", "output"} object per file.
command_of() { grep '"command"' build/compile_commands.json | grep -- "$1" | head -1; }
hello=$(command_of "/hello.cpp")
[ -n "$hello" ] || fail "no compile command for hello.cpp"
for flag in -Wall -Wextra -Werror -march= -Wno-restrict; do
  case "$hello" in *" $flag"*) fail "hello.cpp inherits Strata's $flag: $hello" ;; esac
done
case "$hello" in *-std=c++20*|*-std=gnu++20*) ;; *) fail "hello.cpp is not compiled as C++20: $hello" ;; esac
library=$(command_of "strata.dir/")
case "$library" in *" -Wall"*" -Werror"*) ;; *) fail "Strata's files lost their warning flags: $library" ;; esac

targets=$(ninja -C build -t targets all)
for t in unit_tests mpi_tests strata_apps strata-cli strata_python rating-baseline strata-mf-bench; do
  grep -q "^$t:" <<<"$targets" && fail "the subproject configures $t"
done

ninja -C build hello >build.txt 2>&1 || { fail "build: $(tail -30 build.txt)"; finish; }
"$mpiexec" -np 2 build/hello >run.txt 2>&1 || fail "run: exit $? $(tail -5 run.txt)"
grep -q "^2 rank(s): sum of squares 332833500$" run.txt || fail "wrong output: $(tail -5 run.txt)"
finish
