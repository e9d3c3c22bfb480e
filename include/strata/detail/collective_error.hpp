// Making errors collective. When a step fails on some ranks only (one rank finds a
// malformed line, another does not), the ranks that did not fail would wait forever
// in the next collective. all_or_none runs the step everywhere, then lets every rank
// learn whether any failed, and all of them throw the same typed error.
#pragma once

#include "strata/comm.hpp"
#include "strata/error.hpp"

#include <cxxabi.h>

#include <exception>
#include <functional>

namespace strata::detail {

/// Rethrows on every rank the error that the lowest failing rank raised, or returns
/// normally if no rank failed. Every rank calls it with its own outcome: nullptr for
/// success. The failing rank rethrows its own exception object; the others throw a
/// strata::Error of the same type and message, or, for an exception that is not a
/// strata::Error (a body's std::runtime_error, bad_alloc), a strata::Error naming the
/// failing rank and its message.
void agree_on_error(Comm& comm, std::exception_ptr local);

/// Runs f() and then agree_on_error on its outcome, whatever f throws.
template <class F>
void all_or_none(Comm& comm, F&& f) {
  std::exception_ptr err;
  try {
    f();
  } catch (abi::__forced_unwind&) {  // a cancelled thread must go on unwinding
    throw;
  } catch (...) {
    err = std::current_exception();
  }
  agree_on_error(comm, err);
}

}  // namespace strata::detail
