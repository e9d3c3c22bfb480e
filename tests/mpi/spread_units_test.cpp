// Conflict groups spread over the ranks move only what their groups touch
// (src/loop/spread.hpp): during a call a written array's storage holds the rank's own
// part and the units its groups touched when the loop was planned, fetched from their
// owners; the units a rank wrote go back to their owners afterwards.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "loop/inspect.hpp"  // the plan and its units (not API)
#include "loop/ownership.hpp"
#include "loop/spread.hpp"
#include "strata/detail/array_movement.hpp"
#include "strata/loop/parallel_for.hpp"
#include "resident_set.hpp"
#include "test_runtime.hpp"

namespace strata {
namespace {
using testing::rt;
using testing::status_kib;

// Units a rank asks for: every unit u with u % ranks == rank + 1 (mod ranks), so that
// a rank asks for units it does not hold under any of the partitions below.
std::vector<std::uint64_t> units_of_rank(std::uint64_t units) {
  std::vector<std::uint64_t> mine;
  const auto ranks = static_cast<std::uint64_t>(rt().size());
  for (std::uint64_t u = 0; u < units; ++u)
    if (u % ranks == (static_cast<std::uint64_t>(rt().rank()) + 1) % ranks) mine.push_back(u);
  return mine;
}

// The bytes of the rows of `array` a plan's rank needs for a call outside its own part
// (fetched), or inside it (`own`: those its run may write, and log to undo).
double needed_row_bytes(const LoopReport& report, const detail::ArrayBase& array,
                        const IndexSet& own_rows, double row_bytes, bool own = false) {
  double bytes = 0;
  for (const auto& u : loop::detail::plan_of(report).hosted->units)
    if (u.array_id == array.array_id())
      for (const auto row : u.needed)
        if (own_rows.contains(static_cast<std::int64_t>(row)) == own) bytes += row_bytes;
  return bytes;
}

// The most this process's resident set grew by during `call`, in bytes.
template <class Call>
double growth_during(Call&& call) {
  const std::int64_t before = status_kib("VmRSS");
  testing::reset_peak();
  call();
  return static_cast<double>(status_kib("VmHWM") - before) * 1024.0;
}

// Rows or single elements, under partitions that keep rows whole (range and hash of
// dimension 0) and one that cuts them (range of dimension 1): a rank sees its units
// with their values, zeros where it holds nothing, and every unit it adds to reaches
// its owner; the array ends in the partition it started in.
TEST(SpreadUnits, FetchedUnitsComeBackToTheirOwners) {
  constexpr std::int64_t kRows = 50, kWidth = 3;
  auto value = [](const Index<2>& i) { return static_cast<double>(i[0] * 10 + i[1] + 1); };
  for (const std::size_t unit_elems : {std::size_t{kWidth}, std::size_t{1}})
    for (const Partition& partition : {Partition::range(0), Partition::hash(0), Partition::range(1)}) {
      const std::string what = partition.describe() + (unit_elems == 1 ? ", by element" : ", by row");
      auto a = DistArray<double, 2>::generate(rt(), {kRows, kWidth}, value, partition);
      const std::vector<IndexSet> part = a.local_box();
      detail::ArrayBase& engine = a;
      const auto needed = units_of_rank(static_cast<std::uint64_t>(kRows * kWidth) / unit_elems);
      for (int journey = 1; journey <= 2; ++journey) {
        engine.travel_begin_units(needed, unit_elems, nullptr);
        auto whole = a.local_values();
        ASSERT_EQ(whole.size(), static_cast<std::size_t>(kRows * kWidth)) << what;
        std::vector<bool> asked(whole.size(), false);
        for (const auto u : needed)
          for (std::size_t k = u * unit_elems; k < (u + 1) * unit_elems; ++k) asked[k] = true;
        for (std::size_t k = 0; k < whole.size(); ++k) {
          const auto i = static_cast<std::int64_t>(k) / kWidth, j = static_cast<std::int64_t>(k) % kWidth;
          const bool own = part[0].contains(i) && part[1].contains(j);
          const double expected = (asked[k] || own) ? static_cast<double>(i * 10 + j + journey) : 0.0;
          ASSERT_EQ(whole[k], expected) << what << ", element " << k << ", journey " << journey;
          if (asked[k]) whole[k] += 1;
        }
        detail::return_dense_units(rt().comm(), a.distribution(), sizeof(double), unit_elems, needed,
                                   engine.local_bytes());
        engine.travel_drop();
        EXPECT_EQ(a.partition(), partition) << what;
        EXPECT_EQ(a.local_box().size(), part.size());
        const std::vector<double> back = a.gather();
        for (std::size_t k = 0; k < back.size(); ++k)
          ASSERT_EQ(back[k], static_cast<double>(static_cast<std::int64_t>(k) / kWidth * 10 +
                                                 static_cast<std::int64_t>(k) % kWidth + journey + 1))
              << what << ", element " << k << ", journey " << journey;
      }
    }
}

// Node u's partner: its neighbour on a ring inside its community, in the community
// `shift` communities further on (a driver variable moves the pairs between calls).
std::int64_t partner_of(std::int64_t u, std::int64_t shift, std::int64_t community, std::int64_t communities) {
  return (u / community + shift) % communities * community + (u + 1) % community;
}

// One SGD step pulling rows u and v (`width` elements) together, through any accessor
// at(row, k) of their elements.
template <class At>
void pull_together(At&& at, std::int64_t u, std::int64_t v, std::int64_t width) {
  float dot = 0;
  for (std::int64_t k = 0; k < width; ++k) dot += at(u, k) * at(v, k);
  for (std::int64_t k = 0; k < width; ++k) {
    const float uk = at(u, k);
    at(u, k) += 0.05f * (1 - dot) * at(v, k);
    at(v, k) += 0.05f * (1 - dot) * uk;
  }
}

// Elements of rows that lie on several ranks (the partition cuts the last dimension,
// by range or by hash; row() refuses such arrays, so the body takes elements) and rows
// of arrays partitioned by hash of the first: a rank holds what it fetched and its
// part, and every call equals its equivalent order bit for bit, also when the rows a
// node pairs with move between calls.
TEST(SpreadUnits, UnitsOfAnyPartitionStayExact) {
  constexpr std::int64_t kNodes = 512, kWidth = 8, kCommunity = 8, kCommunities = kNodes / kCommunity;
  for (const Partition& partition : {Partition::hash(1), Partition::range(1), Partition::hash(0)}) {
    auto x = DistArray<float, 1>::fill(rt(), {kNodes}, 1.0f);
    auto emb = DistArray<float, 2>::randn(rt(), {kNodes, kWidth}, 0.1, 0.0, partition, 5).set_name("emb");
    std::vector<float> ref = emb.gather();
    std::int64_t shift = 0;  // a driver variable
    auto partner = [&](std::int64_t u) { return partner_of(u, shift, kCommunity, kCommunities); };
    auto in_emb = [&](std::int64_t r, std::int64_t k) -> float& { return emb(r, k); };
    auto in_ref = [&](std::int64_t r, std::int64_t k) -> float& { return ref[static_cast<std::size_t>(r * kWidth + k)]; };
    for (const std::int64_t s : {0, 0, 1, 0}) {
      shift = s;
      const LoopReport report =
          parallel_for(x, [&](const Index<1>& i, float) { pull_together(in_emb, i[0], partner(i[0]), kWidth); });
      for (const auto& i : equivalent_order(x, report)) pull_together(in_ref, i[0], partner(i[0]), kWidth);
      ASSERT_EQ(emb.gather(), ref) << partition.describe() << ", shift " << s << "\n" << report.explain();
    }
  }
}

// Each rank records its own part of the space and sends each iteration to the rank
// running its group, which keeps them in key order: whatever the space's partition
// (a range, whose parts arrive in order, or a hash, whose parts interleave), dense or
// sparse. Every call equals its equivalent order, the ranks host every iteration
// once, and a rank's hosted keys ascend.
TEST(SpreadUnits, HostedIterationsArriveInKeyOrderUnderAnyPartition) {
  constexpr std::int64_t kNodes = 600, kWidth = 16, kCommunity = 8, kCommunities = kNodes / kCommunity;
  for (const bool sparse : {false, true}) {
    for (const Partition& partition : {Partition::range(0), Partition::hash(0)}) {
      std::vector<DistArray<float, 1>::entry_type> entries;
      if (rt().rank() == 0)
        for (std::int64_t u = 0; u < kNodes; u += 1 + u % 3) entries.push_back({{u}, 1.0f});
      auto x = sparse ? DistArray<float, 1>::sparse(rt(), {kNodes}, entries, Duplicates::error, partition)
                      : DistArray<float, 1>::fill(rt(), {kNodes}, 1.0f, partition);
      auto emb = DistArray<float, 2>::randn(rt(), {kNodes, kWidth}, 0.1, 0.0, Partition::range(0), 9);
      std::vector<float> ref = emb.gather();
      auto in_emb = [&](std::int64_t r, std::int64_t k) -> float& { return emb.row(r)[static_cast<std::size_t>(k)]; };
      auto in_ref = [&](std::int64_t r, std::int64_t k) -> float& { return ref[static_cast<std::size_t>(r * kWidth + k)]; };
      auto partner = [&](std::int64_t u) { return partner_of(u, 0, kCommunity, kCommunities); };
      for (int call = 0; call < 2; ++call) {
        const LoopReport report =
            parallel_for(x, [&](const Index<1>& i, float) { pull_together(in_emb, i[0], partner(i[0]), kWidth); });
        const auto order = equivalent_order(x, report);
        for (const auto& i : order) pull_together(in_ref, i[0], partner(i[0]), kWidth);
        ASSERT_EQ(emb.gather(), ref) << (sparse ? "sparse, " : "dense, ") << partition.describe() << "\n"
                                     << report.explain();
        ASSERT_EQ(static_cast<std::int64_t>(order.size()), x.nnz());
        if (rt().size() == 1) continue;
        ASSERT_TRUE(report.spread) << report.explain();
        const auto& keys = loop::detail::plan_of(report).hosted->keys;
        EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end())) << partition.describe();
        EXPECT_EQ(rt().comm().allreduce(static_cast<std::int64_t>(keys.size()), ReduceOp::sum), x.nnz());
      }
    }
  }
}

