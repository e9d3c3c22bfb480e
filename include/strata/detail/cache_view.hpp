// CacheView: a relaxed array's cache as the rank's loop threads read it during a run.
//
// Through the observer, a read of a relaxed array goes accessor -> observer (virtual)
// -> table (virtual) -> cache; on a sparse model every non-zero pays that, and it
// keeps the processor from overlapping the loads of one sample. So while a run has no
// checker to show accesses to, the table publishes its cache on the array, and the
// accessor resolves a cached unit itself: a bounds test, a bit (or slot) lookup and a
// load. Units outside the cache still take the observer's path (the dynamic read).
#pragma once

#include <atomic>
#include <cstdint>

#include "strata/detail/worker.hpp"

namespace strata::detail {

/// Cached reads are counted per thread in these slots, one per published view (its
/// `counter`), and handed to the tables when the thread's share of a run step ends
/// (RelaxedRun::count_cache_reads): an increment at a fixed thread-local address is
/// the cheapest count there is, and a sparse model's every non-zero pays it. A loop
/// over more relaxed arrays than there are slots publishes the first ones only; the
/// others are read through the observer.
inline constexpr int kCountedViews = 16;
inline thread_local std::int64_t t_cache_reads[kCountedViews] = {};

/// A view of the cache block. Units are elements of a 1-D array, rows along the last
/// dimension otherwise; the block is either laid out like the array (`held` says
/// which units it holds, or, when null and `slot_of` is null too, it holds them all)
/// or compact (`slot_of` gives each unit's slot, or -1).
struct CacheView {
  void* block = nullptr;
  const std::uint64_t* held = nullptr;   // array-shaped layout holding some units, else nullptr
  const std::int32_t* slot_of = nullptr;  // compact layout, else nullptr
  std::int64_t units = 0, unit_len = 1;
  int counter = 0;  // its slot of t_cache_reads
  // A rank's replica of a Hybrid table on several ranks (src/ps/table_replica.cpp):
  // per unit, set to 1 by every fold into it, so a clock looks at the units written
  // since the last one only. nullptr otherwise.
  std::uint8_t* written = nullptr;
  // A replica per worker thread (Consistency::replica_per_thread): worker t reads and
  // folds into blocks[t] and marks its folds in written_by[t]; blocks[0] is `block` and
  // written_by[0] `written`. nullptr otherwise: every thread shares `block`.
  void* const* blocks = nullptr;
  std::uint8_t* const* written_by = nullptr;

  /// The block worker `worker` reads, and the marks its folds set.
  [[gnu::always_inline]] void* block_of(int worker) const { return blocks ? blocks[worker] : block; }
  [[gnu::always_inline]] std::uint8_t* written_of(int worker) const {
    return written_by ? written_by[worker] : written;
  }

  /// Notes a fold into unit `u` (a replica's; plain byte stores: every writer stores 1).
  [[gnu::always_inline]] static void note_written(std::uint8_t* written, std::uint64_t u) {
    if (written) std::atomic_ref<std::uint8_t>(written[u]).store(1, std::memory_order_relaxed);
  }

  /// The first element of cached unit `u`, or nullptr when the cache lacks it.
  template <class T>
  [[gnu::always_inline]] T* unit(std::int64_t u) const {
    if (static_cast<std::uint64_t>(u) >= static_cast<std::uint64_t>(units)) return nullptr;
    const auto at = static_cast<std::size_t>(u);
    std::int64_t slot;
    if (held) {
      if (!(held[at / 64] >> (at % 64) & 1)) return nullptr;
      slot = u;
    } else if (slot_of) {
      slot = slot_of[at];
      if (slot < 0) return nullptr;
    } else {
      slot = u;  // every unit
    }
    return static_cast<T*>(block_of(t_worker)) + slot * unit_len;
  }
};

}  // namespace strata::detail
