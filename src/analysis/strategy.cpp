// Choosing a strategy from a loop's dependence vectors (the names of the strategies are
// in strategy_names.cpp).
#include "strata/analysis/strategy.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "strata/error.hpp"

namespace strata::analysis {

namespace {

using Sign = DependenceVector::Sign;
using Matrix = std::array<std::array<std::int64_t, 2>, 2>;

// The largest skew factor tried: small factors keep the transformed blocks close to
// rectangles; Orion's examples never need more than 1.
constexpr std::int64_t kMaxSkew = 4;

class Chooser {
 public:
  explicit Chooser(const StrategyInput& in) : in_(in) {
    const auto n = static_cast<std::size_t>(in.iter_dims);
    if (in.iter_dims < 1)
      throw ShapeError(fmt::format("choose_strategy: iteration rank {} < 1", in.iter_dims));
    if (!in.extents.empty() && in.extents.size() != n)
      throw ShapeError(fmt::format("choose_strategy: {} extents for {} iteration dimensions",
                                   in.extents.size(), n));
    if (!in.traffic_per_dim.empty() && in.traffic_per_dim.size() != n)
      throw ShapeError(
          fmt::format("choose_strategy: {} traffic entries for {} iteration dimensions",
                      in.traffic_per_dim.size(), n));
    for (const DependenceVector& v : in.vectors)
      if (v.d.size() != n)
        throw ShapeError(
            fmt::format("choose_strategy: vector {} for {} iteration dimensions", v.describe(), n));
    // Rank dimensions: useful (extent > 1) first, then cheapest, then lowest.
    for (int k = 0; k < in.iter_dims; ++k) ranked_.push_back(k);
    const auto key = [&](int k) {
      const auto uk = static_cast<std::size_t>(k);
      const bool degenerate = !in.extents.empty() && in.extents[uk] <= 1;
      const double traffic = in.traffic_per_dim.empty() ? 0.0 : in.traffic_per_dim[uk];
      return std::tuple(degenerate, traffic, k);
    };
    std::sort(ranked_.begin(), ranked_.end(), [&](int a, int b) { return key(a) < key(b); });
  }

  StrategyChoice choose() {
    if (in_.forced) return forced(*in_.forced);
    if (auto c = one_d()) {
      // Writes through Buffers are all that remains: a data-parallel 1-D loop.
      if (in_.has_buffered_writes) c->strategy = Strategy::data_parallel;
      return *c;
    }
    if (auto c = two_d()) return *c;
    if (auto c = skewed()) return *c;
    if (in_.irregular) return finish(Strategy::groups);
    reasons_.push_back(
        "groups rejected: every conflicting subscript is regular, so the vectors above are exact");
    return finish(Strategy::serial);
  }

 private:
  StrategyChoice forced(Strategy s) {
    std::optional<StrategyChoice> c;
    switch (s) {
      case Strategy::serial:
      case Strategy::groups:  // exact conflicts: always legal
        return finish(s);
      case Strategy::one_d:
        c = one_d();
        break;
      case Strategy::two_d:
        c = two_d();
        break;
      case Strategy::two_d_skewed:
        c = skewed();
        break;
      case Strategy::data_parallel:
        if (in_.vectors.empty()) return finish(s);
        reasons_.push_back(
            fmt::format("{} carries a dependence; write through a Buffer or relax the array to run "
                        "data-parallel",
                        vec(in_.vectors.front())));
        break;
    }
    if (c) {
      c->reasons.clear();
      return *c;
    }
    throw OptionError(fmt::format("strategy: {} was forced but would break a dependence: {}",
                                  to_string(s), fmt::join(reasons_, "; ")));
  }

  // A choice carrying the reasons gathered so far.
  StrategyChoice finish(Strategy s, int space = -1, int time = -1) const {
    StrategyChoice c;
    c.strategy = s;
    c.space_dim = space;
    c.time_dim = time;
    c.reasons = reasons_;
    return c;
  }

  std::string name(int k) const { return iteration_dim_name(k, in_.dim_names); }
  std::string pair(int s, int t) const { return fmt::format("({}, {})", name(s), name(t)); }
  static std::string vec(const DependenceVector& v) {
    return fmt::format("vector {} from {}", v.describe(), v.source);
  }
  static std::string value(const Distance& x) { return x.infinite ? "*" : fmt::to_string(x.value); }

  std::optional<StrategyChoice> one_d() {
    for (int k : ranked_) {
      const auto uk = static_cast<std::size_t>(k);
      auto bad = std::find_if(in_.vectors.begin(), in_.vectors.end(),
                              [&](const DependenceVector& v) { return !v.d[uk].is_zero(); });
      if (bad == in_.vectors.end()) {
        return finish(Strategy::one_d, k);
      }
      reasons_.push_back(fmt::format("1D on {} rejected: {} has {} on {}", name(k), vec(*bad),
                                     value(bad->d[uk]), name(k)));
    }
    return std::nullopt;
  }

