// Multinomial logistic regression's options and update rules, shared by the serial
// program and its Strata twin so that both step exactly alike.
//
// The model is a matrix W of (features + 1) rows by `classes` columns: a row of
// class weights per feature, then the bias row. A sample's scores are the sum of
// its features' rows scaled by their values, plus the bias row; its class
// probabilities their softmax. A step takes a mini-batch of samples (auto_batch's
// choice by default; 1 is plain SGD): each is scored with the model as the batch
// found it, their gradients are summed per row (common/row_sums.hpp), and each row the batch
// touched takes one step.
// A step touches only those rows (L2 acts there too, once per occurrence, as in
// slr), so a pass costs non-zeros x classes and not the model's size.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "common/auto_clock.hpp"
#include "common/batches.hpp"
#include "common/row_sums.hpp"
#include "mlr/problem.hpp"
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
  std::int32_t batch = 10;  ///< samples per step (mini-batch; 1: plain SGD)
  bool bias = true;      ///< a bias row, on a feature every sample holds
  bool hybrid = true;    ///< Strata: Hybrid consistency (lock-free inside a rank), else SSP
  bool thread_replicas = false;  ///< Strata, Hybrid: a replica of the weights per worker thread
  int staleness = 0;     ///< SSP bound (0: BSP; Hybrid needs 0)
  std::int64_t clock_every = -1;  ///< samples of a worker per clock (rounded to batches); -1: mlr::auto_clock's
};

/// The batch a run gets when none is asked for: 10, or 100 when a sample holds more
/// than a tenth of the features on average (dense data such as images: every sample
/// writes most rows, so threads that share the model write each row once a batch
/// instead of once a sample; docs/apps-mlr.md has the measurements).
inline std::int32_t auto_batch(std::int64_t samples, std::int64_t nonzeros, std::int64_t features) {
  return nonzeros * 10 > samples * features ? 100 : 10;
}

/// The clock across ranks when none is asked for, in samples of a worker: slr's rule
/// (apps::auto_clock: about 100 clocks a pass, fewer when each would move little),
/// capped by what wide rows cost. At a clock a rank sends the rows its samples
/// touched since the last one and takes back the rows of its read set that changed:
/// with 1,000 classes a row is 4 KB and a clock moves about the whole model (20 MB
/// for 5,000 features, measured 90 ms a clock on one machine, where a pass computes
/// in 0.2 s). So the clocks of a pass may move at most what half the pass's compute
/// time moves at 0.5 GB/s, computing about 1 ns per non-zero and class (both measured
/// on a 2-core AMD EPYC); a sparse many-class model then clocks once or twice a pass
/// (its rows rarely conflict: one clock a pass measured as accurate as Hybrid on
/// threads), and a small dense one (Fashion-MNIST's 31 KB) keeps slr's rule.
inline std::int64_t auto_clock(std::int64_t samples, std::int64_t nonzeros, std::int64_t rows, std::int64_t classes,
                               int ranks, int threads, bool hybrid, bool thread_replicas) {
  std::int64_t clock = apps::auto_clock(samples, nonzeros, rows, ranks, threads, hybrid, thread_replicas);
  if (clock == 0 || ranks == 1) return clock;
  const double per_worker = static_cast<double>(samples) / (static_cast<double>(ranks) * threads);
  const double per_sample = static_cast<double>(nonzeros) / std::max<double>(1, static_cast<double>(samples));
  const double compute_s = per_worker * per_sample * static_cast<double>(classes) * 1e-9;
  const double rows_a_clock = std::min(static_cast<double>(rows), static_cast<double>(clock) * per_sample);
  const double clock_s = 2.0 * rows_a_clock * static_cast<double>(classes) * sizeof(float) / 0.5e9;
  const double clocks = std::floor(compute_s / 2 / clock_s);
  if (clocks < 2) return 0;  // one clock a pass
  return std::max(clock, static_cast<std::int64_t>(per_worker / clocks));
}

/// The model's rows: one per feature, then the bias row when there is one.
inline std::int64_t model_rows(std::int64_t features, const Options& o) { return features + (o.bias ? 1 : 0); }

/// This thread's room for a sample's k scores: the body allocates nothing per sample.
inline float* scores_room(std::size_t k) {
  thread_local std::vector<float> room;
  if (room.size() < k) room.resize(k);
  return room.data();
}

