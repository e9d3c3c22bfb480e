#!/usr/bin/env bash
# Real data sets for the apps, from Debian packages, converted to the formats the
# loaders of `strata train` read. Nothing here is committed: everything lands in
# data/real/ (ignored by git) and is rebuilt from the packages on demand.
usage() {
  cat <<'EOF'
usage: scripts/datasets.sh [--force] [movielens|kjv|austen|fashion|wordnet ...]

Installs the Debian packages that ship the data (only those missing) and converts
them under data/real/ (DATA_DIR=... to change), for the three apps:

  movielens  r-cran-dslabs (R object `movielens`, 100,004 ratings of 671 users on
             9,066 movies, MovieLens "latest-small" of 2016), exported by Rscript:
               movielens/ratings.txt     "user movie rating", one per line      (mf)
  kjv        bible-kjv (King James Bible, 31,102 verses):
               kjv/chapters.txt          one chapter per line (1,189 documents)  (lda)
               kjv/sentences.txt         one verse per line, lower-case words    (word2vec)
               kjv/ot-nt.svm             LIBSVM, one verse per line, bag of words,
                                         +1 New Testament / -1 Old Testament     (slr)
               kjv/ot-nt.vocab           feature i is the word on line i
  austen     r-cran-janeaustenr (Jane Austen's six novels):
               austen/passages.txt       one passage per line: consecutive
                                         paragraphs of one chapter, >= 200 words (lda)
               austen/pp-ss.svm          LIBSVM, one paragraph (>= 10 words) per line,
                                         +1 Pride & Prejudice / -1 Sense & Sensibility (slr)
               austen/pp-ss.vocab        feature i is the word on line i
  fashion    dataset-fashion-mnist (Zalando's Fashion-MNIST: 28x28 grey images of
             10 kinds of clothing, 60,000 to train and 10,000 to test):
               fashion/train.svm         LIBSVM, one image per line, label 0..9,
               fashion/test.svm          features 1..784 the pixels scaled to [0, 1]
                                         (zero pixels left out)                  (mlr)
  wordnet    wordnet-base (WordNet 3.0's pointers between synsets):
               wordnet/triples.txt       "head relation tail", a synset named
                                         lemma.type.offset; 26 relations      (transe)

With no name, all five. A set already converted is kept (the script is idempotent);
--force converts it again. Then, for example:
  strata train mf  --data data/real/movielens/ratings.txt --epochs 10 --threads 2
  strata train lda --data data/real/kjv/chapters.txt --epochs 10 --threads 2
  strata train slr --data data/real/kjv/ot-nt.svm --epochs 5 --threads 2
  strata train word2vec --data data/real/kjv/sentences.txt --epochs 5 --threads 2
  strata train transe --data data/real/wordnet/triples.txt --epochs 20 --threads 2
  strata train mlr --data data/real/fashion/train.svm --test data/real/fashion/test.svm --threads 2
EOF
}
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

force=0
sets=()
for arg in "$@"; do
  case "$arg" in
    -h|--help) usage; exit 0 ;;
    --force) force=1 ;;
    movielens|kjv|austen|fashion|wordnet) sets+=("$arg") ;;
    *) echo "datasets.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done
[ ${#sets[@]} -eq 0 ] && sets=(movielens kjv austen fashion wordnet)

DATA_DIR=${DATA_DIR:-data/real}
PY=/usr/bin/python3  # Debian's, standard library only (not whatever python3 is first on PATH)

die() { echo "datasets.sh: $*" >&2; exit 1; }

# The packages this script needs (not the build's: it builds nothing).
STRATA_PACKAGES=(python3)
for s in "${sets[@]}"; do
  case "$s" in
    movielens) STRATA_PACKAGES+=(r-base-core r-cran-dslabs) ;;
    kjv) STRATA_PACKAGES+=(bible-kjv) ;;
    austen) STRATA_PACKAGES+=(r-base-core r-cran-janeaustenr) ;;
    fashion) STRATA_PACKAGES+=(dataset-fashion-mnist) ;;
    wordnet) STRATA_PACKAGES+=(wordnet-base) ;;
  esac
done
strata_ensure_packages || die "could not install ${STRATA_PACKAGES[*]} (apt-get failed; see above)"
[ -x "$PY" ] || die "$PY is missing after installing python3"

version() { dpkg-query -W -f='${Package} ${Version}' "$1"; }

