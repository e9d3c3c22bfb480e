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
#include <vector>

#include "strata/detail/free_now.hpp"

namespace strata::loop {

class alignas(64) WriteLog {
 public:
  /// Saves `old` as the value of the unit at `place` (OwnershipTable numbering).
  void save(std::size_t place, std::span<const std::byte> old) {
    places_.push_back(place);
    old_.insert(old_.end(), old.begin(), old.end());
  }
  /// The saved units' places, in saving order, and their bytes back to back.
  const std::vector<std::size_t>& places() const { return places_; }
  const std::byte* saved() const { return old_.data(); }
  std::size_t bytes() const { return old_.size(); }
  /// Forgets everything and gives the memory back (a log lives for one run).
  void clear() {
    strata::detail::free_now(places_);
    strata::detail::free_now(old_);
  }

 private:
  std::vector<std::size_t> places_;
  std::vector<std::byte> old_;  ///< the units' bytes back to back, in places_ order
};

}  // namespace strata::loop
