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
  /// One pass of mini-batch SGD over the training samples in their stored order;
  /// returns the pass's progressive fit: each sample's log-loss and prediction with
  /// the model its batch's step started from.
  Fit pass();
  Fit fit(const std::vector<Sample>& samples) const;
  /// The weights, row-major: a row of `classes` per feature, then the bias row.
  const std::vector<float>& w() const { return w_; }

 private:
  std::span<const float> row(std::int64_t r) const { return {w_.data() + static_cast<std::size_t>(r) * k_, k_}; }
  // One row's step for the batch's gradient g of it, which `touches` samples touched.
  void step(std::int64_t r, std::span<const float> g, std::int32_t touches);
  // The scores of sample s into z (classes of them).
  void scores(const Sample& s, float* z) const;

  const Problem& p_;
  Options o_;
  std::size_t k_;              // classes: the length of a row
  std::int64_t bias_;          // the bias row's index: after the features
  std::int64_t rows_;          // the model's: features, then the bias
  std::vector<Batch> batches_;
  std::vector<float> w_;       // (features + bias) x classes, row-major
  std::vector<double> g2_;     // adagrad: the rows' accumulated mean squared gradients
};

}  // namespace strata::apps::mlr
