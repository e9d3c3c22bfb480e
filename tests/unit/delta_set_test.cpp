// DeltaSet: the per-element sums of several threads' delta sets, taken by walking
// the bitmaps through their summary (dense sets, however few elements they hold) or
// from hash maps (large arrays), whole or in parts on several threads; what a
// managed outbox takes out of a set one element at a time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "strata/detail/delta_set.hpp"
#include "strata/random.hpp"

namespace strata::ps {
namespace {

struct Case {
  const char* name;
  std::int64_t volume;
  int adds;  // per set
};

// Three sets with adds at random elements of [0, volume), and the sums drain must
// give: per element, the sets' own sums added in set order, starting from zero.
struct Filled {
  std::vector<DeltaSet<float>> sets;
  std::map<std::int64_t, float> expected;
  std::vector<std::size_t> held;  // per set: the elements it holds
};

Filled fill(const Case& c, std::uint64_t seed) {
  Filled f;
  std::vector<std::map<std::int64_t, float>> own(3);
  RandomStream rng(seed, 0);
  for (int s = 0; s < 3; ++s) {
    f.sets.emplace_back(c.volume);
    for (int a = 0; a < c.adds; ++a) {
      // A skewed choice, so elements repeat within and across sets.
      const auto u = static_cast<std::int64_t>(rng.uniform() * rng.uniform() * static_cast<double>(c.volume));
      const float d = static_cast<float>(rng.uniform()) - 0.3f;
      f.sets.back().add(u, d);
      own[static_cast<std::size_t>(s)][u] += d;
    }
  }
  for (const auto& o : own) f.held.push_back(o.size());
  std::map<std::int64_t, bool> seen;
  for (const auto& o : own)
    for (const auto& [k, d] : o) seen[k] = true;
  for (const auto& [k, unused] : seen) {
    float sum{};
    for (const auto& o : own)
      if (auto it = o.find(k); it != o.end()) sum += it->second;
    f.expected[k] = sum;
  }
  return f;
}

std::vector<DeltaSet<float>*> pointers(std::vector<DeltaSet<float>>& sets) {
  std::vector<DeltaSet<float>*> p;
  for (auto& s : sets) p.push_back(&s);
  return p;
}

const Case kCases[] = {
    {"dense, many elements", 4096, 3000},
    {"dense, few elements of a large array", 1 << 20, 200},
    {"dense, a volume not a multiple of 64", 5000, 2000},
    {"hashed", DeltaSet<float>::kDenseBytes, 500},
};

TEST(DeltaSet, DrainSumsTheSetsInOrderAndEmptiesThem) {
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.name);
    Filled f = fill(c, 7);
    const auto sets = pointers(f.sets);
    for (std::size_t s = 0; s < 3; ++s) EXPECT_EQ(f.sets[s].size(), f.held[s]);
    std::map<std::int64_t, float> got;
    std::vector<std::int64_t> order;
    DeltaSet<float>::drain(sets, [&](std::int64_t k, float d) {
      EXPECT_FALSE(got.count(k)) << "element " << k << " drained twice";
      got[k] = d;
      order.push_back(k);
    });
    EXPECT_EQ(got, f.expected);  // exact: the same additions in the same order
    if (f.sets[0].dense()) {
      EXPECT_TRUE(std::is_sorted(order.begin(), order.end()));
    }
    for (const auto& s : f.sets) EXPECT_TRUE(s.empty());
    // Drained sets start again from zero.
    f.sets[1].add(5, 2.5f);
    f.sets[2].add(5, 1.0f);
    got.clear();
    DeltaSet<float>::drain(sets, [&](std::int64_t k, float d) { got[k] = d; });
    EXPECT_EQ(got, (std::map<std::int64_t, float>{{5, 3.5f}}));
  }
}

