// One `strata train` run on a Runtime, shared by the command (main.cpp) and the Python
// module (python/): both train the same way, with the same checks and messages.
#pragma once

#include <string>
#include <vector>

#include "command_line.hpp"
#include "common/app.hpp"
#include "strata/runtime.hpp"

namespace strata::cli {

struct TrainingResult {
  std::vector<apps::PassReport> passes;
  /// Non-empty when a pass's quality figures were not finite: training stopped after
  /// that pass (on every rank: the figures are combined over ranks), nothing was saved.
  std::string diverged;
};

/// Binds the run to its checkpoints, trains t.app for t.config.epochs passes calling
/// `on_pass` after each (every rank), stops at the first diverged pass, and finishes
/// the run's checkpoints (a failed last checkpoint is an error of the run).
TrainingResult run_training(Runtime& rt, const TrainCommand& t, const apps::InfoCallback& info,
                            const apps::PassCallback& on_pass);

/// The Runtime's arguments for a parsed command line: --threads becomes
/// --strata-threads (so it wins over STRATA_THREADS), then the --strata-* options.
std::vector<std::string> runtime_arguments(const CommandLine& cl);

/// One line for any exception: Strata's errors say what they are; others are named
/// (out of memory, system error). Control bytes are escaped, so a crafted file name
/// or line echoed in a message cannot send escape sequences to a terminal.
std::string failure_line(const std::exception& e);

}  // namespace strata::cli
