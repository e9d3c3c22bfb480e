// Reading iterations' subscripts by position in the engine's scans over every
// iteration (work lists, packing).
//
// Rule: the common layout, a sparse space of two dimensions (mf's ratings, lda's
// tokens), gets a reader whose dimension count and key width are compile-time
// constants; every other space goes through index_at. Why: those scans run once per
// iteration at planning time, and with the sizes known the per-position work has no
// loops or branches on them (mf, 10M ratings: filling the work lists took 0.11 s
// through the general reader, docs/loops.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "loop/loop_internal.hpp"

namespace strata::loop::detail {

/// Sparse keys of `Dims` subscripts stored as `Sub`.
template <std::size_t Dims, class Sub>
struct FixedKeyReader {
  static constexpr std::size_t dims = Dims;
  const std::byte* keys;
  /// The subscripts of the iteration at `pos`, written to `buf` (returned).
  const std::int64_t* operator()(std::int64_t pos, std::int64_t* buf) const {
    const std::byte* at = keys + static_cast<std::size_t>(pos) * Dims * sizeof(Sub);
    for (std::size_t d = 0; d < Dims; ++d) {
      Sub v;
      std::memcpy(&v, at + d * sizeof(Sub), sizeof v);
      buf[d] = v;
    }
    return buf;
  }
};

/// Any space, through index_at.
struct AnyIndexReader {
  const SpaceView* space;
  std::size_t dims;
  const std::int64_t* operator()(std::int64_t pos, std::int64_t* buf) const {
    index_at(*space, pos, buf);
    return buf;
  }
};

/// Calls f with the reader for `space`'s layout.
template <class F>
decltype(auto) with_index_reader(const SpaceView& space, F&& f) {
  if (space.sparse && space.keys.dims == 2) {
    if (space.keys.width == 4) return f(FixedKeyReader<2, std::int32_t>{space.keys.data});
    if (space.keys.width == 8) return f(FixedKeyReader<2, std::int64_t>{space.keys.data});
  }
  return f(AnyIndexReader{&space, static_cast<std::size_t>(space.dims)});
}

}  // namespace strata::loop::detail
