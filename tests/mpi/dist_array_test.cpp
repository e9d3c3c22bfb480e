#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <map>
#include <numeric>

#include "strata/detail/free_now.hpp"
#include "strata/detail/histogram.hpp"
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

TEST(DistArray, AnAccessOutsideTheArrayNamesTheArrayAndTheSourceLine) {
  auto w = DistArray<float, 2>::zeros(rt(), {10, 4});
  w.set_name("W");
  try {
    w.at({10, 0});
    FAIL() << "no error";
  } catch (const ShapeError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("dist_array_test.cpp:" + std::to_string(__LINE__ - 4)), std::string::npos) << what;
    EXPECT_NE(what.find("W: index (10, 0) is outside shape (10, 4)"), std::string::npos) << what;
  }
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

namespace strata {
namespace {
using testing::rt;

TEST(DistArray, SparseRepartitionAndRandomizeKeepEveryEntry) {
  std::vector<Entry<float, 2>> mine;
  const CounterRng rng(77);
  // Skewed: column 0 holds a third of the entries.
  for (std::int64_t k = rt().rank(); k < 3000; k += rt().size())
    mine.push_back({{k / 3, k % 3 == 0 ? 0 : 1 + k % 96}, static_cast<float>(rng.uniform(static_cast<std::uint64_t>(k)))});
  auto s = DistArray<float, 2>::sparse(rt(), {1000, 97}, mine);
  const auto before = s.gather_entries();
  for (const auto& p : {Partition::hash(1), Partition::block2d(0, 1), Partition::range(1), Partition::range(0)}) {
    s.repartition(p);
    EXPECT_EQ(s.nnz(), 3000);
    for (const auto& k : s.local_keys()) ASSERT_TRUE(s.is_local(k)) << p.describe();
    const auto now = s.gather_entries();
    ASSERT_EQ(now.size(), before.size());
    for (std::size_t k = 0; k < now.size(); ++k) {
      ASSERT_EQ(now[k].index, before[k].index);
      ASSERT_EQ(now[k].value, before[k].value);
    }
  }
  const auto perms = s.randomize({0, 1}, 5);
  ASSERT_EQ(perms.size(), 2u);
  std::map<Index<2>, float> moved;
  for (const auto& e : s.gather_entries()) moved[e.index] = e.value;
  ASSERT_EQ(moved.size(), before.size());
  for (const auto& e : before) {
    const Index<2> to{perms[0][static_cast<std::size_t>(e.index[0])], perms[1][static_cast<std::size_t>(e.index[1])]};
    ASSERT_EQ(moved.at(to), e.value);
  }
  // The skewed column is no longer column 0 (with overwhelming probability).
  const auto h = s.histogram(1);
  EXPECT_EQ(h[static_cast<std::size_t>(perms[1][0])], 1000);
  const auto binned = s.histogram(0, 10);
  ASSERT_EQ(binned.size(), 10u);
  EXPECT_EQ(std::accumulate(binned.begin(), binned.end(), std::int64_t{0}), 3000);
}

// The planner counts the keys of large spaces on the runtime's threads, each into a
// histogram of its own: the sums equal one thread's count for both key widths, per
// index and binned.
TEST(DistArray, HistogramsCountedByThreadsEqualOneThreadsCount) {
  const std::int64_t n = (std::int64_t{1} << 20) + 37;  // above the threaded threshold
  const std::vector<std::int64_t> shape{5000, 300};
  std::vector<std::int32_t> narrow;
  std::vector<std::int64_t> wide;
  RandomStream rs(41);
  for (std::int64_t k = 0; k < n; ++k) {
    const auto i = static_cast<std::int64_t>(rs.below(5000)), j = static_cast<std::int64_t>(rs.below(300));
    narrow.push_back(static_cast<std::int32_t>(i)), narrow.push_back(static_cast<std::int32_t>(j));
    wide.push_back(i), wide.push_back(j);
  }
  const detail::KeyColumn keys4{reinterpret_cast<const std::byte*>(narrow.data()), n, 2, 4};
  const detail::KeyColumn keys8{reinterpret_cast<const std::byte*>(wide.data()), n, 2, 8};
  for (const auto& keys : {keys4, keys8})
    for (int dim = 0; dim < 2; ++dim)
      for (const std::int64_t bins : {std::int64_t{0}, std::int64_t{7}}) {
        const auto one = detail::histogram_of_keys(rt().comm(), keys, shape, dim, bins);
        const auto threaded = detail::histogram_of_keys(rt().comm(), keys, shape, dim, bins, &rt().pool());
        EXPECT_EQ(threaded, one) << "width " << keys.width << ", dimension " << dim << ", bins " << bins;
        EXPECT_EQ(std::accumulate(one.begin(), one.end(), std::int64_t{0}), n * rt().size());
      }
}

// Sparse keys are stored with 4-byte subscripts where every extent fits in 32 bits and
// 8-byte ones otherwise, and the loaders sort 32-bit row-major positions where the
// volume fits: every combination keeps every index exactly, the largest ones too.
TEST(DistArray, SparseKeysOfEveryWidthKeepTheirIndices) {
  constexpr std::int64_t kBig = std::int64_t{3} << 31;  // past int32
  const std::vector<Shape<2>> shapes{
      {1000, 97},                                  // 32-bit subscripts, 32-bit positions
      {100'000, 100'000},                          // 32-bit subscripts, 64-bit positions
      {std::int64_t{1} << 31, 3},                  // the widest extent 32-bit subscripts hold
      {kBig, 5},                                   // 64-bit subscripts
      {std::int64_t{1} << 40, std::int64_t{1} << 40}};  // positions past 2^63: sorted by subscripts
  for (const auto& shape : shapes) {
    const std::string label = fmt::format("shape ({}, {})", shape[0], shape[1]);
    std::map<Index<2>, int> want;
    std::vector<Entry<int, 2>> mine;
    const CounterRng rng(31);
    for (std::int64_t k = 0; k < 400; ++k) {
      Index<2> i{static_cast<std::int64_t>(rng.bits(static_cast<std::uint64_t>(k)) % static_cast<std::uint64_t>(shape[0])),
                 static_cast<std::int64_t>(rng.bits(static_cast<std::uint64_t>(k) + 1000) %
                                           static_cast<std::uint64_t>(shape[1]))};
      if (k % 50 == 0) i = {shape[0] - 1, shape[1] - 1};  // the last index, repeated (summed)
      want[i] += static_cast<int>(k);
      if (k % rt().size() == rt().rank()) mine.push_back({i, static_cast<int>(k)});
    }
    auto s = DistArray<int, 2>::sparse(rt(), shape, mine, Duplicates::sum);
    EXPECT_EQ(s.nnz(), static_cast<std::int64_t>(want.size())) << label;
    const auto& keys = s.local_keys();
    EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end())) << label;
    for (const auto& k : keys) {
      ASSERT_TRUE(s.is_local(k)) << label;
      ASSERT_NE(s.find(k), nullptr) << label;
      EXPECT_EQ(*s.find(k), want.at(k)) << label;
    }
    const auto all = s.gather_entries();
    ASSERT_EQ(all.size(), want.size()) << label;
    auto it = want.begin();
    for (const auto& e : all) {
      ASSERT_EQ(e.index, it->first) << label;
      ASSERT_EQ(e.value, it->second) << label;
      ++it;
    }
    // An index one past a stored one is not found.
    const Index<2> last{shape[0] - 1, shape[1] - 1};
    if (s.is_local(last)) {
      EXPECT_EQ(*s.find(last), want.at(last)) << label;
      EXPECT_EQ(s.find({shape[0] - 1, shape[1] - 2}) != nullptr, want.count({shape[0] - 1, shape[1] - 2}) > 0) << label;
    }
    const auto h = s.histogram(1, 4);
    EXPECT_EQ(std::accumulate(h.begin(), h.end(), std::int64_t{0}), s.nnz()) << label;
  }
}

