#!/usr/bin/env bash
# End-to-end checks of the `strata` command: a run writes its table, metrics, plot
# and model; runs under mpirun agree with one process; bad options and bad data
# give one clear line and a non-zero exit.
#   strata_cli_test.sh STRATA_BINARY SCRATCH_DIR
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" "$@"

small="users=400,items=100,ratings=8000"

# A run: progress lines (stdout is not a terminal), the table, the files.
"$strata" train mf --synthetic "$small" --epochs 3 --rank 8 --threads 2 --metrics m1.csv --plot m1.svg --save model \
  >train.txt 2>&1 || fail "train exited $?: $(cat train.txt)"
grep -q "^pass 3/3: loss" train.txt || fail "no progress line for pass 3"
grep -q "test_rmse" train.txt || fail "no end-of-run table"
[ "$(grep -vc '^#' m1.csv)" -eq 4 ] || fail "m1.csv should hold a header and 3 rows"
grep -q "^pass,seconds,elapsed,items,items_per_s,loss,train_rmse,test_rmse" m1.csv || fail "m1.csv header"
grep -q "<svg" m1.svg && grep -q "</svg>" m1.svg || fail "m1.svg is not an SVG file"
[ -d model/W ] && [ -d model/H ] || fail "--save wrote no model"

# Two ranks of one thread are two workers, as one rank of two threads: the same plan,
# the same equivalent order, the same losses to the last digit.
"$mpiexec" -np 2 "$strata" train mf --synthetic "$small" --epochs 3 --rank 8 --threads 1 --metrics m2.csv \
  >mpi.txt 2>&1 || fail "mpirun -np 2 train exited $?: $(cat mpi.txt)"
[ "$(grep -c '^pass 3/3' mpi.txt)" -eq 1 ] || fail "rank 1 printed progress too"
grep -v '^#' m1.csv | cut -d, -f6- >l1.txt
grep -v '^#' m2.csv | cut -d, -f6- >l2.txt
cmp -s l1.txt l2.txt || fail "losses of 1x2 and 2x1 differ: $(paste -d' ' l1.txt l2.txt)"

# A process bound to one CPU (as mpirun binds a rank) defaults to one thread, and
# more threads asked for are run but warned about, with the launcher's remedy.
if command -v taskset >/dev/null; then
  taskset -c 0 "$strata" train mf --synthetic "$small" --epochs 1 --rank 8 >bound1.txt 2>&1 ||
    fail "bound run failed: $(cat bound1.txt)"
  grep -q "1 rank(s) x 1 thread(s)" bound1.txt || fail "a process bound to one CPU should default to 1 thread"
  taskset -c 0 "$strata" train mf --synthetic "$small" --epochs 1 --rank 8 --threads 2 >bound2.txt 2>&1 ||
    fail "bound run with 2 threads failed: $(cat bound2.txt)"
  grep -q "2 threads asked for, but this process may run on 1 CPU only.*--bind-to none" bound2.txt ||
    fail "no warning for 2 threads on one CPU: $(cat bound2.txt)"
fi

# The serial program and the forced data-parallel plan run too.
"$strata" train mf --synthetic "$small" --epochs 2 --rank 8 --serial --metrics serial.csv >/dev/null 2>&1 ||
  fail "--serial failed"
"$strata" train mf --synthetic "$small" --epochs 2 --rank 8 --plan data-parallel --clock 500 >dp.txt 2>&1 ||
  fail "--plan data-parallel failed: $(cat dp.txt)"
grep -q "plan: data_parallel" dp.txt || fail "data-parallel run did not say its plan"

# Explain prints the plan of each loop.
"$strata" explain mf --synthetic "$small" --rank 8 --threads 2 >explain.txt 2>&1 || fail "explain failed"
grep -q "strategy: two_d" explain.txt || fail "explain shows no 2-D plan: $(cat explain.txt)"

# plot: several runs on one plot.
"$strata" plot m1.csv serial.csv -o both.svg >/dev/null || fail "plot failed"
[ "$(grep -c "<polyline" both.svg)" -ge 4 ] || fail "both.svg should have two curves per panel"

# Bad options and bad data: one line, non-zero exit.
expect_error 2 "unknown command" frobnicate
expect_error 2 "unknown app 'nope'" train nope --synthetic x=1
expect_error 2 "unknown option '--bogus'" train mf --synthetic "$small" --bogus 1
expect_error 2 "exactly one of --data" train mf
expect_error 2 "unknown --synthetic colour" train mf --synthetic colour=red
expect_error 2 "--epochs: 'many' is not an integer" train mf --synthetic "$small" --epochs many
expect_error 2 "--plan: unknown strategy 'sideways' (expected auto, serial, 1d, 2d, 2d-skewed, groups or data-parallel)" \
  train mf --synthetic "$small" --plan sideways
expect_error 1 "--rank: 0 is outside" train mf --synthetic "$small" --rank 0
expect_error 1 "cannot open rating file 'missing.txt'" train mf --data missing.txt
# A diverging run (a step size far too large) stops after the first non-finite pass:
# exit 1, one line naming the figure and the pass, the passes so far in the metrics
# file, and no model saved.
expect_error 1 "training diverged: loss is .*nan after pass 1; stopped, nothing saved" \
  train mf --synthetic "$small" --epochs 5 --rank 8 --lr 5 --metrics diverged.csv --save diverged-model
[ "$(grep -c '^1,' diverged.csv)" -eq 1 ] && ! grep -q '^2,' diverged.csv || fail "diverged.csv: $(cat diverged.csv)"
[ ! -e diverged-model ] || fail "a diverged model was saved"
printf '1 2 3.5\n2 x 4\n' >bad.txt
expect_error 1 "bad.txt:2:" train mf --data bad.txt
expect_error 1 "bad.csv" plot bad.csv -o x.svg
"$mpiexec" -np 2 "$strata" train mf --data bad.txt >out.txt 2>err.txt
[ $? -ne 0 ] || fail "mpirun with a bad file exited 0"
[ "$(grep -c 'bad.txt:2:' err.txt)" -eq 1 ] || fail "mpirun with a bad file: want one error line, got: $(cat err.txt)"

finish
