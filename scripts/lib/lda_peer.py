"""The corpora of the lda peers of scripts/bench_peers.sh, written once as a UCI docword
file (`strata train lda --data docword.NAME.txt` reads it, with vocab.NAME.txt beside
it) and as the same tokens in Yahoo! LDA's text format (WarpLDA's `format` reads it),
so that both tools see the same documents, words and tokens. Debian's /usr/bin/python3
(no numpy).

    lda_peer.py text CHAPTERS.txt PROBLEM.cpp DOCWORD VOCAB
    lda_peer.py generate DOCS WORDS TOPICS DOCLEN SEED DOCWORD VOCAB
    lda_peer.py yahoo DOCWORD VOCAB OUT.txt

text:     a line a document, tokenised as Strata's text loader does (apps/lda/problem.cpp,
          load_text): runs of ASCII letters, lower-cased; words of 3 or more letters
          that are not stop words (the list in PROBLEM.cpp's stop_words(), read from
          there); of those, the words in 2 or more lines, numbered by first appearance;
          lines left empty are no document.
generate: a planted corpus like Strata's --synthetic one: TOPICS topics, each a
          Dirichlet(0.01) draw over WORDS words; per document a Dirichlet(0.1) mixture
          of them and a length uniform in [DOCLEN/2, 3 DOCLEN/2]. Only the words that
          occur are kept (renumbered, named wID by their original id), so that both
          tools count the same vocabulary (its size enters phi's smoothing, V beta).
yahoo:    "dN dN word word ..." a document, each word repeated as often as it occurs.
Each of text and generate prints "DOCS WORDS TOKENS" of what it wrote.
"""
import collections
import random
import re
import sys


def write_docword(path, vocab_path, docs, vocab):
    """docs: one Counter of word ids (0-based) a document; vocab: the words' names."""
    nnz = sum(len(d) for d in docs)
    with open(path, "w") as f:
        f.write(f"{len(docs)}\n{len(vocab)}\n{nnz}\n")
        for d, counts in enumerate(docs, 1):
            f.write("".join(f"{d} {w + 1} {c}\n" for w, c in sorted(counts.items())))
    with open(vocab_path, "w") as f:
        f.write("".join(w + "\n" for w in vocab))
    print(len(docs), len(vocab), sum(sum(d.values()) for d in docs))


def stop_words(problem_cpp):
    source = open(problem_cpp, encoding="utf-8").read()
    block = re.search(r"stop_words\(\) \{(.*?)return words;", source, re.S)
    words = set(re.findall(r'"([a-z]+)"', block.group(1))) if block else set()
    if len(words) < 50:
        sys.exit(f"lda_peer.py: found no stop-word list in {problem_cpp} (stop_words())")
    return words


def text(chapters, problem_cpp, docword, vocab_path):
    stop = stop_words(problem_cpp)
    data = open(chapters, "rb").read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":  # a final newline ends the last line
        lines.pop()
    ids, names, doc_freq, docs = {}, [], [], []
    for line in lines:
        words = []
        for w in re.findall(rb"[A-Za-z]+", line):
            w = w.lower().decode()
            if len(w) >= 3 and w not in stop:
                if w not in ids:
                    ids[w] = len(names)
                    names.append(w)
                    doc_freq.append(0)
                words.append(ids[w])
        for w in set(words):
            doc_freq[w] += 1
        docs.append(words)
    kept = {}
    for w, n in enumerate(doc_freq):
        if n >= 2:
            kept[w] = len(kept)
    counts = [collections.Counter(kept[w] for w in words if w in kept) for words in docs]
    write_docword(docword, vocab_path, [c for c in counts if c], [names[w] for w in kept])


def dirichlet(rng, a, n):
    p = [rng.gammavariate(a, 1) for _ in range(n)]
    s = sum(p)
    return [x / s for x in p] if s > 0 else [1 / n] * n


def generate(docs, words, topics, doclen, seed, docword, vocab_path):
    rng = random.Random(seed)
    phi = []
    for _ in range(topics):
        p, acc = dirichlet(rng, 0.01, words), 0.0
        cdf = []
        for x in p:
            acc += x
            cdf.append(acc)
        phi.append(cdf)
    corpus = []
    for _ in range(docs):
        theta = dirichlet(rng, 0.1, topics)
        length = max(1, doclen // 2 + rng.randint(0, doclen))
        counts = collections.Counter()
        for k, n in collections.Counter(rng.choices(range(topics), weights=theta, k=length)).items():
            counts.update(rng.choices(range(words), cum_weights=phi[k], k=n))
        corpus.append(counts)
    used = sorted({w for c in corpus for w in c})
    new = {w: i for i, w in enumerate(used)}
    write_docword(docword, vocab_path, [collections.Counter({new[w]: n for w, n in c.items()}) for c in corpus],
                  [f"w{w}" for w in used])


def yahoo(docword, vocab_path, out):
    vocab = [w.rstrip("\n") for w in open(vocab_path)]
    docs = collections.defaultdict(list)
    with open(docword) as f:
        for _ in range(3):
            f.readline()
        for line in f:
            d, w, c = map(int, line.split())
            docs[d].extend([vocab[w - 1]] * c)
    with open(out, "w") as f:
        for d in sorted(docs):
            f.write(f"d{d} d{d} {' '.join(docs[d])}\n")


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "text":
        text(*args)
    elif mode == "generate":
        generate(*map(int, args[:5]), *args[5:])
    elif mode == "yahoo":
        yahoo(*args)
    else:
        sys.exit(f"lda_peer.py: unknown mode '{mode}' (text, generate, yahoo)")
