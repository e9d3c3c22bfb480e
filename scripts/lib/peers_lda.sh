# The lda part of scripts/bench_peers.sh (sourced there; bench_lda runs it): WarpLDA
# (built from WARPLDA_DIR into OUT_DIR/warplda-build; see lda_build_warplda) on 2
# OpenMP threads and `strata train lda` with the SparseLDA sampler and with the
# Metropolis-Hastings one (`--sampler mh`, its default cycles) on 2 threads, and the
# SparseLDA sampler on 2 ranks x 1 thread, on the same tokens, alternately, with the
# same priors (LDA_ALPHA per topic, LDA_BETA; WarpLDA's -alpha is their sum over the
# K topics, so it gets K LDA_ALPHA). WarpLDA draws with one Metropolis-Hastings step
# of each kind a token (src/main.cpp builds WarpLDA<1>; its -mh flag does nothing).
# Each is timed as a whole command (/usr/bin/time -v) and each printed perplexity
# stamped with the wall-clock second it was printed at.
#
# Both tools measure the training perplexity exp(-mean log p(w | d)) with the same
# posterior means, theta_dk = (n_dk + alpha) / (n_d + K alpha) and phi_kw = (n_wk +
# beta) / (n_k + V beta): WarpLDA's perplexity() (src/warplda.cpp) sums, per token,
# n_dk (n_wk + beta) / (n_k + V beta) over the document's topics plus alpha times the
# sum of (n_wk + beta) / (n_k + V beta) over all topics, over n_d + K alpha; that is
# Strata's token_likelihood (apps/lda/model.hpp) in another order (WarpLDA's alpha and
# beta are floats). Strata measures after every pass, WarpLDA after iterations 1, 11,
# 21, ... (-perplexity 10: so with LDA_WARP_ITERS 300 its last figure is after 291),
# each inside its timed command. WarpLDA's input is converted to its binary format
# once per set by its `format` (not timed, as Strata's reading of the docword file is).
#
# Data sets (LDA_SETS, default "kjv generated"), each written once as a UCI docword
# file with its vocabulary (Strata's input) and as the same tokens in Yahoo! LDA's
# text format (WarpLDA's), both by scripts/lib/lda_peer.py:
#   kjv        scripts/datasets.sh kjv's chapters, a chapter a line, tokenised as
#              Strata's text loader does (apps/lda/problem.cpp); checked against
#              `strata train lda --data chapters.txt` (documents, words, tokens and the
#              vocabulary itself must agree, or the part stops)
#   generated  LDA_DOCS (20000) documents of LDA_PLANTED (20) planted topics over
#              LDA_WORDS (10000) words (those that occur are kept), LDA_DOCLEN (100)
#              tokens a document on average
# Every run's log is checked for the set's documents, words and tokens (WarpLDA's
# "Bigraph loaded" line, Strata's first info line); a difference stops the part.
# Settings: LDA_TOPICS (K, each in turn, default "20 100"), LDA_PASSES (Strata's, 100),
# LDA_WARP_ITERS (WarpLDA's iterations, 300), LDA_ALPHA (0.1), LDA_BETA (0.01),
# LDA_STRATA (more options for Strata's runs, e.g. "--mh-steps 1").
# Writes OUT_DIR/lda_runs.csv (set,topics,tool,rep,wall_s,peak_mb),
# OUT_DIR/lda_curve.csv (set,topics,tool,rep,pass_or_iter,seconds,perplexity) and each
# run's log (and Strata's metrics), and prints per set and K a table of the medians and
# plots the first round's perplexity against wall-clock seconds (OUT_DIR/lda-SET-kK.svg).

