// Plans from a sampled reconnaissance: the first run checks every access; a plan that
// holds is kept, one that does not is undone (arrays, the space's elements and
// accumulators) and replaced by a plan from a full pass. Either way the result equals
// the serial execution of the final plan's equivalent order, bit for bit.
#include <gtest/gtest.h>

#include <cstdlib>

#include <limits>
#include <map>

#include "strata/loop/parallel_for.hpp"
#include "strata/loop/undo.hpp"
#include "test_runtime.hpp"
#include "unsampled.hpp"

namespace strata {
namespace {
using testing::rt;

constexpr int kFactors = 4;

void speculation_sgd_step(float* w, float* h, float r) {
  float e = r;
  for (int k = 0; k < kFactors; ++k) e -= w[k] * h[k];
  for (int k = 0; k < kFactors; ++k) {
    const float wk = w[k];
    w[k] += 0.05f * (e * h[k] - 0.01f * wk);
    h[k] += 0.05f * (e * wk - 0.01f * h[k]);
  }
}

// 12,000 ratings of 300 users on 200 items (drawn from `seed`, every rank alike) and
// factors W and H of an SGD loop over them.
struct SgdProblem {
  static constexpr std::int64_t users = 300, items = 200;
  std::map<Index<2>, float> all;
  DistArray<float, 2> R, W, H;
};

SgdProblem sgd_problem(std::uint64_t seed) {
  constexpr std::int64_t users = SgdProblem::users, items = SgdProblem::items;
  std::map<Index<2>, float> all;
  RandomStream rs(seed);
  while (all.size() < 12000)
    all[{static_cast<std::int64_t>(rs.below(users)), static_cast<std::int64_t>(rs.below(items))}] =
        1.0f + static_cast<float>(rs.below(9)) * 0.5f;
  std::vector<Entry<float, 2>> mine;
  if (rt().rank() == 0)
    for (const auto& [k, v] : all) mine.push_back({k, v});
  return {std::move(all), DistArray<float, 2>::sparse(rt(), {users, items}, mine),
          DistArray<float, 2>::randn(rt(), {users, kFactors}, 0.1, 0.0, Partition::range(0), 31),
          DistArray<float, 2>::randn(rt(), {items, kFactors}, 0.1, 0.0, Partition::range(0), 32)};
}

TEST(Speculation, SampledPlanThatHoldsIsKept) {
  auto [all, R, W, H] = sgd_problem(17);
  std::vector<float> w_ref = W.gather(), h_ref = H.gather();
  LoopOptions sampled;
  sampled.recon_stride = 8;
  auto body = [&](const Index<2>& ij, float r) { speculation_sgd_step(W.row(ij[0]).data(), H.row(ij[1]).data(), r); };
  for (int pass = 0; pass < 2; ++pass) {
    const LoopReport report = parallel_for(R, body, sampled);
    EXPECT_EQ(report.recon_stride, 8);
    EXPECT_TRUE(report.verified);
    EXPECT_TRUE(report.speculation_failure.empty()) << report.speculation_failure;
    EXPECT_EQ(report.strategy, analysis::Strategy::two_d) << report.explain();
    EXPECT_LT(report.recon_accesses, 2 * R.nnz() / 2);  // a sample, not every iteration
    for (const auto& ij : equivalent_order(R, report))
      speculation_sgd_step(&w_ref[static_cast<std::size_t>(ij[0] * kFactors)], &h_ref[static_cast<std::size_t>(ij[1] * kFactors)],
               all.at(ij));
    ASSERT_EQ(W.gather(), w_ref) << "pass " << pass;
    ASSERT_EQ(H.gather(), h_ref) << "pass " << pass;
  }
}

// One iteration the sample does not visit breaks the pattern y[i]: it writes y[0]
// and, with `unseen`, first an array z the sample never saw. The first run lets an
// access through in place only where no other worker can be (loop/windows.hpp): y[0]
// belongs to worker 0 and the unsampled iteration to the last worker, so the write
// fails the plan wherever there are several workers; z fails it everywhere. A plan
// that fails is undone and planned from a full pass (y[0] written by two iterations:
// conflict groups); one that holds is kept. Either way the result is that of the
// final plan's equivalent order.
void run_unsampled_write(bool unseen, std::int64_t n = 6000) {
  const int stride = 8;
  auto x = DistArray<double, 1>::generate(rt(), {n}, [](const Index<1>& i) { return 0.25 * static_cast<double>(i[0] % 13); },
                                          Partition::range(0));
  auto y = DistArray<double, 1>::fill(rt(), {n}, 1.0);
  y.set_name("y");
  auto z = DistArray<double, 1>::fill(rt(), {1}, 2.0);
  z.set_name("z");
  const std::int64_t odd = testing::unsampled_iteration(x, stride);
  ASSERT_GT(odd, 0);

  const std::vector<double> x0 = x.gather();
  std::vector<double> y_ref = y.gather(), x_ref = x0;
  double z_ref = 2.0;
  Accumulator<double> total(rt());
  auto body = [&](const Index<1>& i, double& v) {
    if (unseen && i[0] == odd) z[0] += v;
    const std::int64_t k = i[0] == odd ? 0 : i[0];
    y[k] = y[k] * 0.5 + v;
    total += v;
    v += 1.0;  // the space's elements change too
  };
  LoopOptions sampled;
  sampled.recon_stride = stride;
  const LoopReport report = parallel_for(x, body, sampled);
  EXPECT_TRUE(report.verified);
  // Checked mode checks every access of the first run against the sample's fits, on
  // one worker too.
  const bool checked = std::getenv("STRATA_CHECKED") != nullptr;
  if (unseen || rt().size() * rt().threads() > 1 || checked) {
    EXPECT_EQ(report.recon_stride, 1) << report.explain();
    EXPECT_NE(report.speculation_failure.find(unseen ? "z[" : "y["), std::string::npos) << report.speculation_failure;
    EXPECT_EQ(report.strategy, analysis::Strategy::groups) << report.explain();
    EXPECT_NE(report.explain().find("did not hold"), std::string::npos);
  } else {  // one worker: nothing can conflict with its write
    EXPECT_EQ(report.recon_stride, stride) << report.explain();
    EXPECT_TRUE(report.speculation_failure.empty()) << report.speculation_failure;
  }
  double sum = 0;
  for (const auto& i : equivalent_order(x, report)) {
    const auto at = static_cast<std::size_t>(i[0]);
    const auto k = static_cast<std::size_t>(i[0] == odd ? 0 : i[0]);
    if (unseen && i[0] == odd) z_ref += x_ref[at];
    y_ref[k] = y_ref[k] * 0.5 + x_ref[at];
    x_ref[at] += 1.0;
  }
  for (double v : x0) sum += v;
  EXPECT_EQ(y.gather(), y_ref);
  EXPECT_EQ(x.gather(), x_ref);  // every element changed exactly once
  EXPECT_EQ(z.gather(), std::vector<double>{z_ref});
  EXPECT_DOUBLE_EQ(total.take(), sum);  // the undone run added nothing
}

TEST(Speculation, SampledPlanThatFailsIsUndoneAndReplanned) { run_unsampled_write(false); }

TEST(Speculation, AnArrayTheSampleNeverSawFailsThePlanOnEveryLayout) { run_unsampled_write(true); }

// Large arrays are saved and put back by the runtime's threads, each a share (with
// two threads or more a rank: the arrays are sized so that a rank holds 5.6 MB of
// each, above the threaded copy's threshold of 4 MB).
TEST(Speculation, AnUndoneRunOfLargeArraysPutsEveryByteBack) { run_unsampled_write(true, 700000 * rt().size()); }

TEST(Speculation, ASnapshotCopiedByThreadsRestoresEveryByte) {
  const std::int64_t n = ((std::int64_t{1} << 20) + 3) * rt().size();  // 8 MB of doubles a rank
  auto a = DistArray<double, 1>::generate(rt(), {n}, [](const Index<1>& i) { return 0.5 * static_cast<double>(i[0]); });
  const std::vector<double> before = a.gather();
  detail::RunSnapshot saved({&a}, &rt().pool());
  a.for_each_local([](const Index<1>&, double& v) { v = -v - 1.0; });
  ASSERT_NE(a.gather(), before);
  saved.restore();
  EXPECT_EQ(a.gather(), before);
  EXPECT_EQ(saved.bytes(), a.local_values().size() * sizeof(double));
}

// The sample of a large loop stays near 2^18 iterations; smaller loops keep 1 in 16,
// and the smallest are reconnoitred whole. A stride set in the options wins.
TEST(Speculation, LargeLoopsSampleABoundedNumberOfIterations) {
  using loop::detail::recon_stride_for;
  const LoopOptions automatic;
  EXPECT_EQ(recon_stride_for((1 << 14) - 1, automatic), 1);
  EXPECT_EQ(recon_stride_for(1 << 14, automatic), 16);
  EXPECT_EQ(recon_stride_for(std::int64_t{1} << 22, automatic), 16);
  EXPECT_EQ(recon_stride_for(10'000'000, automatic), 39);  // mf's 10M ratings: 256,411 sampled
  EXPECT_EQ(recon_stride_for(std::int64_t{1} << 30, automatic), 4096);
  for (const std::int64_t n : {std::int64_t{5'000'000}, std::int64_t{123'456'789}, std::int64_t{1} << 33})
    EXPECT_LE(n / recon_stride_for(n, automatic), std::int64_t{1} << 18) << n;
  LoopOptions set;
  set.recon_stride = 3;
  EXPECT_EQ(recon_stride_for(10'000'000, set), 3);
}

// The first run lets through in place what only the running worker can touch: an
// unsampled iteration that writes its neighbour's element (the same worker's rows)
// keeps the sampled plan, and the result is its equivalent order's; a write to data
// the plan only reads goes to the checks, which refuse it (the run's snapshot would
// not hold that array), so the loop is planned again from a full pass.
TEST(Speculation, AWorkersOwnRowsPassInPlaceReadOnlyDataDoesNot) {
  const std::int64_t n = 6000;
  const int stride = 8;
  for (const bool write_read_only : {false, true}) {
    auto x = DistArray<double, 1>::generate(
        rt(), {n}, [](const Index<1>& i) { return 0.5 * static_cast<double>(i[0] % 7); }, Partition::range(0));
    auto y = DistArray<double, 1>::fill(rt(), {n}, 1.0);
    auto c = DistArray<double, 1>::generate(rt(), {n}, [](const Index<1>& i) { return static_cast<double>(i[0] % 5); },
                                            Partition::range(0));
    c.set_name("c");
    const std::int64_t odd = testing::unsampled_iteration(x, stride);
    ASSERT_GT(odd, 0);
    std::vector<double> y_ref = y.gather(), c_ref = c.gather();
    const std::vector<double> x0 = x.gather();
    const auto& read_c = c;  // reads through a const array are reads only
    auto body = [&](const Index<1>& i, double v) {
      const bool at_odd = i[0] == odd;
      const std::int64_t k = at_odd && !write_read_only ? odd - 1 : i[0];
      y[k] = y[k] * 0.5 + v + read_c[i[0]];
      if (at_odd && write_read_only) c[i[0]] += 1.0;
    };
    LoopOptions sampled;
    sampled.recon_stride = stride;
    const LoopReport report = parallel_for(x, body, sampled);
    EXPECT_TRUE(report.verified);
    if (write_read_only) {
      EXPECT_EQ(report.recon_stride, 1) << report.explain();
      EXPECT_NE(report.speculation_failure.find("c["), std::string::npos) << report.speculation_failure;
    } else if (std::getenv("STRATA_CHECKED")) {
      // Checked mode checks every access against the sample's fits: y[odd - 1] at the
      // unsampled iteration does not fit, and the loop is planned from a full pass.
      EXPECT_EQ(report.recon_stride, 1) << report.explain();
      EXPECT_NE(report.speculation_failure.find("does not fit"), std::string::npos) << report.speculation_failure;
    } else {
      EXPECT_EQ(report.recon_stride, stride) << report.explain();
      EXPECT_TRUE(report.speculation_failure.empty()) << report.speculation_failure;
    }
    for (const auto& i : equivalent_order(x, report)) {
      const auto at = static_cast<std::size_t>(i[0]);
      const bool at_odd = i[0] == odd;
      const auto k = at_odd && !write_read_only ? at - 1 : at;
      y_ref[k] = y_ref[k] * 0.5 + x0[at] + c_ref[at];
      if (at_odd && write_read_only) c_ref[at] += 1.0;
    }
    EXPECT_EQ(y.gather(), y_ref);
    EXPECT_EQ(c.gather(), c_ref);
  }
}

// In a 2-D plan a worker owns its current time block's rows of the arrays that travel
// with it: an unsampled iteration that also writes an item's row half the items away
// (another block) fails the first run on every layout, and the loop is planned
// again; the result is the final plan's equivalent order.
TEST(Speculation, AWriteToAnotherTimeBlockFailsA2DPlan) {
  auto [all, R, W, H] = sgd_problem(23);
  const std::int64_t items = SgdProblem::items;
  H.set_name("H");
  const int stride = 8;
  const std::int64_t odd = testing::unsampled_entry(R, stride);
  ASSERT_GE(odd, 0);
  const Index<2> at_odd{odd / items, odd % items};
  const std::int64_t far = (at_odd[1] + items / 2) % items;
  std::vector<float> w_ref = W.gather(), h_ref = H.gather();
  auto body = [&](const Index<2>& ij, float r) {
    if (ij == at_odd) H.row(far)[0] += 0.5f;
    speculation_sgd_step(W.row(ij[0]).data(), H.row(ij[1]).data(), r);
  };
  LoopOptions sampled;
  sampled.recon_stride = stride;
  const LoopReport report = parallel_for(R, body, sampled);
  EXPECT_EQ(report.recon_stride, 1) << report.explain();
  EXPECT_NE(report.speculation_failure.find("H["), std::string::npos) << report.speculation_failure;
  for (const auto& ij : equivalent_order(R, report)) {
    if (ij == at_odd) h_ref[static_cast<std::size_t>(far * kFactors)] += 0.5f;
    speculation_sgd_step(&w_ref[static_cast<std::size_t>(ij[0] * kFactors)],
                         &h_ref[static_cast<std::size_t>(ij[1] * kFactors)], all.at(ij));
  }
  EXPECT_EQ(W.gather(), w_ref);
  EXPECT_EQ(H.gather(), h_ref);
}

TEST(Speculation, StrideOptionIsChecked) {
  auto x = DistArray<double, 1>::zeros(rt(), {10});
  LoopOptions bad;
  bad.recon_stride = -2;
  EXPECT_THROW(parallel_for(x, [&](const Index<1>&, double) {}, bad), OptionError);
}

}  // namespace
}  // namespace strata