# The conversions: tokenising, documents, bag-of-words features, LIBSVM lines.
convert() {
  "$PY" - "$@" <<'PY'
import math, random, re, sys

WORD = re.compile(r"[a-z]+")

def words(text):
    return WORD.findall(text.lower())

def write_svm(path, vocab_path, samples):
    """samples: (label +1/-1, text). Features: the words of 2 or more samples, valued
    1/sqrt(distinct words) (binary bag of words, unit length). Rows are shuffled with a
    fixed seed: the slr app visits samples in file order."""
    bags = [(y, sorted(set(words(t)))) for y, t in samples]
    df = {}
    for _, b in bags:
        for w in b:
            df[w] = df.get(w, 0) + 1
    vocab = sorted(w for w, n in df.items() if n >= 2)
    index = {w: i + 1 for i, w in enumerate(vocab)}
    random.Random(5).shuffle(bags)
    with open(path, "w") as out:
        for y, b in bags:
            f = [index[w] for w in b if w in index]
            v = 1 / math.sqrt(len(f)) if f else 0
            out.write(("+1" if y > 0 else "-1") + "".join(f" {i}:{v:.6g}" for i in f) + "\n")
    with open(vocab_path, "w") as out:
        out.write("\n".join(vocab) + "\n")
    pos = sum(1 for y, _ in bags if y > 0)
    print(f"  {len(bags)} samples ({pos} positive, {len(bags) - pos} negative), {len(vocab)} features")

def kjv(verses, outdir):
    # "Ge1:1 In the beginning ...", "1Sa3:4 ...": reference, then the verse.
    ref = re.compile(r"^(\d?[A-Za-z]+)(\d+):(\d+) (.*)$")
    chapters, samples, new_testament = [], [], False
    last = None
    for n, line in enumerate(open(verses, encoding="utf-8", errors="replace"), 1):
        m = ref.match(line.rstrip("\n"))
        if not m:
            sys.exit(f"{verses}:{n}: not a verse ('Book1:1 text'): {line[:60]!r}")
        book, chap, verse, text = m.group(1), m.group(2), m.group(3), m.group(4)
        if book == "Mat" and chap == "1" and verse == "1":
            new_testament = True
        if (book, chap) != last:
            chapters.append([])
            last = (book, chap)
        chapters[-1].append(text)
        samples.append((1 if new_testament else -1, text))
    if len(samples) != 31102 or not new_testament:
        sys.exit(f"{verses}: expected the 31,102 verses of Genesis to Revelation, got {len(samples)}")
    with open(f"{outdir}/chapters.txt", "w") as out:
        for c in chapters:
            out.write(" ".join(c) + "\n")
    print(f"  {len(chapters)} chapters, {sum(len(words(' '.join(c))) for c in chapters)} words")
    with open(f"{outdir}/sentences.txt", "w") as out:  # word2vec: a verse a line, its words
        for _, text in samples:
            out.write(" ".join(words(text)) + "\n")
    write_svm(f"{outdir}/ot-nt.svm", f"{outdir}/ot-nt.vocab", samples)

def austen(tsv, outdir):
    # "book<TAB>line" in the novels' order; paragraphs end at blank lines, chapters
    # start at "CHAPTER 1" / "Chapter 1" headings; the title pages before the first
    # heading and "VOLUME I" lines are dropped.
    heading = re.compile(r"^(CHAPTER|Chapter) [0-9IVXLC]+\.?$|^VOLUME [IVX]+$")
    paragraphs = []  # (book, chapter number, text)
    book, chapter, lines = None, 0, []
    def end_paragraph():
        if lines and chapter > 0:
            paragraphs.append((book, chapter, " ".join(lines)))
        lines.clear()
    for n, row in enumerate(open(tsv, encoding="utf-8", errors="replace"), 1):
        b, _, text = row.rstrip("\n").partition("\t")
        text = text.strip()
        if b != book:
            end_paragraph()
            book, chapter = b, 0
        if heading.match(text):
            end_paragraph()
            if text.upper().startswith("CHAPTER"):
                chapter += 1
        elif not text:
            end_paragraph()
        else:
            lines.append(text)
    end_paragraph()
    books = sorted({p[0] for p in paragraphs})
    if len(books) != 6 or len(paragraphs) < 5000:
        sys.exit(f"{tsv}: expected the six novels in paragraphs, got {len(books)} books, {len(paragraphs)} paragraphs")
    # LDA documents: consecutive paragraphs of one chapter, closed at 200 words or
    # at the chapter's end (so a document never spans two chapters).
    docs, cur, cur_words, where = [], [], 0, None
    for b, c, text in paragraphs:
        if (b, c) != where and cur:
            docs.append(" ".join(cur)); cur, cur_words = [], 0
        where = (b, c)
        cur.append(text)
        cur_words += len(words(text))
        if cur_words >= 200:
            docs.append(" ".join(cur)); cur, cur_words = [], 0
    if cur:
        docs.append(" ".join(cur))
    with open(f"{outdir}/passages.txt", "w") as out:
        out.write("\n".join(docs) + "\n")
    print(f"  {len(paragraphs)} paragraphs in {sum(1 for _ in {(b, c) for b, c, _ in paragraphs})} chapters "
          f"-> {len(docs)} passages")
    # SLR: which of the two earliest novels a paragraph of 10 or more words is from.
    samples = [(1 if b == "Pride & Prejudice" else -1, t) for b, _, t in paragraphs
               if b in ("Pride & Prejudice", "Sense & Sensibility") and len(words(t)) >= 10]
    write_svm(f"{outdir}/pp-ss.svm", f"{outdir}/pp-ss.vocab", samples)

def fashion(images, labels, out_path):
    """IDX files (big-endian magic, sizes, then bytes), gzipped: images 2051, labels 2049."""
    import gzip, struct
    with gzip.open(images, "rb") as f:
        magic, n, rows, cols = struct.unpack(">IIII", f.read(16))
        pixels = f.read()
    with gzip.open(labels, "rb") as f:
        lmagic, ln = struct.unpack(">II", f.read(8))
        classes = f.read()
    size = rows * cols
    if magic != 2051 or lmagic != 2049 or n != ln or len(pixels) != n * size or len(classes) != n:
        sys.exit(f"{images}, {labels}: not a matching pair of IDX image and label files")
    value = [""] + [f"{v / 255:.4g}" for v in range(1, 256)]
    with open(out_path, "w") as out:
        for i in range(n):
            img = pixels[i * size:(i + 1) * size]
            out.write(str(classes[i]) + "".join(f" {j + 1}:{value[v]}" for j, v in enumerate(img) if v) + "\n")
    print(f"  {out_path.rsplit('/', 1)[-1]}: {n} images of {rows}x{cols}, {len(set(classes))} classes")

# WordNet's pointers between synsets as triples, the knowledge graph WN18 was cut
# from: "head relation tail", a synset named lemma.type.offset (its first lemma).
RELATIONS = {"@": "hypernym", "@i": "instance_hypernym", "~": "hyponym", "~i": "instance_hyponym",
             "#m": "member_holonym", "#s": "substance_holonym", "#p": "part_holonym",
             "%m": "member_meronym", "%s": "substance_meronym", "%p": "part_meronym",
             "=": "attribute", "+": "derivationally_related", "!": "antonym", "&": "similar_to",
             "<": "participle", "\\": "pertainym", "*": "entailment", ">": "cause", "^": "also_see",
             "$": "verb_group", ";c": "domain_topic", "-c": "member_of_domain_topic", ";r": "domain_region",
             "-r": "member_of_domain_region", ";u": "domain_usage", "-u": "member_of_domain_usage"}

def wordnet(src, out_path):
    file_of = {"n": "n", "v": "v", "a": "a", "s": "a", "r": "r"}  # satellites live in data.adj
    names, triples = {}, set()
    for part in ("noun", "verb", "adj", "adv"):
        for n, line in enumerate(open(f"{src}/data.{part}", encoding="latin-1"), 1):
            if line.startswith("  "):  # the licence
                continue
            f = line.split(" | ")[0].split()
            offset, ss_type, w_cnt = f[0], f[2], int(f[3], 16)
            me = file_of[ss_type] + offset
            names[me] = f"{f[4].lower()}.{ss_type}.{offset}"
            k = 4 + 2 * w_cnt
            for p in range(int(f[k])):
                sym, target, tpos = f[k + 1 + 4 * p], f[k + 2 + 4 * p], f[k + 3 + 4 * p]
                if sym not in RELATIONS:
                    sys.exit(f"{src}/data.{part}:{n}: unknown pointer symbol {sym!r}")
                triples.add((me, RELATIONS[sym], file_of[tpos] + target))
    order = sorted(triples)
    random.Random(1).shuffle(order)  # lines in no particular order: a held-out share is a random one
    with open(out_path, "w") as out:
        for h, r, t in order:
            out.write(f"{names[h]} {r} {names[t]}\n")
    print(f"  {len(order)} triples over {len(names)} synsets, {len({r for _, r, _ in order})} relations")

{"kjv": kjv, "austen": austen, "fashion": fashion, "wordnet": wordnet}[sys.argv[1]](*sys.argv[2:])
PY
}