bench_lda() {
  : "${WARPLDA_DIR:?set WARPLDA_DIR to the directory of the WarpLDA sources}"
  local passes=${LDA_PASSES:-100} iters=${LDA_WARP_ITERS:-300} alpha=${LDA_ALPHA:-0.1} beta=${LDA_BETA:-0.01}
  local k
  lda_build_warplda
  echo "set,topics,tool,rep,wall_s,peak_mb" >"$out/lda_runs.csv"
  echo "set,topics,tool,rep,pass_or_iter,seconds,perplexity" >"$out/lda_curve.csv"
  for set in ${LDA_SETS:-kjv generated}; do
    lda_data "$set"
    for k in ${LDA_TOPICS:-20 100}; do
      for rep in $(seq 1 "$reps"); do
        lda_warplda "$set" "$k" "$rep"
        lda_strata "$set" "$k" "$rep" strata-sparse-2t "--sampler sparse --threads 2"
        lda_strata "$set" "$k" "$rep" strata-mh-2t "--sampler mh --threads 2"
        lda_strata "$set" "$k" "$rep" strata-sparse-2r "--sampler sparse --threads 1" mpirun -np 2
      done
      lda_table "$set" "$k"
    done
  done
}

# WarpLDA's warplda and format, built from its sources (read in place, nothing of them
# enters the project) with Debian's gflags and libnuma. The snapshot has no
# CMakeLists.txt (its .gitignore's *.txt kept them out), so this is its CMake build
# written out: the sources of src/CMakeLists.txt, the flags of its top CMakeLists.txt
# (-march=native, C++14, OpenMP) with CMake's Release -O3 -DNDEBUG, and <stdexcept>
# included up front (src/lda.cpp throws std::runtime_error without it; older GCCs'
# <string> brought it in). -march=native is WarpLDA's own choice and stays: the peer is
# built and run on this machine only, at its best (Strata's binaries keep a portable
# baseline with run-time dispatch, CMakeLists.txt).
lda_build_warplda() {
  local wb=$out/warplda-build src=$WARPLDA_DIR/src
  [ -x "$wb/warplda" ] && [ -x "$wb/format" ] && return 0
  install_peer_packages libgflags-dev libnuma-dev
  rm -rf "$wb" && mkdir -p "$wb"
  local flags=(-march=native -std=c++14 -O3 -DNDEBUG -fopenmp -include stdexcept -I"$src")
  local common=(Bigraph AdjList Vocab NumaArray clock)
  echo "building WarpLDA from $WARPLDA_DIR in $wb"
  if ! (cd "$wb" &&
        for f in "${common[@]}" main lda warplda format; do g++ "${flags[@]}" -c "$src/$f.cpp" || exit 1; done &&
        g++ -fopenmp -o warplda main.o lda.o warplda.o "${common[@]/%/.o}" -lgflags -lnuma &&
        g++ -fopenmp -o format format.o "${common[@]/%/.o}" -lgflags -lnuma) >"$wb/build.log" 2>&1; then
    cat "$wb/build.log"
    echo "bench_peers.sh: building WarpLDA failed (log: $wb/build.log)" >&2
    exit 1
  fi
}

# "DOCS WORDS TOKENS" of a log: Strata's first info line ("FILE: D documents [(of L
# lines)], W words, T tokens ...") or WarpLDA's "Bigraph loaded from FILE, D documents,
# W unique tokens, T total words".
lda_counts() {  # log
  sed -n -E -e 's/.*: ([0-9]+) documents( \(of [0-9]+ lines\))?, ([0-9]+) words, ([0-9]+) tokens.*/\1 \3 \4/p' \
    -e 's/.*Bigraph loaded from .*, ([0-9]+) documents, ([0-9]+) unique tokens, ([0-9]+) total words.*/\1 \2 \3/p' \
    "$1" | sed -n 1p
}

# Stops the benchmark unless a log shows the set's documents, words and tokens.
lda_check() {  # set log
  local want got
  want=$(cat "$out/lda-$1/counts")
  got=$(lda_counts "$2")
  [ "$got" = "$want" ] && return 0
  echo "bench_peers.sh: lda, $1: $2 read '${got:-nothing}' (documents words tokens), not '$want' as written" >&2
  exit 1
}

