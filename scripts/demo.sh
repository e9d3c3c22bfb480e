#!/usr/bin/env bash
# Strata's main job on a built-in default, from a fresh Debian 12 machine:
#   scripts/demo.sh
# installs missing packages, builds, and trains the matrix-factorisation app
# (`strata train mf`) on a generated data set: 1M ratings of 50,000 users on 5,000
# items with skewed item popularity, drawn from a planted low-rank model. It prints
# the progress per pass, the end-of-run table (loss, held-out RMSE, time,
# throughput) and where the metrics, the convergence plot and the model went.
#   RANKS=4 RATINGS=5000000 EPOCHS=20 scripts/demo.sh   to change the defaults
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh
strata_ensure_packages
strata_mpi_env

RANKS=${RANKS:-2}
RATINGS=${RATINGS:-1000000}
EPOCHS=${EPOCHS:-10}
THREADS=${THREADS:-$(( $(strata_jobs) / RANKS > 0 ? $(strata_jobs) / RANKS : 1 ))}
strata_build build-release -DCMAKE_BUILD_TYPE=Release -DSTRATA_BUILD_TESTS=OFF
out=data/demo
mkdir -p "$out"
echo "== strata train mf on $RANKS rank(s) x $THREADS thread(s)"
mpirun -np "$RANKS" build-release/tools/strata/strata train mf \
  --synthetic "users=50000,items=5000,ratings=$RATINGS,rank=5" --epochs "$EPOCHS" --rank 64 --lr 0.01 \
  --threads "$THREADS" --metrics "$out/mf.csv" --plot "$out/mf.svg" --save "$out/model"
