// Walking boxes (per-dimension index sets) in row-major order.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "strata/index.hpp"
#include "strata/partition.hpp"

namespace strata::detail {

/// Calls f(index) for every index of the box, last dimension fastest.
template <std::size_t N, class F>
void for_each_in_box(const std::vector<IndexSet>& box, F&& f) {
  for (const auto& s : box)
    if (s.empty()) return;
  std::array<std::int64_t, N> pos{};
  Index<N> i{};
  for (std::size_t d = 0; d < N; ++d) i[d] = box[d].global(0);
  for (;;) {
    f(static_cast<const Index<N>&>(i));
    std::size_t d = N;
    while (d-- > 0) {
      if (++pos[d] < box[d].size()) {
        i[d] = box[d].global(pos[d]);
        break;
      }
      pos[d] = 0;
      i[d] = box[d].global(0);
      if (d == 0) return;
    }
  }
}

/// The intersection of two boxes, with each common index's row-major position in
/// both: lets one side pack values and the other unpack them without sending indices.
template <std::size_t N>
class BoxOverlap {
 public:
  BoxOverlap(const std::vector<IndexSet>& a, const std::vector<IndexSet>& b) {
    std::array<std::int64_t, N> stride_a{}, stride_b{};
    std::int64_t sa = 1, sb = 1;
    for (std::size_t d = N; d-- > 0;) {
      stride_a[d] = sa;
      stride_b[d] = sb;
      sa *= a[d].size();
      sb *= b[d].size();
    }
    for (std::size_t d = 0; d < N; ++d) {
      const auto common = a[d].intersect(b[d]);
      if (common.empty()) empty_ = true;
      pos_a_[d] = a[d].positions_of(common);
      pos_b_[d] = b[d].positions_of(common);
      for (auto& p : pos_a_[d]) p *= stride_a[d];
      for (auto& p : pos_b_[d]) p *= stride_b[d];
    }
  }

  bool empty() const { return empty_; }
  std::int64_t volume() const {
    if (empty_) return 0;
    std::int64_t v = 1;
    for (const auto& p : pos_a_) v *= static_cast<std::int64_t>(p.size());
    return v;
  }

  /// f(position in a, position in b) for every common index, row-major.
  template <class F>
  void for_each(F&& f) const {
    if (empty_) return;
    walk<0>(0, 0, f);
  }

 private:
  template <std::size_t D, class F>
  void walk(std::int64_t off_a, std::int64_t off_b, F& f) const {
    const auto& pa = pos_a_[D];
    const auto& pb = pos_b_[D];
    for (std::size_t k = 0; k < pa.size(); ++k) {
      if constexpr (D + 1 == N)
        f(off_a + pa[k], off_b + pb[k]);
      else
        walk<D + 1>(off_a + pa[k], off_b + pb[k], f);
    }
  }

  bool empty_ = false;
  std::array<std::vector<std::int64_t>, N> pos_a_, pos_b_;
};

}  // namespace strata::detail
