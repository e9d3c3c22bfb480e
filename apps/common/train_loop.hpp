// The pass loop every app's `train` runs: time a pass (slowest rank), measure,
// report. Kept here so the apps' app.cpp files hold only what differs.
#pragma once

#include <chrono>

#include "common/app.hpp"

namespace strata::apps {

/// Runs `pass()` config.epochs times; after each, calls `measure()` (which returns
/// the metrics, loss first) and reports. Collective when the model is.
template <class Pass, class Measure>
void run_passes(Runtime& rt, const RunConfig& config, std::int64_t items_per_pass, const PassCallback& report,
                Pass&& pass, Measure&& measure) {
  for (int e = 1; e <= config.epochs; ++e) {
    rt.comm().barrier();
    const auto t0 = std::chrono::steady_clock::now();
    pass();
    const double local = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    PassReport r;
    r.pass = e;
    r.seconds = rt.comm().allreduce(local, ReduceOp::max);
    r.items = items_per_pass;
    r.metrics = measure();
    report(r);
  }
}

}  // namespace strata::apps