// Rows of 64 bytes are undone from write logs, not a copy of the array: a call whose
// pairs moved is refused part way (its groups no longer hold) and undone, then planned
// again, and every call equals its equivalent order bit for bit, under a range and a
// hash partition of the rows.
TEST(SpreadUnits, RefusedRunsAreUndoneFromTheWriteLogs) {
  constexpr std::int64_t kNodes = 512, kWidth = 16, kCommunity = 8, kCommunities = kNodes / kCommunity;
  for (const Partition& partition : {Partition::range(0), Partition::hash(0)}) {
    auto x = DistArray<float, 1>::fill(rt(), {kNodes}, 1.0f);
    auto emb = DistArray<float, 2>::randn(rt(), {kNodes, kWidth}, 0.1, 0.0, partition, 12).set_name("emb");
    std::vector<float> ref = emb.gather();
    std::int64_t shift = 0;  // a driver variable
    auto partner = [&](std::int64_t u) { return partner_of(u, shift, kCommunity, kCommunities); };
    // Whole rows: the table tracks emb by row, 64 bytes a unit.
    auto in_emb = [&](std::int64_t r, std::int64_t k) -> float& { return emb.row(r)[static_cast<std::size_t>(k)]; };
    auto in_ref = [&](std::int64_t r, std::int64_t k) -> float& { return ref[static_cast<std::size_t>(r * kWidth + k)]; };
    int refused = 0;
    for (const std::int64_t s : {0, 1, 2, 2, 0}) {
      shift = s;
      const LoopReport report =
          parallel_for(x, [&](const Index<1>& i, float) { pull_together(in_emb, i[0], partner(i[0]), kWidth); });
      for (const auto& i : equivalent_order(x, report)) pull_together(in_ref, i[0], partner(i[0]), kWidth);
      ASSERT_EQ(emb.gather(), ref) << partition.describe() << ", shift " << s << "\n" << report.explain();
      if (!report.revalidated) continue;  // one thread on one rank: nothing can conflict
      const auto& owners = loop::detail::plan_of(report).ownership;
      ASSERT_TRUE(owners && owners->logs_writes(emb)) << report.explain();
      refused += report.revalidation_failure.empty() ? 0 : 1;
    }
    if (rt().size() > 1 || rt().threads() > 1) {
      EXPECT_GT(refused, 0) << partition.describe() << ": no call was refused, so no undo was tested";
    }
  }
}

