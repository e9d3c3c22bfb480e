// Loops whose data-dependent subscripts change between calls (docs/loops.md, "Plans
// that stay true"): a conflict-groups plan is re-validated on every run, so every call
// equals the serial execution of its equivalent order bit for bit, however the
// accesses moved since the loop was planned, on any ranks x threads, checked or not.
// Groups too large for one thread, split over the threads: split_groups_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>
#include <thread>

#include "strata/loop/accumulator.hpp"
#include "strata/loop/parallel_for.hpp"
#include "per_rank.hpp"
#include "test_runtime.hpp"

namespace strata {
namespace {
using testing::hashed_slot;
using testing::iterations_per_rank;
using testing::rt;

bool several_threads_run_groups() { return rt().threads() > 1; }
// Runs are re-validated where several workers run groups: a rank's threads, or the
// ranks a plan spreads its groups over.
bool revalidates(const LoopReport& report) { return report.threads > 1 || report.spread; }


LoopOptions with_checks(bool checked) {
  LoopOptions o;
  o.checked = checked;
  return o;
}

// The lost-update probe: every iteration adds to a hot counter picked by the call's
// epoch, so the groups of one call are wrong for the next. Counts must be exact, and
// an order-dependent update must equal the equivalent order's serial run.
void lost_update_probe(bool checked) {
  const std::int64_t n = 20000, slots = 97;
  auto x = DistArray<double, 1>::generate(rt(), {n}, [](const Index<1>& i) { return 0.001 * double(i[0] % 7); });
  auto count = DistArray<std::int64_t, 1>::zeros(rt(), {slots});
  auto blend = DistArray<double, 1>::fill(rt(), {slots}, 1.0);
  count.set_name("count");
  std::vector<std::int64_t> count_ref(static_cast<std::size_t>(slots), 0);
  std::vector<double> blend_ref = blend.gather();
  const std::vector<double> xs = x.gather();
  std::uint64_t epoch = 0;  // a driver variable the body reads
  auto body = [&](const Index<1>& i, double v) {
    const std::int64_t h = hashed_slot(i[0], slots, epoch * 1000003);
    count[h] += 1;
    blend[h] = blend[h] * 0.75 + v;
  };
  std::uint64_t first_plan = 0;
  for (epoch = 0; epoch < 5; ++epoch) {
    const LoopReport report = parallel_for(x, body, with_checks(checked));
    if (report.strategy == analysis::Strategy::serial) {
      // Groups that changed at two calls in a row and cost more to plan again than a
      // serial run: the loop goes serial (explain says why).
      EXPECT_GE(epoch, 3u);
      EXPECT_NE(report.serial_reason.find("changed at each of the last"), std::string::npos) << report.explain();
    } else {
      ASSERT_EQ(report.strategy, analysis::Strategy::groups) << report.explain();
      EXPECT_EQ(report.revalidated, revalidates(report)) << report.explain();
      // Across ranks the groups run on every rank (spread.hpp).
      EXPECT_EQ(report.spread, rt().size() > 1) << report.explain();
    }
    if (epoch == 0) first_plan = report.plan_id;
    if (epoch > 0 && epoch < 3 && revalidates(report)) {
      // The recorded groups no longer held: the run was refused, undone and re-planned.
      EXPECT_NE(report.plan_id, first_plan);
      EXPECT_NE(report.revalidation_failure.find("no longer hold"), std::string::npos) << report.explain();
      EXPECT_NE(report.explain().find("planned again"), std::string::npos);
    }
    for (const auto& i : equivalent_order(x, report)) {
      const auto h = static_cast<std::size_t>(hashed_slot(i[0], slots, epoch * 1000003));
      ++count_ref[h];
      blend_ref[h] = blend_ref[h] * 0.75 + xs[static_cast<std::size_t>(i[0])];
    }
    ASSERT_EQ(count.gather(), count_ref) << "epoch " << epoch;
    ASSERT_EQ(blend.gather(), blend_ref) << "epoch " << epoch;
  }
  const auto counts = count.gather();
  EXPECT_EQ(std::accumulate(counts.begin(), counts.end(), std::int64_t{0}), 5 * n);  // no lost increment
}

TEST(IrregularLoops, LostUpdateProbeEqualsEquivalentOrderOnEveryCall) { lost_update_probe(false); }
TEST(IrregularLoops, LostUpdateProbeEqualsEquivalentOrderChecked) { lost_update_probe(true); }

// A negative-sampling embedding probe: each edge (u, v) pulls rows u and v together
// and pushes a negative row away. Edges stay inside communities of nodes, and the
// negative is drawn from the community the epoch pairs the edge's with, so the
// conflict groups (one or two communities) change from epoch to epoch. Whole rows
// are accessed, so conflicts are found by row.
constexpr int kDim = 16;
constexpr std::int64_t kCommunities = 64, kCommunitySize = 32;

void embed_step(float* u, float* v, float* neg) {
  float pos = 0, bad = 0;
  for (int k = 0; k < kDim; ++k) pos += u[k] * v[k], bad += u[k] * neg[k];
  const float gp = 0.05f * (1.0f - 1.0f / (1.0f + std::exp(-pos)));
  const float gn = -0.05f / (1.0f + std::exp(-bad));
  for (int k = 0; k < kDim; ++k) {
    const float uk = u[k];
    u[k] += gp * v[k] + gn * neg[k];
    v[k] += gp * uk;
    neg[k] += gn * uk;
  }
}

std::int64_t negative_of(std::int64_t u, std::int64_t v, std::uint64_t epoch) {
  const std::int64_t community = (u / kCommunitySize) ^ static_cast<std::int64_t>(epoch % 4);
  const auto pick = CounterRng(epoch + 11).below(static_cast<std::uint64_t>(u * kCommunities * kCommunitySize + v),
                                                 static_cast<std::uint64_t>(kCommunitySize));
  return community * kCommunitySize + static_cast<std::int64_t>(pick);
}

void embedding_probe(bool checked) {
  const std::int64_t nodes = kCommunities * kCommunitySize;
  std::map<Index<2>, float> edges;
  RandomStream rs(23);
  while (edges.size() < 20000) {
    // Each community's first node is a hub: hot rows, as real graphs have.
    const auto c = static_cast<std::int64_t>(rs.below(kCommunities)) * kCommunitySize;
    const auto u = c + static_cast<std::int64_t>(rs.below(4) == 0 ? 0 : rs.below(kCommunitySize));
    edges[{u, c + static_cast<std::int64_t>(rs.below(kCommunitySize))}] = 1.0f;
  }
  std::vector<Entry<float, 2>> mine;
  if (rt().rank() == 0)
    for (const auto& [k, w] : edges) mine.push_back({k, w});
  auto E = DistArray<float, 2>::sparse(rt(), {nodes, nodes}, mine);
  auto emb = DistArray<float, 2>::randn(rt(), {nodes, kDim}, 0.1, 0.0, Partition::range(0), 41);
  emb.set_name("emb");
  std::vector<float> ref = emb.gather();
  auto row = [&](std::int64_t r) { return &ref[static_cast<std::size_t>(r * kDim)]; };
  std::uint64_t epoch = 0;
  auto body = [&](const Index<2>& e, float) {
    const std::int64_t neg = negative_of(e[0], e[1], epoch);
    embed_step(emb.row(e[0]).data(), emb.row(e[1]).data(), emb.row(neg).data());
  };
  for (epoch = 0; epoch < 5; ++epoch) {
    const LoopReport report = parallel_for(E, body, with_checks(checked));
    if (report.strategy == analysis::Strategy::serial) {
      // Planning again at every call may cost more than one thread: then the loop
      // goes serial, after at least two calls whose groups changed.
      EXPECT_GE(epoch, 3u);
      EXPECT_NE(report.serial_reason.find("changed at each of the last"), std::string::npos) << report.explain();
    } else {
      ASSERT_EQ(report.strategy, analysis::Strategy::groups) << report.explain();
      EXPECT_GE(report.groups, kCommunities / 2) << report.explain();
      if (epoch > 0 && revalidates(report)) {
        EXPECT_FALSE(report.revalidation_failure.empty());
      }
      // Across ranks every rank runs a share of the groups (at least half of an even
      // share: 32 to 64 groups over as many as 12 workers do not balance finely).
      const auto per_rank = iterations_per_rank(E, report);
      for (const auto count : per_rank) EXPECT_GT(count * rt().size(), E.nnz() / 2) << report.explain();
      // Each rank fetches the rows its groups touch and returns those it wrote: measured.
      EXPECT_EQ(report.bytes_moved > 0, rt().size() > 1) << report.explain();
    }
    for (const auto& e : equivalent_order(E, report))
      embed_step(row(e[0]), row(e[1]), row(negative_of(e[0], e[1], epoch)));
    ASSERT_EQ(emb.gather(), ref) << "epoch " << epoch << "\n" << report.explain();
  }
}

TEST(IrregularLoops, EmbeddingProbeEqualsEquivalentOrderOnEveryCall) { embedding_probe(false); }
TEST(IrregularLoops, EmbeddingProbeEqualsEquivalentOrderChecked) { embedding_probe(true); }

// A body whose subscripts come from a shared generator cannot be planned by its
// reconnaissance: the run still ends right (serially), and checked mode says why.
TEST(IrregularLoops, UnreplayableSubscriptsRunSerially) {
  if (!several_threads_run_groups()) GTEST_SKIP() << "one thread runs every group: nothing is re-validated";
  const std::int64_t n = 5000, slots = 31;
  auto x = DistArray<double, 1>::fill(rt(), {n}, 1.0);
  auto hits = DistArray<std::int64_t, 1>::zeros(rt(), {slots});
  std::atomic<std::uint64_t> draws{0};
  auto body = [&](const Index<1>&, double) {
    hits[static_cast<std::int64_t>(mix64(draws.fetch_add(1, std::memory_order_relaxed)) % slots)] += 1;
  };
  LoopOptions checked = with_checks(true);
  try {
    parallel_for(x, body, checked);
    ADD_FAILURE() << "checked mode ran a loop whose accesses it cannot replay";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("differ from those its reconnaissance pass recorded"), std::string::npos)
        << e.what();
  }
  const char* env = std::getenv("STRATA_CHECKED");
  if (env && std::string(env) != "0" && *env) return;  // every loop is checked: the next call would throw too
  const auto before = hits.gather();
  const LoopReport report = parallel_for(x, body);
  EXPECT_EQ(report.strategy, analysis::Strategy::serial) << report.explain();
  EXPECT_FALSE(report.serial_reason.empty());
  const auto after = hits.gather();
  EXPECT_EQ(std::accumulate(after.begin(), after.end(), std::int64_t{0}) -
                std::accumulate(before.begin(), before.end(), std::int64_t{0}),
            n);  // the refused runs were undone: exactly one increment per iteration
}

// Subscripts read from another array, which the driver changes between calls: the
// groups are found with that array whole on every rank, the run equals its
// equivalent order, and across ranks every rank runs a share.
TEST(IrregularLoops, SubscriptsFromAnotherArraySpreadOverRanks) {
  const std::int64_t n = 6000, slots = 300;
  auto x = DistArray<double, 1>::generate(rt(), {n},
                                          [](const Index<1>& i) { return 0.25 + 0.001 * double(i[0] % 11); });
  auto target = DistArray<std::int64_t, 1>::generate(rt(), {n},
                                                     [&](const Index<1>& i) { return hashed_slot(i[0], slots, 3); });
  auto acc = DistArray<double, 1>::fill(rt(), {slots}, 1.0);
  std::vector<double> ref = acc.gather();
  auto body = [&](const Index<1>& i, double v) {
    const std::int64_t t = target[i[0]];
    acc[t] = acc[t] * 0.5 + v;
  };
  for (int call = 0; call < 4; ++call) {
    if (call == 2)  // the driver moves every iteration's target
      parallel_for(target, [&](const Index<1>& i, std::int64_t& t) { t = hashed_slot(i[0], slots, 99); });
    const LoopReport report = parallel_for(x, body);
    ASSERT_EQ(report.strategy, analysis::Strategy::groups) << report.explain();
    EXPECT_EQ(report.spread, rt().size() > 1) << report.explain();
    const auto targets = target.gather();
    const auto xs = x.gather();
    for (const auto& i : equivalent_order(x, report)) {
      auto& a = ref[static_cast<std::size_t>(targets[static_cast<std::size_t>(i[0])])];
      a = a * 0.5 + xs[static_cast<std::size_t>(i[0])];
    }
    ASSERT_EQ(acc.gather(), ref) << "call " << call << "\n" << report.explain();
    for (const auto count : iterations_per_rank(x, report)) EXPECT_GT(count * rt().size(), 7 * n / 10);
  }
}

// A spread plan runs on its own copy of the iterations: when the driver changes the
// space's elements between calls, the copy follows them.
TEST(IrregularLoops, SpreadPlanSeesTheSpacesNewElements) {
  const std::int64_t n = 3000, slots = 150;
  auto x = DistArray<double, 1>::fill(rt(), {n}, 0.25);
  auto acc = DistArray<double, 1>::zeros(rt(), {slots});
  auto body = [&](const Index<1>& i, double v) { acc[hashed_slot(i[0], slots, 5)] += v * double(1 + i[0] % 4); };
  std::vector<double> ref(static_cast<std::size_t>(slots), 0.0);
  for (int call = 0; call < 3; ++call) {
    if (call == 2) parallel_for(x, [](const Index<1>& i, double& v) { v = 0.5 + 0.01 * double(i[0] % 7); });
    const LoopReport report = parallel_for(x, body);
    EXPECT_EQ(report.spread, rt().size() > 1) << report.explain();
    const auto xs = x.gather();
    for (const auto& i : equivalent_order(x, report))
      ref[static_cast<std::size_t>(hashed_slot(i[0], slots, 5))] +=
          xs[static_cast<std::size_t>(i[0])] * double(1 + i[0] % 4);
    ASSERT_EQ(acc.gather(), ref) << "call " << call;
  }
}

// Subscripts from a driver variable that differs between ranks: each iteration is
// recorded by the rank holding it, and a rank that hosts an iteration of another
// touches other slots than that rank recorded. Its run is refused before it reads one
// it does not hold, the plan made again is refused alike, and the loop goes serial on
// rank 0, whose run is the result.
TEST(IrregularLoops, SubscriptsThatDifferBetweenRanksEndSerialOnRankZero) {
  const std::int64_t n = 4000, slots = 200;
  auto x = DistArray<double, 1>::fill(rt(), {n}, 0.5);
  auto acc = DistArray<double, 1>::fill(rt(), {slots}, 1.0);
  const std::uint64_t salt = 17 + static_cast<std::uint64_t>(rt().rank());
  auto body = [&](const Index<1>& i, double v) {
    const std::int64_t t = hashed_slot(i[0], slots, salt);
    acc[t] = acc[t] * 0.5 + v * double(i[0] % 3);
  };
  LoopReport report;
  try {
    report = parallel_for(x, body);
  } catch (const Error& e) {  // checked mode says so instead of going serial, the run undone
    ASSERT_NE(std::getenv("STRATA_CHECKED"), nullptr) << e.what();
    ASSERT_GT(rt().size(), 1) << e.what();
    EXPECT_EQ(acc.gather(), std::vector<double>(static_cast<std::size_t>(slots), 1.0));
    return;
  }
  if (rt().size() == 1) {
    ASSERT_EQ(report.strategy, analysis::Strategy::groups) << report.explain();
  } else {
    ASSERT_EQ(report.strategy, analysis::Strategy::serial) << report.explain();
    EXPECT_TRUE(report.gathered) << report.explain();
    EXPECT_NE(report.serial_reason.find("lies outside what this rank holds"), std::string::npos)
        << report.explain();
  }
  std::vector<double> ref(static_cast<std::size_t>(slots), 1.0);
  for (const auto& i : equivalent_order(x, report)) {  // rank 0's subscripts
    auto& a = ref[static_cast<std::size_t>(hashed_slot(i[0], slots, 17))];
    a = a * 0.5 + 0.5 * double(i[0] % 3);
  }
  EXPECT_EQ(acc.gather(), ref);
}

// Groups plans visit iterations in a seeded shuffled order by default, key order
// on request; either way the run equals its equivalent order.
TEST(IrregularLoops, GroupsOrderIsShuffledUnlessKeyOrderIsAsked) {
  const std::int64_t n = 3000, slots = 50;
  auto x = DistArray<double, 1>::fill(rt(), {n}, 0.5);
  auto acc = DistArray<double, 1>::zeros(rt(), {slots});
  auto body = [&](const Index<1>& i, double v) { acc[hashed_slot(i[0], slots, 7)] += v * double(i[0] % 5); };
  auto descents = [&](const LoopReport& report) {
    const auto order = equivalent_order(x, report);
    std::int64_t d = 0;
    for (std::size_t k = 1; k < order.size(); ++k) d += order[k][0] < order[k - 1][0];
    return d;
  };
  const LoopReport shuffled = parallel_for(x, body);
  ASSERT_EQ(shuffled.strategy, analysis::Strategy::groups);
  EXPECT_GT(descents(shuffled), n / 4) << "not shuffled";
  EXPECT_NE(shuffled.explain().find("seeded shuffled order"), std::string::npos);
  if (rt().size() > 1) {
    // The groups are placed on every rank's workers.
    EXPECT_FALSE(shuffled.gathered);
    EXPECT_TRUE(shuffled.spread);
    EXPECT_LT(shuffled.imbalance, 1.2) << shuffled.explain();
    EXPECT_NE(shuffled.explain().find("spread: the conflict groups are placed on all"), std::string::npos);
  }
  LoopOptions keyed;
  keyed.key_order = true;
  const LoopReport in_keys = parallel_for(x, body, keyed);
  ASSERT_EQ(in_keys.strategy, analysis::Strategy::groups);
  EXPECT_LT(descents(in_keys), in_keys.workers) << "each worker's share runs in key order";
}

}  // namespace
}  // namespace strata
