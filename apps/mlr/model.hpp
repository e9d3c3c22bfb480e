// Multinomial logistic regression's options and update rules, shared by the serial
// program and its Strata twin so that both step exactly alike.
//
// The model is a matrix W of (features + 1) rows by `classes` columns: a row of
// class weights per feature, then the bias row. A sample's scores are the sum of
// its features' rows scaled by their values, plus the bias row; its class
// probabilities their softmax. A step touches only the rows of the sample's
// non-zeros and the bias row (L2 acts there too, per occurrence, as in slr), so a
// pass costs non-zeros x classes and not the model's size.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "common/auto_clock.hpp"
#include "strata/kernels.hpp"

namespace strata::apps::mlr {

enum class Step {
  plain,    ///< W[f, :] -= lr * gradient
  adagrad,  ///< per row: lr / sqrt(sum of the row's mean squared gradients) (LIBMF's per-row schedule)
};

struct Options {
  Step step = Step::adagrad;
  float lr = 0.1f;       ///< step size (plain), base rate (adagrad)
  float l2 = 0;          ///< L2 weight, applied to the rows a sample touches
  bool bias = true;      ///< a bias row, on a feature every sample holds
  bool hybrid = true;    ///< Strata: Hybrid consistency (lock-free inside a rank), else SSP
  int staleness = 0;     ///< SSP bound (0: BSP; Hybrid needs 0)
  std::int64_t clock_every = -1;  ///< iterations of a worker per clock; -1: auto_clock's choice
};

/// The model's rows: one per feature, then the bias row when there is one.
inline std::int64_t model_rows(std::int64_t features, const Options& o) { return features + (o.bias ? 1 : 0); }

/// This thread's scratch of n floats, number `which` of two (scores, deltas): the
/// body allocates nothing per sample.
inline float* scratch(std::size_t n, int which) {
  thread_local std::vector<float> room[2];
  if (room[which].size() < n) room[which].resize(n);
  return room[which].data();
}

/// z += x * row, column by column (the library's vectorised kernel, the same bits on
/// every machine).
inline void add_scaled(float* z, std::span<const float> row, float x) { kernels::axpy(x, row.data(), z, row.size()); }

/// Replaces scores z[0..k) by their softmax (shifted by the largest, so exp never
/// overflows) and returns the probability of class `label`.
inline float softmax(float* z, std::size_t k, std::int32_t label) {
  const float top = *std::max_element(z, z + k);
  float sum = 0;
  for (std::size_t c = 0; c < k; ++c) sum += (z[c] = std::exp(z[c] - top));
  for (std::size_t c = 0; c < k; ++c) z[c] /= sum;
  return z[label];
}

/// The class a sample's probabilities p[0..k) predict: the first of the largest.
inline std::int32_t predicted(const float* p, std::size_t k) {
  return static_cast<std::int32_t>(std::max_element(p, p + k) - p);
}

/// The mean over the classes of a sample's squared score gradients g[c]^2. A row's
/// AdaGrad increment for a feature of value x is x^2 times it (the mean of the row's
/// squared gradients (x g[c])^2): one sum per sample, O(1) per row. One accumulator
/// per row keeps the state a number per feature instead of one per weight.
inline double mean_square(const float* g, std::size_t k) {
  double sum = 0;
  for (std::size_t c = 0; c < k; ++c) sum += static_cast<double>(g[c]) * g[c];
  return sum / static_cast<double>(k);
}

/// AdaGrad's rate for a row whose increments, this one included, sum to g2.
inline float adagrad_rate(double g2, const Options& o) {
  return static_cast<float>(static_cast<double>(o.lr) / (std::sqrt(g2) + 1e-8));
}

/// The delta of a row w (as it is now) for a feature of value x, at rate eta:
/// -eta * (x * g + l2 * w), computed as a * g + b * w, into delta[0..k).
inline void row_delta(float* delta, const float* g, std::span<const float> w, float x, float eta, const Options& o) {
  const std::size_t k = w.size();
  const float a = -eta * x, b = -eta * o.l2;
  if (o.l2 > 0)
    for (std::size_t c = 0; c < k; ++c) delta[c] = a * g[c] + b * w[c];
  else
    for (std::size_t c = 0; c < k; ++c) delta[c] = a * g[c];
}

}  // namespace strata::apps::mlr
