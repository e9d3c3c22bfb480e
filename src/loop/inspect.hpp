// For tests and benchmarks only; not API. The plan behind a LoopReport, the schedule
// of its last run, and the engine's phases one at a time. The targets that include
// this add src/ to their private include path (tests/CMakeLists.txt,
// bench/CMakeLists.txt).
#pragma once

#include <algorithm>
#include <cstdint>
#include <source_location>
#include <string>
#include <vector>

#include "loop/loop_internal.hpp"

namespace strata::loop::detail {

/// The plan the call that returned `report` ran by.
inline const Plan& plan_of(const LoopReport& report) { return ReportAccess::plan(report); }

/// One iteration of a loop call as a schedule lists it.
template <std::size_t M>
struct ScheduledIteration {
  std::int64_t step, worker, seq;  ///< worker: rank x threads + thread; seq: its place in the worker's order
  Index<M> index;
};

/// Every iteration of the last run of the plan behind `report` with the worker that
/// ran it, gathered from all ranks (collective) and sorted by (step, worker, seq);
/// see schedule_rows (strata/loop/parallel_for.hpp).
template <class Elem, std::size_t M>
std::vector<ScheduledIteration<M>> scheduled_iterations(const DistArray<Elem, M>& space, const LoopReport& report,
                                                         std::int64_t clock_every) {
  const auto rows = schedule_rows(space_view(space), report, clock_every);
  constexpr std::size_t width = kScheduleFields + M;
  std::vector<ScheduledIteration<M>> out(rows.size() / width);
  for (std::size_t k = 0; k < out.size(); ++k) {
    const std::int64_t* row = &rows[k * width];
    out[k].step = row[0], out[k].worker = row[1], out[k].seq = row[2];
    std::copy(row + kScheduleFields, row + width, out[k].index.begin());
  }
  return out;
}

/// The plan of the loop at `where`, built or fetched from the cache as parallel_for
/// would, for a benchmark to run by it (run_plan). Collective.
template <class Elem, std::size_t M, class Body>
Plan& plan_of_loop(DistArray<Elem, M>& space, Body& body, const LoopOptions& options,
                   std::source_location where) {
  return *cached_plan(space_view(space), loop_body<Elem, M>(body), options, where);
}

/// The reconnaissance pass of `body` alone (1 in `stride` iterations).
template <class Elem, std::size_t M, class Body>
void reconnoitre(DistArray<Elem, M>& space, Body& body, bool /*record_elements*/, int stride = 1) {
  reconnaissance_only(space_view(space), loop_body<Elem, M>(body), stride);
}

/// One run of `body` by `plan`, checking every access against it with `verify`.
template <class Elem, std::size_t M, class Body>
std::string run_plan(DistArray<Elem, M>& space, Body& body, Plan& plan, const LoopOptions& options, bool verify) {
  return run_plan(space_view(space), loop_body<Elem, M>(body), plan, options, verify);
}

}  // namespace strata::loop::detail
