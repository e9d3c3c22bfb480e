// Work records, what a plan streams to the body for each iteration: 64-, 32- and
// 16-bit subscripts (the last as offsets from a base per list), and positions let go
// after packing that come back from the records. Each test checks that every
// subscript and element reaches the body exactly (ctest runs this with 1, 2 and 4
// ranks, with 2 threads per rank and with 1).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "loop/inspect.hpp"  // plans and schedules behind the reports (not API)
#include "strata/loop/parallel_for.hpp"
#include "test_runtime.hpp"

namespace strata {
namespace {
using testing::rt;

// A space with an extent beyond 32 bits keeps 64-bit subscripts in its work records
// (smaller spaces get 32-bit ones): every subscript reaches the body exactly, with
// the element taken by value and by reference. (A serial plan: the partitioned ones
// take histograms as long as the extent.)
TEST(ParallelFor, SubscriptsBeyond32BitsReachTheBody) {
  LoopOptions serial;
  serial.strategy = analysis::Strategy::serial;
  const std::int64_t rows = std::int64_t{3} << 31, cols = 7;
  std::vector<Entry<double, 2>> mine;
  double row_sum = 0, col_sum = 0, value_sum = 0;
  for (std::int64_t k = 0; k < 1000; ++k) {
    const Index<2> at{rows - 1 - k * 1000003, k % cols};
    if (rt().rank() == 0) mine.push_back({at, 1.0 + static_cast<double>(k)});
    row_sum += static_cast<double>(at[0] % 1009), col_sum += static_cast<double>(at[1]);
    value_sum += 1.0 + static_cast<double>(k);
  }
  auto S = DistArray<double, 2>::sparse(rt(), {rows, cols}, mine);
  Accumulator<double> by_row(rt()), by_col(rt()), by_value(rt());
  parallel_for(S, [&](const Index<2>& ij, double v) {
    by_row += static_cast<double>(ij[0] % 1009), by_col += static_cast<double>(ij[1]), by_value += v;
  }, serial);
  EXPECT_EQ(by_row.take(), row_sum);
  EXPECT_EQ(by_col.take(), col_sum);
  EXPECT_EQ(by_value.take(), value_sum);
  parallel_for(S, [&](const Index<2>& ij, double& v) { v = static_cast<double>(ij[0] % 1009); }, serial);
  double stored = 0;
  for (const double v : S.local_values()) stored += v;
  EXPECT_EQ(rt().comm().allreduce(stored, ReduceOp::sum), row_sum);
}

// Work records carry 16-bit offsets from their list's smallest subscripts where every
// list spans at most 2^16 indices in each dimension (mf's blocks), 32-bit subscripts
// otherwise: either way every subscript and element reaches the body exactly, in a
// 1-D plan and in a 2-D plan that writes a row of W and of H per iteration, as mf's.
TEST(ParallelFor, NarrowAndCompactRecordsGiveTheBodyItsSubscripts) {
  for (const std::int64_t rows : {std::int64_t{3000}, std::int64_t{400000}}) {
    const std::int64_t cols = 50000, n = 20000;
    std::vector<Entry<float, 2>> mine;
    std::int64_t checksum = 0;
    std::vector<double> row_total(static_cast<std::size_t>(rows), 0.0);
    auto mark = [](const Index<2>& ij, float v) {
      return (ij[0] * 31 + ij[1] * 17 + static_cast<std::int64_t>(v)) % 1009;
    };
    for (std::int64_t k = 0; k < n; ++k) {
      const Index<2> at{(k * 20) % rows, (k * 7919) % cols};  // distinct pairs
      const auto v = static_cast<float>(k % 97);
      if (rt().rank() == 0) mine.push_back({at, v});
      checksum += mark(at, v);
      row_total[static_cast<std::size_t>(at[0])] += v;
    }
    auto S = DistArray<float, 2>::sparse(rt(), {rows, cols}, mine);
    Accumulator<double> seen(rt());
    const auto one_d = parallel_for(S, [&](const Index<2>& ij, float v) { seen += static_cast<double>(mark(ij, v)); });
    EXPECT_EQ(seen.take(), static_cast<double>(checksum)) << rows << " rows";
    const bool narrow = loop::detail::plan_of(one_d).narrow_records;
    auto W = DistArray<double, 2>::zeros(rt(), {rows, 1}), H = DistArray<double, 2>::zeros(rt(), {cols, 1});
    const auto two_d = parallel_for(S, [&](const Index<2>& ij, float v) {
      W.row(ij[0])[0] += static_cast<double>(v);
      H.row(ij[1])[0] += 1.0;
    });
    EXPECT_EQ(loop::detail::plan_of(two_d).choice.strategy, analysis::Strategy::two_d);
    const auto w = W.gather();
    for (std::int64_t i = 0; i < rows; ++i)
      ASSERT_EQ(w[static_cast<std::size_t>(i)], row_total[static_cast<std::size_t>(i)]) << "row " << i;
    double items = 0;
    for (const double h : H.gather()) items += h;
    EXPECT_EQ(items, static_cast<double>(S.nnz()));
    // 3,000 rows fit one list's narrow span; 400,000 rows do not for one worker.
    if (rows == 3000) {
      EXPECT_TRUE(narrow);
    } else if (rt().size() * rt().threads() == 1) {
      EXPECT_FALSE(narrow);
    }
  }
}

// A 2-D list's records count from its box (its slice of users by its item block)
// where every box spans at most 2^16 indices, and from its iterations' own smallest
// subscripts otherwise: rows 300,000-359,999 of 400,000 hold every entry, so every
// worker's box spans more than 2^16 rows while its iterations span fewer than
// 60,000, from row 300,000 on (an offset from row 0 would not fit 16 bits). Narrow
// records either way, and every subscript reaches the body exactly.
TEST(ParallelFor, ListsWhoseBoxIsWideCountFromTheirOwnSubscripts) {
  const std::int64_t rows = 400000, cols = 300, n = 30000;
  std::vector<Entry<float, 2>> mine;
  std::vector<double> row_total(static_cast<std::size_t>(rows), 0.0), col_total(static_cast<std::size_t>(cols), 0.0);
  for (std::int64_t k = 0; k < n; ++k) {
    const Index<2> at{300000 + (k * 2) % 60000, (k * 7) % cols};  // distinct pairs
    const auto v = static_cast<float>(k % 89);
    if (rt().rank() == 0) mine.push_back({at, v});
    row_total[static_cast<std::size_t>(at[0])] += v;
    col_total[static_cast<std::size_t>(at[1])] += static_cast<double>(at[0]);
  }
  auto S = DistArray<float, 2>::sparse(rt(), {rows, cols}, mine);
  auto W = DistArray<double, 2>::zeros(rt(), {rows, 1}), H = DistArray<double, 2>::zeros(rt(), {cols, 1});
  const auto two_d = parallel_for(S, [&](const Index<2>& ij, float v) {
    W.row(ij[0])[0] += static_cast<double>(v);
    H.row(ij[1])[0] += static_cast<double>(ij[0]);
  });
  ASSERT_EQ(loop::detail::plan_of(two_d).choice.strategy, analysis::Strategy::two_d) << two_d.explain();
  EXPECT_TRUE(loop::detail::plan_of(two_d).narrow_records);
  EXPECT_EQ(W.gather(), row_total);
  EXPECT_EQ(H.gather(), col_total);
}

// A body that takes its element by value streams copies in its records, so the plan
// lets its positions go once they are packed (4 bytes an iteration). They come back
// from the records' subscripts (16-bit, 32-bit and 64-bit alike) when the elements
// change and the copies are refreshed, and when the schedule is listed: every
// iteration once, at its own subscripts, each seeing the new value.
TEST(ParallelFor, PositionsLetGoAfterPackingComeBackFromTheRecords) {
  struct Case {
    std::int64_t rows;
    bool serial;  // 64-bit subscripts: a serial plan (partitioned plans take histograms as long as the extent)
  };
  for (const Case c : {Case{3000, false}, Case{400000, false}, Case{std::int64_t{3} << 31, true}}) {
    const std::int64_t cols = 50000, n = 20000;
    std::vector<Entry<float, 2>> mine;
    std::map<std::pair<std::int64_t, std::int64_t>, float> value_at;
    for (std::int64_t k = 0; k < n; ++k) {
      const Index<2> at{(k * 20 * 1000003) % c.rows, (k * 7919) % cols};
      const auto v = static_cast<float>(k % 97);
      if (rt().rank() == 0) mine.push_back({at, v});
      value_at[{at[0], at[1]}] = v;
    }
    auto S = DistArray<float, 2>::sparse(rt(), {c.rows, cols}, mine);
    LoopOptions options;
    if (c.serial) options.strategy = analysis::Strategy::serial;
    auto W = DistArray<double, 2>::zeros(rt(), {c.serial ? 1 : c.rows, 1});
    Accumulator<double> total(rt());
    auto read = [&] {  // one loop site: one plan for every call
      return parallel_for(S, [&](const Index<2>& ij, float v) {
        if (!c.serial) W.row(ij[0])[0] += static_cast<double>(v);
        total += static_cast<double>(v) * static_cast<double>(ij[1] % 13 + 1);
      }, options);
    };
    double expected = 0;
    for (const auto& [at, v] : value_at) expected += static_cast<double>(v) * static_cast<double>(at.second % 13 + 1);
    {  // Planned only: positions that packing would let go are never listed, only counted.
      auto count = [&](const Index<2>&, float v) { total += static_cast<double>(v); };
      const loop::Plan& planned = loop::detail::plan_of(plan_loop(S, count, options));
      EXPECT_TRUE(planned.positions_dropped) << c.rows << " rows";
      std::int64_t listed = 0, counted = 0;
      for (std::size_t th = 0; th < planned.work.size(); ++th)
        for (std::size_t st = 0; st < planned.work[th].size(); ++st) {
          listed += static_cast<std::int64_t>(planned.work[th][st].size());
          counted += planned.list_sizes[th][st];
        }
      EXPECT_EQ(listed, 0) << c.rows << " rows";
      EXPECT_EQ(counted, S.local_nnz()) << c.rows << " rows";  // after planning (a serial plan gathers S)
    }
    const LoopReport first = read();
    EXPECT_TRUE(loop::detail::plan_of(first).positions_dropped) << c.rows << " rows";
    EXPECT_EQ(total.take(), expected) << c.rows << " rows";
    parallel_for(S, [](const Index<2>& ij, float& v) { v += static_cast<float>((ij[0] + ij[1]) % 5); },
                 options);  // the elements change
    const LoopReport second = read();
    if (!c.serial || rt().rank() == 0) {  // a serial plan runs on rank 0: only its copies are refreshed
      EXPECT_FALSE(loop::detail::plan_of(second).positions_dropped) << c.rows << " rows: refreshed by position";
    }
    EXPECT_EQ(second.plan_id, first.plan_id);
    expected = 0;
    for (const auto& [at, v] : value_at)
      expected += static_cast<double>(v + static_cast<float>((at.first + at.second) % 5)) *
                  static_cast<double>(at.second % 13 + 1);
    EXPECT_EQ(total.take(), expected) << c.rows << " rows";
    // The listed schedule of a plan whose positions went: each iteration once.
    auto S2 = DistArray<float, 2>::sparse(rt(), {c.rows, cols}, mine);
    Accumulator<double> unused(rt());
    const LoopReport listed = parallel_for(S2, [&](const Index<2>& ij, float v) {
      unused += static_cast<double>(v) + static_cast<double>(ij[0] % 3);
    }, options);
    EXPECT_TRUE(loop::detail::plan_of(listed).positions_dropped);
    std::set<std::pair<std::int64_t, std::int64_t>> seen;
    for (const auto& it : loop::detail::scheduled_iterations(S2, listed, 0))
      EXPECT_TRUE(seen.insert({it.index[0], it.index[1]}).second) << it.index[0] << "," << it.index[1] << " twice";
    EXPECT_EQ(seen.size(), value_at.size()) << c.rows << " rows";
    for (const auto& [at, v] : value_at) EXPECT_TRUE(seen.count(at)) << at.first << "," << at.second << " missing";
  }
}

}  // namespace
}  // namespace strata
