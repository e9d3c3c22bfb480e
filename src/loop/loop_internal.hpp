// The loop engine's internal header: what its files share behind the waist
// (strata/loop/loop_body.hpp). Nothing here is seen by user code.
#pragma once

#include <cstdint>
#include <memory>
#include <source_location>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "strata/detail/stopwatch.hpp"
#include "loop/plan.hpp"
#include "strata/loop/parallel_for.hpp"  // the engine entry points
#include "loop/recorder.hpp"
#include "strata/loop/call_hooks.hpp"

namespace strata::loop::detail {

using strata::detail::seconds_since;

// ---- iteration spaces on bytes (space.cpp) ----------------------------------

/// The index of local iteration `pos` into out[0, dims).
void index_at(const SpaceView& space, std::int64_t pos, std::int64_t* out);
/// The local element at `index`, or nullptr when this rank holds none there.
std::byte* locate(const SpaceView& space, const std::int64_t* index);
/// Collective: iterations at each index of dimension d, summed over ranks.
std::vector<std::int64_t> histogram(const SpaceView& space, int d);

/// Installs an observer on the calling thread for a scope.
class ObserverScope {
 public:
  ObserverScope(strata::detail::AccessObserver* o, bool recording);
  ~ObserverScope();
  ObserverScope(const ObserverScope&) = delete;
  ObserverScope& operator=(const ObserverScope&) = delete;
};

/// Scratch memory for one element, aligned for any element type.
class ElementScratch {
 public:
  explicit ElementScratch(std::size_t bytes)
      : words_((bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t) + 1) {}
  std::byte* data() { return reinterpret_cast<std::byte*>(words_.data()); }

