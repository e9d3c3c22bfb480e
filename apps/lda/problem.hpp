// LDA's data, shared by the serial program and its Strata twin: a corpus as
// (document, word, count) entries, a generator that follows LDA's generative
// process (so the planted topics are known), loaders for UCI bag-of-words files and
// plain text, and the quality measures that need the whole model.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata {
class Runtime;
}

namespace strata::apps::lda {

/// `count` tokens of word `word` in document `doc`.
struct DocWord {
  std::int32_t doc = 0, word = 0, count = 0;
};

struct Problem {
  std::int64_t docs = 0, words = 0, tokens = 0;
  std::vector<DocWord> entries;         ///< sorted by (doc, word), counts >= 1; the serial visiting order
  std::int32_t max_count = 1;           ///< largest count: extent of the occurrence dimension
  std::vector<std::string> vocabulary;  ///< word names, when the data has them
  /// Synthetic data only: the generating topics, planted[k][w] = phi_kw.
  std::vector<std::vector<double>> planted;
  std::string source;                   ///< one line: where the corpus came from
  /// The word's name, or "w<id>" without a vocabulary.
  std::string word_name(std::int64_t w) const;
};

/// What --synthetic takes.
struct SyntheticSpec {
  std::int64_t docs = 2000, words = 5000;
  int topics = 20;            ///< topics of the generating model
  std::int64_t doclen = 100;  ///< mean tokens per document (uniform in [doclen/2, 3 doclen/2])
  double alpha = 0.1, beta = 0.01;  ///< the generating model's Dirichlet priors
};

/// LDA's generative process: phi_k ~ Dirichlet(beta) over words for each topic,
/// theta_d ~ Dirichlet(alpha) over topics for each document, and each token draws a
/// topic from theta_d and then a word from that topic's phi. Every draw comes from a
/// stream keyed by the seed and the topic or document, so every rank generates the
/// same corpus.
Problem generate(const SyntheticSpec& spec, std::uint64_t seed);

/// Reads a corpus: a UCI bag-of-words file when its first lines look like one
/// (io::looks_like_docword), otherwise plain text. The file is mapped, never read as
/// a stream, so looking at its first lines consumes nothing: it must be a regular
/// file (IoError otherwise). ParseError names the file and line of bad input.
/// Collective.
Problem load(Runtime& rt, const std::string& path);

/// UCI "docword" format, read by the library's loader (strata::load_docword): three
/// header lines (documents, words, records), then records "doc word count" with
/// 1-based ids, in parallel on every rank; every rank ends with the whole corpus. A
/// (doc, word) pair given twice is an error naming both lines, as in the library.
/// Word names come from the sibling vocab.NAME.txt of docword.NAME.txt when it exists.
/// Collective.
Problem load_docword(Runtime& rt, const std::string& path);

/// Plain text `text` of the file `path`, one document per line: letters only,
/// lower-cased; words shorter than 3 letters, a built-in list of English stop words
/// (with the King James Bible's archaic ones) and words seen in fewer than 2 documents
/// are dropped, then lines left without words. Words are numbered in order of first
/// appearance. On the calling rank alone.
Problem load_text(const std::string& path, std::string_view text);

/// The `n` most frequent words of each topic, given word-topic counts (words x K,
/// row-major): result[k] lists word ids, most frequent first.
std::vector<std::vector<std::int64_t>> top_words(const std::vector<std::int32_t>& word_counts, std::int64_t words,
                                                 int K, int n);

/// How well learned topics match the planted ones: for each planted topic, the
/// cosine similarity of its word distribution with the closest learned topic's
/// (word-topic counts plus beta, normalised), averaged over planted topics. 1 means
/// every planted topic was found exactly. Needs synthetic data.
double topic_recovery(const Problem& p, const std::vector<std::int32_t>& word_counts, int K, double beta);

}  // namespace strata::apps::lda