# The set's files in $out/lda-SET: docword.SET.txt and vocab.SET.txt (Strata's input),
# yahoo.txt and WarpLDA's warplda.bin.* made from it, counts ("DOCS WORDS TOKENS"), and
# spec, written last: the settings they were made with (other settings make them anew).
lda_data() {
  local set=$1 dir=$out/lda-$1 spec py=$root/scripts/lib/lda_peer.py
  case "$set" in
    kjv) spec=kjv ;;
    generated) spec="${LDA_DOCS:-20000} ${LDA_WORDS:-10000} ${LDA_PLANTED:-20} ${LDA_DOCLEN:-100}" ;;
    *) echo "bench_peers.sh: unknown lda set '$set' (kjv, generated)" >&2; exit 2 ;;
  esac
  [ "$(cat "$dir/spec" 2>/dev/null)" = "$spec" ] && return 0
  rm -rf "$dir" && mkdir -p "$dir"
  case "$set" in
    kjv)
      "$root/scripts/datasets.sh" kjv >/dev/null
      local chapters=$root/data/real/kjv/chapters.txt
      /usr/bin/python3 "$py" text "$chapters" "$root/apps/lda/problem.cpp" "$dir/docword.kjv.txt" \
        "$dir/vocab.kjv.txt" >"$dir/counts"
      # Strata's own reading of the chapters (one pass: the vocabulary comes with --save).
      "$strata" train lda --data "$chapters" --topics 2 --epochs 1 --threads 1 --top-words 0 \
        --save "$dir/strata-text" >"$dir/strata-text.log" 2>&1
      lda_check kjv "$dir/strata-text.log"
      cmp -s "$dir/strata-text/vocab.txt" "$dir/vocab.kjv.txt" || {
        echo "bench_peers.sh: lda, kjv: the vocabulary of $dir/docword.kjv.txt is not Strata's reading of $chapters" \
          "($dir/strata-text/vocab.txt)" >&2
        exit 1
      } ;;
    generated)
      # shellcheck disable=SC2086  # spec is the generator's four numbers
      /usr/bin/python3 "$py" generate $spec 1 "$dir/docword.generated.txt" "$dir/vocab.generated.txt" \
        >"$dir/counts" ;;
  esac
  /usr/bin/python3 "$py" yahoo "$dir/docword.$set.txt" "$dir/vocab.$set.txt" "$dir/yahoo.txt"
  "$out/warplda-build/format" -input "$dir/yahoo.txt" -prefix "$dir/warplda" >"$dir/format.log" 2>&1 ||
    { cat "$dir/format.log"; exit 1; }
  echo "$spec" >"$dir/spec"
}

lda_warplda() {  # set topics rep
  local set=$1 k=$2 rep=$3 log sum
  log=$out/lda-$set-k$k-warplda-2t-$rep.log
  sum=$(awk -v a="$alpha" -v k="$k" 'BEGIN { print a * k }')
  stamped env OMP_NUM_THREADS=2 /usr/bin/time -v "$out/warplda-build/warplda" --prefix "$out/lda-$set/warplda" \
    --k "$k" --niter "$iters" --alpha "$sum" --beta "$beta" --perplexity 10 --dumpmodel=false --dumpz=false \
    --writeinfo=false >"$log"
  lda_check "$set" "$log"
  # "SECONDS Iteration I, ... perplexity P" (I from 0).
  awk -v set="$set" -v k="$k" -v rep="$rep" '$2 == "Iteration" && $(NF - 1) == "perplexity" {
      printf "%s,%d,warplda-2t,%d,%d,%s,%s\n", set, k, rep, $3 + 1, $1, $NF }' "$log" >>"$out/lda_curve.csv"
  peer_record lda "$set,$k" warplda-2t "$rep" "$log"
}

