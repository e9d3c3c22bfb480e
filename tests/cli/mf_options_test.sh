#!/usr/bin/env bash
# `strata train mf`'s LIBMF options and `strata predict mf`, end to end: a validation
# file measured each pass, a saved model predicting a file line by line (the same
# RMSE as the run's last pass), cross-validation, the losses and their measures, and
# clear errors for bad values and for ids the model lacks.
#   mf_options_test.sh STRATA_BINARY SCRATCH_DIR
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" "$@"

# Ratings with sparse ids (renumbered on reading): a training file and a validation
# file of other pairs, one of them of a user the training file lacks.
awk 'BEGIN { srand(3); for (u = 0; u < 300; ++u) for (i = 0; i < 40; ++i) if (rand() < 0.5)
       printf "%d %d %.1f\n", 1000 + 7 * u, 50 + 3 * i, 1 + ((u * i) % 9) / 2 }' >all.txt
awk 'NR % 10 != 0' all.txt >train.txt
awk 'NR % 10 == 0' all.txt >test.txt
echo "99999 50 3" >>test.txt

# --test FILE: measured each pass; the unseen user's line is left out and counted.
"$strata" train mf --data train.txt --test test.txt --epochs 4 --rank 8 --threads 2 --save model --metrics t.csv \
  >train_out.txt 2>&1 || fail "train --test exited $?: $(cat train_out.txt)"
grep -q -- "--test test.txt: $(($(wc -l <test.txt) - 1)) ratings (1 more left out" train_out.txt ||
  fail "the run does not say what --test held: $(head -3 train_out.txt)"
[ -f model/mf.txt ] && [ -f model/user_ids.txt ] && [ -f model/item_ids.txt ] ||
  fail "--save wrote no mf.txt / id files"

# On 2 ranks each reads a share of both files (load_share): the same ratings, counted
# alike, and the same model as 1 rank x 2 threads (both run the plan's order), so the
# same held-out RMSE at every pass, to rounding (the sums are added in another order).
"$mpiexec" -np 2 "$strata" train mf --data train.txt --test test.txt --epochs 4 --rank 8 --threads 1 \
  --metrics t2.csv >train2_out.txt 2>&1 || fail "train --test on 2 ranks exited $?: $(cat train2_out.txt)"
grep -q -- "--test test.txt: $(($(wc -l <test.txt) - 1)) ratings (1 more left out" train2_out.txt ||
  fail "on 2 ranks the run does not say what --test held: $(head -3 train2_out.txt)"
[ "$(sed -n 2p train_out.txt)" = "$(sed -n 2p train2_out.txt)" ] ||
  fail "2 ranks read other ratings: $(sed -n 2p train2_out.txt) vs $(sed -n 2p train_out.txt)"
paste -d, <(grep '^[0-9]' t.csv) <(grep '^[0-9]' t2.csv) | awk -F, '{
    a = $8; b = $16; if ((a - b) ^ 2 > 1e-12 * a * a) bad = bad " pass " $1 ": " a " vs " b }
  END { if (NR != 4) bad = bad " " NR " passes"; if (bad) { print bad; exit 1 } }' >t2_diff.txt ||
  fail "test_rmse on 2 ranks differs from 1 rank x 2 threads:$(cat t2_diff.txt)"

# predict: one line per line of the file; its RMSE is the run's last test_rmse.
sed '$d' test.txt >known.txt
"$strata" predict mf --model model --data known.txt --out pred.txt >pred_out.txt 2>&1 ||
  fail "predict exited $?: $(cat pred_out.txt)"
[ "$(wc -l <pred.txt)" -eq "$(wc -l <known.txt)" ] ||
  fail "predict wrote $(wc -l <pred.txt) lines for $(wc -l <known.txt)"
last=$(tail -1 t.csv | cut -d, -f8)
got=$(sed -n 's/.*rmse \([0-9.]*\) over.*/\1/p' pred_out.txt)
awk -v a="$last" -v b="$got" 'BEGIN { exit !((a - b) ^ 2 < 1e-10) }' ||
  fail "predict's rmse $got is not the run's $last"
