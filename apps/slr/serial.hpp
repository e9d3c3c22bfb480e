// The serial sparse-logistic-regression program: plain C++ over std::vector.
#pragma once

#include <vector>

#include "slr/model.hpp"
#include "slr/problem.hpp"
#include "strata/apply.hpp"

namespace strata::apps::slr {

class SerialSlr {
 public:
  SerialSlr(const Problem& problem, const Options& options);
  /// One SGD pass over the training samples in their stored order; returns the pass's
  /// progressive fit: each sample's log-loss and prediction just before its step.
  Fit pass();
  Fit fit(const std::vector<Sample>& samples) const;
  /// The weights: one per feature, then the bias when there is one.
  const std::vector<float>& w() const { return w_; }

 private:
  // One pass, weight and step per Step: no branch on the step per non-zero.
  template <Step S>
  Fit pass_with();
  template <Step S>
  float weight(std::size_t f) const;
  template <Step S>
  void step(std::size_t f, float g, float w);

  const Problem& p_;
  Options o_;
  std::size_t bias_;          // the bias's index: after the features
  std::vector<float> w_;      // plain, adagrad, adarevision; FTRL: derived after each pass
  std::vector<double> g2_;    // adagrad: squared gradients per feature
  std::vector<FtrlState> ftrl_;  // ftrl: gradient sums and squared-gradient sums
  std::vector<apply::AdaGrad::state_type> state_;  // adarevision
};

}  // namespace strata::apps::slr
