"""The Python module `strata` (python/strata_module.cpp) against the `strata` command.

Run by ctest (`python` label) with PYTHONPATH naming the built module and STRATA_CLI the
command: /usr/bin/python3 -m unittest discover -s python/tests
"""
import csv
import os
import re
import subprocess
import tempfile
import unittest

import numpy as np

import strata

CLI = os.environ.get("STRATA_CLI", "strata")
MF = {"synthetic": "users=300,items=120,ratings=6000", "rank": 8, "epochs": 3, "seed": 7}


def command(*args):
    """The command's exit status, stdout and stderr, on one rank."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMPI_COMM_WORLD")}
    p = subprocess.run([CLI, *args], capture_output=True, text=True, env=env, check=False)
    return p.returncode, p.stdout, p.stderr


def read_metrics(path):
    """The command's metrics CSV (after its '#' line) as {column: numpy array}."""
    with open(path, encoding="utf-8") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    return {k: np.array([float(r[k]) for r in rows]) for k in rows[0]}


class Train(unittest.TestCase):
    def test_mf_metrics_and_model(self):
        r = strata.train("mf", threads=2, **MF)
        m = r["metrics"]
        self.assertEqual(list(m["pass"]), [1, 2, 3])
        for name in ("seconds", "items", "loss", "train_rmse", "test_rmse"):
            self.assertIsInstance(m[name], np.ndarray)
            self.assertEqual(m[name].shape, (3,))
        self.assertTrue(np.all(np.isfinite(m["test_rmse"])))
        self.assertLess(m["loss"][-1], m["loss"][0])  # it trains
        self.assertEqual(r["threads"], 2)
        self.assertEqual(r["model"]["W"].shape, (300, 8))
        self.assertEqual(r["model"]["H"].shape, (120, 8))
        self.assertEqual(r["model"]["W"].dtype, np.float32)

    def test_same_run_as_the_command(self):
        # One thread: the run is deterministic, so the command's metrics CSV and saved
        # model equal what strata.train returns.
        with tempfile.TemporaryDirectory() as d:
            csv_path, save = os.path.join(d, "m.csv"), os.path.join(d, "model")
            args = ["--synthetic", MF["synthetic"], "--rank", "8", "--epochs", "3", "--seed", "7", "--threads", "1"]
            rc, out, err = command("train", "mf", *args, "--metrics", csv_path, "--save", save)
            self.assertEqual(rc, 0, err)
            table = read_metrics(csv_path)
            r = strata.train("mf", threads=1, save=os.path.join(d, "py"), **MF)
            np.testing.assert_allclose(r["metrics"]["loss"], table["loss"], rtol=1e-6)
            np.testing.assert_allclose(r["metrics"]["test_rmse"], table["test_rmse"], rtol=1e-6)
            self.assertTrue(os.path.isdir(os.path.join(d, "py", "W")))  # save= is --save
            back = strata.train("mf", threads=1, save=save, **MF)["model"]  # same run, same model
            np.testing.assert_array_equal(back["W"], r["model"]["W"])

    def test_other_apps_and_dtypes(self):
        slr = strata.train("slr", synthetic={"samples": 2000, "features": 500, "nnz": 10}, epochs=2, threads=2)
        self.assertEqual(slr["model"]["w"].shape, (501,))  # a weight per feature, then the bias
        no_bias = strata.train("slr", synthetic={"samples": 2000, "features": 500, "nnz": 10}, epochs=1, bias="no")
        self.assertEqual(no_bias["model"]["w"].shape, (500,))
        self.assertIn("accuracy", slr["metrics"])
        mlr = strata.train("mlr", synthetic={"samples": 2000, "features": 300, "classes": 7, "nnz": 10}, epochs=2,
                           threads=2)
        self.assertEqual(mlr["model"]["W"].shape, (301, 7))  # a row of class weights per feature, then the bias row
        self.assertIn("test_accuracy", mlr["metrics"])
        lda = strata.train("lda", synthetic="docs=100,words=300,topics=4,doclen=20", epochs=2, top_words=0)
        self.assertEqual(lda["model"]["doc_topic"].shape, (100, 4))
        self.assertEqual(lda["model"]["doc_topic"].dtype, np.int32)
        # Every token is in one topic: the three count tables agree.
        total = int(lda["model"]["topic_totals"].sum())
        self.assertGreater(total, 0)
        self.assertEqual(int(lda["model"]["doc_topic"].sum()), total)
        self.assertEqual(int(lda["model"]["word_topic"].sum()), total)

    def test_slr_keeps_the_best_pass(self):
        # A fast rate overfits these 20,000 samples after a pass or two: patience=1 stops
        # there, and the model returned is the pass with the lowest held-out log-loss.
        r = strata.train("slr", synthetic={"samples": 20000, "features": 3000, "nnz": 15}, epochs=8, lr=0.5,
                         patience=1, threads=2)
        losses = list(r["metrics"]["test_loss"])
        self.assertLess(len(losses), 8)
        self.assertEqual(int(np.argmin(losses)), len(losses) - 2)  # the pass before the one that did not improve
        # The serial program is deterministic: keeping the best of 5 passes gives the
        # model that stopping after the best pass gives.
        data = {"synthetic": {"samples": 20000, "features": 3000, "nnz": 15}, "lr": 0.5, "serial": True}
        runs = strata.train("slr", epochs=5, **data)
        best = int(np.argmin(runs["metrics"]["test_loss"])) + 1
        self.assertLess(best, 5)
        with tempfile.TemporaryDirectory() as d:
            kept = strata.train("slr", epochs=5, save=os.path.join(d, "m"), **data)
            self.assertTrue(os.path.isfile(os.path.join(d, "m", "model.liblinear")))
        stopped = strata.train("slr", epochs=best, keep="last", **data)
        np.testing.assert_array_equal(kept["model"]["w"], stopped["model"]["w"])
        self.assertEqual(kept["model"]["w"].shape, (3001,))

    def test_serial_flag(self):
        r = strata.train("mf", serial=True, **MF)
        self.assertEqual(len(r["metrics"]["loss"]), 3)


