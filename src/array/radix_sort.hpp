// Stable LSD radix sort of (64-bit key, value) pairs, for the records a loader routes
// to a rank: a comparison sort of them is slow, and a sort of positions followed by
// a gather is bound by cache misses. Here each key travels with its value in one
// record, every pass reads sequentially and writes to 256 streams (few enough for
// the write-combining buffers), and passes whose digit is the same for every key
// are skipped.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <vector>


namespace strata::detail {

template <class V>
struct KeyedValue {
  std::uint64_t key;
  V value;
};

/// Sorts by key ascending; equal keys keep their order.
template <class V>
void radix_sort(std::vector<KeyedValue<V>>& items) {
  const auto n = items.size();
  if (n < 2) return;
  std::uint64_t all = 0;
  for (const auto& it : items) all |= it.key;
  const int bits = 64 - std::countl_zero(all);
  std::vector<KeyedValue<V>> tmp(n);
  for (int shift = 0; shift < bits; shift += 8) {
    std::array<std::size_t, 256> count{};
    for (const auto& it : items) ++count[(it.key >> shift) & 0xFF];
    if (count[(items[0].key >> shift) & 0xFF] == n) continue;  // one bucket: nothing moves
    std::size_t sum = 0;
    for (auto& c : count) {
      const auto c0 = c;
      c = sum;
      sum += c0;
    }
    for (const auto& it : items) tmp[count[(it.key >> shift) & 0xFF]++] = it;
    items.swap(tmp);
  }
}

}  // namespace strata::detail
