// Exact task groups for loops whose accesses are irregular (STRADS-AP's serializable
// engine): the iterations are split into connected components of the conflict graph
// recorded by the reconnaissance pass, so iterations of different groups never touch
// a common element that one of them writes, and groups can run on different workers
// with no synchronisation while each group runs serially.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace strata::analysis {

/// One recorded access of the reconnaissance pass: 16 bytes, as planning keeps one per
/// access of every iteration (a plan's largest list). The iteration is kept in 31 bits:
/// callers number at most 2^31-1 iterations (the recorder refuses more a rank), as
/// conflict_groups takes.
struct ElementAccess {
  ElementAccess() = default;
  ElementAccess(std::int64_t iteration_, std::uint64_t element_, bool write_)
      : element(element_), iteration(static_cast<std::int32_t>(iteration_)), write(write_) {}
  std::uint64_t element = 0;  ///< the element touched: (array id, linear index) packed or hashed by the caller
  std::int32_t iteration = 0;  ///< linearised iteration index in [0, iterations), below 2^31 as conflict_groups takes
  bool write = false;
};
static_assert(sizeof(ElementAccess) == 16);

/// The partition of iterations into conflict groups.
struct Groups {
  std::vector<std::int32_t> group_of;    ///< per iteration 0..n-1, its group
  std::vector<std::int64_t> group_size;  ///< per group, its number of iterations
  std::int32_t count = 0;                ///< number of groups
};

/// Connected components of "touch one element, at least one of them writes it":
/// elements that are only ever read join nothing. Groups are numbered in order of
/// their lowest iteration, so the result does not depend on the order of `accesses`.
/// Expected O(accesses) time: accesses are scattered into cache-sized buckets by a hash
/// of the element, each bucket gets an open-addressing table, and iterations are joined
/// by a union-find with path halving and union by size. Throws ShapeError for an
/// iteration outside [0, iterations) or more than 2^31-1 iterations.
Groups conflict_groups(std::int64_t iterations, std::span<const ElementAccess> accesses);

/// A worker for each group: largest group first onto the least-loaded worker (ties:
/// lower group id first, then lower worker id), the classic LPT rule whose makespan is
/// within 4/3 of optimal. Throws OptionError when workers < 1.
std::vector<std::int32_t> pack_groups(std::span<const std::int64_t> group_size, int workers);

/// Load of the busiest worker over the mean load (1.0 is perfect; 1.0 when there is
/// no work). Throws OptionError when workers < 1 and ShapeError when a worker id is
/// out of range or the spans differ in size.
double imbalance(std::span<const std::int64_t> group_size, std::span<const std::int32_t> worker_of,
                 int workers);

}  // namespace strata::analysis
