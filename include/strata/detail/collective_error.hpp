// Making errors collective. When a step fails on some ranks only (one rank finds a
// malformed line, another does not), the ranks that did not fail would wait forever
// in the next collective. all_or_none runs the step everywhere, then lets every rank
// learn whether any failed, and all of them throw the same typed error.
#pragma once

#include "strata/comm.hpp"
#include "strata/error.hpp"

#include <exception>
#include <functional>

namespace strata::detail {

/// Rethrows on every rank the strata::Error that the lowest failing rank raised
/// (same type and message), or returns normally if no rank failed. Every rank calls
/// it with its own outcome: nullptr for success.
void agree_on_error(Comm& comm, std::exception_ptr local);

/// Runs f() and then agree_on_error on its outcome.
template <class F>
void all_or_none(Comm& comm, F&& f) {
  std::exception_ptr err;
  try {
    f();
  } catch (const Error&) {
    err = std::current_exception();
  }
  agree_on_error(comm, err);
}

}  // namespace strata::detail
