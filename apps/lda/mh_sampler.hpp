// LDA's Metropolis-Hastings sampler (`--sampler mh`), of the LightLDA family (Yuan et
// al., WWW 2015): instead of the exact conditional
//   p(k) ∝ (alpha + n_dk) (beta + n_wk) inv_k,   inv_k = 1 / (beta V + n_k),
// a token runs a short Metropolis-Hastings chain that alternates two proposals,
// each cheap to draw, and accepts or rejects each move by the ratio of p to the
// proposal:
//   document proposal  q_d(k) ∝ alpha + n_dk   (the document's current counts; a
//       walk of its non-zero topics, which are few, or a uniform topic),
//       acceptance (beta + n_wt) inv_t / ((beta + n_ws) inv_s);
//   word proposal      q_w(k) ∝ (beta + n'_wk) inv'_k  (the word's counts n' and the
//       coefficients inv' when the pass began, as an alias table: O(1) a draw),
//       acceptance  (alpha + n_dt)(beta + n_wt) inv_t (beta + n'_ws) inv'_s
//                 / ((alpha + n_ds)(beta + n_ws) inv_s (beta + n'_wt) inv'_t).
// A draw then costs O(topics of the document) and nothing in the word's topics,
// where SparseLDA's costs O(topics of the document + topics of the word): the gain
// grows with K. The chain starts at the token's old topic, so a pass is one sweep of
// a valid (if slower mixing) sampler.
//
// The word proposal splits as LightLDA's: a sparse part n'_wk inv'_k over the word's
// non-zero topics (one alias table per word, built when a pass begins) and a dense
// part beta inv'_k shared by all words (one alias table per pass). Each table row is
// int32 cells, so it fits a DistArray row as the topic rows do:
//   [0, K)            n'_wk, the word's counts when the table was built
//   [K]               m, the number of non-zero topics
//   [K+1, K+3)        the sparse mass S_w = sum_k n'_wk inv'_k, a double
//   [K+3, K+3+3m)     m alias entries: topic, threshold (float bits), alias topic
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "common/alias_pairing.hpp"
#include "lda/model.hpp"
#include "lda/topic_row.hpp"
#include "strata/random.hpp"

namespace strata::apps::lda {

/// Cells of a word's proposal row for K topics.
constexpr std::int64_t word_proposal_width(int K) { return 4 * static_cast<std::int64_t>(K) + 3; }
/// Doubles of the shared part: inv'_k for each topic, the dense mass D = beta sum_k
/// inv'_k, then K thresholds and K alias topics.
constexpr std::int64_t dense_proposal_width(int K) { return 3 * static_cast<std::int64_t>(K) + 1; }

/// Builds the shared part of the word proposal from the coefficients inv (the
/// sampler's, model.hpp: inv[k], then s).
inline void build_dense_proposal(const double* inv, int K, const Options& o, std::span<double> out,
                                 AliasPairing& pairing) {
  const std::span<double> scaled = pairing.scaled(static_cast<std::size_t>(K));
  double sum = 0;
  for (int k = 0; k < K; ++k) {
    out[static_cast<std::size_t>(k)] = inv[k];
    sum += scaled[static_cast<std::size_t>(k)] = o.beta * inv[k];
  }
  out[static_cast<std::size_t>(K)] = sum;
  for (double& x : scaled) x = x * K / sum;
  double* keep = out.data() + K + 1;
  double* other = keep + K;
  pairing.pair([&](std::size_t k, double p, std::size_t a) {
    keep[k] = p;
    other[k] = static_cast<double>(a);
  });
}

/// Builds a word's proposal row from its topic row and the shared part.
template <class WordRow>
void build_word_proposal(const WordRow& word, const double* dense, int K, std::span<std::int32_t> out,
                         AliasPairing& pairing) {
  std::fill_n(out.begin(), K, 0);
  const std::int32_t m = word.nonzeros();
  out[static_cast<std::size_t>(K)] = m;
  const std::span<double> scaled = pairing.scaled(static_cast<std::size_t>(m));
  double sum = 0;
  for (std::int32_t i = 0; i < m; ++i) {
    const std::int32_t k = word.topic(i);
    out[static_cast<std::size_t>(k)] = word.count(k);
    sum += scaled[static_cast<std::size_t>(i)] = word.count(k) * dense[k];
  }
  std::memcpy(&out[static_cast<std::size_t>(K + 1)], &sum, sizeof sum);
  for (double& x : scaled) x = x * m / sum;
  std::int32_t* entry = out.data() + K + 3;
  pairing.pair([&](std::size_t i, double p, std::size_t a) {
    entry[3 * i] = word.topic(static_cast<std::int32_t>(i));
    entry[3 * i + 1] = std::bit_cast<std::int32_t>(static_cast<float>(p));
    entry[3 * i + 2] = word.topic(static_cast<std::int32_t>(a));
  });
}

/// The random numbers of one token's chain in one pass: two uniforms per move, from
/// streams of their own (so a token draws the same numbers wherever it is sampled).
class ChainStreams {
 public:
  static constexpr int kMaxSteps = 16;
  ChainStreams(std::uint64_t seed, int pass, int steps) : steps_(steps) {
    for (int j = 0; j < 4 * steps; ++j)
      rng_.emplace_back(seed, 0x1DA2'0000ULL + static_cast<std::uint64_t>(pass) * 4 * kMaxSteps +
                                  static_cast<std::uint64_t>(j));
  }
  int steps() const { return steps_; }
  double uniform(int j, std::uint64_t counter) const { return rng_[static_cast<std::size_t>(j)].uniform(counter); }

