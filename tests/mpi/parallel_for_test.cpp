// parallel_for against serial twins: the parallel result must equal, bit for bit, the
// serial execution of the plan's equivalent order (ctest runs this with 1, 2 and 4
// ranks; the test runtime has 2 threads per rank, STRATA_THREADS=1 runs give 1).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "loop/inspect.hpp"  // plans and schedules behind the reports (not API)
#include "strata/loop/parallel_for.hpp"
#include "test_runtime.hpp"

namespace strata {
namespace {
using testing::rt;

constexpr int kRank = 8;

// The SGD step shared by the Strata body and the serial twin.
inline void sgd_step(float* w, float* h, float r, float lr, float reg) {
  float e = r;
  for (int k = 0; k < kRank; ++k) e -= w[k] * h[k];
  for (int k = 0; k < kRank; ++k) {
    const float wk = w[k];
    w[k] += lr * (e * h[k] - reg * wk);
    h[k] += lr * (e * wk - reg * h[k]);
  }
}

struct Ratings {
  std::int64_t users = 60, items = 40;
  std::map<Index<2>, float> all;
};

Ratings make_ratings() {
  Ratings d;
  RandomStream rs(3);
  while (d.all.size() < 900) {
    const Index<2> k{static_cast<std::int64_t>(rs.below(60)), static_cast<std::int64_t>(rs.below(40))};
    d.all[k] = 1.0f + static_cast<float>(rs.below(9)) * 0.5f;
  }
  return d;
}

DistArray<float, 2> ratings_array(const Ratings& d) {
  std::vector<Entry<float, 2>> mine;
  if (rt().rank() == 0)
    for (const auto& [k, v] : d.all) mine.push_back({k, v});
  return DistArray<float, 2>::sparse(rt(), {d.users, d.items}, mine);
}

TEST(ParallelFor, SgdMatrixFactorisationIs2DAndSerializable) {
  const Ratings d = make_ratings();
  auto R = ratings_array(d).set_name("R");
  auto W = DistArray<float, 2>::randn(rt(), {d.users, kRank}, 0.1, 0.0, Partition::range(0), 11);
  auto H = DistArray<float, 2>::randn(rt(), {d.items, kRank}, 0.1, 0.0, Partition::range(0), 12);
  W.set_name("W");
  H.set_name("H");
  std::vector<float> w_ref = W.gather(), h_ref = H.gather();
  auto body = [&](const Index<2>& ij, float& r) {
    auto w = W.row(ij[0]);
    auto h = H.row(ij[1]);
    sgd_step(w.data(), h.data(), r, 0.05f, 0.01f);
  };
  for (int pass = 0; pass < 3; ++pass) {
    const LoopReport report = parallel_for(R, body);
    EXPECT_EQ(report.strategy, analysis::Strategy::two_d) << report.explain();
    // Serial twin: the same kernel over the plan's equivalent order.
    for (const auto& ij : equivalent_order(R, report))
      sgd_step(&w_ref[static_cast<std::size_t>(ij[0] * kRank)], &h_ref[static_cast<std::size_t>(ij[1] * kRank)],
               d.all.at(ij), 0.05f, 0.01f);
    ASSERT_EQ(W.gather(), w_ref) << "pass " << pass;
    ASSERT_EQ(H.gather(), h_ref) << "pass " << pass;
  }
  const std::string text = parallel_for(R, body).explain();
  EXPECT_NE(text.find("(0, *)"), std::string::npos) << text;
  EXPECT_NE(text.find("(*, 0)"), std::string::npos) << text;
  EXPECT_NE(text.find("W[i, :]"), std::string::npos) << text;
}

// Rounds: the item blocks go round the workers `rounds` times per pass; each worker's
// users are cut into `slices` slices, round q runs slice q mod slices, and a slice's
// ratings of each item are dealt over the slice's visits in turn. The run still
// equals its equivalent order.
void expect_rounds_deal_each_item(int rounds, int slices) {
  const Ratings d = make_ratings();
  auto R = ratings_array(d).set_name("R");
  auto W = DistArray<float, 2>::randn(rt(), {d.users, kRank}, 0.1, 0.0, Partition::range(0), 21);
  auto H = DistArray<float, 2>::randn(rt(), {d.items, kRank}, 0.1, 0.0, Partition::range(0), 22);
  std::vector<float> w_ref = W.gather(), h_ref = H.gather();
  LoopOptions options;
  options.rounds = rounds;
  options.slices_per_worker = slices;
  options.shuffle_seed = 5;
  auto body = [&](const Index<2>& ij, float& r) { sgd_step(W.row(ij[0]).data(), H.row(ij[1]).data(), r, 0.05f, 0.01f); };
  for (int pass = 0; pass < 2; ++pass) {
    const LoopReport report = parallel_for(R, body, options);
    ASSERT_EQ(report.strategy, analysis::Strategy::two_d) << report.explain();
    ASSERT_EQ(report.space_dim, 0) << report.explain();
    EXPECT_EQ(report.rounds, rounds);
    EXPECT_EQ(report.slices_per_worker, slices);
    const int visits = rounds / slices;
    // Per (worker, slice, item): how many ratings each visit got; per user: its rounds.
    std::map<std::tuple<std::int64_t, int, std::int64_t>, std::vector<int>> per_visit;
    std::map<std::int64_t, std::set<int>> rounds_of_user;
    for (const auto& it : loop::detail::scheduled_iterations(R, report, 0)) {
      const int round = loop::detail::plan_of(report).schedule.round_of(static_cast<int>(it.step));
      auto& counts = per_visit.try_emplace({it.worker, round % slices, it.index[1]}, visits, 0).first->second;
      ++counts[static_cast<std::size_t>(round / slices)];
      rounds_of_user[it.index[0]].insert(round);
    }
    for (const auto& [key, counts] : per_visit)
      EXPECT_LE(*std::max_element(counts.begin(), counts.end()) - *std::min_element(counts.begin(), counts.end()), 1)
          << "worker " << std::get<0>(key) << ", slice " << std::get<1>(key) << ", item " << std::get<2>(key);
    std::size_t users_in_several_rounds = 0;
    for (const auto& [user, in] : rounds_of_user) {
      users_in_several_rounds += in.size() > 1;
      for (const int q : in) EXPECT_EQ(q % slices, *in.begin() % slices) << "user " << user << " is in two slices";
    }
    EXPECT_GT(users_in_several_rounds, rounds_of_user.size() / 2);
    for (const auto& ij : equivalent_order(R, report))
      sgd_step(&w_ref[static_cast<std::size_t>(ij[0] * kRank)], &h_ref[static_cast<std::size_t>(ij[1] * kRank)],
               d.all.at(ij), 0.05f, 0.01f);
    ASSERT_EQ(W.gather(), w_ref) << "pass " << pass;
    ASSERT_EQ(H.gather(), h_ref) << "pass " << pass;
  }
  EXPECT_NE(parallel_for(R, body, options).explain().find(fmt::format("rounds: {}", rounds)), std::string::npos);
}

TEST(ParallelFor, SgdInRoundsIsSerializable) { expect_rounds_deal_each_item(3, 1); }
TEST(ParallelFor, SgdInSlicedRoundsIsSerializable) { expect_rounds_deal_each_item(4, 2); }

TEST(ParallelFor, BadRoundsAreRefused) {
  const Ratings d = make_ratings();
  auto R = ratings_array(d);
  auto W = DistArray<float, 2>::randn(rt(), {d.users, kRank}, 0.1, 0.0, Partition::range(0), 21);
  auto H = DistArray<float, 2>::randn(rt(), {d.items, kRank}, 0.1, 0.0, Partition::range(0), 22);
  auto body = [&](const Index<2>& ij, float& r) { sgd_step(W.row(ij[0]).data(), H.row(ij[1]).data(), r, 0.05f, 0.01f); };
  LoopOptions options;
  options.rounds = -1;
  EXPECT_THROW(parallel_for(R, body, options), OptionError);
  options.rounds = 3;
  options.slices_per_worker = 2;
  EXPECT_THROW(parallel_for(R, body, options), OptionError);
}

TEST(ParallelFor, OrderedWavefrontKeepsLexicographicOrder) {
  const Ratings d = make_ratings();
  auto R = ratings_array(d);
  auto W = DistArray<float, 2>::randn(rt(), {d.users, kRank}, 0.1, 0.0, Partition::range(0), 21);
  auto H = DistArray<float, 2>::randn(rt(), {d.items, kRank}, 0.1, 0.0, Partition::range(0), 22);
  std::vector<float> w_ref = W.gather(), h_ref = H.gather();
  LoopOptions ordered;
  ordered.ordered = true;
  parallel_for(R, [&](const Index<2>& ij, float& r) { sgd_step(W.row(ij[0]).data(), H.row(ij[1]).data(), r, 0.05f, 0.01f); },
               ordered);
  // Ordered: the parallel result equals the plain lexicographic serial loop.
  for (const auto& [ij, r] : d.all)
    sgd_step(&w_ref[static_cast<std::size_t>(ij[0] * kRank)], &h_ref[static_cast<std::size_t>(ij[1] * kRank)], r, 0.05f,
             0.01f);
  EXPECT_EQ(W.gather(), w_ref);
  EXPECT_EQ(H.gather(), h_ref);
}

TEST(ParallelFor, IndependentIterationsAre1D) {
  auto x = DistArray<double, 1>::generate(rt(), {1000}, [](const Index<1>& i) { return 0.5 * static_cast<double>(i[0]); });
  auto y = DistArray<double, 1>::zeros(rt(), {1000});
  Accumulator<double> total(rt());
  auto body = [&](const Index<1>& i, double& xi) {
    y[i[0]] = 3.0 * xi + 1.0;
    total += xi;
  };
  EXPECT_EQ(parallel_for(x, body).strategy, analysis::Strategy::one_d);
  const auto g = y.gather();
  for (std::size_t k = 0; k < g.size(); ++k) ASSERT_EQ(g[k], 3.0 * 0.5 * static_cast<double>(k) + 1.0);
  EXPECT_EQ(total.take(), 0.5 * 999 * 1000 / 2);  // the reconnaissance pass added nothing
}

TEST(ParallelFor, IrregularAccessesUseConflictGroups) {
  // Each iteration touches two data-dependent slots of `acc`: subscripts are irregular.
  const std::int64_t n = 400, slots = 300;
  auto ends = DistArray<std::array<std::int64_t, 2>, 1>::generate(rt(), {n}, [](const Index<1>& i) {
    const CounterRng rng(5);
    return std::array<std::int64_t, 2>{static_cast<std::int64_t>(rng.below(2 * static_cast<std::uint64_t>(i[0]), 300)),
                                       static_cast<std::int64_t>(rng.below(2 * static_cast<std::uint64_t>(i[0]) + 1, 300))};
  });
  auto acc = DistArray<double, 1>::fill(rt(), {slots}, 1.0);
  std::vector<double> ref = acc.gather();
  const auto all_ends = ends.gather();
  auto body = [&](const Index<1>&, std::array<std::int64_t, 2>& e) {
    const double a = acc[e[0]];
    acc[e[1]] = acc[e[1]] * 0.5 + a;
  };
  const LoopReport report = parallel_for(ends, body);
  EXPECT_EQ(report.gathered, rt().size() > 1);  // across ranks, groups run on rank 0's threads
  EXPECT_EQ(report.strategy, analysis::Strategy::groups) << report.explain();
  for (const auto& i : equivalent_order(ends, report)) {
    const auto& e = all_ends[static_cast<std::size_t>(i[0])];
    const double a = ref[static_cast<std::size_t>(e[0])];
    ref[static_cast<std::size_t>(e[1])] = ref[static_cast<std::size_t>(e[1])] * 0.5 + a;
  }
  EXPECT_EQ(acc.gather(), ref);
}

TEST(ParallelFor, CheckedModeCatchesAWrongPlan) {
  const Ratings d = make_ratings();
  auto R = ratings_array(d);
  auto W = DistArray<float, 2>::zeros(rt(), {d.users, kRank});
  auto H = DistArray<float, 2>::zeros(rt(), {d.items, kRank});
  H.set_name("H");
  LoopOptions wrong;
  wrong.strategy = analysis::Strategy::one_d;  // illegal: H is written by every worker
  EXPECT_THROW(parallel_for(R, [&](const Index<2>& ij, float& r) { sgd_step(W.row(ij[0]).data(), H.row(ij[1]).data(), r, 0.1f, 0.0f); }, wrong),
               OptionError);
  wrong.skip_legality_check = true;
  wrong.checked = true;
  if (rt().size() * rt().threads() == 1) return;  // one worker: nothing can conflict
  try {
    parallel_for(R, [&](const Index<2>& ij, float& r) { sgd_step(W.row(ij[0]).data(), H.row(ij[1]).data(), r, 0.1f, 0.0f); }, wrong);
    ADD_FAILURE() << "checked mode let a wrong plan run";
  } catch (const Error& e) {
    const std::string what = e.what();
    if (rt().size() > 1) {
      // Across ranks the wrong plan is refused before it runs: H cannot be laid out.
      EXPECT_NE(what.find("array H"), std::string::npos) << what;
    } else {
      EXPECT_NE(what.find("checked mode"), std::string::npos) << what;
      EXPECT_NE(what.find("H["), std::string::npos) << what;
      EXPECT_NE(what.find("parallel_for_test.cpp"), std::string::npos) << what;
    }
  }
}
}  // namespace
}  // namespace strata