# build NAME FILES...: converts set NAME unless all FILES and its stamp exist.
# Works in a scratch folder and moves the results into place at the end, so an
# interrupted run leaves no half-written file behind.
build() {
  local name=$1
  shift
  local dir="$DATA_DIR/$name" stamp="$DATA_DIR/$name/.converted"
  local f ok=1
  for f in "$@"; do [ -s "$dir/$f" ] || ok=0; done
  [ -f "$stamp" ] || ok=0
  if [ "$force" -eq 0 ] && [ "$ok" -eq 1 ]; then
    echo "== $name: up to date ($(cat "$stamp"))"
    return 0
  fi
  echo "== $name: converting"
  mkdir -p "$dir"
  local tmp
  tmp=$(mktemp -d "$DATA_DIR/.$name.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  "convert_$name" "$tmp" || die "$name: conversion failed (see above); nothing was changed in $dir"
  for f in "$@"; do
    [ -s "$tmp/$f" ] || die "$name: conversion produced no $f"
    mv -f "$tmp/$f" "$dir/$f"
  done
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) from ${versions[$name]}" > "$stamp"
  rm -rf "$tmp"
  trap - EXIT
}

convert_movielens() {
  local out=$1
  # shellcheck disable=SC2016  # R code: its $ is R's, not the shell's
  Rscript --vanilla -e '
    args <- commandArgs(trailingOnly = TRUE)
    data("movielens", package = "dslabs")
    m <- movielens[, c("userId", "movieId", "rating")]
    m <- m[order(m$userId, m$movieId), ]
    if (anyDuplicated(m[, 1:2]) > 0) stop("a user rates a movie twice")
    write.table(m, args[1], sep = " ", row.names = FALSE, col.names = FALSE, quote = FALSE)
    cat(sprintf("  %d ratings of %d users on %d movies, ratings %.1f..%.1f\n", nrow(m),
                length(unique(m$userId)), length(unique(m$movieId)), min(m$rating), max(m$rating)))
  ' "$out/ratings.txt" || return 1
}

