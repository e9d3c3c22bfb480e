// Which worker thread is running loop code, and whether the loop is only being
// analysed (reconnaissance), for objects whose behaviour depends on it.
#pragma once

namespace strata::detail {

/// The pool thread running the current loop body (0 outside loops).
inline thread_local int t_worker = 0;
/// True while a reconnaissance pass runs the body: accumulators ignore updates.
inline thread_local bool t_recording = false;

}  // namespace strata::detail
