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
#pragma once

#include <memory>
#include <source_location>
#include <string>
#include <tuple>
#include <vector>

#include "strata/dist_array.hpp"
#include "strata/loop/accumulator.hpp"
#include "strata/loop/build_plan.hpp"
#include "strata/loop/run_plan.hpp"
#include "strata/loop/schedule_record.hpp"
#include "strata/loop/undo.hpp"
#include "strata/ps/buffer_base.hpp"
#include "strata/recovery/loop_calls.hpp"
#include "strata/recovery/replayed_deltas.hpp"

namespace strata {

/// Builds (or fetches from the cache) the plan of the loop at `where`. Collective.
template <class Elem, std::size_t M, class Body>
loop::Plan& plan_loop(DistArray<Elem, M>& space, Body& body, const LoopOptions& options = {},
                      std::source_location where = std::source_location::current()) {
  Runtime& rt = space.runtime();
  const std::string key = loop::detail::loop_key(where, space.array_id(), options);
  auto& cache = loop::PlanCache::instance();
  if (loop::Plan* p = cache.find(key)) {
    const std::string stale = loop::detail::why_plan_is_stale(*p, rt, space.structure_version());
    if (stale.empty()) return *p;
    rt.debug("loop at {}: planning again, as {}", p->loop_site, stale);
  }
  const int stride = loop::detail::recon_stride_for(space.nnz(), options);
  return cache.store(key, loop::detail::build_plan(space, body, options, where, stride));
}

// One call of parallel_for without the bookkeeping of loop calls (below).
namespace loop::detail {
template <class Elem, std::size_t M, class Body>
const Plan& run_loop_call(DistArray<Elem, M>& space, Body& body, const LoopOptions& options,
                          std::source_location where) {
  Runtime& rt = space.runtime();
  loop::Plan* plan = &plan_loop(space, body, options, where);
  if (!plan->verified) {
    std::vector<strata::detail::ArrayBase*> changed;
    for (const auto& role : plan->roles)
      if (role.written) changed.push_back(strata::detail::ArrayBase::find_array(role.array_id));
    if constexpr (!std::is_invocable_v<Body&, const Index<M>&, const Elem&>) changed.push_back(&space);
    strata::detail::RunSnapshot before(changed);
    std::string failure = loop::detail::run_plan(space, body, *plan, options, true);
    if (failure.empty()) {
      plan->verified = true;
      loop::detail::flush_buffers(*plan);
      return *plan;
    }
    before.restore();
    rt.debug("loop at {}: the plan from a sampled reconnaissance does not hold ({}); planning again from a full "
             "pass", plan->loop_site, failure);
    auto full = loop::detail::build_plan(space, body, options, where, 1);
    full->speculation_failure = std::move(failure);
    plan = &loop::PlanCache::instance().store(loop::detail::loop_key(where, space.array_id(), options),
                                              std::move(full));
  }
  loop::detail::run_plan(space, body, *plan, options, false);
  loop::detail::flush_buffers(*plan);
  return *plan;
}
}  // namespace loop::detail

namespace loop::detail {
template <class Elem, std::size_t M>
std::int64_t record_order(const DistArray<Elem, M>& space, const Plan& plan, recovery::ExecutionRecord& record);
template <class Elem, std::size_t M, class Body>
const Plan& replay_loop_call(DistArray<Elem, M>& space, Body& body, recovery::LoopCalls& calls,
                             const std::source_location& where);
}  // namespace loop::detail

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
  auto& calls = space.runtime().loop_calls();
  if (calls.begin(where)) return loop::detail::skipped_plan(where);
  if (calls.replaying_serially()) return loop::detail::replay_loop_call(space, body, calls, where);
  const loop::Plan& plan = loop::detail::run_loop_call(space, body, options, where);
  constexpr bool writes_space = !std::is_invocable_v<Body&, const Index<M>&, const Elem&>;
  recovery::CallOutcome outcome{loop::detail::changed_arrays(plan, space.array_id(), writes_space),
                                loop::detail::buffered_arrays(plan), 0, loop::detail::relaxed_arrays(plan)};
  if (calls.recording()) outcome.order = loop::detail::record_order(space, plan, calls.record());
  calls.end(outcome);
  return plan;
}

