// Which worker thread is running loop code, and whether the loop is only being
// analysed (reconnaissance), for objects whose behaviour depends on it.
#pragma once

namespace strata::detail {

/// The pool thread running the current loop body (0 outside loops).
inline thread_local int t_worker = 0;
/// Which per-worker delta set a Buffer write goes to. The running thread (t_worker)
/// in a parallel run; a single-process replay runs every recorded worker's
/// iterations on one thread and points this at the worker that ran each one, so the
/// deltas are summed as they were in the recorded run.
inline thread_local int t_delta_set = 0;
/// True while a reconnaissance pass runs the body: accumulators ignore updates.
inline thread_local bool t_recording = false;

/// Pool thread `th` runs loop code while this lives (both ids above are th).
class WorkerScope {
 public:
  explicit WorkerScope(int th) { t_worker = t_delta_set = th; }
  ~WorkerScope() { t_worker = t_delta_set = 0; }
  WorkerScope(const WorkerScope&) = delete;
  WorkerScope& operator=(const WorkerScope&) = delete;
};

}  // namespace strata::detail
