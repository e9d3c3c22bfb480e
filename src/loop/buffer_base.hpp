// The type-erased face of a Buffer (strata/buffer.hpp), kept apart so loop analysis
// can ask whether an array is written through a Buffer, or relaxed, without the
// Buffer template.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "loop/relaxed_base.hpp"

namespace strata::detail {

struct CheckpointSnapshot;  // strata/io/checkpoint_format.hpp

/// The type-erased face of a Buffer: parallel_for flushes the buffers of the arrays
/// a loop wrote through one. One buffer per array.
class BufferBase {
 public:
  virtual ~BufferBase();
  /// Collective: sends every pending delta to its owner and applies it there.
  virtual void flush() = 0;
  /// The parameter-server table of a Buffer given a Consistency, else nullptr.
  virtual RelaxedBase* relaxed() { return nullptr; }
  /// Whether the apply function keeps per-element state at the owners (AdaGrad and
  /// AdaRevision sums), which automatic checkpoints must save with the array.
  virtual bool has_owner_state() const { return false; }
  /// Local: a copy of this rank's owner state with its checkpoint manifest, into
  /// `storage` (only called when has_owner_state()).
  virtual CheckpointSnapshot owner_state_snapshot(std::vector<std::byte> storage);
  /// Collective: reads and verifies owner state saved by save_owner_state; the
  /// returned step puts it in place, with `rounds` apply rounds done.
  virtual std::function<void()> stage_owner_state(const std::filesystem::path& /*dir*/, std::int64_t /*rounds*/) {
    return [] {};
  }
  /// Apply rounds so far (adaptive rules keep per-round state).
  virtual std::int64_t rounds() const { return 0; }

  // Single-process replay (recovery/replayed_deltas.hpp): one process plays
  // every worker of the recorded run, so the Buffer keeps a delta set per recorded
  // worker and applies them as the recorded run's ranks and owners did.
  /// Keeps `workers` delta sets; a write goes to the one t_delta_set names.
  virtual void replay_begin(int workers) = 0;
  /// Readies the owners' apply state and reserves `n` apply rounds; the first's number.
  virtual std::int64_t replay_reserve(std::int64_t n) = 0;
  /// Applies the sets as `ranks` ranks of equally many threads would have: per rank
  /// its threads' sums added in thread order, then ranks in rank order, as apply round
  /// `round`. Leaves every set empty.
  virtual void replay_apply(int ranks, std::int64_t round) = 0;
  /// A relaxed array with managed communication, whose owners applied early deltas
  /// as they arrived: checks that the sets' sums equal per element, to within
  /// rounding, the deltas the owners applied (`applies`, per recorded rank, entries of
  /// int64 key, int64 clock and the delta, as ps/timing_log.hpp logs them), empties
  /// the sets, then applies the logged deltas in the logged order, each in apply
  /// round first_round + its clock. `call` names the call in a ReplayError.
  virtual void replay_apply_logged(std::span<const std::span<const std::byte>> applies, std::int64_t first_round,
                                   const std::string& call) = 0;
  /// Back to one delta set per thread of this process.
  virtual void replay_end() = 0;
  /// The buffer over the array with this id on this rank, or nullptr.
  static BufferBase* find_buffer(std::uint64_t array_id);
  /// The table of the array with this id when it is relaxed, or nullptr.
  static RelaxedBase* relaxed_table(std::uint64_t array_id) {
    BufferBase* b = find_buffer(array_id);
    return b ? b->relaxed() : nullptr;
  }

 protected:
  explicit BufferBase(std::uint64_t array_id);
  BufferBase(const BufferBase&) = delete;
  BufferBase& operator=(const BufferBase&) = delete;

 private:
  std::uint64_t array_id_;
};

}  // namespace strata::detail
