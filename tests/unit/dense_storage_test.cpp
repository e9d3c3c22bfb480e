// A dense array's storage (include/strata/detail/dense_storage.hpp): value-initialised
// without writing large allocations, a window narrowed and widened in place, released
// pages that read as zero, and copies of the window only.
#include <gtest/gtest.h>

#include <unistd.h>

#include <numeric>

#include "strata/detail/dense_storage.hpp"

namespace strata::detail {
namespace {

struct Defaulted {  // trivially copyable, but its default constructor is not trivial
  float x = 1.5f;
  int y = 2;
};

constexpr std::size_t kSmall = 1000, kMapped = (std::size_t{4} << 20) / sizeof(float);  // under and over the mapping size

TEST(DenseStorage, ElementsStartValueInitialised) {
  for (const std::size_t n : {kSmall, kMapped}) {
    const DenseStorage<float> zeros(n);
    ASSERT_EQ(zeros.size(), n);
    for (const float v : zeros) ASSERT_EQ(v, 0.0f);
    const DenseStorage<Defaulted> defaulted(n);
    for (const Defaulted& d : defaulted) ASSERT_TRUE(d.x == 1.5f && d.y == 2);
  }
}

TEST(DenseStorage, ANarrowedWindowKeepsItsValuesInPlaceAndWidensBack) {
  for (const std::size_t n : {kSmall, kMapped}) {
    DenseStorage<float> s(n, /*huge_pages=*/false);
    std::iota(s.begin(), s.end(), 0.0f);
    const float* base = s.data();
    const std::size_t from = n / 3, count = n / 4;
    s.narrow(from, count);
    ASSERT_EQ(s.size(), count);
    EXPECT_EQ(s.window_start(), from);
    EXPECT_EQ(s.allocated(), n);
    EXPECT_EQ(s.data(), base + from) << "the window is the same memory";
    for (std::size_t k = 0; k < count; ++k) ASSERT_EQ(s[k], static_cast<float>(from + k));
    const DenseStorage<float> copy = s;  // the window only
    ASSERT_EQ(copy.size(), count);
    for (std::size_t k = 0; k < count; ++k) ASSERT_EQ(copy[k], static_cast<float>(from + k));
    s.widen();
    ASSERT_EQ(s.size(), n);
    EXPECT_EQ(s.data(), base);
    for (std::size_t k = from; k < from + count; ++k) ASSERT_EQ(s[k], static_cast<float>(k));
    if (n != kMapped) continue;
    // A mapping starts on a page: outside the window, the whole pages were released
    // and read as zero; the partial pages at the window's edges kept their values.
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)) / sizeof(float);
    for (std::size_t k = 0; k < n; ++k) {
      if (k >= from && k < from + count) continue;
      const std::size_t first = k / page * page;
      const bool released = first + page <= from || first >= from + count;
      ASSERT_EQ(s[k], released ? 0.0f : static_cast<float>(k)) << k;
    }
  }
}

TEST(DenseStorage, ReleasedPagesReadAsZeroAndCanBeWrittenAgain) {
  DenseStorage<float> s(kMapped, /*huge_pages=*/false);
  std::fill(s.begin(), s.end(), 7.0f);
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)) / sizeof(float);
  s.release(3 * page, 5 * page);  // a mapping starts on a page: pages 3-7 exactly
  for (std::size_t k = 0; k < 10 * page; ++k) ASSERT_EQ(s[k], (k >= 3 * page && k < 8 * page) ? 0.0f : 7.0f) << k;
  s[4 * page] = 9.0f;
  EXPECT_EQ(s[4 * page], 9.0f);
}

}  // namespace
}  // namespace strata::detail