convert_kjv() {
  local out=$1
  # -f: no pretty-printing, one "Book1:1 text" line per verse.
  bible -f 'Gen1:1-Rev22:21' > "$out/verses.txt" || return 1
  convert kjv "$out/verses.txt" "$out" || return 1
}

convert_austen() {
  local out=$1
  # shellcheck disable=SC2016  # R code: its $ is R's, not the shell's
  Rscript --vanilla -e '
    args <- commandArgs(trailingOnly = TRUE)
    b <- janeaustenr::austen_books()
    writeLines(paste(as.character(b$book), b$text, sep = "\t"), args[1], useBytes = TRUE)
  ' "$out/novels.tsv" || return 1
  convert austen "$out/novels.tsv" "$out" || return 1
}

convert_fashion() {
  local out=$1 idx=/usr/share/datasets/fashion-mnist
  convert fashion "$idx/train-images-idx3-ubyte.gz" "$idx/train-labels-idx1-ubyte.gz" "$out/train.svm" || return 1
  convert fashion "$idx/t10k-images-idx3-ubyte.gz" "$idx/t10k-labels-idx1-ubyte.gz" "$out/test.svm" || return 1
}

convert_wordnet() {
  convert wordnet /usr/share/wordnet "$1/triples.txt" || return 1
}

declare -A versions=([movielens]="$(version r-cran-dslabs 2>/dev/null || true)"
                     [kjv]="$(version bible-kjv-text 2>/dev/null || true)"
                     [austen]="$(version r-cran-janeaustenr 2>/dev/null || true)"
                     [fashion]="$(version dataset-fashion-mnist 2>/dev/null || true)"
                     [wordnet]="$(version wordnet-base 2>/dev/null || true)")
mkdir -p "$DATA_DIR"
for s in "${sets[@]}"; do
  case "$s" in
    movielens) build movielens ratings.txt ;;
    kjv) build kjv chapters.txt sentences.txt ot-nt.svm ot-nt.vocab ;;
    austen) build austen passages.txt pp-ss.svm pp-ss.vocab ;;
    fashion) build fashion train.svm test.svm ;;
    wordnet) build wordnet triples.txt ;;
  esac
done

echo "== data sets in $DATA_DIR"
for s in "${sets[@]}"; do
  for f in "$DATA_DIR/$s"/*; do
    printf '  %-36s %8s %9s lines\n' "$f" "$(numfmt --to=iec --suffix=B "$(stat -c %s "$f")")" "$(wc -l < "$f")"
  done
done
