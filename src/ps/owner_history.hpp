// An owner's memory of its last few clocks (src/ps/ps_internal.hpp). Under SSP with
// staleness s a reader's cache holds one consistent clock m of the array, which may
// be up to s clocks older than what its owners have applied since. A read the cache
// lacks asks the owner, and must be answered as of the same clock m, or what the
// reader sees would depend on when its request arrived. So while an owner applies
// clock c, it keeps the value each unit had before clock c first changed it; rolling
// a unit back over the clocks after m gives its value as of m.
#pragma once

#include <cstdint>
#include <cstring>
#include <deque>
#include <unordered_map>
#include <vector>

namespace strata::ps {

template <class T>
class OwnerHistory {
 public:
  /// Units are `unit_len` values long.
  explicit OwnerHistory(std::int64_t unit_len = 1) : unit_len_(unit_len) {}

  void clear() { clocks_.clear(); }
  /// The owner starts applying clock `clock` (one more than the newest kept).
  void begin_clock(std::int64_t clock) { clocks_.push_back(Clock{clock, {}, {}, {}}); }
  /// Local unit `unit`, whose values are at `row`, is about to change for the first
  /// time in the current clock.
  void note(std::int64_t unit, const T* row) {
    Clock& c = clocks_.back();
    c.units.push_back(unit);
    c.rows.insert(c.rows.end(), row, row + unit_len_);
  }
  /// Forgets the clocks before `clock`: no reader can ask for a value older than that.
  void forget_before(std::int64_t clock) {
    while (!clocks_.empty() && clocks_.front().clock < clock) clocks_.pop_front();
  }
  /// The oldest clock whose changes are kept (one past the newest when none are).
  std::int64_t oldest(std::int64_t otherwise) const { return clocks_.empty() ? otherwise : clocks_.front().clock; }

  /// Turns `row`, the current values of local unit `unit`, into its values as of
  /// clock `version` (every clock up to `version` applied, none after).
  void roll_back(std::int64_t unit, std::int64_t version, T* row) {
    for (auto c = clocks_.rbegin(); c != clocks_.rend() && c->clock > version; ++c) {
      if (c->at.empty() && !c->units.empty()) {  // indexed on first use: most clocks are never asked
        c->at.reserve(c->units.size());
        for (std::size_t k = 0; k < c->units.size(); ++k) c->at.emplace(c->units[k], k);
      }
      const auto it = c->at.find(unit);
      if (it != c->at.end())
        std::memcpy(row, c->rows.data() + it->second * static_cast<std::size_t>(unit_len_),
                    static_cast<std::size_t>(unit_len_) * sizeof(T));
    }
  }

 private:
  struct Clock {
    std::int64_t clock;
    std::vector<std::int64_t> units;                    // in the order first changed
    std::vector<T> rows;                                // their values before the clock
    std::unordered_map<std::int64_t, std::size_t> at;  // unit -> its place in units
  };
  std::int64_t unit_len_;
  std::deque<Clock> clocks_;  // consecutive clocks, oldest first
};

}  // namespace strata::ps
