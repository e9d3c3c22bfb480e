// How earlier plans split arrays among workers, so that loops sharing an array agree.
//
// A plan that keeps an array aligned with its space dimension splits that array's
// dimension among the workers (and, across ranks, partitions the array that way).
// Two loops over different spaces that share an array -- mf's training loop over
// the ratings and its evaluation loop over held-out ratings, both aligned with the
// user factors W -- would each balance on their own histogram, move W to their own
// split on every call and invalidate each other's plans. So the split each loop that
// writes an aligned array chooses is remembered per array, and loops that write
// nothing may adopt it (lay_out in src/loop/layout.cpp).
//
// A writing loop also remembers how it split its iteration space, so that a later
// loop over the same space prefers that dimension to one that would move the space
// there and back (analyse, src/loop/plan.cpp).
//
// Splits are kept per worker, not per rank, so 1 rank x 2 threads and 2 ranks x 1
// thread choose the same bounds. The memory is journaled with the accumulators
// (strata/detail/journaled_state.hpp): a run resumed from a checkpoint plans its
// loops with the splits the uninterrupted run had.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace strata::loop::detail {

/// The worker bounds (workers + 1 of them) a writing loop last chose for dimension
/// `dim` of array `array_id`, or nullptr if none was chosen for that many workers.
const std::vector<std::int64_t>* remembered_split(std::uint64_t array_id, int dim, std::size_t workers);

/// Remembers `bounds` as the split of dimension `dim` of array `array_id`.
void remember_split(std::uint64_t array_id, int dim, std::vector<std::int64_t> bounds);

/// The dimension of array `array_id` a writing loop last split (any worker count).
std::optional<int> remembered_dim(std::uint64_t array_id);

}  // namespace strata::loop::detail
