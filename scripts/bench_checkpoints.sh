#!/usr/bin/env bash
# Checkpoint overhead and resume time (issue #6): `strata train mf` at rank 64 on the
# synthetic 10M-rating set, 2 ranks x 1 thread, EPOCHS passes (default 20), with a
# checkpoint every 5 passes and without. Runs alternate A B B A ... (PAIRS pairs,
# default 3) because on a shared or virtual machine a run's speed depends on what ran
# just before it. Prints each run's summed time of passes 2..EPOCHS (pass 1 includes
# planning), the medians and their difference per pass, the checkpoint line of the
# last checkpointed run, and the wall time of a run resumed from its checkpoints.
# Never fails on time.
#   scripts/bench_checkpoints.sh          (PAIRS=3 EPOCHS=20 CKDIR=<scratch dir>)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh
strata_ensure_packages
strata_mpi_env
strata_build build-release -DCMAKE_BUILD_TYPE=Release -DSTRATA_BUILD_TESTS=OFF -DSTRATA_ARCH="${STRATA_ARCH:-x86-64-v2}"
PAIRS=${PAIRS:-3}
EPOCHS=${EPOCHS:-20}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
ck=${CKDIR:-$scratch/ck}
strata=build-release/tools/strata/strata
run=(train mf --synthetic users=200000,items=20000,ratings=10000000,rank=5 --epochs "$EPOCHS" --rank 64 --lr 0.01
     --threads 1)
echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores; checkpoints in $ck"

# one MODE: runs once (with or without checkpoints) and prints the summed pass times.
one() {
  local extra=()
  rm -rf "$ck"
  [ "$1" = with ] && extra=(--checkpoint-dir "$ck" --checkpoint-every 5)
  mpirun -np 2 "$strata" "${run[@]}" "${extra[@]}" >"$scratch/$1.txt" 2>&1
  awk '$1 ~ /^[0-9]+$/ && NF >= 6 && $1 >= 2 {s += $5} END {printf "%.3f\n", s}' "$scratch/$1.txt"
}
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

: >"$scratch/with.sums"
: >"$scratch/without.sums"
for p in $(seq 1 "$PAIRS"); do
  if [ $((p % 2)) -eq 1 ]; then order="with without"; else order="without with"; fi
  for mode in $order; do
    s=$(one "$mode")
    echo "$s" >>"$scratch/$mode.sums"
    echo "pair $p, $mode checkpoints: passes 2-$EPOCHS took $s s"
  done
done
with=$(median <"$scratch/with.sums")
without=$(median <"$scratch/without.sums")
awk -v a="$with" -v b="$without" -v n=$((EPOCHS - 1)) 'BEGIN {
  printf "median of passes 2-%d: %.3f s with checkpoints, %.3f s without: %+.4f s per pass (%+.1f %% of a pass)\n",
         n + 1, a, b, (a - b) / n, 100 * (a - b) / b }'
one with >/dev/null
grep '^checkpoints' "$scratch/with.txt"
start=$(date +%s.%N)
mpirun -np 2 "$strata" "${run[@]}" --checkpoint-dir "$ck" --checkpoint-every 5 --resume "$ck" >"$scratch/resumed.txt" 2>&1
echo "resumed from the last checkpoint: $(grep -o 'resumed from.*' "$scratch/resumed.txt" | head -1); wall" \
  "$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN {printf "%.1f", e - s}') s (data generation included)"
