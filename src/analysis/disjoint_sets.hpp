// Union-find over elements numbered 0..n-1 (fewer than 2^31), with path halving and
// union by size: conflict groups join iterations (conflict_groups.cpp), and the ranks
// of a spread plan join their components (loop/groups_across_ranks.cpp).
#pragma once

#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

namespace strata::analysis {

class DisjointSets {
 public:
  explicit DisjointSets(std::int32_t n)
      : parent_(static_cast<std::size_t>(n)), size_(static_cast<std::size_t>(n), 1) {
    std::iota(parent_.begin(), parent_.end(), 0);
  }
  std::int32_t find(std::int32_t x) {
    while (parent_[static_cast<std::size_t>(x)] != x) {
      auto& p = parent_[static_cast<std::size_t>(x)];
      p = parent_[static_cast<std::size_t>(p)];
      x = p;
    }
    return x;
  }
  /// Merges the sets of a and b; returns the root of the result.
  std::int32_t unite(std::int32_t a, std::int32_t b) {
    a = find(a);
    b = find(b);
    if (a == b) return a;
    if (size_[static_cast<std::size_t>(a)] < size_[static_cast<std::size_t>(b)]) std::swap(a, b);
    parent_[static_cast<std::size_t>(b)] = a;
    size_[static_cast<std::size_t>(a)] += size_[static_cast<std::size_t>(b)];
    return a;
  }

 private:
  std::vector<std::int32_t> parent_, size_;
};

}  // namespace strata::analysis
