# The word2vec part of scripts/bench_peers.sh (sourced there; bench_word2vec runs it):
# fastText's skipgram (Debian's fasttext, installed when missing; -minn 0 -maxn 0: whole
# words only, as word2vec) on 2 threads, the serial twin (`--serial`) and `strata train
# word2vec` on 1 and 2 threads and on 2 ranks x 1 thread, on the same text files,
# alternately, with the same dimension, window, negatives, sub-sampling, step size,
# minimum count and epochs, and fastText's noise distribution (unigram^0.5: Strata's
# --noise-power 0.5). Every tool's final vectors are measured by one formula
# (scripts/lib/word2vec_peer.py: the held-out pairs' negative-sampling loss, its
# negatives drawn from the training file's unigram^0.75, and the agreement of each
# word's 10 nearest neighbours with fastText's over the 1,000 most frequent words).
#
# Data sets (W2V_SETS, default "kjv generated"):
#   kjv        scripts/datasets.sh kjv's verses, a verse a line: every 10th line held out
#   generated  strata-gen-text: W2V_SENTENCES (500000) sentences of the planted ring
#              corpus (apps/word2vec/problem.hpp), 10 % held out
# Settings: W2V_EPOCHS (5), W2V_DIM (100), W2V_STRATA (more options for Strata's runs).
# Writes OUT_DIR/word2vec_runs.csv (set,tool,rep,wall_s,peak_mb),
# OUT_DIR/word2vec_quality.csv (set,tool,rep,heldout_loss,agreement,steady_words_s) and
# each run's log, metrics and vectors, and prints a table of the medians.

bench_word2vec() {
  local missing=()
  command -v fasttext >/dev/null || missing+=(fasttext)
  /usr/bin/python3 -c 'import numpy' 2>/dev/null || missing+=(python3-numpy)
  install_peer_packages "${missing[@]}"
  echo "set,tool,rep,wall_s,peak_mb" >"$out/word2vec_runs.csv"
  echo "set,tool,rep,heldout_loss,agreement,steady_words_s" >"$out/word2vec_quality.csv"
  for set in ${W2V_SETS:-kjv generated}; do
    w2v_data "$set"
    for rep in $(seq 1 "$reps"); do
      w2v_fasttext "$set" "$rep"
      w2v_strata "$set" "$rep" serial --serial
      w2v_strata "$set" "$rep" strata-1t "--threads 1"
      w2v_strata "$set" "$rep" strata-2t "--threads 2"
      w2v_strata "$set" "$rep" strata-2r "--threads 1" mpirun -np 2
    done
    w2v_table "$set"
  done
}

w2v_data() {
  local set=$1 dir=$out/word2vec-$1
  [ -s "$dir/test.txt" ] && return 0
  mkdir -p "$dir"
  case "$set" in
    kjv)
      "$root/scripts/datasets.sh" kjv >/dev/null
      awk 'NR % 10 != 0' "$root/data/real/kjv/sentences.txt" >"$dir/train.txt"
      awk 'NR % 10 == 0' "$root/data/real/kjv/sentences.txt" >"$dir/test.txt" ;;
    generated)
      "$build/bench/strata-gen-text" --train "$dir/train.txt" --test "$dir/test.txt" \
        --sentences "${W2V_SENTENCES:-500000}" >/dev/null ;;
    *) echo "bench_peers.sh: unknown word2vec set '$set' (kjv, generated)" >&2; exit 2 ;;
  esac
}

# The final vectors' held-out loss and neighbour agreement: "LOSS,AGREEMENT".
w2v_quality() {  # set in.vec out.txt
  local dir=$out/word2vec-$1 loss agree=nan
  loss=$(/usr/bin/python3 "$root/scripts/lib/word2vec_peer.py" loss "$dir/train.txt" "$dir/test.txt" "$2" "$3" 5 5 |
    cut -d' ' -f2)
  [ -s "$dir/fasttext.vec" ] &&
    agree=$(/usr/bin/python3 "$root/scripts/lib/word2vec_peer.py" agree "$2" "$dir/fasttext.vec" | cut -d' ' -f2)
  echo "$loss,$agree"
}

