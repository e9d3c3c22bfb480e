// Apply functions: how the owner of an element folds a delta written through a Buffer
// into the element (DESIGN.md §5). Each is a small value type with
//
//   using state_type = ...;                              // per-element state at the owner
//   void operator()(T& value, state_type& state, const T& delta) const;
//
// state_type must be trivially copyable and value-initialise to "no history". Any
// type with this shape works as a user-defined apply function.
#pragma once

#include <cmath>

namespace strata::apply {

/// value += delta. No state.
struct Sum {
  struct state_type {};
  template <class T>
  void operator()(T& value, state_type&, const T& delta) const {
    value += delta;
  }
};

inline Sum sum() { return {}; }

/// AdaGrad (Duchi et al.): the delta is a gradient g; the owner keeps the sum of
/// squared gradients G of each element and moves the value by -lr * g / (sqrt(G) + eps),
/// so rarely updated elements take larger steps.
struct AdaGrad {
  double lr = 0.1;
  double eps = 1e-8;
  struct state_type {
    double squares = 0;
  };
  template <class T>
  void operator()(T& value, state_type& state, const T& delta) const {
    const double g = static_cast<double>(delta);
    state.squares += g * g;
    value = static_cast<T>(static_cast<double>(value) - lr * g / (std::sqrt(state.squares) + eps));
  }
};

inline AdaGrad adagrad(double lr, double eps = 1e-8) { return {lr, eps}; }

}  // namespace strata::apply
