// Recording a run's execution and replaying it (DESIGN.md §6).
//
// With RuntimeOptions::record_dir (--strata-record=DIR) a run writes
//   DIR/record.txt      the run (program, ranks, threads), then one line per loop call:
//                       its site, the id of its recorded schedule, the arrays it wrote
//                       through Buffers, its relaxed arrays, and a fingerprint of every
//                       array it changed
//   DIR/order-<k>.bin   a schedule: every iteration's index with the worker (rank x
//                       thread) that ran it and its clock, in a serial order the run is
//                       equivalent to; written once per plan (per distinct schedule for
//                       mini-batch loops)
//   DIR/versions-<n>.bin for loop call n over stale-synchronous relaxed arrays: per
//                       array, rank and clock, the clock of the array the rank's cache
//                       held (what its reads saw, cached or not), which depends on timing
//   DIR/timing-<n>-<r>.bin for loop call n over relaxed arrays with managed
//                       communication or Hybrid consistency, one per rank r: every value
//                       each of the rank's loop threads read from them, in order, and
//                       (managed) every delta the rank's owner applied, in order
//                       (ps/timing_log.hpp)
//
// How deltas written through Buffers were applied follows from the schedule: each
// worker sums its own deltas per element in its iteration order; at the end of every
// clock (the call's end, for arrays that are not relaxed) a rank's workers' sums are
// added in thread order, and each owner applies the ranks' sums in rank order, one
// apply round per clock. Mini-batch loops (sync_for) combine the same way per batch.
//
// With replay_dir (--strata-replay=DIR) the program runs again and, after every loop
// call, the fingerprints of the arrays the call changed are compared with the record;
// the first difference stops the run with ReplayError naming the call, its site and
// the array. Two ways to replay:
// * on the recorded ranks and threads: the same computation (dependence-preserving
//   plans, BSP relaxed arrays and mini-batch loops are deterministic; SSP caches take
//   the recorded versions), checked call by call;
// * in one process on one thread: every call runs its body over the recorded
//   schedule, with no planning and no other thread, each iteration's Buffer writes
//   summed as its recorded worker summed them and applied clock by clock as the
//   owners applied them, so a multi-rank run can be stepped through under a debugger
//   and its arrays come out bit for bit. Reads of an SSP array see the recorded
//   version of the recorded worker's rank. Buffer writes made outside loops count as
//   rank 0's (a program in which every rank makes them differs, and the check says
//   where).
// Relaxed arrays with managed communication or Hybrid consistency read values that
// depend on when messages arrived (and, Hybrid, on how the rank's threads
// interleaved), and managed owners apply early deltas as they arrive. The record logs
// those outcomes (timing-<n>-<r>.bin), and only the one-process replay uses them: each
// read of such an array returns the logged value of the recorded worker's read (a
// read of another unit than the log says stops the replay), the workers' deltas are
// summed as usual, and a managed owner's logged deltas are applied in the logged
// order after the recomputed sums were checked against them, per element, to within
// rounding (the pieces the outbox sent early were summed in another order). A replay
// on more than one rank or thread refuses such calls; one of a one-process,
// one-thread record replays them from the log too.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "strata/comm.hpp"
#include "strata/loop/call_hooks.hpp"

namespace strata {
class Runtime;
struct Consistency;
}

