#!/usr/bin/env bash
# `strata train slr`'s options and `strata predict slr`, end to end: a validation file
# measured each pass, early stopping and the kept best model, the model in liblinear's
# format read back by `strata predict slr` (the kept pass's held-out loss, to the
# printed digit) and by liblinear's own predict (the same probabilities), a model
# liblinear trained read by `strata predict slr`, and clear errors for bad options.
#   slr_options_test.sh STRATA_BINARY SCRATCH_DIR
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" "$@"

# A planted linear model over 300 features, 3,000 samples of about 12 binary features
# each, labels -1/+1 (and a copy spelled 0/1); 2,500 to train on, 500 held out.
awk 'BEGIN { srand(11); for (f = 1; f <= 300; ++f) w[f] = (rand() - 0.5) * 2;
       for (i = 0; i < 3000; ++i) { delete on; m = -0.3; line = "";
         for (k = 0; k < 12; ++k) { f = int(300 * rand() * rand()) + 1; on[f] = 1 }
         for (f = 1; f <= 300; ++f) if (f in on) { line = line " " f ":1"; m += w[f] }
         printf "%s%s\n", (rand() < 1 / (1 + exp(-m)) ? "+1" : "-1"), line } }' >all.svm
head -n 2500 all.svm >train.svm
tail -n 500 all.svm >test.svm
sed 's/^-1/0/; s/^+1/1/' train.svm >train01.svm

# --test FILE, --patience and --keep best: a fast rate without regularisation overfits
# these 2,500 samples within a few passes, so training stops early and --save keeps
# the pass with the lowest held-out log-loss.
"$strata" train slr --data train.svm --test test.svm --epochs 30 --lr 0.5 --patience 2 --threads 2 --save model \
  --metrics t.csv >train_out.txt 2>&1 || fail "train --test exited $?: $(cat train_out.txt)"
grep -q -- "--test test.svm: 500 samples" train_out.txt || fail "the run does not say what --test held: $(head -3 train_out.txt)"
grep -q "stopped after pass" train_out.txt || fail "--patience 2 did not stop 30 passes: $(tail -5 train_out.txt)"
passes=$(($(grep -vc "^#" t.csv) - 1))
[ "$passes" -lt 30 ] || fail "--patience: $passes passes ran"
# The lowest test_loss of the metrics file (a comment line, the header, a line a pass), and its pass.
col=$(grep -v '^#' t.csv | head -1 | tr ',' '\n' | grep -n '^test_loss$' | cut -d: -f1)
best=$(grep -v '^#' t.csv | awk -F, -v c="$col" 'NR > 1 && (b == "" || $c < b) { b = $c; p = $1 } END { print p, b }')
grep -q "kept pass ${best% *}'s model" train_out.txt || fail "kept pass is not the best ($best): $(grep kept train_out.txt)"
[ -f model/model.liblinear ] && [ -d model/w ] || fail "--save wrote no model.liblinear or w/"
grep -q '^label 1 -1$' model/model.liblinear || fail "model.liblinear labels: $(head -4 model/model.liblinear)"
grep -q '^bias 1$' model/model.liblinear || fail "model.liblinear bias: $(head -5 model/model.liblinear)"

# predict: liblinear's -b 1 output, and the kept model's held-out loss.
"$strata" predict slr --model model --data test.svm --out pred.txt >pred_out.txt 2>&1 ||
  fail "predict exited $?: $(cat pred_out.txt)"
[ "$(head -1 pred.txt)" = "labels 1 -1" ] || fail "predict header: $(head -1 pred.txt)"
[ "$(wc -l <pred.txt)" -eq 501 ] || fail "predict wrote $(wc -l <pred.txt) lines for 500 samples"
loss=$(sed -n 's/.*log-loss \([0-9.]*\).*/\1/p' pred_out.txt)
awk -v a="$loss" -v b="${best#* }" 'BEGIN { exit !(a - b < 1e-6 && b - a < 1e-6) }' ||
  fail "predict's log-loss $loss is not the kept pass's held-out $best"

# liblinear reads the model and predicts the same; strata reads liblinear's model.
if command -v liblinear-predict >/dev/null; then
  liblinear-predict -b 1 test.svm model/model.liblinear ll.txt >ll_out.txt 2>&1 || fail "liblinear-predict: $(cat ll_out.txt)"
  paste -d' ' pred.txt ll.txt | awk 'NR == 1 { if ($2 != $5 || $3 != $6) exit 1; next }
      { if ($1 != $4) exit 1; d = $2 - $5; if (d > 1e-5 || d < -1e-5) exit 1 }' ||
    fail "liblinear's predictions of our model differ: $(paste -d' ' pred.txt ll.txt | head -3)"
  liblinear-train -s 0 -c 1 -B 1 -q train01.svm ll.model >/dev/null || fail "liblinear-train failed"
  sed 's/^-1/0/; s/^+1/1/' test.svm >test01.svm
  liblinear-predict test01.svm ll.model ll01.txt >ll01_out.txt
  "$strata" predict slr --model ll.model --data test01.svm --out p01.txt >p01_out.txt 2>&1 ||
    fail "predict with liblinear's model: $(cat p01_out.txt)"
  ours=$(sed -n 's/.*accuracy \([0-9.]*\).*/\1/p' p01_out.txt)
  theirs=$(sed -n 's/Accuracy = \([0-9.]*\)%.*/\1/p' ll01_out.txt)
  awk -v a="$ours" -v b="$theirs" 'BEGIN { d = a * 100 - b; exit !(d < 1e-3 && d > -1e-3) }' ||
    fail "accuracy with liblinear's model: strata $ours, liblinear $theirs %"
  [ "$(tail -n +2 p01.txt | cut -d' ' -f1)" = "$(cat ll01.txt)" ] || fail "labels differ from liblinear-predict's"
