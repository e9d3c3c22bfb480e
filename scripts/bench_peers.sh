#!/usr/bin/env bash
# Strata against its peers, side by side on one machine (issue #31): each peer and
# `strata train` on the same files, run alternately, each timed as a whole command
# (/usr/bin/time -v: wall clock, peak memory) with every pass's held-out figure
# stamped with the wall-clock second it was printed at.
#
#   [LIBMF_DIR=../shared/peers/libmf] [WARPLDA_DIR=../shared/peers/warplda] scripts/bench_peers.sh [OUT_DIR]
#
# APPS (default "mf slr mlr word2vec lda"; mf needs LIBMF_DIR and lda WARPLDA_DIR, each
# left out without it) picks the parts: mf against LIBMF (scripts/lib/peers_mf.sh), slr
# against liblinear and scikit-learn's SGD (scripts/lib/peers_slr.sh), mlr against
# liblinear and scikit-learn's SGD and softmax regression (scripts/lib/peers_mlr.sh;
# Debian's liblinear-tools and python3-sklearn, installed when missing), word2vec against
# fastText (scripts/lib/peers_word2vec.sh; Debian's fasttext), lda against WarpLDA
# (scripts/lib/peers_lda.sh; built with Debian's libgflags-dev and libnuma-dev, installed
# when missing). Each part says its settings and files.
# Common settings: BUILD (Strata's build dir, default build), REPS (rounds of the
# alternation, default 3).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/lib/common.sh"
source "$here/lib/peers_mf.sh"
source "$here/lib/peers_slr.sh"
source "$here/lib/peers_mlr.sh"
source "$here/lib/peers_word2vec.sh"
source "$here/lib/peers_lda.sh"
strata_mpi_env
out=$(mkdir -p "${1:-bench-peers}" && cd "${1:-bench-peers}" && pwd)
build=$(cd "${BUILD:-$root/build}" && pwd)
reps=${REPS:-3}
strata=$build/tools/strata/strata
apps=${APPS:-mf slr mlr word2vec lda}
[ -z "${LIBMF_DIR:-}" ] && [ -z "${APPS:-}" ] && apps=${apps#mf }
if [ -z "${WARPLDA_DIR:-}" ] && [ -z "${APPS:-}" ]; then
  apps=${apps% lda}
  echo "bench_peers.sh: WARPLDA_DIR is not set: leaving out the lda part (WarpLDA against strata train lda)"
fi

# Runs a command, stamping each output line with the seconds since it started.
stamped() {
  local t0
  t0=$(date +%s.%N)
  "$@" 2>&1 | while IFS= read -r line; do
    awk -v now="$(date +%s.%N)" -v t0="$t0" -v l="$line" 'BEGIN { printf "%.3f %s\n", now - t0, l }'
  done
}

# A setting of a data set: peer_setting SET NAME DEFAULT reads ${SET_NAME:-DEFAULT}
# (upper case: GENERATED_STRATA, FASHION_C, ...).
peer_setting() {
  local var
  var=$(echo "$1_$2" | tr '[:lower:]' '[:upper:]')
  echo "${!var:-$3}"
}

# Installs the Debian packages named (none: nothing to do), leaving the build's list
# of packages as it was.
install_peer_packages() {
  [ $# -eq 0 ] && return 0
  local saved=("${STRATA_PACKAGES[@]}")
  STRATA_PACKAGES=("$@")
  strata_ensure_packages
  STRATA_PACKAGES=("${saved[@]}")
}

# Installs liblinear's tools and scikit-learn when missing (the slr and mlr peers).
ensure_linear_peers() {
  local missing=()
  command -v liblinear-train >/dev/null || missing+=(liblinear-tools)
  /usr/bin/python3 -c 'import sklearn' 2>/dev/null || missing+=(python3-sklearn)
  install_peer_packages "${missing[@]}"
}

# "WALL_S,PEAK_MB" of a command run under /usr/bin/time -v, from its log.
time_v_figures() {
  local wall peak
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$1" | awk -F: '{ print $(NF-1) * 60 + $NF }')
  peak=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$1")
  echo "$wall,$((peak / 1024))"
}

# A whole command's figures: peer_record APP SET TOOL REP LOG appends to APP_runs.csv.
peer_record() {
  echo "$2,$3,$4,$(time_v_figures "$5")" >>"$out/$1_runs.csv"
}

for app in $apps; do
  case "$app" in
    mf) bench_mf ;;
    slr) bench_slr ;;
    mlr) bench_mlr ;;
    word2vec) bench_word2vec ;;
    lda) bench_lda ;;
    *) echo "bench_peers.sh: unknown app '$app' in APPS (mf, slr, mlr, word2vec, lda)" >&2; exit 2 ;;
  esac
done
