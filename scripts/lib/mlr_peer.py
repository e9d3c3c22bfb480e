"""scikit-learn's multi-class logistic regression on LIBSVM files, one epoch at a
time, printing after each the held-out log-loss and accuracy: the mlr peers of
scripts/bench_peers.sh. Debian's /usr/bin/python3 with python3-sklearn.

    mlr_peer.py sgd|saga TRAIN.svm TEST.svm EPOCHS ALPHA JOBS

sgd:  SGDClassifier(loss="log_loss"): one-vs-rest, the classes' binary models
      trained in parallel on JOBS processes (partial_fit: one epoch a call).
saga: LogisticRegression(solver="saga"): the softmax model itself, one epoch a call
      (max_iter=1, warm_start), single-threaded; C = 1 / (ALPHA * samples).
"""
import sys
import warnings

import numpy as np
from sklearn.datasets import load_svmlight_files
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression, SGDClassifier
from sklearn.metrics import log_loss

mode, train, test = sys.argv[1], sys.argv[2], sys.argv[3]
epochs, alpha, jobs = int(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
X, y, Xt, yt = load_svmlight_files([train, test])
print(f"loaded {X.shape[0]} training and {Xt.shape[0]} held-out samples, {X.shape[1]} features", flush=True)
classes = np.unique(y)
if mode == "sgd":
    model = SGDClassifier(loss="log_loss", alpha=alpha, random_state=1, n_jobs=jobs)
    step = lambda: model.partial_fit(X, y, classes=classes)
elif mode == "saga":
    warnings.simplefilter("ignore", ConvergenceWarning)  # one epoch a call never converges
    model = LogisticRegression(solver="saga", C=1 / (alpha * X.shape[0]), max_iter=1, warm_start=True, tol=0)
    step = lambda: model.fit(X, y)
else:
    sys.exit(f"mlr_peer.py: unknown mode '{mode}' (sgd, saga)")
for epoch in range(1, epochs + 1):
    step()
    p = np.clip(model.predict_proba(Xt), 1e-7, 1)
    p /= p.sum(axis=1, keepdims=True)
    accuracy = float(np.mean(model.classes_[p.argmax(axis=1)] == yt))
    print(f"epoch {epoch} test_loss {log_loss(yt, p, labels=model.classes_):.6f} test_accuracy {accuracy:.6f}",
          flush=True)
