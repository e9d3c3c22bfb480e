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

}  // namespace strata::detail
