// sync_for, the mini-batch loop: a linear regression trained with model averaging,
// summed deltas and a user's combining function equals, bit for bit, a serial twin
// that plays every worker's mini-batch in turn; bad uses are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "strata/buffer.hpp"
#include "strata/loop/accumulator.hpp"
#include "strata/sync_for.hpp"
#include "sync_twin.hpp"
#include "test_runtime.hpp"

namespace strata {
namespace {
using testing::rt;

constexpr std::int64_t kFeatures = 6, kSamples = 250;
constexpr double kLr = 0.05;

double x_of(std::int64_t i, std::int64_t f) {
  return static_cast<double>(static_cast<std::int64_t>(mix64(static_cast<std::uint64_t>(i * 31 + f)) % 17) - 8) / 8;
}
double y_of(std::int64_t i) {
  double y = 0.5;
  for (std::int64_t f = 0; f < kFeatures; ++f) y += x_of(i, f) * static_cast<double>(f - 2);
  return y;
}

// One SGD step of least squares on sample i, on a model given as plain vectors.
void step(std::int64_t i, std::vector<double>& w, double& b) {
  double pred = b;
  for (std::int64_t f = 0; f < kFeatures; ++f) pred += w[static_cast<std::size_t>(f)] * x_of(i, f);
  const double err = pred - y_of(i);
  for (std::int64_t f = 0; f < kFeatures; ++f) w[static_cast<std::size_t>(f)] -= kLr * err * x_of(i, f);
  b -= kLr * err;
}

enum class How { average, sum, largest };

double largest(std::span<const double> d) {
  double best = 0;
  for (const double v : d)
    if (std::abs(v) > std::abs(best)) best = v;
  return best;
}

// The serial twin: workers are (rank, thread) pairs, rank-major; a rank's samples
// are those of its part of the space, split among its threads in contiguous runs.
struct Model {
  std::vector<double> w;
  double b = 0;
};
Model twin(const DistArray<std::int64_t, 1>& space, int epochs, std::int64_t batch, How how) {
  const int R = rt().size(), T = rt().threads();
  const auto of_worker = testing::sync_work_of(space, kSamples, T);
  std::int64_t most = 0;
  for (const auto& work : of_worker) most = std::max<std::int64_t>(most, static_cast<std::int64_t>(work.size()));
  Model m{std::vector<double>(kFeatures, 0.0), 0};
  const auto size = static_cast<std::size_t>(kFeatures) + 1;  // w, then b
  for (int e = 0; e < epochs; ++e)
    for (std::int64_t from = 0; from < most; from += batch) {
      std::vector<std::vector<double>> deltas;  // per active worker
      for (const auto& work : of_worker) {
        if (from >= static_cast<std::int64_t>(work.size())) {
          deltas.emplace_back();
          continue;
        }
        Model c = m;
        for (std::int64_t k = from; k < std::min<std::int64_t>(from + batch, static_cast<std::int64_t>(work.size())); ++k)
          step(work[static_cast<std::size_t>(k)], c.w, c.b);
        std::vector<double> d(size);
        for (std::size_t f = 0; f < size - 1; ++f) d[f] = c.w[f] - m.w[f];
        d[size - 1] = c.b - m.b;
        deltas.push_back(d);
      }
      std::vector<double> update(size, 0.0);
      int active = 0;
      for (const auto& d : deltas) active += !d.empty();
      for (std::size_t k = 0; k < size; ++k) {
        if (how == How::largest) {
          std::vector<double> each;
          for (const auto& d : deltas)
            if (!d.empty()) each.push_back(d[k]);
          update[k] = largest(each);
          continue;
        }
        for (int r = 0; r < R; ++r) {  // threads within a rank, then ranks
          double s = 0;
          for (int t = 0; t < T; ++t) {
            const auto& d = deltas[static_cast<std::size_t>(r * T + t)];
            s += d.empty() ? 0.0 : d[k];
          }
          update[k] += s;
        }
        if (how == How::average) update[k] /= active;
      }
      for (std::size_t f = 0; f < size - 1; ++f) m.w[f] += update[f];
      m.b += update[size - 1];
    }
  return m;
}

void check_against_twin(How how, std::int64_t batch) {
  auto space = DistArray<std::int64_t, 1>::generate(rt(), {kSamples}, [](const Index<1>& i) { return i[0]; });
  auto w = DistArray<double, 1>::zeros(rt(), {kFeatures}).set_name("w");
  auto b = DistArray<double, 1>::zeros(rt(), {1}).set_name("b");
  auto body = [&](const Index<1>&, std::int64_t i) {
    double pred = b.read({0});
    for (std::int64_t f = 0; f < kFeatures; ++f) pred += w.read({f}) * x_of(i, f);
    const double err = pred - y_of(i);
    for (std::int64_t f = 0; f < kFeatures; ++f) w({f}) -= kLr * err * x_of(i, f);
    b({0}) -= kLr * err;
  };
  const int epochs = 3;
  SyncReport st;
  for (int e = 0; e < epochs; ++e) {
    if (how == How::largest) st = sync_for(space, body, {.batch = batch}, synced(w, largest), synced(b, largest));
    else {
      const Combine c = how == How::average ? Combine::average : Combine::sum;
      st = sync_for(space, body, {.batch = batch}, synced(w, c), synced(b, c));
    }
  }
  const Model want = twin(space, epochs, batch, how);
  EXPECT_EQ(w.gather(), want.w) << "batch " << batch;
  EXPECT_EQ(b.gather(), std::vector<double>{want.b}) << "batch " << batch;
  const std::int64_t per_worker = (kSamples / rt().size() + rt().threads() - 1) / rt().threads();
  EXPECT_GE(st.batches, (per_worker + batch - 1) / batch);
  if (rt().size() > 1) {
    EXPECT_GT(st.bytes_sent, 0);
  }
}

TEST(SyncFor, ModelAveragingMatchesTheSerialTwinBitForBit) {
  check_against_twin(How::average, 1);  // workers with one iteration less sit out the last mini-batch
  check_against_twin(How::average, 8);
  check_against_twin(How::average, 1000);  // one mini-batch per call
}

TEST(SyncFor, SummedDeltasMatchTheSerialTwinBitForBit) { check_against_twin(How::sum, 5); }

TEST(SyncFor, AUsersCombiningFunctionMatchesTheSerialTwinBitForBit) { check_against_twin(How::largest, 7); }

TEST(SyncFor, TheModelLearns) {
  auto space = DistArray<std::int64_t, 1>::generate(rt(), {kSamples}, [](const Index<1>& i) { return i[0]; });
  auto w = DistArray<double, 1>::zeros(rt(), {kFeatures});
  auto b = DistArray<double, 1>::zeros(rt(), {1});
  Accumulator<double> loss(rt());
  auto body = [&](const Index<1>&, std::int64_t i) {
    double pred = b.read({0});
    for (std::int64_t f = 0; f < kFeatures; ++f) pred += w.read({f}) * x_of(i, f);
    const double err = pred - y_of(i);
    loss += err * err;
    for (std::int64_t f = 0; f < kFeatures; ++f) w({f}) -= kLr * err * x_of(i, f);
    b({0}) -= kLr * err;
  };
  double first = 0, last = 0;
  for (int e = 0; e < 30; ++e) {
    sync_for(space, body, {.batch = 4}, synced(w), synced(b));
    last = loss.take() / kSamples;
    if (e == 0) first = last;
  }
  EXPECT_LT(last, first / 100) << "first epoch " << first << ", last " << last;
  const auto got = w.gather();
  for (std::int64_t f = 0; f < kFeatures; ++f) EXPECT_NEAR(got[static_cast<std::size_t>(f)], static_cast<double>(f - 2), 0.05);
}

TEST(SyncFor, OtherArraysAreReadAndBufferedButNotWritten) {
  auto space = DistArray<std::int64_t, 1>::generate(rt(), {40}, [](const Index<1>& i) { return i[0]; });
  auto w = DistArray<double, 1>::zeros(rt(), {4});
  auto weight = DistArray<double, 1>::fill(rt(), {40}, 2.0);  // partitioned like the space
  auto counts = DistArray<std::int64_t, 1>::zeros(rt(), {4});
  Buffer buf(counts);
  sync_for(space, [&](const Index<1>&, std::int64_t i) {
    w({i % 4}) += weight.read({i});  // another array, read where this rank holds it
    buf.add({i % 4}, 1);
  }, {.batch = 3}, synced(w, Combine::sum));
  buf.flush();
  EXPECT_EQ(w.gather(), std::vector<double>(4, 20.0));
  EXPECT_EQ(counts.gather(), std::vector<std::int64_t>(4, 10));
  EXPECT_THROW(sync_for(space, [&](const Index<1>&, std::int64_t i) { counts({i % 4}) += 1; }, {}, synced(w)),
               OptionError);
  EXPECT_EQ(counts.gather(), std::vector<std::int64_t>(4, 10)) << "the refused write did not happen";
}

TEST(SyncFor, BadUsesAreRefused) {
  auto space = DistArray<std::int64_t, 1>::generate(rt(), {20}, [](const Index<1>& i) { return i[0]; });
  auto w = DistArray<double, 1>::zeros(rt(), {4});
  auto noop = [](const Index<1>&, std::int64_t) {};
  EXPECT_THROW(sync_for(space, noop, {.batch = 0}, synced(w)), OptionError);
  EXPECT_THROW(sync_for(space, noop, {}, synced(w), synced(w)), OptionError);
  auto weights = DistArray<double, 1>::zeros(rt(), {20});
  EXPECT_THROW(sync_for(weights, [](const Index<1>&, double) {}, {}, synced(weights)), OptionError);
  auto sparse = DistArray<double, 1>::sparse(rt(), {10}, {});
  EXPECT_THROW(synced(sparse), OptionError);
  EXPECT_THROW(sync_for(space, [&](const Index<1>&, std::int64_t) { (void)w.read({9}); }, {}, synced(w)), ShapeError);
  // A body that throws on one rank fails the call on every rank; the model keeps the
  // mini-batches completed before.
  EXPECT_THROW(sync_for(space, [&](const Index<1>&, std::int64_t i) {
    w({0}) += 1;
    if (i == 19) throw std::runtime_error("boom");
  }, {.batch = 1}, synced(w, Combine::sum)), std::exception);
  EXPECT_GT(w.gather()[0], 0.0);
}

}  // namespace
}  // namespace strata
