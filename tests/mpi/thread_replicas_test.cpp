// A replica per thread (Consistency::replica_per_thread): every worker reads and adds
// into a copy of its own, sees its own adds at once and the others' at the clock, no
// add is lost, and a run equals, bit for bit, a serial program that keeps the same
// copies and merges them the documented way (docs/relaxed_rows.md).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

#include "strata/buffer.hpp"
#include "strata/loop/parallel_for.hpp"
#include "test_runtime.hpp"

namespace strata {
namespace replica_tests {  // the unity build puts this file beside relaxed_rows_test.cpp
namespace {
using testing::rt;

constexpr std::int64_t kCols = 8;

DistArray<std::int64_t, 1> iterations(std::int64_t n) {
  return DistArray<std::int64_t, 1>::generate(rt(), {n}, [](const Index<1>& i) { return i[0]; });
}

// One hot counter: worker v runs iterations [v K, (v + 1) K) in order (as the Hybrid
// tests rely on), a clock every E of them. Its k-th iteration reads what every worker
// added in the clocks before its own and its own adds of this clock: nothing of the
// other workers' adds of this clock.
TEST(ThreadReplicas, AWorkerSeesItsOwnAddsAtOnceAndTheOthersAtTheClock) {
  const int W = rt().size() * rt().threads();
  const std::int64_t K = 60, E = 7;
  auto space = iterations(W * K);
  auto counter = DistArray<float, 1>::zeros(rt(), {1});
  Buffer buf(counter, apply::sum(), hybrid().every(E).replica_per_thread());
  std::atomic<std::int64_t> wrong{0};
  for (int pass = 0; pass < 2; ++pass) {
    parallel_for(space, [&](const Index<1>& i, std::int64_t) {
      const std::int64_t k = i[0] % K, clock = k / E;
      const float want = static_cast<float>(pass * W * K + clock * E * W + (k - clock * E));
      const float seen = counter.reader().read({0});  // read while recording too: the plan covers it
      if (!detail::t_recording && seen != want) ++wrong;  // reconnaissance adds nothing
      buf.writer().add({0}, 1.0f);
    });
    EXPECT_EQ(counter.gather()[0], static_cast<float>((pass + 1) * W * K)) << "every add arrives";
  }
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(buf.stats().replica_clocks, W > 1 ? buf.stats().clocks : 0);
}

// The serial twin of a run with a replica per thread: worker w = rank * T + thread
// keeps replica w; at a clock each rank sums its replicas' differences from the
// snapshot in thread order (a unit only replicas that changed it), the snapshot adds
// the ranks' sums in rank order (on one rank, a unit one thread alone changed takes
// that thread's value), and every replica takes the snapshot.
struct ReplicaTwin {
  int ranks, threads;
  std::int64_t rows;
  std::vector<float> snapshot;
  std::vector<std::vector<float>> replicas;

