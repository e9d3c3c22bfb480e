"""strata.train under mpirun (each rank runs this script): run by ctest as
`mpirun -np 2 python3 python/tests/mpi_run.py`. Exits non-zero on any failed check.

Every rank trains on its part and gets the same metrics and the whole model; a second
call in the same process runs on the first call's Runtime (MPI cannot start twice), and
asking it for other runtime options is an OptionError. A DistArray made from numpy keeps
each rank's part and gathers the whole on every rank; a rank passing other values is an
OptionError on every rank; models save and load collectively.
"""
import os
import shutil
import sys
import tempfile

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

# A DistArray on the process's Runtime (the first call's options: threads=1).
a = np.arange(42.0).reshape(7, 6)
with strata.Runtime(threads=1) as rt:
    x = strata.DistArray(rt, a, name="x")
    rows = x.local_box()[0]
    check(0 < len(rows) < 7, f"rank {rank} holds rows {rows}: not a part")
    check(np.array_equal(x.local(), a[rows]), "local() is not the rank's rows")
    check(np.array_equal(x.numpy(), a), "numpy() is not the whole array")
    check(x.sum() == a.sum(), f"sum {x.sum()}")
    x.scale(2.0)
    check(np.array_equal(x.numpy(), 2 * a), "scale")
    try:
        strata.DistArray(rt, a + rank)
        check(False, "ranks passing other values accepted")
    except strata.OptionError as e:
        check("rank 1 passed other values" in str(e), f"message: {e}")
check(rt.closed, "closed at the end of the with block")

# Models: every rank saves its part of the same arrays into one directory (named by
# rank 0: the job shares /tmp) and loads the whole.
d = tempfile.gettempdir() + f"/strata-mpi-run-{os.getppid()}"
model = {"W": first["model"]["W"], "n": np.arange(5, dtype=np.int32)}
strata.save_model(d, model)
back = strata.load_model(d)
check(all(np.array_equal(back[k], model[k]) for k in model), "save_model then load_model")
if rank == 0:  # every rank has read its parts: the load ends by gathering them
    shutil.rmtree(d)

print(f"rank {rank} of {ranks}: ok, held-out RMSE {first['metrics']['test_rmse'][-1]:.4f}", flush=True)