// An array the loop only reads travels by units too: a rank holds its part and the
// rows its groups read when planned. When a driver variable sends the reads elsewhere,
// a rank's access to a row it does not hold is refused before it reads (the run is
// undone and planned again), so every call still equals its equivalent order bit for
// bit, under partitions that keep rows whole and one that cuts them.
TEST(SpreadUnits, ArraysTheLoopOnlyReadsTravelByUnits) {
  // ctx's rows are 64 bytes: an array the loop only reads is tracked by row from there.
  constexpr std::int64_t kNodes = 512, kWidth = 4, kContext = 16, kCommunity = 8;
  for (const Partition& partition : {Partition::range(0), Partition::hash(0), Partition::range(1)}) {
    auto x = DistArray<float, 1>::fill(rt(), {kNodes}, 1.0f);
    auto emb = DistArray<float, 2>::randn(rt(), {kNodes, kWidth}, 0.1, 0.0, Partition::range(0), 3)
                   .set_name("emb");
    auto ctx = DistArray<float, 2>::randn(rt(), {kNodes, kContext}, 1.0, 0.0, partition, 4)
                   .set_name("ctx");
    std::vector<float> ref = emb.gather();
    const std::vector<float> ctx_values = ctx.gather();
    std::int64_t shift = 0;  // a driver variable: the context row a node reads
    auto context = [&](std::int64_t u) { return (u * 37 + shift * 101) % kNodes; };
    auto next = [](std::int64_t u) { return u / kCommunity * kCommunity + (u + 1) % kCommunity; };
    // Node u moves towards its ring neighbour, weighted by an element of its context
    // row (read elements, not rows: range(1) cuts the rows).
    auto step = [&](auto&& at, auto&& read, std::int64_t u) {
      const std::int64_t v = next(u), c = context(u);
      for (std::int64_t k = 0; k < kWidth; ++k)
        at(u, k) += 0.1f * read(c, k) * (at(v, k) - at(u, k));
    };
    auto in_emb = [&](std::int64_t r, std::int64_t k) -> float& { return emb(r, k); };
    auto in_ctx = [&](std::int64_t r, std::int64_t k) { return ctx.read({r, k}); };
    auto in_ref = [&](std::int64_t r, std::int64_t k) -> float& {
      return ref[static_cast<std::size_t>(r * kWidth + k)];
    };
    auto in_ctx_values = [&](std::int64_t r, std::int64_t k) {
      return ctx_values[static_cast<std::size_t>(r * kContext + k)];
    };
    std::int64_t last = 0;
    for (const std::int64_t s : {0, 0, 1, 1, 0}) {
      const bool moved = s != last;
      shift = last = s;
      const LoopReport report = parallel_for(x, [&](const Index<1>& i, float) { step(in_emb, in_ctx, i[0]); });
      for (const auto& i : equivalent_order(x, report)) step(in_ref, in_ctx_values, i[0]);
      ASSERT_EQ(emb.gather(), ref) << partition.describe() << ", shift " << s << "\n" << report.explain();
      ASSERT_EQ(ctx.gather(), ctx_values) << partition.describe();
      if (rt().size() == 1) continue;
      ASSERT_TRUE(report.spread) << report.explain();
      // ctx is among the arrays the plan keeps units (rows) of, and a rank needs a share of it.
      const auto& units = loop::detail::plan_of(report).hosted->units;
      const auto kept = std::find_if(units.begin(), units.end(),
                                     [&](const auto& u) { return u.array_id == ctx.array_id(); });
      ASSERT_NE(kept, units.end()) << report.explain();
      EXPECT_EQ(kept->unit_elems, static_cast<std::size_t>(kContext));
      EXPECT_LT(kept->needed.size(), static_cast<std::size_t>(kNodes)) << report.explain();
      EXPECT_NE(report.explain().find("read only"), std::string::npos) << report.explain();
      // The reads moved: a rank reached for a row of ctx it had not fetched.
      if (moved) {
        EXPECT_NE(report.revalidation_failure.find("lies outside what this rank holds"), std::string::npos)
            << report.explain();
      }
    }
  }
}

