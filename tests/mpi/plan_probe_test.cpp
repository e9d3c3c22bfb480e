// A cached plan is probed before it runs again (src/loop/plan_probe.hpp): one closure
// type called from one line with other arrays, offsets or constants runs each call by
// a plan that covers it, and a helper alternating between a few keeps a plan for each.
// Every result is compared with its serial twin (ctest: 1, 2 and 4 ranks, 1 and 2
// threads, and checked).
#include <gtest/gtest.h>

#include <vector>

#include "strata/buffer.hpp"
#include "strata/loop/accumulator.hpp"
#include "strata/loop/parallel_for.hpp"
#include "test_runtime.hpp"

namespace strata {
namespace {
using testing::rt;

constexpr std::int64_t kN = 4000;

// Helpers whose lambdas capture their parameters: one closure type, one call site, for
// every array and offset they are given.
LoopReport add_at(DistArray<double, 1>& x, DistArray<double, 1>& y, const DistArray<std::int64_t, 1>& idx,
                  Accumulator<double>& total) {
  return parallel_for(x, [&](const Index<1>& i, double v) {
    y[idx[i[0]]] += v;
    total += v;
  });
}

LoopReport shift_add(DistArray<double, 1>& x, DistArray<double, 1>& y, std::int64_t k) {
  return parallel_for(x, [&y, k](const Index<1>& i, double) {
    if (i[0] + k < kN) y[i[0] + k] = 0.5 * y[i[0] + k] + 0.25 * y[i[0]] + static_cast<double>(i[0] % 7);
  });
}

bool several_workers() { return rt().size() * rt().threads() > 1; }

// Before probes, the second array ran by the first one's 1-D plan: a race on hot
// elements on one rank, "index belongs to rank 1" on two.
TEST(PlanProbe, AHelperCalledWithOtherArraysRunsEachByItsOwnPlan) {
  auto x = DistArray<double, 1>::fill(rt(), {kN}, 1.0);
  auto y1 = DistArray<double, 1>::zeros(rt(), {kN}).set_name("y1");
  auto y2 = DistArray<double, 1>::zeros(rt(), {kN}, Partition::hash(0)).set_name("y2");
  auto idx1 = DistArray<std::int64_t, 1>::generate(rt(), {kN}, [](const Index<1>& i) { return i[0]; });
  auto idx2 = DistArray<std::int64_t, 1>::generate(rt(), {kN}, [](const Index<1>& i) { return i[0] % 3; });
  Accumulator<double> total(rt());
  std::uint64_t plan1 = 0, plan2 = 0;
  for (int call = 1; call <= 3; ++call) {
    const LoopReport r1 = add_at(x, y1, idx1, total);
    EXPECT_EQ(total.take(), static_cast<double>(kN));  // the probe added nothing
    const LoopReport r2 = add_at(x, y2, idx2, total);
    EXPECT_EQ(total.take(), static_cast<double>(kN));
    EXPECT_EQ(r1.strategy, analysis::Strategy::one_d) << r1.explain();
    if (several_workers()) {
      EXPECT_NE(r2.strategy, analysis::Strategy::one_d) << r2.explain();
    }
    EXPECT_TRUE(r1.probe_failure.empty()) << r1.explain();  // planned first, nothing cached
    EXPECT_NE(r2.probe_failure.find("never saw"), std::string::npos) << r2.explain();
    if (call == 1) {
      plan1 = r1.plan_id, plan2 = r2.plan_id;
      EXPECT_NE(plan1, plan2);
    } else {  // both plans stay cached: nothing is planned after the first two calls
      EXPECT_EQ(r1.plan_id, plan1);
      EXPECT_EQ(r2.plan_id, plan2);
    }
    const auto g1 = y1.gather(), g2 = y2.gather();
    for (std::int64_t i = 0; i < kN; ++i) {
      ASSERT_EQ(g1[static_cast<std::size_t>(i)], call) << i;
      const double hot = i < 3 ? static_cast<double>(call * ((kN - 1 - i) / 3 + 1)) : 0.0;
      ASSERT_EQ(g2[static_cast<std::size_t>(i)], hot) << i << "\n" << r2.explain();
    }
  }
}

// y[i + k] depends on y[i] when k = 1 (a chain), not when k = 0: a plan for k = 0 must
// not run k = 1.
TEST(PlanProbe, ACapturedOffsetThatChangesIsPlannedForTheCall) {
  auto x = DistArray<double, 1>::fill(rt(), {kN}, 1.0);
  auto y = DistArray<double, 1>::fill(rt(), {kN}, 0.5).set_name("y");
  std::vector<double> want(static_cast<std::size_t>(kN), 0.5);
  for (const std::int64_t k : {0, 1, 1, 0}) {
    const LoopReport report = shift_add(x, y, k);
    for (std::int64_t i = 0; i + k < kN; ++i) {
      auto& w = want[static_cast<std::size_t>(i + k)];
      w = 0.5 * w + 0.25 * want[static_cast<std::size_t>(i)] + static_cast<double>(i % 7);
    }
    const auto got = y.gather();
    for (std::int64_t i = 0; i < kN; ++i)
      ASSERT_EQ(got[static_cast<std::size_t>(i)], want[static_cast<std::size_t>(i)]) << "k " << k << ", " << i
                                                                                     << "\n" << report.explain();
    if (k == 1 && several_workers()) {
      EXPECT_NE(report.strategy, analysis::Strategy::one_d) << report.explain();
    }
  }
}

// After a misfit the loop is planned from every iteration, not from a sample: a sample
// that missed what the probe met would miss it again.
TEST(PlanProbe, APlanBuiltAfterAMisfitComesFromEveryIteration) {
  const std::int64_t n = 40000;  // above the size from which plans are built from a sample
  auto x = DistArray<double, 1>::fill(rt(), {n}, 1.0);
  auto y1 = DistArray<double, 1>::zeros(rt(), {n}).set_name("y1");
  auto y2 = DistArray<double, 1>::zeros(rt(), {n}).set_name("y2");
  auto idx = DistArray<std::int64_t, 1>::generate(rt(), {n}, [](const Index<1>& i) { return i[0]; });
  Accumulator<double> total(rt());
  const LoopReport first = add_at(x, y1, idx, total);
  const LoopReport second = add_at(x, y2, idx, total);
  EXPECT_GT(first.recon_stride, 1) << first.explain();
  EXPECT_FALSE(second.probe_failure.empty()) << second.explain();
  EXPECT_EQ(second.recon_stride, 1) << second.explain();
  EXPECT_EQ(y2.gather(), std::vector<double>(static_cast<std::size_t>(n), 1.0));
}

// Reads of an array the loop only reads, which every worker holds whole, may move from
// call to call: nothing the plan decided rests on their subscripts.
TEST(PlanProbe, AReadOnlySubscriptThatMovesKeepsThePlan) {
  auto x = DistArray<double, 1>::fill(rt(), {kN}, 1.0);
  auto coef = DistArray<double, 1>::generate(rt(), {5}, [](const Index<1>& i) {
                return 1.0 + static_cast<double>(i[0]);
              }).set_name("coef");
  auto y = DistArray<double, 1>::zeros(rt(), {kN}).set_name("y");
  std::uint64_t plan = 0;
  double want = 0;
  for (std::int64_t call = 0; call < 5; ++call) {
    const LoopReport report =
        parallel_for(x, [&y, &coef, call](const Index<1>& i, double v) { y[i[0]] = y[i[0]] + v * coef.read({call}); });
    want += 1.0 + static_cast<double>(call);
    if (call == 0) plan = report.plan_id;
    EXPECT_EQ(report.plan_id, plan) << report.explain();
  }
  EXPECT_EQ(y.gather(), std::vector<double>(static_cast<std::size_t>(kN), want));
}

// Ranks that hold no iteration of the space take part in the probe all the same, and
// every rank reports the same reason.
TEST(PlanProbe, RanksWithoutIterationsAgreeWithTheOthers) {
  auto x = DistArray<double, 1>::fill(rt(), {3}, 1.0);  // fewer iterations than ranks at 4 ranks
  auto y1 = DistArray<double, 1>::zeros(rt(), {3}).set_name("y1");
  auto y2 = DistArray<double, 1>::zeros(rt(), {3}).set_name("y2");
  auto idx = DistArray<std::int64_t, 1>::generate(rt(), {3}, [](const Index<1>& i) { return 2 - i[0]; });
  Accumulator<double> total(rt());
  for (int call = 0; call < 2; ++call) {
    add_at(x, y1, idx, total);
    const LoopReport report = add_at(x, y2, idx, total);
    const std::string& why = report.probe_failure;
    if (call == 0) {
      EXPECT_NE(why.find("never saw"), std::string::npos) << report.explain();
    }
    // The same text on every rank: a hash of it agrees.
    std::uint64_t h = 1469598103934665603ULL;  // FNV-1a
    for (const char c : why) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    EXPECT_EQ(rt().comm().allreduce(h, ReduceOp::min), rt().comm().allreduce(h, ReduceOp::max)) << why;
  }
  EXPECT_EQ(y2.gather(), (std::vector<double>{2.0, 2.0, 2.0}));
}

// A constant subscript written in place that alternates between two values: a plan for
// each, both kept.
TEST(PlanProbe, AConstantSubscriptAlternatingBetweenTwoValuesKeepsTwoPlans) {
  auto x = DistArray<double, 1>::fill(rt(), {kN}, 1.0);
  auto sums = DistArray<double, 1>::zeros(rt(), {2}).set_name("sums");
  std::uint64_t plans[2] = {0, 0};
  for (int call = 0; call < 6; ++call) {
    const std::int64_t slot = call % 2;
    const LoopReport report =
        parallel_for(x, [&sums, slot](const Index<1>&, double v) { sums[slot] = sums[slot] + v; });
    if (call < 2) {
      plans[slot] = report.plan_id;
      if (call == 1) {
        EXPECT_NE(report.probe_failure.find("does not fit"), std::string::npos) << report.explain();
      }
    } else {
      EXPECT_EQ(report.plan_id, plans[slot]) << report.explain();
    }
  }
  EXPECT_NE(plans[0], plans[1]);
  EXPECT_EQ(sums.gather(), (std::vector<double>{3.0 * kN, 3.0 * kN}));
}

// Deltas conflict with nothing: a Buffer's subscript may move from call to call
// without a new plan.
TEST(PlanProbe, ABufferSlotThatMovesKeepsThePlan) {
  auto x = DistArray<double, 1>::fill(rt(), {kN}, 1.0);
  auto per_call = DistArray<double, 1>::zeros(rt(), {5}).set_name("per_call");
  Buffer buf(per_call);
  std::uint64_t plan = 0;
  for (std::int64_t call = 0; call < 5; ++call) {
    const LoopReport report = parallel_for(x, [&buf, call](const Index<1>&, double v) { buf.add({call}, v); });
    if (call == 0) plan = report.plan_id;
    EXPECT_EQ(report.plan_id, plan) << report.explain();
  }
  EXPECT_EQ(per_call.gather(), std::vector<double>(5, static_cast<double>(kN)));
}

}  // namespace
}  // namespace strata
