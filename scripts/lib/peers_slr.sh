# The slr part of scripts/bench_peers.sh (sourced there; bench_slr runs it):
# liblinear (-s 0, -s 6 and -s 7, each with -B 1), scikit-learn's SGDClassifier
# (logistic loss, one epoch at a time: scripts/lib/sgd_peer.py) and `strata train
# slr` on 2 threads and on 2 ranks x 1 thread, on the same LIBSVM files, alternately.
# Held-out log-loss is taken the same way for every tool (probabilities clipped to
# [1e-7, 1 - 1e-7]); liblinear's from `liblinear-predict -b 1`, stamped at the end of
# its training command (its prediction is not counted), the others' after every pass.
#
# Data sets (SLR_SETS, default "generated kjv"):
#   generated  strata-gen-libsvm: SAMPLES (1000000) samples over FEATURES (1000000)
#              features, about NNZ (50) a sample, 10 % held out
#   kjv        scripts/datasets.sh kjv's verses (New vs Old Testament), the first 90 %
#              of its (shuffled) lines for training and the rest held out
#   fashion    scripts/datasets.sh fashion's images as a binary task: +1 for what is worn
#              on the upper body (T-shirt/top, pullover, coat, shirt: classes 0, 2, 4,
#              6), -1 for the rest; its 60,000 training and 10,000 test images
# Settings per set: SLR_PASSES (10), and for set S (upper case): S_STRATA (Strata's
# options), S_C0 / S_C6 / S_C7 (liblinear's -c), S_ALPHA (scikit-learn's alpha).
# Writes OUT_DIR/slr_points.csv (set,tool,rep,seconds_since_start,test_loss),
# OUT_DIR/slr_runs.csv (set,tool,rep,wall_s,peak_mb), per set and tool a metrics file
# of the first round (slr-SET-TOOL.csv, wall-clock seconds as `elapsed`), a plot of
# held-out log-loss against wall-clock time (slr-SET.svg, by `strata plot`) and prints
# a table of the medians.

bench_slr() {
  ensure_linear_peers
  local passes=${SLR_PASSES:-10}
  echo "set,tool,rep,seconds_since_start,test_loss" >"$out/slr_points.csv"
  echo "set,tool,rep,wall_s,peak_mb" >"$out/slr_runs.csv"
  for set in ${SLR_SETS:-generated kjv}; do
    slr_data "$set"
    for rep in $(seq 1 "$reps"); do
      for s in 0 6 7; do slr_liblinear "$set" "$rep" "$s"; done
      slr_sgd "$set" "$rep"
      slr_strata "$set" "$rep" strata-2t 2
      slr_strata "$set" "$rep" strata-2r 1 mpirun -np 2
    done
    slr_table "$set"
  done
}

# The set's files: $out/slr-SET/train.svm and test.svm.
slr_data() {
  local set=$1 dir=$out/slr-$1
  [ -s "$dir/test.svm" ] && return 0
  mkdir -p "$dir"
  case "$set" in
    generated)
      "$build/bench/strata-gen-libsvm" --train "$dir/train.svm" --test "$dir/test.svm" --samples "${SAMPLES:-1000000}" \
        --features "${FEATURES:-1000000}" --nnz "${NNZ:-50}" ;;
    kjv)
      "$root/scripts/datasets.sh" kjv >/dev/null
      local all=$root/data/real/kjv/ot-nt.svm n
      n=$(wc -l <"$all")
      head -n $((n * 9 / 10)) "$all" >"$dir/train.svm"
      tail -n $((n - n * 9 / 10)) "$all" >"$dir/test.svm" ;;
    fashion)
      "$root/scripts/datasets.sh" fashion >/dev/null
      local part
      for part in train test; do
        awk '{ $1 = ($1 == 0 || $1 == 2 || $1 == 4 || $1 == 6) ? "+1" : "-1"; print }' \
          "$root/data/real/fashion/$part.svm" >"$dir/$part.svm"
      done ;;
    *) echo "bench_peers.sh: unknown slr set '$set' (generated, kjv, fashion)" >&2; exit 2 ;;
  esac
}

