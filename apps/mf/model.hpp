// Matrix factorisation's model options and update rules, shared by the serial
// program and its Strata twin (both must do the same arithmetic, in the same order,
// for the bit-for-bit comparison).
#pragma once

#include <cmath>
#include <cstdint>

#include "strata/kernels.hpp"
#include "strata/random.hpp"

namespace strata::apps::mf {

/// Largest rank the data-parallel variant's stack copies hold.
inline constexpr int kMaxRank = 1024;

struct Options {
  int rank = 64;          ///< K: factors per user and per item
  float lr = 0.005f;      ///< step size (plain), or AdaGrad's base rate
  float reg = 0.02f;      ///< L2 weight
  bool adagrad = false;   ///< adaptive per-coordinate step (AdaGrad)
  bool shuffled = false;  ///< Strata: visit each block's ratings in random order, not key order
  int rounds = 0;         ///< Strata 2-D plan: rounds of the item blocks per pass (0: Strata's choice)
  int slices = 0;         ///< Strata 2-D plan: slices of each worker's users (0: Strata's choice)
  std::uint64_t seed = 42;
  /// Data-parallel variant only: iterations of a worker per BSP clock.
  std::int64_t clock_every = 1000;
};

/// Initial factor k of row `row`, N(0, 0.1^2), a pure function of the seed: the
/// value DistArray::randn(..., 0.1, 0, ..., seed) gives that element.
inline float initial_factor(std::uint64_t seed, std::int64_t row, int K, int k) {
  const CounterRng rng(seed);
  return static_cast<float>(0.0 + 0.1 * rng.normal(static_cast<std::uint64_t>(row) * static_cast<std::uint64_t>(K) +
                                                    static_cast<std::uint64_t>(k)));
}
inline std::uint64_t user_seed(std::uint64_t seed) { return mix64(seed ^ 0x5573657273ULL); }
inline std::uint64_t item_seed(std::uint64_t seed) { return mix64(seed ^ 0x4974656d73ULL); }

/// One SGD step on rating r: w and h move against the gradient of
/// (r - <w, h>)^2 / 2 + reg (|w|^2 + |h|^2) / 2.
inline void plain_step(float* w, float* h, int K, float r, const Options& o) {
  kernels::sgd_mf_step(w, h, static_cast<std::size_t>(K), r, o.lr, o.reg);
}

/// The same gradient with AdaGrad's per-coordinate step lr / sqrt(sum of squared
/// gradients); gw and gh hold those sums.
inline void adagrad_step(float* w, float* h, float* gw, float* gh, int K, float r, const Options& o) {
  const float e = r - kernels::dot(w, h, static_cast<std::size_t>(K));
  for (int k = 0; k < K; ++k) {
    const float dw = -e * h[k] + o.reg * w[k], dh = -e * w[k] + o.reg * h[k];
    gw[k] += dw * dw;
    gh[k] += dh * dh;
    w[k] -= o.lr * dw / std::sqrt(gw[k] + 1e-8f);
    h[k] -= o.lr * dh / std::sqrt(gh[k] + 1e-8f);
  }
}

/// One rating's share of the objective and of the squared error.
inline void measure(const float* w, const float* h, int K, float r, float reg, double& objective, double& squared) {
  const auto n = static_cast<std::size_t>(K);
  const double e = static_cast<double>(r) - kernels::dot(w, h, n);
  squared += e * e;
  objective += e * e + static_cast<double>(reg) * (kernels::dot(w, w, n) + kernels::dot(h, h, n));
}

}  // namespace strata::apps::mf
