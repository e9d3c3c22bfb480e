// parallel_for: runs a serial loop body over a DistArray's iteration space on all
// workers (ranks x threads) while keeping every dependence the body creates through
// DistArray accesses: the parallel run equals some serial order of the iterations
// (the lexicographic one for dependent iterations when `ordered`).
//
//   strata::parallel_for(R, [&](const strata::Index<2>& ij, float& r) {
//     auto w = W.row(ij[0]);
//     auto h = H.row(ij[1]);
//     ...                                   // the serial loop's body, unchanged
//   });
//
// The first call at a loop site runs a reconnaissance pass (the body over this rank's
// iterations, or a sample of them for large loops, with accesses recorded and writes
// undone), fits subscripts, derives dependence vectors, chooses a strategy and lays
// arrays out for it; later calls reuse the plan while the iteration space and arrays
// keep their structure. A plan from a sample is checked access by access on its first
// run and replaced, with the run undone, if it does not hold.
//
// The body enters the engine through the narrow waist of loop_body.hpp; the engine
// itself, plans included, is compiled once, in src/loop/. A call returns a
// LoopReport (loop_report.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <source_location>
#include <vector>

#include "strata/dist_array.hpp"
#include "strata/loop/accumulator.hpp"
#include "strata/loop/loop_body.hpp"
#include "strata/loop/loop_options.hpp"
#include "strata/loop/loop_report.hpp"

namespace strata {

namespace loop::detail {
// The engine's entry points (src/loop/loop_call.cpp). Collective.
LoopReport parallel_for_call(const SpaceView& space, const LoopBody& body, const LoopOptions& options,
                             const std::source_location& where);
LoopReport plan_call(const SpaceView& space, const LoopBody& body, const LoopOptions& options,
                     const std::source_location& where);
/// Rows of a schedule are stored flat: step, worker, seq, then the dims subscripts.
inline constexpr std::size_t kScheduleFields = 3;
/// The last run of the plan behind `report` as schedule rows, gathered from all ranks
/// and sorted by (step, worker, seq). Steps are the 2-D schedule's steps; in other
/// plans the clocks of a relaxed run (every `clock_every` iterations of a worker; 0
/// when it is 0). Within a step, workers touch nothing another worker of the step
/// writes, so the sort is a serial order the run is equivalent to.
std::vector<std::int64_t> schedule_rows(const SpaceView& space, const LoopReport& report, std::int64_t clock_every);
}  // namespace loop::detail

/// Plans the loop at `where` without running it (or fetches its plan from the cache),
/// as the first parallel_for call there would: `strata explain` shows plans this way.
/// The report has no run timings. Collective.
template <class Elem, std::size_t M, class Body>
LoopReport plan_loop(DistArray<Elem, M>& space, Body& body, const LoopOptions& options = {},
                     std::source_location where = std::source_location::current()) {
  return loop::detail::plan_call(loop::detail::space_view(space), loop::detail::loop_body<Elem, M>(body), options,
                                 where);
}

/// Runs `body(index, value)` for every element of `space` in parallel and reports
/// how (LoopReport). The body may take the element by value, const reference, or
/// reference (to modify it). Collective.
///
/// The first run of a plan built from a sampled reconnaissance is speculative: every
/// access is checked against the plan, and if one does not fit, everything the run
/// changed (the arrays it writes, the space's elements, accumulators) is restored,
/// the loop is planned again from a full reconnaissance pass and run by that plan.
///
/// Every call counts as one loop call of the run (strata/recovery.hpp):
/// with automatic checkpoints the arrays it changed may be saved after it, and a
/// resumed run skips it if its checkpoint covers it (the report then says `skipped`).
template <class Elem, std::size_t M, class Body>
LoopReport parallel_for(DistArray<Elem, M>& space, Body&& body, const LoopOptions& options = {},
                        std::source_location where = std::source_location::current()) {
  return loop::detail::parallel_for_call(loop::detail::space_view(space), loop::detail::loop_body<Elem, M>(body),
                                         options, where);
}

/// The serial order the call that returned `report` is equivalent to: every
/// iteration's index, gathered from all ranks (collective). Replaying the body in
/// this order on one thread reproduces the parallel result bit for bit. A later call
/// by the same plan (same plan_id) runs in the same order.
template <class Elem, std::size_t M>
std::vector<Index<M>> equivalent_order(const DistArray<Elem, M>& space, const LoopReport& report) {
  const auto rows = loop::detail::schedule_rows(loop::detail::space_view(space), report, 0);
  constexpr std::size_t width = loop::detail::kScheduleFields + M;
  std::vector<Index<M>> out(rows.size() / width);
  for (std::size_t k = 0; k < out.size(); ++k) {
    const std::int64_t* row = &rows[k * width + loop::detail::kScheduleFields];
    std::copy(row, row + M, out[k].begin());
  }
  return out;
}

}  // namespace strata
