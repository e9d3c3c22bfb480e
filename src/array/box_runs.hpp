// The intersection of two boxes walked as runs of consecutive elements, for data
// movement on bytes: a run is one memcpy in each box's row-major storage.
#pragma once

#include <cstdint>
#include <vector>

#include "strata/partition.hpp"

namespace strata::detail {

class BoxRuns {
 public:
  /// The elements common to boxes `a` and `b` (one IndexSet per dimension).
  BoxRuns(const std::vector<IndexSet>& a, const std::vector<IndexSet>& b);

  bool empty() const { return empty_; }
  /// Number of common elements.
  std::int64_t volume() const { return volume_; }

  /// f(position in a, position in b, count) for every run of `count` common elements
  /// consecutive in both boxes, in row-major order of the common elements (so a
  /// sender and a receiver that both walk the runs agree on the order).
  template <class F>
  void for_each_run(F&& f) const {
    if (empty_) return;
    const std::size_t lead = lead_a_.size();
    std::vector<std::size_t> at(lead, 0);
    for (;;) {
      std::int64_t off_a = 0, off_b = 0;
      for (std::size_t d = 0; d < lead; ++d) {
        off_a += lead_a_[d][at[d]];
        off_b += lead_b_[d][at[d]];
      }
      for (const Run& r : last_) f(off_a + r.a, off_b + r.b, r.count);
      std::size_t d = lead;
      for (;;) {
        if (d == 0) return;
        --d;
        if (++at[d] < lead_a_[d].size()) break;
        at[d] = 0;
      }
    }
  }

 private:
  struct Run {
    std::int64_t a, b, count;
  };
  bool empty_ = false;
  std::int64_t volume_ = 0;
  // Per leading dimension (all but the last): each common index's offset in a and b
  // (position times the dimension's stride).
  std::vector<std::vector<std::int64_t>> lead_a_, lead_b_;
  std::vector<Run> last_;  // the last dimension, as runs
};

}  // namespace strata::detail