// A body that starts writing an array it only read when the loop was planned, from one
// iteration (`writer`): the probe of the cached plan (8 iterations a rank) does not
// visit it in these calls, so the run's claims refuse the write before it lands (the
// rank holds fetched copies of the array's rows, which are dropped after a call); the
// loop is planned again with the array written, and every call equals its equivalent
// order. (A write from every iteration is met by the probe first: PlanProbe.*.)
TEST(SpreadUnits, AWriteToAnArrayPlannedAsReadOnlyIsRefused) {
  constexpr std::int64_t kNodes = 256, kContext = 16, kCommunity = 8;
  auto x = DistArray<float, 1>::fill(rt(), {kNodes}, 1.0f);
  auto emb = DistArray<float, 1>::zeros(rt(), {kNodes}).set_name("emb");
  auto ctx = DistArray<float, 2>::randn(rt(), {kNodes, kContext}, 1.0, 0.0, Partition::range(0), 6)
                 .set_name("ctx");
  std::vector<float> emb_ref = emb.gather(), ctx_ref = ctx.gather();
  bool writes_ctx = false;  // a driver flag
  constexpr std::int64_t writer = kNodes / 2 + 5;
  auto next = [](std::int64_t u) { return u / kCommunity * kCommunity + (u + 1) % kCommunity; };
  int call = 0;
  for (const bool w : {false, false, true, true}) {
    ++call;
    writes_ctx = w;
    LoopReport report;
    try {
      report = parallel_for(x, [&](const Index<1>& i, float) {
        const std::int64_t u = i[0], v = next(u);
        emb[u] += ctx.read({v, 0}) + emb[v];
        if (writes_ctx && u == writer) ctx(v, 1) += 1.0f;
      });
    } catch (const Error& e) {
      // Checked mode on one worker, whose plan no run re-validates: a site the
      // reconnaissance pass never saw is an error there, not a reason to plan again.
      ASSERT_NE(std::getenv("STRATA_CHECKED"), nullptr) << e.what();
      ASSERT_TRUE(w && rt().size() == 1 && rt().threads() == 1) << e.what();
      EXPECT_NE(std::string(e.what()).find("was not seen by the reconnaissance pass"), std::string::npos) << e.what();
      return;
    }
    for (const auto& i : equivalent_order(x, report)) {
      const std::int64_t u = i[0], v = next(u);
      emb_ref[static_cast<std::size_t>(u)] +=
          ctx_ref[static_cast<std::size_t>(v * kContext)] + emb_ref[static_cast<std::size_t>(v)];
      if (writes_ctx && u == writer) ctx_ref[static_cast<std::size_t>(v * kContext + 1)] += 1.0f;
    }
    ASSERT_EQ(emb.gather(), emb_ref) << "writes ctx: " << w << "\n" << report.explain();
    ASSERT_EQ(ctx.gather(), ctx_ref) << "writes ctx: " << w << "\n" << report.explain();
    if (rt().size() > 1 && call == 3) {  // the first call that writes ctx
      // Refused by the claims ("writes an array the plan never saw written"), or in
      // checked mode by the site check ("comes from a site it never saw").
      EXPECT_NE(report.revalidation_failure.find("never saw"), std::string::npos) << report.explain();
      EXPECT_EQ(report.probe_failure, "") << report.explain();
    }
  }
}

