#!/usr/bin/env bash
# Benchmarks: loading throughput of a 10M-line rating file, the cost of
# repartitioning a 10M-element array, and one SGD matrix-factorisation pass with
# parallel_for against its serial twin. Prints medians; never fails on time.
#   scripts/bench.sh            (REPEAT=5 by default; RUNS=3 processes per setting)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh
strata_ensure_packages
strata_mpi_env
REPEAT=${REPEAT:-5}
# The default build is x86-64-v2; the vector kernels pick AVX2/AVX-512 at run time
# anyway. STRATA_ARCH=x86-64-v3 scripts/bench.sh compiles everything else for AVX2.
strata_build build-release -DCMAKE_BUILD_TYPE=Release -DSTRATA_BUILD_TESTS=OFF -DSTRATA_ARCH="${STRATA_ARCH:-x86-64-v2}"
mkdir -p data
file=data/ratings-10M.txt
if [ ! -s "$file" ]; then
  echo "== generating $file (10M ratings, 200,000 users x 20,000 items, skewed items)"
  build-release/bench/strata-gen-ratings --out "$file" --lines 10000000 --users 200000 --items 20000
fi
cat "$file" > /dev/null  # warm the page cache: the figures are for parsing, not the disk
echo "== load: 1 rank x 1 thread"
build-release/bench/strata-load-bench "$file" --repeat "$REPEAT" --strata-threads=1
echo "== load: 1 rank x 2 threads"
build-release/bench/strata-load-bench "$file" --repeat "$REPEAT" --strata-threads=2
echo "== load: 2 ranks x 1 thread"
mpirun -np 2 build-release/bench/strata-load-bench "$file" --repeat "$REPEAT" --strata-threads=1
echo "== repartition range -> hash: 2 ranks x 1 thread"
mpirun -np 2 build-release/bench/strata-repartition-bench --elements 10000000 --repeat "$REPEAT" --strata-threads=1
echo "== SGD matrix factorisation, rank 64: 1 rank x 1 thread, 1 rank x 2 threads, 2 ranks x 1 thread"
build-release/bench/strata-mf-bench "$file" --rank 64 --passes "$REPEAT" --strata-threads=1
build-release/bench/strata-mf-bench "$file" --rank 64 --passes "$REPEAT" --strata-threads=2
mpirun -np 2 build-release/bench/strata-mf-bench "$file" --rank 64 --passes "$REPEAT" --strata-threads=1
