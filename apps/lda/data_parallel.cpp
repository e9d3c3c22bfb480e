// The data-parallel variant of strata.cpp's sampler (`--plan data_parallel`): what
// LDA looks like on a parameter server, for comparison with the dependence-aware plan.
#include "lda/strata.hpp"

#include "lda/mh_sampler.hpp"

namespace strata::apps::lda {

namespace {

// The word's row as the pass began, less the token being sampled: in the
// data-parallel variant the row is read-only and still counts the token's old topic.
struct WithoutToken {
  TopicRowView row;
  std::int32_t own;  // the token's topic before this draw
  std::int32_t count(std::int32_t k) const { return row.count(k) - (k == own); }
  std::int32_t nonzeros() const { return row.nonzeros(); }
  std::int32_t topic(std::int32_t i) const { return row.topic(i); }
};

}  // namespace

// Word rows are read as the pass began and their changes go through a sum Buffer,
// like the totals, so the only in-place writes left are to document rows and the
// loop runs 1-D over documents, applying word counts once per pass (BSP). This is
// AD-LDA (Newman et al., 2009) made stricter: there a worker sees its own changes
// at once, here no worker sees any change to a word until the pass ends. The gap
// this opens against serial Gibbs sampling is what the dependence-aware plan avoids.
void StrataLda::pass_data_parallel() {
  const CounterRng rng = pass_rng(o_.seed, ++passes_);
  const ChainStreams chains(o_.seed, passes_, o_.mh_steps);
  const int K = o_.topics;
  report_ = run_or_explain(explaining_, z_, [&](const Token& t, std::int32_t& z) {
    TopicRow doc(doc_topic_.row(t[0]), K);
    const WithoutToken word{TopicRowView(word_topic_.read_row(t[1]), K), z};
    const double* inv = inv_.read_row(0).data();
    doc.remove(z);
    word_buf_->add({t[1], z}, -1);
    totals_buf_->add({z}, -1);
    if (o_.sampler == Sampler::mh)
      z = mh_draw(doc, word, word_proposal_.read_row(t[1]).data(), dense_proposal_.read_row(0).data(), inv, K, o_,
                  z, chains, token_counter(t));
    else
      z = draw_topic(doc, word, inv, K, o_, rng.uniform(token_counter(t)));
    doc.add(z);
    word_buf_->add({t[1], z}, 1);
    totals_buf_->add({z}, 1);
  }, loop_);
  // The Buffer changed counts cell by cell: list each local row's topics again.
  const IndexSet& mine = word_topic_.local_box()[0];
  for (std::int64_t i = 0; i < mine.size() && !explaining_; ++i) TopicRow(word_topic_.row(mine.global(i)), K).rebuild();
  end_pass();
}

}  // namespace strata::apps::lda
