// Stable LSD radix sort of 64-bit keys, returning the permutation. Sorting the
// records a loader routes to a rank dominates loading time with std::stable_sort;
// keys of sparse arrays rarely use more than 40 bits, so two or three 16-bit passes
// suffice.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <numeric>
#include <vector>

namespace strata::detail {

/// Returns order such that keys[order[0]] <= keys[order[1]] <= ..., stable.
inline std::vector<std::uint32_t> radix_order(const std::vector<std::uint64_t>& keys) {
  const auto n = keys.size();
  std::vector<std::uint32_t> order(n), tmp(n);
  std::iota(order.begin(), order.end(), 0u);
  if (n < 2) return order;
  std::uint64_t all = 0;
  for (auto k : keys) all |= k;
  const int bits = 64 - std::countl_zero(all);
  constexpr int kDigit = 16;
  for (int shift = 0; shift < bits; shift += kDigit) {
    std::vector<std::uint32_t> count(std::size_t{1} << kDigit, 0);
    for (auto i : order) ++count[(keys[i] >> shift) & 0xFFFF];
    std::uint32_t sum = 0;
    for (auto& c : count) {
      const auto c0 = c;
      c = sum;
      sum += c0;
    }
    for (auto i : order) tmp[count[(keys[i] >> shift) & 0xFFFF]++] = i;
    order.swap(tmp);
  }
  return order;
}

}  // namespace strata::detail