namespace strata::recovery {

// A loop call as the record lists it, what it changed, its schedule: the loop
// layer's types (strata/loop/call_hooks.hpp).
using loop::CallOutcome;
using loop::RecordedCall;
using loop::RecordedSchedule;

/// Whether a record keeps a relaxed array's cache versions: stale-synchronous reads
/// (staleness above 0) without managed communication.
bool records_cache_versions(const Consistency& c);

/// Whether a relaxed array's values depend on timing beyond what cache versions
/// capture (managed communication, Hybrid): a record logs its reads and applies.
bool values_depend_on_timing(const Consistency& c);

/// One relaxed array's timing log in one loop call, over every recorded rank
/// (timing-<n>-<r>.bin; the spans point into the files the caller keeps).
struct RecordedTiming {
  std::size_t unit_bytes = 0, element_bytes = 0;
  struct Part {
    std::int64_t count = 0;
    std::span<const std::byte> entries;
  };
  std::vector<Part> reads;    ///< per recorded worker: entries of (int64 unit, unit_bytes)
  std::vector<Part> applies;  ///< per recorded rank: entries of (int64 key, int64 clock, element_bytes)
};

/// One relaxed array's cache versions in one loop call (versions-<n>.bin).
struct RecordedVersions {
  int ranks = 0;
  std::int64_t clocks = 0;
  std::vector<std::int64_t> values;  ///< rank-major: clocks values per rank

  std::span<const std::int64_t> of_rank(int rank) const {
    return std::span(values).subspan(static_cast<std::size_t>(rank * clocks), static_cast<std::size_t>(clocks));
  }
};

class ExecutionRecord {
 public:
  enum class Mode { off, record, replay, serial_replay };

  /// Reads the runtime's record_dir / replay_dir. Collective; throws ReplayError on
  /// every rank when the record cannot be read or does not fit this run's layout.
  explicit ExecutionRecord(Runtime& rt);
  ~ExecutionRecord();
  ExecutionRecord(const ExecutionRecord&) = delete;
  ExecutionRecord& operator=(const ExecutionRecord&) = delete;

  Mode mode() const { return mode_; }

  /// Record mode: the id of the schedule written under `key` (a plan's serial, or a
  /// fingerprint of the schedule), 0 when none was.
  std::int64_t order_of(std::uint64_t key) const;
  /// Record mode, collective: writes `schedule` (the same on every rank; rank 0
  /// writes) as a new order file under `key` and returns its id.
  std::int64_t write_order(std::uint64_t key, const RecordedSchedule& schedule);

  /// Replay modes: the record of call `call`, which must be at `site`.
  const RecordedCall& expect(std::int64_t call, const std::string& site) const;
  /// Serial replay: the recorded schedule of `c`, whose iteration space has `dims`
  /// dimensions.
  RecordedSchedule schedule(const RecordedCall& c, int dims) const;
  /// Replay modes: the cache versions of relaxed array `array_id` in call `c`.
  /// Throws ReplayError when the record lacks them.
  RecordedVersions cache_versions(const RecordedCall& c, std::uint64_t array_id) const;
  /// Replay modes: the timing log of relaxed array `array_id` in call `c`, parsed
  /// from `files` (read from the record first when empty, one per recorded rank).
  /// Throws ReplayError when the record lacks it or it is corrupt.
  RecordedTiming timing(const RecordedCall& c, std::uint64_t array_id, std::vector<Bytes>& files) const;
  /// Replay modes: the layout the record was made on.
  int recorded_ranks() const { return ranks_; }
  int recorded_threads() const { return threads_; }

  /// After a call, collective: record mode writes its line (and its relaxed arrays'
  /// cache versions); replay modes compare the fingerprints of the arrays it changed
  /// with the record.
  void after_call(std::int64_t call, const std::string& site, const CallOutcome& outcome);

 private:
  Runtime& rt_;
  Mode mode_ = Mode::off;
  std::string dir_;
  std::FILE* out_ = nullptr;  ///< record.txt (rank 0, record mode)
  int ranks_ = 0, threads_ = 0;                   ///< replay: the recorded layout
  void write_versions(std::int64_t call, const std::vector<std::uint64_t>& relaxed);
  void write_timing(std::int64_t call, const std::vector<std::uint64_t>& relaxed);

  std::map<std::uint64_t, std::int64_t> orders_;  ///< key -> order id
  std::vector<RecordedCall> calls_;               ///< replay: the record
};

}  // namespace strata::recovery