  // Unordered pairs of dimensions, cheaper one first (it becomes the space dimension).
  template <class F>
  void for_each_pair(F&& f) const {
    for (std::size_t a = 0; a < ranked_.size(); ++a)
      for (std::size_t b = a + 1; b < ranked_.size(); ++b)
        if (f(ranked_[a], ranked_[b])) return;
  }

  std::optional<StrategyChoice> two_d() {
    if (in_.iter_dims < 2) {
      reasons_.push_back("2D rejected: the loop has one iteration dimension");
      return std::nullopt;
    }
    if (in_.ordered) {  // the wavefront without skewing
      std::optional<StrategyChoice> found;
      for_each_pair([&](int s, int t) {
        if (auto bad = wavefront_violation(s, t, Matrix{{{1, 0}, {0, 1}}})) {
          reasons_.push_back(fmt::format("ordered 2D on {} rejected: {}", pair(s, t), bad->why));
          return false;
        }
        found = finish(Strategy::two_d, s, t);
        return true;
      });
      return found;
    }
    std::optional<StrategyChoice> found;
    for_each_pair([&](int s, int t) {
      const auto us = static_cast<std::size_t>(s), ut = static_cast<std::size_t>(t);
      auto bad = std::find_if(
          in_.vectors.begin(), in_.vectors.end(),
          [&](const DependenceVector& v) { return !v.d[us].is_zero() && !v.d[ut].is_zero(); });
      if (bad != in_.vectors.end()) {
        reasons_.push_back(fmt::format("2D on {} rejected: {} is non-zero on both {} and {}",
                                       pair(s, t), vec(*bad), name(s), name(t)));
        return false;
      }
      found = finish(Strategy::two_d, s, t);
      return true;
    });
    return found;
  }

  // Why the wavefront over T * (p[s], p[t]) would break a dependence.
  struct Violation {
    std::string why;
    bool unknown_sign = false;  // no candidate T can help: each has a positive diagonal
  };

  // The violation of the wavefront over T * (p[s], p[t]), or nullopt if it is legal.
  // T has non-negative entries, so a transformed component is >= 0 for every real
  // dependence when no term with a non-zero coefficient has unknown sign and the
  // numbers sum to >= 0 (a leading "*" only adds something >= 0).
  std::optional<Violation> wavefront_violation(int s, int t, const Matrix& T) const {
    const int dim[2] = {s, t};
    for (const DependenceVector& v : in_.vectors) {
      for (std::size_t row = 0; row < 2; ++row) {
        std::int64_t sum = 0;
        for (std::size_t col = 0; col < 2; ++col) {
          const std::int64_t coef = T[row][col];
          const auto k = static_cast<std::size_t>(dim[col]);
          const Distance& x = v.d[k];
          if (coef == 0) continue;
          if (v.component_sign(k) == Sign::unknown) {
            return Violation{
                x.infinite ? fmt::format("{} has * on {}", vec(v), name(dim[col]))
                           : fmt::format("{} has {} on {}, of either sign after its leading *",
                                         vec(v), x.value, name(dim[col])),
                true};
          }
          if (!x.infinite) sum += coef * x.value;
        }
        if (sum >= 0) continue;
        if (T == Matrix{{{1, 0}, {0, 1}}})
          return Violation{fmt::format("{} is negative on {}", vec(v), name(dim[row]))};
        return Violation{fmt::format("{} stays negative under T = [[{}, {}], [{}, {}]]", vec(v),
                                     T[0][0], T[0][1], T[1][0], T[1][1])};
      }
    }
    return std::nullopt;
  }

  std::optional<StrategyChoice> skewed() {
    if (in_.iter_dims < 2) {
      reasons_.push_back("skewed 2D rejected: the loop has one iteration dimension");
      return std::nullopt;
    }
    // Candidates in order: the identity (unordered loops only: ordered ones tried it
    // as two_d), then growing skews of t by s and of s by t.
    std::vector<Matrix> candidates;
    if (!in_.ordered || in_.forced == Strategy::two_d_skewed)
      candidates.push_back(Matrix{{{1, 0}, {0, 1}}});
    for (std::int64_t f = 1; f <= kMaxSkew; ++f) {
      candidates.push_back(Matrix{{{1, 0}, {f, 1}}});
      candidates.push_back(Matrix{{{1, f}, {0, 1}}});
    }
    std::optional<StrategyChoice> found;
    for_each_pair([&](int s, int t) {
      std::optional<Violation> bad;
      for (const Matrix& T : candidates) {
        bad = wavefront_violation(s, t, T);
        if (!bad) {
          found = finish(Strategy::two_d_skewed, s, t);
          found->skew = T;
          return true;
        }
        if (bad->unknown_sign) break;
      }
      reasons_.push_back(fmt::format("skewed 2D on {} rejected (skews up to {} tried): {}",
                                     pair(s, t), kMaxSkew, bad->why));
      return false;
    });
    return found;
  }

  const StrategyInput& in_;
  std::vector<int> ranked_;
  std::vector<std::string> reasons_;
};

}  // namespace

StrategyChoice choose_strategy(const StrategyInput& in) {
  return Chooser(in).choose();
}

}  // namespace strata::analysis