 private:
  std::vector<std::max_align_t> words_;
};

// ---- reconnaissance (reconnoitre.cpp) ----------------------------------------

/// Runs the body once with accesses recorded over this rank's iterations (1 in
/// `stride` of them), on all of the rank's threads, each with its own recorder over a
/// contiguous share. The element handed to the body is a copy, so its writes are
/// dropped too. Element recording keys the arrays in `row_keyed` by row, and notes
/// each access's unit in `units_of` when given (Recorder::note_units).
std::vector<Recorder> reconnoitre(const SpaceView& space, const LoopBody& body, bool record_elements, int stride,
                                  const std::vector<std::uint64_t>& row_keyed = {},
                                  const OwnershipTable* units_of = nullptr, std::int64_t expected_accesses = 0);
/// Every access of this rank's iterations, recorded by element (reconnoitre with
/// record_elements, 1 in 1), and its unit in `units_of` when given: the threads'
/// lists joined. `expected` (what an earlier pass over these iterations counted, or 0)
/// sizes the lists up front: lists grown by doubling are copied as they grow and
/// touch twice the memory, which on a VM where a page's first touch is dear cost
/// more than the pass itself.
struct RecordedAccesses {
  std::vector<analysis::ElementAccess> elements;
  std::vector<std::uint64_t> units;  ///< parallel to elements when units_of was given, else empty
};
RecordedAccesses record_accesses(const SpaceView& space, const LoopBody& body,
                                 const std::vector<std::uint64_t>& row_keyed, const OwnershipTable* units_of,
                                 std::int64_t expected);
/// The recorders' elements and units, joined (moved where there is one recorder).
RecordedAccesses take_accesses(std::vector<Recorder>& recs);
/// Whether a reconnaissance pass of 1 in `stride` over a rank's `n` iterations
/// visits local iteration `pos` (for tests of speculative plans).
bool reconnaissance_visits(std::int64_t n, int stride, std::int64_t pos);
/// For benchmarks: the reconnaissance pass alone (1 in `stride` iterations).
void reconnaissance_only(const SpaceView& space, const LoopBody& body, int stride);

// ---- planning (build_plan.cpp, keys.cpp, layout.cpp, flush.cpp, outcome.cpp,
// report.cpp) -----------------------------------------------------------------

std::string loop_key(const std::source_location& where, std::uint64_t space_id, const LoopBody& body,
                     const LoopOptions& options);
/// Why a cached plan no longer fits the loop's arrays ("" while it does).
std::string why_plan_is_stale(const Plan& plan, Runtime& rt, std::uint64_t space_version);
void remember_versions(Plan& plan);
/// Bounds, schedule and array placement for the chosen strategy. `histogram(d)`
/// (collective) counts the iterations at each index of dimension d; it is called
/// only for the dimensions the strategy partitions.
void lay_out(Plan& plan, strata::detail::ArrayBase& space, const std::vector<std::int64_t>& extents,
             const std::function<std::vector<std::int64_t>(int)>& histogram, const LoopOptions& options);
/// Collective: moves the space and every array the plan touches to rank 0, for the
/// strategies not partitioned across ranks (plan.gathered).
void gather_on_rank0(Plan& plan, strata::detail::ArrayBase& space);
/// Bytes of an array at full (dense) size.
double dense_bytes(const strata::detail::ArrayBase& a);
void print_plan(Runtime& rt, const Plan& plan);
/// The reconnaissance stride for a loop over `iterations` iterations (all ranks).
int recon_stride_for(std::int64_t iterations, const LoopOptions& options);
/// Collective: applies at their owners the deltas the loop wrote through Buffers.
void flush_buffers(const Plan& plan);
/// 1, 2, ...: numbers the plans this process builds (the same on every rank, as
/// planning is collective).
std::uint64_t next_plan_serial();
/// The ids of the arrays a run of `plan` changed: those it writes in place, those it
/// writes through Buffers, and the iteration space when the body takes its elements
/// by reference.
std::vector<std::uint64_t> changed_arrays(const Plan& plan, std::uint64_t space_id, bool space_written);
/// What parallel_for returns for a loop call a resumed run skipped: a plan of that
/// site with `skipped` set and nothing else (it stays valid for the whole run).
std::shared_ptr<const Plan> skipped_plan(const std::source_location& where);
/// What parallel_for returns for a loop call a single-process replay ran in its
/// recorded order: a plan of that site with `replayed` set.
std::shared_ptr<const Plan> replayed_plan(const std::source_location& where);
/// The ids of the arrays a plan writes through Buffers, in the order it flushes them.
std::vector<std::uint64_t> buffered_arrays(const Plan& plan);
/// The ids of a plan's relaxed arrays (their tables run with the loop), in role order.
std::vector<std::uint64_t> relaxed_arrays(const Plan& plan);
/// Adds one thread's read sets of relaxed arrays to `into` (bitwise or).
void merge_read_sets(std::vector<ReadSet>& into, const std::vector<ReadSet>& from);
/// Whether the loop reads an array that is relaxed (a parameter-server table).
bool reads_relaxed_arrays(const Plan& plan);
/// Collective: whether every relaxed array the loop reads is held whole on every rank
/// however much its reconnaissance sampled: its table replicates wide read sets and
/// every rank's read set in `plan` is wide already (relaxed_base.hpp, wide_read_set).
bool relaxed_reads_replicated(Runtime& rt, const Plan& plan);
/// Collective: the first non-empty message of any thread on any rank ("" if none).
std::string first_failure(Runtime& rt, const std::vector<std::string>& per_thread);

/// Positions after packing (work_positions.cpp): whether plan.work may be let go
/// once its records are packed (the records hold copies of the elements, and nothing
/// of the plan works by position); letting it go; one list's positions, from the
/// records where they were let go; and every list's back (on the pool's threads).
bool positions_can_go(const Plan& plan, const LoopBody& body);
void drop_positions(Plan& plan);
std::vector<std::uint32_t> positions_of(const SpaceView& space, const Plan& plan, int th, int step);
void restore_positions(const SpaceView& space, Plan& plan);

/// The plan of the loop at `where`: the cached one while it fits the loop's arrays,
/// else a new one (build_plan). Collective.
std::shared_ptr<Plan> cached_plan(const SpaceView& space, const LoopBody& body, const LoopOptions& options,
                                  const std::source_location& where);
/// The plan's schedule rows (see schedule_rows in strata/loop/parallel_for.hpp).
std::vector<std::int64_t> schedule_rows(const SpaceView& space, const Plan& plan, std::int64_t clock_every);

/// Reconnaissance (1 in `stride` iterations), analysis and layout: a new plan.
/// Collective. A plan from a sample is speculative (verified = false) unless its
/// strategy needs every access anyway (conflict groups), in which case the pass is
/// repeated in full.
/// `previous`, when given, is the plan this one replaces (a hint: the passes may be
/// merged when it had conflict groups).
std::unique_ptr<Plan> build_plan(const SpaceView& space, const LoopBody& body, const LoopOptions& options,
                                 const std::source_location& where, int stride, const Plan* previous = nullptr);

/// The plan's work lists (work_lists.cpp): per thread and step, the positions of this
/// rank's iterations in the order they run, for the strategy and layout chosen;
/// `group_thread` gives a groups plan's thread of each iteration. Collective when the
/// plan deals rounds. With `positions_can_go` (positions_can_go of the plan and its
/// body) the positions are not listed where packing can read the lists by position
/// instead (plan.positions_dropped is then set from the start).
void fill_work_lists(Plan& plan, const SpaceView& space, const LoopOptions& options,
                     const std::vector<std::int32_t>& group_thread, int steps, bool positions_can_go);

// ---- execution (run_plan.cpp) -----------------------------------------------

/// Whether each thread runs its work as one step (every strategy but the 2-D ones).
bool strategy_has_one_step(const Plan& plan);
/// Runs the loop once by `plan`. With `verify`, every access is also checked against
/// the plan's fitted subscripts; the first that does not fit stops its thread's
/// share of the run (the schedule still completes), and the run reports it: the
/// first such message of any thread on any rank, "" when every access fitted.
/// Collective.
std::string run_plan(const SpaceView& space, const LoopBody& body, Plan& plan, const LoopOptions& options,
                     bool verify);
/// Makes the plan's work records ahead of its first run (run_plan makes them
/// otherwise), so that they are not made while a snapshot of the arrays is held too:
/// the packing keeps the plan's lists by position until it is done.
void pack_ahead(const SpaceView& space, const LoopBody& body, Plan& plan);

// ---- schedules of loop calls (schedule_rows.cpp) ------------------------------

// Schedule rows (kScheduleFields, strata/loop/parallel_for.hpp): step, worker (rank
// x threads + thread), seq (its place in the worker's order), then dims subscripts.
/// Every rank's rows (collective), sorted by (step, worker, seq).
std::vector<std::int64_t> gather_schedule(Runtime& rt, std::vector<std::int64_t> mine, int dims);
/// The record's form of a gathered schedule whose steps are clocks (`clocks` of them).
RecordedSchedule to_recorded(const std::vector<std::int64_t>& rows, int dims, std::int64_t clocks);
/// A replay: the element of `space` at a recorded schedule's row (its first dims
/// values); throws ReplayError naming the call when the space has none there.
std::byte* recorded_element(const SpaceView& space, std::span<const std::int64_t> row,
                            const RecordedCall& call);

}  // namespace strata::loop::detail
