// The pieces of managed communication on their own, with the clock as a parameter:
// the delta set, the leaky bucket, and the order in which the outbox's pump sends.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "ps/leaky_bucket.hpp"
#include "ps/managed_outbox.hpp"
#include "strata/detail/delta_set.hpp"
#include "strata/detail/ps_element_ops.hpp"

namespace strata::ps {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

template <class T>
std::vector<std::pair<std::int64_t, T>> contents(const DeltaSet<T>& s) {
  return s.sorted();
}

TEST(DeltaSet, SumsPerElementExtractsAndMovesDenseAndHashed) {
  for (const std::int64_t volume : {std::int64_t{100}, DeltaSet<double>::kDenseBytes}) {  // dense, then hashed
    DeltaSet<double> a(volume), b(volume);
    EXPECT_EQ(a.dense(), volume == 100);
    a.add(7, 1.5);
    a.add(3, 2);
    a.add(7, 0.25);
    a.add(50, -1);
    EXPECT_EQ(a.size(), 3u);
    EXPECT_EQ(contents(a), (std::vector<std::pair<std::int64_t, double>>{{3, 2}, {7, 1.75}, {50, -1}}));
    EXPECT_EQ(a.extract({50, 3}), (std::vector<double>{-1, 2}));
    EXPECT_EQ(contents(a), (std::vector<std::pair<std::int64_t, double>>{{7, 1.75}}));
    a.add(3, 4);  // an extracted element starts again from zero
    b.add(7, 1);
    a.move_into(b);
    EXPECT_TRUE(a.empty());
    EXPECT_EQ(contents(b), (std::vector<std::pair<std::int64_t, double>>{{3, 4}, {7, 2.75}}));
    b.clear();
    EXPECT_TRUE(b.empty());
    b.add(7, 1);
    EXPECT_EQ(contents(b), (std::vector<std::pair<std::int64_t, double>>{{7, 1}}));
  }
}

TEST(LeakyBucket, FillsAtItsRateUpToItsCapacity) {
  LeakyBucket bucket(1000, 100);  // 1000 bytes/s, at most 100 saved
  const auto t0 = Clock::now();
  bucket.start(t0);
  EXPECT_EQ(bucket.tokens(), 0);
  EXPECT_NEAR(bucket.refill(t0 + milliseconds(50)), 50, 1e-9);
  bucket.spend(30);
  EXPECT_NEAR(bucket.refill(t0 + milliseconds(60)), 30, 1e-9);
  EXPECT_NEAR(bucket.refill(t0 + milliseconds(1000)), 100, 1e-9);  // spills over
  bucket.spend(100);
  EXPECT_NEAR(bucket.refill(t0 + milliseconds(1000)), 0, 1e-9);
}

// The outbox's set as a Buffer of doubles keeps it: a pending set per loop thread and
// the outbox's own; records are (key, delta) pairs of 16 bytes.
class DoubleOutboxSet final : public OutboxSet {
 public:
  static constexpr std::size_t kRecordBytes = 16;

  DoubleOutboxSet(int threads, std::int64_t volume)
      : pending(static_cast<std::size_t>(threads), DeltaSet<double>(volume)), held(volume) {}

  void take_pending(int thread) override { pending[static_cast<std::size_t>(thread)].move_into(held); }
  void return_to_pending() override { held.move_into(pending.front()); }
  bool empty() const override { return held.empty(); }
  void each_magnitude(const std::function<void(std::int64_t, double)>& f) const override {
    held.for_each([&](std::int64_t k, double d) { f(k, std::abs(d)); });
  }
  Bytes extract_records(const std::vector<std::int64_t>& keys) override {
    const std::vector<double> deltas = held.extract(keys);
    Bytes records(keys.size() * kRecordBytes);
    for (std::size_t j = 0; j < keys.size(); ++j) {
      std::memcpy(records.data() + j * kRecordBytes, &keys[j], sizeof(std::int64_t));
      std::memcpy(records.data() + j * kRecordBytes + sizeof(std::int64_t), &deltas[j], sizeof(double));
    }
    return records;
  }