else
  echo "liblinear-predict not installed: the cross-tool checks did not run"
  failures=$((failures + 1))
fi

# --resume with --keep best: the restored passes' models are not in the checkpoint, so
# the kept model is the best of the passes this run trained, and the run says so.
"$strata" train slr --data train.svm --test test.svm --epochs 2 --lr 0.5 --threads 2 --checkpoint-dir ck \
  >ck.txt 2>&1 || fail "checkpointed run: $(cat ck.txt)"
"$strata" train slr --data train.svm --test test.svm --epochs 5 --lr 0.5 --threads 2 --checkpoint-dir ck --resume ck \
  --save resumed >resumed.txt 2>&1 || fail "resumed run: $(cat resumed.txt)"
grep -q "of passes 3 to 5 (the passes before were restored" resumed.txt ||
  fail "resumed --keep best: $(grep -i kept resumed.txt)"

# 0/1 labels are written back as they were spelled; L1 gives zeros and says L1R_LR.
"$strata" train slr --data train01.svm --epochs 3 --l1 5 --save model01 >t01.txt 2>&1 || fail "0/1 labels: $(cat t01.txt)"
grep -q '^label 1 0$' model01/model.liblinear || fail "0/1 labels written as: $(grep label model01/model.liblinear)"
grep -q '^solver_type L1R_LR$' model01/model.liblinear || fail "--l1 model's solver: $(head -1 model01/model.liblinear)"
# (without L1 none of the 297 weights is 0: measured 0, 34, 79 and 138 for --l1 0, 2, 5, 10)
[ "$(grep -c '^0 $' model01/model.liblinear)" -gt 50 ] || fail "--l1 5 left fewer than 50 zero weights"

# Two ranks: the same data, a clock across ranks; the held-out loss close to one rank's.
"$mpiexec" -np 2 "$strata" train slr --data train.svm --test test.svm --epochs 3 --threads 1 --metrics np2.csv \
  >np2.txt 2>&1 || fail "2 ranks: $(cat np2.txt)"
"$strata" train slr --data train.svm --test test.svm --epochs 3 --serial --metrics serial.csv >serial.txt 2>&1 ||
  fail "serial: $(cat serial.txt)"
a=$(tail -1 np2.csv | cut -d, -f"$col") b=$(tail -1 serial.csv | cut -d, -f"$col")
awk -v a="$a" -v b="$b" 'BEGIN { exit !(a < b * 1.03 && a > b * 0.97) }' ||
  fail "2 ranks' held-out loss $a is not within 3 % of serial's $b"

# Bad options and files: one line each, naming what is wrong.
expect_error 1 "--l1 needs a step that shrinks" train slr --data train.svm --step adarevision --consistency ssp --l1 1
expect_error 1 "--staleness 2 needs --consistency ssp" train slr --data train.svm --staleness 2
expect_error 1 "Hybrid cannot fold: add --consistency ssp" train slr --data train.svm --step adarevision
expect_error 1 "--patience stops on the held-out loss" train slr --data train.svm --holdout 0 --patience 3
expect_error 1 "--test: cannot open LIBSVM file 'missing.svm'" train slr --data train.svm --test missing.svm
expect_error 1 "--holdout and --test both" train slr --data train.svm --test test.svm --holdout 0.2
expect_error 1 "--keep: 'first'" train slr --data train.svm --keep first
expect_error 1 "'nomodel' is neither a directory holding model.liblinear nor" predict slr --model nomodel --data test.svm --out x.txt
printf 'solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 2\nbias -1\nw\n0.5 \nx \n' >bad.model
expect_error 1 "bad.model:8" predict slr --model bad.model --data test.svm --out x.txt
[ ! -e x.txt ] || fail "predict left an --out file after a bad model"
printf '+1 1:1\n+1 2:1 1:1\n' >bad.svm
expect_error 1 "bad.svm:2" predict slr --model model --data bad.svm --out x.txt

# A replica per thread (--replicas thread): deterministic, close to serial, one thread equal to it.
check_thread_replicas slr test_loss 0.05 --data train.svm --test test.svm --epochs 4

finish