// A driver variable that differs between ranks: each iteration is recorded by the rank
// holding it, and runs where its group is placed, which may compute other subscripts.
// A rank refuses a unit it does not hold, and the owners see every unit two ranks
// touched (one writing it), so no call loses an increment, however the loop ends up
// planned.
TEST(SpreadUnits, RanksThatDisagreeOnSubscriptsLoseNoUpdate) {
  const std::int64_t n = 4000;
  auto x = DistArray<double, 1>::fill(rt(), {n}, 1.0);
  auto y = DistArray<std::int64_t, 1>::zeros(rt(), {n}).set_name("y");
  const std::int64_t offset = rt().rank();
  const auto total_of = [&] {
    std::int64_t total = 0;
    for (const auto c : y.gather()) total += c;
    return total;
  };
  for (int call = 1; call <= 3; ++call) {
    LoopReport report;
    try {
      report = parallel_for(x, [&](const Index<1>& i, double) { y[(i[0] * 7 + offset) % n] += 1; });
    } catch (const Error& e) {
      // Checked mode says so instead of going serial (subscripts that are not a function
      // of the iteration, the arrays and the driver's variables), the run undone.
      ASSERT_NE(std::getenv("STRATA_CHECKED"), nullptr) << e.what();
      EXPECT_NE(std::string(e.what()).find("differ from those its reconnaissance pass recorded"), std::string::npos)
          << e.what();
      ASSERT_EQ(total_of(), n * (call - 1));
      return;
    }
    const std::int64_t total = total_of();
    ASSERT_EQ(total, n * call) << "call " << call << "\n" << report.explain();
    // Across ranks the first call's run is refused, by a rank reaching a unit it does
    // not hold or by an owner ("y[0] written on rank 0 (its owner) was lent to rank 1"),
    // and the loop goes serial: its subscripts are not what its reconnaissance pass
    // recorded.
    if (rt().size() > 1 && call == 1) {
      EXPECT_NE(report.serial_reason.find("no longer hold"), std::string::npos) << report.explain();
    }
  }
}

