// In-place checks of a verifying run (detail::WindowView).
//
// The first run of a plan built from a sampled reconnaissance checks every access
// before it happens (loop/checked.hpp): one that the plan does not cover stops the
// run, which is undone and planned again. In a 1-D or unordered 2-D plan a worker
// owns some rows outright while it runs: the rows of its space part in the arrays
// that follow the space dimension, and those of its current time block in the arrays
// that travel with the time dimension. No other worker touches them then (the
// analysis chose a partitioned plan because no planned access of another worker
// reaches a written array's rows outside that worker's own, and the rest of the
// accesses are still checked), so an access there cannot conflict with anything,
// whatever its subscript: the accessors
// let it through in place, and only the other accesses (another worker's rows, a
// write to an array the plan reads only, an array the plan never saw) go to the
// observer's checks. Writes pass only in arrays the plan writes, which are the ones
// the run's snapshot can put back.
//
// Rule for a new placement: give it a window only if every worker's window is
// disjoint from every other's at every moment of the run.
#pragma once

#include <cstdint>
#include <vector>

#include "loop/plan.hpp"

namespace strata::loop {

class VerifyWindows {
 public:
  /// Windows for `plan`'s arrays on this rank's `threads` workers (rank `rank` of the
  /// plan's layout); none when the plan is neither 1-D nor unordered 2-D.
  VerifyWindows(const Plan& plan, int rank, int threads);
  ~VerifyWindows();
  VerifyWindows(const VerifyWindows&) = delete;
  VerifyWindows& operator=(const VerifyWindows&) = delete;

  /// Thread `th` now runs time block `block` (2-D plans; called by that thread).
  void enter_block(int th, int block) {
    if (time_.empty() || block < 0) return;  // no windows for this plan's strategy
    time_[2 * static_cast<std::size_t>(th)] = plan_.time_bounds[static_cast<std::size_t>(block)];
    time_[2 * static_cast<std::size_t>(th) + 1] = plan_.time_bounds[static_cast<std::size_t>(block) + 1];
  }

 private:
  const Plan& plan_;
  std::vector<std::int64_t> space_, time_;  // per thread: lo, hi (time: empty until a block starts)
  std::vector<strata::detail::WindowView> views_;
  std::vector<strata::detail::ArrayBase*> arrays_;
};

}  // namespace strata::loop