namespace strata {
namespace {
using testing::rt;

TEST(ParallelFor, SkewedWavefrontForAStencil) {
  // A[i][j] = f(A[i-1][j], A[i][j-1], A[i-1][j+1]): vectors (1,0), (0,1), (1,-1), ordered.
  const std::int64_t n = 24, m = 20;
  auto A = DistArray<double, 2>::generate(rt(), {n, m}, [](const Index<2>& i) { return 0.01 * static_cast<double>(i[0] + 3 * i[1]); });
  A.set_name("A");
  std::vector<double> ref = A.gather();
  auto body = [&](const Index<2>& ij, double&) {
    const auto i = ij[0], j = ij[1];
    if (i == 0 || j == 0 || j == m - 1) return;
    A.write(ij, 0.25 * (A.read({i - 1, j}) + A.read({i, j - 1}) + A.read({i - 1, j + 1})) + A.read(ij));
  };
  LoopOptions ordered;
  ordered.ordered = true;
  auto space = DistArray<double, 2>::zeros(rt(), {n, m});  // the iteration space
  const LoopReport report = parallel_for(space, body, ordered);
  EXPECT_EQ(report.strategy, analysis::Strategy::two_d_skewed) << report.explain();
  for (std::int64_t i = 1; i < n; ++i)
    for (std::int64_t j = 1; j + 1 < m; ++j) {
      auto at = [&](std::int64_t a, std::int64_t b) -> double& { return ref[static_cast<std::size_t>(a * m + b)]; };
      at(i, j) = 0.25 * (at(i - 1, j) + at(i, j - 1) + at(i - 1, j + 1)) + at(i, j);
    }
  EXPECT_EQ(A.gather(), ref);
}

TEST(ParallelFor, ReadOnlyArraysWithIrregularSubscriptsAreReplicated) {
  // y[i] = f(table[k(i)]): table is only read, at data-dependent places, so across
  // ranks every rank gets a whole copy for the loop and then returns to its part.
  const std::int64_t n = 1000, m = 50;
  auto keys = DistArray<std::int64_t, 1>::generate(rt(), {n}, [&](const Index<1>& i) {
    return static_cast<std::int64_t>(mix64(static_cast<std::uint64_t>(i[0])) % static_cast<std::uint64_t>(m));
  });
  auto table = DistArray<double, 1>::generate(rt(), {m}, [](const Index<1>& i) { return 1.5 * static_cast<double>(i[0]); });
  table.set_name("table");
  auto y = DistArray<double, 1>::zeros(rt(), {n});
  auto body = [&](const Index<1>& i, std::int64_t k) { y[i[0]] = table.read({k}) + table.read({(k + 7) % m}); };
  for (int pass = 0; pass < 2; ++pass) {
    // A loop over the table itself, by reference: its records point at the elements,
    // which the copy for the next loop moves to new storage (same structure).
    parallel_for(table, [](const Index<1>&, double& v) { v += 1.0; });
    const auto box_before = table.local_box();
    const LoopReport report = parallel_for(keys, body);
    EXPECT_EQ(table.local_box(), box_before);  // back to its own part after the loop
    EXPECT_EQ(report.strategy, analysis::Strategy::one_d) << report.explain();
    if (rt().size() > 1) {
      EXPECT_NE(report.explain().find("array table: read-only, copied whole to every rank"), std::string::npos)
          << report.explain();
      EXPECT_GT(report.bytes_per_pass, 0);
    }
  }
  const auto k = keys.gather();
  const auto got = y.gather();
  for (std::int64_t i = 0; i < n; ++i) {
    const auto ki = k[static_cast<std::size_t>(i)];
    ASSERT_EQ(got[static_cast<std::size_t>(i)],
              1.5 * static_cast<double>(ki) + 2.0 + 1.5 * static_cast<double>((ki + 7) % m) + 2.0);
  }
  const auto t = table.gather();
  for (std::int64_t j = 0; j < m; ++j) ASSERT_EQ(t[static_cast<std::size_t>(j)], 1.5 * static_cast<double>(j) + 2.0);
}

TEST(ParallelFor, PlanIsCachedAndRebuiltWhenTheSpaceChanges) {
  auto x = DistArray<float, 1>::fill(rt(), {100}, 1.0f);
  auto y = DistArray<float, 1>::zeros(rt(), {100});
  auto run = [&] { return parallel_for(x, [&](const Index<1>& i, float v) { y[i[0]] = y[i[0]] + v; }).plan_id; };
  const std::uint64_t first = run();
  EXPECT_EQ(run(), first);  // same site, same space: the cached plan
  EXPECT_EQ(y.gather(), std::vector<float>(100, 2.0f));
  x = DistArray<float, 1>::fill(rt(), {100}, 3.0f, Partition::hash(0));  // the space changed structure
  run();
  EXPECT_EQ(y.gather(), std::vector<float>(100, 5.0f));
}

// A helper that calls parallel_for from one line runs each body by a plan of its own:
// the body's type is part of the plan cache's key with the call site. (Before, the
// second body here ran by the first one's 1-D plan, its irregular writes racing.)
TEST(ParallelFor, BodiesCalledFromOneLineKeepTheirOwnPlans) {
  const std::int64_t n = 2000, slots = 64;
  auto x = DistArray<double, 1>::fill(rt(), {n}, 1.0);
  auto y = DistArray<double, 1>::zeros(rt(), {n});
  auto hits = DistArray<std::int64_t, 1>::zeros(rt(), {slots});
  auto run = [&](const auto& body) { return parallel_for(x, body); };  // one call site for both
  for (int call = 0; call < 2; ++call) {
    const LoopReport own = run([&](const Index<1>& i, double v) { y[i[0]] = y[i[0]] + v; });
    EXPECT_EQ(own.strategy, analysis::Strategy::one_d) << own.explain();
    const LoopReport shared = run([&](const Index<1>& i, double) { hits[(i[0] * 7) % slots] += 1; });
    EXPECT_NE(shared.plan_id, own.plan_id);
    if (rt().size() * rt().threads() > 1) {
      EXPECT_EQ(shared.strategy, analysis::Strategy::groups) << shared.explain();
    }
    EXPECT_EQ(y.gather(), std::vector<double>(static_cast<std::size_t>(n), call + 1.0));
    std::int64_t total = 0;
    for (const auto h : hits.gather()) total += h;
    EXPECT_EQ(total, n * (call + 1)) << shared.explain();
  }
}

// A body that throws something other than a strata::Error on one rank while the loop
// is planned: every rank learns of it (before, the others waited in the planning's
// next collective until the communicator's timeout).
TEST(ParallelFor, ABodyThatThrowsOnOneRankWhilePlannedFailsOnEveryRank) {
  const std::int64_t n = 1000;
  auto x = DistArray<double, 1>::fill(rt(), {n}, 1.0);
  auto y = DistArray<double, 1>::zeros(rt(), {n});
  try {
    parallel_for(x, [&](const Index<1>& i, double v) {
      if (i[0] == n - 1) throw std::runtime_error("the body's own error");
      y[i[0]] = v;
    });
    ADD_FAILURE() << "no error raised";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("the body's own error"), std::string::npos) << e.what();
  }
  EXPECT_EQ(rt().comm().allreduce<std::int64_t>(1, ReduceOp::sum), rt().size());  // nobody is left waiting
}

// A training loop over R and an evaluation loop over held-out ratings T both keep W
// aligned with users. T's users are spread a little differently from R's, so
// balancing each loop on its own histogram would move W back and forth between
// two partitions and each call would invalidate the other loop's plan. The second
// loop must keep the first one's split of W instead, and both plans stay cached.
TEST(ParallelFor, LoopsSharingAnAlignedArrayKeepEachOthersPlans) {
  constexpr std::int64_t users = 60, items = 40;
  std::vector<Entry<float, 2>> train, held_out;
  if (rt().rank() == 0)
    for (std::int64_t u = 0; u < users; ++u) {
      for (std::int64_t k = 0; k < 20; ++k)
        train.push_back({{u, (u + 2 * k) % items}, 1.0f + static_cast<float>(k % 5)});
      // Users 0-29 have 10 held-out ratings, users 30-59 have 9.
      for (std::int64_t k = 0; k < (u < 30 ? 10 : 9); ++k) held_out.push_back({{u, (u + 2 * k + 1) % items}, 2.0f});
    }
  auto R = DistArray<float, 2>::sparse(rt(), {users, items}, train).set_name("R");
  auto T = DistArray<float, 2>::sparse(rt(), {users, items}, held_out).set_name("T");
  auto W = DistArray<float, 2>::randn(rt(), {users, kRank}, 0.1, 0.0, Partition::range(0), 11).set_name("W");
  // Hashed: the training loop lays H out by its time blocks' homes (a new partition),
  // and the evaluation loop, which copies H whole, must leave that layout as it was.
  auto H = DistArray<float, 2>::randn(rt(), {items, kRank}, 0.1, 0.0, Partition::hash(0), 12).set_name("H");
  auto train_pass = [&] {
    return parallel_for(R, [&](const Index<2>& ij, float r) {
      sgd_step(W.row(ij[0]).data(), H.row(ij[1]).data(), r, 0.05f, 0.01f);
    });
  };
  Accumulator<double> error(rt());
  auto evaluate = [&] {
    return parallel_for(T, [&](const Index<2>& ij, float r) {
      const auto w = W.read_row(ij[0]);
      const auto h = H.read_row(ij[1]);
      double e = r;
      for (std::size_t k = 0; k < kRank; ++k) e -= w[k] * h[k];
      error += e * e;
    });
  };
  LoopReport training = train_pass();
  LoopReport evaluation = evaluate();
  const std::uint64_t train_serial = training.plan_id, eval_serial = evaluation.plan_id;
  const Distribution w_layout = W.distribution();
  EXPECT_EQ(evaluation.strategy, analysis::Strategy::one_d) << evaluation.explain();
  for (int call = 0; call < 3; ++call) {
    training = train_pass();
    evaluation = evaluate();
    EXPECT_EQ(training.plan_id, train_serial) << "call " << call << ": the training loop was planned again";
    EXPECT_EQ(evaluation.plan_id, eval_serial) << "call " << call << ": the evaluation loop was planned again";
    EXPECT_TRUE(W.distribution() == w_layout) << "call " << call << ": W moved";
  }
  // The evaluation loop keeps the training loop's split of W among the workers...
  const auto& training_bounds = loop::detail::plan_of(training).space_bounds;
  EXPECT_EQ(loop::detail::plan_of(evaluation).space_bounds, training_bounds);
  EXPECT_NE(evaluation.explain().find("worker bounds: kept from an earlier plan's split of W"), std::string::npos)
      << evaluation.explain();
  // ...which only means something where T's own balance point differs.
  if (evaluation.workers > 1) {
    EXPECT_NE(balanced_bounds(T.histogram(0), evaluation.workers), training_bounds);
  }
  EXPECT_GT(error.take(), 0.0);
}

// lda's pass and its likelihood over the same tokens: the pass writes document rows
// (1-D over documents only); the likelihood only reads, and by the rows it would copy
// alone would split the tokens by word (the document rows are the smaller table).
// Since the pass split the tokens by document, the likelihood keeps that split
// instead of moving every token there and back, and neither loop is planned again.
TEST(ParallelFor, AReadOnlyLoopKeepsTheSplitOfItsSpace) {
  constexpr std::int64_t docs = 50, words = 400;
  std::vector<Entry<std::int32_t, 2>> tokens;
  if (rt().rank() == 0)
    for (std::int64_t d = 0; d < docs; ++d)
      for (std::int64_t k = 0; k < 30; ++k) tokens.push_back({{d, (d * 7 + k * 13) % words}, static_cast<std::int32_t>(k % 3)});
  auto z = DistArray<std::int32_t, 2>::sparse(rt(), {docs, words}, tokens).set_name("z");
  auto doc_rows = DistArray<float, 2>::zeros(rt(), {docs, 3}).set_name("doc_rows");
  auto word_rows = DistArray<float, 2>::fill(rt(), {words, 3}, 0.5f).set_name("word_rows");
  auto pass = [&] {
    return parallel_for(z, [&](const Index<2>& t, std::int32_t topic) {
      doc_rows.row(t[0])[static_cast<std::size_t>(topic)] += word_rows.read_row(t[1])[static_cast<std::size_t>(topic)];
    });
  };
  Accumulator<double> sum(rt());
  auto likelihood = [&] {
    return parallel_for(z, [&](const Index<2>& t, std::int32_t topic) {
      sum += doc_rows.read_row(t[0])[static_cast<std::size_t>(topic)] * word_rows.read_row(t[1])[0];
    });
  };
  const LoopReport first_pass = pass(), first_likelihood = likelihood();
  ASSERT_EQ(first_pass.space_dim, 0) << first_pass.explain();
  EXPECT_EQ(first_likelihood.space_dim, 0) << first_likelihood.explain();
  for (int call = 0; call < 3; ++call) {
    EXPECT_EQ(pass().plan_id, first_pass.plan_id) << "call " << call << ": the pass was planned again";
    EXPECT_EQ(likelihood().plan_id, first_likelihood.plan_id) << "call " << call << ": the likelihood was planned again";
  }
  EXPECT_GT(sum.take(), 0.0);
}

}  // namespace
}  // namespace strata
