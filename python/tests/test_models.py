"""Models and checkpoints from Python (python/checkpoints_py.cpp): strata.save_model and
strata.load_model in the format of `--save DIR`, strata.load_checkpoint on a run's
automatic checkpoints, and strata.train resuming from them. Run by ctest with the others.
"""
import glob
import os
import tempfile
import unittest

import numpy as np

import strata
from test_strata import MF, command

DTYPES = (np.float32, np.float64, np.int32, np.int64)


def bits(a):
    """The array's bytes as unsigned integers: equal bits, NaN payloads included."""
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def sample(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    a = (rng.standard_normal(shape) * 1e3).astype(dtype)
    a.flat[0] = np.nan  # odd values survive too
    a.flat[-1] = -np.inf
    return a


def damage(path, offset=0):
    """Flips one byte of the file."""
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)
        f.seek(offset)
        f.write(bytes([byte[0] ^ 0xFF]))


class SaveAndLoad(unittest.TestCase):
    def test_round_trip_bit_for_bit(self):
        with tempfile.TemporaryDirectory() as d:
            model = {}
            for k, dtype in enumerate(DTYPES):
                for shape in ((37,), (9, 5), (4, 3, 2)):
                    model[f"{np.dtype(dtype).name}_{len(shape)}d"] = sample(dtype, shape, k * 10 + len(shape))
            strata.save_model(d, model)
            back = strata.load_model(d)
            self.assertEqual(sorted(back), sorted(model))
            for name, a in model.items():
                self.assertEqual(back[name].dtype, a.dtype, name)
                self.assertEqual(back[name].shape, a.shape, name)
                np.testing.assert_array_equal(bits(back[name]), bits(a), err_msg=name)

    def test_views_and_lists_are_copied_in_order(self):
        with tempfile.TemporaryDirectory() as d:
            a = np.arange(24, dtype=np.int64).reshape(4, 6)
            strata.save_model(d, {"cols": a[:, ::2], "t": a.T, "list": [[1.5, 2.5], [3.5, 4.5]]})
            back = strata.load_model(d)
            np.testing.assert_array_equal(back["cols"], a[:, ::2])
            np.testing.assert_array_equal(back["t"], a.T)
            np.testing.assert_array_equal(back["list"], np.array([[1.5, 2.5], [3.5, 4.5]]))

    def test_the_format_of_the_command(self):
        # The command's --save model, loaded and saved again from Python, is the same
        # files: each array's part holds the same bytes, and it loads the same.
        with tempfile.TemporaryDirectory() as d:
            saved, again = os.path.join(d, "cli"), os.path.join(d, "py")
            rc, _, err = command("train", "mf", "--synthetic", MF["synthetic"], "--rank", "8", "--epochs", "2",
                                 "--threads", "1", "--save", saved)
            self.assertEqual(rc, 0, err)
            model = strata.load_model(saved)
            self.assertEqual(sorted(model), ["H", "W"])
            strata.save_model(again, model)
            for name in ("W", "H"):
                with open(os.path.join(saved, name, "part-00000.bin"), "rb") as f:
                    cli_bytes = f.read()
                with open(os.path.join(again, name, "part-00000.bin"), "rb") as f:
                    self.assertEqual(f.read(), cli_bytes, name)
            reloaded = strata.load_model(again)
            for name in ("W", "H"):
                np.testing.assert_array_equal(reloaded[name], model[name])

    def test_bad_models(self):
        with tempfile.TemporaryDirectory() as d:
            for bad in ("../up", "a/b", "", "."):
                with self.assertRaisesRegex(strata.OptionError, "not a plain file name"):
                    strata.save_model(d, {bad: np.zeros(3)})
            with self.assertRaisesRegex(strata.OptionError, "no arrays"):
                strata.save_model(d, {})
            for a in (np.zeros(3, dtype=np.complex64), np.zeros(3, dtype=np.uint8), np.zeros(3, dtype=bool)):
                with self.assertRaisesRegex(strata.ShapeError, "element type"):
                    strata.save_model(d, {"a": a})
            for a in (np.float64(1.0), np.zeros((1, 1, 1, 1))):
                with self.assertRaisesRegex(strata.ShapeError, "dimensions"):
                    strata.save_model(d, {"a": a})
            self.assertEqual(os.listdir(d), [])  # nothing written


