// Matrix factorisation's model options and update rules, shared by the serial
// program and its Strata twin (both must do the same arithmetic, in the same order,
// for the bit-for-bit comparison).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "strata/kernels.hpp"
#include "strata/random.hpp"

namespace strata::apps::mf {

/// Largest rank the data-parallel variant's stack copies hold.
inline constexpr int kMaxRank = 1024;

/// How a rating's gradient moves the two factor rows.
enum class Step {
  rows,     ///< LIBMF's: a step size lr / sqrt(G) per part of a row (its first kSlowFactors factors, the
            ///< rest), G summing the part's mean squared gradient; the first pass moves the first part only
  plain,    ///< the same step size lr everywhere
  adagrad,  ///< one step size per element, lr / sqrt(sum of that element's squared gradients)
};

/// What a rating r costs at prediction z = <w, h>. The binary losses read r > 0 as
/// the label +1 and anything else as -1.
enum class Loss {
  squared,   ///< (r - z)^2; measured by RMSE
  absolute,  ///< |r - z|; measured by MAE
  logistic,  ///< log(1 + exp(-y z)); measured by log-loss and accuracy
  hinge,     ///< max(0, 1 - y z); measured by accuracy
};

/// The rows step's first part of a row: a step size of its own, and the only factors
/// the first pass moves. LIBMF's schedule (Chin et al., PAKDD 2015, as LIBMF's source
/// does it with its vector width): the first pass fits the ratings' mean through a few
/// factors while the others keep their small random start, so the later passes do not
/// begin with a large step on every factor (docs/apps-mf.md has what it gains).
inline constexpr int kSlowFactors = 4;

struct Options {
  int rank = 64;          ///< K: factors per user and per item
  Step step = Step::rows;
  Loss loss = Loss::squared;
  float lr = 0.1f;        ///< step size (rows, adagrad: the base rate)
  float l2_user = 0.02f, l2_item = 0.02f;  ///< L2 weights on user and item rows
  float l1_user = 0.0f, l1_item = 0.0f;    ///< L1 weights (a shrink towards 0 after each step)
  bool nmf = false;       ///< non-negative factors: negative values are set to 0 after each step
  bool shuffled = false;  ///< Strata: visit each block's ratings in random order, not key order
  int rounds = 0;         ///< Strata 2-D plan: rounds of the item blocks per pass (0: Strata's choice)
  int slices = 0;         ///< Strata 2-D plan: slices of each worker's users (0: Strata's choice)
  std::uint64_t seed = 42;
  /// Data-parallel variant only: iterations of a worker per BSP clock.
  std::int64_t clock_every = 1000;
  /// Rows step: this pass moves only the first kSlowFactors factors of each row. The
  /// programs set it for their first pass where warms_up().
  bool warm_up = false;