# Pairs without ratings: predictions and no measure. Under mpirun: the same file.
cut -d' ' -f1,2 known.txt >pairs.txt
"$mpiexec" -np 2 "$strata" predict mf --model model --data pairs.txt --out pred2.txt >pred2_out.txt 2>&1 ||
  fail "predict under mpirun exited $?: $(cat pred2_out.txt)"
cmp -s pred.txt pred2.txt || fail "predictions of pairs differ from those of rated lines"
grep -q rmse pred2_out.txt && fail "a measure without ratings: $(cat pred2_out.txt)"
expect_error 1 "test.txt:$(wc -l <test.txt): user id 99999 is not in the model" \
  predict mf --model model --data test.txt --out x.txt
[ ! -e x.txt ] || fail "predict left a partial --out file after a bad line"
expect_error 1 "cannot open 'nomodel/mf.txt'" predict mf --model nomodel --data pairs.txt --out x.txt
expect_error 2 "strata predict mf needs --out FILE" predict mf --model model --data pairs.txt
expect_error 1 "app lda has no predict" predict lda --model model --data pairs.txt --out x.txt

# Cross-validation: each fold's figure, then their mean, which the table's last row shows.
"$strata" train mf --data all.txt --folds 3 --epochs 3 --rank 8 --threads 2 --metrics cv.csv >cv.txt 2>&1 ||
  fail "--folds exited $?: $(cat cv.txt)"
[ "$(grep -c '^fold [123]/3:' cv.txt)" -eq 3 ] || fail "--folds 3 did not report three folds: $(cat cv.txt)"
mean=$(sed -n 's/^cross-validation: mean test_rmse over 3 folds after pass 3: //p' cv.txt)
awk -v a="$mean" -v b="$(tail -1 cv.csv | cut -d, -f8)" 'BEGIN { exit !((a - b) ^ 2 < 1e-10) }' ||
  fail "the cross-validated mean $mean is not the table's"

# Other losses and their measures; --nmf as a switch; user,item weights.
"$strata" train mf --data train.txt --test test.txt --epochs 2 --rank 8 --loss absolute --nmf --l1 0.01,0.02 \
  --l2 0.05,0.01 --metrics abs.csv >abs.txt 2>&1 || fail "absolute loss exited $?: $(cat abs.txt)"
grep -q "^pass,.*,loss,test_mae$" abs.csv || fail "absolute loss: $(grep pass, abs.csv)"
grep -q "nmf=yes" abs.csv || fail "--nmf given bare did not switch NMF on"
"$strata" train mf --data train.txt --test test.txt --epochs 2 --rank 8 --loss logistic --step plain --lr 0.01 \
  --metrics log.csv >log.txt 2>&1 || fail "logistic loss exited $?: $(cat log.txt)"
grep -q "^pass,.*,loss,test_logloss,test_accuracy$" log.csv || fail "logistic loss: $(grep pass, log.csv)"

# Bad values name the option.
expect_error 1 "--l2: -1 is outside" train mf --data train.txt --l2 -1
expect_error 1 "--l1: 'x' is not a number" train mf --data train.txt --l1 0.1,x
expect_error 1 "--loss: 'cubic' is not one of" train mf --data train.txt --loss cubic
expect_error 1 "--step: 'fast' is not one of" train mf --data train.txt --step fast
expect_error 1 "--folds: 1 fold leaves nothing" train mf --data train.txt --folds 1
expect_error 1 "--folds measures on each fold in turn" train mf --data train.txt --folds 3 --test test.txt
expect_error 1 "--holdout and --test" train mf --data train.txt --test test.txt --holdout 0.2
expect_error 1 "--test: cannot open rating file 'none.txt'" train mf --data train.txt --test none.txt
printf '1000 50 3\n1007 x 2\n' >badtest.txt
expect_error 1 "badtest.txt:2:" train mf --data train.txt --test badtest.txt

finish
