// The parameter server's engine behind a narrow waist (DESIGN.md §5, docs/buffers.md).
//
// A Buffer's owner side, a relaxed array's table (owner side, reader side, message
// protocol, clocks, managed outbox) and the path that carries deltas to their owners
// are compiled once, in src/ps/, and work on bytes and an element size. What they need
// of the element type and the apply function is this small table of operations,
// implemented once per Buffer type by the typed front (detail/ps_typed_ops.hpp): drain
// the per-thread delta sets in runs, apply a run of deltas at the owner, the owner
// state's checkpoints, and the managed outbox's typed set. Every operation works on a
// run or a block of elements, never on one: only the per-write add (Buffer::add,
// BufferWriter) is per element, and it stays inline and typed in the front.
//
// The engine's, not the API: Buffer's inline code needs these declarations, which is
// the only reason they are under include/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "strata/comm.hpp"
#include "strata/detail/cache_view.hpp"
#include "strata/partition.hpp"
#include "strata/relaxed.hpp"

namespace strata {
class Runtime;
namespace detail {
class ArrayBase;
struct CheckpointSnapshot;  // strata/io/checkpoint_format.hpp
}  // namespace detail
}  // namespace strata

namespace strata::ps {

/// A run of drained deltas: element keys (row-major) and their summed deltas, `n` of
/// each, the deltas packed at the element size.
struct DeltaRun {
  const std::int64_t* keys;
  const std::byte* deltas;
  std::size_t n;
};

/// Receives drained deltas, one run at a time (the engine's side of a drain).
class DeltaSink {
 public:
  virtual void take(const DeltaRun& run) = 0;

 protected:
  ~DeltaSink() = default;
};

/// Managed communication's set of deltas: the rank's deltas that loop threads handed
/// to the outbox between clocks. It is typed, so the typed front holds it; the engine's
/// outbox (src/ps/managed_outbox.hpp) reaches it through these operations, on keys and
/// doubles. The outbox calls them under its own lock.
class OutboxSet {
 public:
  /// Moves loop thread `thread`'s pending deltas into the set.
  virtual void take_pending(int thread) = 0;
  /// Moves what the set holds into the first pending set, so that the end-of-clock
  /// flush drains it with the rest.
  virtual void return_to_pending() = 0;
  virtual bool empty() const = 0;
  /// f(k, |delta|) for every element k held.
  virtual void each_magnitude(const std::function<void(std::int64_t, double)>& f) const = 0;
  /// Takes the elements `keys` (each held, each once) out of the set, as (key, delta)
  /// records of ElementOps::record_size bytes, in the order of `keys`.
  virtual Bytes extract_records(const std::vector<std::int64_t>& keys) = 0;

 protected:
  ~OutboxSet() = default;
};

/// The per-element-type operations of one Buffer.
class ElementOps {
 public:
  ElementOps(std::size_t element_size, std::size_t record_size, bool arithmetic, bool integral)
      : element_size(element_size), record_size(record_size), arithmetic(arithmetic), integral(integral) {}
  virtual ~ElementOps() = default;
  ElementOps(const ElementOps&) = delete;
  ElementOps& operator=(const ElementOps&) = delete;

  const std::size_t element_size;
  /// One (int64 key, delta) record as messages carry it, padded as the struct is.
  const std::size_t record_size;
  /// Whether deltas are numbers (managed communication ranks them; Hybrid folds them atomically).
  const bool arithmetic;
  /// Whether they are integers (sums in another order are then exact).
  const bool integral;

  // Set by a relaxed table, read by every add: Hybrid (and read-my-writes) folds each
  // delta into the rank's cache (`cache`) as it is written, during a run. On one rank
  // whose cache is the array's own values (`fold_only`), the fold is the whole add:
  // the delta is applied in place at once and kept nowhere else (apply::sum() makes
  // that what the clock would do), so the run touches the memory a serial loop does.
  bool folding = false;
  bool fold_only = false;
  const detail::CacheView* cache = nullptr;

  // ---- the pending delta sets: one per thread, or per recorded worker in a replay ----
  virtual std::size_t set_count() const = 0;
  /// `n` empty sets (a replay keeps one per recorded worker).
  virtual void reset_sets(std::size_t n) = 0;
  /// Sums the sets [from, from + count) per element, in set order (the same bits on
  /// every run), gives the sums to `sink` in runs, and empties the sets. Part `part`
  /// of `parts` drains its own range of elements, so parts may run at once.
  virtual void drain(std::size_t from, std::size_t count, int part, int parts, DeltaSink& sink) = 0;

  // ---- the owner ----
  /// This rank's local box of the array (its dense storage is laid out over it).
  virtual const std::vector<IndexSet>& local_box() const = 0;
  /// Readies the owners' apply state (it follows the array's partition).
  virtual void prepare_apply() = 0;
  /// Folds `n` deltas into this rank's local elements at `offsets` with the apply
  /// function, as apply round `round`; delta i sits at deltas + i * stride.
  virtual void apply(const std::int64_t* offsets, const std::byte* deltas, std::size_t stride, std::size_t n,
                     std::int64_t round) = 0;
  virtual bool has_state() const = 0;
  virtual detail::CheckpointSnapshot state_snapshot(Bytes storage) = 0;
  /// Collective: reads and verifies saved owner state; the step puts it in place.
  virtual std::function<void()> stage_state(const std::filesystem::path& dir) = 0;
  /// Adds the delta at `delta` into the element at `to` (read-my-writes: the rank's
  /// own deltas folded back into its cache; both may be unaligned).
  virtual void add_bytes(std::byte* to, const std::byte* delta) const = 0;
  /// Arithmetic elements: `n` values at `values` (stride apart) as doubles.
  virtual void to_doubles(const std::byte* values, std::size_t stride, std::size_t n, double* out) const = 0;
  /// Whether a change of value is a delta (strata::subtractable_v, aligned to at most 8
  /// bytes): a rank's replica of a Hybrid table sends `now - before` (table_replica.cpp).
  virtual bool subtracts() const = 0;
  /// out[j] = now[j] - before[j] for the `n` elements (subtracts() only; difference_of).
  virtual void difference(std::byte* out, const std::byte* now, const std::byte* before, std::size_t n) const = 0;
  /// to[j] += deltas[j] for the `n` elements, as a row of adds sums them (add_row_into).
  virtual void add_run(std::byte* to, const std::byte* deltas, std::size_t n) const = 0;

  // ---- managed communication (src/ps/managed_outbox.hpp) ----
  /// Arithmetic elements: a new, empty outbox set, valid as long as these operations.
  virtual OutboxSet& open_outbox() = 0;
};

/// A Buffer's engine (src/ps): registered as the array's detail::BufferBase, it
/// flushes, replays and checkpoints the Buffer's owner side, and runs the relaxed
/// table of a Buffer given a Consistency.
class BufferEngine;
struct BufferEngineDelete {
  void operator()(BufferEngine* e) const;
};
using BufferEngineHandle = std::unique_ptr<BufferEngine, BufferEngineDelete>;

/// `relaxed`: the consistency of a relaxed array, or none for a plain Buffer.
BufferEngineHandle make_buffer_engine(detail::ArrayBase& target, Runtime& rt, ElementOps& ops,
                                      const std::optional<Consistency>& relaxed);
/// Collective: every rank's pending deltas go to their owners and are applied there.
void flush(BufferEngine& engine);
/// What the parameter server did for this array (zeros unless relaxed).
RelaxedStats stats(const BufferEngine& engine);

}  // namespace strata::ps
