#!/usr/bin/env bash
# What including Strata costs a program's compile: bench/compile_time/three_loops.cpp (three
# small parallel_for bodies, including strata/strata.hpp) against plain_loops.cpp (the same
# loops over std::vector, with <fmt/format.h>), compiled alternately with `g++ -std=c++20
# -O2 -c`. Prints each run's seconds and peak memory, then the medians and their ratio.
# Measures only; passes or fails on nothing.
#   scripts/compile_time.sh [RUNS]   (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
mpi_flags=$(mpicxx --showme:compile 2>/dev/null || true)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(g++ --version | head -1)"
for ((k = 1; k <= runs; ++k)); do
  for prog in three_loops plain_loops; do
    /usr/bin/time -f "%e %M" -o "$out/time" \
      g++ -std=c++20 -O2 -Iinclude $mpi_flags -c "bench/compile_time/$prog.cpp" -o "$out/$prog.o"
    read -r secs kb <"$out/time"
    echo "$prog $secs $kb" | tee -a "$out/all" | awk '{printf "run: %-12s %6.2f s %6.0f MB\n", $1, $2, $3 / 1024}'
  done
done
median() { grep "^$1 " "$out/all" | awk '{print $2}' | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
strata=$(median three_loops)
plain=$(median plain_loops)
awk -v s="$strata" -v p="$plain" 'BEGIN {printf "median: three_loops %.2f s, plain_loops %.2f s, ratio %.1fx\n", s, p, s / p}'
