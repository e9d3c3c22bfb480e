#include <gtest/gtest.h>

#include <numeric>

#include "strata/error.hpp"
#include "strata/partition.hpp"

namespace strata {
namespace {

std::int64_t owner1(const Distribution& d, std::int64_t i) { return d.owner(&i); }

TEST(IndexSet, RangeAndListLookups) {
  const auto r = IndexSet::range(10, 20);
  EXPECT_EQ(r.size(), 10);
  EXPECT_EQ(r.local(15), 5);
  EXPECT_EQ(r.local(20), -1);
  EXPECT_EQ(r.global(3), 13);
  const auto l = IndexSet::list({1, 4, 9, 16});
  EXPECT_EQ(l.local(9), 2);
  EXPECT_EQ(l.local(5), -1);
  EXPECT_EQ(l.global(3), 16);
  EXPECT_EQ(r.intersect(l), (std::vector<std::int64_t>{16}));
  EXPECT_EQ(l.positions_of(std::vector<std::int64_t>{4, 16}), (std::vector<std::int64_t>{1, 3}));
}

TEST(Distribution, EvenRangesCoverEveryIndexOnce) {
  const Distribution d(Partition::range(0), {10, 3}, 3);
  EXPECT_EQ(d.bounds(), (std::vector<std::int64_t>{0, 3, 6, 10}));
  for (std::int64_t i = 0; i < 10; ++i) {
    const int r = static_cast<int>(owner1(d, i));
    EXPECT_TRUE(d.box(r)[0].contains(i));
  }
}

TEST(Distribution, EmptyRangesAreSkipped) {
  const Distribution d(Partition::range(0, {0, 0, 5, 5, 8}), {8}, 4);
  EXPECT_EQ(owner1(d, 0), 1);
  EXPECT_EQ(owner1(d, 4), 1);
  EXPECT_EQ(owner1(d, 5), 3);
  EXPECT_EQ(owner1(d, 7), 3);
}

TEST(Distribution, BadBoundsAreRejected) {
  EXPECT_THROW(Distribution(Partition::range(0, {0, 5, 4}), {4}, 2), ShapeError);
  EXPECT_THROW(Distribution(Partition::range(0, {0, 5}), {5}, 2), ShapeError);
  EXPECT_THROW(Distribution(Partition::range(2), {5, 5}, 2), ShapeError);
  EXPECT_THROW(Partition::block2d(1, 1), ShapeError);
}

TEST(Distribution, Block2DGridIsSquarest) {
  const Distribution d(Partition::block2d(0, 1), {8, 6}, 4);
  EXPECT_EQ(d.grid_rows(), 2);
  EXPECT_EQ(d.grid_cols(), 2);
  const std::int64_t idx[2] = {5, 1};
  EXPECT_EQ(d.owner(idx), 2);
  const auto b = d.box(3);
  EXPECT_EQ(b[0].begin(), 4);
  EXPECT_EQ(b[1].begin(), 3);
}

TEST(Distribution, HashBoxesPartitionTheDimension) {
  const Distribution d(Partition::hash(0), {1000}, 3);
  std::int64_t total = 0;
  for (int r = 0; r < 3; ++r) {
    const auto b = d.box(r);
    total += b[0].size();
    EXPECT_GT(b[0].size(), 250);  // roughly even
    for (std::int64_t k = 0; k < b[0].size(); ++k) EXPECT_EQ(owner1(d, b[0].global(k)), r);
  }
  EXPECT_EQ(total, 1000);
}

TEST(BalancedBounds, SplitsSkewedWeightsEvenly) {
  std::vector<std::int64_t> w(100, 1);
  w[0] = 100;  // one heavy index
  const auto b = balanced_bounds(w, 2);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b.front(), 0);
  EXPECT_EQ(b.back(), 100);
  const auto left = std::accumulate(w.begin(), w.begin() + b[1], std::int64_t{0});
  EXPECT_NEAR(static_cast<double>(left), 100.0, 2.0);
  const Distribution d(Partition::balanced(0, w), {100}, 2);
  EXPECT_EQ(d.bounds(), b);
}

}  // namespace
}  // namespace strata
