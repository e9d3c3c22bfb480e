// Sparse logistic regression's options and update rules, shared by the serial
// program and its Strata twin so that both step exactly alike.
//
// Regularisation acts on the features a sample holds, when it holds them (as sparse
// SGD and FTRL implementations do: a step touches only the sample's non-zeros), so
// a pass costs the data's non-zeros and not the model's size.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "common/auto_clock.hpp"

namespace strata::apps::slr {

enum class Step {
  plain,        ///< w -= lr * gradient, then the L1 shrink (proximal SGD)
  adagrad,      ///< per feature lr / sqrt(sum of squared gradients), then the L1 shrink
  adarevision,  ///< AdaRevision at the owners (serial: AdaGrad, the same rule without delay); L2 only
  ftrl,         ///< FTRL-Proximal (McMahan et al., KDD 2013): per-feature rates, L1 gives exact zeros
};

struct Options {
  Step step = Step::ftrl;
  float lr = 0.1f;             ///< step size (plain), base rate (adagrad, adarevision), FTRL's alpha
  float ftrl_beta = 1.0f;      ///< FTRL's beta: the rate of a feature never seen is alpha / beta
  float l1 = 0, l2 = 0;        ///< elastic-net weights (per occurrence of a feature)
  bool bias = true;            ///< an intercept: one more weight, on a feature every sample holds
  bool hybrid = true;          ///< Strata: Hybrid consistency (lock-free inside a rank), else SSP
  bool thread_replicas = false;  ///< Strata, Hybrid: a replica of the weights per worker thread
  int staleness = 0;           ///< SSP bound (0: BSP; Hybrid needs 0)
  std::int64_t clock_every = -1;  ///< iterations of a worker per clock; -1: auto_clock's choice
};

/// The model's weights: one per feature, then the bias when there is one.
inline std::int64_t model_size(std::int64_t features, const Options& o) { return features + (o.bias ? 1 : 0); }

/// Whether a step's updates are sums of deltas (what Hybrid and read-my-writes fold).
inline bool updates_add(Step s) { return s != Step::adarevision; }

/// This thread's room for the weights one sample reads (n of them).
inline float* weights_read(std::size_t n) {
  thread_local std::vector<float> read;
  if (read.size() < n) read.resize(n);
  return read.data();
}

/// The L1 shrink of a proximal step: moves v towards 0 by t, never across it.
inline float shrink(float v, float t) { return v > t ? v - t : v < -t ? v + t : 0.0f; }

/// A plain or AdaGrad step of one weight: gradient g of the data term at rate eta,
/// L2 as a gradient term, L1 as the shrink. Returns the weight's delta.
inline float prox_delta(float w, float g, float eta, const Options& o) {
  const float gradient = g + o.l2 * w;
  return o.l1 > 0 ? shrink(w - eta * gradient, eta * o.l1) - w : -eta * gradient;
}

/// AdaGrad's rate for a feature whose squared gradients, this one included, sum to g2.
inline float adagrad_rate(double g2, const Options& o) {
  return static_cast<float>(static_cast<double>(o.lr) / (std::sqrt(g2) + 1e-8));
}

/// FTRL-Proximal's state of one feature: its gradient sum z and squared-gradient sum
/// n. Both only ever grow by sums, so data-parallel workers' updates add (one struct:
/// one lookup and one add per feature, and plain adds under Hybrid).
struct FtrlState {
  double z = 0, n = 0;
  FtrlState& operator+=(const FtrlState& d) {
    z += d.z;
    n += d.n;
    return *this;
  }
  // A change of state as a delta: Hybrid replicas on several ranks send these.
  FtrlState operator-(const FtrlState& b) const { return {z - b.z, n - b.n}; }
};

/// FTRL-Proximal's weight: 0 while |z| <= l1 (L1's exact zeros), else the closed-form
/// minimiser of the regularised linearised loss.
inline float ftrl_weight(const FtrlState& s, const Options& o) {
  if (std::fabs(s.z) <= o.l1) return 0.0f;
  const double shrunk = s.z > 0 ? s.z - o.l1 : s.z + o.l1;
  return static_cast<float>(-shrunk / ((o.ftrl_beta + std::sqrt(s.n)) / o.lr + o.l2));
}

/// FTRL-Proximal's update of a feature's state for gradient g at weight w, as a delta.
inline FtrlState ftrl_delta(const FtrlState& s, float w, float g, const Options& o) {
  const double g2 = static_cast<double>(g) * g;
  const double sigma = (std::sqrt(s.n + g2) - std::sqrt(s.n)) / o.lr;
  return {g - sigma * w, g2};
}

}  // namespace strata::apps::slr
