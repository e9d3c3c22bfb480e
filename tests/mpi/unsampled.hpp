// For tests of speculative plans: an iteration the sampled reconnaissance of a 1-D
// dense space does not visit, so a body that misbehaves only there breaks the plan
// built from the sample.
#pragma once

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

}  // namespace strata::testing
