// Undoing a loop run. The first run of a plan built from a sampled reconnaissance is
// speculative: if it meets an access the plan does not cover, everything it changed
// is put back and the loop is planned again. What a body may change is the arrays it
// writes, the iteration space's elements, and accumulators; RunSnapshot saves them.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "strata/detail/array_base.hpp"
#include "strata/thread_pool.hpp"

namespace strata::detail {

/// State outside DistArrays that loop bodies change (accumulators). Instances enrol
/// in a per-process list so that a snapshot can save and restore all of them.
class UndoableState {
 public:
  virtual void save_state() = 0;
  virtual void restore_state() = 0;

 protected:
  UndoableState();
  UndoableState(const UndoableState&);
  UndoableState& operator=(const UndoableState&) { return *this; }
  ~UndoableState();

 private:
  friend class RunSnapshot;
  static void save_all();
  static void restore_all();
};

/// Copies of everything a loop run may change, taken before it.
class RunSnapshot {
 public:
  /// Saves the local values of `arrays` (nullptr entries are skipped) and every
  /// UndoableState. With a `pool`, its threads copy shares of the values (the caller
  /// must not be one of its tasks).
  explicit RunSnapshot(const std::vector<ArrayBase*>& arrays, ThreadPool* pool = nullptr);
  /// Puts every saved value back. The arrays must have their structure of the time
  /// of the snapshot (a run changes values only).
  void restore();
  std::size_t bytes() const;

 private:
  struct Saved {
    ArrayBase* array;
    std::unique_ptr<std::byte[]> values;  // not zeroed first: every byte is copied
    std::size_t size;
  };
  std::vector<Saved> saved_;
  ThreadPool* pool_;
};

}  // namespace strata::detail
