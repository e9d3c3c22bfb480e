#!/usr/bin/env bash
# The `strata` command against hostile or unlucky input (issue #29): integer options
# out of range are refused naming the option and its range (never narrowed); sizes
# far beyond the machine's memory are refused naming the option before anything is
# allocated; an allocation that fails anyway ends in one line, not an abort; data
# files are read by the library's parsers, so what they refuse is refused naming the
# file and line, and --data that is not a regular file is refused at once; and a
# symlink planted where the command writes a file (metrics, plot, model, the
# checkpoints' latest.tmp, the record) is replaced, never written through.
#   hostile_input_test.sh STRATA_BINARY SCRATCH_DIR
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" "$@"

small="users=400,items=100,ratings=8000"

# Integer options: checked as 64-bit against their range, never wrapped round.
expect_error 2 "--epochs: 3000000000 is outside the allowed range \[1, 2147483647\]" \
  train mf --synthetic "$small" --epochs 3000000000
expect_error 2 "--threads: 2147483648 is outside the allowed range \[1, 1024\]" \
  train mf --synthetic "$small" --threads 2147483648
expect_error 2 "--threads: 4294967297 is outside" train mf --synthetic "$small" --threads 4294967297
expect_error 2 "--threads: 100000 is outside the allowed range \[1, 1024\]" \
  train mf --synthetic "$small" --threads 100000
expect_error 2 "--threads: 0 is outside" train mf --synthetic "$small" --threads 0
expect_error 2 "--checkpoint-every: 4294967297 is outside" \
  train mf --synthetic "$small" --checkpoint-dir ck0 --checkpoint-every 4294967297
expect_error 2 "--seed: 99999999999999999999 is outside" train mf --synthetic "$small" --seed 99999999999999999999
expect_error 2 "--epochs: -1 is outside" train mf --synthetic "$small" --epochs -1
expect_error 1 "--rank: 4294967297 is outside" train mf --synthetic "$small" --rank 4294967297
expect_error 1 "--synthetic users: 99999999999999999999 is outside" train mf --synthetic users=99999999999999999999
export STRATA_THREADS=100000
expect_error 1 "STRATA_THREADS: expected an integer in \[1, 1024\], got '100000'" train mf --synthetic "$small"
unset STRATA_THREADS
[ ! -e ck0 ] || fail "a refused command created its checkpoint directory"

# Sizes from options, checked before anything is allocated.
expect_error 1 "--synthetic ratings=1000000000000 is too large" train mf --synthetic ratings=1000000000000
expect_error 1 "--synthetic users=10000000000 x items=10000000000 is too large" \
  train mf --synthetic users=10000000000,items=10000000000,ratings=10
expect_error 1 "--synthetic users=100000000000 is too large" train mf --synthetic users=100000000000,ratings=10
# More users than 32-bit model rows hold (or, on a machine with less memory, too large).
expect_error 1 "at most 2147483647 of each (model rows are 32-bit numbers)\|is too large" \
  train mf --synthetic users=2200000000,items=1,ratings=1 --rank 1
expect_error 1 "--synthetic samples=1000000000000 is too large" train slr --synthetic samples=1000000000000
expect_error 1 "--synthetic features=2000000000 is too large\|--synthetic samples" \
  train slr --synthetic samples=10,features=2000000000,nnz=1 --epochs 1
expect_error 1 "--synthetic docs=2000000000 with doclen=1000000 is too large" \
  train lda --synthetic docs=2000000000,doclen=1000000
expect_error 1 "--synthetic words=2000000000 with topics=100000 is too large" \
  train lda --synthetic docs=10,words=2000000000,topics=100000
expect_error 1 "--synthetic ratings=1000000000000 is too large" explain mf --synthetic ratings=1000000000000

# Sizes from files: a docword header or a LIBSVM feature id far beyond memory is refused
# naming the file and the size, before the model is allocated.
printf '2147483647\n10\n2\n1 1 2\n2 3 1\n' >huge.docword
expect_error 1 "huge.docword: 2147483647 documents with 20 topics is too large" train lda --data huge.docword
printf '1 2147483647:1\n0 1:1\n' >huge.svm
expect_error 1 "huge.svm: feature ids up to 2147483647 is too large" train slr --data huge.svm

# An allocation that fails all the same (here under a 1 GiB address-space limit) is
# one line and exit 1, not std::terminate's abort.
before=$failures
(
  ulimit -v 1048576
  expect_error 1 "out of memory\|is too large" train mf --synthetic users=100000,items=100000,ratings=300000000
  [ "$failures" -eq "$before" ]
) || failures=$((failures + 1))

# Data files: nothing hostile turns into other data. Ids of 2^63 and more were
# saturated (merging users); a first line holding a letter was dropped as a header;
# 1e300 became inf; a cut last line was read as a shorter value.
printf '9223372036854775808 1 3\n9223372036854775809 2 4\n' >ids.txt
expect_error 1 "ids.txt:1: bad user id '9223372036854775808'" train mf --data ids.txt --epochs 1
printf '1 1 nan\n2 2 3\n' >nan.txt
expect_error 1 "nan.txt:1: value is not a finite number: '1 1 nan'" train mf --data nan.txt --epochs 1
printf '2 2 3\n1 1 1e300\n' >huge.txt
expect_error 1 "huge.txt:2: bad rating '1e300'" train mf --data huge.txt --epochs 1
printf '1 1 3\n2 2 3\n3 1 2.5e-' >cut.txt
expect_error 1 "cut.txt:3: bad rating '2.5e-'" train mf --data cut.txt --epochs 1
"$mpiexec" -np 2 "$strata" train mf --data cut.txt --epochs 1 >out.txt 2>err.txt
[ $? -ne 0 ] && [ "$(grep -c 'cut.txt:3:' err.txt)" -eq 1 ] || fail "mpirun, cut file: $(cat err.txt)"
printf '1 1 3e0\n2 2 3\n3 1 4\n' >exponent.txt
"$strata" train mf --data exponent.txt --epochs 1 --rank 2 --holdout 0 >run.txt 2>&1 &&
  grep -q "3 ratings of 3 users" run.txt || fail "'1 1 3e0' on line 1 was not read as a rating: $(cat run.txt)"
