// Recording a run's execution and replaying it (DESIGN.md §6).
//
// With RuntimeOptions::record_dir (--strata-record=DIR) a run writes
//   DIR/record.txt      the run (program, ranks, threads), then one line per loop call:
//                       its site, the id of its recorded order, the arrays it wrote
//                       through Buffers, and a fingerprint of every array it changed
//   DIR/order-<k>.bin   the serial order a dependence-preserving plan is equivalent to
//                       (every iteration's index), written once per plan
//
// With replay_dir (--strata-replay=DIR) the program runs again and, after every loop
// call, the fingerprints of the arrays the call changed are compared with the record;
// the first difference stops the run with ReplayError naming the call, its site and
// the array. Two ways to replay:
// * on the recorded ranks and threads: the same computation (dependence-preserving
//   plans and BSP buffers are deterministic), checked call by call;
// * in one process on one thread: every call whose plan kept dependences runs its body
//   over the recorded serial order, with no planning and no other thread, so a
//   multi-rank run can be stepped through under a debugger. Deltas written through
//   Buffers are summed in that order; integer deltas come out exact, floating-point
//   sums may differ in the last bit (the fingerprint check says where). Calls without
//   an order (data-parallel plans, sync_for) are refused in this mode.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace strata {
class Runtime;
}

namespace strata::recovery {

/// One loop call as record.txt lists it.
struct RecordedCall {
  std::int64_t call = 0;
  std::string site;
  std::int64_t order = 0;               ///< order-<k>.bin, 0 = none
  std::vector<std::uint64_t> buffers;   ///< arrays written through Buffers
  std::vector<std::pair<std::uint64_t, std::uint64_t>> changed;  ///< (array id, fingerprint)
};

/// What a loop call reports after it ran.
struct CallOutcome {
  std::vector<std::uint64_t> changed;  ///< arrays it changed, sorted
  std::vector<std::uint64_t> buffers;  ///< arrays it wrote through Buffers
  std::int64_t order = 0;              ///< its recorded order (record mode), 0 = none
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

  /// Record mode: the order id of plan `plan_serial`, 0 when not written yet.
  std::int64_t order_of(std::uint64_t plan_serial) const;
  /// Record mode, collective: writes `indices` (flattened, `dims` per iteration) as
  /// a new order of plan `plan_serial` (rank 0 writes) and returns its id.
  std::int64_t write_order(std::uint64_t plan_serial, std::span<const std::int64_t> indices, int dims);

  /// Replay modes: the record of call `call`, which must be at `site`.
  const RecordedCall& expect(std::int64_t call, const std::string& site) const;
  /// Serial replay: the recorded order of `c`, flattened (`dims` per iteration).
  std::vector<std::int64_t> order(const RecordedCall& c, int dims) const;

  /// After a call, collective: record mode writes its line; replay modes compare the
  /// fingerprints of the arrays it changed with the record.
  void after_call(std::int64_t call, const std::string& site, const CallOutcome& outcome);

 private:
  Runtime& rt_;
  Mode mode_ = Mode::off;
  std::string dir_;
  std::FILE* out_ = nullptr;  ///< record.txt (rank 0, record mode)
  std::map<std::uint64_t, std::int64_t> orders_;  ///< plan serial -> order id
  std::vector<RecordedCall> calls_;               ///< replay: the record
};

}  // namespace strata::recovery
