// The clock a relaxed app's run gets when none is asked for (slr, mlr): how many
// samples a worker processes between two exchanges of deltas across ranks.
#pragma once

#include <algorithm>
#include <cstdint>

namespace strata::apps {

/// Whether each worker thread keeps a replica of its own (Consistency::replica_per_thread):
/// asked for, and more than one thread a rank to keep apart. One thread has nothing to
/// replicate: it runs as plain Hybrid.
inline bool replicas_per_thread(bool thread_replicas, int threads) { return thread_replicas && threads > 1; }

/// The clock a run gets when none is asked for. On one rank whose threads share the
/// array lock-free (Hybrid without replicas per thread) one clock a pass (0). Across
/// ranks, or between replicas per thread, each clock lets
/// every worker's deltas meet: about 100 a pass per worker, at most 1,000 samples
/// apart, since a hot feature (the bias) takes workers x clock steps from one stale
/// value, and with one clock a pass on a small data set even an adaptive step
/// overshoots. But each clock is also a synchronous exchange between the ranks (their
/// deltas to the owners, the changed weights back), a few milliseconds on one machine
/// (docs/apps-slr.md): the clock is raised until a worker's samples between two clocks
/// hold as many non-zeros as the model has rows (`rows`: slr's weights, mlr's rows of
/// weights; at least 10 clocks a pass), so that the exchanges cost about what
/// computing does.
inline std::int64_t auto_clock(std::int64_t samples, std::int64_t nonzeros, std::int64_t rows, int ranks,
                               int threads, bool hybrid, bool thread_replicas) {
  if (ranks == 1 && hybrid && !replicas_per_thread(thread_replicas, threads)) return 0;
  const std::int64_t per_worker = samples / (static_cast<std::int64_t>(ranks) * threads);
  const std::int64_t for_staleness = std::clamp<std::int64_t>(per_worker / 100, 1, 1000);
  const std::int64_t for_exchange = rows / std::max<std::int64_t>(1, nonzeros / std::max<std::int64_t>(1, samples));
  return std::max(for_staleness, std::min(for_exchange, per_worker / 10));
}

}  // namespace strata::apps
