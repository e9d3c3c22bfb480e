// Multinomial logistic regression on Strata: serial.cpp's program over DistArrays
// that Buffers serve as a parameter server (data-parallel plan over mini-batches,
// rows of weights).
#pragma once

#include <memory>
#include <source_location>

#include "common/run_or_explain.hpp"
#include "common/train_loop.hpp"
#include "mlr/model.hpp"
#include "mlr/problem.hpp"
#include "strata/buffer.hpp"
#include "strata/loop/parallel_for.hpp"

namespace strata::apps::mlr {

class StrataMlr {
 public:
  StrataMlr(Runtime& rt, const Problem& problem, const Options& options, const LoopOptions& loop = {});
  /// The clock a run takes, in batches: options.clock_every (samples), or
  /// auto_clock's choice, over the batch size.
  static std::int64_t clock_for(const Problem& problem, const Options& options, int ranks, int threads);
  /// One pass of mini-batch SGD over the training samples (collective); returns the
  /// pass's progressive fit: each sample's log-loss and prediction with the model its
  /// batch's step started from.
  Fit pass();
  /// The fit on the held-out samples.
  Fit fit_test() { return fit(T_); }
  /// Plans every loop without running it and prints the plans (rank 0).
  void explain();
  /// The training loop's last call (after the first pass).
  const LoopReport& report() const { return report_; }
  /// The weights: a row of `classes` per feature, then the bias row.
  DistArray<float, 2>& w() { return w_; }
  /// What the parameter server did for the weights.
  RelaxedStats stats() const { return w_sum_->stats(); }

 private:
  struct Access;  // one body call's readers and writers
  void scores(const Access& a, const Sample& s, float* z) const;
  Fit fit(DistArray<Sample, 1>& samples, std::source_location where = std::source_location::current());

  Runtime& rt_;
  const Problem& p_;
  Options o_;
  LoopOptions loop_;
  std::size_t k_;               // classes: the length of a row
  std::int64_t bias_;           // the bias row's index: after the features
  std::int64_t rows_;           // the model's: features, then the bias
  DistArray<Batch, 1> B_;       // the training samples' batches: the loop's iterations
  DistArray<Sample, 1> T_;      // the held-out samples
  DistArray<float, 2> w_;       // (features + bias) x classes
  DistArray<double, 1> g2_;     // adagrad: the rows' accumulated mean squared gradients
  std::unique_ptr<Buffer<float, 2>> w_sum_;
  std::unique_ptr<Buffer<double, 1>> g2_sum_;
  Accumulator<double> pass_loss_;
  Accumulator<std::int64_t> pass_correct_;
  LoopReport report_;
  bool explaining_ = false;
};

}  // namespace strata::apps::mlr
