"""strata.Runtime and strata.DistArray (python/runtime_py.cpp, python/dist_array_py.cpp)
in one process: a real strata::DistArray made from numpy and read back, its parallel
loops, its checkpoints, and what happens when its Runtime closes. mpi_run.py runs the
same on two ranks.
"""
import glob
import os
import tempfile
import unittest

import numpy as np

import strata
from test_models import DTYPES, bits, sample
from test_strata import MF


class FromAndToNumpy(unittest.TestCase):
    def test_round_trip_bit_for_bit(self):
        with strata.Runtime(threads=2) as rt:
            self.assertEqual((rt.rank, rt.ranks, rt.threads), (0, 1, 2))
            for k, dtype in enumerate(DTYPES):
                for shape in ((11,), (6, 7), (3, 4, 5)):
                    a = sample(dtype, shape, k)
                    x = strata.DistArray(rt, a, name="x")
                    self.assertEqual((x.shape, x.dtype, x.name, x.sparse), (shape, a.dtype, "x", False))
                    self.assertIn("range(dim 0)", x.partition)
                    np.testing.assert_array_equal(bits(x.numpy()), bits(a))
                    # One process: its part is the whole array.
                    np.testing.assert_array_equal(bits(x.local()), bits(a))
                    self.assertEqual([len(ix) for ix in x.local_box()], list(shape))

    def test_a_view_is_copied_in_order(self):
        a = np.arange(30.0).reshape(5, 6)
        with strata.Runtime(threads=1) as rt:
            x = strata.DistArray(rt, a[::2, 1::2])
            a[0, 1] = -1.0  # a copy: the DistArray does not see later changes
            np.testing.assert_array_equal(x.numpy(), np.arange(30.0).reshape(5, 6)[::2, 1::2])

    def test_loops(self):
        with strata.Runtime(threads=2) as rt:
            ints = np.arange(-50, 150, dtype=np.int64).reshape(20, 10)
            x = strata.DistArray(rt, ints)
            self.assertEqual(x.sum(), int(ints.sum()))
            x.scale(3)
            np.testing.assert_array_equal(x.numpy(), 3 * ints)
            with self.assertRaisesRegex(strata.OptionError, "integer"):
                x.scale(0.5)
            f = np.linspace(0, 1, 1000, dtype=np.float32)
            y = strata.DistArray(rt, f)
            self.assertAlmostEqual(y.sum(), float(f.astype(np.float64).sum()), places=9)
            y.scale(0.5)
            np.testing.assert_array_equal(y.numpy(), f * np.float32(0.5))

    def test_bad_arrays(self):
        with strata.Runtime(threads=1) as rt:
            for a in (np.zeros(3, dtype=np.complex128), np.zeros(3, dtype=np.float16), np.array(["a"])):
                with self.assertRaisesRegex(strata.ShapeError, "element type"):
                    strata.DistArray(rt, a)
            for a in (np.array(1.0), np.zeros((2, 2, 2, 2))):
                with self.assertRaisesRegex(strata.ShapeError, "dimensions"):
                    strata.DistArray(rt, a)


class Files(unittest.TestCase):
    def test_save_then_load(self):
        with tempfile.TemporaryDirectory() as d:
            a = sample(np.float64, (8, 3), 5)
            with strata.Runtime(threads=2) as rt:
                strata.DistArray(rt, a, name="w").save(os.path.join(d, "w"))
                np.testing.assert_array_equal(bits(strata.DistArray.load(rt, os.path.join(d, "w")).numpy()), bits(a))
            np.testing.assert_array_equal(bits(strata.load_model(d)["w"]), bits(a))  # the format of --save

    def test_loops_are_checkpointed(self):
        # A scale() is a loop call that changes the array: with checkpoint_dir= the
        # run's automatic checkpoint holds the array after it.
        with tempfile.TemporaryDirectory() as d:
            ck = os.path.join(d, "ck")
            a = np.arange(12, dtype=np.int32).reshape(3, 4)
            with strata.Runtime(threads=2, checkpoint_dir=ck) as rt:
                x = strata.DistArray(rt, a, name="x")
                x.scale(5)
            c = strata.load_checkpoint(ck)
            self.assertEqual(sorted(c), ["x"])
            np.testing.assert_array_equal(c["x"], 5 * a)

    def test_sparse_arrays_from_a_checkpoint(self):
        with tempfile.TemporaryDirectory() as d:
            ck = os.path.join(d, "ck")
            strata.train("lda", synthetic="docs=40,words=100,topics=3,doclen=15", epochs=1, top_words=0,
                         checkpoint_dir=ck)
            z = strata.load_checkpoint(ck)["z"]
            with strata.Runtime() as rt:
                for path in sorted(glob.glob(os.path.join(ck, "call-*", "array-*"))):
                    x = strata.DistArray.load(rt, path)
                    if x.sparse:
                        break
                self.assertEqual(x.shape, z["shape"])
                indices, values = x.entries()
                np.testing.assert_array_equal(indices, z["indices"])
                np.testing.assert_array_equal(values, z["values"])
                with self.assertRaisesRegex(strata.ShapeError, "entries"):
                    x.numpy()


class Lifetime(unittest.TestCase):
    def test_arrays_end_with_their_runtime(self):
        rt = strata.Runtime(threads=1)
        x = strata.DistArray(rt, np.ones(4))
        rt.close()
        self.assertTrue(rt.closed)
        with self.assertRaisesRegex(strata.Error, "ended when its strata.Runtime closed"):
            x.numpy()
        with self.assertRaisesRegex(strata.Error, "closed"):
            strata.DistArray(rt, np.ones(4))
        rt.close()  # again: nothing happens

    def test_calls_run_on_the_open_runtime(self):
        with strata.Runtime(threads=2) as rt:
            r = strata.train("mf", threads=2, **MF)
            self.assertEqual(r["threads"], 2)
            with self.assertRaisesRegex(strata.OptionError, "a strata.Runtime is open"):
                strata.train("mf", threads=1, **MF)
            x = strata.DistArray(rt, r["model"]["W"])  # the model, back in a DistArray
            self.assertAlmostEqual(x.sum(), float(r["model"]["W"].astype(np.float64).sum()), places=6)
        # Closed: calls have Runtimes of their own again.
        self.assertEqual(strata.train("mf", threads=1, **MF)["threads"], 1)

    def test_bad_options(self):
        with self.assertRaisesRegex(strata.OptionError, "unknown option 'colour'"):
            strata.Runtime(colour="red")
        with self.assertRaisesRegex(strata.OptionError, "--strata-threads"):
            strata.Runtime(threads=0)


if __name__ == "__main__":
    unittest.main()
