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
// itself is compiled once, in src/loop/.
#pragma once

#include <cstdint>
#include <source_location>
#include <vector>

#include "strata/dist_array.hpp"
#include "strata/loop/accumulator.hpp"
#include "strata/loop/loop_body.hpp"
#include "strata/loop/plan.hpp"

namespace strata {

namespace loop::detail {
// The engine's entry points (src/loop/loop_call.cpp). Collective.
const Plan& parallel_for_call(const SpaceView& space, const LoopBody& body, const LoopOptions& options,
                              const std::source_location& where);
Plan& plan_for(const SpaceView& space, const LoopBody& body, const LoopOptions& options,
               const std::source_location& where);
/// Rows of a schedule are stored flat: step, worker, seq, then the dims subscripts.
inline constexpr std::size_t kScheduleFields = 3;
/// The last run of `plan` as schedule rows, gathered from all ranks and sorted (see
/// scheduled_iterations).
std::vector<std::int64_t> schedule_rows(const SpaceView& space, const Plan& plan, std::int64_t clock_every);
/// Whether a reconnaissance pass of 1 in `stride` over a rank's `n` iterations
/// visits local iteration `pos` (for tests of speculative plans).
bool reconnaissance_visits(std::int64_t n, int stride, std::int64_t pos);
/// For benchmarks: the reconnaissance pass alone (1 in `stride` iterations).
void reconnaissance_only(const SpaceView& space, const LoopBody& body, int stride);
/// For benchmarks: one run by `plan` (checking every access with `verify`).
std::string run_plan(const SpaceView& space, const LoopBody& body, Plan& plan, const LoopOptions& options,
                     bool verify);
}  // namespace loop::detail

/// Builds (or fetches from the cache) the plan of the loop at `where`. Collective.
template <class Elem, std::size_t M, class Body>
loop::Plan& plan_loop(DistArray<Elem, M>& space, Body& body, const LoopOptions& options = {},
                      std::source_location where = std::source_location::current()) {
  return loop::detail::plan_for(loop::detail::space_view(space), loop::detail::loop_body<Elem, M>(body), options,
                                where);
}

/// Runs `body(index, value)` for every element of `space` in parallel and returns the
/// plan it used. The body may take the element by value, const reference, or
/// reference (to modify it). Collective.
///
/// The first run of a plan built from a sampled reconnaissance is speculative: every
/// access is checked against the plan, and if one does not fit, everything the run
/// changed (the arrays it writes, the space's elements, accumulators) is restored,
/// the loop is planned again from a full reconnaissance pass and run by that plan.
///
/// Every call counts as one loop call of the run (strata/recovery/loop_calls.hpp):
/// with automatic checkpoints the arrays it changed may be saved after it, and a
/// resumed run skips it if its checkpoint covers it (the returned plan then says
/// `skipped`).
template <class Elem, std::size_t M, class Body>
const loop::Plan& parallel_for(DistArray<Elem, M>& space, Body&& body, const LoopOptions& options = {},
                               std::source_location where = std::source_location::current()) {
  return loop::detail::parallel_for_call(loop::detail::space_view(space), loop::detail::loop_body<Elem, M>(body),
                                         options, where);
}

namespace loop::detail {

/// One iteration of a loop call as a schedule lists it.
template <std::size_t M>
struct ScheduledIteration {
  std::int64_t step, worker, seq;  ///< worker: rank x threads + thread; seq: its place in the worker's order
  Index<M> index;
};

/// Every iteration of the last run of `plan` with the worker that ran it, gathered
/// from all ranks (collective) and sorted by (step, worker, seq). Steps are the 2-D
/// schedule's steps; in other plans the clocks of a relaxed run (every
/// `clock_every` iterations of a worker; 0 when it is 0). Within a step, workers
/// touch nothing another worker of the step writes, so the sort is a serial order
/// the run is equivalent to.
template <class Elem, std::size_t M>
std::vector<ScheduledIteration<M>> scheduled_iterations(const DistArray<Elem, M>& space, const Plan& plan,
                                                         std::int64_t clock_every) {
  const auto rows = schedule_rows(space_view(space), plan, clock_every);
  constexpr std::size_t width = kScheduleFields + M;
  std::vector<ScheduledIteration<M>> out(rows.size() / width);
  for (std::size_t k = 0; k < out.size(); ++k) {
    const std::int64_t* row = &rows[k * width];
    out[k].step = row[0], out[k].worker = row[1], out[k].seq = row[2];
    std::copy(row + kScheduleFields, row + width, out[k].index.begin());
  }
  return out;
}

/// For benchmarks: the reconnaissance pass of `body` alone.
template <class Elem, std::size_t M, class Body>
void reconnoitre(DistArray<Elem, M>& space, Body& body, bool /*record_elements*/, int stride = 1) {
  reconnaissance_only(space_view(space), loop_body<Elem, M>(body), stride);
}

/// For benchmarks: one run of `body` by `plan`.
template <class Elem, std::size_t M, class Body>
std::string run_plan(DistArray<Elem, M>& space, Body& body, Plan& plan, const LoopOptions& options, bool verify) {
  return run_plan(space_view(space), loop_body<Elem, M>(body), plan, options, verify);
}

}  // namespace loop::detail

/// The serial order the last run of a plan is equivalent to: every iteration's index,
/// gathered from all ranks (collective). Replaying the body in this order on one
/// thread reproduces the parallel result bit for bit.
template <class Elem, std::size_t M>
std::vector<Index<M>> equivalent_order(const DistArray<Elem, M>& space, const loop::Plan& plan) {
  std::vector<Index<M>> out;
  for (const auto& it : loop::detail::scheduled_iterations(space, plan, 0)) out.push_back(it.index);
  return out;
}

}  // namespace strata
