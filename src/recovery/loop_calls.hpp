// The loop calls of a run, counted in program order (every rank makes the same
// calls in the same order): the journal of what each call left in accumulators,
// automatic checkpoints every N calls that changed arrays, and fast re-execution:
// a run started with a resume directory skips the calls its checkpoint covers,
// restoring what they left instead of running them, so the program's own driver
// code recomputes every driver variable (DESIGN.md §6).
//
// Runtime options (strata/runtime.hpp): checkpoint_dir, checkpoint_every,
// checkpoint_in_background, resume_dir.
//
// A checkpoint is written in the background (pending_checkpoint.hpp);
// each loop call's end moves it on to its next step once every rank is ready for it.
// At the next checkpoint, and at finish_checkpoints(), the driver waits for it.
//
// What a checkpoint restores: every DistArray a loop call changed (written in place,
// through a Buffer with its owner state, or the iteration space's elements) and every
// accumulator. What it cannot: arrays and variables the driver changes outside loops
// from values it reads out of arrays between calls; those are recomputed from the
// arrays as they stand during the skipped calls (their values at the start).
//
// The engine's, not the API: programs ask through the free functions of
// strata/recovery.hpp (recovery.cpp), which leave this class free to change.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <source_location>
#include <span>
#include <string>
#include <vector>

#include "strata/loop/call_hooks.hpp"
#include "strata/recovery.hpp"
#include "recovery/execution_record.hpp"
#include "recovery/pending_checkpoint.hpp"
#include "recovery/run_checkpoint.hpp"

namespace strata::recovery {

class LoopCalls final : public loop::CallHooks {
 public:
  explicit LoopCalls(Runtime& rt);
  ~LoopCalls() override;

  /// At the start of every loop call. True when the call is covered by the checkpoint
  /// being resumed: what it left is restored (accumulators; at the checkpoint's last
  /// call also the arrays) and the caller must not run it. Collective. Throws
  /// CheckpointError on every rank when the checkpoint does not fit the program.
  bool begin(const std::source_location& where) override;
  /// After a call that ran, with what it changed: journals the call, commits a
  /// checkpoint whose files every rank has written, starts one when one is due, and
  /// records or checks the call (record / replay). Collective.
  void end(const CallOutcome& outcome) override;
  /// Collective: waits for the checkpoint being written, if any, and commits it. The
  /// Runtime calls it when it ends normally; call it first to see a failure as an
  /// IoError rather than a logged error.
  void finish_checkpoints();
  /// At the Runtime's normal end: finish_checkpoints, logging a failure.
  void finish() override;

  /// The run's record or replay (mode off when neither was asked for).
  ExecutionRecord& record() { return *record_; }
  bool recording() const override { return record_->mode() == ExecutionRecord::Mode::record; }
  std::int64_t order_of(std::uint64_t key) const override { return record_->order_of(key); }
  std::int64_t write_order(std::uint64_t key, const RecordedSchedule& schedule) override {
    return record_->write_order(key, schedule);
  }
  /// A single-process replay: loop calls run their recorded serial order. So does,
  /// in a replay of a one-process, one-thread record, a call whose relaxed arrays'
  /// values depended on timing: its reads come from the record's log.
  bool replaying_serially() const override;
  bool replaying() const override;
  /// Replay modes, between begin and end: the record of the current call.
  const RecordedCall& expected() const override { return *expected_; }
  RecordedSchedule schedule(const RecordedCall& call, int dims) const override {
    return record_->schedule(call, dims);
  }
  int recorded_ranks() const override { return record_->recorded_ranks(); }
  int recorded_threads() const override { return record_->recorded_threads(); }
  std::unique_ptr<loop::ReplayedWrites> replay_writes(const RecordedCall& call, std::int64_t clocks) override;
  void before_relaxed_run(std::span<detail::RelaxedBase* const> tables, const std::string& site) override;

  /// recovery::bind_checkpoints.
  void bind(const std::string& name, const std::string& value);

  std::int64_t calls() const override { return call_; }
  std::int64_t skipped() const { return skipped_; }
  const CheckpointTimes& checkpoint_times() const { return times_; }

 private:
  void open_resume_point();
  void restore_states();
  void check_arrays(bool all_exist) const;
  void check_setting(const BoundSetting& mine) const;
  void check_unbound_settings() const;
  std::string manifest_path() const;  ///< of the checkpoint being resumed, for messages
  void load_arrays();
  CallRecord record_now() const;
  void checkpoint();
  void advance_pending();
  void commit_pending();

  Runtime& rt_;
  std::string checkpoint_dir_, resume_dir_;
  int every_ = 1;
  std::int64_t call_ = 0, changing_calls_ = 0, skipped_ = 0;
  std::string site_;
  std::vector<CallRecord> journal_;
  std::vector<std::uint64_t> changed_ever_;  ///< sorted ids
  /// Ids issued before the run began: a checkpoint names an array by its id less this
  /// (arrays are created in the same order every run, whatever the process did before).
  std::uint64_t id_base_ = 0;
  bool resume_opened_ = false;
  std::optional<ResumePoint> resume_;
  std::vector<BoundSetting> bound_;                        ///< recorded in every checkpoint
  std::optional<std::vector<BoundSetting>> resumed_with_;  ///< the resumed checkpoint's
  std::string resumed_manifest_;                           ///< its path, for messages
  std::unique_ptr<ExecutionRecord> record_;
  const RecordedCall* expected_ = nullptr;
  bool background_ = true;
  std::unique_ptr<PendingCheckpoint> pending_;  ///< on its way to disk
  std::vector<Bytes> storage_;                  ///< the last checkpoint's copies, for the next
  CheckpointTimes times_;
};

/// The run's loop calls (every Runtime has them).
LoopCalls& loop_calls(Runtime& rt);

}  // namespace strata::recovery
