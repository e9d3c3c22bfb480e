// Relaxed arrays (parameter server): clocks, the staleness bound, nothing lost, the
// static caches and the dynamic path. ctest runs these with 1, 2 and 4 ranks, 1 and
// 2 threads each.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "loop/inspect.hpp"  // plans behind the reports (not API)
#include "strata/buffer.hpp"
#include "strata/loop/parallel_for.hpp"
#include "stall_watch.hpp"
#include "test_runtime.hpp"

namespace strata {
namespace {
using testing::rt;

// Counts violations seen by loop threads and keeps the first one's description.
struct ViolationLog {
  std::atomic<std::int64_t> count{0};
  std::string first;
  std::mutex mu;
  void note(const std::string& what) {
    if (count++ == 0) {
      std::lock_guard lock(mu);
      first = what;
    }
  }
};

// Each worker adds 1 to its own counter per iteration and, at every iteration, reads
// every worker's counter. At clock t a reader must see all of worker v's increments
// of clocks <= t-s-1, that is min(K, (t-s) * N) of them, and none of clock t or later
// (its own clock's deltas are still buffered, and nobody's later clocks can have been
// applied before this rank sent its clock t). Random sleeps, longer on odd ranks, make
// the ranks drift apart, so the bound is what keeps readers in line. Without
// prefetch every read asks the owner, which must hold it back until it has applied
// what the reader is owed. Either way a reader sees one clock of the whole array:
// every counter it reads holds the same number of clocks' increments, whichever
// rank owns it (so a record of that clock makes the reads reproducible).
void check_staleness_bound(int s, bool prefetch = true) {
  const int W = rt().size() * rt().threads();
  const std::int64_t K = 48, N = 4, clocks = K / N;
  auto space = DistArray<std::int64_t, 1>::generate(rt(), {W * K}, [](const Index<1>& i) { return i[0]; });
  auto counts = DistArray<std::int64_t, 1>::zeros(rt(), {W});
  counts.set_name("counts");
  Buffer buf(counts, apply::sum(), prefetch ? ssp(s).every(N) : ssp(s).every(N).without_prefetch());
  ViolationLog violations;
  for (int pass = 0; pass < 2; ++pass) {
    const std::int64_t before = pass * K;
    auto body = [&](const Index<1>& i, std::int64_t) {
      const int v = rt().rank() * rt().threads() + detail::t_worker;
      const std::int64_t t = current_clock();
      const auto h = mix64(static_cast<std::uint64_t>(i[0] * 7 + pass));
      if (h % 4 == 0) std::this_thread::sleep_for(std::chrono::microseconds((h >> 8) % (rt().rank() % 2 ? 400 : 60)));
      std::int64_t seen_first = 0;
      for (int u = 0; u < W; ++u) {
        const std::int64_t seen = counts.read({u}) - before;
        const std::int64_t low = std::clamp<std::int64_t>((t - s) * N, 0, K), high = std::min(t * N, K);
        if (detail::t_recording) continue;
        if (seen < low || seen > high)
          violations.note(fmt::format("worker {} at clock {} saw {} increments of worker {} (allowed {}..{})", v, t,
                                      seen, u, low, high));
        if (u == 0) seen_first = seen;
        else if (seen != seen_first)
          violations.note(fmt::format("worker {} at clock {} saw {} increments of worker 0 but {} of worker {}: not "
                                      "one clock of the array",
                                      v, t, seen_first, seen, u));
      }
      buf.add({v}, 1);
    };
    const LoopReport report = parallel_for(space, body);
    const loop::Plan& plan = loop::detail::plan_of(report);
    ASSERT_EQ(plan.choice.strategy, analysis::Strategy::data_parallel) << plan.explain();
    for (const auto& steps : plan.work) ASSERT_EQ(static_cast<std::int64_t>(steps[0].size()), K);
    EXPECT_EQ(violations.count.load(), 0) << "s = " << s << ": " << violations.first;
    EXPECT_EQ(counts.gather(), std::vector<std::int64_t>(static_cast<std::size_t>(W), (pass + 1) * K));
  }
  const RelaxedStats st = buf.stats();
  EXPECT_EQ(st.clocks, 2 * clocks);
  EXPECT_LE(static_cast<int>(st.staleness_histogram.size()), s + 1) << "a clock began staler than s";
  std::int64_t begun = 0;
  for (const auto c : st.staleness_histogram) begun += c;
  EXPECT_EQ(begun, 2 * (clocks - 1));  // every clock but the first of each call waits
  EXPECT_EQ(prefetch ? st.dynamic_reads : st.cache_reads, 0);
  EXPECT_EQ(prefetch ? st.cache_reads : st.dynamic_reads, 2 * K * rt().threads() * W);
}

TEST(Relaxed, BspReadersSeeEveryUpdateOfThePreviousClock) { check_staleness_bound(0); }
TEST(Relaxed, Ssp1ReadersNeverLagMoreThanOneClock) { check_staleness_bound(1); }
TEST(Relaxed, Ssp3ReadersNeverLagMoreThanThreeClocks) { check_staleness_bound(3); }
TEST(Relaxed, BspReadsAskingTheOwnerSeeEveryUpdateOfThePreviousClock) { check_staleness_bound(0, false); }
TEST(Relaxed, Ssp1ReadsAskingTheOwnerNeverLagMoreThanOneClock) { check_staleness_bound(1, false); }

// Hybrid: lock-free within a rank, synchronous across ranks. Each worker adds 1 to
// its counter per iteration and reads every counter. Its own counter shows every
// one of its increments at once; a counter of another thread of its rank shows at
// least the increments of earlier clocks and at most those of this one; a counter
// of another rank shows exactly the earlier clocks' increments (BSP).
TEST(Relaxed, HybridSharesWritesWithinARankAtOnceAndAcrossRanksAtClocks) {
  const int T = rt().threads(), W = rt().size() * T;
  const std::int64_t K = 40, N = 4;
  auto space = DistArray<std::int64_t, 1>::generate(rt(), {W * K}, [](const Index<1>& i) { return i[0]; });
  auto counts = DistArray<std::int64_t, 1>::zeros(rt(), {W});
  Buffer buf(counts, apply::sum(), hybrid().every(N));
  ViolationLog violations;
  for (int pass = 0; pass < 2; ++pass) {
    const std::int64_t before = pass * K;
    auto body = [&](const Index<1>& i, std::int64_t) {
      const int v = rt().rank() * T + detail::t_worker;
      const std::int64_t j = i[0] - v * K, t = current_clock();
      if (!detail::t_recording && j / N != t) violations.note(fmt::format("iteration {} ran in clock {}", j, t));
      if (j % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(50 * (v % 3)));
      for (int u = 0; u < W; ++u) {
        const std::int64_t seen = counts.read({u}) - before;
        std::int64_t low = t * N, high = std::min((t + 1) * N, K);
        if (u == v) low = high = j;
        else if (u / T != rt().rank()) high = low;
        if (!detail::t_recording && (seen < low || seen > high))
          violations.note(fmt::format("worker {} at iteration {} saw {} increments of worker {} (allowed {}..{})", v,
                                      j, seen, u, low, high));
      }
      buf.add({v}, 1);
    };
    const LoopReport report = parallel_for(space, body);
    const loop::Plan& plan = loop::detail::plan_of(report);
    for (const auto& steps : plan.work) ASSERT_EQ(static_cast<std::int64_t>(steps[0].size()), K);
    EXPECT_EQ(violations.count.load(), 0) << violations.first;
    EXPECT_EQ(counts.gather(), std::vector<std::int64_t>(static_cast<std::size_t>(W), (pass + 1) * K));
  }
  const auto st = buf.stats();
  EXPECT_EQ(static_cast<int>(st.staleness_histogram.size()), 1) << "Hybrid is synchronous across ranks";
  // Every rank reads every counter: on several ranks each holds them all (a replica).
  EXPECT_EQ(st.replica_clocks, rt().size() > 1 ? st.clocks : 0);
}

TEST(Relaxed, HybridNeedsASumBufferAndNoStaleness) {
  auto w = DistArray<double, 1>::zeros(rt(), {8});
  EXPECT_THROW(Buffer(w, apply::adagrad(0.1), hybrid()), OptionError);
  Consistency stale = hybrid();
  stale.staleness = 2;
  EXPECT_THROW(Buffer(w, apply::sum(), stale), OptionError);
  EXPECT_THROW(Buffer(w, apply::sum(), hybrid().without_prefetch()), OptionError);
}

std::int64_t relaxed_slot(std::int64_t i, std::int64_t slots) { return testing::hashed_slot(i, slots, 17); }

TEST(Relaxed, NothingIsLostWithClocksAndStaleness) {
  const std::int64_t n = 6000, slots = 211;
  auto space = DistArray<std::int64_t, 1>::generate(rt(), {n}, [](const Index<1>& i) { return i[0] % 9 - 3; });
  for (const int s : {0, 2}) {
    for (const std::int64_t every : {0, 37}) {
      auto counts = DistArray<std::int64_t, 1>::fill(rt(), {slots}, 5);
      Buffer buf(counts, apply::sum(), ssp(s).every(every));
      std::atomic<std::int64_t> read_sum{0};
      auto body = [&](const Index<1>& i, std::int64_t v) {
        read_sum += counts.read({(i[0] * 13) % slots});  // the array is read (cached) as well as written
        buf.add({relaxed_slot(i[0], slots)}, v);
        buf.add({(i[0] * 31) % slots}, 1);
      };
      std::vector<std::int64_t> want(static_cast<std::size_t>(slots), 5);
      for (int pass = 0; pass < 2; ++pass) {
        parallel_for(space, body);
        for (std::int64_t i = 0; i < n; ++i) {
          want[static_cast<std::size_t>(relaxed_slot(i, slots))] += i % 9 - 3;
          want[static_cast<std::size_t>((i * 31) % slots)] += 1;
        }
        ASSERT_EQ(counts.gather(), want) << "s = " << s << ", clock every " << every << ", pass " << pass;
      }
      if (every > 0 && rt().size() > 1) {
        EXPECT_GT(buf.stats().messages_sent, 0);
      }
    }
  }
}

// Managed communication sends deltas early, between clocks; the end-of-clock flush
// sends the rest. Whatever the budget and the order, each delta arrives once.
TEST(Relaxed, NothingIsLostWithManagedCommunication) {
  const std::int64_t n = 2000, slots = 211;
  auto space = DistArray<std::int64_t, 1>::generate(rt(), {n}, [](const Index<1>& i) { return i[0] % 9 - 3; });
  struct Case {
    int s;
    std::int64_t every;
    double budget;
    Priority order;
  };
  std::int64_t early = 0;
  for (const Case c : {Case{0, 0, 4000, Priority::relative_magnitude}, Case{2, 50, 1e9, Priority::random},
                       Case{1, 25, 20000, Priority::round_robin}, Case{0, 0, 1e6, Priority::absolute_magnitude}}) {
    auto counts = DistArray<std::int64_t, 1>::fill(rt(), {slots}, 5);
    Buffer buf(counts, apply::sum(), ssp(c.s).every(c.every).managed(c.budget, c.order));
    std::atomic<std::int64_t> read_sum{0};
    auto body = [&](const Index<1>& i, std::int64_t v) {
      read_sum += counts.read({(i[0] * 13) % slots});
      buf.add({relaxed_slot(i[0], slots)}, v);
      buf.add({(i[0] * 31) % slots}, 1);
      // Slow enough for the pump (every 10 ms) to run many times per call.
      if (!detail::t_recording && i[0] % 2 == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
    };
    std::vector<std::int64_t> want(static_cast<std::size_t>(slots), 5);
    for (int pass = 0; pass < 2; ++pass) {
      parallel_for(space, body);
      for (std::int64_t i = 0; i < n; ++i) {
        want[static_cast<std::size_t>(relaxed_slot(i, slots))] += i % 9 - 3;
        want[static_cast<std::size_t>((i * 31) % slots)] += 1;
      }
      ASSERT_EQ(counts.gather(), want) << "s = " << c.s << ", every " << c.every << ", budget " << c.budget;
    }
    const RelaxedStats st = buf.stats();
    EXPECT_LE(st.managed_bytes, st.bytes_sent);
    early += st.managed_deltas;
  }
  EXPECT_GT(rt().comm().allreduce(early, ReduceOp::sum), 0) << "no delta went early: the test proves nothing";
}

// The budget: while there is more to send than it allows, managed communication
// sends within +-15 % of it in every 1-second window.
TEST(Relaxed, ManagedCommunicationKeepsItsBandwidthBudget) {
  if (rt().size() < 2) GTEST_SKIP() << "one rank owns everything: no bandwidth is spent";
  // A rate is a timing property: with more ranks than cores the communication
  // threads wait their turn for tens of milliseconds, which proves nothing.
  if (static_cast<unsigned>(rt().size()) > std::max(2u, std::thread::hardware_concurrency()))
    GTEST_SKIP() << "more ranks than cores";
#if defined(__SANITIZE_ADDRESS__)
  // The sanitizer pass runs its 2-rank tests side by side on the CI's two cores, each
  // several times slower: rates came out 16-17 % off without a stall the watch below
  // notices (2026-11-29). The plain build's pass measures the rate.
  GTEST_SKIP() << "a rate is not measurable in the sanitizer build";
#endif
  const int W = rt().size() * rt().threads();
  // Few elements: the outbox stays small, so even an unoptimised sanitizer build
  // ranks it quickly and pumps many times per second.
  const std::int64_t per_worker = 2400, elements = 4000;
  const double budget = 200000;  // bytes per second
  auto space = DistArray<std::int64_t, 1>::generate(rt(), {W * per_worker}, [](const Index<1>& i) { return i[0]; });
  auto counts = DistArray<std::int64_t, 1>::zeros(rt(), {elements});
  Buffer buf(counts, apply::sum(), bsp().managed(budget));
  testing::StallWatch watch;
  parallel_for(space, [&](const Index<1>& i, std::int64_t) {
    if (detail::t_recording) return buf.add({0}, 0);
    for (std::uint64_t k = 0; k < 100; ++k)  // about 1.5 MB/s per thread of fresh deltas
      buf.add({static_cast<std::int64_t>(mix64(static_cast<std::uint64_t>(i[0]) * 101 + k) % elements)}, 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  watch.stop();
  EXPECT_EQ(rt().comm().allreduce(std::accumulate(counts.local_values().begin(), counts.local_values().end(),
                                                  std::int64_t{0}),
                                  ReduceOp::sum),
            W * per_worker * 100);
  const auto timeline = buf.stats().managed_timeline;  // tenths of a second
  ASSERT_GE(timeline.size(), 21u) << "the run was shorter than two seconds";
  // The timeline counts from the run's start, at most `lead` seconds after the
  // watch's (the call's recording and planning come first; the run ends before the
  // watch stops). A window the pump may have been stalled in, or just after one (the
  // bucket refilled meanwhile), measures the machine's load: it is left out.
  const double lead = watch.elapsed() - static_cast<double>(timeline.size() - 1) / 10;
  const auto stalled = [&](double from, double to) {
    for (const auto& [s0, s1] : watch.stalls())
      if (s0 - lead < to && from < s1 + 0.2) return true;
    return false;
  };
  // Every full window free of stalls (the last tenth is cut short by the end of the call).
  std::vector<std::size_t> windows;
  for (std::size_t from = 0; from + 10 < timeline.size(); ++from)
    if (!stalled(static_cast<double>(from) / 10, static_cast<double>(from + 10) / 10)) windows.push_back(from);
  if (windows.size() < 5)
    GTEST_SKIP() << "the machine stalled this process " << watch.stalls().size() << " times (more than "
                 << testing::StallWatch::kOverrun.count() << " ms late): only " << windows.size()
                 << " one-second windows were free of stalls, too few to judge a rate";
  for (const std::size_t from : windows) {
    const double sent = static_cast<double>(std::accumulate(timeline.begin() + static_cast<std::ptrdiff_t>(from),
                                                            timeline.begin() + static_cast<std::ptrdiff_t>(from + 10),
                                                            std::int64_t{0}));
    EXPECT_NEAR(sent, budget, 0.15 * budget) << "the second from " << static_cast<double>(from) / 10 << " s";
  }
}

// Early deltas reach their owner before the clock ends, most important (by
// |delta / value|) first. Ranks 1.. write deltas to 16 elements rank 0 owns, with a
// budget that lets a few through per second; late in the (single) clock rank 0 asks
// for its own elements' values (a read outside the recorded set goes to the owner):
// the elements already changed must be the top ones in relative magnitude.
TEST(Relaxed, ManagedCommunicationSendsTheRelativelyLargestDeltasFirst) {
  if (rt().size() < 2) GTEST_SKIP() << "needs a rank that sends to another";
  const int T = rt().threads();
  const std::int64_t K = 60, E = 16;
  auto space = DistArray<std::int64_t, 1>::generate(rt(), {rt().size() * T * K}, [](const Index<1>& i) { return i[0]; });
  auto w = DistArray<double, 1>::generate(rt(), {64}, [](const Index<1>& i) { return 1.0 + static_cast<double>(i[0]); });
  if (rt().rank() == 0) {
    for (std::int64_t e = 0; e < E; ++e) ASSERT_NE(w.find({e}), nullptr);
  }
  auto rank_of = [](std::int64_t e) { return (e * 7) % E; };  // relative magnitude (rank_of + 1) / 128
  auto delta_of = [&](std::int64_t e) { return static_cast<double>(rank_of(e) + 1) * (1.0 + static_cast<double>(e)) / 128; };
  Buffer buf(w, apply::sum(), bsp().managed(200));  // one delta (40 bytes) every 0.2 s
  std::vector<double> seen(static_cast<std::size_t>(E), 0);
  parallel_for(space, [&](const Index<1>& i, std::int64_t) {
    if (detail::t_recording) {  // the writers read their elements (ranked against these cached values)
      if (rt().rank() > 0)
        for (std::int64_t e = 0; e < E; ++e) (void)w.read({e});
      return buf.add({0}, 0.0);
    }
    if (rt().rank() > 0 && i[0] % (T * K) == 0)
      for (std::int64_t e = 0; e < E; ++e) buf.add({e}, delta_of(e));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (rt().rank() == 0 && i[0] == K - 1)  // worker 0's last iteration
      for (std::int64_t e = 0; e < E; ++e) seen[static_cast<std::size_t>(e)] = w.read({e});
  });
  std::int64_t changed = 0;
  if (rt().rank() == 0) {
    // The changed elements must be exactly those of the `changed` largest ranks.
    for (std::int64_t e = 0; e < E; ++e) changed += seen[static_cast<std::size_t>(e)] != 1.0 + static_cast<double>(e);
    for (std::int64_t e = 0; e < E; ++e)
      EXPECT_EQ(seen[static_cast<std::size_t>(e)] != 1.0 + static_cast<double>(e), rank_of(e) >= E - changed)
          << "element " << e << " (relative rank " << rank_of(e) << "), " << changed << " changed";
    EXPECT_GT(changed, 0) << "nothing arrived early";
    EXPECT_LT(changed, E) << "everything arrived early: the budget did not bind";
  }
  const auto got = w.gather();
  for (std::int64_t e = 0; e < E; ++e)
    ASSERT_EQ(got[static_cast<std::size_t>(e)], 1.0 + static_cast<double>(e) + (rt().size() - 1) * delta_of(e));
}

}  // namespace
}  // namespace strata
