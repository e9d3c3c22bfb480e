// What every app's `train` shares: the pass loop (time a pass on the slowest rank,
// measure, report), the line that says which plan a Strata run got, and the
// serial programs' vectors as DistArrays so both programs save in one format.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "common/app.hpp"
#include "strata/dist_array.hpp"
#include "strata/loop/loop_report.hpp"
#include "strata/recovery.hpp"

namespace strata::apps {

/// Runs `pass()` config.epochs times; after each, calls `measure()` (which returns
/// the metrics, loss first; `measure(restored)` when it takes a bool: a restored pass's
/// loop calls give the checkpointed run's values, but a figure computed outside loops
/// sees arrays not yet restored) and reports. `after_first_pass` runs once, between the
/// first pass that ran and its measurement (Strata runs: say which plan was chosen);
/// passes a resumed run restored from a checkpoint (strata/recovery.hpp) are reported as
/// restored. `stop`, when given, is called with each pass's report after it was
/// reported and answers whether to end training early (held-out early stopping); it
/// must answer alike on every rank. Collective when the model is.
template <class Pass, class Measure>
void run_passes(Runtime& rt, const RunConfig& config, std::int64_t items_per_pass, const PassCallback& report,
                Pass&& pass, Measure&& measure, const std::function<void()>& after_first_pass = {},
                const std::function<bool(const PassReport&)>& stop = {}) {
  bool described = false;
  for (int e = 1; e <= config.epochs; ++e) {
    rt.comm().barrier();
    const auto t0 = std::chrono::steady_clock::now();
    const auto skipped_before = recovery::loop_calls_skipped(rt);
    pass();
    const double local = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    PassReport r;
    r.pass = e;
    r.seconds = rt.comm().allreduce(local, ReduceOp::max);
    r.restored = recovery::loop_calls_skipped(rt) > skipped_before;
    r.items = r.restored ? 0 : items_per_pass;
    if (!r.restored && !described && after_first_pass) {
      after_first_pass();
      described = true;
    }
    if constexpr (std::is_invocable_v<Measure, bool>)
      r.metrics = measure(r.restored);
    else
      r.metrics = measure();
    report(r);
    if (stop && stop(r)) break;
  }
}

/// "plan: two_d over (user, item) on 4 worker(s), imbalance 1.02; planned in 0.41 s
/// (reconnaissance 0.30 s)"; `dims` names the iteration dimensions.
inline std::string describe_plan(const LoopReport& report, const std::vector<std::string>& dims) {
  if (report.replayed) return "plan: replayed in the recorded serial order on one thread";
  auto name = [&](int d) { return d >= 0 && d < static_cast<int>(dims.size()) ? dims[static_cast<std::size_t>(d)] : ""; };
  const int s = report.space_dim, t = report.time_dim;
  const std::string over = s < 0 ? "" : t < 0 ? fmt::format(" over {}", name(s)) : fmt::format(" over ({}, {})", name(s), name(t));
  return fmt::format("plan: {}{} on {} worker(s), imbalance {:.2f}; planned in {:.2f} s (reconnaissance {:.2f} s)",
                     analysis::to_string(report.strategy), over, report.workers, report.imbalance,
                     report.recon_seconds + report.plan_seconds, report.recon_seconds);
}

/// A vector as a 1-D DistArray: the iterations of an app's loop (batches, sentences,
/// samples), element i from values[i].
template <class T>
DistArray<T, 1> array_of(Runtime& rt, const std::vector<T>& values) {
  return DistArray<T, 1>::generate(rt, {static_cast<std::int64_t>(values.size())},
                                   [&](const Index<1>& i) { return values[static_cast<std::size_t>(i[0])]; });
}

/// A serial program's row-major vector as a DistArray of `shape` (one rank).
template <class T, std::size_t N>
DistArray<T, N> array_from(Runtime& rt, const std::vector<T>& values, const Shape<N>& shape) {
  return DistArray<T, N>::generate(rt, shape, [&](const Index<N>& i) {
    return values[static_cast<std::size_t>(linearize(i, shape))];
  });
}

}  // namespace strata::apps
