// Conflict groups too large for one thread (docs/loops.md, "Split groups"): a group
// above 1.1x a thread's share is split over the threads under per-unit locks, and each
// call equals the serial run of its logged grant order (equivalent_order) bit for bit,
// on any ranks x threads, checked or not. The rest of the irregular-loop probes are in
// irregular_loops_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "strata/loop/parallel_for.hpp"
#include "test_runtime.hpp"

namespace strata {
namespace {
using testing::hashed_slot;
using testing::rt;

bool several_threads_run_groups() { return rt().threads() > 1; }

LoopOptions with_checks(bool checked) {
  LoopOptions o;
  o.checked = checked;
  return o;
}
// A TransE-shaped probe (docs/loops.md, "Split groups"): each triple (h, r, t) moves
// its relation's row of a 26-row table, its head and tail rows and the row of a
// negative drawn from the epoch. Every triple writes a relation row, so all triples
// form one conflict group; with several threads it is split over them under locks,
// and the negatives that move from call to call are locked as they come. Each call
// equals the serial run of its equivalent order (the grant order) bit for bit.
constexpr int kRelDim = 8;
constexpr std::int64_t kEntities = 2000, kRelations = 26;

void transe_step(float* h, float* r, float* t, float* neg) {
  float pos = 0, bad = 0;
  for (int k = 0; k < kRelDim; ++k) {
    const float d = h[k] + r[k] - t[k], dn = neg[k] + r[k] - t[k];
    pos += d * d, bad += dn * dn;
  }
  if (pos + 0.5f <= bad) return;  // the margin holds: no update
  for (int k = 0; k < kRelDim; ++k) {
    const float g = 0.02f * (h[k] + r[k] - t[k]), gn = 0.02f * (neg[k] + r[k] - t[k]);
    h[k] -= g, t[k] += g, r[k] -= g - gn, neg[k] += gn;
  }
}

struct Triples {
  std::vector<std::int64_t> head, rel, tail;
};

Triples make_triples(std::int64_t n) {
  Triples tr;
  RandomStream rs(29);
  for (std::int64_t i = 0; i < n; ++i) {
    // Every entity is a head once; relations are skewed (a few hot rows), as WordNet's.
    tr.head.push_back(i < kEntities ? i : static_cast<std::int64_t>(rs.below(kEntities)));
    tr.tail.push_back(static_cast<std::int64_t>(rs.below(kEntities)));
    tr.rel.push_back(std::min<std::int64_t>(kRelations - 1, static_cast<std::int64_t>(rs.below(4) + rs.below(4) * rs.below(8))));
  }
  return tr;
}

std::int64_t corrupted(std::int64_t i, std::uint64_t epoch) {
  return static_cast<std::int64_t>(CounterRng(epoch + 5).below(static_cast<std::uint64_t>(i), kEntities));
}

void transe_probe(bool checked) {
  const std::int64_t n = 6000;
  const Triples tr = make_triples(n);
  auto space = DistArray<float, 1>::zeros(rt(), {n});
  auto E = DistArray<float, 2>::randn(rt(), {kEntities, kRelDim}, 0.3, 0.0, Partition::range(0), 43);
  auto R = DistArray<float, 2>::randn(rt(), {kRelations, kRelDim}, 0.3, 0.0, Partition::range(0), 47);
  E.set_name("E");
  R.set_name("R");
  std::vector<float> e_ref = E.gather(), r_ref = R.gather();
  auto e_row = [&](std::int64_t k) { return &e_ref[static_cast<std::size_t>(k * kRelDim)]; };
  auto r_row = [&](std::int64_t k) { return &r_ref[static_cast<std::size_t>(k * kRelDim)]; };
  std::uint64_t epoch = 0;
  std::vector<std::thread::id> ran_on(static_cast<std::size_t>(n));
  auto body = [&](const Index<1>& i, float) {
    const auto k = static_cast<std::size_t>(i[0]);
    ran_on[k] = std::this_thread::get_id();
    transe_step(E.row(tr.head[k]).data(), R.row(tr.rel[k]).data(), E.row(tr.tail[k]).data(),
                E.row(corrupted(i[0], epoch)).data());
  };
  int planned_again = 0;
  std::uint64_t last_plan = 0;
  for (epoch = 0; epoch < 5; ++epoch) {
    const LoopReport report = parallel_for(space, body, with_checks(checked));
    ASSERT_EQ(report.strategy, analysis::Strategy::groups) << report.explain();
    EXPECT_EQ(report.groups, 1) << report.explain();
    if (several_threads_run_groups()) {
      // Split over the threads; negatives that moved are locked as they come, so the
      // plan holds from call to call (a refusal needs a cycle of waits inside bodies).
      EXPECT_EQ(report.split_groups, 1) << report.explain();
      EXPECT_EQ(report.split_iterations, n);
      EXPECT_LT(report.imbalance * (report.gathered ? 1.0 / report.ranks : 1.0), 1.01) << report.explain();
      EXPECT_NE(report.explain().find("split: 1 group(s)"), std::string::npos) << report.explain();
      if (epoch > 0 && report.plan_id != last_plan) ++planned_again;
      if (rt().size() == 1) {
        // The triples of a relation run on one thread, as far as the threads' shares
        // allow: each thread filled up moves the rest of one relation to another.
        std::set<std::pair<std::int64_t, std::thread::id>> placed;
        const std::set<std::int64_t> relations(tr.rel.begin(), tr.rel.end());
        for (std::size_t k = 0; k < static_cast<std::size_t>(n); ++k) placed.insert({tr.rel[k], ran_on[k]});
        EXPECT_LE(placed.size(), relations.size() + static_cast<std::size_t>(rt().threads()) - 1);
      }
    } else {
      EXPECT_EQ(report.split_groups, 0) << report.explain();
    }
    last_plan = report.plan_id;
    for (const auto& i : equivalent_order(space, report)) {
      const auto k = static_cast<std::size_t>(i[0]);
      transe_step(e_row(tr.head[k]), r_row(tr.rel[k]), e_row(tr.tail[k]), e_row(corrupted(i[0], epoch)));
    }
    ASSERT_EQ(E.gather(), e_ref) << "epoch " << epoch << "\n" << report.explain();
    ASSERT_EQ(R.gather(), r_ref) << "epoch " << epoch;
  }
  EXPECT_LE(planned_again, 1);
}

TEST(IrregularLoops, SplitGroupEqualsItsGrantOrderOnEveryCall) { transe_probe(false); }
TEST(IrregularLoops, SplitGroupEqualsItsGrantOrderChecked) { transe_probe(true); }

// Only a group above 1.1x a thread's share is split; the others run whole, placed
// around it so the threads' loads even out. Here iterations below `hot` (a fraction
// of them) all add to one hot slot; the rest each write a slot of their own.
void hot_share_probe(double hot_fraction) {
  const bool split_expected = several_threads_run_groups() && hot_fraction * rt().threads() > 1.1;
  const std::int64_t n = 8000, hot = static_cast<std::int64_t>(hot_fraction * n);
  auto x = DistArray<double, 1>::generate(rt(), {n}, [](const Index<1>& i) { return 0.01 * double(i[0] % 13); });
  auto slot = DistArray<double, 1>::zeros(rt(), {n});
  std::vector<double> ref(static_cast<std::size_t>(n), 0.0);
  const std::vector<double> xs = x.gather();
  auto body = [&](const Index<1>& i, double v) {
    const std::int64_t s = i[0] < hot ? 0 : i[0];
    slot[s] = slot[s] * 0.5 + v;
  };
  const LoopReport report = parallel_for(x, body);
  ASSERT_EQ(report.strategy, analysis::Strategy::groups) << report.explain();
  EXPECT_EQ(report.groups, n - hot + 1);
  if (split_expected) {
    EXPECT_EQ(report.split_groups, 1) << report.explain();
    EXPECT_EQ(report.split_iterations, hot);
    EXPECT_LT(report.imbalance * (report.gathered ? 1.0 / report.ranks : 1.0), 1.01) << report.explain();
  } else {
    EXPECT_EQ(report.split_groups, 0) << report.explain();
  }
  for (const auto& i : equivalent_order(x, report)) {
    const auto s = static_cast<std::size_t>(i[0] < hot ? 0 : i[0]);
    ref[s] = ref[s] * 0.5 + xs[static_cast<std::size_t>(i[0])];
  }
  EXPECT_EQ(slot.gather(), ref);
}

TEST(IrregularLoops, AGroupAboveItsShareIsSplitAndTheRestPlacedAroundIt) { hot_share_probe(0.7); }
TEST(IrregularLoops, AGroupWithinItsShareRunsWhole) {
  if (rt().threads() > 4) GTEST_SKIP() << "a quarter of the iterations is more than 1.1x a thread's share";
  hot_share_probe(0.25);
}

// Struct elements, one-dimensional, by element: every iteration folds its value into
// a hot element (so all form one group, split on several threads) and into an element
// picked by the call's epoch, then reads a third one. Each call equals its grant order.
struct Cell {
  double sum = 0;
  float last[3] = {0, 0, 0};
  std::int64_t count = 0;
};

TEST(IrregularLoops, SplitGroupOverStructElements) {
  const std::int64_t n = 9000, cells = 1500;
  auto x = DistArray<double, 1>::generate(rt(), {n}, [](const Index<1>& i) { return 0.5 + double(i[0] % 11); });
  auto c = DistArray<Cell, 1>::fill(rt(), {cells}, Cell{});
  std::vector<Cell> ref(static_cast<std::size_t>(cells));
  const std::vector<double> xs = x.gather();
  std::uint64_t epoch = 0;
  auto pick = [&](std::int64_t i) { return 1 + hashed_slot(i, cells - 1, epoch * 7919); };
  auto step = [](Cell& hot, Cell& mine, const Cell& seen, double v) {
    hot.sum = hot.sum * 0.999 + v;
    ++hot.count;
    mine.sum += v * static_cast<double>(seen.count % 5) + hot.sum * 1e-3;
    mine.last[mine.count++ % 3] = static_cast<float>(v + seen.sum * 1e-4);
  };
  for (epoch = 0; epoch < 4; ++epoch) {
    const LoopReport report = parallel_for(x, [&](const Index<1>& i, double v) {
      const Cell seen = c[pick(i[0] + 1)];
      step(c[0], c[pick(i[0])], seen, v);
    });
    if (!several_threads_run_groups() && rt().size() > 1 && epoch >= 2 &&
        report.strategy == analysis::Strategy::serial) {
      // One thread a rank: the one group runs whole on one rank, which holds only the
      // cells it touched when planned; cells drawn anew refuse the run, and after two
      // such calls the loop goes serial.
      EXPECT_NE(report.serial_reason.find("changed at each of the last"), std::string::npos) << report.explain();
    } else {
      ASSERT_EQ(report.strategy, analysis::Strategy::groups) << report.explain();
    }
    EXPECT_EQ(report.split_groups, several_threads_run_groups() ? 1 : 0) << report.explain();
    for (const auto& i : equivalent_order(x, report)) {
      const Cell seen = ref[static_cast<std::size_t>(pick(i[0] + 1))];
      step(ref[0], ref[static_cast<std::size_t>(pick(i[0]))], seen, xs[static_cast<std::size_t>(i[0])]);
    }
    const auto got = c.gather();
    for (std::int64_t k = 0; k < cells; ++k) {
      const Cell &a = got[static_cast<std::size_t>(k)], &b = ref[static_cast<std::size_t>(k)];
      ASSERT_TRUE(a.sum == b.sum && a.count == b.count && std::equal(a.last, a.last + 3, b.last))
          << "epoch " << epoch << ", cell " << k;
    }
  }
}

}  // namespace
}  // namespace strata
