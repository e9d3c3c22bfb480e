// LoopReport: what one parallel_for call did, as parallel_for returns it.
//
//   const strata::LoopReport report = strata::parallel_for(R, body);
//   if (report.strategy != strata::analysis::Strategy::two_d) std::puts(report.explain().c_str());
//
// The plan the call ran by stays inside the engine; the report names its strategy,
// the layout's headline figures and the call's timings, and keeps a handle on the
// plan for explain() and equivalent_order().
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "strata/analysis/strategy.hpp"

namespace strata {

namespace loop {
struct Plan;
struct ReportAccess;
}  // namespace loop

/// What one parallel_for (or plan_loop) call did. The same on every rank except the
/// fields marked "this rank".
class LoopReport {
 public:
  /// A resumed run skipped the call, as its checkpoint covered it
  /// (strata/recovery.hpp); no other field is set.
  bool skipped = false;
  /// A single-process replay ran the call in its recorded serial order; no other
  /// field is set.
  bool replayed = false;

  /// The strategy the plan chose (or was given in LoopOptions::strategy).
  analysis::Strategy strategy = analysis::Strategy::serial;
  /// The iteration-space dimension split among the workers, and for 2-D plans the
  /// one cut into time blocks (-1: none).
  int space_dim = -1, time_dim = -1;
  /// The workers the plan was laid out for: ranks x threads.
  int ranks = 1, threads = 1, workers = 1;
  /// The loop ran on rank 0's threads with its data gathered there (strategies that
  /// are not partitioned across ranks: serial, conflict groups that cannot be spread,
  /// skewed 2-D plans that do not fit the ranks: docs/loops.md).
  bool gathered = false;
  /// Conflict groups placed on the workers of every rank, the arrays they touch copied
  /// whole to every rank for the call (src/loop/spread.hpp).
  bool spread = false;
  /// 2-D plans: time blocks; rounds the blocks go round the workers per pass; slices
  /// of each worker's space part (LoopOptions::rounds and slices_per_worker).
  int time_blocks = 0, rounds = 1, slices_per_worker = 1;
  /// Conflict-group plans: the number of groups; of them, those larger than a
  /// thread's share, split over the threads under locks on the rows or elements they
  /// touch, and their iterations (docs/loops.md, "Split groups").
  std::int64_t groups = 0;
  std::int64_t split_groups = 0, split_iterations = 0;
  /// The slowest worker's iterations over the mean (1 = even).
  double imbalance = 1.0;
  /// Bytes moved between ranks per pass: rows travelling with time blocks, copies of
  /// read-only arrays.
  std::int64_t bytes_per_pass = 0;
  /// Bytes the ranks sent each other during the plan's last run, measured (all ranks).
  std::int64_t bytes_moved = 0;

  /// The reconnaissance pass visited 1 in `recon_stride` iterations and recorded
  /// `recon_accesses` accesses (summed over ranks).
  int recon_stride = 1;
  std::int64_t recon_accesses = 0;
  /// Every access of a run has been checked against the plan (false only for a plan
  /// from a sample that has not run yet: plan_loop).
  bool verified = true;
  /// Why a plan from a sampled reconnaissance was dropped and the loop planned again
  /// from a full pass ("" when none was).
  std::string speculation_failure;
  /// Conflict-group plans over irregular subscripts: every run is checked against the
  /// groups, which rest on the accesses recorded when the loop was planned
  /// (docs/loops.md, "Plans that stay true").
  bool revalidated = false;
  /// Why the previous plan's groups no longer held when this plan replaced it ("" when
  /// it replaced none for that reason).
  std::string revalidation_failure;
  /// Why the plans cached for this call site did not serve the call that built this
  /// plan: a probe of a few of its iterations met an access they do not cover (another
  /// array, subscript or site; docs/loops.md, "Which plan a call runs by"). "" when
  /// no plan was cached or the cached ones were stale.
  std::string probe_failure;
  /// Why the loop runs serially though its analysis found conflict groups: its run
  /// touched other elements than its reconnaissance pass had just before, or its
  /// groups changed at every call and planning them again cost more than a serial
  /// run ("" normally).
  std::string serial_reason;

  /// Seconds building the plan took (the slowest rank's): the reconnaissance pass,
  /// and the analysis and layout. A call that reused a cached plan reports the
  /// figures of the call that built it (same plan_id).
  double recon_seconds = 0, plan_seconds = 0;
  /// This call on this rank: the run's wall time, and the seconds its threads waited
  /// for time blocks (summed over threads; 2-D plans).
  double run_seconds = 0, wait_seconds = 0;
  /// Which plan the call ran by (1, 2, ... in the order the process built them; 0
  /// for skipped and replayed calls). A new id means the loop was planned again.
  std::uint64_t plan_id = 0;

  /// The plan in words: access sites and fitted subscripts, dependence vectors, the
  /// strategy and why stronger ones were rejected, bounds, array placement,
  /// imbalance, traffic and costs.
  std::string explain() const;

 private:
  friend struct loop::ReportAccess;
  std::shared_ptr<const loop::Plan> plan_;
};

}  // namespace strata
