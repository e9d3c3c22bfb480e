// What the loop engine asks, at every loop call, of the layer that keeps the run's
// loop calls: the journal, automatic checkpoints, resuming, record and replay
// (the engine's src/recovery/loop_calls.hpp implements it). The loop layer defines this face and
// recovery implements it, so the engine never includes the layer above it; the
// implementation registers itself when the library is linked (CMake links it with
// every program that links `strata`).
#pragma once

#include <cstdint>
#include <memory>
#include <source_location>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "strata/runtime.hpp"

namespace strata::detail {
class AccessObserver;
class RelaxedBase;
}  // namespace strata::detail

namespace strata::loop {

/// One loop call as a record lists it.
struct RecordedCall {
  std::int64_t call = 0;
  std::string site;
  std::int64_t order = 0;               ///< its recorded schedule, 0 = none
  std::vector<std::uint64_t> buffers;   ///< arrays written through Buffers, in flush order
  std::vector<std::uint64_t> relaxed;   ///< relaxed arrays of the call
  std::vector<std::pair<std::uint64_t, std::uint64_t>> changed;  ///< (array id, fingerprint)
};

/// What a loop call reports after it ran.
struct CallOutcome {
  std::vector<std::uint64_t> changed;  ///< arrays it changed, sorted
  std::vector<std::uint64_t> buffers;  ///< arrays it wrote through Buffers, in flush order
  std::int64_t order = 0;              ///< its recorded schedule (record mode), 0 = none
  std::vector<std::uint64_t> relaxed;  ///< its relaxed arrays
};

/// A loop call's schedule: per iteration, its index (dims values), the worker that ran
/// it (rank x threads + thread) and its clock (the mini-batch for sync_for; 0 when the
/// call had one), in replay order.
struct RecordedSchedule {
  int dims = 0;
  std::int64_t clocks = 1;         ///< clocks (mini-batches) of the call, empty ones included
  std::vector<std::int64_t> rows;  ///< dims + 2 values per iteration

  std::size_t iterations() const { return rows.size() / static_cast<std::size_t>(dims + 2); }
  std::span<const std::int64_t> row(std::size_t k) const {
    return std::span(rows).subspan(k * static_cast<std::size_t>(dims + 2), static_cast<std::size_t>(dims + 2));
  }
};

/// A one-process replay of the Buffer writes of one recorded call: each iteration's
/// writes are summed as its recorded worker summed them and applied clock by clock as
/// the recorded owners applied them.
class ReplayedWrites {
 public:
  virtual ~ReplayedWrites() = default;
  /// Before an iteration of clock `clock` that recorded worker `worker` ran.
  virtual void advance_to(std::int64_t clock, std::int64_t worker) = 0;
  /// Once, after the last iteration: the remaining clocks and the end-of-call flushes.
  virtual void finish() = 0;
  /// The observer the body's accesses must go to during the replay (it serves reads
  /// the record logged), or nullptr.
  virtual strata::detail::AccessObserver* observer() const = 0;
};

class CallHooks : public RuntimeService {
 public:
  /// At the start of every loop call. True when the call is covered by the checkpoint
  /// being resumed: what it left is restored and the caller must not run it.
  /// Collective.
  virtual bool begin(const std::source_location& where) = 0;
  /// After a call that ran (or was replayed), with what it changed. Collective.
  virtual void end(const CallOutcome& outcome) = 0;
  /// Loop calls so far, the current one included.
  virtual std::int64_t calls() const = 0;

  /// Record mode: the run writes the schedule of every call.
  virtual bool recording() const = 0;
  /// Record mode: the id of the schedule recorded under `key` (a plan's serial, or a
  /// fingerprint of the schedule), 0 when none was.
  virtual std::int64_t order_of(std::uint64_t key) const = 0;
  /// Record mode, collective: records `schedule` (the same on every rank) under `key`
  /// and returns its id.
  virtual std::int64_t write_order(std::uint64_t key, const RecordedSchedule& schedule) = 0;

  /// A single-process replay: loop calls run their recorded schedule on one thread.
  virtual bool replaying_serially() const = 0;
  /// A replay of either kind (on the recorded layout, or in one process).
  virtual bool replaying() const = 0;
  /// Replay modes, between begin and end: the record of the current call.
  virtual const RecordedCall& expected() const = 0;
  /// Serial replay: the recorded schedule of `call`, over `dims` dimensions.
  virtual RecordedSchedule schedule(const RecordedCall& call, int dims) const = 0;
  /// Serial replay: the layout the record was made on.
  virtual int recorded_ranks() const = 0;
  virtual int recorded_threads() const = 0;
  /// Serial replay: the Buffer writes of `call`, whose schedule has `clocks` clocks.
  virtual std::unique_ptr<ReplayedWrites> replay_writes(const RecordedCall& call, std::int64_t clocks) = 0;

  /// Before a run over relaxed arrays (the tables of the call's relaxed arrays; `site`
  /// names the loop): a record makes the tables log what depends on timing, a replay
  /// on the recorded layout gives them the recorded cache versions or refuses them.
  virtual void before_relaxed_run(std::span<strata::detail::RelaxedBase* const> tables, const std::string& site) = 0;
};

/// The run's loop-call hooks.
CallHooks& call_hooks(Runtime& rt);

/// Called once, during static initialisation, by the layer that implements the hooks;
/// every Runtime then creates them as it starts.
void provide_call_hooks(const ServiceKind& kind);

}  // namespace strata::loop
