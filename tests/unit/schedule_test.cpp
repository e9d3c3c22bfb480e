// Block schedules of 2-D plans: every worker runs every block once per round, a
// block's uses follow its users list, and the indexes agree with the lists.
#include <gtest/gtest.h>

#include <set>

#include "loop/schedule.hpp"

namespace strata::loop {
namespace {

void expect_consistent(const BlockSchedule& s) {
  for (int w = 0; w < s.workers; ++w) {
    const auto& order = s.order[static_cast<std::size_t>(w)];
    ASSERT_EQ(order.size(), static_cast<std::size_t>(s.blocks * s.rounds));
    std::vector<int> runs(static_cast<std::size_t>(s.blocks), 0);
    for (int step = 0; step < static_cast<int>(order.size()); ++step) {
      const int b = order[static_cast<std::size_t>(step)];
      // The round-th run of b by w is at this step, and its use is w's round-th
      // appearance among b's users.
      const int round = runs[static_cast<std::size_t>(b)]++;
      EXPECT_EQ(s.step_of(w, b, round), step);
      EXPECT_EQ(s.round_of(step), round);
      const int u = s.use_at(w, step);
      EXPECT_EQ(s.users[static_cast<std::size_t>(b)][static_cast<std::size_t>(u)], w);
      int before = 0;
      for (int v = 0; v < u; ++v) before += s.users[static_cast<std::size_t>(b)][static_cast<std::size_t>(v)] == w;
      EXPECT_EQ(before, round);
    }
    for (int n : runs) EXPECT_EQ(n, s.rounds);
  }
}

TEST(BlockSchedule, RotationWithOneRoundVisitsEveryBlockOnce) {
  const auto s = BlockSchedule::rotation(3, 2);
  EXPECT_EQ(s.blocks, 6);
  EXPECT_EQ(s.rounds, 1);
  expect_consistent(s);
  // Worker w starts at block 2(w+1), so at every step the workers hold distinct blocks.
  for (int step = 0; step < s.blocks; ++step) {
    std::set<int> held;
    for (int w = 0; w < 3; ++w) held.insert(s.order[static_cast<std::size_t>(w)][static_cast<std::size_t>(step)]);
    EXPECT_EQ(held.size(), 3U);
  }
}

TEST(BlockSchedule, RotationInRoundsGoesRoundAgainInTheSameOrder) {
  const auto s = BlockSchedule::rotation(2, 3, 4);
  EXPECT_EQ(s.blocks, 6);
  EXPECT_EQ(s.rounds, 4);
  expect_consistent(s);
  const auto one = BlockSchedule::rotation(2, 3);
  for (int w = 0; w < 2; ++w)
    for (int step = 0; step < s.blocks * s.rounds; ++step)
      EXPECT_EQ(s.order[static_cast<std::size_t>(w)][static_cast<std::size_t>(step)],
                one.order[static_cast<std::size_t>(w)][static_cast<std::size_t>(step % s.blocks)]);
  for (int b = 0; b < s.blocks; ++b) {
    const auto& users = s.users[static_cast<std::size_t>(b)];
    ASSERT_EQ(users.size(), 8U);
    for (std::size_t u = 0; u < users.size(); ++u) EXPECT_EQ(users[u], one.users[static_cast<std::size_t>(b)][u % 2]);
  }
}

// A block ends every pass on its home, worker b / k (its last user), and its first
// user is the home's neighbour w - 1, which starts with it: travelling rows start and
// end a pass where they lie between passes, and reach the first user in one hop.
TEST(BlockSchedule, RotationEndsEveryBlockAtItsHome) {
  for (const int rounds : {1, 3}) {
    const auto s = BlockSchedule::rotation(4, 3, rounds);
    EXPECT_EQ(s.home_ranks(2), (std::vector<int>{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}));
    for (int b = 0; b < s.blocks; ++b) {
      const auto& users = s.users[static_cast<std::size_t>(b)];
      EXPECT_EQ(users.back(), b / 3);
      EXPECT_EQ(users.front(), (b / 3 + 3) % 4);
      EXPECT_EQ(s.step_of(users.front(), b), b % 3) << "the first user starts with the blocks of its neighbour";
    }
  }
}

TEST(BlockSchedule, WavefrontHasOneRound) {
  const auto s = BlockSchedule::wavefront(4, 8);
  EXPECT_EQ(s.rounds, 1);
  expect_consistent(s);
}

}  // namespace
}  // namespace strata::loop
