// Buffers: writes exempt from dependence analysis, applied at the owners when the
// loop ends. ctest runs these with 1, 2 and 4 ranks, 1 and 2 threads each.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "strata/buffer.hpp"
#include "strata/loop/parallel_for.hpp"
#include "test_runtime.hpp"
#include "unsampled.hpp"

namespace strata {
namespace {
using testing::rt;

std::int64_t buffer_slot(std::int64_t i, std::int64_t slots) { return testing::hashed_slot(i, slots, 0); }

TEST(Buffer, NothingIsLostAndTheLoopRunsDataParallel) {
  const std::int64_t n = 5000, slots = 97;
  auto space = DistArray<std::int64_t, 1>::generate(rt(), {n}, [](const Index<1>& i) { return i[0] % 5 + 1; });
  auto counts = DistArray<std::int64_t, 1>::fill(rt(), {slots}, 10);
  Buffer buf(counts);
  auto body = [&](const Index<1>& i, std::int64_t v) {
    buf.add({buffer_slot(i[0], slots)}, v);
    buf.add({(i[0] * 31) % slots}, 1);
  };
  std::vector<std::int64_t> want(static_cast<std::size_t>(slots), 10);
  for (int pass = 0; pass < 2; ++pass) {
    const LoopReport report = parallel_for(space, body);
    EXPECT_EQ(report.strategy, analysis::Strategy::data_parallel) << report.explain();
    EXPECT_EQ(buf.pending(), 0u);
    for (std::int64_t i = 0; i < n; ++i) {
      want[static_cast<std::size_t>(buffer_slot(i, slots))] += i % 5 + 1;
      want[static_cast<std::size_t>((i * 31) % slots)] += 1;
    }
    ASSERT_EQ(counts.gather(), want) << "pass " << pass;
  }
}

TEST(Buffer, ArraysTooLargeForDenseDeltasUseAHashMap) {
  const std::int64_t n = 3000, slots = std::int64_t{9} << 20;  // 72 MiB of int64: past the dense limit
  auto space = DistArray<std::int64_t, 1>::generate(rt(), {n}, [](const Index<1>& i) { return i[0] % 7 + 1; });
  auto counts = DistArray<std::int64_t, 1>::zeros(rt(), {slots});
  Buffer buf(counts);
  const LoopReport report =
      parallel_for(space, [&](const Index<1>& i, std::int64_t v) { buf.add({buffer_slot(i[0], 1000) * 9001}, v); });
  EXPECT_EQ(report.bytes_per_pass, 0);  // written only through the Buffer: never copied to every rank
  std::map<std::int64_t, std::int64_t> want;
  for (std::int64_t i = 0; i < n; ++i) want[buffer_slot(i, 1000) * 9001] += i % 7 + 1;
  const auto got = counts.gather();
  std::int64_t total = 0;
  for (const auto v : got) total += v;
  EXPECT_EQ(total, [&] {
    std::int64_t t = 0;
    for (const auto& [k, v] : want) t += v;
    return t;
  }());
  for (const auto& [k, v] : want) ASSERT_EQ(got[static_cast<std::size_t>(k)], v) << k;
}

TEST(Buffer, ReadsSeeTheArrayFromBeforeTheLoop) {
  const std::int64_t n = 2000, slots = 40;
  auto space = DistArray<double, 1>::fill(rt(), {n}, 1.0);
  auto w = DistArray<double, 1>::generate(rt(), {slots}, [](const Index<1>& i) { return 0.5 * static_cast<double>(i[0]); });
  auto seen = DistArray<double, 1>::zeros(rt(), {n});
  Buffer buf(w);
  auto body = [&](const Index<1>& i, double v) {
    const std::int64_t k = buffer_slot(i[0], slots);
    seen[i[0]] = w.read({k});
    buf.add({k}, v);
  };
  for (int pass = 0; pass < 3; ++pass) {
    const auto before = w.gather();
    parallel_for(space, body);
    const auto s = seen.gather();
    for (std::int64_t i = 0; i < n; ++i)
      ASSERT_EQ(s[static_cast<std::size_t>(i)], before[static_cast<std::size_t>(buffer_slot(i, slots))]) << "pass " << pass;
  }
}

TEST(Buffer, AdaGradMatchesASerialReference) {
  // Every element gets one gradient per pass, from iteration i = element, so the
  // owner's updates do not depend on how iterations are spread over workers.
  const std::int64_t n = 300;
  const double lr = 0.3;
  auto target = DistArray<double, 1>::generate(rt(), {n}, [](const Index<1>& i) { return std::sin(0.1 * static_cast<double>(i[0])); });
  auto w = DistArray<double, 1>::zeros(rt(), {n});
  Buffer buf(w, apply::adagrad(lr));
  auto body = [&](const Index<1>& i, double t) { buf.add({i[0]}, w.read({i[0]}) - t); };  // gradient of (w - t)^2 / 2
  std::vector<double> ref(static_cast<std::size_t>(n), 0.0), squares(static_cast<std::size_t>(n), 0.0);
  const auto t = target.gather();
  for (int pass = 0; pass < 4; ++pass) {
    parallel_for(target, body);
    for (std::size_t k = 0; k < ref.size(); ++k) {
      const double g = ref[k] - t[k];
      squares[k] += g * g;
      ref[k] -= lr * g / (std::sqrt(squares[k]) + 1e-8);
    }
    ASSERT_EQ(w.gather(), ref) << "pass " << pass;
  }
}

// A user-defined apply function with state: the element becomes the running mean of
// the (summed) deltas it received, one flush after another.
struct RunningMean {
  struct state_type {
    std::int64_t updates = 0;
  };
  void operator()(double& value, state_type& state, const double& delta) const {
    ++state.updates;
    value += (delta - value) / static_cast<double>(state.updates);
  }
};

TEST(Buffer, UserDefinedApplyFunctionsKeepTheirState) {
  const std::int64_t n = 500;
  auto space = DistArray<double, 1>::generate(rt(), {n}, [](const Index<1>& i) { return static_cast<double>(i[0]); });
  auto mean = DistArray<double, 1>::zeros(rt(), {n});
  Buffer buf(mean, RunningMean{});
  double scale = 0;
  for (int pass = 1; pass <= 3; ++pass) {
    scale = pass;
    parallel_for(space, [&](const Index<1>& i, double v) { buf.add({i[0]}, scale * v); });
  }
  const auto got = mean.gather();
  for (std::int64_t i = 0; i < n; ++i)  // mean of 1v, 2v, 3v
    ASSERT_DOUBLE_EQ(got[static_cast<std::size_t>(i)], 2.0 * static_cast<double>(i));
}

TEST(Buffer, DeltasOfAnUndoneSpeculativeRunAreDropped) {
  const std::int64_t n = 6000, slots = 50;
  const int stride = 8;
  auto x = DistArray<double, 1>::fill(rt(), {n}, 1.0, Partition::range(0));
  auto y = DistArray<double, 1>::zeros(rt(), {n});
  auto counts = DistArray<std::int64_t, 1>::zeros(rt(), {slots});
  Buffer buf(counts);
  // One iteration outside the sample writes y[0] instead of y[i]: the sampled plan
  // fails in its first run, which is undone and run again from a full plan.
  const std::int64_t odd = testing::unsampled_iteration(x, stride);
  LoopOptions sampled;
  sampled.recon_stride = stride;
  const LoopReport report = parallel_for(x, [&](const Index<1>& i, double v) {
    y[i[0] == odd ? 0 : i[0]] = v;
    buf.add({i[0] % slots}, 1);
  }, sampled);
  EXPECT_FALSE(report.speculation_failure.empty());
  EXPECT_EQ(counts.gather(), std::vector<std::int64_t>(static_cast<std::size_t>(slots), n / slots));
}

TEST(Buffer, OneBufferPerArray) {
  auto a = DistArray<double, 1>::zeros(rt(), {10});
  Buffer first(a);
  EXPECT_THROW(Buffer second(a), OptionError);
  auto sparse = DistArray<double, 2>::sparse(rt(), {4, 4}, {});
  EXPECT_THROW(Buffer over_sparse(sparse), OptionError);
  first.add({3}, 2.5);  // outside loops: collected until flush()
  EXPECT_EQ(a.gather()[3], 0.0);
  first.flush();
  EXPECT_EQ(a.gather()[3], 2.5 * rt().size());
}

}  // namespace
}  // namespace strata