# Strata's progress lines say when each pass ended, its metrics file the perplexity.
lda_strata() {  # set topics rep label "options" [launcher...]
  local set=$1 k=$2 rep=$3 label=$4 how=$5 log csv col
  shift 5
  log=$out/lda-$set-k$k-$label-$rep.log
  csv=${log%.log}.csv
  # shellcheck disable=SC2086  # how and LDA_STRATA are lists of options
  stamped /usr/bin/time -v "$@" "$strata" train lda --data "$out/lda-$set/docword.$set.txt" --topics "$k" \
    --epochs "$passes" --alpha "$alpha" --beta "$beta" --top-words 0 $how ${LDA_STRATA:-} --metrics "$csv" >"$log"
  lda_check "$set" "$log"
  col=$(grep -v "^#" "$csv" | sed -n 1p | tr ',' '\n' | grep -n '^perplexity$' | cut -d: -f1)
  paste -d' ' <(sed -n 's/^\([0-9.]*\) pass \([0-9]*\)\/.*/\1 \2/p' "$log") \
    <(grep -v '^#' "$csv" | tail -n +2 | cut -d, -f"$col") |
    awk -v set="$set" -v k="$k" -v l="$label" -v rep="$rep" \
      '{ printf "%s,%d,%s,%d,%d,%s,%s\n", set, k, l, rep, $2, $1, $3 }' >>"$out/lda_curve.csv"
  peer_record lda "$set,$k" "$label" "$rep" "$log"
}

# Medians over the rounds per tool: whole command, memory, the last pass (or WarpLDA's
# last measured iteration) and its perplexity, and when each tool first reached
# WarpLDA's final perplexity (the median of its rounds'; "never": not in most rounds);
# then the plot of perplexity against wall-clock seconds (lda-SET-kK.svg).
lda_table() {  # set topics
  local counts
  read -ra counts <"$out/lda-$1/counts"
  echo "== lda, $1, K = $2 (${counts[0]} documents, ${counts[1]} words, ${counts[2]} tokens; Strata $passes passes," \
    "WarpLDA $iters iterations; $(nproc) cores)"
  /usr/bin/python3 - "$out" "$1" "$2" <<'PY'
import csv, statistics, sys
out, set_, k = sys.argv[1], sys.argv[2], sys.argv[3]
runs = [r for r in csv.DictReader(open(f"{out}/lda_runs.csv")) if r["set"] == set_ and r["topics"] == k]
curve = [r for r in csv.DictReader(open(f"{out}/lda_curve.csv")) if r["set"] == set_ and r["topics"] == k]
tools = list(dict.fromkeys(r["tool"] for r in runs))
med = lambda xs: statistics.median(xs) if xs else float("nan")
def per_rep(t):
    reps = {}
    for r in curve:
        if r["tool"] == t:
            reps.setdefault(r["rep"], []).append((int(r["pass_or_iter"]), float(r["seconds"]), float(r["perplexity"])))
    return reps
target = med([v[-1][2] for v in per_rep("warplda-2t").values()])
print(f"{'tool':18} {'wall s':>7} {'peak MB':>8} {'last':>5} {'perplexity':>10} {'s to ' + format(target, '.2f'):>11}")
for t in tools:
    reps = per_rep(t)
    reach = med([min([s for _, s, p in v if p <= target], default=float("inf")) for v in reps.values()])
    print(f"{t:18} {med([float(r['wall_s']) for r in runs if r['tool'] == t]):7.1f} "
          f"{med([float(r['peak_mb']) for r in runs if r['tool'] == t]):8.0f} "
          f"{med([v[-1][0] for v in reps.values()]):5.0f} {med([v[-1][2] for v in reps.values()]):10.2f} "
          f"{'never' if reach == float('inf') else format(reach, '.1f'):>11}")
    # The first round as a metrics file, wall-clock seconds as `elapsed`, for the plot.
    with open(f"{out}/plot-lda-{set_}-k{k}-{t}.csv", "w") as f:
        f.write(f'# app=lda label="{t}"\npass,seconds,elapsed,items,items_per_s,perplexity\n')
        for i, s, p in reps.get("1", []): f.write(f"{i},0,{s},0,0,{p}\n")
PY
  "$strata" plot "$out"/plot-lda-"$1"-k"$2"-*.csv -o "$out/lda-$1-k$2.svg" --metric perplexity >/dev/null &&
    echo "plot: $out/lda-$1-k$2.svg"
}
