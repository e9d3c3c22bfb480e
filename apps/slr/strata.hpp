// Sparse logistic regression on Strata: serial.cpp's program over DistArrays that
// Buffers serve as a parameter server (data-parallel plan).
#pragma once

#include <memory>
#include <source_location>

#include "slr/model.hpp"
#include "slr/problem.hpp"
#include "common/run_or_explain.hpp"
#include "strata/buffer.hpp"
#include "strata/loop/parallel_for.hpp"

namespace strata::apps::slr {

class StrataSlr {
 public:
  StrataSlr(Runtime& rt, const Problem& problem, const Options& options, const LoopOptions& loop = {});
  /// The clock a run takes: options.clock_every, or auto_clock's choice for the data.
  static std::int64_t clock_for(const Problem& problem, const Options& options, int ranks, int threads);
  /// One SGD pass over the training samples (collective); returns the pass's
  /// progressive fit: each sample's log-loss and prediction just before its step.
  Fit pass();
  // Two loop sites (each call's line): one site alternating between the two sets
  // would be planned afresh, reconnaissance and all, at every call.
  Fit fit_train() { return fit(X_); }
  Fit fit_test() { return fit(T_); }
  /// Plans every loop without running it and prints the plans (rank 0).
  void explain();
  /// The training loop's last call (after the first pass).
  const LoopReport& report() const { return report_; }
  /// The weights: one per feature, then the bias when there is one.
  DistArray<float, 1>& w() { return w_; }
  /// What the parameter server did for the weights (FTRL: for their state).
  RelaxedStats stats() const;

 private:
  template <Step S>
  struct Access;  // one body call's readers and writers
  template <Step S>
  void pass_with();
  Fit fit(DistArray<Sample, 1>& samples, std::source_location where = std::source_location::current());

  Runtime& rt_;
  const Problem& p_;
  Options o_;
  LoopOptions loop_;
  std::int64_t bias_;            // the bias's index: after the features
  DistArray<Sample, 1> X_, T_;
  DistArray<float, 1> w_;        // plain, adagrad, adarevision; FTRL: derived after each pass
  DistArray<double, 1> g2_;      // adagrad: squared gradients per feature
  DistArray<FtrlState, 1> ftrl_;  // ftrl: gradient sums and squared-gradient sums
  // Steps that add (plain, adagrad, ftrl) are summed at the owners; AdaRevision's revised there.
  std::unique_ptr<Buffer<float, 1>> w_sum_;
  std::unique_ptr<Buffer<double, 1>> g2_sum_;
  std::unique_ptr<Buffer<FtrlState, 1>> ftrl_sum_;
  std::unique_ptr<Buffer<float, 1, apply::AdaRevision>> ada_;
  Accumulator<double> pass_loss_;
  Accumulator<std::int64_t> pass_correct_;
  LoopReport report_;
  bool explaining_ = false;
};

}  // namespace strata::apps::slr
