// word2vec (skip-gram, negative sampling), serial. strata.cpp is this file moved to
// Strata; the two are kept line for line alike so their diff shows what it costs.
#include "word2vec/serial.hpp"

#include "strata/kernels.hpp"

namespace strata::apps::word2vec {

SerialWord2vec::SerialWord2vec(const Corpus& corpus, const Options& options)
    : c_(corpus), o_(options), dim_(static_cast<std::size_t>(options.dim)), noise_(corpus.counts, options.noise_power),
      chance_(keep_chances(corpus.counts, options.subsample)), in_(corpus.words.size() * dim_),
      out_(corpus.words.size() * dim_, 0.0f) {
  for (std::size_t w = 0; w < corpus.words.size(); ++w)
    for (int j = 0; j < o_.dim; ++j)
      in_[w * dim_ + static_cast<std::size_t>(j)] = initial_value(o_.seed, static_cast<std::int64_t>(w), j, o_.dim);
}

double SerialWord2vec::window(std::int32_t word, int m, float lr, Draws& draws, Scratch& s) {
  draw_targets(s, word, o_.negatives, noise_, draws);
  const auto targets = static_cast<std::size_t>(o_.negatives) + 1;
  std::fill_n(s.in_step.begin(), static_cast<std::size_t>(m) * dim_, 0.0f);
  std::fill_n(s.out_step.begin(), targets * dim_, 0.0f);
  double loss = 0;
  for (std::size_t j = 0; j < static_cast<std::size_t>(m); ++j) {
    const float* in = in_row(s.context[j]);
    for (std::size_t k = 0; k < targets; ++k) {
      const float* out = out_row(s.target[k]);
      const float g = target_step(sigmoid_, kernels::dot(in, out, dim_), k == 0, lr, loss);
      kernels::axpy(g, out, s.in_step.data() + j * dim_, dim_);
      kernels::axpy(g, in, s.out_step.data() + k * dim_, dim_);
    }
  }
  for (std::size_t j = 0; j < static_cast<std::size_t>(m); ++j)
    kernels::axpy(1.0f, s.in_step.data() + j * dim_, in_row(s.context[j]), dim_);
  for (std::size_t k = 0; k < targets; ++k)
    kernels::axpy(1.0f, s.out_step.data() + k * dim_, out_row(s.target[k]), dim_);
  return loss;
}

double SerialWord2vec::pair(std::int32_t w, std::int32_t c, float lr, Draws& draws, Scratch& s) {
  float* hidden = in_row(w);
  float* grad = s.in_step.data();
  std::fill(grad, grad + dim_, 0.0f);
  double loss = 0;
  for (int n = 0; n <= o_.negatives; ++n) {
    const std::int32_t target = n == 0 ? c : draws.negative(noise_, c);
    float* out = out_row(target);
    const float g = target_step(sigmoid_, kernels::dot(hidden, out, dim_), n == 0, lr, loss);
    kernels::axpy(g, out, grad, dim_);
    kernels::axpy(g, hidden, out, dim_);
  }
  kernels::axpy(1.0f, grad, hidden, dim_);  // a row's sum of steps (1 * x is x: the bits of +=)
  return loss;
}

Fit SerialWord2vec::pass() {
  Fit fit;
  for (std::size_t k = 0; k < c_.train.list.size(); ++k) {
    const Sentence& sentence = c_.train.list[k];
    Scratch& s = scratch(o_);
    Draws draws(o_.seed, pass_, static_cast<std::int64_t>(k));
    const float lr = step_size(o_, pass_, sentence.begin, c_.train_tokens());
    draws.keep(c_.train, sentence, chance_, s.kept);
    const auto n = static_cast<std::int32_t>(s.kept.size());
    for (std::int32_t i = 0; i < n; ++i) {
      const int b = draws.window(o_.window);
      const std::int32_t first = std::max(0, i - b), last = std::min(n - 1, i + b);
      const std::int32_t word = s.kept[static_cast<std::size_t>(i)];
      if (o_.update == Update::pair) {
        for (std::int32_t j = first; j <= last; ++j)
          if (j != i) fit.loss += pair(word, s.kept[static_cast<std::size_t>(j)], lr, draws, s), ++fit.pairs;
        continue;
      }
      int m = 0;
      for (std::int32_t j = first; j <= last; ++j)
        if (j != i) s.context[static_cast<std::size_t>(m++)] = s.kept[static_cast<std::size_t>(j)];
      if (m > 0) fit.loss += window(word, m, lr, draws, s), fit.pairs += m;
    }
  }
  ++pass_;
  return fit;
}

Fit SerialWord2vec::fit_test() const {
  Fit fit;
  auto dot = [&](std::int32_t w, std::int32_t c) {
    return static_cast<double>(kernels::dot(in_.data() + static_cast<std::size_t>(w) * dim_,
                                            out_.data() + static_cast<std::size_t>(c) * dim_, dim_));
  };
  for (std::size_t k = 0; k < c_.test.list.size(); ++k) {
    const Fit f = held_out_sentence(c_.test, static_cast<std::int64_t>(k), o_, noise_, dot);
    fit.loss += f.loss, fit.pairs += f.pairs;
  }
  return fit;
}

}  // namespace strata::apps::word2vec
