#include <gtest/gtest.h>

#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

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

// Receives posted before their messages are sent (Comm::irecv) each take the message
// of their own tag, whatever order they were posted and waited for in; a receive no
// message will reach is cancelled, and later receives go on from there.
TEST(PointToPoint, EarlyReceivesTakeTheMessagesOfTheirTags) {
  if (rt().size() == 1) GTEST_SKIP() << "needs another rank";
  Comm& comm = rt().comm();
  const int next = (comm.rank() + 1) % comm.size(), prev = (comm.rank() + comm.size() - 1) % comm.size();
  constexpr int kTags = 3;
  std::vector<std::vector<std::int32_t>> got(kTags, std::vector<std::int32_t>(1000, -1)), sent(kTags);
  std::uint64_t ids[kTags];
  for (int tag = kTags - 1; tag >= 0; --tag)  // posted in the reverse of the order sent
    ids[tag] = comm.irecv(std::as_writable_bytes(std::span(got[tag])), prev, tag);
  std::vector<std::int32_t> never(4);
  comm.irecv(std::as_writable_bytes(std::span(never)), prev, 99);
  comm.barrier();
  for (int tag = 0; tag < kTags; ++tag) {
    sent[tag].assign(1000, 0);
    std::iota(sent[tag].begin(), sent[tag].end(), comm.rank() * 10'000 + tag * 1000);
    comm.isend(std::as_bytes(std::span(sent[tag])), next, tag);
  }
  for (const int tag : {1, 0, 2}) {
    comm.wait_recv(ids[tag], "an early receive");
    std::vector<std::int32_t> want(1000);
    std::iota(want.begin(), want.end(), prev * 10'000 + tag * 1000);
    EXPECT_EQ(got[tag], want) << "tag " << tag;
  }
  comm.wait_sends();
  comm.cancel_recvs();  // tag 99's
  std::vector<std::int32_t> again(2, -1), mine{comm.rank(), 7};
  const std::uint64_t id = comm.irecv(std::as_writable_bytes(std::span(again)), prev, 5);
  comm.isend(std::as_bytes(std::span(mine)), next, 5);
  comm.wait_recv(id, "a receive after a cancelled one");
  comm.wait_sends();
  EXPECT_EQ(again, (std::vector<std::int32_t>{prev, 7}));
  comm.barrier();
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
  // An exception that is not a strata::Error: the failing rank gets its own back, the
  // others an Error naming it (before, they waited in the next collective).
  try {
    detail::all_or_none(c, [&] {
      if (c.rank() == last) throw std::runtime_error("a body's own exception");
    });
    ADD_FAILURE() << "no error raised";
  } catch (const Error& e) {
    EXPECT_NE(c.rank(), last);
    EXPECT_EQ(std::string(e.what()), "rank " + std::to_string(last) + ": a body's own exception");
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(c.rank(), last);
    EXPECT_STREQ(e.what(), "a body's own exception");
  }
  try {
    detail::all_or_none(c, [&] {
      if (c.rank() == last) throw 42;
    });
    ADD_FAILURE() << "no error raised";
  } catch (const Error& e) {
    EXPECT_NE(c.rank(), last);
    EXPECT_NE(std::string(e.what()).find("not a std::exception"), std::string::npos) << e.what();
  } catch (int) {
    EXPECT_EQ(c.rank(), last);
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
