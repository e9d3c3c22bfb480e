// An array's content fingerprint, on bytes: a sum of per-element hashes of the
// element's row-major position and its bytes, so it does not depend on how the
// array is partitioned. Replays and resumed runs compare it across runs, so the hash
// must not change between versions.
#include <algorithm>
#include <cstring>

#include "strata/detail/array_movement.hpp"
#include "strata/random.hpp"

namespace strata::detail {

namespace {

std::uint64_t element_hash(std::uint64_t linear, const std::byte* value, std::size_t size) {
  std::uint64_t h = mix64(linear + 0x243F6A8885A308D3ULL);
  for (std::size_t at = 0; at < size; at += 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, value + at, std::min<std::size_t>(8, size - at));
    h = mix64(h ^ word);
  }
  return h;
}

std::uint64_t linear_of(const std::int64_t* index, const std::vector<std::int64_t>& shape) {
  std::uint64_t k = 0;
  for (std::size_t d = 0; d < shape.size(); ++d)
    k = k * static_cast<std::uint64_t>(shape[d]) + static_cast<std::uint64_t>(index[d]);
  return k;
}

}  // namespace

std::uint64_t content_fingerprint_of(Comm& comm, const std::vector<std::int64_t>& shape, bool sparse,
                                     const std::vector<IndexSet>& box, const KeyColumn& keys,
                                     std::span<const std::byte> values, std::size_t element_size) {
  const std::size_t dims = shape.size();
  const std::size_t n = element_size == 0 ? 0 : values.size() / element_size;
  std::uint64_t sum = 0;
  if (sparse) {
    std::int64_t index[4];
    for (std::size_t k = 0; k < n; ++k) {
      keys.get(static_cast<std::int64_t>(k), index);
      sum += element_hash(linear_of(index, shape), values.data() + k * element_size, element_size);
    }
  } else if (n > 0) {
    // Row-major walk of the box, counting positions in it like an odometer.
    std::vector<std::int64_t> at(dims, 0), index(dims);
    for (std::size_t d = 0; d < dims; ++d) index[d] = box[d].global(0);
    for (std::size_t k = 0; k < n; ++k) {
      sum += element_hash(linear_of(index.data(), shape), values.data() + k * element_size, element_size);
      for (std::size_t d = dims; d-- > 0;) {
        if (++at[d] < box[d].size()) {
          index[d] = box[d].global(at[d]);
          break;
        }
        at[d] = 0;
        index[d] = box[d].global(0);
      }
    }
  }
  return comm.allreduce(sum, ReduceOp::sum);
}

}  // namespace strata::detail
