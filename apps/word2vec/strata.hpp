// word2vec on Strata: serial.cpp's program over two DistArrays of rows (input and
// output vectors) that Buffers serve as a parameter server; the loop over sentences
// is data-parallel.
#pragma once

#include <memory>
#include <source_location>

#include "common/run_or_explain.hpp"
#include "common/train_loop.hpp"
#include "strata/buffer.hpp"
#include "strata/loop/parallel_for.hpp"
#include "word2vec/model.hpp"
#include "word2vec/problem.hpp"

namespace strata::apps::word2vec {

class StrataWord2vec {
 public:
  StrataWord2vec(Runtime& rt, const Corpus& corpus, const Options& options, const LoopOptions& loop = {});
  /// The clock a run takes, in sentences of a worker: options.clock_every, or
  /// auto_clock's choice.
  static std::int64_t clock_for(const Corpus& corpus, const Options& options, int ranks, int threads);
  /// One pass over the training sentences (collective); returns the pass's own fit:
  /// each pair's loss just before its step.
  Fit pass();
  /// The held-out pairs' loss (collective).
  Fit fit_test();
  /// Plans every loop without running it and prints the plans (rank 0).
  void explain();
  /// The training loop's last call (after the first pass).
  const LoopReport& report() const { return report_; }
  /// The input rows (the word vectors) and the output rows: words x dim.
  DistArray<float, 2>& in() { return in_; }
  DistArray<float, 2>& out() { return out_; }
  /// What the parameter server did for the input rows.
  RelaxedStats stats() const { return in_sum_->stats(); }

 private:
  struct Access;  // one body call's readers and writers
  double window(const Access& a, std::int32_t word, int m, float lr, Draws& draws, Scratch& s) const;
  double pair(const Access& a, std::int32_t w, std::int32_t c, float lr, Draws& draws, Scratch& s) const;

  Runtime& rt_;
  const Corpus& c_;
  Options o_;
  LoopOptions loop_;
  std::size_t dim_;
  Sigmoid sigmoid_;
  Noise noise_;
  std::vector<float> chance_;   // each word's chance to be kept by sub-sampling
  DistArray<Sentence, 1> S_;    // the training sentences: the loop's iterations
  DistArray<Sentence, 1> T_;    // the held-out sentences
  DistArray<float, 2> in_, out_;
  std::unique_ptr<Buffer<float, 2>> in_sum_, out_sum_;
  Accumulator<double> pass_loss_;
  Accumulator<std::int64_t> pass_pairs_;
  LoopReport report_;
  int pass_ = 0;
  bool explaining_ = false;
};

}  // namespace strata::apps::word2vec
