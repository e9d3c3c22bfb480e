// Loops whose data-dependent subscripts change between calls (docs/loops.md, "Plans
// that stay true"): a conflict-groups plan is re-validated on every run, so every call
// equals the serial execution of its equivalent order bit for bit, however the
// accesses moved since the loop was planned, on any ranks x threads, checked or not.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>
#include <thread>

#include "strata/loop/accumulator.hpp"
#include "strata/loop/parallel_for.hpp"
#include "test_runtime.hpp"

namespace strata {
namespace {
using testing::hashed_slot;
using testing::rt;

bool several_threads_run_groups() { return rt().threads() > 1; }
// Runs are re-validated where several workers run groups: a rank's threads, or the
// ranks a plan spreads its groups over.
bool revalidates(const LoopReport& report) { return report.threads > 1 || report.spread; }

// The iterations each rank's workers ran in the report's call (its schedule rows).
template <class Elem, std::size_t M>
std::vector<std::int64_t> iterations_per_rank(const DistArray<Elem, M>& space, const LoopReport& report) {
  const auto rows = loop::detail::schedule_rows(loop::detail::space_view(space), report, 0);
  const std::size_t width = loop::detail::kScheduleFields + M;
  std::vector<std::int64_t> count(static_cast<std::size_t>(rt().size()), 0);
  for (std::size_t k = 0; k < rows.size(); k += width) ++count[static_cast<std::size_t>(rows[k + 1] / report.threads)];
  return count;
}

LoopOptions with_checks(bool checked) {
  LoopOptions o;
  o.checked = checked;
  return o;
}

// The lost-update probe: every iteration adds to a hot counter picked by the call's
// epoch, so the groups of one call are wrong for the next. Counts must be exact, and
// an order-dependent update must equal the equivalent order's serial run.
void lost_update_probe(bool checked) {
  const std::int64_t n = 20000, slots = 97;
  auto x = DistArray<double, 1>::generate(rt(), {n}, [](const Index<1>& i) { return 0.001 * double(i[0] % 7); });
  auto count = DistArray<std::int64_t, 1>::zeros(rt(), {slots});
  auto blend = DistArray<double, 1>::fill(rt(), {slots}, 1.0);
  count.set_name("count");
  std::vector<std::int64_t> count_ref(static_cast<std::size_t>(slots), 0);
  std::vector<double> blend_ref = blend.gather();
  const std::vector<double> xs = x.gather();
  std::uint64_t epoch = 0;  // a driver variable the body reads
  auto body = [&](const Index<1>& i, double v) {
    const std::int64_t h = hashed_slot(i[0], slots, epoch * 1000003);
    count[h] += 1;
    blend[h] = blend[h] * 0.75 + v;
  };
  std::uint64_t first_plan = 0;
  for (epoch = 0; epoch < 5; ++epoch) {
    const LoopReport report = parallel_for(x, body, with_checks(checked));
    if (report.strategy == analysis::Strategy::serial) {
      // Groups that changed at two calls in a row and cost more to plan again than a
      // serial run: the loop goes serial (explain says why).
      EXPECT_GE(epoch, 3u);
      EXPECT_NE(report.serial_reason.find("changed at each of the last"), std::string::npos) << report.explain();
    } else {
      ASSERT_EQ(report.strategy, analysis::Strategy::groups) << report.explain();
      EXPECT_EQ(report.revalidated, revalidates(report)) << report.explain();
      // Across ranks the groups run on every rank (spread.hpp).
      EXPECT_EQ(report.spread, rt().size() > 1) << report.explain();
    }
    if (epoch == 0) first_plan = report.plan_id;
    if (epoch > 0 && epoch < 3 && revalidates(report)) {
      // The recorded groups no longer held: the run was refused, undone and re-planned.
      EXPECT_NE(report.plan_id, first_plan);
      EXPECT_NE(report.revalidation_failure.find("no longer hold"), std::string::npos) << report.explain();
      EXPECT_NE(report.explain().find("planned again"), std::string::npos);
    }
    for (const auto& i : equivalent_order(x, report)) {
      const auto h = static_cast<std::size_t>(hashed_slot(i[0], slots, epoch * 1000003));
      ++count_ref[h];
      blend_ref[h] = blend_ref[h] * 0.75 + xs[static_cast<std::size_t>(i[0])];
    }
    ASSERT_EQ(count.gather(), count_ref) << "epoch " << epoch;
    ASSERT_EQ(blend.gather(), blend_ref) << "epoch " << epoch;
  }
  const auto counts = count.gather();
  EXPECT_EQ(std::accumulate(counts.begin(), counts.end(), std::int64_t{0}), 5 * n);  // no lost increment
}

TEST(IrregularLoops, LostUpdateProbeEqualsEquivalentOrderOnEveryCall) { lost_update_probe(false); }
TEST(IrregularLoops, LostUpdateProbeEqualsEquivalentOrderChecked) { lost_update_probe(true); }

// A negative-sampling embedding probe: each edge (u, v) pulls rows u and v together
// and pushes a negative row away. Edges stay inside communities of nodes, and the
// negative is drawn from the community the epoch pairs the edge's with, so the
// conflict groups (one or two communities) change from epoch to epoch. Whole rows
// are accessed, so conflicts are found by row.
constexpr int kDim = 16;
constexpr std::int64_t kCommunities = 64, kCommunitySize = 32;

void embed_step(float* u, float* v, float* neg) {
  float pos = 0, bad = 0;
  for (int k = 0; k < kDim; ++k) pos += u[k] * v[k], bad += u[k] * neg[k];
  const float gp = 0.05f * (1.0f - 1.0f / (1.0f + std::exp(-pos)));
  const float gn = -0.05f / (1.0f + std::exp(-bad));
  for (int k = 0; k < kDim; ++k) {
    const float uk = u[k];
    u[k] += gp * v[k] + gn * neg[k];
    v[k] += gp * uk;
    neg[k] += gn * uk;
  }
}

std::int64_t negative_of(std::int64_t u, std::int64_t v, std::uint64_t epoch) {
  const std::int64_t community = (u / kCommunitySize) ^ static_cast<std::int64_t>(epoch % 4);
  const auto pick = CounterRng(epoch + 11).below(static_cast<std::uint64_t>(u * kCommunities * kCommunitySize + v),
                                                 static_cast<std::uint64_t>(kCommunitySize));
  return community * kCommunitySize + static_cast<std::int64_t>(pick);
}

void embedding_probe(bool checked) {
  const std::int64_t nodes = kCommunities * kCommunitySize;
  std::map<Index<2>, float> edges;
  RandomStream rs(23);
  while (edges.size() < 20000) {
    // Each community's first node is a hub: hot rows, as real graphs have.
    const auto c = static_cast<std::int64_t>(rs.below(kCommunities)) * kCommunitySize;
    const auto u = c + static_cast<std::int64_t>(rs.below(4) == 0 ? 0 : rs.below(kCommunitySize));
    edges[{u, c + static_cast<std::int64_t>(rs.below(kCommunitySize))}] = 1.0f;
  }
  std::vector<Entry<float, 2>> mine;
  if (rt().rank() == 0)
    for (const auto& [k, w] : edges) mine.push_back({k, w});
  auto E = DistArray<float, 2>::sparse(rt(), {nodes, nodes}, mine);
  auto emb = DistArray<float, 2>::randn(rt(), {nodes, kDim}, 0.1, 0.0, Partition::range(0), 41);
  emb.set_name("emb");
  std::vector<float> ref = emb.gather();
  auto row = [&](std::int64_t r) { return &ref[static_cast<std::size_t>(r * kDim)]; };
  std::uint64_t epoch = 0;
  auto body = [&](const Index<2>& e, float) {
    const std::int64_t neg = negative_of(e[0], e[1], epoch);
    embed_step(emb.row(e[0]).data(), emb.row(e[1]).data(), emb.row(neg).data());
  };
  for (epoch = 0; epoch < 5; ++epoch) {
    const LoopReport report = parallel_for(E, body, with_checks(checked));
    if (report.strategy == analysis::Strategy::serial) {
      // Planning again at every call may cost more than one thread: then the loop
      // goes serial, after at least two calls whose groups changed.
      EXPECT_GE(epoch, 3u);
      EXPECT_NE(report.serial_reason.find("changed at each of the last"), std::string::npos) << report.explain();
    } else {
      ASSERT_EQ(report.strategy, analysis::Strategy::groups) << report.explain();
      EXPECT_GE(report.groups, kCommunities / 2) << report.explain();
      if (epoch > 0 && revalidates(report)) {
        EXPECT_FALSE(report.revalidation_failure.empty());
      }
      // Across ranks every rank runs a share of the groups (at least half of an even
      // share: 32 to 64 groups over as many as 12 workers do not balance finely).
      const auto per_rank = iterations_per_rank(E, report);
      for (const auto count : per_rank) EXPECT_GT(count * rt().size(), E.nnz() / 2) << report.explain();
      // Each rank fetches the rows its groups touch and returns those it wrote: measured.
      EXPECT_EQ(report.bytes_moved > 0, rt().size() > 1) << report.explain();
    }
    for (const auto& e : equivalent_order(E, report))
      embed_step(row(e[0]), row(e[1]), row(negative_of(e[0], e[1], epoch)));
    ASSERT_EQ(emb.gather(), ref) << "epoch " << epoch << "\n" << report.explain();
  }
}

TEST(IrregularLoops, EmbeddingProbeEqualsEquivalentOrderOnEveryCall) { embedding_probe(false); }
TEST(IrregularLoops, EmbeddingProbeEqualsEquivalentOrderChecked) { embedding_probe(true); }

// A TransE-shaped probe (docs/loops.md, "Split groups"): each triple (h, r, t) moves
// its relation's row of a 26-row table, its head and tail rows and the row of a
// negative drawn from the epoch. Every triple writes a relation row, so all triples
// form one conflict group; with several threads it is split over them under locks,
// and the negatives that move from call to call are locked as they come. Each call
// equals the serial run of its equivalent order (the grant order) bit for bit.
constexpr int kRelDim = 8;
constexpr std::int64_t kEntities = 2000, kRelations = 26;

void transe_step(float* h, float* r, float* t, float* neg) {
  float pos = 0, bad = 0;
  for (int k = 0; k < kRelDim; ++k) {
    const float d = h[k] + r[k] - t[k], dn = neg[k] + r[k] - t[k];
    pos += d * d, bad += dn * dn;
  }
  if (pos + 0.5f <= bad) return;  // the margin holds: no update
  for (int k = 0; k < kRelDim; ++k) {
    const float g = 0.02f * (h[k] + r[k] - t[k]), gn = 0.02f * (neg[k] + r[k] - t[k]);
    h[k] -= g, t[k] += g, r[k] -= g - gn, neg[k] += gn;
  }
}

struct Triples {
  std::vector<std::int64_t> head, rel, tail;
};

Triples make_triples(std::int64_t n) {
  Triples tr;
  RandomStream rs(29);
  for (std::int64_t i = 0; i < n; ++i) {
    // Every entity is a head once; relations are skewed (a few hot rows), as WordNet's.
    tr.head.push_back(i < kEntities ? i : static_cast<std::int64_t>(rs.below(kEntities)));
    tr.tail.push_back(static_cast<std::int64_t>(rs.below(kEntities)));
    tr.rel.push_back(std::min<std::int64_t>(kRelations - 1, static_cast<std::int64_t>(rs.below(4) + rs.below(4) * rs.below(8))));
  }
  return tr;
}

std::int64_t corrupted(std::int64_t i, std::uint64_t epoch) {
  return static_cast<std::int64_t>(CounterRng(epoch + 5).below(static_cast<std::uint64_t>(i), kEntities));
}

void transe_probe(bool checked) {
  const std::int64_t n = 6000;
  const Triples tr = make_triples(n);
  auto space = DistArray<float, 1>::zeros(rt(), {n});
  auto E = DistArray<float, 2>::randn(rt(), {kEntities, kRelDim}, 0.3, 0.0, Partition::range(0), 43);
  auto R = DistArray<float, 2>::randn(rt(), {kRelations, kRelDim}, 0.3, 0.0, Partition::range(0), 47);
  E.set_name("E");
  R.set_name("R");
  std::vector<float> e_ref = E.gather(), r_ref = R.gather();
  auto e_row = [&](std::int64_t k) { return &e_ref[static_cast<std::size_t>(k * kRelDim)]; };
  auto r_row = [&](std::int64_t k) { return &r_ref[static_cast<std::size_t>(k * kRelDim)]; };
  std::uint64_t epoch = 0;
  std::vector<std::thread::id> ran_on(static_cast<std::size_t>(n));
  auto body = [&](const Index<1>& i, float) {
    const auto k = static_cast<std::size_t>(i[0]);
    ran_on[k] = std::this_thread::get_id();
    transe_step(E.row(tr.head[k]).data(), R.row(tr.rel[k]).data(), E.row(tr.tail[k]).data(),
                E.row(corrupted(i[0], epoch)).data());
  };
  int planned_again = 0;
  std::uint64_t last_plan = 0;
  for (epoch = 0; epoch < 5; ++epoch) {
    const LoopReport report = parallel_for(space, body, with_checks(checked));
    ASSERT_EQ(report.strategy, analysis::Strategy::groups) << report.explain();
    EXPECT_EQ(report.groups, 1) << report.explain();
    if (several_threads_run_groups()) {
      // Split over the threads; negatives that moved are locked as they come, so the
      // plan holds from call to call (a refusal needs a cycle of waits inside bodies).
      EXPECT_EQ(report.split_groups, 1) << report.explain();
      EXPECT_EQ(report.split_iterations, n);
      EXPECT_LT(report.imbalance * (report.gathered ? 1.0 / report.ranks : 1.0), 1.01) << report.explain();
      EXPECT_NE(report.explain().find("split: 1 group(s)"), std::string::npos) << report.explain();
      if (epoch > 0 && report.plan_id != last_plan) ++planned_again;
      if (rt().size() == 1) {
        // The triples of a relation run on one thread, as far as the threads' shares
        // allow: each thread filled up moves the rest of one relation to another.
        std::set<std::pair<std::int64_t, std::thread::id>> placed;
        const std::set<std::int64_t> relations(tr.rel.begin(), tr.rel.end());
        for (std::size_t k = 0; k < static_cast<std::size_t>(n); ++k) placed.insert({tr.rel[k], ran_on[k]});
        EXPECT_LE(placed.size(), relations.size() + static_cast<std::size_t>(rt().threads()) - 1);
      }
    } else {
      EXPECT_EQ(report.split_groups, 0) << report.explain();
    }
    last_plan = report.plan_id;
    for (const auto& i : equivalent_order(space, report)) {
      const auto k = static_cast<std::size_t>(i[0]);
      transe_step(e_row(tr.head[k]), r_row(tr.rel[k]), e_row(tr.tail[k]), e_row(corrupted(i[0], epoch)));
    }
    ASSERT_EQ(E.gather(), e_ref) << "epoch " << epoch << "\n" << report.explain();
    ASSERT_EQ(R.gather(), r_ref) << "epoch " << epoch;
  }
  EXPECT_LE(planned_again, 1);
}

TEST(IrregularLoops, SplitGroupEqualsItsGrantOrderOnEveryCall) { transe_probe(false); }
TEST(IrregularLoops, SplitGroupEqualsItsGrantOrderChecked) { transe_probe(true); }

// Only a group above 1.1x a thread's share is split; the others run whole, placed
// around it so the threads' loads even out. Here iterations below `hot` (a fraction
// of them) all add to one hot slot; the rest each write a slot of their own.
void hot_share_probe(double hot_fraction) {
  const bool split_expected = several_threads_run_groups() && hot_fraction * rt().threads() > 1.1;
  const std::int64_t n = 8000, hot = static_cast<std::int64_t>(hot_fraction * n);
  auto x = DistArray<double, 1>::generate(rt(), {n}, [](const Index<1>& i) { return 0.01 * double(i[0] % 13); });
  auto slot = DistArray<double, 1>::zeros(rt(), {n});
  std::vector<double> ref(static_cast<std::size_t>(n), 0.0);
  const std::vector<double> xs = x.gather();
  auto body = [&](const Index<1>& i, double v) {
    const std::int64_t s = i[0] < hot ? 0 : i[0];
    slot[s] = slot[s] * 0.5 + v;
  };
  const LoopReport report = parallel_for(x, body);
  ASSERT_EQ(report.strategy, analysis::Strategy::groups) << report.explain();
  EXPECT_EQ(report.groups, n - hot + 1);
  if (split_expected) {
    EXPECT_EQ(report.split_groups, 1) << report.explain();
    EXPECT_EQ(report.split_iterations, hot);
    EXPECT_LT(report.imbalance * (report.gathered ? 1.0 / report.ranks : 1.0), 1.01) << report.explain();
  } else {
    EXPECT_EQ(report.split_groups, 0) << report.explain();
  }
  for (const auto& i : equivalent_order(x, report)) {
    const auto s = static_cast<std::size_t>(i[0] < hot ? 0 : i[0]);
    ref[s] = ref[s] * 0.5 + xs[static_cast<std::size_t>(i[0])];
  }
  EXPECT_EQ(slot.gather(), ref);
}

TEST(IrregularLoops, AGroupAboveItsShareIsSplitAndTheRestPlacedAroundIt) { hot_share_probe(0.7); }
TEST(IrregularLoops, AGroupWithinItsShareRunsWhole) {
  if (rt().threads() > 4) GTEST_SKIP() << "a quarter of the iterations is more than 1.1x a thread's share";
  hot_share_probe(0.25);
}

// Struct elements, one-dimensional, by element: every iteration folds its value into
// a hot element (so all form one group, split on several threads) and into an element
// picked by the call's epoch, then reads a third one. Each call equals its grant order.
struct Cell {
  double sum = 0;
  float last[3] = {0, 0, 0};
  std::int64_t count = 0;
};

TEST(IrregularLoops, SplitGroupOverStructElements) {
  const std::int64_t n = 9000, cells = 1500;
  auto x = DistArray<double, 1>::generate(rt(), {n}, [](const Index<1>& i) { return 0.5 + double(i[0] % 11); });
  auto c = DistArray<Cell, 1>::fill(rt(), {cells}, Cell{});
  std::vector<Cell> ref(static_cast<std::size_t>(cells));
  const std::vector<double> xs = x.gather();
  std::uint64_t epoch = 0;
  auto pick = [&](std::int64_t i) { return 1 + hashed_slot(i, cells - 1, epoch * 7919); };
  auto step = [](Cell& hot, Cell& mine, const Cell& seen, double v) {
    hot.sum = hot.sum * 0.999 + v;
    ++hot.count;
    mine.sum += v * static_cast<double>(seen.count % 5) + hot.sum * 1e-3;
    mine.last[mine.count++ % 3] = static_cast<float>(v + seen.sum * 1e-4);
  };
  for (epoch = 0; epoch < 4; ++epoch) {
    const LoopReport report = parallel_for(x, [&](const Index<1>& i, double v) {
      const Cell seen = c[pick(i[0] + 1)];
      step(c[0], c[pick(i[0])], seen, v);
    });
    if (!several_threads_run_groups() && rt().size() > 1 && epoch >= 2 &&
        report.strategy == analysis::Strategy::serial) {
      // One thread a rank: the one group runs whole on one rank, which holds only the
      // cells it touched when planned; cells drawn anew refuse the run, and after two
      // such calls the loop goes serial.
      EXPECT_NE(report.serial_reason.find("changed at each of the last"), std::string::npos) << report.explain();
    } else {
      ASSERT_EQ(report.strategy, analysis::Strategy::groups) << report.explain();
    }
    EXPECT_EQ(report.split_groups, several_threads_run_groups() ? 1 : 0) << report.explain();
    for (const auto& i : equivalent_order(x, report)) {
      const Cell seen = ref[static_cast<std::size_t>(pick(i[0] + 1))];
      step(ref[0], ref[static_cast<std::size_t>(pick(i[0]))], seen, xs[static_cast<std::size_t>(i[0])]);
    }
    const auto got = c.gather();
    for (std::int64_t k = 0; k < cells; ++k) {
      const Cell &a = got[static_cast<std::size_t>(k)], &b = ref[static_cast<std::size_t>(k)];
      ASSERT_TRUE(a.sum == b.sum && a.count == b.count && std::equal(a.last, a.last + 3, b.last))
          << "epoch " << epoch << ", cell " << k;
    }
  }
}

// A body whose subscripts come from a shared generator cannot be planned by its
// reconnaissance: the run still ends right (serially), and checked mode says why.
TEST(IrregularLoops, UnreplayableSubscriptsRunSerially) {
  if (!several_threads_run_groups()) GTEST_SKIP() << "one thread runs every group: nothing is re-validated";
  const std::int64_t n = 5000, slots = 31;
  auto x = DistArray<double, 1>::fill(rt(), {n}, 1.0);
  auto hits = DistArray<std::int64_t, 1>::zeros(rt(), {slots});
  std::atomic<std::uint64_t> draws{0};
  auto body = [&](const Index<1>&, double) {
    hits[static_cast<std::int64_t>(mix64(draws.fetch_add(1, std::memory_order_relaxed)) % slots)] += 1;
  };
  LoopOptions checked = with_checks(true);
  try {
    parallel_for(x, body, checked);
    ADD_FAILURE() << "checked mode ran a loop whose accesses it cannot replay";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("differ from those its reconnaissance pass recorded"), std::string::npos)
        << e.what();
  }
  const char* env = std::getenv("STRATA_CHECKED");
  if (env && std::string(env) != "0" && *env) return;  // every loop is checked: the next call would throw too
  const auto before = hits.gather();
  const LoopReport report = parallel_for(x, body);
  EXPECT_EQ(report.strategy, analysis::Strategy::serial) << report.explain();
  EXPECT_FALSE(report.serial_reason.empty());
  const auto after = hits.gather();
  EXPECT_EQ(std::accumulate(after.begin(), after.end(), std::int64_t{0}) -
                std::accumulate(before.begin(), before.end(), std::int64_t{0}),
            n);  // the refused runs were undone: exactly one increment per iteration
}

// Subscripts read from another array, which the driver changes between calls: the
// groups are found with that array whole on every rank, the run equals its
// equivalent order, and across ranks every rank runs a share.
TEST(IrregularLoops, SubscriptsFromAnotherArraySpreadOverRanks) {
  const std::int64_t n = 6000, slots = 300;
  auto x = DistArray<double, 1>::generate(rt(), {n},
                                          [](const Index<1>& i) { return 0.25 + 0.001 * double(i[0] % 11); });
  auto target = DistArray<std::int64_t, 1>::generate(rt(), {n},
                                                     [&](const Index<1>& i) { return hashed_slot(i[0], slots, 3); });
  auto acc = DistArray<double, 1>::fill(rt(), {slots}, 1.0);
  std::vector<double> ref = acc.gather();
  auto body = [&](const Index<1>& i, double v) {
    const std::int64_t t = target[i[0]];
    acc[t] = acc[t] * 0.5 + v;
  };
  for (int call = 0; call < 4; ++call) {
    if (call == 2)  // the driver moves every iteration's target
      parallel_for(target, [&](const Index<1>& i, std::int64_t& t) { t = hashed_slot(i[0], slots, 99); });
    const LoopReport report = parallel_for(x, body);
    ASSERT_EQ(report.strategy, analysis::Strategy::groups) << report.explain();
    EXPECT_EQ(report.spread, rt().size() > 1) << report.explain();
    const auto targets = target.gather();
    const auto xs = x.gather();
    for (const auto& i : equivalent_order(x, report)) {
      auto& a = ref[static_cast<std::size_t>(targets[static_cast<std::size_t>(i[0])])];
      a = a * 0.5 + xs[static_cast<std::size_t>(i[0])];
    }
    ASSERT_EQ(acc.gather(), ref) << "call " << call << "\n" << report.explain();
    for (const auto count : iterations_per_rank(x, report)) EXPECT_GT(count * rt().size(), 7 * n / 10);
  }
}

// A spread plan runs on its own copy of the iterations: when the driver changes the
// space's elements between calls, the copy follows them.
TEST(IrregularLoops, SpreadPlanSeesTheSpacesNewElements) {
  const std::int64_t n = 3000, slots = 150;
  auto x = DistArray<double, 1>::fill(rt(), {n}, 0.25);
  auto acc = DistArray<double, 1>::zeros(rt(), {slots});
  auto body = [&](const Index<1>& i, double v) { acc[hashed_slot(i[0], slots, 5)] += v * double(1 + i[0] % 4); };
  std::vector<double> ref(static_cast<std::size_t>(slots), 0.0);
  for (int call = 0; call < 3; ++call) {
    if (call == 2) parallel_for(x, [](const Index<1>& i, double& v) { v = 0.5 + 0.01 * double(i[0] % 7); });
    const LoopReport report = parallel_for(x, body);
    EXPECT_EQ(report.spread, rt().size() > 1) << report.explain();
    const auto xs = x.gather();
    for (const auto& i : equivalent_order(x, report))
      ref[static_cast<std::size_t>(hashed_slot(i[0], slots, 5))] +=
          xs[static_cast<std::size_t>(i[0])] * double(1 + i[0] % 4);
    ASSERT_EQ(acc.gather(), ref) << "call " << call;
  }
}

// Subscripts from a driver variable that differs between ranks: each rank's pass
// finds other groups, so they cannot share the iterations out (an iteration would
// run twice or nowhere). The plan is gathered on rank 0, whose run is the result.
TEST(IrregularLoops, RanksThatPlaceIterationsDifferentlyGatherOnRankZero) {
  const std::int64_t n = 4000, slots = 200;
  auto x = DistArray<double, 1>::fill(rt(), {n}, 0.5);
  auto acc = DistArray<double, 1>::fill(rt(), {slots}, 1.0);
  const std::uint64_t salt = 17 + static_cast<std::uint64_t>(rt().rank());
  auto body = [&](const Index<1>& i, double v) {
    const std::int64_t t = hashed_slot(i[0], slots, salt);
    acc[t] = acc[t] * 0.5 + v * double(i[0] % 3);
  };
  const LoopReport report = parallel_for(x, body);
  ASSERT_EQ(report.strategy, analysis::Strategy::groups) << report.explain();
  EXPECT_FALSE(report.spread) << report.explain();
  EXPECT_EQ(report.gathered, rt().size() > 1) << report.explain();
  std::vector<double> ref(static_cast<std::size_t>(slots), 1.0);
  for (const auto& i : equivalent_order(x, report)) {  // rank 0's subscripts
    auto& a = ref[static_cast<std::size_t>(hashed_slot(i[0], slots, 17))];
    a = a * 0.5 + 0.5 * double(i[0] % 3);
  }
  EXPECT_EQ(acc.gather(), ref);
}

// Groups plans visit iterations in a seeded shuffled order by default, key order
// on request; either way the run equals its equivalent order.
TEST(IrregularLoops, GroupsOrderIsShuffledUnlessKeyOrderIsAsked) {
  const std::int64_t n = 3000, slots = 50;
  auto x = DistArray<double, 1>::fill(rt(), {n}, 0.5);
  auto acc = DistArray<double, 1>::zeros(rt(), {slots});
  auto body = [&](const Index<1>& i, double v) { acc[hashed_slot(i[0], slots, 7)] += v * double(i[0] % 5); };
  auto descents = [&](const LoopReport& report) {
    const auto order = equivalent_order(x, report);
    std::int64_t d = 0;
    for (std::size_t k = 1; k < order.size(); ++k) d += order[k][0] < order[k - 1][0];
    return d;
  };
  const LoopReport shuffled = parallel_for(x, body);
  ASSERT_EQ(shuffled.strategy, analysis::Strategy::groups);
  EXPECT_GT(descents(shuffled), n / 4) << "not shuffled";
  EXPECT_NE(shuffled.explain().find("seeded shuffled order"), std::string::npos);
  if (rt().size() > 1) {
    // The groups are placed on every rank's workers.
    EXPECT_FALSE(shuffled.gathered);
    EXPECT_TRUE(shuffled.spread);
    EXPECT_LT(shuffled.imbalance, 1.2) << shuffled.explain();
    EXPECT_NE(shuffled.explain().find("spread: the conflict groups are placed on all"), std::string::npos);
  }
  LoopOptions keyed;
  keyed.key_order = true;
  const LoopReport in_keys = parallel_for(x, body, keyed);
  ASSERT_EQ(in_keys.strategy, analysis::Strategy::groups);
  EXPECT_LT(descents(in_keys), in_keys.workers) << "each worker's share runs in key order";
}

}  // namespace
}  // namespace strata
