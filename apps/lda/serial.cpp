// LDA by collapsed Gibbs sampling, serial. strata.cpp is this file moved to Strata;
// the two are kept line for line alike so their diff shows what the move costs.
// The sampler itself (SparseLDA's buckets) is in model.hpp, the rows in topic_row.hpp.
#include "lda/serial.hpp"

#include "lda/mh_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace strata::apps::lda {

namespace {

// Row i of a matrix of topic rows, as DistArray::row gives it.
std::span<std::int32_t> row(std::vector<std::int32_t>& rows, std::int64_t i, int K) {
  return {rows.data() + i * topic_row_width(K), static_cast<std::size_t>(topic_row_width(K))};
}
std::span<const std::int32_t> read_row(const std::vector<std::int32_t>& rows, std::int64_t i, int K) {
  return {rows.data() + i * topic_row_width(K), static_cast<std::size_t>(topic_row_width(K))};
}

}  // namespace

SerialLda::SerialLda(const Problem& problem, const Options& options, Totals totals)
    : p_(problem),
      o_(options),
      rule_(totals),
      doc_topic_(static_cast<std::size_t>(problem.docs * topic_row_width(options.topics)), 0),
      word_topic_(static_cast<std::size_t>(problem.words * topic_row_width(options.topics)), 0),
      totals_(static_cast<std::size_t>(options.topics), 0),
      pending_(totals_) {
  const int K = o_.topics;
  // Every token starts with a topic drawn from its own counter; counting them in
  // corpus order fixes the order of each row's non-zero list.
  for (const DocWord& e : p_.entries)
    for (std::int32_t occ = 0; occ < e.count; ++occ) {
      const Token t{e.doc, e.word, occ};
      const std::int32_t k = initial_topic(o_.seed, t, K);
      tokens_.push_back(t);
      z_.push_back(k);
      TopicRow(row(doc_topic_, e.doc, K), K).add(k);
      TopicRow(row(word_topic_, e.word, K), K).add(k);
      ++totals_[static_cast<std::size_t>(k)];
    }
  end_pass();
}

void SerialLda::pass() {
  const CounterRng rng = pass_rng(o_.seed, ++passes_);
  const ChainStreams chains(o_.seed, passes_, o_.mh_steps);
  const int K = o_.topics;
  auto sample = [&](const Token& t, std::int32_t& z) {
    TopicRow doc(row(doc_topic_, t[0], K), K), word(row(word_topic_, t[1], K), K);
    const double* inv = inv_.data();
    doc.remove(z);
    word.remove(z);
    add_total(z, -1);
    if (o_.sampler == Sampler::mh)
      z = mh_draw(doc, word, &word_proposal_[static_cast<std::size_t>(t[1] * word_proposal_width(K))],
                  dense_proposal_.data(), inv, K, o_, z, chains, token_counter(t));
    else
      z = draw_topic(doc, word, inv, K, o_, rng.uniform(token_counter(t)));
    doc.add(z);
    word.add(z);
    add_total(z, 1);
  };
  if (order_.empty())
    for (std::size_t n = 0; n < tokens_.size(); ++n) sample(tokens_[n], z_[n]);
  else
    for (const std::int64_t n : order_) sample(tokens_[static_cast<std::size_t>(n)], z_[static_cast<std::size_t>(n)]);
  end_pass();
}

// Live totals change the coefficient of topic k and the smoothing bucket s at once;
// per-pass totals collect the change for end_pass.
void SerialLda::add_total(std::int32_t k, std::int64_t delta) {
  const auto uk = static_cast<std::size_t>(k);
  if (rule_ == Totals::per_pass) {
    pending_[uk] += delta;
    return;
  }
  totals_[uk] += delta;
  const double before = inv_[uk];
  inv_[uk] = inverse_total(o_, p_.words, totals_[uk]);
  inv_.back() += o_.alpha * o_.beta * (inv_[uk] - before);
}

// The coefficients are recomputed from the totals after every pass (which also
// clears the rounding the live updates of s accumulate).
void SerialLda::end_pass() {
  for (std::size_t k = 0; k < totals_.size(); ++k) totals_[k] += std::exchange(pending_[k], 0);
  inv_ = coefficients(totals_, o_, p_.words);
  if (o_.sampler != Sampler::mh) return;
  // The Metropolis-Hastings proposals of the next pass, from the counts as it begins.
  const int K = o_.topics;
  AliasPairing pairing;
  dense_proposal_.resize(static_cast<std::size_t>(dense_proposal_width(K)));
  build_dense_proposal(inv_.data(), K, o_, dense_proposal_, pairing);
  const auto width = static_cast<std::size_t>(word_proposal_width(K));
  word_proposal_.resize(static_cast<std::size_t>(p_.words) * width);
  for (std::int64_t w = 0; w < p_.words; ++w)
    build_word_proposal(TopicRowView(read_row(word_topic_, w, K), K), dense_proposal_.data(), K,
                        std::span(&word_proposal_[static_cast<std::size_t>(w) * width], width), pairing);
}

double SerialLda::loglik_per_token() const {
  const int K = o_.topics;
  double sum = 0;
  for (const Token& t : tokens_) {
    const TopicRowView doc(read_row(doc_topic_, t[0], K), K), word(read_row(word_topic_, t[1], K), K);
    sum += std::log(token_likelihood(doc, word, inv_.data(), K, o_));
  }
  return sum / static_cast<double>(p_.tokens);
}

void SerialLda::set_order(const std::vector<Token>& order) {
  order_.clear();
  for (const Token& t : order)
    order_.push_back(std::lower_bound(tokens_.begin(), tokens_.end(), t) - tokens_.begin());
}

}  // namespace strata::apps::lda
