// Histograms of a DistArray's stored elements along one dimension, on the array's
// keys or box (no element type): DistArray::histogram and the loop planner share them.
#pragma once

#include <cstdint>
#include <vector>

#include "strata/comm.hpp"
#include "strata/detail/key_column.hpp"
#include "strata/partition.hpp"
#include "strata/thread_pool.hpp"

namespace strata::detail {

/// Collective: how many of this rank's sparse `keys` lie at each index of dimension
/// `dim`, summed over ranks; with `bins` > 0 the counts are grouped into that many
/// equal-width bins. With a `pool`, its threads count shares of the keys (the
/// caller must not be one of its tasks).
std::vector<std::int64_t> histogram_of_keys(Comm& comm, const KeyColumn& keys, const std::vector<std::int64_t>& shape,
                                            int dim, std::int64_t bins, ThreadPool* pool = nullptr);
/// The same for a dense array whose rank holds `box`.
std::vector<std::int64_t> histogram_of_box(Comm& comm, const std::vector<IndexSet>& box,
                                           const std::vector<std::int64_t>& shape, int dim, std::int64_t bins);

}  // namespace strata::detail
