// A dense array on bytes: element keys, their owners and local offsets, for the
// parameter server's engine (ps_internal.hpp).
#include "ps/ps_internal.hpp"

namespace strata::ps {

Geometry Geometry::of(detail::ArrayBase& array, const ElementOps& ops) {
  Geometry g;
  g.shape = array.shape_vector();
  g.box = &ops.local_box();
  g.dist = &array.distribution_of();
  g.dims = g.shape.size();
  STRATA_CHECK(g.dims >= 1 && g.dims <= kMaxDims, "a Buffer's array has too many dimensions");
  return g;
}

void Geometry::index_of(std::int64_t key, std::int64_t* out) const {
  for (std::size_t d = dims; d-- > 1;) {
    out[d] = key % shape[d];
    key /= shape[d];
  }
  out[0] = key;
}

int Geometry::owner_of(std::int64_t key) const {
  if (dims == 1) return dist->owner(&key);
  std::int64_t index[kMaxDims];
  index_of(key, index);
  return dist->owner(index);
}

std::int64_t Geometry::local_offset(const std::int64_t* index) const {
  std::int64_t off = 0;
  for (std::size_t d = 0; d < dims; ++d) {
    const IndexSet& s = (*box)[d];
    const std::int64_t p = s.local(index[d]);
    if (p < 0) return -1;
    off = off * s.size() + p;
  }
  return off;
}

std::int64_t Geometry::local_offset_of(std::int64_t key) const {
  if (dims == 1) return (*box)[0].local(key);
  std::int64_t index[kMaxDims];
  index_of(key, index);
  return local_offset(index);
}

std::int64_t Geometry::volume() const {
  std::int64_t v = 1;
  for (const auto e : shape) v *= e;
  return v;
}

}  // namespace strata::ps
