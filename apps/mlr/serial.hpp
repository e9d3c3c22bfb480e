// The serial multinomial-logistic-regression program: plain C++ over std::vector.
#pragma once

#include <span>
#include <vector>

#include "mlr/model.hpp"
#include "mlr/problem.hpp"

namespace strata::apps::mlr {

class SerialMlr {
 public:
  SerialMlr(const Problem& problem, const Options& options);
  /// One SGD pass over the training samples in their stored order; returns the pass's
  /// progressive fit: each sample's log-loss and prediction just before its step.
  Fit pass();
  Fit fit(const std::vector<Sample>& samples) const;
  /// The weights, row-major: a row of `classes` per feature, then the bias row.
  const std::vector<float>& w() const { return w_; }

 private:
  std::span<const float> row(std::size_t f) const { return {w_.data() + f * k_, k_}; }
  // One row's step for gradient g of the sample's scores (g2_unit: their
  // mean_square), x the feature's value.
  void step(std::size_t f, float x, const float* g, double g2_unit);
  // The scores of sample s into z (classes of them).
  void scores(const Sample& s, float* z) const;

  const Problem& p_;
  Options o_;
  std::size_t k_;          // classes: the length of a row
  std::size_t bias_;       // the bias row's index: after the features
  std::vector<float> w_;   // (features + bias) x classes, row-major
  std::vector<double> g2_; // adagrad: the rows' accumulated mean squared gradients
};

}  // namespace strata::apps::mlr
