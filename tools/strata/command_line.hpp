// What `strata` was asked to do, parsed before MPI starts so a bad option costs one
// line and no job.
#pragma once

#include <string>
#include <vector>

#include "common/app.hpp"

namespace strata::cli {

struct TrainCommand {
  /// The app's name and options; apps::find_app(app->name) runs it. Parsing needs no
  /// more (and so links no training code).
  const apps::AppInfo* app = nullptr;
  apps::RunConfig config;
  std::string metrics_path, plot_path;  ///< --metrics, --plot (empty: none)
  bool explain_only = false;            ///< `strata explain`
};

struct PlotCommand {
  std::vector<std::string> inputs;  ///< metrics CSV files
  std::string output;               ///< -o
  std::string metric = "loss";      ///< --metric
};

/// `strata predict <app> --model DIR --data FILE --out FILE`.
struct PredictCommand {
  const apps::AppInfo* app = nullptr;
  apps::PredictRequest request;
};

struct CommandLine {
  enum class Verb { help, train, explain, plot, predict } verb = Verb::help;
  TrainCommand train;
  PlotCommand plot;
  PredictCommand predict;
  int threads = 0;                       ///< --threads (0: the runtime's default)
  std::vector<std::string> runtime_args;  ///< --strata-* options, passed to the Runtime
};

/// Parses argv (without the program name). Throws OptionError naming the option.
CommandLine parse_command_line(const std::vector<std::string>& args);

/// `strata --help`: the verbs, the common options and every app's options.
std::string usage();

}  // namespace strata::cli