// Routing in rounds (a rank's records sent a slice at a time, so it never holds them,
// their send buffers and what arrives all at once): whatever the round size, and with
// ranks that need different numbers of rounds, every rank receives its records grouped
// by source rank in rank order, each source's in its own order.
TEST(DistArray, RoutingInRoundsKeepsEverySourcesOrder) {
  using E = Entry<std::int32_t, 2>;
  const Shape<2> shape{100, 7};
  const Distribution dist(Partition::range(0), {shape[0], shape[1]}, rt().size());
  const detail::RecordLayout layout{2, sizeof(E), offsetof(E, value), sizeof(std::int32_t)};
  std::vector<E> mine;
  const std::int64_t count = 1000 + 137 * rt().rank();  // ranks need different numbers of rounds
  for (std::int64_t k = 0; k < count; ++k)
    mine.push_back({{(k * 37 + rt().rank()) % shape[0], k % shape[1]}, static_cast<std::int32_t>(rt().rank() * 100000 + k)});
  auto route = [&](std::size_t round_bytes) {
    std::vector<E> records = mine;  // routing hands the records' pages back
    std::vector<E> out;
    detail::route_records(
        rt().comm(), dist, layout, std::as_bytes(std::span<const E>(records)), [&] { detail::free_now(records); },
        [&](std::size_t n) { out.reserve(n); },
        [&](std::span<const std::byte> piece) {
          const auto* first = reinterpret_cast<const E*>(piece.data());
          out.insert(out.end(), first, first + piece.size() / sizeof(E));
        },
        round_bytes);
    return out;
  };
  const std::vector<E> whole = route(std::size_t{1} << 30);
  std::int64_t expected = 0;
  for (std::int64_t r = 0; r < rt().size(); ++r)
    for (std::int64_t k = 0; k < 1000 + 137 * r; ++k)
      expected += dist.owner(Index<2>{(k * 37 + r) % shape[0], k % shape[1]}.data()) == rt().rank();
  ASSERT_EQ(static_cast<std::int64_t>(whole.size()), expected);
  for (std::size_t k = 1; k < whole.size(); ++k) ASSERT_LT(whole[k - 1].value, whole[k].value) << "position " << k;
  for (const auto& e : whole) ASSERT_EQ(dist.owner(e.index.data()), rt().rank());
  for (const std::size_t round_bytes : {sizeof(E), 7 * sizeof(E), 1000 * sizeof(E)}) {
    const std::vector<E> rounds = route(round_bytes);
    ASSERT_EQ(rounds.size(), whole.size()) << round_bytes << " bytes a round";
    for (std::size_t k = 0; k < whole.size(); ++k) {
      ASSERT_EQ(rounds[k].index, whole[k].index) << round_bytes << " bytes a round, position " << k;
      ASSERT_EQ(rounds[k].value, whole[k].value) << round_bytes << " bytes a round, position " << k;
    }
  }
}

