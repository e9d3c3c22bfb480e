// Relaxed arrays (parameter server): AdaRevision at the owners, reads outside the
// recorded set, caches without prefetch, compact and row-wise caches, and what is
// refused. ctest runs these with 1, 2 and 4 ranks, 1 and 2 threads each.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <numeric>
#include <string>
#include <thread>

#include "loop/inspect.hpp"  // plans behind the reports (not API)
#include "strata/buffer.hpp"
#include "strata/loop/parallel_for.hpp"
#include "test_runtime.hpp"

namespace strata {
namespace {
using testing::rt;

// AdaRevision, as the owner applies it: per element the deltas of one flush arrive
// one per rank, in rank order, each computed from the value before the flush. The
// deltas are small dyadic numbers, so their sums are exact in any order and the
// reference needs only each iteration's rank.
struct AdaRevisionReference {
  double lr, eps = 1e-8;
  double value = 0, z = 0, g2 = 0, g2max = 0;
  void round(const std::vector<double>& per_rank) {
    const double z_read = z;
    for (const double g : per_rank) {
      const double g_bck = z - z_read, g2max_old = g2max;
      g2 += g * g + 2 * g * g_bck;
      g2max = std::max(g2max, g2);
      const double eta = lr / (std::sqrt(g2max) + eps);
      const double eta_old = g2max_old > 0 ? lr / (std::sqrt(g2max_old) + eps) : eta;
      value = value - eta * g + (eta_old - eta) * g_bck;
      z += g;
    }
  }
};

TEST(Relaxed, AdaRevisionMatchesASerialReference) {
  const std::int64_t n = 4000, elements = 37;
  const double lr = 0.25;
  auto space = DistArray<std::int64_t, 1>::generate(rt(), {n}, [](const Index<1>& i) { return i[0]; });
  auto w = DistArray<double, 1>::zeros(rt(), {elements});
  Buffer buf(w, apply::adarevision(lr));
  auto delta_of = [](std::int64_t i, int pass) {
    return static_cast<double>(static_cast<std::int64_t>(mix64(static_cast<std::uint64_t>(i * 3 + pass)) % 33) - 16) / 8;
  };
  std::vector<AdaRevisionReference> ref(static_cast<std::size_t>(elements), AdaRevisionReference{lr});
  for (int pass = 0; pass < 3; ++pass) {
    const LoopReport report = parallel_for(space, [&](const Index<1>& i, std::int64_t) {
      buf.add({i[0] % elements}, delta_of(i[0], pass));
    });
    const loop::Plan& plan = loop::detail::plan_of(report);
    const int T = plan.threads;
    std::vector<std::vector<double>> per(static_cast<std::size_t>(elements),
                                         std::vector<double>(static_cast<std::size_t>(plan.ranks), 0.0));
    for (std::int64_t i = 0; i < n; ++i) {
      const int worker = range_part(plan.space_bounds, i);
      per[static_cast<std::size_t>(i % elements)][static_cast<std::size_t>(plan.ranks == 1 ? 0 : worker / T)] +=
          delta_of(i, pass);
    }
    for (std::int64_t e = 0; e < elements; ++e) {
      // A rank with no iterations for the element sends nothing for it.
      std::vector<double> sent;
      for (int r = 0; r < plan.ranks; ++r) {
        bool any = false;
        for (std::int64_t i = e; i < n; i += elements)
          any |= plan.ranks == 1 || range_part(plan.space_bounds, i) / T == r;
        if (any) sent.push_back(per[static_cast<std::size_t>(e)][static_cast<std::size_t>(r)]);
      }
      ref[static_cast<std::size_t>(e)].round(sent);
    }
    const auto got = w.gather();
    for (std::int64_t e = 0; e < elements; ++e)
      ASSERT_EQ(got[static_cast<std::size_t>(e)], ref[static_cast<std::size_t>(e)].value) << "element " << e << ", pass " << pass;
  }
}

// The cache holds what the reconnaissance pass saw each rank read. A later call that
// reads elsewhere (the subscript depends on a driver variable) still gets the right
// values, through one request per read; those reads are counted, and the units they
// reached join the rank's cache from the next call on.
TEST(Relaxed, ReadsOutsideTheRecordedSetReturnTheOwnersValuesAreCountedAndLearned) {
  const std::int64_t n = 3000;
  auto space = DistArray<std::int64_t, 1>::generate(rt(), {n}, [](const Index<1>& i) { return i[0]; });
  auto w = DistArray<std::int64_t, 1>::generate(rt(), {n}, [](const Index<1>& i) { return 10 * i[0] + 1; });
  Buffer buf(w, apply::sum(), bsp());
  std::int64_t shift = 0;
  Accumulator<std::int64_t> sum(rt());
  auto body = [&](const Index<1>& i, std::int64_t) { sum += w.read({(i[0] * i[0] + shift) % n}); };
  std::int64_t dynamic_before = 0, learned = 0;
  std::vector<bool> known;  // this rank's read set: recorded (shift 0), then learned
  int calls_at_half = 0;
  for (const std::int64_t s : {std::int64_t{0}, std::int64_t{1}, n / 2, n / 2}) {
    shift = s;
    const LoopReport report = parallel_for(space, body);
    const loop::Plan& plan = loop::detail::plan_of(report);
    std::int64_t want = 0, outside = 0;
    std::vector<bool> mine(static_cast<std::size_t>(n), false);  // this rank's iterations
    for (std::int64_t i = 0; i < n; ++i) {
      want += 10 * ((i * i + s) % n) + 1;
      const int worker = range_part(plan.space_bounds, i);
      if (plan.ranks == 1 || worker / plan.threads == rt().rank()) mine[static_cast<std::size_t>(i)] = true;
    }
    if (known.empty()) {
      // One rank's cache is the array itself, holding every unit: nothing is outside.
      known.assign(static_cast<std::size_t>(n), rt().size() == 1);
      for (std::int64_t i = 0; i < n; ++i)
        if (mine[static_cast<std::size_t>(i)]) known[static_cast<std::size_t>((i * i) % n)] = true;
    }
    std::vector<std::int64_t> missed;
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t u = (i * i + s) % n;
      if (mine[static_cast<std::size_t>(i)] && !known[static_cast<std::size_t>(u)]) {
        ++outside;
        missed.push_back(u);
      }
    }
    for (const auto u : missed) {
      learned += !known[static_cast<std::size_t>(u)];
      known[static_cast<std::size_t>(u)] = true;
    }
    EXPECT_EQ(sum.take(), want) << "shift " << s;
    EXPECT_EQ(buf.stats().dynamic_reads - dynamic_before, outside) << "shift " << s;
    EXPECT_EQ(buf.stats().learned_units, learned) << "shift " << s;
    dynamic_before = buf.stats().dynamic_reads;
    if (s == 0) {
      EXPECT_EQ(outside, 0);
    }
    if (s == n / 2 && ++calls_at_half == 2) {
      EXPECT_EQ(outside, 0) << "the second call at shift n/2 finds everything in the cache";
    }
  }
  if (rt().size() > 1) {
    EXPECT_GT(learned, 0);
  }
}

TEST(Relaxed, WithoutPrefetchEveryReadAsksTheOwner) {
  const std::int64_t n = 500;
  auto space = DistArray<std::int64_t, 1>::generate(rt(), {n}, [](const Index<1>& i) { return i[0]; });
  auto w = DistArray<std::int64_t, 1>::generate(rt(), {n}, [](const Index<1>& i) { return 3 * i[0]; });
  Buffer buf(w, apply::sum(), bsp().every(10).without_prefetch());
  Accumulator<std::int64_t> sum(rt());
  parallel_for(space, [&](const Index<1>& i, std::int64_t) { sum += w.read({(7 * i[0]) % n}); });
  parallel_for(space, [&](const Index<1>& i, std::int64_t) { buf.add({i[0]}, 1); });
  std::int64_t want = 0;
  for (std::int64_t i = 0; i < n; ++i) want += 3 * ((7 * i) % n);
  EXPECT_EQ(sum.take(), want);
  const auto st = buf.stats();
  EXPECT_EQ(st.cache_reads, 0);
  const std::int64_t all = rt().comm().allreduce(st.dynamic_reads, ReduceOp::sum);
  EXPECT_EQ(all, n);
  const auto got = w.gather();
  for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(got[static_cast<std::size_t>(i)], 3 * i + 1);
}

// A read set of a few elements of a large array is cached compactly (behind a slot
// table) rather than in an array-shaped block; reads and updates land the same.
TEST(Relaxed, SmallReadSetsAreCachedCompactly) {
  const std::int64_t n = 1200, size = 5000;
  auto space = DistArray<std::int64_t, 1>::generate(rt(), {n}, [](const Index<1>& i) { return i[0]; });
  auto w = DistArray<std::int64_t, 1>::generate(rt(), {size}, [](const Index<1>& i) { return i[0]; });
  Buffer buf(w, apply::sum(), bsp().every(30));
  std::atomic<std::int64_t> violations{0};
  for (int pass = 0; pass < 2; ++pass) {
    parallel_for(space, [&](const Index<1>& i, std::int64_t) {
      // Element 7k is incremented once per pass, by iteration 7k, before clock
      // 7k / 30 ends: BSP readers at a later clock must see it.
      const std::int64_t k = (i[0] * 3) % 40, seen = w.read({7 * k}) - 7 * k - pass;
      const std::int64_t done = (7 * k) / 30 < current_clock() && rt().size() * rt().threads() == 1 ? 1 : -1;
      if (!detail::t_recording && (seen < 0 || seen > 1 || (done == 1 && seen != 1))) ++violations;
      buf.add({i[0]}, 1);
    });
  }
  EXPECT_EQ(violations.load(), 0);
  const auto got = w.gather();
  for (std::int64_t e = 0; e < size; ++e) ASSERT_EQ(got[static_cast<std::size_t>(e)], e + (e < n ? 2 : 0));
  EXPECT_EQ(buf.stats().dynamic_reads, 0);
}

TEST(Relaxed, MatrixRowsAreCachedWhole) {
  const std::int64_t rows = 64, cols = 5, n = 2000;
  auto space = DistArray<std::int64_t, 1>::generate(rt(), {n}, [](const Index<1>& i) { return i[0]; });
  auto m = DistArray<std::int64_t, 2>::generate(rt(), {rows, cols}, [](const Index<2>& i) { return i[0] * 100 + i[1]; });
  Buffer buf(m, apply::sum(), ssp(1).every(25));
  Accumulator<std::int64_t> sum(rt());
  parallel_for(space, [&](const Index<1>& i, std::int64_t) {
    const auto row = m.read_row(i[0] % rows);
    sum += row[static_cast<std::size_t>(i[0] % cols)];
    buf.add({(i[0] * 7) % rows, i[0] % cols}, 2);
  });
  std::vector<std::int64_t> want(static_cast<std::size_t>(rows * cols));
  std::int64_t want_sum = 0;
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) want[static_cast<std::size_t>(r * cols + c)] = r * 100 + c;
  for (std::int64_t i = 0; i < n; ++i) want[static_cast<std::size_t>(((i * 7) % rows) * cols + i % cols)] += 2;
  EXPECT_EQ(m.gather(), want);
  // Reads at clock t saw between none and all of the earlier clocks' +2s: bounds only.
  for (std::int64_t i = 0; i < n; ++i) want_sum += (i % rows) * 100 + i % cols;
  const std::int64_t got_sum = sum.take();
  EXPECT_GE(got_sum, want_sum);
  EXPECT_LE(got_sum, want_sum + 2 * n * n);
  EXPECT_EQ(buf.stats().dynamic_reads, 0);
}

TEST(Relaxed, WritingARelaxedArrayInPlaceIsRefused) {
  auto space = DistArray<std::int64_t, 1>::generate(rt(), {100}, [](const Index<1>& i) { return i[0]; });
  auto w = DistArray<std::int64_t, 1>::zeros(rt(), {100});
  w.set_name("w");
  Buffer buf(w, apply::sum(), ssp(1));
  try {
    parallel_for(space, [&](const Index<1>& i, std::int64_t) { w.write({i[0]}, 1); });
    FAIL() << "expected an OptionError";
  } catch (const OptionError& e) {
    EXPECT_NE(std::string(e.what()).find("relaxed array w is written in place"), std::string::npos) << e.what();
  }
}

TEST(Relaxed, BadConsistencyOptionsAreRefused) {
  auto w = DistArray<double, 1>::zeros(rt(), {10});
  EXPECT_THROW(Buffer(w, apply::sum(), ssp(-1)), OptionError);
  EXPECT_THROW(Buffer(w, apply::sum(), bsp().every(-5)), OptionError);
}

}  // namespace
}  // namespace strata