  std::vector<DeltaSet<double>> pending;
  DeltaSet<double> held;
};

std::vector<std::pair<std::int64_t, double>> decode(const Bytes& records) {
  std::vector<std::pair<std::int64_t, double>> out(records.size() / DoubleOutboxSet::kRecordBytes);
  for (std::size_t j = 0; j < out.size(); ++j) {
    std::memcpy(&out[j].first, records.data() + j * DoubleOutboxSet::kRecordBytes, sizeof(std::int64_t));
    std::memcpy(&out[j].second, records.data() + j * DoubleOutboxSet::kRecordBytes + sizeof(std::int64_t),
                sizeof(double));
  }
  return out;
}

// One pump with room for exactly `fit` deltas to rank 1 (this is rank 0, which owns
// the even elements): which remote elements go, in which order.
struct PumpResult {
  std::vector<std::int64_t> remote;  // in the order sent
  std::vector<std::int64_t> local;
};

PumpResult pump_once(Priority order, const std::vector<std::pair<std::int64_t, double>>& deltas,
                     const std::map<std::int64_t, double>& cached, int fit, std::int64_t volume = 64) {
  constexpr std::size_t header = 24, delta = 16;
  // The bucket holds kBucketSeconds of budget: after a second it is full, with room
  // for one message's header and `fit` deltas (and half a byte to spare).
  const double budget = (static_cast<double>(header + static_cast<std::size_t>(fit) * delta) + 0.5) /
                        ManagedOutbox::kBucketSeconds;
  Consistency c;
  c.managed(budget, order);
  DoubleOutboxSet set(1, volume);
  ManagedOutbox box(set, 1, volume, c, header, delta, 7);
  const auto t0 = Clock::now();
  box.begin_run(t0);
  for (const auto& [k, d] : deltas) set.pending[0].add(k, d);
  box.take_from(0);
  PumpResult got;
  box.pump(
      t0 + std::chrono::seconds(1), 0,
      [&](std::int64_t k) -> std::optional<double> {
        auto it = cached.find(k);
        return it == cached.end() ? std::nullopt : std::optional<double>(it->second);
      },
      [](std::int64_t k) { return static_cast<int>(k % 2); },
      [&](int owner, std::int64_t clock, const Bytes& records) {
        EXPECT_EQ(clock, 0);
        const auto sent = decode(records);
        for (const auto& [k, d] : sent) (owner == 0 ? got.local : got.remote).push_back(k);
        return header + sent.size() * delta;
      });
  RelaxedStats stats;
  box.end_run(t0 + std::chrono::seconds(1), stats);
  EXPECT_EQ(stats.managed_bytes,
            got.remote.empty() ? 0 : static_cast<std::int64_t>(header + got.remote.size() * delta));
  EXPECT_EQ(stats.managed_deltas, static_cast<std::int64_t>(got.remote.size() + got.local.size()));
  return got;
}

TEST(ManagedOutbox, RelativeMagnitudeGoesFirstAndLocalDeltasAlwaysGo) {
  // Remote (odd) elements: |delta| and |delta / cached value| rank them differently.
  const std::vector<std::pair<std::int64_t, double>> deltas{
      {1, 10.0}, {3, 1.0}, {5, 0.5}, {7, -4.0}, {9, 0.01}, {2, 0.001}, {4, 5.0}};
  const std::map<std::int64_t, double> cached{{1, 1000.0}, {3, 2.0}, {5, 0.1}, {7, -8.0}, {9, 0.0}};
  // relative: 9 (value 0: infinite), 5 (5), then 3 and 7 (0.5 each: element order), 1 (0.01)
  auto got = pump_once(Priority::relative_magnitude, deltas, cached, 3);
  EXPECT_EQ(got.remote, (std::vector<std::int64_t>{9, 5, 3}));
  EXPECT_EQ(got.local, (std::vector<std::int64_t>{2, 4}));
  got = pump_once(Priority::absolute_magnitude, deltas, cached, 3);
  EXPECT_EQ(got.remote, (std::vector<std::int64_t>{1, 7, 3}));
  // An element not in the cache counts against a value of 1.
  got = pump_once(Priority::relative_magnitude, deltas, {}, 2);
  EXPECT_EQ(got.remote, (std::vector<std::int64_t>{1, 7}));
  // A budget whose tenth of a second buys no message still saves up for one delta.
  got = pump_once(Priority::relative_magnitude, deltas, cached, 0);
  EXPECT_EQ(got.remote, (std::vector<std::int64_t>{9}));
  EXPECT_EQ(got.local.size(), 2u);
}

TEST(ManagedOutbox, RoundRobinAndRandomOrders) {
  std::vector<std::pair<std::int64_t, double>> deltas;
  for (std::int64_t k = 1; k < 64; k += 2) deltas.emplace_back(k, 1.0);
  const auto rr = pump_once(Priority::round_robin, deltas, {}, 4);
  EXPECT_EQ(rr.remote, (std::vector<std::int64_t>{1, 3, 5, 7}));
  const auto random = pump_once(Priority::random, deltas, {}, 4);
  EXPECT_EQ(random.remote.size(), 4u);
  EXPECT_NE(random.remote, rr.remote);  // a fixed seed: this holds for these inputs
}

TEST(ManagedOutbox, PumpsAtMostOncePerPeriodAndOnlyDuringARun) {
  Consistency c;
  c.managed(1e6);
  DoubleOutboxSet set(2, 16);
  ManagedOutbox box(set, 2, 16, c, 24, 16, 1);
  int sends = 0;
  auto pump = [&](Clock::time_point at) {
    box.pump(
        at, 0, [](std::int64_t) { return std::optional<double>(1.0); }, [](std::int64_t) { return 1; },
        [&](int, std::int64_t, const Bytes& records) {
          ++sends;
          return 24 + records.size();
        });
  };
  const auto t0 = Clock::now();
  set.pending[0].add(1, 1.0);
  box.take_from(0);
  pump(t0 + std::chrono::seconds(1));
  EXPECT_EQ(sends, 0) << "no run: no pump";
  box.begin_run(t0);
  EXPECT_FALSE(box.wanted(0));
  pump(t0 + milliseconds(5));
  EXPECT_EQ(sends, 0) << "sooner than one period";
  pump(t0 + milliseconds(30));
  EXPECT_EQ(sends, 1);
  EXPECT_TRUE(box.wanted(0) && box.wanted(1)) << "every pump asks the threads for their deltas";
  set.pending[1].add(3, 2.0);
  box.take_from(1);
  EXPECT_FALSE(box.wanted(1));
  EXPECT_TRUE(box.wanted(0));
  // The end of the clock returns what is left to the first pending set, which the
  // flush then drains.
  std::vector<std::pair<std::int64_t, double>> rest;
  box.end_clock([&] {
    rest = set.pending[0].sorted();
    set.pending[0].clear();
  });
  EXPECT_TRUE(set.held.empty());
  EXPECT_EQ(rest, (std::vector<std::pair<std::int64_t, double>>{{3, 2.0}}));
  RelaxedStats stats;
  box.end_run(t0 + milliseconds(40), stats);
  ASSERT_EQ(stats.managed_timeline.size(), 1u);
  EXPECT_EQ(stats.managed_timeline[0], 40);
}

}  // namespace
}  // namespace strata::ps
