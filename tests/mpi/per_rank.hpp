// What each rank did in a loop call, from the call's schedule rows (collective).
#pragma once

#include <cstdint>
#include <vector>

#include "strata/loop/parallel_for.hpp"
#include "test_runtime.hpp"

namespace strata::testing {

/// The iterations each rank's workers ran in the report's call.
template <class Elem, std::size_t M>
std::vector<std::int64_t> iterations_per_rank(const DistArray<Elem, M>& space,
                                              const LoopReport& report) {
  const auto rows = loop::detail::schedule_rows(loop::detail::space_view(space), report, 0);
  const std::size_t width = loop::detail::kScheduleFields + M;
  std::vector<std::int64_t> count(static_cast<std::size_t>(rt().size()), 0);
  for (std::size_t k = 0; k < rows.size(); k += width)
    ++count[static_cast<std::size_t>(rows[k + 1] / report.threads)];
  return count;
}

}  // namespace strata::testing
