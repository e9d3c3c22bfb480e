#include <gtest/gtest.h>

#include <numeric>

#include "strata/detail/collective_error.hpp"
#include "strata/detail/pack.hpp"
#include "test_runtime.hpp"

namespace strata {
namespace {
using testing::rt;

TEST(Collectives, AllreduceSumMinMax) {
  Comm& c = rt().comm();
  const int P = c.size(), r = c.rank();
  EXPECT_EQ(c.allreduce<std::int64_t>(r + 1, ReduceOp::sum), P * (P + 1) / 2);
  EXPECT_EQ(c.allreduce<double>(r * 1.5, ReduceOp::max), (P - 1) * 1.5);
  EXPECT_EQ(c.allreduce<std::int32_t>(r - 3, ReduceOp::min), -3);
  std::vector<float> v(1000, 1.0f);
  c.allreduce(std::span(v), ReduceOp::sum);
  for (float x : v) ASSERT_EQ(x, static_cast<float>(P));
}

TEST(Collectives, BroadcastVector) {
  Comm& c = rt().comm();
  for (int root = 0; root < c.size(); ++root) {
    std::vector<std::int64_t> v;
    if (c.rank() == root) v = {root, 10, 20, 30};
    c.broadcast_vector(v, root);
    EXPECT_EQ(v, (std::vector<std::int64_t>{root, 10, 20, 30}));
  }
}

TEST(Collectives, AlltoallvDeliversEachBufferToItsRank) {
  Comm& c = rt().comm();
  const int P = c.size(), me = c.rank();
  std::vector<Bytes> send(static_cast<std::size_t>(P));
  for (int r = 0; r < P; ++r)
    for (int k = 0; k < me * 10 + r; ++k) detail::append<std::int32_t>(send[static_cast<std::size_t>(r)], me * 1000 + r);
  const auto recv = c.alltoallv(send);
  ASSERT_EQ(recv.size(), static_cast<std::size_t>(P));
  for (int s = 0; s < P; ++s) {
    const auto v = detail::as_vector<std::int32_t>(recv[static_cast<std::size_t>(s)]);
    EXPECT_EQ(v.size(), static_cast<std::size_t>(s * 10 + me));
    for (auto x : v) EXPECT_EQ(x, s * 1000 + me);
  }
}

TEST(Collectives, AllgathervInRankOrder) {
  Comm& c = rt().comm();
  std::vector<std::int64_t> mine(static_cast<std::size_t>(c.rank()) + 1, c.rank());
  const auto all = c.allgatherv(std::as_bytes(std::span(mine)));
  for (int r = 0; r < c.size(); ++r) {
    const auto v = detail::as_vector<std::int64_t>(all[static_cast<std::size_t>(r)]);
    EXPECT_EQ(v, std::vector<std::int64_t>(static_cast<std::size_t>(r) + 1, r));
  }
}

TEST(Collectives, ExclusiveScan) {
  Comm& c = rt().comm();
  std::int64_t total = 0;
  const auto before = c.exclusive_scan(c.rank() + 1, &total);
  EXPECT_EQ(before, c.rank() * (c.rank() + 1) / 2);
  EXPECT_EQ(total, c.size() * (c.size() + 1) / 2);
}

TEST(Collectives, ErrorOnOneRankIsRaisedOnEveryRank) {
  Comm& c = rt().comm();
  const int last = c.size() - 1;
  try {
    detail::all_or_none(c, [&] {
      if (c.rank() == last) throw ShapeError("bad shape on the last rank");
    });
    ADD_FAILURE() << "no error raised";
  } catch (const ShapeError& e) {
    EXPECT_STREQ(e.what(), "bad shape on the last rank");
  }
  try {
    detail::all_or_none(c, [&] {
      if (c.rank() == last) throw ParseError("f.txt", 7, "x y", "bad number");
    });
    ADD_FAILURE() << "no error raised";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.file(), "f.txt");
    EXPECT_EQ(e.line(), 7);
    EXPECT_EQ(e.text(), "x y");
  }
  // And the collectives still work afterwards.
  EXPECT_EQ(c.allreduce<std::int64_t>(1, ReduceOp::sum), c.size());
}

TEST(Runtime, ThreadsAndSeedsAreConsistentAcrossRanks) {
  EXPECT_GE(rt().threads(), 1);
  const std::uint64_t s = rt().next_seed();
  EXPECT_EQ(rt().comm().allreduce<std::uint64_t>(s, ReduceOp::max), s);
  EXPECT_EQ(rt().comm().allreduce<std::uint64_t>(s, ReduceOp::min), s);
}

}  // namespace
}  // namespace strata
