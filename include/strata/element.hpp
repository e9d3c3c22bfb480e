// What DistArray elements may be, and how random values fill them.
//
// Elements are trivially copyable: arithmetic types, fixed-size rows such as
// std::array<float, K>, or plain structs. Random creation (rand / randn) works for
// arithmetic types and fixed-size arrays of them; each scalar component c of the
// element at row-major position k draws counter k * components + c, so values do
// not depend on how the array is partitioned.
#pragma once

#include <array>
#include <cstddef>
#include <type_traits>

namespace strata {

template <class T>
struct ElementTraits {
  static constexpr bool random_fillable = std::is_arithmetic_v<T>;
  static constexpr std::size_t components = 1;
  using scalar = T;
  static void set(T& e, std::size_t, scalar v) { e = v; }
};

template <class S, std::size_t K>
struct ElementTraits<std::array<S, K>> {
  static constexpr bool random_fillable = std::is_arithmetic_v<S>;
  static constexpr std::size_t components = K;
  using scalar = S;
  static void set(std::array<S, K>& e, std::size_t c, scalar v) { e[c] = v; }
};

}  // namespace strata
