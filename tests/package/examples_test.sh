#!/usr/bin/env bash
# examples/ built as an outside project against an installed Strata (find_package, a
# prefix from `cmake --install`), then run on 1 and 2 ranks: both report the same
# training RMSE, and the checkpoint round trip reads back what it wrote.
#   examples_test.sh PREFIX SOURCE_DIR SCRATCH
set -uo pipefail
prefix=$1
src=$2
dir=$3
source "$(dirname "$0")/package_test_lib.sh"
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" || exit 1

configure "$src/examples" build -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release || finish
"${CMAKE_COMMAND:-cmake}" --build build >build.txt 2>&1 || { fail "build: $(tail -30 build.txt)"; finish; }

# 300 users x 40 items, every user rating every third item, a user part plus an item
# part (what the baseline fits): deterministic, no generator needed.
awk 'BEGIN { for (u = 0; u < 300; u++) for (i = u % 3; i < 40; i += 3)
              printf "%d %d %d\n", u, i, 1 + u % 3 + i % 3 }' >ratings.txt
for np in 1 2; do
  "$mpiexec" -np "$np" build/rating-baseline ratings.txt --sweeps 3 --checkpoint "ckpt$np" >"np$np.txt" 2>&1 ||
    fail "$np rank(s): exit $? $(tail -5 "np$np.txt")"
  grep -q "on $np rank(s)" "np$np.txt" || fail "$np rank(s): $(head -3 "np$np.txt")"
  grep -q "read back: identical" "np$np.txt" || fail "$np rank(s): no checkpoint round trip: $(tail -3 "np$np.txt")"
  grep -o "sweep 3: training RMSE [0-9.]*" "np$np.txt" >"rmse$np.txt" ||
    fail "$np rank(s): no RMSE: $(tail -3 "np$np.txt")"
done
cmp -s rmse1.txt rmse2.txt || fail "RMSE differs: $(cat rmse1.txt) on 1 rank, $(cat rmse2.txt) on 2"
# The fit beats predicting the mean by far.
mean=$(grep -o "RMSE of predicting the mean: [0-9.]*" np1.txt | grep -o "[0-9.]*$")
fit=$(grep -o "[0-9.]*$" rmse1.txt)
awk -v m="$mean" -v f="$fit" 'BEGIN { exit !(f > 0 && f < m / 2) }' || fail "training RMSE $fit, mean's $mean"
cat rmse1.txt
finish