# The command and the library read alike: LIBSVM query ids are read, docword pairs
# given twice are refused (they were summed).
printf '1 qid:1 1:1\n0 qid:1 2:1\n' >ranked.svm
"$strata" train slr --data ranked.svm --epochs 1 >run.txt 2>&1 && grep -q "2 samples" run.txt ||
  fail "slr refused qid: tokens: $(cat run.txt)"
printf '3\n4\n3\n1 2 1\n2 2 1\n1 2 5\n' >docword.twice.txt
expect_error 1 "docword.twice.txt:6: index (1, 2) appears again (first on line 4)" \
  train lda --data docword.twice.txt --epochs 1

# --data must be a regular file. A FIFO hung the command forever (it waited for a
# writer), a pipe was read twice (lda looked at its first lines, then read it again),
# a directory gave "error reading". Killed after 20 s: exit 124 means it hung.
refused() {
  local pattern=$1
  shift
  timeout 20 "$strata" "$@" >out.txt 2>err.txt </dev/null
  local rc=$?
  [ "$rc" -eq 1 ] || fail "strata $*: exit $rc, wanted 1 ($(head -c 300 err.txt))"
  [ "$(wc -l <err.txt)" -eq 1 ] && grep -q -- "$pattern" err.txt || fail "strata $*: stderr '$(cat err.txt)'"
}
mkfifo data.fifo
mkdir data.dir
for app in mf slr lda; do
  refused "^strata: --data: 'data.fifo' is a FIFO or pipe, not a regular file" train $app --data data.fifo
  refused "^strata: --data: 'data.dir' is a directory, not a regular file" train $app --data data.dir
  refused "^strata: --data: '/dev/null' is a character device" train $app --data /dev/null
done
printf '3\n4\n2\n1 1 1\n1 2 1\n' | timeout 20 "$strata" train lda --data /dev/stdin >out.txt 2>err.txt
[ $? -eq 1 ] && grep -q "^strata: --data: '/dev/stdin' is a FIFO or pipe" err.txt ||
  fail "a pipe as --data: $(cat err.txt)"

# Planted symlinks: each points at a file the run must leave alone.
printf 'precious\n' >victim.txt
untouched() { [ "$(cat victim.txt)" = "precious" ] || fail "$1: the symlink's target was overwritten"; }
regular() { [ -f "$1" ] && [ ! -L "$1" ] || fail "$1 is not a regular file"; }

ln -s "$PWD/victim.txt" m.csv.tmp
ln -s "$PWD/victim.txt" m.svg.tmp
ln -s "$PWD/victim.txt" m.svg
"$strata" train mf --synthetic "$small" --epochs 2 --rank 4 --metrics m.csv --plot m.svg >run.txt 2>&1 ||
  fail "train with planted metrics links exited $?: $(cat run.txt)"
untouched "--metrics/--plot"
regular m.csv && grep -q "^pass," m.csv || fail "m.csv was not written"
regular m.svg && grep -q "</svg>" m.svg || fail "m.svg was not written"

mkdir ck
ln -s "$PWD/victim.txt" ck/latest.tmp
"$strata" train mf --synthetic "$small" --epochs 2 --rank 4 --checkpoint-dir ck >run.txt 2>&1 ||
  fail "train with a planted ck/latest.tmp exited $?: $(cat run.txt)"
untouched "--checkpoint-dir"
regular ck/latest && grep -q "^call-" ck/latest || fail "ck/latest was not written: $(cat ck/latest)"
[ ! -e ck/latest.tmp ] && [ ! -L ck/latest.tmp ] || fail "ck/latest.tmp was left behind"

mkdir rec
ln -s "$PWD/victim.txt" rec/record.txt
ln -s "$PWD/victim.txt" rec/record.txt.tmp
"$strata" train mf --synthetic "$small" --epochs 2 --rank 4 --threads 1 --record rec >run.txt 2>&1 ||
  fail "train with a planted rec/record.txt exited $?: $(cat run.txt)"
untouched "--record"
regular rec/record.txt && [ "$(head -1 rec/record.txt)" = "strata-record 2" ] || fail "rec/record.txt was not written"
grep -q "^call 2 " rec/record.txt || fail "rec/record.txt lacks the calls: $(cat rec/record.txt)"
"$strata" train mf --synthetic "$small" --epochs 2 --rank 4 --threads 1 --replay rec >run.txt 2>&1 ||
  fail "the record of a run with planted links does not replay: $(cat run.txt)"

mkdir lda-model
ln -s "$PWD/victim.txt" lda-model/model.txt
ln -s "$PWD/victim.txt" lda-model/model.txt.tmp
"$strata" train lda --synthetic docs=50,words=100,topics=4,doclen=20 --epochs 1 --save lda-model >run.txt 2>&1 ||
  fail "lda --save with planted links exited $?: $(cat run.txt)"
untouched "--save (lda)"
regular lda-model/model.txt && grep -q "^topics 4" lda-model/model.txt || fail "lda-model/model.txt was not written"

finish
