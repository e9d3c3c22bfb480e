// Sparse logistic regression on Strata: serial.cpp's program over a DistArray of
// weights that a Buffer serves as a parameter server (data-parallel plan).
#pragma once

#include <memory>

#include "slr/model.hpp"
#include "slr/problem.hpp"
#include "common/run_or_explain.hpp"
#include "strata/buffer.hpp"
#include "strata/loop/parallel_for.hpp"

namespace strata::apps::slr {

class StrataSlr {
 public:
  StrataSlr(Runtime& rt, const Problem& problem, const Options& options, const LoopOptions& loop = {});
  /// One SGD pass over the training samples (collective).
  void pass();
  Fit fit_train() { return fit(X_); }
  Fit fit_test() { return fit(T_); }
  /// Plans every loop without running it and prints the plans (rank 0).
  void explain();
  /// The training loop's last call (after the first pass).
  const LoopReport& report() const { return report_; }
  DistArray<float, 1>& w() { return w_; }
  RelaxedStats stats() const { return sum_ ? sum_->stats() : ada_->stats(); }

 private:
  Fit fit(DistArray<Sample, 1>& samples);

  Runtime& rt_;
  const Problem& p_;
  Options o_;
  LoopOptions loop_;
  DistArray<Sample, 1> X_, T_;
  DistArray<float, 1> w_;
  // One of them: plain steps are summed at the owners, AdaRevision steps revised there.
  std::unique_ptr<Buffer<float, 1>> sum_;
  std::unique_ptr<Buffer<float, 1, apply::AdaRevision>> ada_;
  LoopReport report_;
  bool explaining_ = false;
};

}  // namespace strata::apps::slr
