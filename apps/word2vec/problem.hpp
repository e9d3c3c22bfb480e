// word2vec's data, shared by the serial program and its Strata twin: a corpus of
// sentences over a vocabulary counted from the training sentences, read from a text
// file or generated from a planted embedding (so quality has a ground truth), and the
// quality measures that need the whole model.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata::apps::word2vec {

/// A sentence: tokens [begin, begin + count) of its corpus's token vector.
struct Sentence {
  std::int64_t begin = 0;
  std::int32_t count = 0;
};

/// Sentences: one vector of word ids, sentence after sentence.
struct Sentences {
  std::vector<std::int32_t> tokens;
  std::vector<Sentence> list;
};

struct Corpus {
  std::vector<std::string> words;    ///< the vocabulary by id: most frequent first
  std::vector<std::int64_t> counts;  ///< each word's occurrences in the training sentences
  Sentences train, test;             ///< words outside the vocabulary dropped
  /// Generated corpora only: each word's planted position on the ring of topical words
  /// (in ring steps), or -1 for a common word, which has none.
  std::vector<std::int64_t> planted;
  std::int64_t ring = 0;             ///< generated: topical words on the ring
  double spread = 0;                 ///< generated: a sentence's spread on the ring, in ring steps
  std::string source;                ///< one line: where the corpus came from
  std::int64_t train_tokens() const { return static_cast<std::int64_t>(train.tokens.size()); }
};

/// Lines longer than this many words are cut into sentences of at most this length
/// (as word2vec does): a sentence is one loop iteration, and a long line would make one
/// iteration a large share of a pass.
inline constexpr std::int32_t kMaxSentence = 1000;

/// What --synthetic takes. Topical words sit on a ring; a sentence picks a centre on
/// it and draws each word near it (normal, `spread` steps), or, with probability
/// `common_share`, one of `common` words of Zipf-distributed frequency that belong to
/// no place (as "the" and "of" do). Words near each other on the ring share contexts,
/// so a good embedding puts them near each other: planted_similarity measures it.
struct SyntheticSpec {
  std::int64_t sentences = 20000;
  std::int64_t words = 5000;    ///< topical words on the ring
  std::int64_t common = 100;    ///< common words
  std::int32_t length = 20;     ///< mean words a sentence (uniform in [length/2, 3 length/2])
  double spread = 8;            ///< standard deviation of a sentence's words around its centre, in ring steps
  double common_share = 0.3;    ///< share of tokens that are common words
};

/// Generates `spec`'s corpus, `holdout` of its sentences held out. Every draw comes from
/// a stream keyed by the seed and the sentence, so every rank generates the same corpus.
Corpus generate(const SyntheticSpec& spec, double holdout, int min_count, std::uint64_t seed);

/// A text file of whitespace-separated words, a sentence a line (as word2vec and
/// fastText read it; no case folding or punctuation stripping: prepare the text as
/// wanted). Lines chosen by the seed, a `holdout` share of them, are held out; the
/// vocabulary is the training lines' words seen at least `min_count` times. IoError for
/// an unreadable file, ParseError when no word survives. Each rank reads the whole file.
Corpus load_text(const std::string& path, double holdout, int min_count, std::uint64_t seed);

/// Replaces the held-out sentences by those of the text file `path` (words outside
/// the vocabulary dropped).
void attach_test(Corpus& c, const std::string& path);

/// The corpus from `text` (the contents of `path`, for messages): load_text's rules.
Corpus corpus_from_text(const std::string& path, std::string_view text, double holdout, int min_count,
                        std::uint64_t seed);

/// How well an embedding (`vectors`: a row of `dim` per word) recovers the planted ring:
/// the Spearman rank correlation, over 2,000 pairs of topical words at ring distances
/// 1 to 3 x spread (where sentences make them share contexts), between the pair's
/// cosine similarity and its closeness on the ring. 1: the embedding orders every pair
/// as the ring does. Generated corpora only.
double planted_similarity(const Corpus& c, const std::vector<float>& vectors, int dim);

}  // namespace strata::apps::word2vec
