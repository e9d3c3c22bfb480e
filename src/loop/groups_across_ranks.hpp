// Conflict groups of iterations that several ranks hold, without gathering them.
//
// Each rank records the accesses of its own iterations only. The groups are found in
// three steps, none of which holds another rank's iterations or accesses:
//   1. each rank joins its own iterations (analysis::conflict_groups): its *components*,
//      numbered after those of lower ranks;
//   2. each element's touches, as (element, component, wrote) with duplicates removed,
//      go to one rank chosen by a hash of the element (its *referee*), which joins the
//      components touching an element that one of them writes, keeping only the joins
//      that merge two of its sets (fewer than the components it heard of);
//   3. every rank receives every join and every component's size, and joins the
//      components itself (a union-find over components, not iterations).
// A group is numbered by its first component (the lowest rank's, then that rank's
// lowest iteration), so on one rank the numbering is analysis::conflict_groups'.
// Memory a rank: its accesses, its share of the touches, and a few words a component
// of every rank (a component is one iteration at least, usually many), counting the
// joins every referee sends (each fewer than the components it heard of).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "analysis/conflict_groups.hpp"
#include "strata/comm.hpp"

namespace strata::loop::detail {

struct GroupsAcrossRanks {
  std::vector<std::int32_t> group_of;    ///< per iteration of this rank, its group
  std::vector<std::int64_t> group_size;  ///< per group, its iterations on all ranks (the same on every rank)
};

/// Collective. `accesses` number this rank's iterations in [0, iterations); elements
/// are keyed alike on every rank. Throws ShapeError as analysis::conflict_groups does,
/// on every rank, and when the components of all ranks (step 1) number more than 2^31-1.
GroupsAcrossRanks conflict_groups_across_ranks(Comm& comm, std::int64_t iterations,
                                               std::span<const analysis::ElementAccess> accesses);

}  // namespace strata::loop::detail
