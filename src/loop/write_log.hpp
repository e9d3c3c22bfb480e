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

#include <cstddef>
#include <cstring>
#include <span>

#include "runtime/chunked_log.hpp"

namespace strata::loop {

class alignas(64) WriteLog {
 public:
  /// Saves `old` as the value of the unit at `place` (OwnershipTable numbering).
  void save(std::size_t place, std::span<const std::byte> old) {
    std::byte* at = log_.add(place, old.size());
    if (!old.empty()) std::memcpy(at, old.data(), old.size());
    bytes_ += old.size();
  }
  /// Calls f(place, old bytes) for every saved unit, in saving order; f returns the
  /// unit's size in bytes, as it was saved (the log keeps no sizes).
  template <class F>
  void for_each(F&& f) const {
    log_.for_each([&](std::uint64_t place, const std::byte* old) { return f(static_cast<std::size_t>(place), old); });
  }
  /// The bytes of the saved units (not counting their places).
  std::size_t bytes() const { return bytes_; }
  /// Forgets everything and gives the memory back (a log lives for one run).
  void clear() {
    log_.clear();
    bytes_ = 0;
  }

 private:
  strata::detail::ChunkedLog log_;  ///< per unit its place, then its old bytes
  std::size_t bytes_ = 0;
};

}  // namespace strata::loop
