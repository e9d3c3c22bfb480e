#!/usr/bin/env bash
# Strata's whole test suite, from a fresh Debian 12 machine:
#   scripts/test.sh
# installs missing packages (apt-get), builds with warnings as errors, runs every
# test with ctest (multi-rank tests under mpirun with 1, 2 and 4 ranks), then builds
# and runs the unit tests and the 2-rank runs again under AddressSanitizer +
# UndefinedBehaviorSanitizer (ctest labels `unit` and `np2`, see tests/CMakeLists.txt),
# and last builds the libFuzzer harnesses (fuzz/, clang-16) and runs each a few
# seconds on its seed corpus and beyond (ctest label `fuzz`; scripts/fuzz.sh fuzzes longer).
#   STRATA_SANITIZE=0 scripts/test.sh   skips the sanitizer pass
#   STRATA_FUZZ=0 scripts/test.sh       skips the fuzz pass
# Compiles through ccache when installed (the cache is shared by every clone on the machine).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh
strata_ensure_packages
strata_mpi_env
strata_ccache_setup

# Both builds carry line tables only (-g1): enough for backtraces and sanitizer reports,
# and a third less compile time than full debug info (-g). Configure a build folder of
# your own for a debugger's view of variables.
echo "== build (RelWithDebInfo, -Werror)"
strata_build build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTRATA_WERROR=ON "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
echo "== tests"
(cd build && ctest --output-on-failure -j "$(strata_jobs)")

if [ "${STRATA_SANITIZE:-1}" != "0" ]; then
  echo "== build (AddressSanitizer + UndefinedBehaviorSanitizer): what the unit tests and 2-rank runs need"
  STRATA_BUILD_TARGET=strata_sanitizer_targets \
    strata_build build-asan -DCMAKE_BUILD_TYPE=Debug -DSTRATA_SANITIZE=ON -DSTRATA_BUILD_BENCH=OFF -DSTRATA_WERROR=ON \
      -DCMAKE_CXX_FLAGS_DEBUG=-g1
  echo "== unit tests and 2-rank runs under sanitizers"
  (cd build-asan && ctest --output-on-failure -j "$(strata_jobs)" -L 'unit|np2')
fi

if [ "${STRATA_FUZZ:-1}" != "0" ]; then
  echo "== build (clang-16, libFuzzer + AddressSanitizer + UndefinedBehaviorSanitizer): the fuzz harnesses"
  STRATA_BUILD_TARGET=strata_fuzz_targets strata_build build-fuzz "${STRATA_FUZZ_CMAKE_ARGS[@]}"
  echo "== fuzz harnesses, a few seconds each"
  (cd build-fuzz && ctest --output-on-failure -j "$(strata_jobs)" -L fuzz)
fi
