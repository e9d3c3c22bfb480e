# The mf part of scripts/bench_peers.sh (sourced there; bench_mf runs it): LIBMF
# (built from LIBMF_DIR with its own Makefile) and `strata train mf` on the same
# planted rating files, run alternately, each timed as a whole command (/usr/bin/time
# -v: wall clock, peak memory) with every pass's held-out RMSE stamped with the
# wall-clock second it was printed at.
#
# Settings (environment): PASSES (20), RANK (64), L2 (LIBMF's -l2, 0.05), and the data:
# USERS (200000), ITEMS (20000), TRAIN (10000000), HELD_OUT (1000000), PLANTED (16).
# Writes OUT_DIR/mf_passes.csv (tool,rep,pass,seconds_since_start,test_rmse),
# OUT_DIR/mf_runs.csv (tool,rep,wall_s,peak_mb), prints a table of the medians, and
# plots the first round's held-out RMSE against wall-clock seconds (OUT_DIR/mf-peers.svg).

bench_mf() {
: "${LIBMF_DIR:?set LIBMF_DIR to the directory of the LIBMF sources}"
local passes=${PASSES:-20} rank=${RANK:-64} l2=${L2:-0.05}
local users=${USERS:-200000} items=${ITEMS:-20000} train=${TRAIN:-10000000} held=${HELD_OUT:-1000000}
local planted=${PLANTED:-16}
# LIBMF, built from its sources in a scratch copy (nothing of it enters the project).
local libmf=$out/libmf-build
if [ ! -x "$libmf/mf-train" ]; then
  rm -rf "$libmf" && mkdir -p "$libmf"
  cp "$LIBMF_DIR"/Makefile "$LIBMF_DIR"/*.cpp "$LIBMF_DIR"/*.h "$libmf"/
  make -C "$libmf" -j2 >"$libmf/make.log" 2>&1 || { cat "$libmf/make.log"; exit 1; }
fi

# The data: the generator's shuffled ratings, the first TRAIN for training and the
# next HELD_OUT for validation, the same files for every tool.
local data=$out/data-$users-$items-$train-$held-$planted
if [ ! -s "$data/test.txt" ]; then
  mkdir -p "$data"
  "$build/bench/strata-gen-ratings" --out "$data/all.txt" --lines $((train + held)) --users "$users" --items "$items" \
    --rank "$planted"
  head -n "$train" "$data/all.txt" >"$data/train.txt"
  tail -n "$held" "$data/all.txt" >"$data/test.txt"
  rm "$data/all.txt"
fi

# pass lines: LIBMF's "iter tr_rmse va_rmse obj" (iter from 0); Strata's progress lines
# carry no held-out figure, so its pass times come from them and its RMSE from the
# metrics file.
run_libmf() {  # rep
  stamped /usr/bin/time -v "$libmf/mf-train" -k "$rank" -s 2 -t "$passes" -l2 "$l2" -p "$data/test.txt" \
    "$data/train.txt" "$out/libmf.model" >"$out/libmf-$1.log"
  awk -v rep="$1" '$2 ~ /^[0-9]+$/ && NF == 5 { printf "libmf,%d,%d,%s,%s\n", rep, $2 + 1, $1, $4 }' \
    "$out/libmf-$1.log" >>"$out/mf_passes.csv"
  record libmf "$1" "$out/libmf-$1.log"
}
run_strata() {  # label rep threads [launcher...]
  local label=$1 rep=$2 threads=$3
  shift 3
  stamped /usr/bin/time -v "$@" "$strata" train mf --data "$data/train.txt" --test "$data/test.txt" --rank "$rank" \
    --epochs "$passes" --threads "$threads" --metrics "$out/$label-$rep.csv" >"$out/$label-$rep.log"
  paste -d' ' <(sed -n 's/^\([0-9.]*\) pass \([0-9]*\)\/.*/\1 \2/p' "$out/$label-$rep.log") \
    <(grep -v '^#' "$out/$label-$rep.csv" | tail -n +2 | cut -d, -f8) |
    awk -v l="$label" -v rep="$rep" '{ printf "%s,%d,%d,%s,%s\n", l, rep, $2, $1, $3 }' >>"$out/mf_passes.csv"
  record "$label" "$rep" "$out/$label-$rep.log"
}
record() {  # tool rep log: whole-command wall time and peak memory from time -v
  echo "$1,$2,$(time_v_figures "$3")" >>"$out/mf_runs.csv"
}

echo "tool,rep,pass,seconds_since_start,test_rmse" >"$out/mf_passes.csv"
echo "tool,rep,wall_s,peak_mb" >"$out/mf_runs.csv"
for rep in $(seq 1 "$reps"); do
  run_libmf "$rep"
  run_strata strata-2t "$rep" 2
  run_strata strata-2r "$rep" 1 mpirun -np 2
done

# Medians over the rounds: whole command, memory, and RMSE after passes 1, 5, 10, 20;
# then when each Strata run first reached LIBMF's 20-pass RMSE (median of LIBMF's).
python3 - "$out" "$passes" <<'PY'
import csv, statistics, sys
out, passes = sys.argv[1], int(sys.argv[2])
runs = list(csv.DictReader(open(f"{out}/mf_runs.csv")))
rows = list(csv.DictReader(open(f"{out}/mf_passes.csv")))
tools = list(dict.fromkeys(r["tool"] for r in runs))
med = lambda xs: statistics.median(xs) if xs else float("nan")
target = med([float(r["test_rmse"]) for r in rows if r["tool"] == "libmf" and int(r["pass"]) == passes])
print(f"{'tool':10} {'wall s':>8} {'peak MB':>8} " + " ".join(f"{'pass ' + str(p):>8}" for p in (1, 5, 10, passes)) +
      f" {'s to ' + format(target, '.4f'):>12}")
for t in tools:
    wall = med([float(r["wall_s"]) for r in runs if r["tool"] == t])
    peak = med([float(r["peak_mb"]) for r in runs if r["tool"] == t])
    at = lambda p: med([float(r["test_rmse"]) for r in rows if r["tool"] == t and int(r["pass"]) == p])
    reach = []
    for rep in {r["rep"] for r in rows if r["tool"] == t}:
        hits = [float(r["seconds_since_start"]) for r in rows
                if r["tool"] == t and r["rep"] == rep and float(r["test_rmse"]) <= target]
        if hits: reach.append(min(hits))
    print(f"{t:10} {wall:8.1f} {peak:8.0f} " + " ".join(f"{at(p):8.4f}" for p in (1, 5, 10, passes)) +
          f" {med(reach):12.1f}")
    # The first round as a metrics file, wall-clock seconds as `elapsed`, for the plot.
    with open(f"{out}/mf-{t}.csv", "w") as f:
        f.write(f'# app=mf label="{t}"\npass,seconds,elapsed,items,items_per_s,test_rmse\n')
        for r in rows:
            if r["tool"] == t and r["rep"] == "1":
                f.write(f"{r['pass']},0,{r['seconds_since_start']},0,0,{r['test_rmse']}\n")
PY
"$strata" plot "$out"/mf-*.csv -o "$out/mf-peers.svg" --metric test_rmse >/dev/null && echo "plot: $out/mf-peers.svg"
}
