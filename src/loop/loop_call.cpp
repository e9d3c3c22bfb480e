// One call of parallel_for: the plan cache, the speculative first run of a sampled
// plan, the loop-call bookkeeping of recovery (checkpoints, resuming, recording),
// and single-process replay of a recorded call.
#include <algorithm>
#include <chrono>
#include <functional>

#include <fmt/format.h>

#include "loop/loop_internal.hpp"
#include "loop/ownership.hpp"
#include "loop/plan_probe.hpp"
#include "loop/relaxed_run.hpp"
#include "loop/split_groups.hpp"
#include "loop/spread.hpp"
#include "strata/detail/collective_error.hpp"
#include "strata/loop/call_hooks.hpp"
#include "strata/error.hpp"
#include "strata/loop/undo.hpp"

namespace strata::loop::detail {

// The plan for this call: the most recently used cached plan of its key that is not
// stale and fits the call (loop/plan_probe.hpp), else a new one. Every rank decides
// alike: staleness is the same everywhere, and probes are collective.
std::shared_ptr<Plan> cached_plan(const SpaceView& space, const LoopBody& body, const LoopOptions& options,
                                  const std::source_location& where) {
  Runtime& rt = *space.rt;
  const std::string key = loop_key(where, space.array->array_id(), body, options);
  auto& cache = PlanCache::instance();
  ProbeOutcome misfit;
  for (const std::shared_ptr<Plan>& p : cache.find(key)) {
    const std::string stale = why_plan_is_stale(*p, rt, space.array->structure_version());
    if (!stale.empty()) {
      rt.debug("loop at {}: planning again, as {}", p->loop_site, stale);
      cache.forget(key, p.get());
      continue;
    }
    ProbeOutcome probed = probe_plan(space, body, *p, p->probes++);
    if (probed.why.empty()) {
      cache.touch(key, p.get());
      return p;
    }
    rt.debug("loop at {}: the plan cached for this call site does not fit this call ({})", p->loop_site, probed.why);
    misfit = std::move(probed);
  }
  // A site the cached plan never saw may be one few iterations reach, which a plan
  // from a sample of them would miss again: such a loop is planned from every
  // iteration (unless the options fix the sample).
  const int stride = misfit.unseen_site && options.recon_stride == 0 ? 1 : recon_stride_for(space.nnz, options);
  std::shared_ptr<Plan> plan = build_plan(space, body, options, where, stride);
  plan->probe_failure = std::move(misfit.why);
  cache.store(key, plan);
  return plan;
}

LoopReport plan_call(const SpaceView& space, const LoopBody& body, const LoopOptions& options,
                     const std::source_location& where) {
  LoopReport report = ReportAccess::make(cached_plan(space, body, options, where));
  report.run_seconds = report.wait_seconds = 0;  // no run here
  return report;
}

namespace {

// What a run of `plan` may change: the arrays it writes in place and, when the body
// takes its elements by reference, the iteration space; less the arrays whose writes
// `logged` undoes itself (loop/ownership.hpp), when given.
std::vector<strata::detail::ArrayBase*> changed_by(const Plan& plan, const SpaceView& space, const LoopBody& body,
                                                   const OwnershipTable* logged = nullptr) {
  std::vector<strata::detail::ArrayBase*> changed;
  for (const auto& role : plan.roles) {
    if (!role.written) continue;
    auto* a = strata::detail::ArrayBase::find_array(role.array_id);
    if (!(a && logged && logged->logs_writes(*a))) changed.push_back(a);
  }
  if (!body.reads_only) changed.push_back(space.array);
  return changed;
}

// A run by `plan` with nothing checked, and its Buffers' deltas applied.
std::shared_ptr<Plan> run_unchecked(const SpaceView& space, const LoopBody& body, std::shared_ptr<Plan> plan,
                                    const LoopOptions& options) {
  run_plan(space, body, *plan, options, false);
  flush_buffers(*plan);
  return plan;
}

// A plan from a full pass in the place of `replaced`, the cached plan the call found
// wrong; `previous` (when given) sizes the pass.
std::shared_ptr<Plan> replan(const SpaceView& space, const LoopBody& body, const LoopOptions& options,
                             const std::source_location& where, const LoopOptions& key_options, const Plan* replaced,
                             const Plan* previous = nullptr) {
  std::shared_ptr<Plan> plan = build_plan(space, body, options, where, 1, previous);
  PlanCache::instance().store(loop_key(where, space.array->array_id(), body, key_options), plan, replaced);
  return plan;
}

// Runs the loop serially from now on, in the place of `replaced`, for `why` (explain
// shows it).
std::shared_ptr<Plan> run_serially(const SpaceView& space, const LoopBody& body, const LoopOptions& options,
                                   const std::source_location& where, const Plan* replaced, std::string why) {
  LoopOptions serial = options;
  serial.strategy = analysis::Strategy::serial;
  std::shared_ptr<Plan> plan = replan(space, body, serial, where, options, replaced);
  plan->serial_reason = std::move(why);
  return run_unchecked(space, body, std::move(plan), serial);
}

// A groups plan over irregular subscripts (plan.ownership): every run claims what it
// touches (loop/ownership.hpp). A refused run is undone and the loop planned again
// from its accesses of now. If the fresh plan's own run is refused too, the body's
// subscripts are not what its reconnaissance saw (a generator the pass cannot
// replay): checked mode says so, otherwise the loop runs serially from then on. A
// loop whose groups change at every call (negatives drawn from the epoch) also goes
// serial once planning again has cost more than running on one thread would.
std::shared_ptr<Plan> run_revalidated(const SpaceView& space, const LoopBody& body, const LoopOptions& options,
                                      const std::source_location& where, std::shared_ptr<Plan> plan) {
  Runtime& rt = *space.rt;
  if (!plan->go_serial.empty()) return run_serially(space, body, options, where, plan.get(), plan->go_serial);
  const auto call_start = std::chrono::steady_clock::now();
  for (int attempt = 0;; ++attempt) {
    // The table undoes what it logs of a refused run itself (run_plan).
    strata::detail::RunSnapshot before(changed_by(*plan, space, body, plan->ownership.get()), &rt.pool());
    std::string failure = run_plan(space, body, *plan, options, true);
    if (failure.empty()) {
      ++plan->revalidated_runs;
      flush_buffers(*plan);
      if (attempt == 0) plan->changed_calls = 0;
      // Every rank decides alike, on the slowest rank's times.
      const double call = rt.comm().allreduce(seconds_since(call_start), ReduceOp::max);
      const double run = rt.comm().allreduce(plan->last_run_seconds, ReduceOp::max);
      // A serial run is one thread of one rank: it does the work of all the workers
      // that ran the groups (a spread plan's ranks too).
      const int sharing = plan->spread ? plan->workers : plan->threads;
      if (plan->changed_calls >= 2 && call > run * sharing)
        plan->go_serial = fmt::format(
            "its conflict groups changed at each of the last {} calls, and planning them again made a call "
            "take {:.3f} s where one thread would take about {:.3f} s",
            plan->changed_calls, call, run * sharing);
      return plan;
    }
    before.restore();
    if (attempt == 0) {
      rt.debug("loop at {}: its conflict groups no longer hold ({}); planning again", plan->loop_site, failure);
      const int changed = plan->changed_calls + 1;
      plan = replan(space, body, options, where, options, plan.get(), plan.get());
      plan->revalidation_failure = std::move(failure);
      plan->changed_calls = changed;
      if (plan->ownership) continue;
      return run_unchecked(space, body, std::move(plan), options);
    }
    if (options.checked || checked_by_environment())
      throw Error(fmt::format("checked mode: loop at {}: the accesses of its run differ from those its "
                              "reconnaissance pass recorded just before ({}): the body's subscripts must be a "
                              "function of the iteration, the arrays and the driver's variables (draw random "
                              "numbers with strata::CounterRng keyed by the iteration, not from a shared generator)",
                              plan->loop_site, failure));
    if (rt.rank() == 0)
      rt.log("loop at {}: the accesses of its run differ from those its reconnaissance pass recorded just before "
             "({}); it runs serially from now on", plan->loop_site, failure);
    return run_serially(space, body, options, where, plan.get(),
                        fmt::format("its run touched other elements than its reconnaissance pass had just before ({})",
                                    failure));
  }
}

// The body over a recorded schedule on this thread, each iteration as its recorded
// worker (whose Buffer delta set its writes go to); `before(row)` runs ahead of each
// iteration. No simulated worker is left behind, even when the body throws.
void visit_schedule(const SpaceView& space, const LoopBody& body, const RecordedSchedule& schedule,
                    const RecordedCall& rec, const std::function<void(std::span<const std::int64_t>)>& before) {
  struct Reset {
    ~Reset() { strata::detail::t_delta_set = 0; }
  } reset;
  const auto M = static_cast<std::size_t>(space.dims);
  for (std::size_t k = 0; k < schedule.iterations(); ++k) {
    const auto row = schedule.row(k);
    std::byte* value = recorded_element(space, row, rec);
    if (before) before(row);
    strata::detail::t_delta_set = static_cast<int>(row[M]);
    body.visit(body.body, row.data(), value);
  }
}

// A replay on the recorded layout of a call whose groups were split over threads: the
// recorded run's order depended on timing, so the replay follows the order its
// record logged, on rank 0 (which holds a gathered loop's iterations), each
// iteration's Buffer writes summed as its recorded worker summed them.
std::shared_ptr<Plan> run_recorded_order(const SpaceView& given, const LoopBody& body, std::shared_ptr<Plan> plan,
                                         CallHooks& calls) {
  const SpaceView space = given.refreshed();
  const RecordedCall& rec = calls.expected();
  if (rec.order == 0)
    throw ReplayError(fmt::format("replay of loop call {} at {}: its conflict groups were split over threads, whose "
                                  "order depends on timing, and the record holds no order for the call",
                                  rec.call, plan->loop_site));
  const RecordedSchedule schedule = calls.schedule(rec, space.dims);
  // Only rank 0 runs, so an error there (a recorded index it lacks) reaches every rank.
  strata::detail::all_or_none(space.rt->comm(), [&] {
    if (space.rt->rank() == 0) visit_schedule(space, body, schedule, rec, {});
  });
  flush_buffers(*plan);
  return plan;
}

// One call of parallel_for without the bookkeeping of loop calls. The first run of a
// plan from a sampled reconnaissance checks every access; if one does not fit,
// everything the run changed is put back and the loop is planned from a full pass.
std::shared_ptr<Plan> run_loop_call(const SpaceView& space, const LoopBody& body, const LoopOptions& options,
                                    const std::source_location& where) {
  Runtime& rt = *space.rt;
  std::shared_ptr<Plan> plan = cached_plan(space, body, options, where);
  if (!plan->verified) {
    pack_ahead(space, body, *plan);
    strata::detail::RunSnapshot before(changed_by(*plan, space, body), &rt.pool());
    std::string failure = run_plan(space, body, *plan, options, true);
    if (failure.empty()) {
      plan->verified = true;
      flush_buffers(*plan);
      return plan;
    }
    before.restore();
    rt.debug("loop at {}: the plan from a sampled reconnaissance does not hold ({}); planning again from a full "
             "pass", plan->loop_site, failure);
    plan = replan(space, body, options, where, options, plan.get());
    plan->speculation_failure = std::move(failure);
  }
  if (plan->split_groups > 0 && call_hooks(rt).replaying())
    return run_recorded_order(space, body, std::move(plan), call_hooks(rt));
  if (plan->ownership) return run_revalidated(space, body, options, where, std::move(plan));
  return run_unchecked(space, body, std::move(plan), options);
}

// Record mode: the id of the schedule of `plan`'s runs, written on its first call.
// A plan with split groups runs in a new order at every call (its tickets): it is
// logged under a fingerprint of the order instead.
std::int64_t record_order(const SpaceView& space, const Plan& plan, CallHooks& record) {
  const bool split = plan.split_groups > 0;
  if (!split)
    if (const auto id = record.order_of(plan.serial)) return id;
  auto rows = schedule_rows(space, plan, RelaxedRun(plan).clock_every());
  const std::size_t width = kScheduleFields + static_cast<std::size_t>(space.dims);
  std::int64_t clocks = 1;  // as RelaxedRun::begin counts them
  for (std::size_t at = 0; at < rows.size(); at += width) {
    // A 2-D run over relaxed arrays is one clock; the steps of split groups are an order.
    if (!strategy_has_one_step(plan) || split) rows[at] = 0;
    clocks = std::max(clocks, rows[at] + 1);
  }
  const RecordedSchedule order = to_recorded(rows, space.dims, clocks);
  if (!split) return record.write_order(plan.serial, order);
  const std::uint64_t key = fingerprint(std::as_bytes(std::span(order.rows)));
  if (const auto id = record.order_of(key)) return id;
  return record.write_order(key, order);
}

// Single-process replay: the body over the call's recorded schedule on this thread,
// no plan; Buffer writes are summed per recorded worker and applied clock by clock,
// as in the recorded run.
LoopReport replay_loop_call(const SpaceView& space, const LoopBody& body, CallHooks& calls,
                             const std::source_location& where) {
  const RecordedCall& rec = calls.expected();
  const auto M = static_cast<std::size_t>(space.dims);
  const RecordedSchedule schedule = calls.schedule(rec, space.dims);
  const auto writes = calls.replay_writes(rec, schedule.clocks);
  auto& deltas = *writes;
  struct Reset {  // after the call, or a body that throws, no clock or observer is left behind
    ~Reset() {
      strata::detail::t_clock = 0;
      strata::detail::t_observer = nullptr;
    }
  } reset;
  strata::detail::t_observer = deltas.observer();  // reads of logged arrays come from the record
  visit_schedule(space, body, schedule, rec, [&](std::span<const std::int64_t> row) {
    const std::int64_t clock = row[M + 1];
    deltas.advance_to(clock, row[M]);
    strata::detail::t_clock = clock;
  });
  deltas.finish();
  CallOutcome outcome;
  for (const auto& [id, print] : rec.changed) outcome.changed.push_back(id);
  outcome.buffers = rec.buffers;
  outcome.relaxed = rec.relaxed;
  outcome.order = rec.order;
  calls.end(outcome);
  return ReportAccess::make(replayed_plan(where));
}

}  // namespace

LoopReport parallel_for_call(const SpaceView& space, const LoopBody& body, const LoopOptions& options,
                             const std::source_location& where) {
  auto& calls = call_hooks(*space.rt);
  if (calls.begin(where)) return ReportAccess::make(skipped_plan(where));
  if (calls.replaying_serially()) return replay_loop_call(space, body, calls, where);
  const std::shared_ptr<Plan> ran = run_loop_call(space, body, options, where);
  const Plan& plan = *ran;
  CallOutcome outcome{changed_arrays(plan, space.array->array_id(), !body.reads_only),
                                buffered_arrays(plan), 0, relaxed_arrays(plan)};
  if (calls.recording()) outcome.order = record_order(space, plan, calls);
  calls.end(outcome);
  return ReportAccess::make(ran);
}

std::vector<std::int64_t> schedule_rows(const SpaceView& space, const LoopReport& report, std::int64_t clock_every) {
  const Plan& plan = ReportAccess::plan(report);
  // A call covered by a checkpoint, or replayed in its recorded order, ran no plan:
  // its report has no schedule to give (every rank's report says so alike).
  if (plan.skipped || plan.replayed)
    throw OptionError(fmt::format("the loop call at {} was {}, so it has no schedule of its own", plan.loop_site,
                                  plan.skipped ? "skipped (a resumed run restored what it left)"
                                               : "replayed in its recorded order"));
  return schedule_rows(space, plan, clock_every);
}

// Steps are the 2-D schedule's steps; in other plans the clocks of a relaxed run
// (every `clock_every` iterations of a worker; 0 when it is 0). Within a step,
// workers touch nothing another worker of the step writes, so the sort is a serial
// order the run is equivalent to.
std::vector<std::int64_t> schedule_rows(const SpaceView& given, const Plan& plan, std::int64_t clock_every) {
  const SpaceView space = run_view(plan, given);
  std::vector<std::int64_t> mine;
  const int T = plan.threads, r = space.rt->rank();
  const bool clocked = strategy_has_one_step(plan) && clock_every > 0;
  std::int64_t index[4];
  // Split groups (loop/split_groups.hpp): an iteration that held locks comes at its
  // ticket t (step 2t + 2); the others of its worker after it, up to the worker's
  // next ticket, follow it (step 2t + 3; before the first ticket, step 1).
  const SplitGroups* split = plan.split.get();
  for (int th = 0; th < T; ++th) {
    std::int64_t seq = 0, ticket = -1;
    const auto& steps = plan.work[static_cast<std::size_t>(th)];
    for (std::size_t st = 0; st < steps.size(); ++st)
      for (const auto pos : positions_of(space, plan, th, static_cast<int>(st))) {
        std::int64_t step = clocked ? seq / clock_every : static_cast<std::int64_t>(st);
        if (split) {
          const std::int64_t t = split->lanes[static_cast<std::size_t>(th)].ticket[static_cast<std::size_t>(seq)];
          step = t >= 0 ? 2 * t + 2 : 2 * ticket + 3;
          if (t >= 0) ticket = t;
        }
        index_at(space, pos, index);
        mine.insert(mine.end(), {step, r * T + th, seq++});
        mine.insert(mine.end(), index, index + space.dims);
      }
  }
  return gather_schedule(*space.rt, std::move(mine), space.dims);
}

void reconnaissance_only(const SpaceView& space, const LoopBody& body, int stride) {
  reconnoitre(space, body, false, stride);
}

}  // namespace strata::loop::detail
