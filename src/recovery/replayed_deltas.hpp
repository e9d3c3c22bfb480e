// The Buffers of one loop call in a single-process replay (execution_record.hpp):
// this process plays every worker of the recorded run, so each Buffer keeps a delta
// set per recorded worker, and the deltas are applied clock by clock as the recorded
// run's owners applied them. With this, a replayed call's arrays match the recorded
// run's bit for bit even when its Buffers sum floating-point deltas.
//
// Reads of a relaxed array see what the recorded worker's rank read: the array as of
// the previous clock (BSP), or as of the clock the record says its cache held (SSP).
// For SSP arrays the values of the last few clocks are kept, and the array shows the
// version each iteration's rank read while that iteration runs.
//
// Relaxed arrays whose values depended on timing (managed communication, Hybrid) are
// read from the record's timing log instead: observer() hands each read the value
// the recorded worker's read got. With managed communication the owners' logged
// deltas are applied at the end, in the logged order, after the recomputed sums were
// checked against them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "strata/detail/pack.hpp"
#include "recovery/execution_record.hpp"

namespace strata::detail {
class AccessObserver;
class ArrayBase;
class BufferBase;
class RelaxedBase;
}  // namespace strata::detail

namespace strata::recovery {

class ReplayedDeltas final : public loop::ReplayedWrites {
 public:
  /// For call `call` of `record`, whose schedule has `clocks` clocks. Throws
  /// ReplayError when a relaxed array of the call read values whose staleness
  /// depended on timing the record does not hold, or a Buffer it names does not exist.
  ReplayedDeltas(const ExecutionRecord& record, const RecordedCall& call, std::int64_t clocks);
  ~ReplayedDeltas() override;
  ReplayedDeltas(const ReplayedDeltas&) = delete;
  ReplayedDeltas& operator=(const ReplayedDeltas&) = delete;

  /// Before an iteration of clock `clock` that recorded worker `worker` ran: applies
  /// the relaxed arrays' earlier clocks and shows each the version the worker read.
  void advance_to(std::int64_t clock, std::int64_t worker) override;
  /// Once, after the last iteration: the remaining clocks, then each Buffer's
  /// end-of-call flush, in the recorded order. Throws ReplayError when a worker read
  /// a logged array fewer times than the log holds.
  void finish() override;
  /// The observer the body's accesses must go to while the call is replayed (it
  /// serves the logged reads), or nullptr when the call has no logged array.
  detail::AccessObserver* observer() const override;

 private:
  struct Relaxed {
    detail::BufferBase* buffer = nullptr;
    detail::ArrayBase* array = nullptr;
    std::int64_t first_round = 0;
    bool written = false;
    int staleness = 0;
    RecordedVersions versions;  ///< SSP: per rank and clock, the version it read; else empty
    bool managed = false;       ///< the owners' deltas come from the timing log
    std::vector<std::span<const std::byte>> applies;  ///< managed: per rank, its logged applies (in timing_files_)
    std::int64_t applied = 0;   ///< clocks applied
    std::int64_t shown = -1;    ///< the version the array's values hold
    std::map<std::int64_t, Bytes> kept;  ///< SSP: recent versions' values, the newest included
  };
  void apply_through(Relaxed& r, std::int64_t last);
  void show(Relaxed& r, std::int64_t version);

  class LoggedReads;

  std::string call_;  ///< "loop call N at SITE", for messages
  std::vector<detail::BufferBase*> buffers_;  ///< written through, in flush order
  std::vector<Relaxed> relaxed_;
  std::vector<Bytes> timing_files_;           ///< the call's timing logs, one per recorded rank
  std::unique_ptr<LoggedReads> logged_;
  std::int64_t clocks_ = 1;
  int ranks_ = 1, threads_ = 1;
};

}  // namespace strata::recovery
