#!/usr/bin/env bash
# `strata train word2vec`, end to end: a text file and a held-out file, the vectors
# --save writes in word2vec's text format, one thread equal to the serial program pass
# by pass, two ranks close to it, both steps, and clear errors for bad input.
#   word2vec_options_test.sh STRATA_BINARY SCRATCH_DIR
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" "$@"

# 3,000 sentences of 6 to 14 words: topical words w0..w299 near a sentence's centre
# on a ring, a third of the words one of ten common ones; 2,700 to train, 300 held out.
awk 'BEGIN { srand(3);
       for (i = 0; i < 3000; ++i) { c = int(300 * rand()); n = 6 + int(9 * rand()); line = "";
         for (k = 0; k < n; ++k) {
           if (rand() < 0.33) w = "the" int(10 * rand() * rand());
           else w = "w" ((c + int(8 * rand()) - 4 + 300) % 300);
           line = line (k ? " " : "") w }
         print line } }' >all.txt
head -n 2700 all.txt >train.txt
tail -n 300 all.txt >test.txt

"$strata" train word2vec --data train.txt --test test.txt --epochs 3 --dim 20 --threads 2 --save model \
  --metrics t.csv >train_out.txt 2>&1 || fail "train exited $?: $(cat train_out.txt)"
grep -q "train.txt: 2700 lines, vocabulary 310" train_out.txt || fail "the run does not say what it read: $(head -3 train_out.txt)"
grep -q "plan: data_parallel over sentence" train_out.txt || fail "no data-parallel plan: $(grep plan: train_out.txt)"
for f in vectors.txt out.txt; do
  [ "$(head -1 model/$f)" = "310 20" ] || fail "model/$f header: $(head -1 model/$f)"
  [ "$(wc -l <model/$f)" -eq 311 ] || fail "model/$f has $(wc -l <model/$f) lines for 310 words"
  tail -n +2 model/$f | awk 'NF != 21 { bad = 1 } END { exit bad }' || fail "model/$f: a line is not a word and 20 values"
done
[ "$(sed -n 2p model/vectors.txt | cut -d' ' -f1)" = "the0" ] || fail "the most frequent word is not first: $(sed -n 2p model/vectors.txt | cut -c1-40)"
col=$(grep -v '^#' t.csv | head -1 | tr ',' '\n' | grep -n '^test_loss$' | cut -d: -f1)
lcol=$(grep -v '^#' t.csv | head -1 | tr ',' '\n' | grep -n '^loss$' | cut -d: -f1)
awk -F, -v c="$col" '!/^#/ && NR > 1 && $1 ~ /^[0-9]+$/ { if (prev != "" && $c >= prev) bad = 1; prev = $c } END { exit bad }' t.csv ||
  fail "the held-out loss does not fall pass by pass: $(cut -d, -f1,"$col" t.csv | tr '\n' ' ')"

# One thread computes what the serial program computes, every pass, to the printed digit;
# for both steps.
for update in window pair; do
  "$strata" train word2vec --data train.txt --test test.txt --epochs 2 --dim 20 --update $update --serial \
    --metrics serial_$update.csv >serial.txt 2>&1 || fail "serial: $(cat serial.txt)"
  "$strata" train word2vec --data train.txt --test test.txt --epochs 2 --dim 20 --update $update --threads 1 \
    --metrics one_$update.csv >one.txt 2>&1 || fail "1 thread: $(cat one.txt)"
  [ "$(grep -v '^#' one_$update.csv | cut -d, -f1,"$lcol-$col")" = "$(grep -v '^#' serial_$update.csv | cut -d, -f1,"$lcol-$col")" ] ||
    fail "$update: 1 thread differs from serial: $(paste -d'|' one_$update.csv serial_$update.csv | tail -2)"
done

# Two ranks, a clock every 20 sentences of a rank: the held-out loss within 5 % of the
# serial program's.
"$mpiexec" -np 2 "$strata" train word2vec --data train.txt --test test.txt --epochs 2 --dim 20 --threads 1 \
  --clock 20 --metrics np2.csv >np2.txt 2>&1 || fail "2 ranks: $(cat np2.txt)"
grep -q "a clock every 20 sentences a worker" np2.txt || fail "2 ranks' clock: $(sed -n 2p np2.txt)"
b=$(tail -1 serial_window.csv | cut -d, -f"$col")
a=$(tail -1 np2.csv | cut -d, -f"$col")
awk -v a="$a" -v b="$b" 'BEGIN { exit !(a < b * 1.05 && a > b * 0.95) }' ||
  fail "2 ranks' held-out loss $a is not within 5 % of serial's $b"

# A replica per thread: two threads give the same losses on every run, the rows
# learn (the held-out loss within 5 % of the serial program's), and on one thread it
# is the serial program.
check_thread_replicas word2vec test_loss 0.05 --data train.txt --test test.txt --epochs 2 --dim 20

# A run resumed from its checkpoints restores every pass and saves the same vectors;
# the planted ring's similarity of a restored pass is not known (nan), the rest are
# the checkpointed run's.
run=(train word2vec --synthetic sentences=3000,words=300,common=10 --epochs 3 --dim 16 --threads 2)
"$strata" "${run[@]}" --checkpoint-dir ck --save first --metrics first.csv >first.txt 2>&1 || fail "checkpointed run: $(cat first.txt)"
"$strata" "${run[@]}" --checkpoint-dir ck --resume ck --save again --metrics again.csv >again.txt 2>&1 ||
  fail "resumed run: $(cat again.txt)"
grep -q "pass 3/3: .*restored from the checkpoint" again.txt || fail "the resumed run trained again: $(grep pass again.txt)"
cmp -s first/vectors.txt again/vectors.txt && cmp -s first/out.txt again/out.txt || fail "the resumed run saved other vectors"
[ "$(grep -v '^#' again.csv | tail -n +2 | cut -d, -f6,7)" = "$(grep -v '^#' first.csv | tail -n +2 | cut -d, -f6,7)" ] ||
  fail "restored losses differ: $(paste -d'|' first.csv again.csv | tail -1)"
grep -v '^#' again.csv | tail -n +2 | cut -d, -f8 | grep -qv '^nan$' && fail "a restored pass has a similarity: $(cat again.csv)"

# Bad options and files: one line each, naming what is wrong.
expect_error 1 "--update: 'cbow' is not one of" train word2vec --data train.txt --update cbow
expect_error 1 "--replicas: 'core' is not one of" train word2vec --data train.txt --replicas core
expect_error 1 "--min-count: 0 is outside" train word2vec --data train.txt --min-count 0
expect_error 1 "--test: cannot open text file 'missing.txt'" train word2vec --data train.txt --test missing.txt
expect_error 1 "--holdout and --test both" train word2vec --data train.txt --test test.txt --holdout 0.2
expect_error 1 "--plan groups: word2vec writes its word vectors through a Buffer" train word2vec --data train.txt --plan groups
expect_error 1 "no training word occurs 100000 times or more" train word2vec --data train.txt --min-count 100000
printf 'good line\nbad\0line\n' >nul.txt
expect_error 1 "nul.txt:2" train word2vec --data nul.txt
expect_error 1 "is a directory, not a regular file" train word2vec --data model

finish
