// What DistArray elements may be, and how random values fill them.
//
// Elements are trivially copyable: arithmetic types, fixed-size rows such as
// std::array<float, K>, or plain structs. Random creation (rand / randn) works for
// arithmetic types and fixed-size arrays of them; each scalar component c of the
// element at row-major position k draws counter k * components + c, so values do
// not depend on how the array is partitioned.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <string>
#include <type_traits>
#include <typeinfo>

#include "strata/kernels.hpp"

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

template <class T>
struct ElementTag {
  static std::string get() {
    if constexpr (std::is_same_v<T, bool>)
      return "bool";
    else if constexpr (std::is_floating_point_v<T>)
      return "f" + std::to_string(8 * sizeof(T));
    else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
      return "i" + std::to_string(8 * sizeof(T));
    else if constexpr (std::is_integral_v<T>)
      return "u" + std::to_string(8 * sizeof(T));
    else
      return typeid(T).name();
  }
};
template <class S, std::size_t K>
struct ElementTag<std::array<S, K>> {
  static std::string get() { return ElementTag<S>::get() + "[" + std::to_string(K) + "]"; }
};

/// The component of an element type that deltas are summed and subtracted by: T
/// itself, or for a std::array (of std::arrays...) its innermost element, taken
/// component by component.
template <class T>
struct Component {
  using type = T;
};
template <class S, std::size_t K>
struct Component<std::array<S, K>> : Component<S> {};
template <class T>
using component_t = typename Component<T>::type;

/// Whether deltas of element type T can be summed: its component has `+=` (numbers, a
/// row struct that defines it).
template <class T>
inline constexpr bool summable_v = requires(component_t<T>& a, const component_t<T>& b) { a += b; };

/// into += delta, as Buffers and apply::sum() sum deltas (see summable_v).
template <class T>
[[gnu::always_inline]] inline void add_into(T& into, const T& delta) {
  if constexpr (requires { into += delta; }) {
    into += delta;
  } else if constexpr (summable_v<T>) {
    for (std::size_t c = 0; c < into.size(); ++c) add_into(into[c], delta[c]);
  } else {
    static_assert(summable_v<T>, "deltas of this element type cannot be summed: give it an operator+=");
  }
}

/// Whether two values of element type T subtract to the delta between them, which
/// add_into adds back: its component is a number other than bool or a struct that
/// defines `a - b`. A Hybrid table on several ranks sends such differences at its
/// clocks (docs/relaxed_rows.md); other types keep the owners' path.
template <class T>
inline constexpr bool subtractable_v =
    std::is_arithmetic_v<component_t<T>> ? !std::is_same_v<component_t<T>, bool>
                                         : requires(const component_t<T>& a, const component_t<T>& b) {
                                             { a - b } -> std::convertible_to<component_t<T>>;
                                           };

/// now - before as a delta (see subtractable_v); integers wrap, as their sums do.
template <class T>
[[gnu::always_inline]] inline T difference_of(const T& now, const T& before) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(now) - static_cast<U>(before));
  } else if constexpr (std::is_arithmetic_v<T> || requires { now - before; }) {
    return now - before;
  } else {
    static_assert(subtractable_v<T>, "values of this element type cannot be subtracted: give it an operator-");
    T d{};
    for (std::size_t c = 0; c < d.size(); ++c) d[c] = difference_of(now[c], before[c]);
    return d;
  }
}

/// into[j] += delta[j] for j < len: a row of deltas summed as add_into sums one. A
/// float row of 32 or more goes through kernels::axpy with alpha 1 (1 * x is x
/// exactly, so the bits are add_into's): the library's portable baseline would sum it
/// 4 lanes at a time, the kernel 8 or 16.
template <class T>
[[gnu::always_inline]] inline void add_row_into(T* __restrict into, const T* __restrict delta, std::size_t len) {
  if constexpr (std::is_same_v<T, float>) {
    if (len >= 32) return kernels::axpy(1.0f, delta, into, len);
  }
  for (std::size_t j = 0; j < len; ++j) add_into(into[j], delta[j]);
}

/// The type tag checkpoints record for element type T unless the caller passes its
/// own: "f32", "i64", "u8", "f32[4]" for std::array<float, 4>, else typeid(T).name().
template <class T>
std::string checkpoint_type_tag() {
  return ElementTag<T>::get();
}

}  // namespace strata