class Errors(unittest.TestCase):
    def assert_same_error(self, exc_type, app, cli_args, **options):
        rc, _, err = command("train", app, *cli_args)
        self.assertNotEqual(rc, 0)
        with self.assertRaises(exc_type) as ctx:
            strata.train(app, **options)
        self.assertIsInstance(ctx.exception, strata.Error)
        self.assertEqual("strata: " + str(ctx.exception), err.strip())

    def test_bad_option_value(self):
        self.assert_same_error(strata.OptionError, "mf", ["--synthetic", "users=10", "--rank", "0"],
                               synthetic="users=10", rank=0)

    def test_unknown_app_and_option(self):
        self.assert_same_error(strata.OptionError, "nope", ["--synthetic", "x=1"], synthetic="x=1")
        self.assert_same_error(strata.OptionError, "mf", ["--synthetic", "users=10", "--colour", "red"],
                               synthetic="users=10", colour="red")

    def test_missing_file(self):
        self.assert_same_error(strata.IoError, "mf", ["--data", "/nonexistent/ratings.txt"],
                               data="/nonexistent/ratings.txt")

    def test_command_only_options(self):
        with self.assertRaisesRegex(strata.OptionError, "returns the metrics"):
            strata.train("mf", metrics="m.csv", **MF)


class Explain(unittest.TestCase):
    def test_same_text_as_the_command(self):
        args = ["--synthetic", MF["synthetic"], "--rank", "8", "--threads", "2"]
        rc, out, err = command("explain", "mf", *args)
        self.assertEqual(rc, 0, err)
        text = strata.explain("mf", synthetic=MF["synthetic"], rank=8, threads=2)
        self.assertIn("2-D", out)
        seconds = re.compile(r"[0-9.]+ s\b")  # timings differ from run to run
        self.assertEqual(seconds.sub("T s", text), seconds.sub("T s", out))


if __name__ == "__main__":
    unittest.main()
