// Iteration spaces on bytes: indices of local iterations, elements at an index, and
// histograms, for the engine behind the waist (loop_body.hpp).
#include <algorithm>

#include "loop/loop_internal.hpp"

namespace strata::loop::detail {

void index_at(const SpaceView& space, std::int64_t pos, std::int64_t* out) {
  const auto dims = static_cast<std::size_t>(space.dims);
  if (space.sparse) {
    space.keys.get(pos, out);
    return;
  }
  const auto& box = *space.box;
  for (std::size_t d = dims; d-- > 0;) {
    out[d] = box[d].global(pos % box[d].size());
    pos /= box[d].size();
  }
}

std::byte* locate(const SpaceView& space, const std::int64_t* index) {
  const auto dims = static_cast<std::size_t>(space.dims);
  for (std::size_t d = 0; d < dims; ++d)
    if (index[d] < 0 || index[d] >= space.shape[d]) return nullptr;
  if (space.sparse) {
    const std::int64_t at = space.keys.lower_bound(index);  // keys are sorted lexicographically
    if (at == space.local_nnz || !space.keys.equals(at, index)) return nullptr;
    return space.values + static_cast<std::size_t>(at) * space.elem_size;
  }
  std::int64_t off = 0;
  for (std::size_t d = 0; d < dims; ++d) {
    const std::int64_t p = (*space.box)[d].local(index[d]);
    if (p < 0) return nullptr;
    off = off * (*space.box)[d].size() + p;
  }
  return space.values + static_cast<std::size_t>(off) * space.elem_size;
}

std::vector<std::int64_t> histogram(const SpaceView& space, int d) {
  return space.sparse ? strata::detail::histogram_of_keys(space.rt->comm(), space.keys, space.shape, d, 0, &space.rt->pool())
                      : strata::detail::histogram_of_box(space.rt->comm(), *space.box, space.shape, d, 0);
}

ObserverScope::ObserverScope(strata::detail::AccessObserver* o, bool recording) {
  strata::detail::t_observer = o;
  strata::detail::t_recording = recording;
}

ObserverScope::~ObserverScope() {
  strata::detail::t_observer = nullptr;
  strata::detail::t_recording = false;
}

}  // namespace strata::loop::detail
