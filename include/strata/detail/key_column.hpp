// The sorted keys of a sparse array's local elements as the byte-level engine reads
// and writes them: rows of `dims` subscripts, each 4 bytes wide where every extent of
// the array fits in 32 bits and 8 bytes otherwise.
//
// Rule: the width is a function of the shape alone (key_width_for), so the array that
// allocates the keys, the engine that writes them and every reader agree without
// being told. Why: a sparse array's keys are most of its memory (mf's 10M ratings:
// 160 MB of 8-byte subscripts against 40 MB of values), and planning scans them
// several times; 4-byte subscripts halve both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace strata::detail {

/// Bytes per stored subscript for an array of `shape`: 4 where every index fits in
/// an int32 (every extent is at most 2^31), 8 otherwise.
inline int key_width_for(std::span<const std::int64_t> shape) {
  for (const std::int64_t extent : shape)
    if (extent > (std::int64_t{1} << 31)) return 8;
  return 4;
}

/// Writes the `dims` subscripts `index` at `out`, `width` bytes each.
inline void store_key(std::byte* out, const std::int64_t* index, int dims, int width) {
  if (width == 8) {
    std::memcpy(out, index, static_cast<std::size_t>(dims) * sizeof(std::int64_t));
    return;
  }
  for (int d = 0; d < dims; ++d) {
    const auto narrow = static_cast<std::int32_t>(index[d]);
    std::memcpy(out + static_cast<std::size_t>(d) * sizeof narrow, &narrow, sizeof narrow);
  }
}

/// Read-only view of `size` stored keys.
struct KeyColumn {
  const std::byte* data = nullptr;
  std::int64_t size = 0;
  int dims = 0;
  int width = 8;

  /// Subscript `d` of key `k`.
  std::int64_t at(std::int64_t k, int d) const {
    const std::size_t slot = static_cast<std::size_t>(k) * static_cast<std::size_t>(dims) + static_cast<std::size_t>(d);
    if (width == 4) {
      std::int32_t v;
      std::memcpy(&v, data + slot * sizeof v, sizeof v);
      return v;
    }
    std::int64_t v;
    std::memcpy(&v, data + slot * sizeof v, sizeof v);
    return v;
  }
  /// The `dims` subscripts of key `k` into `out`.
  void get(std::int64_t k, std::int64_t* out) const {
    const std::size_t first = static_cast<std::size_t>(k) * static_cast<std::size_t>(dims);
    if (width == 8) {
      std::memcpy(out, data + first * sizeof(std::int64_t), static_cast<std::size_t>(dims) * sizeof(std::int64_t));
      return;
    }
    for (int d = 0; d < dims; ++d) {
      std::int32_t v;
      std::memcpy(&v, data + (first + static_cast<std::size_t>(d)) * sizeof v, sizeof v);
      out[d] = v;
    }
  }
  /// The first key not less than `index` (lexicographically), as a position in [0, size].
  std::int64_t lower_bound(const std::int64_t* index) const {
    std::int64_t lo = 0, hi = size;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      int d = 0;
      while (d < dims && at(mid, d) == index[d]) ++d;
      if (d < dims && at(mid, d) < index[d]) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
  /// Whether key `k` equals `index`.
  bool equals(std::int64_t k, const std::int64_t* index) const {
    for (int d = 0; d < dims; ++d)
      if (at(k, d) != index[d]) return false;
    return true;
  }
};

}  // namespace strata::detail