class DamagedFiles(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        strata.save_model(self.dir, {"W": np.arange(40, dtype=np.float32).reshape(8, 5)})
        self.part = os.path.join(self.dir, "W", "part-00000.bin")
        self.manifest = os.path.join(self.dir, "W", "manifest.txt")

    def tearDown(self):
        self.tmp.cleanup()

    def test_missing_directory(self):
        missing = os.path.join(self.dir, "nope")
        with self.assertRaises(strata.IoError) as ctx:
            strata.load_model(missing)
        self.assertIn(missing, str(ctx.exception))

    def test_no_arrays(self):
        empty = os.path.join(self.dir, "empty")
        os.mkdir(empty)
        with self.assertRaisesRegex(strata.CheckpointError, "holds no saved array") as ctx:
            strata.load_model(empty)
        self.assertIn(empty, str(ctx.exception))

    def assert_refused(self, path):
        with self.assertRaises(strata.CheckpointError) as ctx:
            strata.load_model(self.dir)
        self.assertIn(path, str(ctx.exception))

    def test_corrupted_part(self):
        damage(self.part, 17)
        self.assert_refused(self.part)

    def test_truncated_part(self):
        os.truncate(self.part, 12)
        self.assert_refused(self.part)

    def test_missing_part(self):
        os.remove(self.part)
        self.assert_refused(self.part)

    def test_corrupted_manifest(self):
        damage(self.manifest, 3)
        self.assert_refused(self.manifest)


class Checkpoints(unittest.TestCase):
    def test_newest_checkpoint_is_the_model(self):
        # After the last pass nothing changes the factors: the newest checkpoint holds
        # the model training returns, bit for bit.
        with tempfile.TemporaryDirectory() as d:
            ck = os.path.join(d, "ck")
            r = strata.train("mf", epochs=3, threads=2, checkpoint_dir=ck, **{k: MF[k] for k in MF if k != "epochs"})
            c = strata.load_checkpoint(ck)
            # The row step's squared-gradient sums (GW, GH) are checkpointed with the factors.
            self.assertEqual(sorted(c), ["GH", "GW", "H", "W"])
            for name in ("W", "H"):
                np.testing.assert_array_equal(c[name], r["model"][name])

    def test_the_command_and_lda(self):
        # A checkpoint the command wrote reads too, and lda's token topics (a sparse
        # 3-D array) come as indices and values.
        with tempfile.TemporaryDirectory() as d:
            ck, saved = os.path.join(d, "ck"), os.path.join(d, "model")
            rc, _, err = command("train", "lda", "--synthetic", "docs=60,words=200,topics=4,doclen=20", "--epochs",
                                 "2", "--threads", "1", "--checkpoint-dir", ck, "--save", saved)
            self.assertEqual(rc, 0, err)
            c = strata.load_checkpoint(ck)
            self.assertEqual(sorted(c), ["doc_topic", "topic_totals", "word_topic", "z"])
            z = c["z"]
            self.assertEqual(z["shape"][0], 60)
            self.assertEqual(z["indices"].shape, (len(z["values"]), 3))
            self.assertEqual(z["values"].dtype, np.int32)
            # Every token has one topic: as many tokens as the saved totals count.
            total = strata.load_model(saved)["topic_totals"]
            self.assertEqual(len(z["values"]), int(total.sum()))
            np.testing.assert_array_equal(c["topic_totals"], total)

    def test_damaged_or_missing(self):
        with tempfile.TemporaryDirectory() as d:
            missing = os.path.join(d, "none")
            with self.assertRaisesRegex(strata.CheckpointError, "no such directory") as ctx:
                strata.load_checkpoint(missing)
            self.assertIn(missing, str(ctx.exception))
            with self.assertRaisesRegex(strata.CheckpointError, "holds no complete checkpoint"):
                strata.load_checkpoint(d)
            ck = os.path.join(d, "ck")
            strata.train("mf", threads=1, checkpoint_dir=ck, **MF)
            part = sorted(glob.glob(os.path.join(ck, "call-*", "array-*", "part-00000.bin")))[-1]
            damage(part, 5)
            with self.assertRaises(strata.CheckpointError) as ctx:
                strata.load_checkpoint(ck)
            self.assertIn(part, str(ctx.exception))


class Resume(unittest.TestCase):
    SETUP = {k: MF[k] for k in MF if k != "epochs"}

    def test_three_passes_then_five_equals_five(self):
        with tempfile.TemporaryDirectory() as d:
            ck = os.path.join(d, "ck")
            full = strata.train("mf", epochs=5, threads=2, **self.SETUP)
            first = strata.train("mf", epochs=3, threads=2, checkpoint_dir=ck, **self.SETUP)
            self.assertEqual(len(first["metrics"]["loss"]), 3)
            resumed = strata.train("mf", epochs=5, threads=2, checkpoint_dir=ck, resume=ck, **self.SETUP)
            for name in ("W", "H"):
                np.testing.assert_array_equal(resumed["model"][name], full["model"][name])
            # The skipped passes report what they reported then (their journal), and the
            # training loss of every pass is the same bits.
            np.testing.assert_array_equal(resumed["metrics"]["loss"], full["metrics"]["loss"])
            # The RMSE fits after the loaded checkpoint are planned afresh on two threads,
            # so their sums may add in another order: equal to rounding (seen: 1 ulp).
            np.testing.assert_allclose(resumed["metrics"]["test_rmse"], full["metrics"]["test_rmse"], rtol=1e-12)

    def test_other_settings_are_refused(self):
        with tempfile.TemporaryDirectory() as d:
            ck = os.path.join(d, "ck")
            strata.train("mf", epochs=2, threads=1, checkpoint_dir=ck, **self.SETUP)
            with self.assertRaisesRegex(strata.CheckpointError, "--lr"):
                strata.train("mf", epochs=3, threads=1, resume=ck, lr=0.01, **self.SETUP)
            # A checkpoint of the command is the command's to resume: another program.
            cli = os.path.join(d, "cli")
            rc, _, err = command("train", "mf", "--synthetic", MF["synthetic"], "--rank", "8", "--epochs", "2",
                                 "--seed", "7", "--threads", "1", "--checkpoint-dir", cli)
            self.assertEqual(rc, 0, err)
            with self.assertRaisesRegex(strata.CheckpointError, "written by program 'strata'"):
                strata.train("mf", epochs=3, threads=1, resume=cli, **self.SETUP)


if __name__ == "__main__":
    unittest.main()