/// This thread's room for a row's k deltas.
inline float* delta_room(std::size_t k) {
  thread_local std::vector<float> room;
  if (room.size() < k) room.resize(k);
  return room.data();
}

/// Sample s's scores into z[0..k): the bias row (empty: no bias) plus each of its
/// features' rows, `row(f)`, scaled by the feature's value (an empty row adds nothing).
/// The serial program, its Strata twin and predict all score through this.
template <class Row>
void sample_scores(float* z, std::size_t k, std::span<const float> bias, const Problem& p, const Sample& s,
                   Row&& row) {
  std::fill(z, z + k, 0.0f);
  if (!bias.empty()) add_scaled(z, bias, 1.0f);
  for (std::int64_t j = s.begin; j < s.begin + s.nnz; ++j)
    add_scaled(z, row(p.feature[static_cast<std::size_t>(j)]), p.value[static_cast<std::size_t>(j)]);
}

/// Replaces scores z[0..k) by their softmax (shifted by the largest, so exp never
/// overflows) and returns the probability of class `label`. The largest and the sum
/// are taken over eight lanes in a fixed order: vectorisable, the same bits in both
/// programs (a plain running sum of a thousand classes costs a tenth of a pass).
inline float softmax(float* z, std::size_t k, std::int32_t label) {
  constexpr std::size_t L = 8;
  float lane[L];
  std::fill(lane, lane + L, z[0]);
  std::size_t c = 0;
  for (; c + L <= k; c += L)
    for (std::size_t j = 0; j < L; ++j) lane[j] = lane[j] > z[c + j] ? lane[j] : z[c + j];
  float top = z[0];
  for (std::size_t j = 0; j < L; ++j) top = std::max(top, lane[j]);
  for (; c < k; ++c) top = std::max(top, z[c]);
  for (c = 0; c < k; ++c) z[c] = std::exp(z[c] - top);
  std::fill(lane, lane + L, 0.0f);
  for (c = 0; c + L <= k; c += L)
    for (std::size_t j = 0; j < L; ++j) lane[j] += z[c + j];
  float sum = 0;
  for (std::size_t j = 0; j < L; ++j) sum += lane[j];
  for (; c < k; ++c) sum += z[c];
  for (c = 0; c < k; ++c) z[c] /= sum;
  return z[label];
}

/// The class a sample's probabilities p[0..k) predict: the first of the largest.
inline std::int32_t predicted(const float* p, std::size_t k) {
  return static_cast<std::int32_t>(std::max_element(p, p + k) - p);
}

/// A row's AdaGrad increment for its batch gradient g: the mean over the classes of
/// g[c]^2. One accumulator per row keeps the state a number per feature instead of
/// one per weight.
inline double mean_square(std::span<const float> g) {
  const std::size_t k = g.size();
  if (k >= kernel_row) return static_cast<double>(kernels::dot(g, g)) / static_cast<double>(k);
  float lane[4] = {};  // four partial sums in a fixed order: vectorisable, the same bits in both programs
  std::size_t c = 0;
  for (; c + 4 <= k; c += 4)
    for (std::size_t j = 0; j < 4; ++j) lane[j] += g[c + j] * g[c + j];
  float sum = (lane[0] + lane[1]) + (lane[2] + lane[3]);
  for (; c < k; ++c) sum += g[c] * g[c];
  return static_cast<double>(sum) / static_cast<double>(k);
}

/// AdaGrad's rate for a row whose increments, this one included, sum to g2.
inline float adagrad_rate(double g2, const Options& o) {
  return static_cast<float>(static_cast<double>(o.lr) / (std::sqrt(g2) + 1e-8));
}

/// The delta of a row w (as it is now) for the batch's gradient g of it, which
/// `touches` of the batch's samples touched, at rate eta: -eta * (g + touches * l2 * w),
/// computed as -eta * g + b * w, into delta[0..k).
inline void row_delta(float* delta, std::span<const float> g, std::span<const float> w, std::int32_t touches,
                      float eta, const Options& o) {
  const std::size_t k = w.size();
  const float a = -eta, b = -eta * o.l2 * static_cast<float>(touches);
  if (o.l2 > 0)
    for (std::size_t c = 0; c < k; ++c) delta[c] = a * g[c] + b * w[c];
  else
    for (std::size_t c = 0; c < k; ++c) delta[c] = a * g[c];
}

}  // namespace strata::apps::mlr
