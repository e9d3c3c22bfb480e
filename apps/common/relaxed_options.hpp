// The command-line options of the apps that write their model through Buffers (slr,
// mlr, word2vec, transe): how the relaxed arrays are kept consistent, and for the
// classifiers what the held-out data decide. Declared by their info.cpp (no training
// code) and parsed by their app.cpp.
#pragma once

#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "common/app.hpp"
#include "common/auto_clock.hpp"
#include "strata/error.hpp"
#include "strata/loop/loop_options.hpp"

namespace strata::apps {

/// Declares --consistency, --staleness, --clock (`items` per worker between clocks;
/// `clock_auto` says what auto means across ranks, `replicas_auto` between replicas
/// per thread on one rank) and --replicas.
inline void declare_relaxed_options(Settings& s, const std::string& items, const std::string& clock_auto,
                                    const std::string& replicas_auto) {
  s.declare("consistency", "hybrid", "hybrid (lock-free inside a rank) | ssp (--staleness)")
      .declare("staleness", "0", "SSP staleness bound (0: BSP; with --consistency ssp)")
      .declare("clock", "auto",
               items + " per worker between clocks (0: one clock per pass; auto: 0 on one rank under Hybrid" +
                   (replicas_auto == clock_auto
                        ? " with --replicas rank, else " + clock_auto
                        : ", " + replicas_auto + " with --replicas thread, " + clock_auto + " across ranks") +
                   ")")
      .declare("replicas", "rank",
               "with Hybrid: rank (a rank's threads share one copy of the model lock-free, as Hogwild) | thread "
               "(each worker thread keeps its own copy, merged at every clock: no cache line moves between the "
               "threads, no add is lost, the same result every run)");
}

/// Declares the relaxed options (declare_relaxed_options) and --holdout, --test,
/// --patience, --keep.
inline void declare_relaxed_classifier_options(Settings& s, const std::string& clock_auto) {
  declare_relaxed_options(s, "samples", clock_auto, clock_auto);
  s.declare("holdout", "0.1", "fraction of samples held out")
      .declare("test", "", "a LIBSVM file to measure on instead of --holdout")
      .declare("patience", "0", "stop after this many passes without a lower held-out log-loss (0: never)")
      .declare("keep", "best", "best | last: which pass's model --save writes");
}

/// --consistency, --staleness and --clock, checked against each other.
struct RelaxedSettings {
  bool hybrid = true;             ///< Hybrid (lock-free inside a rank), else SSP
  int staleness = 0;              ///< SSP's bound
  std::int64_t clock_every = -1;  ///< samples of a worker per clock; -1: the app's automatic choice
  bool thread_replicas = false;   ///< Hybrid with a replica per worker thread (Consistency::replica_per_thread)
};

inline RelaxedSettings relaxed_settings(const RunConfig& c) {
  RelaxedSettings r;
  r.hybrid = c.options.choice("consistency", {"hybrid", "ssp"}) == "hybrid";
  r.staleness = static_cast<int>(c.options.integer("staleness", 0, 1000));
  if (c.options.text("clock") != "auto") r.clock_every = c.options.integer("clock", 0);
  if (r.hybrid && r.staleness > 0)
    throw OptionError(fmt::format("--staleness {} needs --consistency ssp (Hybrid is bulk-synchronous across ranks)",
                                  r.staleness));
  r.thread_replicas = c.options.choice("replicas", {"rank", "thread"}) == "thread";
  if (r.thread_replicas && !r.hybrid)
    throw OptionError("--replicas thread goes with --consistency hybrid (a replica per thread is Hybrid's)");
  return r;
}

/// How a run keeps its relaxed arrays, for its first line: "SSP s", "Hybrid", or
/// "Hybrid, a replica per thread" (with one thread a rank there is nothing to replicate).
inline std::string consistency_name(bool hybrid, bool thread_replicas, int staleness, int threads) {
  if (!hybrid) return fmt::format("SSP {}", staleness);
  return replicas_per_thread(thread_replicas, threads) ? "Hybrid, a replica per thread" : "Hybrid";
}

/// The loop options of an app whose model is written only through Buffers: its loop is
/// data-parallel, and --plan may say so but nothing else.
inline LoopOptions data_parallel_loop(const RunConfig& c, const std::string& app, const std::string& model) {
  if (c.plan && *c.plan != analysis::Strategy::data_parallel)
    throw OptionError(fmt::format("--plan {}: {} writes its {} through a Buffer, so its loop is data-parallel "
                                  "(use --plan auto or data_parallel)", analysis::to_string(*c.plan), app, model));
  LoopOptions l;
  l.strategy = c.plan;
  return l;
}

}  // namespace strata::apps
