// Arrays that travel with a 2-D plan's time blocks across ranks: a rank starts with the
// rows of the blocks its workers use first, holds only the blocks in use while the
// loop runs (a block's pages go back to the system once it has been sent on), and
// ends with its own rows again. The results still equal the plan's equivalent order.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "loop/inspect.hpp"  // the plan's block schedule (not API)
#include "strata/loop/parallel_for.hpp"
#include "resident_set.hpp"
#include "test_runtime.hpp"

namespace strata {
namespace {
using testing::rt;
using testing::status_kib;

// An SGD step over rows of `width` floats, shared by the Strata body and the serial twin.
void sgd_step(float* w, float* h, std::int64_t width, float r) {
  float e = r;
  for (std::int64_t k = 0; k < width; ++k) e -= w[k] * h[k];
  for (std::int64_t k = 0; k < width; ++k) {
    const float wk = w[k];
    w[k] += 0.01f * (e * h[k] - 0.01f * wk);
    h[k] += 0.01f * (e * wk - 0.01f * h[k]);
  }
}

// `per_user` ratings a user at items drawn from a fixed stream; each rank builds the
// users i with i % ranks == its rank.
DistArray<float, 2> ratings(std::int64_t users, std::int64_t items, int per_user, std::map<Index<2>, float>* all) {
  std::vector<Entry<float, 2>> mine;
  for (std::int64_t i = 0; i < users; ++i) {
    RandomStream rs(static_cast<std::uint64_t>(1000 + i));
    std::map<std::int64_t, float> row;
    while (static_cast<int>(row.size()) < per_user)
      row[static_cast<std::int64_t>(rs.below(static_cast<std::uint64_t>(items)))] =
          1.0f + static_cast<float>(rs.below(9)) * 0.5f;
    for (const auto& [j, v] : row) {
      if (all) (*all)[{i, j}] = v;
      if (i % rt().size() == rt().rank()) mine.push_back({{i, j}, v});
    }
  }
  return DistArray<float, 2>::sparse(rt(), {users, items}, mine);
}

// Blocks of several pages each go round the ranks three times a pass, so a block often
// comes back to a rank, and is sent on again, before that rank has seen its earlier
// send complete: the release of its pages must follow the latest send only.
TEST(Travelling, BlocksOfSeveralPagesKeepEveryUpdate) {
  constexpr std::int64_t kUsers = 3000, kItems = 1500, kWidth = 64;
  std::map<Index<2>, float> all;
  auto R = ratings(kUsers, kItems, 8, &all).set_name("R");
  auto W = DistArray<float, 2>::randn(rt(), {kUsers, kWidth}, 0.1, 0.0, Partition::range(0), 31).set_name("W");
  auto H = DistArray<float, 2>::randn(rt(), {kItems, kWidth}, 0.1, 0.0, Partition::range(0), 32).set_name("H");
  std::vector<float> w_ref = W.gather(), h_ref = H.gather();
  LoopOptions options;
  options.rounds = 3;
  options.release_travelling_above = 0;  // the blocks' pages go back, whatever their size
  auto body = [&](const Index<2>& ij, float& r) { sgd_step(W.row(ij[0]).data(), H.row(ij[1]).data(), kWidth, r); };
  for (int pass = 0; pass < 3; ++pass) {
    const LoopReport report = parallel_for(R, body, options);
    ASSERT_EQ(report.strategy, analysis::Strategy::two_d) << report.explain();
    for (const auto& ij : equivalent_order(R, report))
      sgd_step(&w_ref[static_cast<std::size_t>(ij[0] * kWidth)], &h_ref[static_cast<std::size_t>(ij[1] * kWidth)],
               kWidth, all.at(ij));
    ASSERT_EQ(W.gather(), w_ref) << "pass " << pass;
    ASSERT_EQ(H.gather(), h_ref) << "pass " << pass;
  }
  options.release_travelling_above = -2;
  EXPECT_THROW(parallel_for(R, body, options), OptionError);
}

// Not the apps' shapes: the travelling array holds rows of structs, starts in a block
// partition (the layout moves it to its blocks' homes), and items are skewed (blocks of
// very different sizes); releases forced. Still the equivalent order.
struct Quad {
  float v[4];
};

// sgd_step over a user row of 16 floats and an item row of 4 Quads.
void quad_step(float* w, Quad* h, float r) {
  float e = r;
  for (int k = 0; k < 16; ++k) e -= w[k] * h[k / 4].v[k % 4];
  for (int k = 0; k < 16; ++k) {
    const float wk = w[k];
    float& hk = h[k / 4].v[k % 4];
    w[k] += 0.01f * (e * hk - 0.01f * wk);
    hk += 0.01f * (e * wk - 0.01f * hk);
  }
}

TEST(Travelling, StructRowsFromABlockPartitionWithSkewedBlocks) {
  constexpr std::int64_t kUsers = 6000, kItems = 3000, kQuads = 4;  // H rows: 4 Quads = 16 floats
  std::map<Index<2>, float> all;
  std::vector<Entry<float, 2>> mine;
  for (std::int64_t i = 0; i < kUsers; ++i) {
    RandomStream rs(static_cast<std::uint64_t>(77 + i));
    std::map<std::int64_t, float> row;
    for (std::int64_t n = 0; n < 1 + i % 7; ++n) {
      const double u = static_cast<double>(rs.below(1 << 20)) / (1 << 20);
      row[static_cast<std::int64_t>(u * u * u * kItems)] = 0.5f + static_cast<float>(rs.below(10)) * 0.5f;
    }
    for (const auto& [j, v] : row) {
      all[{i, j}] = v;
      if (i % rt().size() == rt().rank()) mine.push_back({{i, j}, v});
    }
  }
  auto R = DistArray<float, 2>::sparse(rt(), {kUsers, kItems}, mine).set_name("R");
  auto W = DistArray<float, 2>::randn(rt(), {kUsers, 4 * kQuads}, 0.1, 0.0, Partition::range(0), 51).set_name("W");
  auto H = DistArray<Quad, 2>::generate(
               rt(), {kItems, kQuads},
               [](const Index<2>& jq) {
                 Quad q{};
                 for (int k = 0; k < 4; ++k) q.v[k] = 0.01f * static_cast<float>((jq[0] * 7 + jq[1] * 3 + k) % 13);
                 return q;
               },
               Partition::block2d(0, 1, rt().size()))  // a grid of ranks x 1 (row() needs whole rows)
               .set_name("H");
  std::vector<float> w_ref = W.gather();
  std::vector<Quad> h_ref = H.gather();
  LoopOptions options;
  options.rounds = 2;
  options.shuffle_seed = 9;
  options.release_travelling_above = 0;
  auto body = [&](const Index<2>& ij, float& r) {
    quad_step(W.row(ij[0]).data(), H.row(ij[1]).data(), r);
  };
  for (int pass = 0; pass < 3; ++pass) {
    const LoopReport report = parallel_for(R, body, options);
    ASSERT_EQ(report.strategy, analysis::Strategy::two_d) << report.explain();
    if (rt().size() > 1) {
      ASSERT_NE(report.explain().find("array H: travels with the time blocks"), std::string::npos) << report.explain();
    }
    for (const auto& ij : equivalent_order(R, report))
      quad_step(&w_ref[static_cast<std::size_t>(ij[0] * 4 * kQuads)], &h_ref[static_cast<std::size_t>(ij[1] * kQuads)],
                all.at(ij));
    ASSERT_EQ(W.gather(), w_ref) << "pass " << pass;
    const std::vector<Quad> h = H.gather();
    ASSERT_EQ(std::memcmp(h.data(), h_ref.data(), h.size() * sizeof(Quad)), 0) << "pass " << pass;
  }
}

// The journey itself, through the engine's face of an array: from a part that is
// exactly the rank's home blocks (no communication, the storage's window widened and
// narrowed again, twice) and from any other partition (the blocks scattered and put
// back); a rank writes the rows of its home blocks, and the array ends in the
// partition it started in with every block's writes.
TEST(Travelling, AJourneyKeepsTheHomeBlocksWritesFromAnyPartition) {
  const int ranks = rt().size();
  const std::vector<std::int64_t> rows{0, 5, 11, 20, 20, 31, 37, 44, 50};  // an empty block too
  const auto blocks = rows.size() - 1;
  std::vector<int> contiguous, dealt;  // homes: in rank order / dealt round the ranks
  for (std::size_t b = 0; b < blocks; ++b) {
    contiguous.push_back(static_cast<int>(b * static_cast<std::size_t>(ranks) / blocks));
    dealt.push_back(static_cast<int>(b % static_cast<std::size_t>(ranks)));
  }
  std::vector<std::int64_t> bounds{0};
  for (int r = 1; r <= ranks; ++r) {
    std::size_t b = 0;
    while (b < blocks && contiguous[b] < r) ++b;
    bounds.push_back(rows[b]);
  }
  auto value = [](const Index<2>& i) { return static_cast<double>(i[0] * 10 + i[1]); };
  for (const auto& [partition, home] : {std::pair(Partition::range(0, bounds), contiguous),
                                       std::pair(Partition::hash(0), dealt), std::pair(Partition::range(1), dealt)}) {
    auto a = DistArray<double, 2>::generate(rt(), {50, 3}, value, partition);
    detail::ArrayBase& engine = a;
    for (int journey = 1; journey <= 2; ++journey) {
      engine.travel_begin(rows, home);
      auto whole = a.local_values();
      ASSERT_EQ(whole.size(), 150u) << "the storage addresses the whole array";
      for (std::size_t b = 0; b < blocks; ++b) {
        if (home[b] != rt().rank()) continue;
        for (auto k = static_cast<std::size_t>(rows[b] * 3); k < static_cast<std::size_t>(rows[b + 1] * 3); ++k) {
          ASSERT_EQ(whole[k], static_cast<double>(k / 3 * 10 + k % 3) + journey - 1) << partition.describe();
          whole[k] += 1;
        }
      }
      engine.travel_end(rows, home);
      EXPECT_EQ(a.partition(), partition);
      const std::vector<double> back = a.gather();
      for (std::size_t k = 0; k < back.size(); ++k)
        ASSERT_EQ(back[k], static_cast<double>(k / 3 * 10 + k % 3) + journey) << partition.describe() << " " << k;
    }
  }
}

// The peak resident set of a rank during a loop call, less its resident set before,
// plus the travelling array's own part (resident before): an upper bound on how much
// of the travelling array the rank held at once. Anything else the call allocated
// counts against it too.
TEST(Travelling, ARankHoldsOnlyTheBlocksInUse) {
  if (rt().size() == 1) GTEST_SKIP() << "nothing travels on one rank";
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer keeps freed blocks resident (its quarantine) and adds shadow
  // pages, so the resident set says nothing of what the schedule holds.
  GTEST_SKIP() << "resident-set bounds are not measurable under AddressSanitizer";
#endif
  constexpr std::int64_t kUsers = 16384, kItems = 32768, kWidth = 256;  // W 16 MiB travels, H 32 MiB stays
  auto R = ratings(kUsers, kItems, 4, nullptr).set_name("R");
  auto W = DistArray<float, 2>::randn(rt(), {kUsers, kWidth}, 0.1, 0.0, Partition::range(0), 41).set_name("W");
  auto H = DistArray<float, 2>::randn(rt(), {kItems, kWidth}, 0.1, 0.0, Partition::range(0), 42).set_name("H");
  auto body = [&](const Index<2>& ij, float& r) { sgd_step(W.row(ij[0]).data(), H.row(ij[1]).data(), kWidth, r); };
  LoopOptions options;
  options.release_travelling_above = 0;  // W is small next to the machine's memory
  auto call = [&] { return parallel_for(R, body, options); };  // one loop site, one plan
  const LoopReport first = call();  // plans, and lays W out by its first blocks
  ASSERT_NE(first.explain().find("array W: travels with the time blocks"), std::string::npos) << first.explain();
  call();  // the first calls also allocate what later calls reuse
  const double w_bytes = static_cast<double>(kUsers * kWidth) * sizeof(float);
  const double part = static_cast<double>(W.local_values().size()) * sizeof(float);
  const std::int64_t before = status_kib("VmRSS");
  testing::reset_peak();
  call();
  const double held = static_cast<double>(status_kib("VmHWM") - before) * 1024.0 + part;
  // A rank's workers start with their k blocks each, and a block a worker has sent on
  // waits for the next worker, k steps behind: about k + 1 blocks a worker, a share
  // (1 + 1/k) / ranks of W; 10 % of W more for pages, messages and the call's own
  // allocations. Gathering W whole, as 2-D plans did, holds all of it.
  const auto& schedule = loop::detail::plan_of(first).schedule;
  const double k = static_cast<double>(schedule.blocks) / schedule.workers;
  const double bound = w_bytes * ((1.0 + 1.0 / k) / rt().size() + 0.10);
  std::printf("[rank %d] W %.1f MiB, this rank's part %.1f MiB, held at most %.1f MiB during a call (bound %.1f MiB)\n",
              rt().rank(), w_bytes / (1 << 20), part / (1 << 20), held / (1 << 20), bound / (1 << 20));
  EXPECT_LE(held, bound);
}

}  // namespace
}  // namespace strata
