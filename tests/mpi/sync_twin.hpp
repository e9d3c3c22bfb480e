// The serial twins of sync_for's tests share its split of the work: workers are
// (rank, thread) pairs, rank-major, and a rank's samples (those of its part of the
// space) are split among its threads in contiguous runs, thread t taking
// [n t / T, n (t + 1) / T). The twins must match that rule to the bit.
#pragma once

#include <cstdint>
#include <vector>

#include "strata/dist_array.hpp"
#include "test_runtime.hpp"

namespace strata::testing {

/// Per worker, its samples in order, for a space of `points` samples and `per_rank`
/// workers a rank.
inline std::vector<std::vector<std::int64_t>> sync_work_of(const DistArray<std::int64_t, 1>& space,
                                                            std::int64_t points, int per_rank) {
  std::vector<std::vector<std::int64_t>> of_rank(static_cast<std::size_t>(rt().size()));
  for (std::int64_t i = 0; i < points; ++i)
    of_rank[static_cast<std::size_t>(space.distribution_of().owner(Index<1>{i}.data()))].push_back(i);
  std::vector<std::vector<std::int64_t>> out;
  for (const auto& mine : of_rank)
    for (int t = 0; t < per_rank; ++t) {
      const auto n = static_cast<std::int64_t>(mine.size());
      out.emplace_back(mine.begin() + n * t / per_rank, mine.begin() + n * (t + 1) / per_rank);
    }
  return out;
}

}  // namespace strata::testing
