// A loop plan: what the analysis found and how the loop is laid out on workers.
// Plans are built once per loop site and reused while the iteration space and the
// arrays keep their structure (see PlanCache).
//
// Internal to the loop engine (src/loop), not API: parallel_for returns a LoopReport
// (strata/loop/loop_report.hpp). Tests and benchmarks that check a plan's internals
// reach it through loop/inspect.hpp.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "strata/analysis/dependence.hpp"
#include "strata/analysis/strategy.hpp"
#include "strata/detail/array_base.hpp"
#include "strata/loop/loop_options.hpp"
#include "strata/loop/loop_report.hpp"
#include "loop/record_bytes.hpp"
#include "loop/recorder.hpp"
#include "loop/schedule.hpp"

namespace strata {

namespace loop {

class OwnershipTable;
struct SplitGroups;
struct HostedSpace;

/// One static access site as the planner sees it (merged over ranks).
struct SiteSummary {
  std::uint64_t array_id = 0;
  std::string array_name;
  std::string site;
  strata::detail::AccessMode mode = strata::detail::AccessMode::read;
  std::vector<analysis::Subscript> subs;
  std::int64_t count = 0;
};

/// How an array is placed while the loop runs.
/// local: used where it is (one rank, or arrays the plan gathers on rank 0);
/// aligned: partitioned with the space dimension; travelling: moves with the time
/// blocks of a 2-D plan; replicated: only read, with subscripts that follow no
/// partitioned dimension, so every rank gets a whole copy for the loop; cached: a
/// relaxed array (parameter server), read from each rank's cache of its read set.
enum class Placement { local, aligned, travelling, replicated, cached };


struct ArrayRole {
  std::uint64_t array_id = 0;
  std::string name;
  Placement placement = Placement::local;
  int array_dim = -1;  ///< aligned / travelling: the array dimension that follows the plan
  bool written = false;  ///< written in place (buffered writes do not count)
  bool read = false;     ///< read in place
  /// A wavefront across ranks (loop/wavefront_ranks.hpp): the array's rows (dimension
  /// 0) follow the space dimension at every site and it is written only at the
  /// iteration's own row, so each rank holds its band of rows and, for a call, the
  /// `halo_below` rows below it and `halo_above` above it that its iterations read.
  bool banded = false;
  std::int64_t halo_below = 0, halo_above = 0;
};

struct Plan {
  std::string loop_site;
  /// A loop call that a run resumed from a checkpoint skipped (src/recovery): the
  /// plan holds nothing else.
  bool skipped = false;
  /// A loop call a single-process replay ran in its recorded order (src/recovery).
  bool replayed = false;
  /// Which plan this is among those the process built (1, 2, ...): records of a run
  /// store a plan's serial order once, however many calls use it.
  std::uint64_t serial = 0;
  int iter_dims = 0;
  bool ordered = false;
  bool key_order = false;  ///< LoopOptions::key_order (groups plans visit in key order)
  std::vector<SiteSummary> sites;
  std::vector<analysis::Reference> refs;
  std::vector<analysis::DependenceVector> vectors;
  bool irregular = false;
  analysis::StrategyChoice choice;
  std::vector<ArrayRole> roles;
  std::vector<ReadSet> read_sets;  ///< this rank's, for relaxed arrays

