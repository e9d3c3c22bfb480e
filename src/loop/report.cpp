// How a plan is shown: the public LoopReport of a loop call, made from the plan it
// ran by, and the plan printed (LoopOptions::explain).
#include <cstdio>

#include <fmt/format.h>

#include "loop/loop_internal.hpp"
#include "strata/error.hpp"

namespace strata {

std::string LoopReport::explain() const {
  if (!plan_) return "no loop call: this report was not returned by parallel_for or plan_loop\n";
  return plan_->explain();
}

namespace loop {

LoopReport ReportAccess::make(std::shared_ptr<const Plan> plan) {
  LoopReport r;
  const Plan& p = *plan;
  r.skipped = p.skipped;
  r.replayed = p.replayed;
  if (!p.skipped && !p.replayed) {
    r.strategy = p.choice.strategy;
    r.space_dim = p.choice.space_dim;
    r.time_dim = p.choice.time_dim;
    r.ranks = p.ranks;
    r.threads = p.threads;
    r.workers = p.workers;
    r.gathered = p.gathered;
    r.spread = p.spread;
    r.time_blocks = p.time_bounds.empty() ? 0 : static_cast<int>(p.time_bounds.size()) - 1;
    r.rounds = p.schedule.rounds;
    r.slices_per_worker = p.slices_per_worker;
    r.groups = p.groups;
    r.split_groups = p.split_groups;
    r.split_iterations = p.split_iterations;
    r.imbalance = p.imbalance;
    r.bytes_per_pass = p.bytes_per_pass;
    r.bytes_moved = p.last_bytes_moved;
    r.recon_stride = p.recon_stride;
    r.recon_accesses = p.recon_accesses;
    r.verified = p.verified;
    r.speculation_failure = p.speculation_failure;
    r.revalidated = p.ownership != nullptr;
    r.revalidation_failure = p.revalidation_failure;
    r.probe_failure = p.probe_failure;
    r.serial_reason = p.serial_reason;
    r.recon_seconds = p.recon_seconds;
    r.plan_seconds = p.plan_seconds;
    r.run_seconds = p.last_run_seconds;
    r.wait_seconds = p.last_wait_seconds;
    r.plan_id = p.serial;
  }
  r.plan_ = std::move(plan);
  return r;
}

const Plan& ReportAccess::plan(const LoopReport& report) {
  if (!report.plan_) throw Error("this LoopReport was not returned by parallel_for or plan_loop: it has no plan");
  return *report.plan_;
}

namespace detail {

void print_plan(Runtime& rt, const Plan& plan) {
  if (rt.rank() == 0) std::fputs(plan.explain().c_str(), stdout), std::fflush(stdout);
}

}  // namespace detail
}  // namespace loop
}  // namespace strata
