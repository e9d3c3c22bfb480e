#!/usr/bin/env bash
# mf's memory across ranks (#27): on 4 ranks each rank holds its share of the ratings
# and of the user factors, not the whole problem. The `strata` command reports the
# peak resident set of its largest rank; what the data add over a near-empty run is
# compared between 1 rank and 4 (1M ratings, rank 64, 2026-11-27: 32-33 %, and 40 %
# before R and W were built split as the plan splits them, which the bound catches).
#   mf_memory_test.sh STRATA_BINARY SCRATCH_DIR
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" "$@"

# 1M ratings of 50,000 users and 5,000 items, and a near-empty file of the same ids.
awk 'BEGIN { srand(5); for (k = 0; k < 1000000; ++k)
       printf "%d %d %.1f\n", int(rand() * 50000), int(rand() * 5000), 1 + int(rand() * 9) / 2 }' |
  sort -u -k1,2 >big.txt
head -200 big.txt >small.txt

peak() {  # peak NP FILE: the run's peak memory in MB
  "$mpiexec" --oversubscribe -np "$1" "$strata" train mf --data "$2" --rank 64 --threads 1 --epochs 1 >"run_$1_${2%.txt}.txt" 2>&1 ||
    { fail "mf on $1 rank(s), $2: exit $? ($(tail -3 "run_$1_${2%.txt}.txt"))"; echo 0; return; }
  sed -n 's/^peak memory: \([0-9.]*\) MB.*/\1/p' "run_$1_${2%.txt}.txt"
}
one=$(peak 1 big.txt); one_base=$(peak 1 small.txt)
four=$(peak 4 big.txt); four_base=$(peak 4 small.txt)
echo "peak MB: 1 rank $one (near-empty $one_base), 4 ranks $four (near-empty $four_base)"
awk -v a="$one" -v a0="$one_base" -v b="$four" -v b0="$four_base" \
  'BEGIN { share = (b - b0) / (a - a0); printf "the data on 4 ranks: %.0f %% of 1 rank'"'"'s\n", 100 * share; exit !(a > a0 && share <= 0.36) }' ||
  fail "a rank of 4 holds more than 36 % of what the data cost one rank"
finish