w2v_fasttext() {  # set rep
  local set=$1 rep=$2 dir=$out/word2vec-$1 log
  log=$out/$set-fasttext-$rep.log
  /usr/bin/time -v fasttext skipgram -input "$dir/train.txt" -output "$dir/fasttext" -dim "${W2V_DIM:-100}" -ws 5 \
    -neg 5 -epoch "${W2V_EPOCHS:-5}" -minCount 5 -minn 0 -maxn 0 -t 1e-4 -lr 0.05 -thread 2 -verbose 0 >"$log" 2>&1
  fasttext dump "$dir/fasttext.bin" output >"$dir/fasttext.out"
  local tokens wall
  tokens=$(wc -w <"$dir/train.txt")
  wall=$(time_v_figures "$log" | cut -d, -f1)
  echo "$set,fasttext-2t,$rep,$(w2v_quality "$set" "$dir/fasttext.vec" "$dir/fasttext.out"),$(awk -v t="$tokens" \
    -v e="${W2V_EPOCHS:-5}" -v w="$wall" 'BEGIN { printf "%.0f", t * e / w }')" >>"$out/word2vec_quality.csv"
  peer_record word2vec "$set" fasttext-2t "$rep" "$log"
}

w2v_strata() {  # set rep label "options" [launcher...]
  local set=$1 rep=$2 label=$3 how=$4 dir=$out/word2vec-$1 log csv
  shift 4
  log=$out/$set-$label-$rep.log
  csv=$out/$set-$label-$rep.csv
  # shellcheck disable=SC2086  # how and W2V_STRATA are lists of options
  /usr/bin/time -v "$@" "$strata" train word2vec --data "$dir/train.txt" --test "$dir/test.txt" \
    --epochs "${W2V_EPOCHS:-5}" --dim "${W2V_DIM:-100}" --noise-power 0.5 $how ${W2V_STRATA:-} --metrics "$csv" \
    --save "$dir/$label" >"$log" 2>&1
  # Steady speed: the median words/s of the passes after the first (which plans), or
  # the first's when it is the only one.
  local steady skip=3
  [ "${W2V_EPOCHS:-5}" -eq 1 ] && skip=2
  steady=$(grep -v '^#' "$csv" | tail -n +"$skip" | cut -d, -f5 | sort -g |
    awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
  echo "$set,$label,$rep,$(w2v_quality "$set" "$dir/$label/vectors.txt" "$dir/$label/out.txt"),$steady" \
    >>"$out/word2vec_quality.csv"
  peer_record word2vec "$set" "$label" "$rep" "$log"
}

# Medians over the rounds per tool.
w2v_table() {
  local train=$out/word2vec-$1/train.txt
  echo "== word2vec, $1 ($(wc -l <"$train") training lines, $(wc -w <"$train") words;" \
    "${W2V_EPOCHS:-5} epochs; $(nproc) cores)"
  /usr/bin/python3 - "$out" "$1" "$(wc -w <"$train")" "${W2V_EPOCHS:-5}" <<'PY'
import csv, statistics, sys
out, set_, words, epochs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
runs = [r for r in csv.DictReader(open(f"{out}/word2vec_runs.csv")) if r["set"] == set_]
quality = [r for r in csv.DictReader(open(f"{out}/word2vec_quality.csv")) if r["set"] == set_]
tools = list(dict.fromkeys(r["tool"] for r in runs))
med = lambda xs: statistics.median(xs) if xs else float("nan")
print(f"{'tool':14} {'wall s':>7} {'peak MB':>8} {'words/s, whole':>15} {'words/s, steady':>16} {'held-out loss':>14} "
      f"{'agreement':>10}")
for t in tools:
    wall = med([float(r["wall_s"]) for r in runs if r["tool"] == t])
    q = [r for r in quality if r["tool"] == t]
    print(f"{t:14} {wall:7.2f} {med([float(r['peak_mb']) for r in runs if r['tool'] == t]):8.0f} "
          f"{words * epochs / wall / 1e6:13.2f} M {med([float(r['steady_words_s']) for r in q]) / 1e6:14.2f} M "
          f"{med([float(r['heldout_loss']) for r in q]):14.4f} {med([float(r['agreement']) for r in q]):10.3f}")
PY
}
