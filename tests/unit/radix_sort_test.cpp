// The sparse loaders' radix sort (src/array/radix_sort.hpp): sorted, stable, and the
// same records in the same order for any number of threads, on key sets that take
// each of its paths (small, one-digit, skewed into one top bucket, 64-bit keys), with
// 64-bit and 32-bit key fields.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "array/radix_sort.hpp"
#include "strata/random.hpp"
#include "strata/thread_pool.hpp"

namespace strata::detail {
namespace {

using Item = KeyedValue<std::uint32_t>;
using NarrowItem = KeyedValue<std::uint32_t, std::uint32_t>;  // 8 bytes: the loaders' records where keys fit
static_assert(sizeof(NarrowItem) == 8);

// Keys drawn by `key(k)`; each value is the record's original position, so a stable
// sort is std::stable_sort by key exactly.
template <class KeyOf>
std::vector<Item> records(std::size_t n, KeyOf key) {
  std::vector<Item> v(n);
  for (std::size_t k = 0; k < n; ++k) v[k] = {key(k), static_cast<std::uint32_t>(k)};
  return v;
}

template <class I>
void expect_sorted_like_stable_sort(std::vector<I> items, int threads) {
  auto expected = items;
  std::stable_sort(expected.begin(), expected.end(), [](const I& a, const I& b) { return a.key < b.key; });
  ThreadPool pool(threads);
  radix_sort(items, threads > 1 ? &pool : nullptr);
  ASSERT_EQ(items.size(), expected.size());
  for (std::size_t k = 0; k < items.size(); ++k) {
    ASSERT_EQ(items[k].key, expected[k].key) << "position " << k << ", " << threads << " thread(s)";
    ASSERT_EQ(items[k].value, expected[k].value) << "position " << k << " (stability), " << threads << " thread(s)";
  }
}

TEST(RadixSort, MatchesAStableSortForAnyThreadCount) {
  RandomStream rs(7, 1);
  const auto uniform = records(300'000, [&](std::size_t) { return rs.below(4'000'000'000ULL); });
  const auto small = records(1'000, [&](std::size_t) { return rs.below(50'000); });
  const auto one_digit = records(100'000, [&](std::size_t) { return rs.below(200); });
  // Nearly every key in one top bucket, a few far above it: one bucket does the work.
  const auto skewed =
      records(200'000, [&](std::size_t k) { return k % 1000 == 0 ? (1ULL << 40) + k : rs.below(1'000'000); });
  const auto wide = records(100'000, [&](std::size_t) { return rs(); });
  const auto repeated = records(150'000, [&](std::size_t) { return rs.below(64) << 30; });
  const auto repeated_below_2_32 = records(150'000, [&](std::size_t) { return rs.below(64) << 26; });
  for (const auto* set : {&uniform, &small, &one_digit, &skewed, &wide, &repeated})
    for (const int threads : {1, 2, 3}) expect_sorted_like_stable_sort(*set, threads);
  // The same key sets that fit in 32 bits, in 32-bit key fields.
  for (const auto* set : {&uniform, &small, &one_digit, &repeated_below_2_32}) {
    std::vector<NarrowItem> narrow;
    for (const Item& it : *set) narrow.push_back({static_cast<std::uint32_t>(it.key), it.value});
    for (const int threads : {1, 2, 3}) expect_sorted_like_stable_sort(narrow, threads);
  }
}

TEST(RadixSort, EmptyAndSingleRecordAreLeftAsTheyAre) {
  std::vector<Item> none;
  radix_sort(none);
  EXPECT_TRUE(none.empty());
  std::vector<Item> one{{42, 7}};
  radix_sort(one);
  EXPECT_EQ(one[0].key, 42u);
  EXPECT_EQ(one[0].value, 7u);
}

}  // namespace
}  // namespace strata::detail
