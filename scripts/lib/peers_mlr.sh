# The mlr part of scripts/bench_peers.sh (sourced there; bench_mlr runs it): liblinear
# (-s 0: one-vs-rest logistic regression, -B 1), scikit-learn's SGDClassifier (logistic
# loss, one-vs-rest on 2 processes) and its softmax LogisticRegression (saga), each
# one epoch at a time (scripts/lib/mlr_peer.py), the serial twin (`--serial`) and
# `strata train mlr` on 2 threads and on 2 ranks x 1 thread, on the same LIBSVM
# files, alternately. Held-out accuracy and log-loss are taken the same way for every
# tool (probabilities clipped below at 1e-7); liblinear's from `liblinear-predict -b
# 1`, stamped at the end of its training command (its prediction is not counted), the
# others' after every pass.
#
# Data sets (MLR_SETS, default "fashion generated"):
#   fashion    scripts/datasets.sh fashion: Fashion-MNIST's 60,000 training and
#              10,000 test images (784 pixels in [0, 1], 10 classes)
#   generated  strata-gen-libsvm --app mlr: MLR_SAMPLES (100000) samples over
#              MLR_FEATURES (20000) features, MLR_CLASSES (1000) classes, about
#              MLR_NNZ (30) a sample, 10 % held out
# Settings per set: MLR_PASSES (10), and for set S (upper case): S_STRATA (Strata's
# and the serial twin's options), S_C (liblinear's -c), S_ALPHA (scikit-learn's
# alpha); MLR_PEERS (default "liblinear sgd saga") picks the peers.
# Writes OUT_DIR/mlr_points.csv (set,tool,rep,seconds_since_start,test_loss,
# test_accuracy), OUT_DIR/mlr_runs.csv (set,tool,rep,wall_s,peak_mb), per set and tool
# a metrics file of the first round, a plot of held-out accuracy against wall-clock
# time (mlr-SET.svg) and prints a table of the medians.

bench_mlr() {
  ensure_linear_peers
  local passes=${MLR_PASSES:-10} peer
  echo "set,tool,rep,seconds_since_start,test_loss,test_accuracy" >"$out/mlr_points.csv"
  echo "set,tool,rep,wall_s,peak_mb" >"$out/mlr_runs.csv"
  for set in ${MLR_SETS:-fashion generated}; do
    mlr_data "$set"
    for rep in $(seq 1 "$reps"); do
      for peer in ${MLR_PEERS:-liblinear sgd saga}; do
        case "$peer" in
          liblinear) mlr_liblinear "$set" "$rep" ;;
          sgd|saga) mlr_sklearn "$set" "$rep" "$peer" ;;
          *) echo "bench_peers.sh: unknown mlr peer '$peer' (liblinear, sgd, saga)" >&2; exit 2 ;;
        esac
      done
      mlr_strata "$set" "$rep" serial --serial
      mlr_strata "$set" "$rep" strata-2t "--threads 2"
      mlr_strata "$set" "$rep" strata-2r "--threads 1" mpirun -np 2
    done
    mlr_table "$set"
  done
}

# The set's files: $out/mlr-SET/train.svm and test.svm.
mlr_data() {
  local set=$1 dir=$out/mlr-$1
  [ -s "$dir/test.svm" ] && return 0
  mkdir -p "$dir"
  case "$set" in
    fashion)
      "$root/scripts/datasets.sh" fashion >/dev/null
      ln -sf "$root/data/real/fashion/train.svm" "$dir/train.svm"
      ln -sf "$root/data/real/fashion/test.svm" "$dir/test.svm" ;;
    generated)
      "$build/bench/strata-gen-libsvm" --app mlr --train "$dir/train.svm" --test "$dir/test.svm" \
        --samples "${MLR_SAMPLES:-100000}" --features "${MLR_FEATURES:-20000}" --classes "${MLR_CLASSES:-1000}" \
        --nnz "${MLR_NNZ:-30}" ;;
    *) echo "bench_peers.sh: unknown mlr set '$set' (fashion, generated)" >&2; exit 2 ;;
  esac
}