// Rings inside communities of 64 nodes: each community is one conflict group,
// and the groups go round the workers, so a rank's groups touch a share of the rows,
// most of them in other ranks' parts. The peak resident set of a call, less the
// resident set before, plus the array's own part: an upper bound on what the rank
// held of the array at once. It must stay near its part, the old values of the rows of
// its part it writes (logged to undo a refused run), the rows its groups touch from
// other ranks and a round of messages, not the whole array, which every rank held
// before (and until the write logs, a copy of its part).
TEST(SpreadUnits, ARankHoldsItsPartAndTheRowsItsGroupsTouch) {
  if (rt().size() == 1) GTEST_SKIP() << "groups are spread over ranks only";
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "resident-set bounds are not measurable under AddressSanitizer";
#endif
  constexpr std::int64_t kNodes = 262144, kWidth = 64, kCommunity = 64;  // 64 MiB of rows
  auto x = DistArray<float, 1>::fill(rt(), {kNodes}, 1.0f);
  auto emb = DistArray<float, 2>::randn(rt(), {kNodes, kWidth}, 0.1, 0.0, Partition::range(0), 7).set_name("emb");
  // Node u pulls its ring neighbour in its community: an irregular subscript.
  auto next = [](std::int64_t u) { return u / kCommunity * kCommunity + (u + 1) % kCommunity; };
  auto body = [&](const Index<1>& i, float rate) {
    float* u = emb.row(i[0]).data();
    float* v = emb.row(next(i[0])).data();
    float dot = 0;
    for (std::int64_t k = 0; k < kWidth; ++k) dot += u[k] * v[k];
    for (std::int64_t k = 0; k < kWidth; ++k) {
      const float uk = u[k];
      u[k] += 0.01f * rate * (1 - dot) * v[k];
      v[k] += 0.01f * rate * (1 - dot) * uk;
    }
  };
  auto call = [&] { return parallel_for(x, body); };  // one loop site, one plan
  const LoopReport first = call();
  ASSERT_TRUE(first.spread) << first.explain();
  ASSERT_EQ(first.revalidation_failure, "") << first.explain();
  call();  // the first calls also allocate what later calls reuse
  const double row_bytes = kWidth * sizeof(float);
  const double whole = kNodes * row_bytes;
  const double part = static_cast<double>(emb.local_values().size()) * sizeof(float);
  // The rows this rank's groups touch that other ranks hold.
  ASSERT_EQ(loop::detail::plan_of(first).hosted->units.size(), 1u);
  const double fetched = needed_row_bytes(first, emb, emb.local_box()[0], row_bytes);
  const double logged = needed_row_bytes(first, emb, emb.local_box()[0], row_bytes, /*own=*/true);
  LoopReport measured;
  const double held = growth_during([&] { measured = call(); }) + part;
  ASSERT_EQ(measured.revalidation_failure, "") << measured.explain();
  // The part and the old values of its rows the run writes, the fetched rows in place,
  // the messages of a round (4 MiB a rank receives: the units it asked for, the units
  // others asked of it, with room for more) and 10 % of the array for pages and the
  // call's own allocations.
  const double round = 4 << 20;
  const double bound = part + logged + fetched + 3 * round + 0.10 * whole;
  std::printf("[rank %d] emb %.1f MiB, part %.1f MiB, rows fetched %.1f MiB, held at most %.1f MiB during a call "
              "(bound %.1f MiB)\n",
              rt().rank(), whole / (1 << 20), part / (1 << 20), fetched / (1 << 20), held / (1 << 20),
              bound / (1 << 20));
  EXPECT_LE(held, bound);
  // Before, every rank held the array whole, and received it once more in messages.
  if (rt().size() >= 4) {
    EXPECT_LT(bound, whole);
  }
}