TEST(DistArray, FourDimensionalDenseAndBalancedRanges) {
  auto a = DistArray<std::int32_t, 4>::generate(
      rt(), {3, 4, 5, 2}, [](const Index<4>& i) { return static_cast<std::int32_t>(linearize(i, Shape<4>{3, 4, 5, 2})); },
      Partition::range(2));
  const auto g = a.gather();
  for (std::size_t k = 0; k < g.size(); ++k) ASSERT_EQ(g[k], static_cast<std::int32_t>(k));
  a.repartition(Partition::balanced(1, {10, 1, 1, 1}));
  EXPECT_EQ(a.gather(), g);
  if (rt().size() == 2) {
    EXPECT_EQ(a.distribution().bounds(), (std::vector<std::int64_t>{0, 1, 4}));
  }
  auto plus = a.map([](const Index<4>& i, std::int32_t v) { return v + static_cast<std::int32_t>(i[3]); });
  EXPECT_EQ(plus.partition(), a.partition());
  const auto gp = plus.gather();
  for (std::size_t k = 0; k < gp.size(); ++k) ASSERT_EQ(gp[k], static_cast<std::int32_t>(k + k % 2));
}

struct Particle {
  double x, y;
  std::int32_t id;
};

TEST(DistArray, StructElementsMoveIntact) {
  auto a = DistArray<Particle, 1>::generate(rt(), {50}, [](const Index<1>& i) {
    return Particle{static_cast<double>(i[0]) * 0.5, -static_cast<double>(i[0]), static_cast<std::int32_t>(i[0])};
  });
  a.repartition(Partition::hash(0));
  a.for_each_local([](const Index<1>& i, const Particle& p) {
    EXPECT_EQ(p.id, i[0]);
    EXPECT_EQ(p.x, static_cast<double>(i[0]) * 0.5);
  });
  EXPECT_EQ(a.gather().at(49).y, -49.0);
}

