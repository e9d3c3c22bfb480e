#!/usr/bin/env bash
# Strata's main job on a built-in default, from a fresh Debian 12 machine:
#   scripts/demo.sh
# installs missing packages, builds, generates a synthetic rating file (1M ratings
# with skewed item popularity), loads it as a DistArray on 2 MPI ranks, fits a
# baseline predictor (global mean + user and item biases) and prints its training
# RMSE per sweep, the most-rated items, and a checkpoint round trip.
#   RANKS=4 RATINGS=5000000 scripts/demo.sh   to change the defaults
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh
strata_ensure_packages
strata_mpi_env

RANKS=${RANKS:-2}
RATINGS=${RATINGS:-1000000}
strata_build build-release -DCMAKE_BUILD_TYPE=Release -DSTRATA_BUILD_TESTS=OFF
mkdir -p data
file="data/demo-ratings-${RATINGS}.txt"
if [ ! -s "$file" ]; then
  echo "== generating $file"
  build-release/bench/strata-gen-ratings --out "$file" --lines "$RATINGS" --users 50000 --items 5000
fi
echo "== rating-baseline on $RANKS rank(s)"
mpirun -np "$RANKS" build-release/examples/rating-baseline "$file" --sweeps 4 --checkpoint data/demo-checkpoint
