// For tests of speculative plans: an iteration the sampled reconnaissance of a 1-D
// dense space does not visit, so a body that misbehaves only there breaks the plan
// built from the sample.
#pragma once

#include <algorithm>

#include "loop/inspect.hpp"  // reconnaissance_visits (not API)
#include "strata/loop/parallel_for.hpp"
#include "test_runtime.hpp"

namespace strata::testing {

/// Collective: each rank names its last iteration outside its sample of 1 in
/// `stride`; the largest is returned (-1 if every iteration is sampled).
template <class Elem>
std::int64_t unsampled_iteration(const DistArray<Elem, 1>& space, int stride) {
  const auto& box = space.local_box()[0];
  std::int64_t mine = -1;
  for (std::int64_t pos = 0; pos < box.size(); ++pos)
    if (!loop::detail::reconnaissance_visits(box.size(), stride, pos)) mine = box.global(pos);
  return rt().comm().allreduce(mine, ReduceOp::max);
}

/// The same for a sparse 2-D space: the largest unsampled key of any rank, as
/// row x columns + column (-1 if every iteration is sampled).
template <class Elem>
std::int64_t unsampled_entry(const DistArray<Elem, 2>& space, int stride) {
  const auto keys = space.local_keys();
  const auto n = static_cast<std::int64_t>(keys.size());
  std::int64_t mine = -1;
  for (std::int64_t pos = 0; pos < n; ++pos)
    if (!loop::detail::reconnaissance_visits(n, stride, pos)) {
      const auto& k = keys[static_cast<std::size_t>(pos)];
      mine = std::max(mine, k[0] * space.shape()[1] + k[1]);
    }
  return rt().comm().allreduce(mine, ReduceOp::max);
}

}  // namespace strata::testing
