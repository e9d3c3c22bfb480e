// What the `strata` command needs from an application: its options, how to train it
// (reporting once per pass), and how to explain its loops. Each app lives in
// apps/<name>/: a problem file (data, generator, loader, quality measures) shared
// by serial.cpp (the plain C++ program) and strata.cpp (the same program on Strata),
// and app.cpp, which registers both with the command.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/settings.hpp"
#include "strata/analysis/strategy.hpp"
#include "strata/runtime.hpp"

namespace strata::apps {

/// One `strata train` / `strata explain` invocation, app options included.
struct RunConfig {
  std::string data_path;      ///< --data PATH (empty: synthetic)
  Settings synthetic;         ///< --synthetic key=value,... (defaults filled in)
  Settings options;           ///< the app's own options (defaults filled in)
  int epochs = 10;            ///< --epochs
  std::uint64_t seed = 42;    ///< --seed: data generation, initial model, sampling
  /// --plan: nullopt = auto (the planner decides); data_parallel runs the app's
  /// data-parallel variant (conflicting writes through Buffers, BSP).
  std::optional<analysis::Strategy> plan;
  bool serial = false;        ///< --serial: run serial.cpp instead (one process, one thread)
  std::string save_dir;       ///< --save DIR (empty: do not save)
};

/// A named quality figure of one pass ("loss", "test_rmse", "accuracy", ...).
struct Metric {
  std::string name;
  double value = 0;
};

/// What a pass reports. metrics[0] is the app's loss (the one plotted).
struct PassReport {
  int pass = 0;               ///< 1-based
  double seconds = 0;         ///< the pass's training time (quality evaluation excluded)
  std::int64_t items = 0;     ///< ratings / samples / tokens processed
  std::vector<Metric> metrics;
  /// The pass was not run: a resumed run restored it from a checkpoint (its metrics
  /// are the checkpointed run's, items is 0).
  bool restored = false;
};

using PassCallback = std::function<void(const PassReport&)>;

/// Printed once before the first pass: what was loaded and how it will run.
using InfoCallback = std::function<void(const std::string&)>;

/// What the command line knows of an app before anything runs: its name, help and
/// declared options. Apart from App's run functions so that parsing a command line
/// links no training code (the command-line fuzzer, fuzz/command_line.cpp, links only
/// this): each app's <app>/info.cpp defines <app>_info(), its app.cpp <app>_app().
struct AppInfo {
  std::string name;           ///< "mf"
  std::string summary;        ///< one line for `strata --help`
  std::string unit;           ///< what items are: "ratings", "samples", "tokens"
  Settings synthetic_keys;    ///< SPEC keys with defaults and help
  Settings options;           ///< app options with defaults and help
};

/// `strata predict <app> --model DIR --data FILE --out FILE`.
struct PredictRequest {
  std::string model_dir;  ///< what `strata train <app> --save DIR` wrote
  std::string data_path;  ///< the pairs to predict, one a line
  std::string out_path;   ///< one prediction a line, in the order of data_path's lines
};

struct App : AppInfo {
  /// Trains for config.epochs passes, calling `pass` after each (on every rank).
  std::function<void(Runtime&, const RunConfig&, const InfoCallback&, const PassCallback&)> train;
  /// Prints (rank 0) the plan of every loop the app runs, without training.
  std::function<void(Runtime&, const RunConfig&)> explain;
  /// Writes one prediction per line of the request's data, and reports its measure
  /// through `info` when the lines carry targets. Empty: the app has no predict.
  std::function<void(Runtime&, const PredictRequest&, const InfoCallback&)> predict;
};

AppInfo mf_info();
AppInfo slr_info();
AppInfo mlr_info();
AppInfo lda_info();
AppInfo word2vec_info();
AppInfo transe_info();

/// Every app's info, in the order `strata --help` lists them (common/catalogue.cpp).
const std::vector<AppInfo>& app_catalogue();
/// The info of the app called `name`; OptionError naming the known ones otherwise.
const AppInfo& find_app_info(const std::string& name);

/// Every app, in the catalogue's order (common/registry.cpp).
const std::vector<App>& all_apps();
/// The app called `name`; OptionError naming the known ones otherwise.
const App& find_app(const std::string& name);

}  // namespace strata::apps
