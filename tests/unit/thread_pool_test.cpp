#include <gtest/gtest.h>

#include <atomic>
#include <numeric>
#include <set>
#include <stdexcept>

#include "strata/thread_pool.hpp"

namespace strata {
namespace {

TEST(ThreadPool, RunCallsEveryThreadOnce) {
  ThreadPool pool(4);
  std::vector<std::atomic<int>> hits(4);
  for (int round = 0; round < 50; ++round) pool.run([&](int id) { hits[static_cast<std::size_t>(id)]++; });
  for (auto& h : hits) EXPECT_EQ(h.load(), 50);
}

TEST(ThreadPool, RunChunksCoversEveryIndexOnce) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> seen(10007);
  pool.run_chunks(10007, 100, [&](std::int64_t b, std::int64_t e, int tid) {
    EXPECT_GE(tid, 0);
    EXPECT_LT(tid, 3);
    for (auto i = b; i < e; ++i) seen[static_cast<std::size_t>(i)]++;
  });
  for (auto& s : seen) ASSERT_EQ(s.load(), 1);
}

TEST(ThreadPool, RunRangesIsDeterministic) {
  ThreadPool pool(2);
  std::vector<int> owner(11, -1);
  pool.run_ranges(11, [&](std::int64_t b, std::int64_t e, int tid) {
    for (auto i = b; i < e; ++i) owner[static_cast<std::size_t>(i)] = tid;
  });
  EXPECT_EQ(owner, (std::vector<int>{0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}));
}

TEST(ThreadPool, ExceptionFromWorkerReachesCaller) {
  ThreadPool pool(2);
  EXPECT_THROW(pool.run([](int id) {
    if (id == 1) throw std::runtime_error("boom");
  }),
               std::runtime_error);
  // The pool still works afterwards.
  std::atomic<int> n{0};
  pool.run([&](int) { n++; });
  EXPECT_EQ(n.load(), 2);
}

TEST(ThreadPool, SizeOneRunsInline) {
  ThreadPool pool(1);
  const auto me = std::this_thread::get_id();
  pool.run([&](int id) {
    EXPECT_EQ(id, 0);
    EXPECT_EQ(std::this_thread::get_id(), me);
  });
}

}  // namespace
}  // namespace strata
