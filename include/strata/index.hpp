// Multi-dimensional indices and shapes. Indices are 64-bit everywhere: data sets
// routinely have more than 2^31 elements.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include <fmt/format.h>

namespace strata {

template <std::size_t N>
using Index = std::array<std::int64_t, N>;

template <std::size_t N>
using Shape = std::array<std::int64_t, N>;

/// Number of elements of a shape (product of extents).
template <std::size_t N>
constexpr std::int64_t volume(const Shape<N>& s) {
  std::int64_t v = 1;
  for (auto e : s) v *= e;
  return v;
}

/// Row-major position of `i` in `s`.
template <std::size_t N>
constexpr std::int64_t linearize(const Index<N>& i, const Shape<N>& s) {
  std::int64_t k = 0;
  for (std::size_t d = 0; d < N; ++d) k = k * s[d] + i[d];
  return k;
}

/// Inverse of linearize.
template <std::size_t N>
constexpr Index<N> delinearize(std::int64_t k, const Shape<N>& s) {
  Index<N> i{};
  // The first subscript is what remains: no division for it (hot paths of 1-D
  // arrays delinearize once per element and a 64-bit division costs ~40 cycles).
  for (std::size_t d = N; d-- > 1;) {
    i[d] = k % s[d];
    k /= s[d];
  }
  i[0] = k;
  return i;
}

template <std::size_t N>
constexpr bool in_bounds(const Index<N>& i, const Shape<N>& s) {
  for (std::size_t d = 0; d < N; ++d)
    if (i[d] < 0 || i[d] >= s[d]) return false;
  return true;
}

/// One element of a sparse array (or of a dense one, when listed): an index and its
/// value. Here, beside Index, so that line parsers need not include DistArray.
template <class T, std::size_t N>
struct Entry {
  Index<N> index;
  T value;
};

/// "(3, 4)" for messages.
template <std::size_t N>
std::string to_string(const Index<N>& i) {
  return fmt::format("({})", fmt::join(i, ", "));
}

}  // namespace strata
