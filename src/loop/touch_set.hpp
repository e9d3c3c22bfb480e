// A set of (key, owner) pairs, each with a flag that is the OR of the flags it was
// added with: who touched what, and whether any of those touches wrote. Planning
// uses it to shrink a rank's recorded accesses (millions, mostly repeats) to the
// distinct touches it sends to other ranks (groups_across_ranks.cpp: an element and
// the component touching it; spread.cpp: a unit and the rank hosting the iteration).
//
// Open addressing with linear probing: a probe an access, where sorting every access
// would pass over them log(accesses) times.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "strata/random.hpp"

namespace strata::loop::detail {

/// One distinct touch: 16 bytes, sent between ranks as they are.
struct Touch {
  std::uint64_t key;
  std::uint64_t owner_and_flag;  ///< owner << 1 | flag
  std::uint64_t owner() const { return owner_and_flag >> 1; }
  bool flag() const { return owner_and_flag & 1; }
  bool operator<(const Touch& o) const { return key != o.key ? key < o.key : owner_and_flag < o.owner_and_flag; }
};

class TouchSet {
 public:
  /// Owners must be below 2^63.
  void add(std::uint64_t key, std::uint64_t owner, bool flag) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    Touch& t = slots_[find(key, owner)];
    if (t.owner_and_flag == kEmpty) {
      t = {key, owner << 1};
      ++size_;
    }
    t.owner_and_flag |= flag ? 1u : 0u;
  }
  /// Calls f(touch) for every touch held, in no particular order.
  template <class F>
  void for_each(F&& f) const {
    for (const Touch& t : slots_)
      if (t.owner_and_flag != kEmpty) f(t);
  }

 private:
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
  std::size_t find(std::uint64_t key, std::uint64_t owner) const {
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = static_cast<std::size_t>(mix64(key ^ mix64(owner))) & mask;
    while (slots_[i].owner_and_flag != kEmpty && (slots_[i].key != key || slots_[i].owner() != owner))
      i = (i + 1) & mask;
    return i;
  }
  void grow() {
    std::vector<Touch> old = std::move(slots_);
    slots_.assign(std::max<std::size_t>(1024, 2 * old.size()), Touch{0, kEmpty});
    for (const Touch& t : old)
      if (t.owner_and_flag != kEmpty) slots_[find(t.key, t.owner())] = t;
  }

  std::vector<Touch> slots_;  ///< a power of two, at most half full
  std::size_t size_ = 0;
};

}  // namespace strata::loop::detail
