// The Buffers of one loop call in a single-process replay (execution_record.hpp):
// this process plays every worker of the recorded run, so each Buffer keeps a delta
// set per recorded worker, and the deltas are applied clock by clock as the recorded
// run's owners applied them. With this, a replayed call's arrays match the recorded
// run's bit for bit even when its Buffers sum floating-point deltas.
#pragma once

#include <cstdint>
#include <vector>

#include "strata/recovery/execution_record.hpp"

namespace strata::detail {
class BufferBase;
}

namespace strata::recovery {

class ReplayedDeltas {
 public:
  /// For call `call`, whose schedule has `clocks` clocks, recorded on `ranks` x
  /// `threads`. Throws ReplayError when a relaxed array of the call read values whose
  /// staleness depended on timing, or a Buffer it names does not exist.
  ReplayedDeltas(const RecordedCall& call, std::int64_t clocks, int ranks, int threads);
  ~ReplayedDeltas();
  ReplayedDeltas(const ReplayedDeltas&) = delete;
  ReplayedDeltas& operator=(const ReplayedDeltas&) = delete;

  /// Before an iteration of clock `clock`: applies the relaxed arrays' earlier clocks.
  void advance_to(std::int64_t clock);
  /// Once, after the last iteration: the remaining clocks, then each Buffer's
  /// end-of-call flush, in the recorded order.
  void finish();

 private:
  struct Relaxed {
    detail::BufferBase* buffer;
    std::int64_t first_round;
    bool written;
  };
  std::vector<detail::BufferBase*> buffers_;  ///< written through, in flush order
  std::vector<Relaxed> relaxed_;
  std::int64_t clocks_ = 1, applied_ = 0;
  int ranks_ = 1;
};

}  // namespace strata::recovery