 private:
  int steps_;
  std::vector<CounterRng> rng_;
};

/// Draws from the word proposal of `prop` (a proposal row) and `dense` with u in (0, 1),
/// or returns -1 where the tables are empty: a loop's reconnaissance may run the body
/// over rows of zeros (the rows of other ranks), and a draw must stay in bounds there.
inline std::int32_t propose_from_word(const std::int32_t* prop, const double* dense, int K, double u) {
  double sparse;
  std::memcpy(&sparse, prop + K + 1, sizeof sparse);
  if (!(sparse + dense[K] > 0)) return -1;
  const double x = u * (sparse + dense[K]);
  if (x < sparse) {
    const std::int32_t m = prop[K];
    const double y = x / sparse * m;
    const std::int32_t i = std::min(static_cast<std::int32_t>(y), m - 1);
    const std::int32_t* e = prop + K + 3 + 3 * i;
    return y - i < std::bit_cast<float>(e[1]) ? e[0] : e[2];
  }
  const double y = (x - sparse) / dense[K] * K;
  const std::int32_t i = std::min(static_cast<std::int32_t>(y), K - 1);
  return y - i < dense[K + 1 + i] ? i : static_cast<std::int32_t>(dense[2 * K + 1 + i]);
}

/// Draws from the document proposal alpha + n_dk with u in (0, 1); `length` is the
/// sum of the document's counts.
template <class DocRow>
std::int32_t propose_from_document(const DocRow& doc, std::int64_t length, int K, const Options& o, double u) {
  double x = u * (static_cast<double>(length) + K * o.alpha);
  if (x < static_cast<double>(length)) {
    std::int32_t k = 0;
    for (std::int32_t i = 0; i < doc.nonzeros(); ++i)
      if ((x -= doc.count(k = doc.topic(i))) < 0) break;
    return k;
  }
  return std::clamp(static_cast<std::int32_t>((x - static_cast<double>(length)) / o.alpha), 0, K - 1);
}

/// A new topic for a token whose old topic `s` has been removed from `doc` and `word`,
/// by `streams.steps()` cycles of a document move and a word move. `prop` is the
/// word's proposal row, `dense` the shared part, `inv` the sampler's current
/// coefficients (model.hpp), `counter` the token's (token_counter).
template <class DocRow, class WordRow>
std::int32_t mh_draw(const DocRow& doc, const WordRow& word, const std::int32_t* prop, const double* dense,
                     const double* inv, int K, const Options& o, std::int32_t s, const ChainStreams& streams,
                     std::uint64_t counter) {
  std::int64_t length = 0;
  for (std::int32_t i = 0; i < doc.nonzeros(); ++i) length += doc.count(doc.topic(i));
  auto word_term = [&](std::int32_t k) { return (o.beta + word.count(k)) * inv[k]; };
  for (int step = 0; step < streams.steps(); ++step) {
    std::int32_t t = propose_from_document(doc, length, K, o, streams.uniform(4 * step, counter));
    if (t != s && streams.uniform(4 * step + 1, counter) * word_term(s) < word_term(t)) s = t;
    t = propose_from_word(prop, dense, K, streams.uniform(4 * step + 2, counter));
    if (t == s || t < 0) continue;
    const double to = (o.alpha + doc.count(t)) * word_term(t) * ((o.beta + prop[s]) * dense[s]);
    const double from = (o.alpha + doc.count(s)) * word_term(s) * ((o.beta + prop[t]) * dense[t]);
    if (streams.uniform(4 * step + 3, counter) * from < to) s = t;
  }
  return s;
}

}  // namespace strata::apps::lda
