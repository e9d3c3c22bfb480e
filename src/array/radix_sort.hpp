// Stable radix sort of (key, value) pairs, for the records a loader routes
// to a rank: a comparison sort of them is slow, and a sort of positions followed by
// a gather is bound by cache misses. Each key travels with its value in one record.
//
// The first pass splits the records by the top 8 of the key's used bits (most
// significant digit first), each thread scattering its own contiguous share; every
// bucket then goes through least-significant-digit passes on its own, in a thread's
// turn. A bucket of a large sort is small enough to stay in the core's cache for its
// passes, where whole-array passes streamed every record through memory each time
// (10M mf ratings: four passes of 160 MB, 0.64 s on one thread). Each pass reads
// sequentially and writes to 256 streams; passes whose digit is the same for every
// key are skipped. Keys are 64-bit, or 32-bit where the caller knows they fit (a
// record of a 32-bit key and a float is 8 bytes instead of 16: half the memory).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "strata/thread_pool.hpp"

namespace strata::detail {

template <class V, class K = std::uint64_t>
struct KeyedValue {
  K key;
  V value;
};

namespace radix {

// Least-significant-digit passes over bits [0, bits) of [from, to), stable, with
// `scratch` (as long as the range) as the other buffer; the result ends in `from`.
template <class Item>
void lsd(Item* from, Item* scratch, std::size_t n, int bits) {
  Item* src = from;
  Item* dst = scratch;
  for (int shift = 0; shift < bits; shift += 8) {
    std::array<std::size_t, 256> count{};
    for (std::size_t k = 0; k < n; ++k) ++count[(src[k].key >> shift) & 0xFF];
    if (count[(src[0].key >> shift) & 0xFF] == n) continue;  // one bucket: nothing moves
    std::size_t sum = 0;
    for (auto& c : count) sum += std::exchange(c, sum);
    for (std::size_t k = 0; k < n; ++k) dst[count[(src[k].key >> shift) & 0xFF]++] = src[k];
    std::swap(src, dst);
  }
  if (src != from) std::memcpy(static_cast<void*>(from), src, n * sizeof(Item));
}

}  // namespace radix

/// Sorts by key ascending; equal keys keep their order. With a pool, its threads
/// share the work (the order is the same for any number of threads).
template <class V, class K>
void radix_sort(std::span<KeyedValue<V, K>> items, ThreadPool* pool = nullptr) {
  using Item = KeyedValue<V, K>;
  const auto n = items.size();
  if (n < 2) return;
  std::uint64_t all = 0;
  for (const auto& it : items) all |= it.key;
  const int bits = 64 - std::countl_zero(all);
  std::vector<Item> tmp(n);
  if (bits <= 8) {
    radix::lsd(items.data(), tmp.data(), n, bits);
    return;
  }
  // Most significant digit: per thread, counts of its share; bucket b of thread t
  // starts after every bucket below b and after b's records of threads before t.
  const int top = bits - 8;
  const int T = pool && n >= (std::size_t{1} << 16) ? pool->size() : 1;
  auto share = [&](int t) { return std::pair(n * static_cast<std::size_t>(t) / T, n * (t + 1U) / T); };
  std::vector<std::array<std::size_t, 256>> count(static_cast<std::size_t>(T));
  auto each_thread = [&](const std::function<void(int)>& f) {
    if (T == 1) return f(0);
    pool->run(f);
  };
  each_thread([&](int t) {
    auto& c = count[static_cast<std::size_t>(t)];
    c.fill(0);
    const auto [lo, hi] = share(t);
    for (std::size_t k = lo; k < hi; ++k) ++c[items[k].key >> top];
  });
  std::array<std::size_t, 257> bucket_start{};
  std::size_t sum = 0;
  for (std::size_t b = 0; b < 256; ++b) {
    bucket_start[b] = sum;
    for (auto& c : count) sum += std::exchange(c[b], sum);
  }
  bucket_start[256] = n;
  each_thread([&](int t) {
    auto& c = count[static_cast<std::size_t>(t)];
    const auto [lo, hi] = share(t);
    for (std::size_t k = lo; k < hi; ++k) tmp[c[items[k].key >> top]++] = items[k];
  });
  // Each bucket's remaining digits, the sorted bucket landing back in `items`.
  auto sort_buckets = [&](std::int64_t first, std::int64_t last, int) {
    for (auto b = static_cast<std::size_t>(first); b < static_cast<std::size_t>(last); ++b) {
      const std::size_t from = bucket_start[b], size = bucket_start[b + 1] - from;
      if (size == 0) continue;
      radix::lsd(tmp.data() + from, items.data() + from, size, top);
      std::memcpy(static_cast<void*>(items.data() + from), tmp.data() + from, size * sizeof(Item));
    }
  };
  if (T == 1) sort_buckets(0, 256, 0);
  else pool->run_chunks(256, 1, sort_buckets);
}

template <class V, class K>
void radix_sort(std::vector<KeyedValue<V, K>>& items, ThreadPool* pool = nullptr) {
  radix_sort(std::span<KeyedValue<V, K>>(items), pool);
}

}  // namespace strata::detail
