"""Held-out quality of word vectors, one formula for every tool: the word2vec peers
of scripts/bench_peers.sh. Debian's /usr/bin/python3 with python3-numpy.

    word2vec_peer.py loss TRAIN.txt TEST.txt IN.vec OUT.txt WINDOW NEGATIVES
    word2vec_peer.py agree A.vec B.vec [WORDS]

loss:  the negative-sampling loss of the held-out pairs, per pair: every pair (w, c)
       of a held-out line's words within WINDOW of each other, both in the model,
       scored as log(1 + exp(-<in_w, out_c>)) plus, for NEGATIVES noise words n drawn
       from the training file's unigram^0.75 (words seen 5 times or more; a fixed
       seed, so every model meets the same draws), log(1 + exp(<in_w, out_n>)).
       The first 200,000 pairs count. IN.vec is word2vec's text format (a header, then
       "word v1 v2 ..."); OUT.txt the output rows in IN.vec's order, with or without
       the words (Strata's out.txt, `fasttext dump MODEL.bin output`).
agree: nearest-neighbour agreement of two embeddings over the WORDS (1000) most
       frequent words both hold: the mean share of a word's 10 nearest neighbours by
       cosine (among those words) that both embeddings name.
"""
import sys

import numpy as np


def read_rows(path):
    words, rows = [], []
    with open(path, encoding="utf-8", errors="replace") as f:
        header = f.readline().split()
        dim = int(header[1])
        for line in f:
            parts = line.split()
            if len(parts) == dim + 1:
                words.append(parts[0])
                parts = parts[1:]
            rows.append(np.array(parts[:dim], dtype=np.float64))
    return words, np.vstack(rows)


def loss(train, test, in_path, out_path, window, negatives):
    words, vin = read_rows(in_path)
    out_words, vout = read_rows(out_path)
    if out_words and out_words != words:
        sys.exit(f"{out_path}: its words differ from {in_path}'s")
    if len(vout) != len(vin):
        sys.exit(f"{out_path}: {len(vout)} rows, {in_path} has {len(vin)}")
    index = {w: i for i, w in enumerate(words)}
    counts = {}
    for line in open(train, encoding="utf-8", errors="replace"):
        for w in line.split():
            counts[w] = counts.get(w, 0) + 1
    noise_words = [w for w, n in counts.items() if n >= 5 and w in index]
    p = np.array([counts[w] for w in noise_words], dtype=np.float64) ** 0.75
    noise = np.array([index[w] for w in noise_words])
    rng = np.random.default_rng(7)
    centre, context = [], []
    for line in open(test, encoding="utf-8", errors="replace"):
        ids = [index[w] for w in line.split() if w in index]
        for i, w in enumerate(ids):
            for j in range(max(0, i - window), min(len(ids), i + window + 1)):
                if j != i:
                    centre.append(w)
                    context.append(ids[j])
        if len(centre) >= 200_000:
            break
    centre, context = np.array(centre[:200_000]), np.array(context[:200_000])
    drawn = noise[rng.choice(len(noise), size=(len(centre), negatives), p=p / p.sum())]
    h = vin[centre]
    total = np.logaddexp(0, -np.einsum("ij,ij->i", h, vout[context])).sum()
    for k in range(negatives):
        total += np.logaddexp(0, np.einsum("ij,ij->i", h, vout[drawn[:, k]])).sum()
    print(f"heldout_loss {total / len(centre):.6f} pairs {len(centre)}")


def agree(a_path, b_path, top):
    a_words, a = read_rows(a_path)
    b_words, b = read_rows(b_path)
    b_index = {w: i for i, w in enumerate(b_words)}
    shared = [w for w in a_words if w in b_index][:top]  # a's order: most frequent first
    ra = a[[a_words.index(w) for w in shared]]
    rb = b[[b_index[w] for w in shared]]
    def neighbours(m):
        m = m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
        s = m @ m.T
        np.fill_diagonal(s, -np.inf)
        return np.argsort(-s, axis=1)[:, :10]
    na, nb = neighbours(ra), neighbours(rb)
    share = np.mean([len(set(na[i]) & set(nb[i])) / 10 for i in range(len(shared))])
    print(f"neighbour_agreement {share:.4f} words {len(shared)}")


if sys.argv[1] == "loss":
    loss(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6]), int(sys.argv[7]))
elif sys.argv[1] == "agree":
    agree(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 1000)
else:
    sys.exit(__doc__)
