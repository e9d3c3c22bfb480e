// Relaxed arrays by rows: a Buffer over a row struct (DistArray<Vec, 1>), whole rows
// of a matrix added through add_row and read through a reader's read_row, and Hybrid
// on the writer's fast path. ctest runs these with 1, 2 and 4 ranks, 1 and 2 threads.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

#include "strata/buffer.hpp"
#include "strata/loop/accumulator.hpp"
#include "strata/loop/parallel_for.hpp"
#include "test_runtime.hpp"

namespace strata {
namespace {
using testing::rt;

// A row as an embedding model keeps it: a plain struct, summed with +=.
struct Vec {
  float v[50];
  Vec& operator+=(const Vec& o) {
    for (int j = 0; j < 50; ++j) v[j] += o.v[j];
    return *this;
  }
};

// The same row with a difference: a Hybrid table of it on several ranks runs as
// replicas, which send differences of rows (strata::Subtractable).
struct DiffVec {
  float v[50];
  DiffVec& operator+=(const DiffVec& o) {
    for (int j = 0; j < 50; ++j) v[j] += o.v[j];
    return *this;
  }
  DiffVec operator-(const DiffVec& o) const {
    DiffVec d;
    for (int j = 0; j < 50; ++j) d.v[j] = v[j] - o.v[j];
    return d;
  }
};

constexpr std::int64_t kRows = 37, kCols = 50;

// Iteration i adds (i % 7 + 1) * (j + 1) to column j of row (i * 5) % kRows: small
// integers, so float sums are exact in any order and the totals can be compared.
float delta_of(std::int64_t i, std::int64_t j) { return static_cast<float>((i % 7 + 1) * (j + 1)); }
std::int64_t row_of(std::int64_t i) { return i * 5 % kRows; }

std::vector<float> expected_sums(std::int64_t n, int passes) {
  std::vector<float> sums(static_cast<std::size_t>(kRows * kCols), 0.0f);
  for (int p = 0; p < passes; ++p)
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < kCols; ++j) sums[static_cast<std::size_t>(row_of(i) * kCols + j)] += delta_of(i, j);
  return sums;
}

// Hybrid and read-my-writes add a row with plain adds, as Hogwild does, into the
// array itself on one rank and into the rank's replica on several (when every rank
// reads most of the array): two threads adding to one row at once may lose one of the
// adds for good (docs/relaxed_rows.md). The owner path keeps every add.
// A replica per thread shares nothing between threads until the clock: no add is lost.
bool row_adds_may_race(const Consistency& c, const RelaxedStats& st) {
  return rt().threads() > 1 && c.folds() && !c.thread_replicas && (rt().size() == 1 || st.replica_clocks > 0);
}
// Whether a table of numbers ran as replicas: Hybrid or read-my-writes at staleness 0
// on several ranks, with every rank reading more than a quarter of the rows, or a
// replica per thread where there are several workers.
bool runs_as_replicas(const Consistency& c) {
  const bool several = rt().size() > 1 || (c.thread_replicas && rt().threads() > 1);
  return several && c.folds() && c.staleness == 0;
}
// Where a rank's threads fold their adds into its cache as they make them (Hybrid,
// read-my-writes), on any number of ranks, another thread's add may land between two
// reads of one iteration (the sums stay exact across ranks: the delta sets keep every add).
bool reads_see_other_threads_adds(const Consistency& c) {
  return rt().threads() > 1 && c.folds() && !c.thread_replicas;
}

// The sums after a pass: exactly `want`, or where row adds may race a part of it.
// Every delta is positive, so then an element holds at most its sum, and the losses
// of a few simultaneous adds stay far below half of all that was added.
void expect_sums(const std::vector<float>& got, const std::vector<float>& want, const Consistency& c,
                 const RelaxedStats& st, int pass) {
  ASSERT_EQ(got.size(), want.size());
  if (!row_adds_may_race(c, st)) {
    for (std::size_t k = 0; k < want.size(); ++k)
      ASSERT_EQ(got[k], want[k]) << "row " << k / kCols << " column " << k % kCols << " after pass " << pass;
    return;
  }
  double got_total = 0, want_total = 0;
  for (std::size_t k = 0; k < want.size(); ++k) {
    ASSERT_LE(got[k], want[k]) << "row " << k / kCols << " column " << k % kCols << " after pass " << pass;
    got_total += got[k];
    want_total += want[k];
  }
  EXPECT_GT(got_total, 0.5 * want_total) << "after pass " << pass;
}

DistArray<std::int64_t, 1> samples(std::int64_t n) {
  return DistArray<std::int64_t, 1>::generate(rt(), {n}, [](const Index<1>& i) { return i[0]; });
}

// A Buffer over a row struct compiles and works for a relaxed array, through the
// Buffer and through a writer, with reads of whole rows through the array and a reader.
template <class Row = Vec>
void check_row_struct(Consistency c) {
  const std::int64_t n = 600;
  auto space = samples(n);
  auto model = DistArray<Row, 1>::fill(rt(), {kRows}, Row{});
  Buffer buf(model, apply::sum(), c);
  std::atomic<std::int64_t> mismatches{0};
  for (int pass = 1; pass <= 2; ++pass) {
    parallel_for(space, [&](const Index<1>& i, std::int64_t) {
      const auto wr = model.reader();
      if (wr.read({row_of(i[0])}).v[3] != model.read({row_of(i[0])}).v[3]) ++mismatches;
      Row d;
      for (std::int64_t j = 0; j < kCols; ++j) d.v[j] = delta_of(i[0], j);
      if (i[0] % 2) buf.writer().add({row_of(i[0])}, d);
      else buf.add({row_of(i[0])}, d);
    });
    std::vector<float> got;
    for (const Row& row : model.gather()) got.insert(got.end(), row.v, row.v + kCols);
    expect_sums(got, expected_sums(n, pass), c, buf.stats(), pass);
  }
  if constexpr (subtractable_v<Row>) {
    EXPECT_EQ(buf.stats().replica_clocks, runs_as_replicas(c) ? buf.stats().clocks : 0);
  } else {
    EXPECT_EQ(buf.stats().replica_clocks, 0) << "a row struct without a difference keeps the owners' path";
  }
  // Where another thread's row adds land in what this thread reads as they are made,
  // two reads of one element in an iteration may see two values.
  if (!reads_see_other_threads_adds(c)) {
    EXPECT_EQ(mismatches.load(), 0);
  }
}

TEST(RelaxedRows, RowStructsUnderBsp) { check_row_struct(bsp().every(25)); }
TEST(RelaxedRows, RowStructsUnderSsp) { check_row_struct(ssp(2).every(10)); }
TEST(RelaxedRows, RowStructsUnderHybrid) { check_row_struct(hybrid().every(10)); }
TEST(RelaxedRows, RowStructsWithReadMyWrites) { check_row_struct(bsp().every(10).read_my_writes()); }
TEST(RelaxedRows, RowStructsWithADifferenceUnderHybrid) { check_row_struct<DiffVec>(hybrid().every(10)); }
TEST(RelaxedRows, RowStructsWithAReplicaPerThread) {
  check_row_struct<DiffVec>(hybrid().every(10).replica_per_thread());
}
TEST(RelaxedRows, RowStructsInAPlainBuffer) {
  const std::int64_t n = 300;
  auto space = samples(n);
  auto model = DistArray<Vec, 1>::fill(rt(), {kRows}, Vec{});
  Buffer buf(model);
  parallel_for(space, [&](const Index<1>& i, std::int64_t) {
    Vec d;
    for (std::int64_t j = 0; j < kCols; ++j) d.v[j] = delta_of(i[0], j);
    buf.writer().add({row_of(i[0])}, d);
  });
  const auto want = expected_sums(n, 1);
  const auto got = model.gather();
  for (std::int64_t r = 0; r < kRows; ++r)
    ASSERT_EQ(got[static_cast<std::size_t>(r)].v[49], want[static_cast<std::size_t>(r * kCols + 49)]);
}

// std::array rows need no operator+=: their deltas are summed component by component.
TEST(RelaxedRows, StdArrayRowsAreSummedByComponent) {
  auto space = samples(200);
  auto model = DistArray<std::array<float, 3>, 1>::fill(rt(), {5}, std::array<float, 3>{});
  Buffer buf(model, apply::sum(), bsp().every(7));
  parallel_for(space, [&](const Index<1>& i, std::int64_t) {
    buf.writer().add({i[0] % 5}, std::array<float, 3>{1.0f, 2.0f, static_cast<float>(i[0] % 5)});
  });
  for (std::int64_t r = 0; r < 5; ++r)
    EXPECT_EQ(model.gather()[static_cast<std::size_t>(r)], (std::array<float, 3>{40.0f, 80.0f, 40.0f * r}));
}

// A matrix's rows through add_row (the Buffer's and a writer's) and a writer's
// add_scaled_row sum exactly what per-element adds sum, and a reader's read_row is the
// array's read_row.
void check_matrix_rows(Consistency c) {
  const std::int64_t n = 600;
  auto space = samples(n);
  auto m = DistArray<float, 2>::zeros(rt(), {kRows, kCols});
  Buffer buf(m, apply::sum(), c);
  std::atomic<std::int64_t> wrong_sizes{0}, mismatches{0};
  for (int pass = 1; pass <= 2; ++pass) {
    parallel_for(space, [&](const Index<1>& i, std::int64_t) {
      const auto wr = m.reader();
      const auto row = wr.read_row(row_of(i[0]));
      const auto direct = m.read_row(row_of(i[0]));
      if (row.size() != static_cast<std::size_t>(kCols) || direct.size() != static_cast<std::size_t>(kCols))
        ++wrong_sizes;
      else if (row[7] != direct[7] || wr.read({row_of(i[0]), 7}) != row[7])
        ++mismatches;
      float d[kCols];
      for (std::int64_t j = 0; j < kCols; ++j) d[j] = delta_of(i[0], j);
      float x[kCols];  // d = (i % 7 + 1) * x, exactly
      for (std::int64_t j = 0; j < kCols; ++j) x[j] = static_cast<float>(j + 1);
      const auto wb = buf.writer();
      switch (i[0] % 4) {
        case 0: wb.add_row(row_of(i[0]), std::span<const float>(d, kCols)); break;
        case 1: buf.add_row(row_of(i[0]), std::span<const float>(d, kCols)); break;
        case 2:
          wb.add_scaled_row(row_of(i[0]), static_cast<float>(i[0] % 7 + 1), std::span<const float>(x, kCols));
          break;
        default:
          for (std::int64_t j = 0; j < kCols; ++j) wb.add({row_of(i[0]), j}, d[j]);
      }
    });
    expect_sums(m.gather(), expected_sums(n, pass), c, buf.stats(), pass);
  }
  EXPECT_EQ(wrong_sizes.load(), 0);
  EXPECT_EQ(buf.stats().replica_clocks, runs_as_replicas(c) ? buf.stats().clocks : 0);
  // Where another thread's row adds land in what this thread reads as they are made,
  // three reads of one element in an iteration may see three values.
  if (!reads_see_other_threads_adds(c)) {
    EXPECT_EQ(mismatches.load(), 0);
  }
}

TEST(RelaxedRows, MatrixRowsUnderBsp) { check_matrix_rows(bsp()); }
TEST(RelaxedRows, MatrixRowsUnderSspEveryTenIterations) { check_matrix_rows(ssp(1).every(10)); }
TEST(RelaxedRows, MatrixRowsUnderHybrid) { check_matrix_rows(hybrid().every(10)); }
TEST(RelaxedRows, MatrixRowsUnderHybridOneClockPerCall) { check_matrix_rows(hybrid()); }
TEST(RelaxedRows, MatrixRowsWithReadMyWrites) { check_matrix_rows(ssp(0).every(7).read_my_writes()); }
TEST(RelaxedRows, MatrixRowsWithAReplicaPerThread) { check_matrix_rows(hybrid().every(10).replica_per_thread()); }
TEST(RelaxedRows, MatrixRowsWithAReplicaPerThreadOneClockPerCall) {
  check_matrix_rows(bsp().read_my_writes().replica_per_thread());
}
TEST(RelaxedRows, MatrixRowsInAPlainBuffer) {
  const std::int64_t n = 300;
  auto space = samples(n);
  auto m = DistArray<float, 2>::zeros(rt(), {kRows, kCols});
  Buffer buf(m);
  parallel_for(space, [&](const Index<1>& i, std::int64_t) {
    float d[kCols];
    for (std::int64_t j = 0; j < kCols; ++j) d[j] = delta_of(i[0], j);
    buf.writer().add_row(row_of(i[0]), std::span<const float>(d, kCols));
  });
  EXPECT_EQ(m.gather(), expected_sums(n, 1));
}

// A row of the wrong length, or a row outside the matrix, is refused.
TEST(RelaxedRows, RowsThatDoNotFitAreRefused) {
  auto space = samples(40);
  auto m = DistArray<float, 2>::zeros(rt(), {kRows, kCols});
  Buffer buf(m, apply::sum(), bsp());
  const std::vector<float> short_row(kCols - 1, 1.0f), row(kCols, 1.0f);
  EXPECT_THROW(parallel_for(space, [&](const Index<1>&, std::int64_t) { buf.writer().add_row(0, short_row); }),
               ShapeError);
  EXPECT_THROW(parallel_for(space, [&](const Index<1>&, std::int64_t) { buf.writer().add_row(kRows, row); }),
               ShapeError);
  EXPECT_THROW(parallel_for(space, [&](const Index<1>&, std::int64_t) { buf.add_row(-1, row); }), ShapeError);
  EXPECT_THROW(
      parallel_for(space, [&](const Index<1>&, std::int64_t) { buf.writer().add_scaled_row(0, 2.0f, short_row); }),
      ShapeError);
  EXPECT_THROW(
      parallel_for(space, [&](const Index<1>&, std::int64_t) { buf.writer().add_scaled_row(kRows, 2.0f, row); }),
      ShapeError);
}

// Hybrid through a writer's row adds: a worker reads its own row's adds at once (the
// rank's cache), and every add arrives at the clock. Each worker owns one row.
TEST(RelaxedRows, HybridRowAddsAreReadAtOnce) {
  const int W = rt().size() * rt().threads();
  const std::int64_t K = 30;
  auto space = DistArray<std::int64_t, 1>::generate(rt(), {W * K}, [](const Index<1>& i) { return i[0]; });
  auto m = DistArray<float, 2>::zeros(rt(), {W, kCols});
  Buffer buf(m, apply::sum(), hybrid().every(4));
  std::atomic<std::int64_t> unseen{0};
  parallel_for(space, [&](const Index<1>& i, std::int64_t) {
    // Worker v runs iterations [v K, (v + 1) K) in order (as Relaxed.Hybrid* checks);
    // the row follows the iteration, so the reconnaissance records every worker's row.
    const std::int64_t v = i[0] / K, j = i[0] % K;
    const auto wr = m.reader();
    const float seen = wr.read_row(v)[kCols - 1];
    if (!detail::t_recording && seen != static_cast<float>(j)) ++unseen;  // reconnaissance adds nothing
    const std::vector<float> ones(kCols, 1.0f);
    buf.writer().add_row(v, ones);
  });
  EXPECT_EQ(buf.stats().dynamic_reads, 0);
  EXPECT_EQ(unseen.load(), 0);
  for (const float x : m.gather()) EXPECT_EQ(x, static_cast<float>(K));
}

// Read-my-writes on a small embedding-like problem: 16 rows of 8 floats fitted by
// SGD to targets row . context (32 fixed contexts), row 0 in half the samples, with a
// coarse clock (64 iterations over all workers per clock). Without read-my-writes a
// hot row takes some 30 steps from one stale value per clock and diverges; with it
// each worker (and its rank) steps from its own latest values and converges. (With
// much coarser clocks the ranks' summed moves overshoot even so: read-my-writes
// removes the staleness within a rank, not across ranks.)
double embedding_loss(bool read_my_writes) {
  constexpr std::int64_t R = 16, D = 8, C = 32, N = 4096;
  const int W = rt().size() * rt().threads();
  std::vector<float> ctx(static_cast<std::size_t>(C * D)), planted(static_cast<std::size_t>(R * D));
  for (std::size_t k = 0; k < ctx.size(); ++k) ctx[k] = (mix64(k + 1) & 1) ? 0.35355339f : -0.35355339f;
  for (std::size_t k = 0; k < planted.size(); ++k)
    planted[k] = static_cast<float>(CounterRng(7).uniform(k) * 2 - 1);
  struct Sample {
    std::int64_t a, b;
    float y;
  };
  auto space = DistArray<Sample, 1>::generate(rt(), {N}, [&](const Index<1>& i) {
    const auto h = mix64(static_cast<std::uint64_t>(i[0]) + 77);
    Sample s{(h & 1) ? 0 : static_cast<std::int64_t>((h >> 8) % R), static_cast<std::int64_t>((h >> 20) % C), 0};
    for (std::int64_t k = 0; k < D; ++k)
      s.y += planted[static_cast<std::size_t>(s.a * D + k)] * ctx[static_cast<std::size_t>(s.b * D + k)];
    return s;
  });
  auto m = DistArray<float, 2>::zeros(rt(), {R, D});
  Consistency c = bsp().every(std::max<std::int64_t>(1, 64 / W));
  if (read_my_writes) c.read_my_writes();
  Buffer buf(m, apply::sum(), c);
  Accumulator<double> loss(rt());
  double last = 0;
  for (int pass = 0; pass < 4; ++pass) {
    parallel_for(space, [&](const Index<1>&, const Sample& s) {
      const auto row = m.reader().read_row(s.a);
      const float* x = ctx.data() + s.b * D;
      float z = 0;
      for (std::int64_t k = 0; k < D; ++k) z += row[static_cast<std::size_t>(k)] * x[k];
      const float e = z - s.y;
      loss += 0.5 * e * e;
      float d[D];
      for (std::int64_t k = 0; k < D; ++k) d[k] = -0.3f * e * x[k];
      buf.writer().add_row(s.a, std::span<const float>(d, D));
    });
    last = loss.take() / N;
  }
  return last;
}

TEST(RelaxedRows, ReadMyWritesKeepsACoarseClockFromDiverging) {
  const double without = embedding_loss(false), with = embedding_loss(true);
  EXPECT_TRUE(!std::isfinite(without) || without > 1.0) << "without read-my-writes: " << without;
  EXPECT_LT(with, 1e-3) << "with read-my-writes: " << with;
}

TEST(RelaxedRows, ReadMyWritesNeedsASumBufferAndPrefetch) {
  auto w = DistArray<double, 1>::zeros(rt(), {8});
  EXPECT_THROW(Buffer(w, apply::adagrad(0.1), bsp().read_my_writes()), OptionError);
  EXPECT_THROW(Buffer(w, apply::sum(), ssp(1).read_my_writes().without_prefetch()), OptionError);
  Consistency managed = ssp(1).read_my_writes();
  managed.managed(1e6);
  EXPECT_THROW(Buffer(w, apply::sum(), Consistency(managed)), OptionError);
  EXPECT_NO_THROW(Buffer(w, apply::sum(), ssp(1).read_my_writes()));
}

// Read-my-writes under SSP: each worker adds 1 to its own row per iteration and
// reads it back. It must see every one of its adds at once, also after a clock whose
// cache takes an older clock of the owners' values (the rank folds its own later
// deltas back in); rows of other ranks lag by at most s clocks and never lead.
// Random sleeps, longer on odd ranks, make the ranks drift apart.
void check_own_writes_under_ssp(int s, bool matrix) {
  const int W = rt().size() * rt().threads();
  const std::int64_t K = 48, N = 4;
  auto space = DistArray<std::int64_t, 1>::generate(rt(), {W * K}, [](const Index<1>& i) { return i[0]; });
  auto m = DistArray<float, 2>::zeros(rt(), {W, matrix ? 3 : 1});
  Buffer buf(m, apply::sum(), ssp(s).every(N).read_my_writes());
  std::atomic<std::int64_t> wrong{0};
  for (int pass = 0; pass < 2; ++pass) {
    const auto before = static_cast<float>(pass * K);
    parallel_for(space, [&](const Index<1>& i, std::int64_t) {
      const std::int64_t v = i[0] / K, j = i[0] % K, t = current_clock();
      const auto h = mix64(static_cast<std::uint64_t>(i[0] * 7 + pass));
      if (h % 4 == 0) std::this_thread::sleep_for(std::chrono::microseconds((h >> 8) % (rt().rank() % 2 ? 300 : 40)));
      const auto r = m.reader();
      const float own = r.read_row(v)[0] - before;
      if (!detail::t_recording && own != static_cast<float>(j)) ++wrong;
      for (std::int64_t u = 0; u < W; ++u) {
        const float seen = r.read_row(u)[0] - before;
        if (!detail::t_recording && u / rt().threads() != rt().rank() &&
            (seen < static_cast<float>(std::max<std::int64_t>(0, (t - s) * N)) ||
             seen > static_cast<float>(std::min(t * N, K))))
          ++wrong;
      }
      const std::vector<float> ones(matrix ? 3 : 1, 1.0f);
      buf.writer().add_row(v, ones);
    });
    EXPECT_EQ(wrong.load(), 0) << "pass " << pass;
    for (const float x : m.gather()) EXPECT_EQ(x, static_cast<float>((pass + 1) * K));
  }
}

TEST(RelaxedRows, ReadMyWritesUnderSsp2SeesEveryOwnAdd) { check_own_writes_under_ssp(2, true); }
TEST(RelaxedRows, ReadMyWritesUnderSsp1SeesEveryOwnAdd) { check_own_writes_under_ssp(1, false); }

// Hybrid rows of floats whose sums round (deltas of 0.1 * (i % 13) + 1e-3 * j): with
// one thread a rank, the replicas' clocks give the same bits on every run, close to
// the exact sums; a pass that reads only a few rows of a large array keeps the owner
// path (no rank would cache it whole) and sums the same deltas.
std::vector<float> hybrid_float_rows(std::int64_t rows, std::int64_t read_rows, RelaxedStats* stats) {
  const std::int64_t n = 900;
  auto space = samples(n);
  auto m = DistArray<float, 2>::zeros(rt(), {rows, kCols});
  Buffer buf(m, apply::sum(), hybrid().every(9));
  for (int pass = 0; pass < 2; ++pass)
    parallel_for(space, [&](const Index<1>& i, std::int64_t) {
      const std::int64_t r = i[0] * 7 % read_rows;
      const auto row = m.reader().read_row(r);
      float d[kCols];
      for (std::int64_t j = 0; j < kCols; ++j)
        d[j] = 0.1f * static_cast<float>(i[0] % 13) + 1e-3f * static_cast<float>(j) + 1e-6f * row[0];
      buf.writer().add_row(r, std::span<const float>(d, kCols));
    });
  *stats = buf.stats();
  return m.gather();
}

TEST(RelaxedRows, HybridReplicasAreReproducibleAndKeepEveryAdd) {
  RelaxedStats first{}, second{}, sparse{};
  const auto a = hybrid_float_rows(kRows, kRows, &first);
  const auto b = hybrid_float_rows(kRows, kRows, &second);
  if (rt().threads() == 1) {
    EXPECT_EQ(a, b) << "one thread a rank: the same bits on every run";
  }
  EXPECT_EQ(first.replica_clocks, rt().size() > 1 ? first.clocks : 0);
  EXPECT_EQ(first.dynamic_reads, 0);
  const auto c = hybrid_float_rows(4000, kRows, &sparse);
  EXPECT_EQ(sparse.replica_clocks, 0) << "37 rows of 4000 read: no rank holds the whole array";
  double want_total = 0, got_total = 0, sparse_total = 0;
  for (std::int64_t i = 0; i < 900; ++i)
    for (std::int64_t j = 0; j < kCols; ++j)
      want_total += 2 * (0.1 * static_cast<double>(i % 13) + 1e-3 * static_cast<double>(j));
  for (const float x : a) got_total += x;
  for (const float x : c) sparse_total += x;
  // The 1e-6 * row[0] terms add well under 1e-3 of the total; lost Hogwild adds
  // (several threads) stay far below 10 %.
  const double tolerance = rt().threads() == 1 ? 2e-3 : 0.1;
  EXPECT_NEAR(got_total / want_total, 1.0, tolerance);
  EXPECT_NEAR(sparse_total / want_total, 1.0, tolerance);
}

// Where every rank's sampled reconnaissance already reads more than a quarter of a
// Hybrid matrix's rows, every rank will hold it whole, so the plan keeps its sample:
// no full reconnaissance on several ranks (a rank's cache otherwise needs its whole
// read set). A narrow sample still gets one there. Both sum every add.
TEST(RelaxedRows, WideHybridReadSetsKeepASampledReconnaissance) {
  const std::int64_t n = 4000;
  auto space = samples(n);
  LoopOptions sampled;
  sampled.recon_stride = 8;
  for (const std::int64_t rows : {kRows, std::int64_t{4000}}) {
    auto m = DistArray<float, 2>::zeros(rt(), {rows, kCols});
    Buffer buf(m, apply::sum(), hybrid().every(50));
    const LoopReport report = parallel_for(
        space,
        [&](const Index<1>& i, std::int64_t) {
          const std::int64_t r = row_of(i[0]);
          const float seen = m.reader().read_row(r)[0];
          float d[kCols];
          for (std::int64_t j = 0; j < kCols; ++j) d[j] = delta_of(i[0], j) + 0.0f * seen;
          buf.writer().add_row(r, std::span<const float>(d, kCols));
        },
        sampled);
    const bool wide = rows == kRows;
    EXPECT_EQ(report.recon_stride, wide || rt().size() == 1 ? 8 : 1) << rows << " rows";
    EXPECT_EQ(buf.stats().replica_clocks > 0, wide && rt().size() > 1) << rows << " rows";
    std::vector<float> got = m.gather();
    got.resize(static_cast<std::size_t>(kRows * kCols));  // rows past kRows stay 0
    const Consistency c = hybrid();
    expect_sums(got, expected_sums(n, 1), c, buf.stats(), 1);
  }
}

// A Hybrid table whose read set changes between calls: calls that read every row of a
// 3-D array of doubles run as replicas on several ranks, calls that read a few rows
// take the owner path, and the sums stay exact across the switches (element adds of
// small integers: every add arrives, atomically within a rank).
TEST(RelaxedRows, HybridSwitchesBetweenReplicasAndOwnersAsReadSetsChange) {
  constexpr std::int64_t A = 64, B = 2, C = 5, n = 600;
  auto space = samples(n);
  auto m = DistArray<double, 3>::zeros(rt(), {A, B, C});
  Buffer buf(m, apply::sum(), hybrid().every(5));
  std::vector<double> want(static_cast<std::size_t>(A * B * C), 0.0);
  for (int call = 0; call < 6; ++call) {
    const bool wide = call % 2 == 0;
    const auto row_of_call = [&](std::int64_t i) { return (i * 7 + call) % (wide ? A : 4); };
    const std::int64_t replica_before = buf.stats().replica_clocks;
    const auto body = [&](const Index<1>& i, std::int64_t) {
      const std::int64_t a = row_of_call(i[0]), b = i[0] % B;
      const double seen = m.reader().read({a, b, 0});
      const auto wb = buf.writer();
      for (std::int64_t c = 0; c < C; ++c) wb.add({a, b, c}, static_cast<double>((i[0] + c) % 5) + 0.0 * seen);
    };
    // Two loop sites: a site's read set is recorded once and only grows, so one site
    // would keep reading every row.
    if (wide) parallel_for(space, body);
    else parallel_for(space, body);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t c = 0; c < C; ++c)
        want[static_cast<std::size_t>((row_of_call(i) * B + i % B) * C + c)] += static_cast<double>((i + c) % 5);
    EXPECT_EQ(m.gather(), want) << "after call " << call;
    const bool replicated = buf.stats().replica_clocks > replica_before;
    EXPECT_EQ(replicated, wide && rt().size() > 1)
        << "call " << call << (wide ? " reads every row" : " reads 8 of 128");
  }
}

}  // namespace
}  // namespace strata