  ReplicaTwin(int r, int t, std::int64_t n) : ranks(r), threads(t), rows(n) {
    snapshot.assign(static_cast<std::size_t>(rows * kCols), 0.0f);
    replicas.assign(static_cast<std::size_t>(r * t), snapshot);
  }
  float* row(int w, std::int64_t u) { return replicas[static_cast<std::size_t>(w)].data() + u * kCols; }
  void clock() {
    // Every rank's sum is of differences from the snapshot as the clock began.
    const std::vector<float> before = snapshot;
    for (int q = 0; q < ranks; ++q) {
      for (std::int64_t u = 0; u < rows; ++u) {
        const float* snap = before.data() + u * kCols;
        float sum[kCols];
        int changers = 0, sole = -1;
        for (int t = 0; t < threads; ++t) {
          const int w = q * threads + t;
          const float* now = row(w, u);
          if (std::memcmp(now, snap, sizeof(float) * kCols) == 0) continue;
          for (std::int64_t j = 0; j < kCols; ++j) {
            const float d = now[j] - snap[j];
            sum[j] = changers == 0 ? d : sum[j] + d;
          }
          ++changers;
          sole = w;
        }
        if (changers == 0) continue;
        if (ranks == 1 && changers == 1) {
          std::memcpy(snapshot.data() + u * kCols, row(sole, u), sizeof(float) * kCols);
        } else {
          for (std::int64_t j = 0; j < kCols; ++j) snapshot[static_cast<std::size_t>(u * kCols + j)] += sum[j];
        }
      }
    }
    for (auto& r : replicas) r = snapshot;
  }
};

// A step that reads its row: the deltas round, so only the same sums in the same
// order give the same bits.
void step(std::int64_t i, const float* row, float* d) {
  for (std::int64_t j = 0; j < kCols; ++j)
    d[j] = 0.1f * static_cast<float>(i % 13) + 1e-3f * static_cast<float>(j) - 0.01f * row[(j + 1) % kCols];
}
std::int64_t row_of(std::int64_t i, std::int64_t rows) { return (i * 7 + i / 5) % rows; }

TEST(ThreadReplicas, ARunEqualsItsSerialTwinBitForBit) {
  const int W = rt().size() * rt().threads();
  const std::int64_t K = 90, E = 11, rows = 13;  // few rows: every clock, workers share rows
  auto space = iterations(W * K);
  auto m = DistArray<float, 2>::zeros(rt(), {rows, kCols});
  Buffer buf(m, apply::sum(), hybrid().every(E).replica_per_thread());
  ReplicaTwin twin(rt().size(), rt().threads(), rows);
  for (int pass = 0; pass < 3; ++pass) {
    parallel_for(space, [&](const Index<1>& i, std::int64_t) {
      const std::int64_t r = row_of(i[0], rows);
      float d[kCols];
      step(i[0], m.reader().read_row(r).data(), d);
      buf.writer().add_row(r, std::span<const float>(d, kCols));
    });
    for (std::int64_t c = 0; c * E < K; ++c) {
      for (int w = 0; w < W; ++w)
        for (std::int64_t k = c * E; k < std::min(K, (c + 1) * E); ++k) {
          const std::int64_t i = w * K + k, r = row_of(i, rows);
          float d[kCols];
          step(i, twin.row(w, r), d);
          for (std::int64_t j = 0; j < kCols; ++j) twin.row(w, r)[j] += d[j];
        }
      twin.clock();
    }
    const auto got = m.gather();
    ASSERT_EQ(got.size(), twin.snapshot.size());
    for (std::size_t k = 0; k < got.size(); ++k)
      ASSERT_EQ(got[k], twin.snapshot[k]) << "row " << k / kCols << " column " << k % kCols << " after pass " << pass;
  }
}

// Where a replica per thread cannot serve, the Buffer says so when it is made.
struct NoDifference {
  float v[4];
  NoDifference& operator+=(const NoDifference& o) {
    for (int j = 0; j < 4; ++j) v[j] += o.v[j];
    return *this;
  }
};

TEST(ThreadReplicas, AreRefusedWhereTheyCannotServe) {
  auto m = DistArray<float, 2>::zeros(rt(), {4, kCols});
  EXPECT_THROW(Buffer(m, apply::sum(), bsp().every(3).replica_per_thread()), OptionError)
      << "replicas take adds as they are made: Hybrid or read-my-writes";
  EXPECT_THROW(Buffer(m, apply::sum(), ssp(1).read_my_writes().replica_per_thread()), OptionError)
      << "replicas merge at every clock: staleness 0";
  auto rows = DistArray<NoDifference, 1>::fill(rt(), {4}, NoDifference{});
  EXPECT_THROW(Buffer(rows, apply::sum(), hybrid().replica_per_thread()), OptionError)
      << "a replica's changes travel as differences";
  Buffer fine(m, apply::sum(), bsp().every(3).read_my_writes().replica_per_thread());
  EXPECT_EQ(fine.pending(), 0u);
}

}  // namespace
}  // namespace replica_tests
}  // namespace strata