  int ranks = 1, threads = 1, workers = 1;
  /// Strategies that cannot be partitioned across ranks (serial, groups that cannot be
  /// spread, skewed 2D that does not fit the ranks) run on rank 0's threads with the
  /// iteration space and the arrays gathered there; the other ranks wait. Set when
  /// ranks > 1 for those strategies.
  bool gathered = false;
  /// A skewed 2-D plan on the workers of every rank (loop/wavefront_ranks.hpp): the
  /// iteration space is cut by ranges of the space dimension, banded arrays with it
  /// (other arrays are copied whole for a call), and the writes a later rank reads
  /// pass from rank to rank with the time blocks.
  bool wavefront_ranks = false;
  /// Conflict groups placed on the workers of every rank (loop/spread.hpp); `hosted`
  /// holds the iterations this rank runs (set once the groups are placed).
  bool spread = false;
  std::shared_ptr<HostedSpace> hosted;
  std::vector<std::int64_t> space_bounds;  ///< workers+1 bounds along the space dimension
  /// Where space_bounds came from: balanced by this loop's histogram, or kept from an
  /// earlier plan that split an array this loop also keeps aligned (explain).
  std::string space_bounds_note;
  std::vector<std::int64_t> time_bounds;   ///< blocks+1 bounds along the time dimension
  /// Unordered 2-D plans: slices of each worker's space part (RoundDealer); round r
  /// runs slice r mod slices_per_worker. With more than one, workers x slices + 1
  /// bounds along the space dimension (they refine space_bounds).
  int slices_per_worker = 1;
  std::vector<std::int64_t> slice_bounds;
  BlockSchedule schedule;                  ///< 2-D strategies
  /// This rank's work: per thread, per step, positions of local iterations in key order.
  /// Let go once packed where the records can give them back (positions_dropped:
  /// work_positions.cpp); the per-thread, per-step structure stays.
  std::vector<std::vector<std::vector<std::uint32_t>>> work;
  bool positions_dropped = false;
  /// The number of iterations of each list (per thread, per step), whether or not
  /// its positions are held: where they would be let go at once after packing,
  /// fill_work_lists never lists them, and packing reads list_of_position instead.
  std::vector<std::vector<std::uint32_t>> list_sizes;
  /// Per thread, per step, until packing: bounds (per dimension) that contain the
  /// subscripts of the list's iterations, from fill_work_lists: the smallest and
  /// largest, or a 2-D list's box (its slice by its time block) where every box fits
  /// narrow records, as those need containment only. The lo become packed_base where
  /// the lists fit narrow records.
  std::vector<std::vector<std::array<std::int64_t, 4>>> list_lo, list_hi;
  /// Per thread of this rank: the first of its positions and one past its last
  /// (T + 1 values), where each thread's positions are contiguous; empty otherwise.
  std::vector<std::int64_t> thread_positions;
  /// The same work as contiguous (index, value pointer) records, built by the executor
  /// on first use: streaming them beats gathering keys and values through positions.
  std::vector<std::vector<RecordBytes>> packed;
  std::size_t record_size = 0;  ///< bytes of one packed record
  /// The records' subscripts are 32-bit (LoopBody::run_compact): every extent of the
  /// space fits.
  bool compact_records = false;
  /// The records' subscripts are 16-bit offsets from their list's base in
  /// packed_base (LoopBody::run_narrow): the body has narrow records and every list
  /// of every thread spans at most 2^16 indices in each dimension.
  bool narrow_records = false;
  std::vector<std::vector<std::array<std::int64_t, 4>>> packed_base;
  /// Until the records are packed: each local iteration's list (thread x steps + step),
  /// by position, when every list is in position order and there are at most 2^16
  /// lists (fill_work_lists), so that packing reads the iterations in order; empty
  /// otherwise. Not zeroed when sized: filling writes every position (where the
  /// threads have ranges of positions, each its own, taking its pages' first touch).
  std::vector<std::uint16_t, UninitialisedAllocator<std::uint16_t>> list_of_position;
  /// Fingerprint of the iteration space's values when the copies in `packed` were made.
  std::uint64_t packed_fingerprint = 0;
  /// Where the space's local elements were when `packed` was made: records that point
  /// at their elements (a body that may modify its element) follow them when the
  /// storage moved without changing its structure (a journey of the array between
  /// ranks during another loop leaves the same elements in new storage).
  const std::byte* packed_values = nullptr;
  std::int64_t groups = 0;
  double imbalance = 1.0;       ///< slowest worker's iterations / mean
  std::int64_t bytes_per_pass = 0;  ///< bytes moved between ranks per pass: travelling rows, replicas
  std::int64_t last_bytes_moved = 0;  ///< bytes the ranks sent each other in the last run (measured, summed)

  /// The reconnaissance pass visited every recon_stride-th iteration. Until its first
  /// run has checked every access against the plan, a plan from a sample is
  /// speculative (verified false).
  int recon_stride = 1;
  bool verified = true;
  /// Why a speculative plan was dropped, when one was (shown by explain).
  std::string speculation_failure;

