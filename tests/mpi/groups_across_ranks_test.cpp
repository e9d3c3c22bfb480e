// Conflict groups the ranks find together, each recording only the accesses of its own
// iterations (src/loop/groups_across_ranks.hpp), are the groups one place finds over
// every iteration's accesses (analysis::conflict_groups).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "analysis/conflict_groups.hpp"
#include "loop/groups_across_ranks.hpp"
#include "strata/random.hpp"
#include "test_runtime.hpp"

namespace strata {
namespace {
using analysis::ElementAccess;
using testing::rt;

// Every iteration's accesses, the same on every rank: `touches` elements each, drawn
// from `elements`, writing with probability `writes`; element 0 is read by every
// iteration (a hot row that joins nothing unless `hot_written`, when the last iteration
// writes it).
std::vector<ElementAccess> all_accesses(std::int64_t n, std::uint64_t elements, int touches, double writes,
                                        bool hot_written, std::uint64_t seed) {
  const CounterRng rng(seed);
  std::vector<ElementAccess> all;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto c = static_cast<std::uint64_t>(i) * 16;
    all.push_back({i, 0, hot_written && i == n - 1});
    for (int k = 0; k < touches; ++k)
      all.push_back({i, 1 + rng.below(c + 2 * static_cast<std::uint64_t>(k), elements),
                     rng.uniform(c + 2 * static_cast<std::uint64_t>(k) + 1) < writes});
  }
  return all;
}

struct Case {
  std::string name;
  std::int64_t n;
  std::uint64_t elements;
  int touches;
  double writes;
  bool hot_written;
};

TEST(GroupsAcrossRanks, EqualTheGroupsOfEveryAccessInOnePlace) {
  const int P = rt().size(), me = rt().rank();
  const std::vector<Case> cases = {
      {"many small groups", 3000, 4000, 2, 0.5, false},
      {"groups that span every rank", 3000, 400, 3, 0.3, false},
      {"reads only", 2000, 50, 3, 0.0, false},
      {"a hot element written once", 2000, 5000, 1, 0.5, true},
      {"no iterations on some ranks", 3, 10, 2, 1.0, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const auto all = all_accesses(c.n, c.elements, c.touches, c.writes, c.hot_written, 7);
    const analysis::Groups whole = analysis::conflict_groups(c.n, all);
    // Iteration i is held by rank i % P, as its (i / P)-th: every group crosses ranks.
    std::vector<ElementAccess> mine;
    for (const auto& a : all)
      if (a.iteration % P == me) mine.push_back({a.iteration / P, a.element, a.write});
    const std::int64_t held = c.n / P + (me < c.n % P ? 1 : 0);
    const auto across = loop::detail::conflict_groups_across_ranks(rt().comm(), held, mine);
    ASSERT_EQ(across.group_of.size(), static_cast<std::size_t>(held));
    ASSERT_EQ(across.group_size.size(), static_cast<std::size_t>(whole.count));
    // The same partition: a bijection between the numberings, with the same sizes.
    std::map<std::int32_t, std::int32_t> to_whole, to_across;
    for (std::int64_t k = 0; k < held; ++k) {
      const std::int32_t w = whole.group_of[static_cast<std::size_t>(k * P + me)];
      const std::int32_t a = across.group_of[static_cast<std::size_t>(k)];
      ASSERT_EQ(to_whole.emplace(a, w).first->second, w) << "iteration " << k * P + me;
      ASSERT_EQ(to_across.emplace(w, a).first->second, a) << "iteration " << k * P + me;
      EXPECT_EQ(across.group_size[static_cast<std::size_t>(a)], whole.group_size[static_cast<std::size_t>(w)]);
    }
    // The bijection holds across ranks too: rank 0 checks every rank's pairs.
    std::vector<std::int64_t> pairs;
    for (const auto& [a, w] : to_whole) pairs.push_back(std::int64_t{a} << 32 | w);
    const auto every = rt().comm().allgather_vector(std::move(pairs));
    std::map<std::int64_t, std::int64_t> a_to_w, w_to_a;
    for (const auto p : every) {
      EXPECT_EQ(a_to_w.emplace(p >> 32, p & 0xffffffff).first->second, p & 0xffffffff);
      EXPECT_EQ(w_to_a.emplace(p & 0xffffffff, p >> 32).first->second, p >> 32);
    }
    // One rank numbers the groups as conflict_groups does.
    if (P == 1) {
      EXPECT_EQ(across.group_of, whole.group_of);
    }
  }
}

// The cases the tests above rest on, checked in one place: a read-only hot element
// joins nothing, and written once it joins every iteration.
TEST(GroupsAcrossRanks, AHotElementJoinsOnlyWhenWritten) {
  const std::int64_t n = 1000;
  for (const bool written : {false, true}) {
    const auto all = all_accesses(n, 1u << 20, 1, 0.0, written, 3);
    std::vector<ElementAccess> mine;
    for (const auto& a : all)
      if (a.iteration % rt().size() == rt().rank()) mine.push_back({a.iteration / rt().size(), a.element, a.write});
    const std::int64_t held = n / rt().size() + (rt().rank() < n % rt().size() ? 1 : 0);
    const auto across = loop::detail::conflict_groups_across_ranks(rt().comm(), held, mine);
    EXPECT_EQ(across.group_size.size(), written ? 1u : static_cast<std::size_t>(n)) << "written " << written;
  }
}

}  // namespace
}  // namespace strata
