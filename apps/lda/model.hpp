// LDA's model options and the sampler, shared by the serial program and its Strata
// twin (both must do the same arithmetic in the same order for the bit-for-bit
// comparison).
//
// The sampler is SparseLDA's (Yao, Mimno and McCallum, KDD 2009). The collapsed
// Gibbs conditional of a token of word w in document d,
//   p(z = k) ∝ (alpha + n_dk) (beta + n_wk) / (beta V + n_k),
// splits into three buckets:
//   s = sum_k            alpha beta           / (beta V + n_k)   smoothing, O(K), rarely drawn
//   r = sum_{n_dk > 0}   n_dk beta            / (beta V + n_k)   document, O(topics of d)
//   q = sum_{n_wk > 0}   n_wk (alpha + n_dk)  / (beta V + n_k)   word, O(topics of w)
// With the topic rows' non-zero lists (topic_row.hpp) a draw costs O(topics of d +
// topics of w). All the totals n_k contribute is the coefficients 1/(beta V + n_k)
// and s: coefficients() computes them as K + 1 doubles, inv[k] for each topic, then s.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "lda/topic_row.hpp"
#include "strata/index.hpp"
#include "strata/random.hpp"

namespace strata::apps::lda {

/// How a token's new topic is drawn: SparseLDA's exact conditional (below), or a
/// short Metropolis-Hastings chain of cheap proposals (mh_sampler.hpp).
enum class Sampler { sparse, mh };

struct Options {
  int topics = 20;      ///< K
  double alpha = 0.1;   ///< symmetric Dirichlet prior of document-topic distributions
  double beta = 0.01;   ///< symmetric Dirichlet prior of topic-word distributions
  std::uint64_t seed = 42;
  Sampler sampler = Sampler::sparse;
  int mh_steps = 2;  ///< Metropolis-Hastings: cycles of a document and a word move per token
  int blocks_per_worker = 0;  ///< 2-D plans: time blocks per worker (0: Strata's choice)
  int rounds = 0;             ///< 2-D plans: rounds of the word blocks per pass (0: Strata's choice)
  int slices = 0;             ///< 2-D plans: slices of each worker's documents (0: Strata's choice)
};

/// A token is (document, word, occurrence): the occurrence numbers the repeats of a
/// word in a document, so every token has its own index.
using Token = Index<3>;

/// The counter of a token's random numbers: a function of its index only, so a
/// token draws the same numbers whichever worker samples it, in whatever order.
inline std::uint64_t token_counter(const Token& t) {
  return mix64((static_cast<std::uint64_t>(t[0]) << 32) ^ static_cast<std::uint64_t>(t[1])) +
         static_cast<std::uint64_t>(t[2]);
}

/// Every token's topic before the first pass: uniform over K.
inline std::int32_t initial_topic(std::uint64_t seed, const Token& t, int K) {
  return static_cast<std::int32_t>(CounterRng(seed, 0x1DA0).below(token_counter(t), static_cast<std::uint64_t>(K)));
}

/// The generator of pass `pass`'s draws (pass = 1, 2, ...).
inline CounterRng pass_rng(std::uint64_t seed, int pass) {
  return CounterRng(seed, 0x1DA1 + static_cast<std::uint64_t>(pass));
}

/// 1/(beta V + n_k) of topic k: the only way coefficients are computed, so the
/// serial program's live updates and the per-pass tables agree bit for bit.
inline double inverse_total(const Options& o, std::int64_t words, std::int64_t n_k) {
  return 1.0 / (o.beta * static_cast<double>(words) + static_cast<double>(n_k));
}

/// The sampler's coefficients for topic totals n_k: inv[k], then s at [K].
inline std::vector<double> coefficients(std::span<const std::int64_t> totals, const Options& o, std::int64_t words) {
  const auto K = totals.size();
  std::vector<double> inv(K + 1);
  double sum = 0;
  for (std::size_t k = 0; k < K; ++k) sum += inv[k] = inverse_total(o, words, totals[k]);
  inv[K] = o.alpha * o.beta * sum;
  return inv;
}

/// sum of term(k) over the non-zero topics of `row`, in four interleaved partial
/// sums: one running sum would make every addition wait for the previous one.
template <class Row, class Term>
double sum_over_nonzeros(const Row& row, Term term) {
  double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  const std::int32_t n = row.nonzeros();
  std::int32_t i = 0;
  for (; i + 4 <= n; i += 4) {
    a0 += term(row.topic(i));
    a1 += term(row.topic(i + 1));
    a2 += term(row.topic(i + 2));
    a3 += term(row.topic(i + 3));
  }
  for (; i < n; ++i) a0 += term(row.topic(i));
  return (a0 + a1) + (a2 + a3);
}

/// Draws a topic for a token whose own assignment has been removed from `doc` and
/// `word` (rows of its document and word), given coefficients `inv` and a uniform
/// number u in (0, 1). WordRow is a TopicRow(View) or anything with its read methods.
template <class DocRow, class WordRow>
std::int32_t draw_topic(const DocRow& doc, const WordRow& word, const double* inv, int K, const Options& o,
                        double u) {
  auto r_term = [&](std::int32_t k) { return doc.count(k) * inv[k]; };
  auto q_term = [&](std::int32_t k) { return word.count(k) * (o.alpha + doc.count(k)) * inv[k]; };
  const double r = o.beta * sum_over_nonzeros(doc, r_term), q = sum_over_nonzeros(word, q_term);
  u *= inv[K] + r + q;
  // Walk the chosen bucket; rounding can leave u a hair above zero at the end, so
  // the last topic visited is the answer then.
  std::int32_t k = 0;
  if (u < q) {
    for (std::int32_t i = 0; i < word.nonzeros(); ++i)
      if ((u -= q_term(k = word.topic(i))) <= 0) break;
  } else if ((u -= q) < r) {
    u /= o.beta;
    for (std::int32_t i = 0; i < doc.nonzeros(); ++i)
      if ((u -= r_term(k = doc.topic(i))) <= 0) break;
  } else {
    u = (u - r) / (o.alpha * o.beta);
    for (k = 0; k + 1 < K; ++k)
      if ((u -= inv[k]) <= 0) break;
  }
  return k;
}

/// p(w | d) = sum_k theta_dk phi_kw with the posterior means
///   theta_dk = (n_dk + alpha) / (n_d + K alpha),  phi_kw = (n_wk + beta) / (n_k + V beta),
/// in the sampler's sparse form: (beta sum_{n_dk>0} n_dk inv_k + sum_{n_wk>0} n_wk
/// (alpha + n_dk) inv_k + s) / (n_d + K alpha), with inv and s of the current totals.
template <class DocRow, class WordRow>
double token_likelihood(const DocRow& doc, const WordRow& word, const double* inv, int K, const Options& o) {
  std::int64_t length = 0;
  for (std::int32_t i = 0; i < doc.nonzeros(); ++i) length += doc.count(doc.topic(i));
  const double a = sum_over_nonzeros(doc, [&](std::int32_t k) { return doc.count(k) * inv[k]; });
  const double b =
      sum_over_nonzeros(word, [&](std::int32_t k) { return word.count(k) * (o.alpha + doc.count(k)) * inv[k]; });
  return (o.beta * a + b + inv[K]) / (static_cast<double>(length) + K * o.alpha);
}

}  // namespace strata::apps::lda