TEST(DeltaSet, DrainInPartsGivesWhatOneDrainGives) {
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.name);
    for (const int parts : {1, 2, 3, 7}) {
      Filled f = fill(c, 11);
      const auto sets = pointers(f.sets);
      std::map<std::int64_t, float> got;
      for (int p = 0; p < parts; ++p)
        DeltaSet<float>::drain_part(sets, p, parts, [&](std::int64_t k, float d) {
          EXPECT_FALSE(got.count(k)) << "element " << k << " drained twice (part " << p << ")";
          got[k] = d;
        });
      EXPECT_EQ(got, f.expected) << parts << " parts";
      for (const auto& s : f.sets) EXPECT_TRUE(s.empty());
    }
  }
}

// A managed outbox takes chosen elements out of its set; what is left walks, drains
// and clears as if those had never been added, and an emptied set is empty.
TEST(DeltaSet, ExtractTakesElementsOutOfTheWalk) {
  for (const std::int64_t volume : {std::int64_t{200}, std::int64_t{1} << 20, DeltaSet<float>::kDenseBytes}) {
    SCOPED_TRACE(volume);
    DeltaSet<float> s(volume);
    EXPECT_TRUE(s.empty());
    // Two elements alone in their bitmap word, two sharing one, one far away.
    for (const std::int64_t k : {3, 70, 71, 130, 199}) s.add(k, static_cast<float>(k));
    EXPECT_EQ(s.size(), 5u);
    EXPECT_EQ(s.extract({70, 3}), (std::vector<float>{70.0f, 3.0f}));
    EXPECT_EQ(s.size(), 3u);
    EXPECT_EQ(s.sorted(), (std::vector<std::pair<std::int64_t, float>>{{71, 71.0f}, {130, 130.0f}, {199, 199.0f}}));
    s.add(3, 1.0f);  // taken out, then added again: starts from zero
    EXPECT_EQ(s.sorted().front(), (std::pair<std::int64_t, float>{3, 1.0f}));
    EXPECT_EQ(s.extract({71, 130, 199, 3}).size(), 4u);
    EXPECT_TRUE(s.empty());
    EXPECT_EQ(s.size(), 0u);
    s.add(199, 2.0f);
    s.clear();
    EXPECT_TRUE(s.empty());
    s.add(199, 0.5f);  // cleared slots start from zero
    EXPECT_EQ(s.sorted(), (std::vector<std::pair<std::int64_t, float>>{{199, 0.5f}}));
  }
}

// Buffers copy their per-thread sets (undo saves them, a replay resizes them) and
// the hot path adds through pointers the set holds: a copy must add to its own
// slots, and a set copied, assigned or moved from must keep adding to its own.
TEST(DeltaSet, CopiesAssignmentsAndMovesAddToTheirOwnSlots) {
  const auto held = [](const DeltaSet<float>& s) {
    std::map<std::int64_t, float> m;
    for (const auto& [k, d] : s.sorted()) m[k] = d;
    return m;
  };
  DeltaSet<float> a(1000);
  a.add(3, 1.0f);
  DeltaSet<float> b(a);  // copy
  b.add(3, 2.0f);
  b.add(7, 1.0f);
  EXPECT_EQ(held(a), (std::map<std::int64_t, float>{{3, 1.0f}}));
  EXPECT_EQ(held(b), (std::map<std::int64_t, float>{{3, 3.0f}, {7, 1.0f}}));

  DeltaSet<float> c(1000);
  c = a;  // assignment
  c.add(3, 4.0f);
  a.add(9, 1.0f);
  EXPECT_EQ(held(c), (std::map<std::int64_t, float>{{3, 5.0f}}));
  EXPECT_EQ(held(a), (std::map<std::int64_t, float>{{3, 1.0f}, {9, 1.0f}}));

  DeltaSet<float> d(std::move(b));  // move: d holds b's slots, b starts over
  d.add(7, 1.0f);
  EXPECT_EQ(held(d), (std::map<std::int64_t, float>{{3, 3.0f}, {7, 2.0f}}));

  const DeltaSet<float> fresh(1000);
  DeltaSet<float> empty_copy(fresh);  // copied before its first add
  empty_copy.add(5, 1.0f);
  EXPECT_TRUE(fresh.empty());
  EXPECT_EQ(held(empty_copy), (std::map<std::int64_t, float>{{5, 1.0f}}));
}

}  // namespace
}  // namespace strata::ps
