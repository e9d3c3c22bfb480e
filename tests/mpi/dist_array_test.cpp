#include <gtest/gtest.h>

#include <array>
#include <numeric>

#include "strata/dist_array.hpp"
#include "test_runtime.hpp"

namespace strata {
namespace {
using testing::rt;

TEST(DistArray, RandnIsIdenticalForEveryPartitioning) {
  const auto a = DistArray<float, 2>::randn(rt(), {37, 5}, 0.1, 0.0, Partition::range(0), 123);
  const auto b = DistArray<float, 2>::randn(rt(), {37, 5}, 0.1, 0.0, Partition::hash(0), 123);
  const auto c = DistArray<float, 2>::randn(rt(), {37, 5}, 0.1, 0.0, Partition::block2d(0, 1), 123);
  const auto ga = a.gather();
  EXPECT_EQ(ga, b.gather());
  EXPECT_EQ(ga, c.gather());
  // Reference: element k is normal(k) of the same stream, scaled.
  const CounterRng rng(123);
  for (std::size_t k = 0; k < ga.size(); ++k) ASSERT_EQ(ga[k], static_cast<float>(0.1 * rng.normal(k)));
}

TEST(DistArray, RowViewsAndLocalAccess) {
  auto w = DistArray<float, 2>::zeros(rt(), {10, 4});
  w.for_each_local([](const Index<2>& i, float& v) { v = static_cast<float>(i[0] * 10 + i[1]); });
  for (std::int64_t i = 0; i < 10; ++i) {
    if (!w.is_local({i, 0})) {
      EXPECT_THROW(w.row(i), ShapeError);
      continue;
    }
    auto r = w.row(i);
    ASSERT_EQ(r.size(), 4u);
    for (std::size_t k = 0; k < 4; ++k) EXPECT_EQ(r[k], static_cast<float>(i * 10 + static_cast<std::int64_t>(k)));
  }
  EXPECT_THROW(w.at({10, 0}), ShapeError);
}

TEST(DistArray, RepartitionKeepsContent) {
  auto a = DistArray<std::int64_t, 3>::generate(rt(), {6, 5, 4}, [](const Index<3>& i) { return i[0] * 100 + i[1] * 10 + i[2]; });
  const auto before = a.gather();
  for (const auto& p : {Partition::hash(1), Partition::block2d(2, 0), Partition::range(2), Partition::range(0)}) {
    a.repartition(p);
    EXPECT_EQ(a.gather(), before) << p.describe();
    a.for_each_local([&](const Index<3>& i, std::int64_t v) { EXPECT_TRUE(a.is_local(i)); EXPECT_EQ(v, i[0] * 100 + i[1] * 10 + i[2]); });
  }
}

TEST(DistArray, SparseFromEntriesRoutesAndSorts) {
  std::vector<Entry<double, 2>> mine;
  // Every rank contributes a disjoint set of entries, in reverse order.
  for (std::int64_t k = 20; k-- > 0;) mine.push_back({{k, rt().rank()}, static_cast<double>(k + rt().rank())});
  auto s = DistArray<double, 2>::sparse(rt(), {20, rt().size()}, mine);
  EXPECT_EQ(s.nnz(), 20 * rt().size());
  const auto keys = s.local_keys();
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  for (const auto& k : keys) EXPECT_TRUE(s.is_local(k));
  const auto all = s.gather_entries();
  ASSERT_EQ(all.size(), static_cast<std::size_t>(20 * rt().size()));
  EXPECT_EQ(all.front().index, (Index<2>{0, 0}));
}

TEST(DistArray, SparseDuplicatePolicies) {
  std::vector<Entry<int, 1>> mine{{{3}, rt().rank() + 1}};
  auto sum = DistArray<int, 1>::sparse(rt(), {5}, mine, Duplicates::sum);
  EXPECT_EQ(sum.gather_entries().at(0).value, rt().size() * (rt().size() + 1) / 2);
  auto last = DistArray<int, 1>::sparse(rt(), {5}, mine, Duplicates::last);
  EXPECT_EQ(last.gather_entries().at(0).value, rt().size());
  auto first = DistArray<int, 1>::sparse(rt(), {5}, mine, Duplicates::first);
  EXPECT_EQ(first.gather_entries().at(0).value, 1);
  if (rt().size() > 1) {
    EXPECT_THROW((DistArray<int, 1>::sparse(rt(), {5}, mine, Duplicates::error)), ShapeError);
  }
  std::vector<Entry<int, 1>> outside{{{rt().rank() == 0 ? 5 : 1}, 1}};
  EXPECT_THROW((DistArray<int, 1>::sparse(rt(), {5}, outside)), ShapeError);
}

TEST(DistArray, MapHistogramRandomize) {
  auto a = DistArray<std::int64_t, 2>::generate(rt(), {8, 3}, [](const Index<2>& i) { return i[0] * 3 + i[1]; });
  auto doubled = a.map([](std::int64_t v) { return static_cast<double>(2 * v); });
  const auto g = doubled.gather();
  for (std::size_t k = 0; k < g.size(); ++k) EXPECT_EQ(g[k], 2.0 * static_cast<double>(k));
  EXPECT_EQ(a.histogram(0), std::vector<std::int64_t>(8, 3));
  const auto perms = a.randomize({0}, 99);
  ASSERT_EQ(perms.size(), 1u);
  const auto after = a.gather();
  for (std::int64_t i = 0; i < 8; ++i)
    for (std::int64_t j = 0; j < 3; ++j)
      EXPECT_EQ(after[static_cast<std::size_t>(perms[0][static_cast<std::size_t>(i)] * 3 + j)], i * 3 + j);
}

TEST(DistArray, FixedSizeRowElements) {
  using Row = std::array<float, 8>;
  const auto a = DistArray<Row, 1>::rand(rt(), {13}, -1.0, 1.0, Partition::range(0), 5);
  const auto b = DistArray<Row, 1>::rand(rt(), {13}, -1.0, 1.0, Partition::hash(0), 5);
  const auto ga = a.gather(), gb = b.gather();
  ASSERT_EQ(ga.size(), 13u);
  for (std::size_t k = 0; k < 13; ++k) {
    EXPECT_EQ(ga[k], gb[k]);
    for (float x : ga[k]) {
      EXPECT_GE(x, -1.0f);
      EXPECT_LT(x, 1.0f);
    }
  }
}

}  // namespace
}  // namespace strata
