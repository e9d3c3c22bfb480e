#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "strata/random.hpp"

namespace strata {
namespace {

TEST(CounterRng, IsAPureFunctionOfSeedStreamAndCounter) {
  const CounterRng a(7, 3), b(7, 3), other_stream(7, 4), other_seed(8, 3);
  for (std::uint64_t c = 0; c < 100; ++c) {
    EXPECT_EQ(a.bits(c), b.bits(c));
    EXPECT_NE(a.bits(c), other_stream.bits(c));
    EXPECT_NE(a.bits(c), other_seed.bits(c));
  }
}

TEST(CounterRng, UniformMomentsAndRange) {
  const CounterRng rng(1);
  double sum = 0, sq = 0;
  const int n = 200000;
  for (int c = 0; c < n; ++c) {
    const double u = rng.uniform(static_cast<std::uint64_t>(c));
    ASSERT_GT(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    sq += u * u;
  }
  EXPECT_NEAR(sum / n, 0.5, 0.005);
  EXPECT_NEAR(sq / n - (sum / n) * (sum / n), 1.0 / 12, 0.002);
}

TEST(CounterRng, NormalMoments) {
  const CounterRng rng(2);
  double sum = 0, sq = 0;
  const int n = 200000;
  for (int c = 0; c < n; ++c) {
    const double x = rng.normal(static_cast<std::uint64_t>(c));
    ASSERT_TRUE(std::isfinite(x));
    sum += x;
    sq += x * x;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sq / n, 1.0, 0.02);
}

TEST(CounterRng, BelowStaysInRangeAndCoversIt) {
  const CounterRng rng(3);
  std::set<std::uint64_t> seen;
  for (std::uint64_t c = 0; c < 1000; ++c) {
    const auto v = rng.below(c, 10);
    ASSERT_LT(v, 10u);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 10u);
}

TEST(RandomStream, WorksWithStdShuffleReproducibly) {
  std::vector<int> a(100), b(100);
  for (int i = 0; i < 100; ++i) a[static_cast<std::size_t>(i)] = b[static_cast<std::size_t>(i)] = i;
  RandomStream s1(5, 1), s2(5, 1);
  std::shuffle(a.begin(), a.end(), s1);
  std::shuffle(b.begin(), b.end(), s2);
  EXPECT_EQ(a, b);
  EXPECT_FALSE(std::is_sorted(a.begin(), a.end()));
}

}  // namespace
}  // namespace strata