mlr_liblinear() {  # set rep
  local set=$1 rep=$2 dir=$out/mlr-$1 c log
  c=$(peer_setting "$set" c 1)
  log=$out/$set-liblinear-$rep.log
  stamped /usr/bin/time -v liblinear-train -s 0 -c "$c" -B 1 -q "$dir/train.svm" "$out/mlr-liblinear.model" >"$log"
  liblinear-predict -b 1 "$dir/test.svm" "$out/mlr-liblinear.model" "$out/mlr-liblinear.pred" >/dev/null
  local end figures
  end=$(tail -n 1 "$log" | cut -d' ' -f1)
  # Column k + 1 of a prediction line is the probability of the header's k-th label.
  figures=$(paste -d' ' <(cut -d' ' -f1 "$dir/test.svm") <(tail -n +2 "$out/mlr-liblinear.pred") |
    awk -v h="$(head -1 "$out/mlr-liblinear.pred")" 'BEGIN { n = split(h, L, " "); for (k = 2; k <= n; ++k) col[L[k] + 0] = k + 1 }
      { p = ($1 + 0) in col ? $(col[$1 + 0]) : 0; if (p < 1e-7) p = 1e-7; s -= log(p); hit += ($2 + 0 == $1 + 0); m++ }
      END { printf "%.6f,%.6f", s / m, hit / m }')
  echo "$set,liblinear -s 0 -c $c,$rep,$end,$figures" >>"$out/mlr_points.csv"
  peer_record mlr "$set" "liblinear -s 0 -c $c" "$rep" "$log"
}

mlr_sklearn() {  # set rep sgd|saga
  local set=$1 rep=$2 mode=$3 dir=$out/mlr-$1 alpha log
  alpha=$(peer_setting "$set" alpha 1e-5)
  log=$out/$set-$mode-$rep.log
  stamped /usr/bin/time -v /usr/bin/python3 "$root/scripts/lib/mlr_peer.py" "$mode" "$dir/train.svm" "$dir/test.svm" \
    "$passes" "$alpha" 2 >"$log"
  awk -v set="$set" -v rep="$rep" -v t="sklearn-$mode alpha $alpha" \
    '$2 == "epoch" { printf "%s,%s,%d,%s,%s,%s\n", set, t, rep, $1, $5, $7 }' "$log" >>"$out/mlr_points.csv"
  peer_record mlr "$set" "sklearn-$mode alpha $alpha" "$rep" "$log"
}

mlr_strata() {  # set rep label "options" [launcher...]
  local set=$1 rep=$2 label=$3 how=$4 dir=$out/mlr-$1 opts log csv
  shift 4
  opts=$(peer_setting "$set" strata "")
  log=$out/$set-$label-$rep.log
  csv=$out/$set-$label-$rep.csv
  # shellcheck disable=SC2086  # how and opts are lists of options
  stamped /usr/bin/time -v "$@" "$strata" train mlr --data "$dir/train.svm" --test "$dir/test.svm" --epochs "$passes" \
    $how $opts --metrics "$csv" >"$log"
  local header loss acc
  header=$(grep -v '^#' "$csv" | sed -n 1p | tr ',' '\n')
  loss=$(echo "$header" | grep -n '^test_loss$' | cut -d: -f1)
  acc=$(echo "$header" | grep -n '^test_accuracy$' | cut -d: -f1)
  paste -d' ' <(sed -n 's/^\([0-9.]*\) pass \([0-9]*\)\/.*/\1/p' "$log") \
    <(grep -v '^#' "$csv" | tail -n +2 | cut -d, -f"$loss,$acc" | tr ',' ' ') |
    awk -v set="$set" -v l="$label $opts" -v rep="$rep" '{ printf "%s,%s,%d,%s,%s,%s\n", set, l, rep, $1, $2, $3 }' \
      >>"$out/mlr_points.csv"
  peer_record mlr "$set" "$label $opts" "$rep" "$log"
}

# Medians over the rounds per tool: whole command, memory, the first, best and final
# held-out accuracy, and when each tool first reached the best peer's final accuracy
# (the highest of the peers' medians, the serial twin not counted); then the plot.
mlr_table() {
  echo "== mlr, $1 ($(wc -l <"$out/mlr-$1/train.svm") training, $(wc -l <"$out/mlr-$1/test.svm") held out; $(nproc) cores)"
  /usr/bin/python3 - "$out" "$1" <<'PY'
import csv, statistics, sys
out, set_ = sys.argv[1], sys.argv[2]
runs = [r for r in csv.DictReader(open(f"{out}/mlr_runs.csv")) if r["set"] == set_]
pts = [r for r in csv.DictReader(open(f"{out}/mlr_points.csv")) if r["set"] == set_]
tools = list(dict.fromkeys(r["tool"] for r in runs))
med = lambda xs: statistics.median(xs) if xs else float("nan")
def per_rep(t):
    reps = {}
    for r in pts:
        if r["tool"] == t:
            reps.setdefault(r["rep"], []).append((float(r["seconds_since_start"]), float(r["test_loss"]),
                                                  float(r["test_accuracy"])))
    return reps
final = {t: med([v[-1][2] for v in per_rep(t).values()]) for t in tools}
peers = [t for t in tools if not t.startswith(("strata", "serial"))]
target = max(final[t] for t in peers) if peers else float("nan")
print(f"{'tool':34} {'wall s':>7} {'peak MB':>8} {'acc 1':>7} {'best':>7} {'final':>7} {'loss':>7} "
      f"{'s to ' + format(target, '.4f'):>11}")
for t in tools:
    reps = per_rep(t)
    reach = [min([s for s, _, a in v if a >= target], default=float("nan")) for v in reps.values()]
    print(f"{t:34} {med([float(r['wall_s']) for r in runs if r['tool'] == t]):7.1f} "
          f"{med([float(r['peak_mb']) for r in runs if r['tool'] == t]):8.0f} "
          f"{med([v[0][2] for v in reps.values()]):7.4f} {med([max(a for _, _, a in v) for v in reps.values()]):7.4f} "
          f"{final[t]:7.4f} {med([v[-1][1] for v in reps.values()]):7.4f} {med(reach):11.1f}")
    first = reps.get("1", [])
    name = t.split()[0]
    with open(f"{out}/mlr-{set_}-{name}.csv", "w") as f:
        f.write(f'# app=mlr label="{t}"\npass,seconds,elapsed,items,items_per_s,test_loss,test_accuracy\n')
        for i, (s, l, a) in enumerate(first, 1): f.write(f"{i},0,{s},0,0,{l},{a}\n")
PY
  "$strata" plot "$out"/mlr-"$1"-*.csv -o "$out/mlr-$1.svg" --metric test_accuracy >/dev/null &&
    echo "plot: $out/mlr-$1.svg"
}
