// A loop plan: what the analysis found and how the loop is laid out on workers.
// Plans are built once per loop site and reused while the iteration space and the
// arrays keep their structure (see PlanCache).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "strata/analysis/dependence.hpp"
#include "strata/analysis/strategy.hpp"
#include "strata/detail/array_base.hpp"
#include "strata/loop/recorder.hpp"
#include "strata/loop/schedule.hpp"

#ifndef STRATA_CHECKED_DEFAULT
#define STRATA_CHECKED_DEFAULT 0
#endif

namespace strata {

/// How parallel_for runs a loop.
struct LoopOptions {
  /// Dependent iterations keep their lexicographic order (default: any serial order).
  bool ordered = false;
  /// Force a strategy (serial, 1d, 2d, 2d-skewed, groups); it must be legal.
  std::optional<analysis::Strategy> strategy;
  /// Print the plan (rank 0) when it is built.
  bool explain = false;
  /// Verify every access during execution against the plan. On by default in builds
  /// configured with -DSTRATA_CHECKED=ON, and for every loop when the environment
  /// variable STRATA_CHECKED=1 is set.
  bool checked = STRATA_CHECKED_DEFAULT != 0;
  /// Time blocks per worker in 2-D plans; 0 = automatic: at least 2 (so transfers
  /// overlap computation), more when the rows that follow the time dimension are
  /// large, so one block of them stays in a core's L2 cache.
  int blocks_per_worker = 0;
  /// Unordered 2-D plans: times the time blocks go round the workers per pass. Each
  /// worker's space part is cut into S slices (slices_per_worker); round r runs
  /// slice r mod S, and the slice's iterations at each time index are dealt over its
  /// rounds / S visits in turn (RoundDealer). 0 = automatic: 8, fewer when a step
  /// would hold under 1024 iterations. With one round a block visits each worker
  /// once, so SGD sees each time-dimension row's updates in W bursts per pass and
  /// converges per pass slower than on a shuffled serial order (mf, 10M ratings, 2
  /// workers: 10-23 % above the serial loss; docs/apps.md).
  int rounds = 0;
  /// Unordered 2-D plans: slices of each worker's space part (see rounds); 0 =
  /// automatic: enough that a slice of the arrays following the space dimension
  /// fits in about 8 MiB, at most rounds and a divisor of it. Set, it must divide
  /// rounds.
  int slices_per_worker = 0;
  /// For tests of checked mode only: run a forced strategy even if it is illegal.
  bool skip_legality_check = false;
  /// The reconnaissance pass visits every recon_stride-th iteration only, and the
  /// first run checks every access of every iteration against the plan built from
  /// that sample: if one does not fit, the run is undone and the loop re-planned from
  /// a full pass. 1 = a full reconnaissance pass; 0 = automatic: 16 for loops of at
  /// least 2^20 iterations, otherwise 1.
  int recon_stride = 0;
  /// 0: each worker visits its iterations of a block in key order. Otherwise the
  /// order inside each block is a random permutation drawn from this seed (the same
  /// for every run with the same seed, ranks and threads). Any order inside a block
  /// keeps the plan's guarantees; SGD converges per pass more like a serial loop over
  /// shuffled data when the order is not sorted by key.
  std::uint64_t shuffle_seed = 0;
};

namespace loop {

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
};

struct Plan {
  std::string loop_site;
  /// A loop call that a run resumed from a checkpoint skipped (strata/recovery): the
  /// plan holds nothing else.
  bool skipped = false;
  /// A loop call a single-process replay ran in its recorded order (strata/recovery).
  bool replayed = false;
  /// Which plan this is among those the process built (1, 2, ...): records of a run
  /// store a plan's serial order once, however many calls use it.
  std::uint64_t serial = 0;
  int iter_dims = 0;
  bool ordered = false;
  std::vector<SiteSummary> sites;
  std::vector<analysis::Reference> refs;
  std::vector<analysis::DependenceVector> vectors;
  bool irregular = false;
  analysis::StrategyChoice choice;
  std::vector<ArrayRole> roles;
  std::vector<ReadSet> read_sets;  ///< this rank's, for relaxed arrays

  int ranks = 1, threads = 1, workers = 1;
  /// Strategies that cannot be partitioned across ranks yet (serial, groups, skewed
  /// 2D) run on rank 0's threads with the iteration space and the arrays gathered
  /// there; the other ranks wait. Set when ranks > 1 for those strategies.
  bool gathered = false;
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
  std::vector<std::vector<std::vector<std::uint32_t>>> work;
  /// The same work as contiguous (index, value pointer) records, built by the executor
  /// on first use: streaming them beats gathering keys and values through positions.
  std::vector<std::vector<std::vector<std::byte>>> packed;
  /// Fingerprint of the iteration space's values when the copies in `packed` were made.
  std::uint64_t packed_fingerprint = 0;
  std::int64_t groups = 0;
  double imbalance = 1.0;       ///< slowest worker's iterations / mean
  std::int64_t bytes_per_pass = 0;  ///< bytes moved between ranks per pass: travelling rows, replicas

  /// The reconnaissance pass visited every recon_stride-th iteration. Until its first
  /// run has checked every access against the plan, a plan from a sample is
  /// speculative (verified false).
  int recon_stride = 1;
  bool verified = true;
  /// Why a speculative plan was dropped, when one was (shown by explain).
  std::string speculation_failure;

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

/// Per-process cache of plans keyed by loop site.
class PlanCache {
 public:
  static PlanCache& instance();
  Plan* find(const std::string& key);
  Plan& store(const std::string& key, std::unique_ptr<Plan> plan);
  void clear() { plans_.clear(); }

 private:
  std::map<std::string, std::unique_ptr<Plan>> plans_;
};

/// Merges the reconnaissance records of all ranks (collective) into site summaries.
std::vector<SiteSummary> merge_sites(Runtime& rt, const std::vector<SiteRecord>& local);

/// Runs the analysis on merged sites: references, vectors, strategy, array roles.
void analyse(Plan& plan, const std::vector<std::int64_t>& space_extents, const LoopOptions& options);

/// The exact conflict groups of this rank's iterations, packed onto its threads.
std::vector<std::int32_t> group_threads(Plan& plan, std::int64_t iterations,
                                        const std::vector<analysis::ElementAccess>& accesses);

}  // namespace loop
}  // namespace strata