slr_liblinear() {  # set rep solver
  local set=$1 rep=$2 s=$3 dir=$out/slr-$1 tool=liblinear-s$3 c
  c=$(peer_setting "$set" "c$s" "$([ "$set" = generated ] && echo 0.1 || echo 1)")
  local log=$out/$set-$tool-$rep.log
  stamped /usr/bin/time -v liblinear-train -s "$s" -c "$c" -B 1 -q "$dir/train.svm" "$out/$tool.model" >"$log"
  liblinear-predict -b 1 "$dir/test.svm" "$out/$tool.model" "$out/$tool.pred" >/dev/null
  local end loss
  end=$(tail -n 1 "$log" | cut -d' ' -f1)
  loss=$(paste -d' ' <(cut -d' ' -f1 "$dir/test.svm") <(tail -n +2 "$out/$tool.pred") |
    awk -v h="$(head -1 "$out/$tool.pred")" 'BEGIN { split(h, L, " ") }
      { p = ($1 + 0 == L[2] + 0) ? $3 : $4; if (p < 1e-7) p = 1e-7; if (p > 1 - 1e-7) p = 1 - 1e-7; s -= log(p); n++ }
      END { printf "%.6f", s / n }')
  echo "$set,$tool -c $c,$rep,$end,$loss" >>"$out/slr_points.csv"
  peer_record slr "$set" "$tool -c $c" "$rep" "$log"
}

slr_sgd() {  # set rep
  local set=$1 rep=$2 dir=$out/slr-$1 alpha log
  alpha=$(peer_setting "$set" alpha 1e-4)
  log=$out/$set-sgd-$rep.log
  stamped /usr/bin/time -v /usr/bin/python3 "$root/scripts/lib/sgd_peer.py" "$dir/train.svm" "$dir/test.svm" \
    "$passes" "$alpha" >"$log"
  awk -v set="$set" -v rep="$rep" -v a="$alpha" '$2 == "epoch" { printf "%s,sklearn-sgd alpha %s,%d,%s,%s\n", set, a, rep, $1, $5 }' \
    "$log" >>"$out/slr_points.csv"
  peer_record slr "$set" "sklearn-sgd alpha $alpha" "$rep" "$log"
}

slr_strata() {  # set rep label threads [launcher...]
  local set=$1 rep=$2 label=$3 threads=$4 dir=$out/slr-$1 opts log
  shift 4
  local default_opts="--lr 2"  # kjv
  case "$set" in generated) default_opts="--l2 100" ;; fashion) default_opts="" ;; esac
  opts=$(peer_setting "$set" strata "$default_opts")
  log=$out/$set-$label-$rep.log
  # shellcheck disable=SC2086  # opts is a list of options
  stamped /usr/bin/time -v "$@" "$strata" train slr --data "$dir/train.svm" --test "$dir/test.svm" --epochs "$passes" \
    --threads "$threads" $opts --metrics "$out/$set-$label-$rep.csv" >"$log"
  local col
  col=$(grep -v '^#' "$out/$set-$label-$rep.csv" | sed -n 1p | tr ',' '\n' | grep -n '^test_loss$' | cut -d: -f1)
  paste -d' ' <(sed -n 's/^\([0-9.]*\) pass \([0-9]*\)\/.*/\1/p' "$log") \
    <(grep -v '^#' "$out/$set-$label-$rep.csv" | tail -n +2 | cut -d, -f"$col") |
    awk -v set="$set" -v l="$label $opts" -v rep="$rep" '{ printf "%s,%s,%d,%s,%s\n", set, l, rep, $1, $2 }' \
      >>"$out/slr_points.csv"
  peer_record slr "$set" "$label $opts" "$rep" "$log"
}

# Medians over the rounds per tool: whole command, memory, the first and the lowest
# held-out loss, and when each tool first reached the best peer's final loss (the
# lowest of the peers' medians); then the plot.
slr_table() {
  echo "== slr, $1 ($(wc -l <"$out/slr-$1/train.svm") training, $(wc -l <"$out/slr-$1/test.svm") held out; $(nproc) cores)"
  /usr/bin/python3 - "$out" "$1" <<'PY'
import csv, statistics, sys
out, set_ = sys.argv[1], sys.argv[2]
runs = [r for r in csv.DictReader(open(f"{out}/slr_runs.csv")) if r["set"] == set_]
pts = [r for r in csv.DictReader(open(f"{out}/slr_points.csv")) if r["set"] == set_]
tools = list(dict.fromkeys(r["tool"] for r in runs))
med = lambda xs: statistics.median(xs) if xs else float("nan")
def per_rep(t):
    reps = {}
    for r in pts:
        if r["tool"] == t: reps.setdefault(r["rep"], []).append((float(r["seconds_since_start"]), float(r["test_loss"])))
    return reps
final = {t: med([v[-1][1] for v in per_rep(t).values()]) for t in tools}
target = min(final[t] for t in tools if not t.startswith("strata"))
print(f"{'tool':34} {'wall s':>7} {'peak MB':>8} {'first':>8} {'lowest':>8} {'final':>8} {'s to ' + format(target, '.4f'):>11}")
for t in tools:
    reps = per_rep(t)
    reach = [min([s for s, l in v if l <= target], default=float("nan")) for v in reps.values()]
    print(f"{t:34} {med([float(r['wall_s']) for r in runs if r['tool'] == t]):7.1f} "
          f"{med([float(r['peak_mb']) for r in runs if r['tool'] == t]):8.0f} "
          f"{med([v[0][1] for v in reps.values()]):8.4f} {med([min(l for _, l in v) for v in reps.values()]):8.4f} "
          f"{final[t]:8.4f} {med(reach):11.1f}")
    # The first round as a metrics file, wall-clock seconds as `elapsed`, for the plot.
    first = reps.get("1", [])
    name = t.split()[0]
    with open(f"{out}/slr-{set_}-{name}.csv", "w") as f:
        f.write(f'# app=slr label="{t}"\npass,seconds,elapsed,items,items_per_s,test_loss\n')
        for i, (s, l) in enumerate(first, 1): f.write(f"{i},0,{s},0,0,{l}\n")
PY
  "$strata" plot "$out"/slr-"$1"-*.csv -o "$out/slr-$1.svg" --metric test_loss >/dev/null &&
    echo "plot: $out/slr-$1.svg"
}