  /// Groups plans over irregular subscripts run with every access claimed in this
  /// table (loop/ownership.hpp): their groups hold only for the accesses recorded when
  /// the plan was built. Null for plans whose validity rests on fitted subscripts only.
  std::shared_ptr<OwnershipTable> ownership;
  /// Groups too large for one thread, split over the threads under locks
  /// (loop/split_groups.hpp); null when none is.
  std::shared_ptr<SplitGroups> split;
  /// Groups split (the most of any rank) and their iterations (summed over ranks):
  /// the same on every rank.
  std::int64_t split_groups = 0, split_iterations = 0;
  /// Runs of this plan checked against the table, and why the last refused run (of
  /// the plan this one replaced) was refused (explain).
  std::int64_t revalidated_runs = 0;
  std::string revalidation_failure;
  /// Why the plans cached for this loop's key did not serve the call that built this
  /// one (loop/plan_probe.hpp); empty when none was cached or they were stale.
  std::string probe_failure;
  /// Calls that probed this plan before it ran again: chooses the probe's iterations.
  std::uint64_t probes = 0;
  /// Why the loop runs serially though its analysis found conflict groups ("" when
  /// it does not): its run touched other elements than its reconnaissance pass had
  /// just before, or its groups changed at every call and planning them again cost
  /// more than a serial run.
  std::string serial_reason;
  /// Calls in a row at which this loop's cached groups no longer held (carried from
  /// plan to plan); and set when the next call should run serially instead.
  int changed_calls = 0;
  std::string go_serial;

  double recon_seconds = 0, plan_seconds = 0;
  /// The last run on this rank: its wall time, and the seconds its threads spent
  /// waiting for time blocks (summed over threads; 2-D plans only).
  double last_run_seconds = 0, last_wait_seconds = 0;
  std::int64_t recon_accesses = 0;
  std::uint64_t space_version = 0;
  struct ArrayState {
    std::uint64_t id;
    std::vector<std::int64_t> shape;
    std::uint64_t version;
  };
  std::vector<ArrayState> arrays;  ///< every array the loop touches, as last seen

  /// Human-readable: sites and fitted subscripts, dependence vectors, the strategy and
  /// why stronger ones were rejected, the partition grid, imbalance, traffic, costs.
  std::string explain() const;
};

/// True when STRATA_CHECKED=1 is set in the environment: every loop runs checked.
bool checked_by_environment();

/// A 64-bit fingerprint (XXH3) of a byte range: tells whether copied values are stale.
std::uint64_t fingerprint(std::span<const std::byte> bytes);

/// Per-process cache of plans keyed by loop site (loop_key). A key may hold several
/// plans: one closure type called from one line with other arrays or subscripts needs
/// a plan for each (loop/plan_probe.hpp says which fits a call). Reports of a plan's
/// calls share it.
class PlanCache {
 public:
  /// Plans kept for one key: a helper alternating over a few arrays keeps a plan for
  /// each; a loop whose constant subscript changes at every call holds no more than this.
  static constexpr std::size_t kPlansPerKey = 4;

  static PlanCache& instance();
  /// The plans cached for `key`, the most recently used first.
  std::vector<std::shared_ptr<Plan>> find(const std::string& key) const;
  /// Caches `plan` for `key` as the most recently used, in the place of `replaced`
  /// (a plan the call found wrong) when given; the least recently used beyond
  /// kPlansPerKey is let go.
  Plan& store(const std::string& key, std::shared_ptr<Plan> plan, const Plan* replaced = nullptr);
  /// Marks `plan` the most recently used of `key`.
  void touch(const std::string& key, const Plan* plan);
  /// Lets `plan` go (a stale plan: its arrays or space changed).
  void forget(const std::string& key, const Plan* plan);
  void clear() { plans_.clear(); }

 private:
  std::map<std::string, std::vector<std::shared_ptr<Plan>>> plans_;
};

/// Merges the reconnaissance records of all ranks (collective) into site summaries.
std::vector<SiteSummary> merge_sites(Runtime& rt, const std::vector<SiteRecord>& local);

/// Runs the analysis on merged sites: references, vectors, strategy, array roles.
/// `space_id` and `space_nnz` name the iteration space, whose split by an earlier
/// writing loop (worker_splits.hpp) the choice of dimension weighs.
void analyse(Plan& plan, const std::vector<std::int64_t>& space_extents, const LoopOptions& options,
             std::uint64_t space_id = 0, std::int64_t space_nnz = 0);

/// Reaches the plan a LoopReport was made from (LoopReport keeps it private).
struct ReportAccess {
  /// The report of a call that ran (or planned) by `plan`; `run_seconds` and
  /// `wait_seconds` are those of the plan's last run.
  static LoopReport make(std::shared_ptr<const Plan> plan);
  /// The plan behind `report`; throws Error when it has none (a default report).
  static const Plan& plan(const LoopReport& report);
};

}  // namespace loop
}  // namespace strata
