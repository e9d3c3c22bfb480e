// The apps' Strata versions run each loop through this, so `strata explain` can
// plan every loop (printing the plans) without running any.
#pragma once

#include <source_location>

#include "strata/loop/parallel_for.hpp"

namespace strata::apps {

/// parallel_for, or when `explain_only` just the loop's planning with the plan
/// printed (rank 0). `where` is the caller's line, as for parallel_for.
template <class Elem, std::size_t M, class Body>
LoopReport run_or_explain(bool explain_only, DistArray<Elem, M>& space, Body&& body, const LoopOptions& options,
                          std::source_location where = std::source_location::current()) {
  if (!explain_only) return parallel_for(space, body, options, where);
  LoopOptions o = options;
  o.explain = true;
  return plan_loop(space, body, o, where);
}

}  // namespace strata::apps