  /// The adaptive state's length per row: rows 2 (a sum per part), adagrad K, plain none.
  int state_per_row() const { return step == Step::rows ? 2 : step == Step::adagrad ? rank : 0; }
  /// Its initial value: LIBMF starts the row sums at 1 (the first step is lr itself).
  float state_start() const { return step == Step::rows ? 1.0f : 0.0f; }
  /// Whether the first pass is a warm-up (kSlowFactors): the rows step without L1, as
  /// LIBMF does it (L1 shrinks every factor at every step, warm or not).
  bool warms_up() const { return step == Step::rows && l1_user == 0 && l1_item == 0; }
};

/// Initial factor k of row `row`, a pure function of the seed: uniform in
/// [0, 1/sqrt(K)), as LIBMF starts. All positive, the rows start out aligned, so the
/// first pass fits the ratings' mean at once; on the planted 10M set this reached a
/// given held-out RMSE two to three passes sooner than N(0, 0.1^2) (docs/apps-mf.md).
inline float initial_factor(std::uint64_t seed, std::int64_t row, int K, int k) {
  const CounterRng rng(seed);
  const auto c = static_cast<std::uint64_t>(row) * static_cast<std::uint64_t>(K) + static_cast<std::uint64_t>(k);
  return static_cast<float>(rng.uniform(c) / std::sqrt(static_cast<double>(K)));
}
inline std::uint64_t user_seed(std::uint64_t seed) { return mix64(seed ^ 0x5573657273ULL); }
inline std::uint64_t item_seed(std::uint64_t seed) { return mix64(seed ^ 0x4974656d73ULL); }

/// The label a binary loss reads from a rating.
inline float label(float r) { return r > 0 ? 1.0f : -1.0f; }

/// Minus the loss's derivative at prediction z: the factor the rows move by.
inline float descent(Loss loss, float r, float z) {
  switch (loss) {
    case Loss::squared: return r - z;
    case Loss::absolute: return r > z ? 1.0f : r < z ? -1.0f : 0.0f;
    case Loss::logistic: {
      const float y = label(r);
      return y / (1.0f + std::exp(y * z));
    }
    case Loss::hinge: return label(r) * z < 1.0f ? label(r) : 0.0f;
  }
  return 0.0f;
}

/// After the gradient step: L1's shrink of each value towards 0 by its step times
/// the weight (LIBMF's proximal step), and NMF's floor at 0.
inline void after_step(float* v, int K, float shrink, bool nmf) {
  if (shrink > 0)
    for (int k = 0; k < K; ++k) v[k] = v[k] > shrink ? v[k] - shrink : v[k] < -shrink ? v[k] + shrink : 0.0f;
  if (nmf)
    for (int k = 0; k < K; ++k) v[k] = std::max(v[k], 0.0f);
}

/// One SGD step on rating r: w and h move against the gradient of
/// loss(r, <w, h>) + l2_user |w|^2 / 2 + l2_item |h|^2 / 2, then after_step.
/// gw and gh are the rows' adaptive state (Options::state_per_row values each).
/// Returns the prediction before the step.
inline float step(float* w, float* h, float* gw, float* gh, int K, float r, const Options& o) {
  const auto n = static_cast<std::size_t>(K);
  const float rw = o.l2_user, rh = o.l2_item;
  float eta_w = o.lr, eta_h = o.lr, z = 0;
  switch (o.step) {
    case Step::plain:
      if (o.loss == Loss::squared && rw == rh) {
        z = r - kernels::sgd_mf_step(w, h, n, r, o.lr, rw);  // the kernel's bits
      } else {
        z = kernels::dot(w, h, n);
        const float e = descent(o.loss, r, z);
        kernels::pair_update(w, h, n, 1.0f - o.lr * rw, o.lr * e, 1.0f - o.lr * rh, o.lr * e);
      }
      break;
    case Step::rows: {
      // Each part's gradients, dw = rw w - e h and dh = rh h - e w, in one sweep: their
      // squared norms follow from the part's <w, h>, |w|^2 and |h|^2 (the rest's: the
      // row's less the first part's). The rest moves through the kernel, the first few
      // factors after it, from their old values.
      const int S = std::min(K, kSlowFactors);
      const auto rest = static_cast<float>(K - S);
      float ww = 0, hh = 0, zs = 0, wws = 0, hhs = 0, w0[kSlowFactors], h0[kSlowFactors];
      z = kernels::dot_and_norms(w, h, n, &ww, &hh);
      for (int k = 0; k < S; ++k) {
        w0[k] = w[k], h0[k] = h[k];
        zs += w[k] * h[k], wws += w[k] * w[k], hhs += h[k] * h[k];
      }
      const float e = descent(o.loss, r, z);
      // A warm-up pass leaves the rest where it is (coefficients 1 and 0).
      const bool all = !o.warm_up && K > S;
      eta_w = o.lr / std::sqrt(gw[0]);
      eta_h = o.lr / std::sqrt(gh[0]);
      const float eta_wr = all ? o.lr / std::sqrt(gw[1]) : 0.0f, eta_hr = all ? o.lr / std::sqrt(gh[1]) : 0.0f;
      if (all) kernels::pair_update(w, h, n, 1.0f - eta_wr * rw, eta_wr * e, 1.0f - eta_hr * rh, eta_hr * e);
      for (int k = 0; k < S; ++k) {
        w[k] = (1.0f - eta_w * rw) * w0[k] + eta_w * e * h0[k];
        h[k] = (1.0f - eta_h * rh) * h0[k] + eta_h * e * w0[k];
      }
      auto grows = [&](float rv, float vv, float uu, float zz) {  // |rv v - e u|^2 of a part
        return std::max(rv * rv * vv - 2.0f * rv * e * zz + e * e * uu, 0.0f);
      };
      gw[0] += grows(rw, wws, hhs, zs) / static_cast<float>(S);
      gh[0] += grows(rh, hhs, wws, zs) / static_cast<float>(S);
      after_step(w, S, eta_w * o.l1_user, o.nmf);  // each part shrinks by its own step
      after_step(h, S, eta_h * o.l1_item, o.nmf);
      if (!all) return z;
      gw[1] += grows(rw, ww - wws, hh - hhs, z - zs) / rest;
      gh[1] += grows(rh, hh - hhs, ww - wws, z - zs) / rest;
      after_step(w + S, K - S, eta_wr * o.l1_user, o.nmf);
      after_step(h + S, K - S, eta_hr * o.l1_item, o.nmf);
      return z;
    }
    case Step::adagrad: {
      z = kernels::dot(w, h, n);
      const float e = descent(o.loss, r, z);
      for (int k = 0; k < K; ++k) {
        const float dw = -e * h[k] + rw * w[k], dh = -e * w[k] + rh * h[k];
        gw[k] += dw * dw;
        gh[k] += dh * dh;
        w[k] -= o.lr * dw / std::sqrt(gw[k] + 1e-8f);
        h[k] -= o.lr * dh / std::sqrt(gh[k] + 1e-8f);
      }
      eta_w = eta_h = o.lr;  // L1 shrinks by the base rate
      break;
    }
  }
  if (o.l1_user > 0 || o.nmf) after_step(w, K, eta_w * o.l1_user, o.nmf);
  if (o.l1_item > 0 || o.nmf) after_step(h, K, eta_h * o.l1_item, o.nmf);
  return z;
}

/// What rating r costs at prediction z, without regularisation.
inline double loss_value(Loss loss, float r, double z) {
  const double e = r - z, yz = label(r) * z;
  switch (loss) {
    case Loss::squared: return e * e;
    case Loss::absolute: return std::abs(e);
    case Loss::logistic: return yz > 30 ? std::exp(-yz) : std::log1p(std::exp(-yz));
    case Loss::hinge: return std::max(0.0, 1.0 - yz);
  }
  return 0.0;
}

/// Quality sums over a set of ratings; the metrics a loss is measured by.
struct Fit {
  double objective = 0;  ///< loss + regularisation, summed
  double squared = 0, absolute = 0, logloss = 0;
  std::int64_t correct = 0;  ///< binary losses: the sign of the prediction matched the label
  std::int64_t count = 0;
  double mean(double sum) const { return count ? sum / static_cast<double>(count) : 0.0; }
  double rmse() const { return std::sqrt(mean(squared)); }
  double loss() const { return mean(objective); }
};

/// One rating's share of the sums.
inline void measure(const float* w, const float* h, int K, float r, const Options& o, Fit& f) {
  const auto n = static_cast<std::size_t>(K);
  const double z = kernels::dot(w, h, n), e = static_cast<double>(r) - z;
  f.squared += e * e;
  f.absolute += std::abs(e);
  f.logloss += loss_value(Loss::logistic, r, z);
  f.correct += label(r) * z > 0;
  const double loss = loss_value(o.loss, r, z);
  double reg = o.l2_user * static_cast<double>(kernels::dot(w, w, n)) + o.l2_item * kernels::dot(h, h, n);
  if (o.l1_user > 0 || o.l1_item > 0)
    for (int k = 0; k < K; ++k) reg += o.l1_user * std::abs(w[k]) + o.l1_item * std::abs(h[k]);
  f.objective += loss + reg;
}

}  // namespace strata::apps::mf
