// Skewed 2-D wavefronts on every rank (src/loop/wavefront_ranks.hpp): each rank runs
// its workers' rows of the iteration space, holding its band of the arrays whose rows
// follow them (and whole copies of the others), and passes what each time block wrote
// that a later rank reads on to the next rank. Every call must equal the serial loop bit for
// bit, on any ranks x threads, checked or not, and every rank must do its share.
// (The suite is ParallelFor so that CI's checked-mode run covers it.)
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "per_rank.hpp"
#include "strata/loop/parallel_for.hpp"
#include "test_runtime.hpp"

namespace strata {
namespace {
using testing::hashed_slot;
using testing::iterations_per_rank;
using testing::rt;

// On several ranks: the plan ran on all of them, not gathered on rank 0.
template <class Elem, std::size_t M>
void expect_on_every_rank(const DistArray<Elem, M>& space, const LoopReport& report) {
  EXPECT_EQ(report.strategy, analysis::Strategy::two_d_skewed) << report.explain();
  const auto per_rank = iterations_per_rank(space, report);
  if (rt().size() == 1) return;
  EXPECT_FALSE(report.gathered) << report.explain();
  EXPECT_NE(report.explain().find("wavefront across ranks"), std::string::npos) << report.explain();
  EXPECT_GT(report.bytes_moved, 0);
  for (std::size_t r = 0; r < per_rank.size(); ++r)
    EXPECT_GT(per_rank[r], 0) << "rank " << r << "\n" << report.explain();
}

TEST(ParallelFor, AWavefrontAcrossRanksEqualsTheSerialStencilAtEveryCall) {
  // A[i][j] += f(A[i-1][j], A[i][j-1], A[i-1][j+1]): vectors (1,0), (0,1), (1,-1), so
  // the plan skews j by i; three calls by one plan. Enough iterations (2^14 and more)
  // that the plan comes from a sample and its first run is checked.
  const std::int64_t n = 150, m = 120;
  auto A = DistArray<double, 2>::generate(
      rt(), {n, m}, [](const Index<2>& i) { return 0.01 * static_cast<double>(i[0] + 3 * i[1]); });
  A.set_name("A");
  std::vector<double> ref = A.gather();
  auto at = [&](std::int64_t a, std::int64_t b) -> double& {
    return ref[static_cast<std::size_t>(a * m + b)];
  };
  auto body = [&](const Index<2>& ij, double) {
    const auto i = ij[0], j = ij[1];
    if (i == 0 || j == 0 || j == m - 1) return;
    A.write(ij, 0.25 * (A.read({i - 1, j}) + A.read({i, j - 1}) + A.read({i - 1, j + 1})) +
                    0.5 * A.read(ij));
  };
  LoopOptions ordered;
  ordered.ordered = true;
  auto space = DistArray<double, 2>::zeros(rt(), {n, m});
  std::uint64_t plan_id = 0;
  for (int call = 0; call < 3; ++call) {
    const LoopReport report = parallel_for(space, body, ordered);
    expect_on_every_rank(space, report);
    EXPECT_GT(report.recon_stride, 1) << report.explain();
    if (call > 0) {
      EXPECT_EQ(report.plan_id, plan_id) << "a call planned anew: " << report.probe_failure;
    }
    plan_id = report.plan_id;
    for (std::int64_t i = 1; i < n; ++i)
      for (std::int64_t j = 1; j + 1 < m; ++j)
        at(i, j) = 0.25 * (at(i - 1, j) + at(i, j - 1) + at(i - 1, j + 1)) + 0.5 * at(i, j);
    ASSERT_EQ(A.gather(), ref) << "call " << call << "\n" << report.explain();
  }
}

// A dynamic programme over struct cells, unlike a stencil: writes only where a cell
// improves (so a tile writes some of its cells, and fewer at each call), reads of two
// read-only sequences along i and j and of a cost table at a data-dependent place,
// and a table that changes between calls.
struct Step {
  double best;
  std::int32_t improved;
  std::int32_t from;
};

// The programme's step, shared by the loop and its serial twin: whether `here` improves
// through its neighbours, and to what (`up_right` is absent in the last column).
bool improves(const Step& up, const Step& left, const Step& diag, const Step* up_right,
              const Step& here, double step, Step& next) {
  double best = std::min(up.best + 1, left.best + 1);
  std::int32_t from = up.best <= left.best ? 0 : 1;
  if (diag.best + step < best) best = diag.best + step, from = 2;
  if (up_right && up_right->best + 1.5 < best) best = up_right->best + 1.5, from = 3;
  if (!(best < here.best)) return false;
  next = Step{best, here.improved + 1, from};
  return true;
}

TEST(ParallelFor, AWavefrontAcrossRanksKeepsAProgrammeWithConditionalWritesOverStructs) {
  const std::int64_t n = 57, m = 41, costs = 16;
  auto a = DistArray<std::int64_t, 1>::generate(
      rt(), {n}, [](const Index<1>& i) { return hashed_slot(i[0], 4); });
  auto b = DistArray<std::int64_t, 1>::generate(
      rt(), {m}, [](const Index<1>& j) { return hashed_slot(j[0], 4, 99); });
  auto cost = DistArray<double, 1>::generate(
      rt(), {costs}, [](const Index<1>& k) { return 0.25 + 0.125 * double(k[0] % 7); });
  auto D = DistArray<Step, 2>::generate(rt(), {n, m}, [](const Index<2>& ij) {
    return Step{ij[0] == 0 || ij[1] == 0 ? double(ij[0] + ij[1]) : 1e9, 0, -1};
  });
  D.set_name("D");
  cost.set_name("cost");
  auto space = DistArray<std::int32_t, 2>::zeros(rt(), {n, m});
  const std::vector<std::int64_t> as = a.gather(), bs = b.gather();
  std::vector<Step> ref = D.gather();
  LoopOptions ordered;
  ordered.ordered = true;
  for (int call = 0; call < 3; ++call) {
    const std::vector<double> cs = cost.gather();
    const LoopReport report = parallel_for(
        space,
        [&](const Index<2>& ij, std::int32_t) {
          const auto i = ij[0], j = ij[1];
          if (i == 0 || j == 0) return;
          const double step = cost.read({a.read({i}) * 4 + b.read({j})});
          const Step up = D.read({i - 1, j});
          const Step left = D.read({i, j - 1});
          const Step diag = D.read({i - 1, j - 1});
          const Step here = D.read(ij);
          Step up_right{}, next{};
          if (j + 1 < m) up_right = D.read({i - 1, j + 1});
          if (improves(up, left, diag, j + 1 < m ? &up_right : nullptr, here, step, next))
            D.write(ij, next);
        },
        ordered);
    expect_on_every_rank(space, report);
    auto cell = [&](std::int64_t x, std::int64_t y) -> Step& {
      return ref[static_cast<std::size_t>(x * m + y)];
    };
    for (std::int64_t i = 1; i < n; ++i)
      for (std::int64_t j = 1; j < m; ++j) {
        const double step = cs[static_cast<std::size_t>(as[static_cast<std::size_t>(i)] * 4 +
                                                        bs[static_cast<std::size_t>(j)])];
        Step next{};
        if (improves(cell(i - 1, j), cell(i, j - 1), cell(i - 1, j - 1),
                     j + 1 < m ? &cell(i - 1, j + 1) : nullptr, cell(i, j), step, next))
          cell(i, j) = next;
      }
    const std::vector<Step> got = D.gather();
    ASSERT_EQ(got.size(), ref.size());
    EXPECT_EQ(std::memcmp(got.data(), ref.data(), got.size() * sizeof(Step)), 0)
        << "call " << call << "\n"
        << report.explain();
    // Cheaper diagonal steps for the next call: some cells improve, most do not.
    parallel_for(cost, [&](const Index<1>& k, double& c) { c *= k[0] % 3 == 0 ? 0.5 : 1.0; });
  }
}

TEST(ParallelFor, AWavefrontAcrossRanksPassesOnDeepHalosAndATransposedArray) {
  // A[i][j] reads four rows up (deeper than a worker's band at 4 ranks x 2 threads, so
  // those writes are logged rather than copied by rows), and Bt[j][i] is stored the
  // other way round: its rows follow the time dimension, so every rank holds it whole
  // and its writes pass on element by element and come back from the last rank.
  const std::int64_t n = 26, m = 40;
  auto A = DistArray<double, 2>::generate(
      rt(), {n, m}, [](const Index<2>& i) { return double((i[0] * 5 + i[1]) % 9); });
  auto Bt = DistArray<double, 2>::generate(
      rt(), {m, n}, [](const Index<2>& i) { return double((i[0] + 3 * i[1]) % 7); });
  A.set_name("A");
  Bt.set_name("Bt");
  auto space = DistArray<float, 2>::zeros(rt(), {n, m});
  std::vector<double> ref = A.gather(), ref_t = Bt.gather();
  auto at = [&](std::int64_t a, std::int64_t b) -> double& {
    return ref[static_cast<std::size_t>(a * m + b)];
  };
  auto at_t = [&](std::int64_t b, std::int64_t a) -> double& {
    return ref_t[static_cast<std::size_t>(b * n + a)];
  };
  LoopOptions ordered;
  ordered.ordered = true;
  for (int call = 0; call < 3; ++call) {
    const LoopReport report = parallel_for(
        space,
        [&](const Index<2>& ij, float) {
          const auto i = ij[0], j = ij[1];
          if (i < 4 || j == 0 || j == m - 1) return;
          const double v =
              0.5 * A.read({i - 1, j}) + 0.25 * A.read({i, j - 1}) + 0.125 * A.read({i - 4, j + 1});
          A.write(ij, v);
          Bt.write({j, i}, 0.5 * Bt.read({j, i - 1}) + 0.25 * Bt.read({j - 1, i}) + 0.01 * v);
        },
        ordered);
    expect_on_every_rank(space, report);
    if (rt().size() > 1) {
      const std::string e = report.explain();
      EXPECT_NE(e.find("its rows follow the space dimension"), std::string::npos) << e;
      EXPECT_NE(e.find("copied whole to every rank for a call; its writes pass"), std::string::npos)
          << e;
    }
    for (std::int64_t i = 4; i < n; ++i)
      for (std::int64_t j = 1; j + 1 < m; ++j) {
        at(i, j) = 0.5 * at(i - 1, j) + 0.25 * at(i, j - 1) + 0.125 * at(i - 4, j + 1);
        at_t(j, i) = 0.5 * at_t(j, i - 1) + 0.25 * at_t(j - 1, i) + 0.01 * at(i, j);
      }
    ASSERT_EQ(A.gather(), ref) << "call " << call << "\n" << report.explain();
    ASSERT_EQ(Bt.gather(), ref_t) << "call " << call << "\n" << report.explain();
  }
}

TEST(ParallelFor, AWavefrontAcrossRanksTakesTheSkewWhoseSpacePartsAreRanges) {
  // colmax[j], written by every row, makes the planner skew with j as the space
  // dimension (a = j + i); across ranks it takes the same skew with i as the space
  // dimension (a = i), so that the ranks' parts are ranges of rows. A also reads the
  // row below (i + 1): a halo above the band, read before that row's rank writes it.
  const std::int64_t n = 30, m = 40;
  auto A = DistArray<double, 2>::generate(
      rt(), {n, m}, [](const Index<2>& i) { return double((i[0] * 5 + i[1]) % 9); });
  auto colmax = DistArray<double, 1>::fill(rt(), {m}, -1.0);
  A.set_name("A");
  colmax.set_name("colmax");
  auto space = DistArray<float, 2>::zeros(rt(), {n, m});
  std::vector<double> ref = A.gather(), ref_max = colmax.gather();
  auto at = [&](std::int64_t a, std::int64_t b) -> double& {
    return ref[static_cast<std::size_t>(a * m + b)];
  };
  LoopOptions ordered;
  ordered.ordered = true;
  for (int call = 0; call < 3; ++call) {
    const LoopReport report = parallel_for(
        space,
        [&](const Index<2>& ij, float) {
          const auto i = ij[0], j = ij[1];
          if (i == 0 || i == n - 1 || j == 0) return;
          const double v =
              0.5 * A.read({i - 1, j}) + 0.25 * A.read({i, j - 1}) + 0.125 * A.read({i + 1, j - 1});
          A.write(ij, v);
          if (v > colmax.read({j})) colmax.write({j}, v);
        },
        ordered);
    expect_on_every_rank(space, report);
    if (rt().size() > 1) {
      const std::string e = report.explain();
      EXPECT_NE(e.find("across ranks the same skew is taken"), std::string::npos) << e;
      EXPECT_NE(e.find("(1 row(s) below, 1 above"), std::string::npos) << e;
      EXPECT_NE(e.find("array colmax: copied whole to every rank"), std::string::npos) << e;
    }
    for (std::int64_t i = 1; i + 1 < n; ++i)
      for (std::int64_t j = 1; j < m; ++j) {
        at(i, j) = 0.5 * at(i - 1, j) + 0.25 * at(i, j - 1) + 0.125 * at(i + 1, j - 1);
        auto& c = ref_max[static_cast<std::size_t>(j)];
        if (at(i, j) > c) c = at(i, j);
      }
    ASSERT_EQ(A.gather(), ref) << "call " << call << "\n" << report.explain();
    ASSERT_EQ(colmax.gather(), ref_max) << "call " << call << "\n" << report.explain();
  }
}

TEST(ParallelFor, ABodyThatThrowsInAWavefrontAcrossRanksFailsOnEveryRank) {
  // After a first call plans the loop, one iteration, on the last rank, throws during a
  // run: its rank stops running tiles but goes on passing blocks, and every rank raises
  // the error (none waits for the timeout). The next call by the same plan runs.
  const std::int64_t n = 40, m = 30;
  auto A = DistArray<double, 2>::fill(rt(), {n, m}, 1.0);
  auto space = DistArray<float, 2>::zeros(rt(), {n, m});
  LoopOptions ordered;
  ordered.ordered = true;
  bool fail = false;
  auto call = [&] {
    return parallel_for(
        space,
        [&](const Index<2>& ij, float) {
          const auto i = ij[0], j = ij[1];
          if (i == 0 || j == 0 || j == m - 1) return;
          if (fail && i == n - 2 && j == m / 2) throw std::runtime_error("cell out of range");
          A.write(ij, 0.5 * (A.read({i - 1, j + 1}) + A.read({i, j - 1})));
        },
        ordered);
  };
  std::vector<double> ref(static_cast<std::size_t>(n * m), 1.0);
  auto serial_call = [&] {
    for (std::int64_t i = 1; i < n; ++i)
      for (std::int64_t j = 1; j + 1 < m; ++j)
        ref[static_cast<std::size_t>(i * m + j)] =
            0.5 * (ref[static_cast<std::size_t>((i - 1) * m + j + 1)] +
                   ref[static_cast<std::size_t>(i * m + j - 1)]);
  };
  const std::uint64_t plan_id = call().plan_id;
  serial_call();
  EXPECT_EQ(A.gather(), ref);
  fail = true;
  const auto start = std::chrono::steady_clock::now();
  try {
    call();
    ADD_FAILURE() << "the body's error was not raised";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("cell out of range"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10.0);
  fail = false;
  parallel_for(A, [](const Index<2>&, double& v) { v = 1.0; });
  std::fill(ref.begin(), ref.end(), 1.0);
  const LoopReport report = call();
  expect_on_every_rank(space, report);
  EXPECT_EQ(report.plan_id, plan_id) << report.probe_failure;
  serial_call();
  EXPECT_EQ(A.gather(), ref);
}

TEST(ParallelFor, AWavefrontOverItsOwnSpaceIsGatheredAcrossRanks) {
  // The body reads and writes the iteration space itself, which is cut among the
  // ranks by the plan: it cannot also be whole on every rank, so rank 0 runs it.
  const std::int64_t n = 30, m = 26;
  auto A = DistArray<double, 2>::generate(
      rt(), {n, m}, [](const Index<2>& i) { return double(i[0] * m + i[1]) * 1e-3; });
  std::vector<double> ref = A.gather();
  LoopOptions ordered;
  ordered.ordered = true;
  const LoopReport report = parallel_for(
      A,
      [&](const Index<2>& ij, double) {
        const auto i = ij[0], j = ij[1];
        if (i == 0 || j == 0 || j == m - 1) return;
        A.write(ij, A.read({i - 1, j + 1}) - 0.5 * A.read({i, j - 1}) + A.read(ij));
      },
      ordered);
  EXPECT_EQ(report.strategy, analysis::Strategy::two_d_skewed) << report.explain();
  EXPECT_EQ(report.gathered, rt().size() > 1) << report.explain();
  for (std::int64_t i = 1; i < n; ++i)
    for (std::int64_t j = 1; j + 1 < m; ++j) {
      auto at = [&](std::int64_t x, std::int64_t y) -> double& {
        return ref[static_cast<std::size_t>(x * m + y)];
      };
      at(i, j) = at(i - 1, j + 1) - 0.5 * at(i, j - 1) + at(i, j);
    }
  EXPECT_EQ(A.gather(), ref);
}

}  // namespace
}  // namespace strata
