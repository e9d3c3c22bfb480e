// Giving memory back (include/strata/detail/free_now.hpp): append_and_free keeps every
// element in order and holds the moved elements about once, not twice.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "strata/detail/free_now.hpp"

namespace strata::detail {
namespace {

struct Rec {  // 24 bytes, like a parsed 2-D entry of a float
  std::int64_t i, j;
  float v;
};

std::vector<Rec> numbered(std::size_t n, std::int64_t from) {
  std::vector<Rec> v(n);
  for (std::size_t k = 0; k < n; ++k) v[k] = {from + static_cast<std::int64_t>(k), -static_cast<std::int64_t>(k), 0.5f};
  return v;
}

TEST(AppendAndFree, KeepsEveryElementInOrderAndEmptiesTheSource) {
  const std::size_t slice = (std::size_t{8} << 20) / sizeof(Rec) + 1;
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, slice - 1, slice, 3 * slice + 7}) {
    std::vector<Rec> to = numbered(5, 0);
    std::vector<Rec> from = numbered(n, 5);
    append_and_free(to, from);
    EXPECT_TRUE(from.empty());
    EXPECT_EQ(from.capacity(), 0u);
    ASSERT_EQ(to.size(), n + 5);
    for (std::size_t k = 0; k < to.size(); ++k) {
      ASSERT_EQ(to[k].i, static_cast<std::int64_t>(k)) << "n " << n;
      ASSERT_EQ(to[k].j, -static_cast<std::int64_t>(k < 5 ? k : k - 5)) << "n " << n;
    }
  }
}

// The process's peak resident set in KiB (VmHWM), after `reset` clears it where the
// kernel allows (-1: it cannot be read or reset).
long peak_kib(bool reset) {
  if (reset) {
    std::ofstream clear("/proc/self/clear_refs");
    if (!(clear << "5" << std::flush)) return -1;
  }
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

TEST(AppendAndFree, HoldsTheMovedElementsAboutOnce) {
  const std::size_t n = (std::size_t{96} << 20) / sizeof(Rec);  // 96 MiB of elements
  std::vector<Rec> from = numbered(n, 0);
  std::vector<Rec> to;
  to.reserve(n);  // untouched until the copy
  const long before = peak_kib(true);
  if (before < 0) GTEST_SKIP() << "the peak resident set cannot be reset here";
  append_and_free(to, from);
  const long grew_mib = (peak_kib(false) - before) / 1024;
  // A copy that kept the source whole until the end would add the full 96 MiB.
  EXPECT_LT(grew_mib, 48) << "peak grew by " << grew_mib << " MiB while moving 96 MiB";
  ASSERT_EQ(to.size(), n);
  EXPECT_EQ(to.back().i, static_cast<std::int64_t>(n - 1));
}

}  // namespace
}  // namespace strata::detail
