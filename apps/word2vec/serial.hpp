// The serial word2vec program: plain C++ over std::vector.
#pragma once

#include <vector>

#include "word2vec/model.hpp"
#include "word2vec/problem.hpp"

namespace strata::apps::word2vec {

class SerialWord2vec {
 public:
  SerialWord2vec(const Corpus& corpus, const Options& options);
  /// One pass over the training sentences in their stored order; returns the pass's
  /// own fit: each pair's loss just before its step.
  Fit pass();
  /// The held-out pairs' loss.
  Fit fit_test() const;
  /// The input rows (the word vectors), row-major: a row of dim per word.
  const std::vector<float>& in() const { return in_; }
  /// The output rows.
  const std::vector<float>& out() const { return out_; }

 private:
  float* in_row(std::int32_t w) { return in_.data() + static_cast<std::size_t>(w) * dim_; }
  float* out_row(std::int32_t w) { return out_.data() + static_cast<std::size_t>(w) * dim_; }
  // The window step of kept word `word` and its window's m words (s.context); returns
  // the m pairs' loss.
  double window(std::int32_t word, int m, float lr, Draws& draws, Scratch& s);
  // The pair step of kept word w and context word c; returns the pair's loss.
  double pair(std::int32_t w, std::int32_t c, float lr, Draws& draws, Scratch& s);

  const Corpus& c_;
  Options o_;
  std::size_t dim_;
  Sigmoid sigmoid_;
  Noise noise_;
  std::vector<float> chance_;  // each word's chance to be kept by sub-sampling
  std::vector<float> in_, out_;
  int pass_ = 0;
};

}  // namespace strata::apps::word2vec
