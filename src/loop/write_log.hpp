// The old values of what a re-validating run writes, saved at each unit's first write
// so that a refused run can be undone without a copy of every array it may write.
//
// A run claims a unit (loop/ownership.hpp) before it touches it, and only the first
// write claim of a unit in a run reaches the claims' slow path: that is where the
// unit's bytes are saved, before the access that writes them returns. A unit is saved
// at most once a run (later writes find it claimed), so a log holds each written unit
// once and the order of restoring does not matter. One log per worker thread, each
// on its own cache lines, appended to by its thread only.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "strata/detail/free_now.hpp"
#include "strata/error.hpp"

namespace strata::loop {

class alignas(64) WriteLog {
 public:
  /// Saves `old` as the value of the unit at `place` (OwnershipTable numbering).
  void save(std::size_t place, std::span<const std::byte> old) {
    const std::size_t need = sizeof place + old.size();
    if (chunks_.empty() || chunks_.back().used + need > chunks_.back().capacity) {
      const std::size_t capacity = std::max(kChunkBytes, need);
      chunks_.push_back({std::make_unique_for_overwrite<std::byte[]>(capacity), 0, capacity});
    }
    Chunk& c = chunks_.back();
    std::memcpy(c.data.get() + c.used, &place, sizeof place);
    if (!old.empty()) std::memcpy(c.data.get() + c.used + sizeof place, old.data(), old.size());
    c.used += need;
    bytes_ += old.size();
  }
  /// Calls f(place, old bytes) for every saved unit, in saving order; f returns the
  /// unit's size in bytes, as it was saved (the log keeps no sizes).
  template <class F>
  void for_each(F&& f) const {
    for (const Chunk& c : chunks_)
      for (std::size_t at = 0; at < c.used;) {
        std::size_t place;
        std::memcpy(&place, c.data.get() + at, sizeof place);
        at += sizeof place;
        at += f(place, c.data.get() + at);
        STRATA_CHECK(at <= c.used, "a write log read back with other unit sizes than it was saved with");
      }
  }
  /// The bytes of the saved units (not counting their places).
  std::size_t bytes() const { return bytes_; }
  /// Forgets everything and gives the memory back (a log lives for one run).
  void clear() {
    strata::detail::free_now(chunks_);
    bytes_ = 0;
  }

 private:
  // Entries (the place, then the unit's bytes) go into chunks allocated as the log
  // grows, never moved: a log holding N bytes peaks near N, where a vector doubling its
  // capacity would hold up to 3N while it copied.
  static constexpr std::size_t kChunkBytes = std::size_t{1} << 20;
  struct Chunk {
    std::unique_ptr<std::byte[]> data;
    std::size_t used = 0, capacity = 0;
  };
  std::vector<Chunk> chunks_;
  std::size_t bytes_ = 0;
};

}  // namespace strata::loop
