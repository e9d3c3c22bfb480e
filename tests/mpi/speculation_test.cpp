// Plans from a sampled reconnaissance: the first run checks every access; a plan that
// holds is kept, one that does not is undone (arrays, the space's elements and
// accumulators) and replaced by a plan from a full pass. Either way the result equals
// the serial execution of the final plan's equivalent order, bit for bit.
#include <gtest/gtest.h>

#include <limits>
#include <map>

#include "strata/loop/parallel_for.hpp"
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

TEST(Speculation, SampledPlanThatHoldsIsKept) {
  const std::int64_t users = 300, items = 200;
  std::map<Index<2>, float> all;
  RandomStream rs(17);
  while (all.size() < 12000)
    all[{static_cast<std::int64_t>(rs.below(users)), static_cast<std::int64_t>(rs.below(items))}] =
        1.0f + static_cast<float>(rs.below(9)) * 0.5f;
  std::vector<Entry<float, 2>> mine;
  if (rt().rank() == 0)
    for (const auto& [k, v] : all) mine.push_back({k, v});
  auto R = DistArray<float, 2>::sparse(rt(), {users, items}, mine);
  auto W = DistArray<float, 2>::randn(rt(), {users, kFactors}, 0.1, 0.0, Partition::range(0), 31);
  auto H = DistArray<float, 2>::randn(rt(), {items, kFactors}, 0.1, 0.0, Partition::range(0), 32);
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

TEST(Speculation, SampledPlanThatFailsIsUndoneAndReplanned) {
  const std::int64_t n = 6000;
  const int stride = 8;
  auto x = DistArray<double, 1>::generate(rt(), {n}, [](const Index<1>& i) { return 0.25 * static_cast<double>(i[0] % 13); },
                                          Partition::range(0));
  auto y = DistArray<double, 1>::fill(rt(), {n}, 1.0);
  y.set_name("y");
  // One iteration the sample does not visit breaks the pattern y[i]: it writes y[0].
  const std::int64_t odd = testing::unsampled_iteration(x, stride);
  ASSERT_GT(odd, 0);

  const std::vector<double> x0 = x.gather();
  std::vector<double> y_ref = y.gather(), x_ref = x0;
  Accumulator<double> total(rt());
  auto body = [&](const Index<1>& i, double& v) {
    const std::int64_t k = i[0] == odd ? 0 : i[0];
    y[k] = y[k] * 0.5 + v;
    total += v;
    v += 1.0;  // the space's elements change too
  };
  LoopOptions sampled;
  sampled.recon_stride = stride;
  const LoopReport report = parallel_for(x, body, sampled);
  EXPECT_TRUE(report.verified);
  EXPECT_EQ(report.recon_stride, 1) << report.explain();
  EXPECT_NE(report.speculation_failure.find("y["), std::string::npos) << report.speculation_failure;
  EXPECT_EQ(report.strategy, analysis::Strategy::groups) << report.explain();
  EXPECT_NE(report.explain().find("did not hold"), std::string::npos);
  double sum = 0;
  for (const auto& i : equivalent_order(x, report)) {
    const auto at = static_cast<std::size_t>(i[0]);
    const auto k = static_cast<std::size_t>(i[0] == odd ? 0 : i[0]);
    y_ref[k] = y_ref[k] * 0.5 + x_ref[at];
    x_ref[at] += 1.0;
  }
  for (double v : x0) sum += v;
  EXPECT_EQ(y.gather(), y_ref);
  EXPECT_EQ(x.gather(), x_ref);  // every element changed exactly once
  EXPECT_DOUBLE_EQ(total.take(), sum);  // the undone run added nothing
}

TEST(Speculation, StrideOptionIsChecked) {
  auto x = DistArray<double, 1>::zeros(rt(), {10});
  LoopOptions bad;
  bad.recon_stride = -2;
  EXPECT_THROW(parallel_for(x, [&](const Index<1>&, double) {}, bad), OptionError);
}

}  // namespace
}  // namespace strata
