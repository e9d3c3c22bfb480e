// The loop calls of a run, counted in program order (every rank makes the same
// calls in the same order): the journal of what each call left in accumulators,
// automatic checkpoints every N calls that changed arrays, and fast re-execution:
// a run started with a resume directory skips the calls its checkpoint covers,
// restoring what they left instead of running them, so the program's own driver
// code recomputes every driver variable (DESIGN.md §6).
//
// Runtime options (strata/runtime.hpp): checkpoint_dir, checkpoint_every, resume_dir.
//
// What a checkpoint restores: every DistArray a loop call changed (written in place,
// through a Buffer with its owner state, or the iteration space's elements) and every
// accumulator. What it cannot: arrays and variables the driver changes outside loops
// from values it reads out of arrays between calls; those are recomputed from the
// arrays as they stand during the skipped calls (their values at the start).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

#include "strata/recovery/execution_record.hpp"
#include "strata/recovery/run_checkpoint.hpp"

namespace strata {
class Runtime;
}

namespace strata::recovery {

class LoopCalls {
 public:
  explicit LoopCalls(Runtime& rt);
  ~LoopCalls();

  /// At the start of every loop call. True when the call is covered by the checkpoint
  /// being resumed: what it left is restored (accumulators; at the checkpoint's last
  /// call also the arrays) and the caller must not run it. Collective. Throws
  /// CheckpointError on every rank when the checkpoint does not fit the program.
  bool begin(const std::source_location& where);
  /// After a call that ran, with what it changed: journals the call, writes a
  /// checkpoint when one is due, and records or checks it (record / replay).
  /// Collective.
  void end(const CallOutcome& outcome);

  /// The run's record or replay (mode off when neither was asked for).
  ExecutionRecord& record() { return *record_; }
  bool recording() const { return record_->mode() == ExecutionRecord::Mode::record; }
  /// A single-process replay: loop calls run their recorded serial order. So does,
  /// in a replay of a one-process, one-thread record, a call whose relaxed arrays'
  /// values depended on timing: its reads come from the record's log.
  bool replaying_serially() const;
  /// Replay modes, between begin and end: the record of the current call.
  const RecordedCall& expected() const { return *expected_; }

  std::int64_t calls() const { return call_; }
  std::int64_t skipped() const { return skipped_; }
  int checkpoints_written() const { return checkpoints_; }
  double checkpoint_seconds() const { return checkpoint_seconds_; }

 private:
  void open_resume_point();
  void restore_states();
  void check_arrays(bool all_exist) const;
  std::string manifest_path() const;  ///< of the checkpoint being resumed, for messages
  void load_arrays();
  CallRecord record_now() const;
  void checkpoint();

  Runtime& rt_;
  std::string checkpoint_dir_, resume_dir_;
  int every_ = 1;
  std::int64_t call_ = 0, changing_calls_ = 0, skipped_ = 0;
  std::string site_;
  std::vector<CallRecord> journal_;
  std::vector<std::uint64_t> changed_ever_;  ///< sorted ids
  bool resume_opened_ = false;
  std::optional<ResumePoint> resume_;
  std::unique_ptr<ExecutionRecord> record_;
  const RecordedCall* expected_ = nullptr;
  int checkpoints_ = 0;
  double checkpoint_seconds_ = 0;
};

}  // namespace strata::recovery
