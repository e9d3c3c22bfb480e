// Apply functions: how the owner of an element folds a delta written through a Buffer
// into the element (DESIGN.md §5). Each is a small value type with
//
//   using state_type = ...;                              // per-element state at the owner
//   void operator()(T& value, state_type& state, const T& delta) const;
//
// state_type must be trivially copyable and value-initialise to "no history". Any
// type with this shape works as a user-defined apply function. One that also needs
// to know which deltas were computed from the same reads takes a fourth argument,
// an ApplyContext: deltas applied in the same round were all computed from values
// read before the round began (one round per Buffer flush, or per clock of a relaxed
// array). The call is const and may run on several threads at once for different
// elements (a one-rank relaxed array's threads share its clocks), so an apply
// function keeps everything it changes in `value` and `state`.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "strata/element.hpp"

namespace strata::apply {

struct ApplyContext {
  std::int64_t round = 0;
};

/// Calls an apply function with or without the context, whichever it takes.
template <class Apply, class T, class State>
void call(const Apply& f, T& value, State& state, const T& delta, std::int64_t round) {
  if constexpr (std::is_invocable_v<const Apply&, T&, State&, const T&, const ApplyContext&>)
    f(value, state, delta, ApplyContext{round});
  else
    f(value, state, delta);
}

/// value += delta. No state.
struct Sum {
  struct state_type {};
  template <class T>
  void operator()(T& value, state_type&, const T& delta) const {
    add_into(value, delta);
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

/// AdaRevision (McMahan and Streeter, "Delay-tolerant algorithms for asynchronous
/// distributed online learning", 2014): AdaGrad that accounts for the gradients a
/// delayed update did not see. The owner keeps per element the gradient sum z and
/// remembers z as it was when the round began (what the delta's author read). For a
/// gradient g arriving with g_bck = z - z_read (the gradients applied since that
/// read), with eta_old the element's rate before this delta:
///
///   G     += g*g + 2*g*g_bck        (the squared sum as if g had come with g_bck)
///   Gmax   = max(Gmax, G)           (rates never grow)
///   eta    = lr / (sqrt(Gmax) + eps)
///   value += -eta*g + (eta_old - eta) * g_bck
///   z     += g
///
/// The last term takes back part of the steps applied since the read: they were
/// taken at a rate of at most eta_old, and had the author's gradient been known
/// they would have been taken at eta. With no delay (one writer per round) it is
/// AdaGrad. Before an element has any history, eta_old is taken as eta.
struct AdaRevision {
  double lr = 0.1;
  double eps = 1e-8;
  struct state_type {
    double z = 0, z_read = 0;
    double g2 = 0, g2max = 0;
    std::int64_t round = -1;
  };
  double rate(double g2max) const { return lr / (std::sqrt(g2max) + eps); }
  template <class T>
  void operator()(T& value, state_type& s, const T& delta, const ApplyContext& ctx) const {
    if (s.round != ctx.round) {  // the first delta of a round: what its readers saw
      s.round = ctx.round;
      s.z_read = s.z;
    }
    const double g = static_cast<double>(delta);
    const double g_bck = s.z - s.z_read;
    const double g2max_old = s.g2max;
    s.g2 += g * g + 2 * g * g_bck;
    s.g2max = std::max(s.g2max, s.g2);
    const double eta = rate(s.g2max);
    const double eta_old = g2max_old > 0 ? rate(g2max_old) : eta;
    value = static_cast<T>(static_cast<double>(value) - eta * g + (eta_old - eta) * g_bck);
    s.z += g;
  }
};

inline AdaRevision adarevision(double lr, double eps = 1e-8) { return {lr, eps}; }

}  // namespace strata::apply
