// LDA by collapsed Gibbs sampling on Strata: serial.cpp with its vectors made
// DistArrays, its loops parallel_for and the topic totals written through a Buffer
// (applied once per pass). Kept line for line alike with serial.cpp; the
// data-parallel variant is in data_parallel.cpp.
#include "lda/strata.hpp"

#include "lda/mh_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace strata::apps::lda {

namespace {

// This rank's share of the tokens, each with its initial topic; DistArray::sparse
// routes them to their owners.
DistArray<std::int32_t, 3> token_array(Runtime& rt, const Problem& p, const Options& o) {
  std::vector<Entry<std::int32_t, 3>> mine;
  const auto n = static_cast<std::int64_t>(p.entries.size());
  for (std::int64_t i = n * rt.rank() / rt.size(); i < n * (rt.rank() + 1) / rt.size(); ++i) {
    const DocWord& e = p.entries[static_cast<std::size_t>(i)];
    for (std::int32_t occ = 0; occ < e.count; ++occ) {
      const Token t{e.doc, e.word, occ};
      mine.push_back({t, initial_topic(o.seed, t, o.topics)});
    }
  }
  return DistArray<std::int32_t, 3>::sparse(rt, {p.docs, p.words, p.max_count}, std::move(mine));
}

}  // namespace

StrataLda::StrataLda(Runtime& rt, const Problem& problem, const Options& options,
                     std::optional<analysis::Strategy> plan)
    : rt_(rt),
      p_(problem),
      o_(options),
      data_parallel_(plan == analysis::Strategy::data_parallel),
      z_(token_array(rt, problem, options)),
      doc_topic_(DistArray<std::int32_t, 2>::zeros(rt, {problem.docs, topic_row_width(options.topics)})),
      word_topic_(DistArray<std::int32_t, 2>::zeros(rt, {problem.words, topic_row_width(options.topics)})),
      totals_(DistArray<std::int64_t, 1>::zeros(rt, {options.topics})),
      inv_(DistArray<double, 2>::zeros(rt, {1, options.topics + 1})),
      word_proposal_(options.sampler == Sampler::mh
                         ? DistArray<std::int32_t, 2>::zeros(rt, {problem.words, word_proposal_width(options.topics)},
                                                             word_topic_.partition())
                         : DistArray<std::int32_t, 2>::zeros(rt, {1, 1})),
      dense_proposal_(DistArray<double, 2>::zeros(rt, {1, dense_proposal_width(options.topics)})) {
  z_.set_name("z");
  doc_topic_.set_name("doc_topic");
  word_topic_.set_name("word_topic");
  totals_.set_name("topic_totals");
  inv_.set_name("coefficients");
  word_proposal_.set_name("word_proposal");
  dense_proposal_.set_name("dense_proposal");
  const int K = o_.topics;
  // Every token starts with a topic drawn from its own counter, so each rank counts
  // the rows it holds from the corpus, in corpus order like serial.cpp.
  std::vector<std::int64_t> totals(static_cast<std::size_t>(K), 0);
  for (const DocWord& e : p_.entries)
    for (std::int32_t occ = 0; occ < e.count; ++occ) {
      const Token t{e.doc, e.word, occ};
      const std::int32_t k = initial_topic(o_.seed, t, K);
      if (doc_topic_.is_local({e.doc, 0})) TopicRow(doc_topic_.row(e.doc), K).add(k);
      if (word_topic_.is_local({e.word, 0})) TopicRow(word_topic_.row(e.word), K).add(k);
      ++totals[static_cast<std::size_t>(k)];
    }
  for (std::int64_t k = 0; k < K; ++k)
    if (totals_.is_local({k})) totals_.at({k}) = totals[static_cast<std::size_t>(k)];
  totals_buf_ = std::make_unique<Buffer<std::int64_t, 1>>(totals_, apply::sum());
  if (data_parallel_) word_buf_ = std::make_unique<Buffer<std::int32_t, 2>>(word_topic_, apply::sum());
  else loop_.strategy = plan;
  loop_.blocks_per_worker = o_.blocks_per_worker;
  loop_.rounds = o_.rounds;
  loop_.slices_per_worker = o_.slices;
  end_pass();
}

void StrataLda::pass() {
  if (data_parallel_) return pass_data_parallel();
  const CounterRng rng = pass_rng(o_.seed, ++passes_);
  const ChainStreams chains(o_.seed, passes_, o_.mh_steps);
  const int K = o_.topics;
  report_ = run_or_explain(explaining_, z_, [&](const Token& t, std::int32_t& z) {
    TopicRow doc(doc_topic_.row(t[0]), K), word(word_topic_.row(t[1]), K);
    const double* inv = inv_.read_row(0).data();
    doc.remove(z);
    word.remove(z);
    totals_buf_->add({z}, -1);
    if (o_.sampler == Sampler::mh)
      z = mh_draw(doc, word, word_proposal_.read_row(t[1]).data(), dense_proposal_.read_row(0).data(), inv, K, o_,
                  z, chains, token_counter(t));
    else
      z = draw_topic(doc, word, inv, K, o_, rng.uniform(token_counter(t)));
    doc.add(z);
    word.add(z);
    totals_buf_->add({z}, 1);
  }, loop_);
  end_pass();
}

// The totals changed only through the Buffer, applied when the loop ended; the
// next pass samples with coefficients computed from them here.
void StrataLda::end_pass() {
  const auto inv = coefficients(totals_.gather(), o_, p_.words);
  if (inv_.is_local({0, 0})) std::copy(inv.begin(), inv.end(), inv_.row(0).begin());
  if (o_.sampler != Sampler::mh || explaining_) return;
  // The Metropolis-Hastings proposals of the next pass, from the counts as it begins:
  // every rank builds the shared part and the rows of the words it holds.
  const int K = o_.topics;
  AliasPairing pairing;
  std::vector<double> dense(static_cast<std::size_t>(dense_proposal_width(K)));
  build_dense_proposal(inv.data(), K, o_, dense, pairing);
  if (dense_proposal_.is_local({0, 0})) std::copy(dense.begin(), dense.end(), dense_proposal_.row(0).begin());
  // A loop may leave the word rows split at other bounds: the proposals follow them.
  if (word_proposal_.partition() != word_topic_.partition()) word_proposal_.repartition(word_topic_.partition());
  const IndexSet& mine = word_topic_.local_box()[0];
  for (std::int64_t i = 0; i < mine.size(); ++i) {
    const std::int64_t w = mine.global(i);
    build_word_proposal(TopicRowView(word_topic_.read_row(w), K), dense.data(), K, word_proposal_.row(w), pairing);
  }
}

double StrataLda::loglik_per_token() {
  const int K = o_.topics;
  Accumulator<double> sum(rt_);
  run_or_explain(explaining_, z_, [&](const Token& t, std::int32_t) {
    const TopicRowView doc(doc_topic_.read_row(t[0]), K), word(word_topic_.read_row(t[1]), K);
    sum += std::log(token_likelihood(doc, word, inv_.read_row(0).data(), K, o_));
  }, LoopOptions{});
  return sum.take() / static_cast<double>(p_.tokens);
}

void StrataLda::explain() {
  explaining_ = true;
  pass();
  loglik_per_token();
  explaining_ = false;
}

}  // namespace strata::apps::lda