namespace loop::detail {
/// Every iteration of the last run of `plan` with the worker that ran it, gathered
/// from all ranks (collective) and sorted by (step, worker, seq). Steps are the 2-D
/// schedule's steps; in other plans the clocks of a relaxed run (every
/// `clock_every` iterations of a worker; 0 when it is 0). Within a step, workers
/// touch nothing another worker of the step writes, so the sort is a serial order
/// the run is equivalent to.
template <class Elem, std::size_t M>
std::vector<ScheduledIteration<M>> scheduled_iterations(const DistArray<Elem, M>& space, const Plan& plan,
                                                         std::int64_t clock_every) {
  std::vector<ScheduledIteration<M>> mine;
  const int T = plan.threads, r = space.runtime().rank();
  const bool clocked = strategy_has_one_step(plan) && clock_every > 0;
  for (int th = 0; th < T; ++th) {
    std::int64_t seq = 0;
    const auto& steps = plan.work[static_cast<std::size_t>(th)];
    for (std::size_t st = 0; st < steps.size(); ++st)
      for (const auto pos : steps[st]) {
        const std::int64_t step = clocked ? seq / clock_every : static_cast<std::int64_t>(st);
        mine.push_back({step, r * T + th, seq++, index_at(space, pos)});
      }
  }
  return gather_schedule(space.runtime(), mine);
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

namespace loop::detail {
// Record mode: the id of the schedule of `plan`'s runs, written on its first call.
template <class Elem, std::size_t M>
std::int64_t record_order(const DistArray<Elem, M>& space, const Plan& plan, recovery::ExecutionRecord& record) {
  if (const auto id = record.order_of(plan.serial)) return id;
  auto all = scheduled_iterations(space, plan, RelaxedRun(plan).clock_every());
  if (!strategy_has_one_step(plan))
    for (auto& it : all) it.step = 0;  // a 2-D run over relaxed arrays is one clock
  std::int64_t clocks = 1;  // as RelaxedRun::begin counts them
  for (const auto& it : all) clocks = std::max(clocks, it.step + 1);
  return record.write_order(plan.serial, to_recorded(all, clocks));
}

// Single-process replay: the body over the call's recorded schedule on this thread,
// no plan; Buffer writes are summed per recorded worker and applied clock by clock,
// as in the recorded run.
template <class Elem, std::size_t M, class Body>
const Plan& replay_loop_call(DistArray<Elem, M>& space, Body& body, recovery::LoopCalls& calls,
                             const std::source_location& where) {
  const recovery::RecordedCall& rec = calls.expected();
  auto& record = calls.record();
  const recovery::RecordedSchedule schedule = record.schedule(rec, static_cast<int>(M));
  recovery::ReplayedDeltas deltas(record, rec, schedule.clocks);
  struct Reset {  // after the call, or a body that throws, no simulated worker is left behind
    ~Reset() {
      strata::detail::t_delta_set = 0;
      strata::detail::t_clock = 0;
      strata::detail::t_observer = nullptr;
    }
  } reset;
  strata::detail::t_observer = deltas.observer();  // reads of logged arrays come from the record
  for (std::size_t k = 0; k < schedule.iterations(); ++k) {
    const auto row = schedule.row(k);
    const auto [i, value] = recorded_iteration(space, row, rec);
    const std::int64_t clock = row[M + 1];
    deltas.advance_to(clock, row[M]);
    strata::detail::t_delta_set = static_cast<int>(row[M]);
    strata::detail::t_clock = clock;
    body(i, *value);
  }
  deltas.finish();
  recovery::CallOutcome outcome;
  for (const auto& [id, print] : rec.changed) outcome.changed.push_back(id);
  outcome.buffers = rec.buffers;
  outcome.relaxed = rec.relaxed;
  outcome.order = rec.order;
  calls.end(outcome);
  return replayed_plan(where);
}
}  // namespace loop::detail

}  // namespace strata
