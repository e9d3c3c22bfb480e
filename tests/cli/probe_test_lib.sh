# What the tests of a probe program under mpirun share (resume_probe_test.sh,
# split_replay_test.sh). A test script sources it with its own arguments,
# PROBE SCRATCH_DIR NP:
#   source "$(dirname "${BASH_SOURCE[0]}")/probe_test_lib.sh" "$@"
# which sets `probe`, `dir` (the scratch directory, emptied and entered), `np`,
# `mpiexec` (MPIEXEC, or mpirun), `fail MESSAGE` (counted in `failures`) and
# `run ARGS...` (the probe on NP ranks).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh" "$1" "$2"
probe=$strata
np=$3
run() { "$mpiexec" -np "$np" "$probe" "$@"; }
