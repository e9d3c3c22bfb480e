// Checked execution: every access a loop body makes is compared with the plan. An
// access at a site the reconnaissance pass never saw, or to an element outside the
// running worker's partition, stops the run with an error naming the site, the
// array and the subscript. Irregular accesses never run silently in parallel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strata/loop/plan.hpp"

namespace strata::loop {

class CheckedObserver final : public detail::AccessObserver {
 public:
  explicit CheckedObserver(const Plan& plan) : plan_(plan) {}

  /// The partition the current thread works in: rows [space_lo, space_hi) of the space
  /// dimension and, for 2-D plans, [time_lo, time_hi) of the time dimension.
  void set_bounds(std::int64_t space_lo, std::int64_t space_hi, std::int64_t time_lo, std::int64_t time_hi) {
    space_lo_ = space_lo, space_hi_ = space_hi, time_lo_ = time_lo, time_hi_ = time_hi;
  }

  void* on_access(detail::ArrayBase& array, const std::source_location& where, detail::AccessMode mode,
                  std::span<const std::int64_t> index, bool whole_last, void* real, std::size_t bytes) override;

 private:
  // Whether (array, call site, mode) is one of the plan's sites; the answer is
  // cached per call site so the common case formats no strings.
  bool planned_site(const detail::ArrayBase& array, const std::source_location& where, detail::AccessMode mode);

  struct KnownSite {
    std::uint64_t array_id;
    const char* file;
    std::uint32_t line, column;
    detail::AccessMode mode;
  };
  const Plan& plan_;
  std::vector<KnownSite> known_;
  std::int64_t space_lo_ = 0, space_hi_ = 0, time_lo_ = 0, time_hi_ = 0;
};

}  // namespace strata::loop
