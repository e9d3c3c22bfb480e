# What the tests of a probe program under mpirun share (resume_probe_test.sh,
# split_replay_test.sh). A test script sources it with its own arguments,
# PROBE SCRATCH_DIR NP:
#   source "$(dirname "${BASH_SOURCE[0]}")/probe_test_lib.sh" "$@"
# which sets `probe`, `dir` (the scratch directory, emptied and entered), `np`,
# `mpiexec` (MPIEXEC, or mpirun), `fail MESSAGE` (counted in `failures`) and
# `run ARGS...` (the probe on NP ranks).
set -uo pipefail
probe=$1
dir=$2
np=$3
mpiexec=${MPIEXEC:-mpirun}
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
run() { "$mpiexec" -np "$np" "$probe" "$@"; }
