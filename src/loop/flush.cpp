// The Buffers a loop wrote through, and flushing them after the loop: the deltas go
// to their owners.
#include <algorithm>

#include "loop/loop_internal.hpp"
#include "strata/error.hpp"
#include "loop/buffer_base.hpp"

namespace strata::loop::detail {

std::vector<std::uint64_t> buffered_arrays(const Plan& plan) {
  std::vector<std::uint64_t> ids;
  for (const auto& s : plan.sites)
    if (s.mode == strata::detail::AccessMode::buffered && std::find(ids.begin(), ids.end(), s.array_id) == ids.end())
      ids.push_back(s.array_id);
  return ids;
}

void flush_buffers(const Plan& plan) {
  for (const auto id : buffered_arrays(plan)) {  // the same order on every rank
    auto* b = strata::detail::BufferBase::find_buffer(id);
    STRATA_CHECK(b != nullptr, "a loop wrote through a Buffer that no longer exists");
    b->flush();
  }
}

}  // namespace strata::loop::detail
