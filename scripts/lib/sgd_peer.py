"""scikit-learn's SGDClassifier (logistic loss, L2) on LIBSVM files, one epoch at a
time, printing after each the held-out log-loss and accuracy: the slr peer of
scripts/bench_peers.sh. Debian's /usr/bin/python3 with python3-sklearn.

    sgd_peer.py TRAIN.svm TEST.svm EPOCHS ALPHA
"""
import sys

import numpy as np
from sklearn.datasets import load_svmlight_files
from sklearn.linear_model import SGDClassifier
from sklearn.metrics import log_loss

train, test, epochs, alpha = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
X, y, Xt, yt = load_svmlight_files([train, test])
print(f"loaded {X.shape[0]} training and {Xt.shape[0]} held-out samples, {X.shape[1]} features", flush=True)
model = SGDClassifier(loss="log_loss", alpha=alpha, random_state=1)
classes = np.unique(y)
for epoch in range(1, epochs + 1):
    model.partial_fit(X, y, classes=classes)
    p = np.clip(model.predict_proba(Xt), 1e-7, 1 - 1e-7)
    accuracy = float(np.mean(model.classes_[p.argmax(axis=1)] == yt))
    print(f"epoch {epoch} test_loss {log_loss(yt, p, labels=model.classes_):.6f} test_accuracy {accuracy:.6f}",
          flush=True)
