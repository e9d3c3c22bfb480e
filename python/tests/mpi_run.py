"""strata.train under mpirun (each rank runs this script): run by ctest as
`mpirun -np 2 python3 python/tests/mpi_run.py`. Exits non-zero on any failed check.

Every rank trains on its part and gets the same metrics and the whole model; a second
call in the same process runs on the first call's Runtime (MPI cannot start twice), and
asking it for other runtime options is an OptionError.
"""
import sys

import numpy as np

import strata

MF = {"synthetic": "users=300,items=120,ratings=6000", "rank": 8, "seed": 7, "threads": 1}


def check(ok, what):
    if not ok:
        print(f"FAIL: {what}", flush=True)
        sys.exit(1)


first = strata.train("mf", epochs=3, **MF)
rank, ranks = first["rank"], first["ranks"]
check(ranks == 2, f"ranks {ranks}, wanted 2")
check(list(first["metrics"]["pass"]) == [1, 2, 3], f"passes {first['metrics']['pass']}")
check(first["model"]["W"].shape == (300, 8), f"W {first['model']['W'].shape}")
check(np.all(np.isfinite(first["metrics"]["test_rmse"])), "test RMSE not finite")

second = strata.train("mf", epochs=2, **MF)
check(second["ranks"] == 2 and len(second["metrics"]["loss"]) == 2, "second call")
check(np.allclose(second["metrics"]["loss"], first["metrics"]["loss"][:2]), "same seed, same first passes")

try:
    strata.train("mf", epochs=1, **{**MF, "threads": 2})
    check(False, "other runtime options accepted")
except strata.OptionError as e:
    check("first call's Runtime" in str(e), f"message: {e}")

print(f"rank {rank} of {ranks}: ok, held-out RMSE {first['metrics']['test_rmse'][-1]:.4f}", flush=True)