// 20 bytes: no fixed-size sort path takes it, so sparse arrays of it take the stable
// sort of subscripts; += makes Duplicates::sum available.
struct Moments {
  float sum = 0, sum_sq = 0, min = 0, max = 0;
  std::int32_t count = 0;
  Moments& operator+=(const Moments& o) {
    sum += o.sum;
    sum_sq += o.sum_sq;
    count += o.count;
    return *this;
  }
};
static_assert(sizeof(Moments) == 20);

// Three bytes, no +=.
struct Rgb {
  std::uint8_t r, g, b;
};

TEST(DistArray, SparseOddSizedElementsMergeLikeNumbers) {
  const int ranks = rt().size();
  const auto me = static_cast<float>(rt().rank() + 1);
  // Every rank sends (2, 1, 0) once and its own (rank, 0, 1); (2, 1, 0) gathers one value per rank.
  std::vector<Entry<Moments, 3>> mine{{{2, 1, 0}, {me, me * me, me, me, 1}},
                                      {{rt().rank(), 0, 1}, {me, 0, 0, 0, 1}}};
  auto sum = DistArray<Moments, 3>::sparse(rt(), {4, 2, 2}, mine, Duplicates::sum);
  const auto all = sum.gather_entries();
  const auto merged = std::find_if(all.begin(), all.end(), [](const auto& e) { return e.index == Index<3>{2, 1, 0}; });
  ASSERT_NE(merged, all.end());
  EXPECT_EQ(merged->value.count, ranks);
  EXPECT_EQ(merged->value.sum, static_cast<float>(ranks * (ranks + 1) / 2));
  EXPECT_EQ(sum.nnz(), static_cast<std::int64_t>(1 + ranks));
  for (std::size_t k = 1; k < all.size(); ++k) EXPECT_LT(all[k - 1].index, all[k].index);

  auto last = DistArray<Moments, 3>::sparse(rt(), {4, 2, 2}, mine, Duplicates::last);
  auto first = DistArray<Moments, 3>::sparse(rt(), {4, 2, 2}, mine, Duplicates::first);
  const auto value_at = [](const DistArray<Moments, 3>& a) {
    for (const auto& e : a.gather_entries())
      if (e.index == Index<3>{2, 1, 0}) return e.value.sum;
    return -1.0f;
  };
  EXPECT_EQ(value_at(last), static_cast<float>(ranks));
  EXPECT_EQ(value_at(first), 1.0f);
  if (ranks > 1) {
    EXPECT_THROW((DistArray<Moments, 3>::sparse(rt(), {4, 2, 2}, mine)), ShapeError);
  }

  // A repeated index of an element type without += cannot be summed: an error, not garbage.
  std::vector<Entry<Rgb, 2>> colours{{{1, 1}, {1, 2, 3}}, {{1, 1}, {4, 5, 6}}};
  EXPECT_THROW((DistArray<Rgb, 2>::sparse(rt(), {2, 4}, colours, Duplicates::sum)), ShapeError);
  const auto kept = DistArray<Rgb, 2>::sparse(rt(), {2, 4}, colours, Duplicates::last).gather_entries();
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].value.r, 4);
}

TEST(DistArray, DenseOddSizedElementsSurviveEveryMove) {
  auto a = DistArray<Rgb, 2>::generate(rt(), {13, 7}, [](const Index<2>& i) {
    return Rgb{static_cast<std::uint8_t>(i[0]), static_cast<std::uint8_t>(i[1]), static_cast<std::uint8_t>(i[0] ^ i[1])};
  });
  const auto check = [](const std::vector<Rgb>& whole) {
    ASSERT_EQ(whole.size(), 13u * 7u);
    for (std::size_t k = 0; k < whole.size(); ++k) {
      EXPECT_EQ(whole[k].r, k / 7);
      EXPECT_EQ(whole[k].g, k % 7);
      EXPECT_EQ(whole[k].b, (k / 7) ^ (k % 7));
    }
  };
  check(a.gather());
  for (const Partition& p : {Partition::hash(1), Partition::block2d(0, 1), Partition::range(1), Partition::range(0)}) {
    a.repartition(p);
    check(a.gather());
  }
}

}  // namespace
}  // namespace strata
