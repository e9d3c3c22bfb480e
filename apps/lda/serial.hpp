// The serial LDA program: collapsed Gibbs sampling in plain C++ over std::vector.
#pragma once

#include <cstdint>
#include <vector>

#include "lda/model.hpp"
#include "lda/problem.hpp"

namespace strata::apps::lda {

class SerialLda {
 public:
  /// How the sampler sees the topic totals n_k. live: every token's change at once
  /// (exact collapsed Gibbs: the serial program). per_pass: as they were when the
  /// pass began, the pass's changes applied at its end: what the Strata version's
  /// Buffer does, for bit-for-bit comparisons.
  enum class Totals { live, per_pass };

  SerialLda(const Problem& problem, const Options& options, Totals totals = Totals::live);
  /// One Gibbs pass over every token, in corpus order or in the order set_order gave.
  void pass();
  /// Later passes visit the tokens in `order` (a Strata plan's equivalent order).
  void set_order(const std::vector<Token>& order);
  /// Mean log p(w | d) over tokens, with posterior-mean theta and phi (model.hpp).
  double loglik_per_token() const;

  const std::vector<std::int32_t>& doc_topic() const { return doc_topic_; }    ///< docs x topic_row_width(K)
  const std::vector<std::int32_t>& word_topic() const { return word_topic_; }  ///< words x topic_row_width(K)
  const std::vector<std::int64_t>& totals() const { return totals_; }          ///< tokens per topic
  const std::vector<std::int32_t>& topics() const { return z_; }               ///< each token's topic, corpus order

 private:
  void add_total(std::int32_t k, std::int64_t delta);
  void end_pass();

  const Problem& p_;
  Options o_;
  Totals rule_;
  int passes_ = 0;
  std::vector<Token> tokens_;  // corpus order
  std::vector<std::int32_t> z_, doc_topic_, word_topic_;
  std::vector<std::int64_t> totals_, pending_;
  std::vector<double> inv_;     // coefficients(totals_): inv[k], then s
  // Sampler::mh only: the proposals as the pass began (mh_sampler.hpp).
  std::vector<std::int32_t> word_proposal_;  // words x word_proposal_width(K)
  std::vector<double> dense_proposal_;       // dense_proposal_width(K)
  std::vector<std::int64_t> order_;  // positions in tokens_; empty: corpus order
};

}  // namespace strata::apps::lda