// The same rings, but the large array is one the loop only reads (64-float context
// rows, 64 MiB) and the written one is small: a rank holds its part of the read array
// and the rows its groups read, where it used to receive the whole array.
TEST(SpreadUnits, ARankHoldsItsPartOfAnArrayTheLoopOnlyReads) {
  if (rt().size() == 1) GTEST_SKIP() << "groups are spread over ranks only";
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "resident-set bounds are not measurable under AddressSanitizer";
#endif
  constexpr std::int64_t kNodes = 262144, kWidth = 64, kEmb = 4, kCommunity = 64;
  auto x = DistArray<float, 1>::fill(rt(), {kNodes}, 1.0f);
  auto emb = DistArray<float, 2>::randn(rt(), {kNodes, kEmb}, 0.1, 0.0, Partition::range(0), 8).set_name("emb");
  auto ctx = DistArray<float, 2>::randn(rt(), {kNodes, kWidth}, 0.1, 0.0, Partition::range(0), 9).set_name("ctx");
  auto next = [](std::int64_t u) { return u / kCommunity * kCommunity + (u + 1) % kCommunity; };
  auto body = [&](const Index<1>& i, float rate) {
    const std::int64_t u = i[0], v = next(u);
    const std::span<const float> cu = ctx.read_row(u), cv = ctx.read_row(v);
    float dot = 0;
    for (std::int64_t k = 0; k < kWidth; ++k) dot += cu[k] * cv[k];
    float* eu = emb.row(u).data();
    const float* ev = emb.row(v).data();
    for (std::int64_t k = 0; k < kEmb; ++k) eu[k] += 0.01f * rate * dot * (ev[k] - eu[k]);
  };
  auto call = [&] { return parallel_for(x, body); };
  const LoopReport first = call();
  ASSERT_TRUE(first.spread) << first.explain();
  ASSERT_EQ(first.revalidation_failure, "") << first.explain();
  call();
  const double ctx_row = kWidth * sizeof(float), emb_row = kEmb * sizeof(float);
  const double whole = kNodes * (ctx_row + emb_row);
  const double ctx_part = static_cast<double>(ctx.local_values().size()) * sizeof(float);
  const double emb_part = static_cast<double>(emb.local_values().size()) * sizeof(float);
  ASSERT_EQ(loop::detail::plan_of(first).hosted->units.size(), 2u) << first.explain();
  const double fetched = needed_row_bytes(first, ctx, ctx.local_box()[0], ctx_row) +
                         needed_row_bytes(first, emb, emb.local_box()[0], emb_row);
  LoopReport measured;
  const double held = growth_during([&] { measured = call(); }) + ctx_part + emb_part;
  ASSERT_EQ(measured.revalidation_failure, "") << measured.explain();
  // Both parts, the written one's undo copy, the fetched rows, a round of messages and
  // 10 % of the arrays for pages and the call's own allocations (as above).
  const double round = 4 << 20;
  const double bound = ctx_part + 2 * emb_part + fetched + 3 * round + 0.10 * whole;
  std::printf("[rank %d] ctx %.1f MiB read only, emb %.1f MiB, parts %.1f MiB, rows fetched %.1f MiB, held at most "
              "%.1f MiB during a call (bound %.1f MiB)\n",
              rt().rank(), kNodes * ctx_row / (1 << 20), kNodes * emb_row / (1 << 20),
              (ctx_part + emb_part) / (1 << 20), fetched / (1 << 20), held / (1 << 20), bound / (1 << 20));
  EXPECT_LE(held, bound);
  // Before, every rank held ctx whole, and received it once more in messages.
  if (rt().size() >= 4) {
    EXPECT_LT(bound, kNodes * ctx_row);
  }
}

}  // namespace
}  // namespace strata
