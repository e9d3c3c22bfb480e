#include "command_line.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

#include <fmt/format.h>

#include "strata/error.hpp"
#include "strata/runtime.hpp"

namespace strata::cli {

namespace {

// Walks "--key value" / "--key=value" pairs.
class Args {
 public:
  explicit Args(const std::vector<std::string>& a, std::size_t first) : a_(a), i_(first) {}
  bool done() const { return i_ >= a_.size(); }
  const std::string& peek() const { return a_[i_]; }
  /// The next word; for "--key=value" splits off the value for value().
  std::string key() {
    std::string k = a_[i_++];
    const auto eq = k.find('=');
    if (k.rfind("--", 0) == 0 && eq != std::string::npos) {
      pending_ = k.substr(eq + 1);
      has_pending_ = true;
      k.resize(eq);
    }
    return k;
  }
  std::string value(const std::string& key) {
    if (has_pending_) {
      has_pending_ = false;
      return pending_;
    }
    if (done()) throw OptionError(fmt::format("option {} needs a value", key));
    return a_[i_++];
  }
  /// Whether a value follows the key ("--key=v", or a next word that is no option).
  bool value_follows() const { return has_pending_ || (!done() && a_[i_].rfind("--", 0) != 0); }
  void no_value(const std::string& key) {
    if (has_pending_) throw OptionError(fmt::format("option {} takes no value", key));
  }

 private:
  const std::vector<std::string>& a_;
  std::size_t i_;
  std::string pending_;
  bool has_pending_ = false;
};

// An integer option in [min, max], checked as 64-bit before the caller narrows it.
std::int64_t integer(const std::string& key, const std::string& v, std::int64_t min, std::int64_t max) {
  apps::Settings s;
  s.declare(key.substr(2), v, "");
  return s.integer(key.substr(2), min, max);
}

constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();

void parse_train(CommandLine& cl, const std::vector<std::string>& args) {
  if (args.size() < 2 || args[1].rfind("-", 0) == 0)
    throw OptionError(fmt::format("strata {} needs an app: strata {} <app> (--data PATH | --synthetic SPEC)", args[0],
                                  args[0]));
  TrainCommand& t = cl.train;
  t.explain_only = args[0] == "explain";
  t.app = &apps::find_app_info(args[1]);
  t.config.synthetic = t.app->synthetic_keys;
  t.config.options = t.app->options;
  bool synthetic = false, recovering = false;
  Args a(args, 2);
  while (!a.done()) {
    const std::string k = a.key();
    if (k.rfind("--strata-", 0) == 0) cl.runtime_args.push_back(k + "=" + a.value(k));
    else if (k == "--data") t.config.data_path = a.value(k);
    else if (k == "--synthetic") {
      t.config.synthetic.parse_spec(a.value(k));
      synthetic = true;
    } else if (k == "--epochs") t.config.epochs = static_cast<int>(integer(k, a.value(k), 1, kIntMax));
    else if (k == "--seed") t.config.seed = static_cast<std::uint64_t>(integer(k, a.value(k), 0, INT64_MAX));
    else if (k == "--threads") cl.threads = static_cast<int>(integer(k, a.value(k), 1, kMaxThreadsPerRank));
    else if (k == "--plan") {
      const std::string given = a.value(k);
      std::string p = given;
      std::replace(p.begin(), p.end(), '-', '_');  // data-parallel, 2d-skewed
      try {
        t.config.plan = analysis::parse_strategy(p);
      } catch (const OptionError&) {  // the library's message uses its own names
        throw OptionError(fmt::format("--plan: unknown strategy '{}' (expected auto, serial, 1d, 2d, 2d-skewed, "
                                      "groups or data-parallel)",
                                      given));
      }
    }
    else if (k == "--serial") {
      a.no_value(k);
      t.config.serial = true;
    } else if (k == "--metrics" && !t.explain_only) t.metrics_path = a.value(k);
    else if (k == "--plot" && !t.explain_only) t.plot_path = a.value(k);
    else if (k == "--save" && !t.explain_only) t.config.save_dir = a.value(k);
    else if ((k == "--checkpoint-dir" || k == "--resume" || k == "--record" || k == "--replay") && !t.explain_only) {
      cl.runtime_args.push_back("--strata-" + k.substr(2) + "=" + a.value(k));
      recovering = true;
    } else if (k == "--checkpoint-every" && !t.explain_only) {
      cl.runtime_args.push_back("--strata-checkpoint-every=" + std::to_string(integer(k, a.value(k), 1, kIntMax)));
    } else if (k == "--checkpoint-write" && !t.explain_only) {
      const std::string how = a.value(k);
      if (how != "background" && how != "inline")
        throw OptionError(fmt::format("--checkpoint-write: expected 'background' or 'inline', got '{}'", how));
      cl.runtime_args.push_back("--strata-checkpoint-write=" + how);
    }
    else if (k.rfind("--", 0) == 0 && t.config.options.has(k.substr(2))) {
      // A yes/no option (default "no") given bare is a switch: "--nmf" is "--nmf yes".
      const bool bare = t.config.options.text(k.substr(2)) == "no" && !a.value_follows();
      t.config.options.set(k.substr(2), bare ? "yes" : a.value(k));
    }
    else
      throw OptionError(fmt::format("strata {} {}: unknown option '{}' (see strata --help)", args[0], t.app->name, k));
  }
  if (t.config.data_path.empty() == !synthetic)
    throw OptionError(fmt::format("strata {} {}: give exactly one of --data PATH and --synthetic SPEC", args[0],
                                  t.app->name));
  if (t.config.serial && t.config.plan)
    throw OptionError("--serial runs the serial program, which has no plan: drop --plan");
  if (t.config.serial && recovering)
    throw OptionError("--serial runs the serial program, which has no loop calls to checkpoint, resume, record or "
                      "replay: drop --checkpoint-dir / --resume / --record / --replay");
}

void parse_plot(CommandLine& cl, const std::vector<std::string>& args) {
  Args a(args, 1);
  while (!a.done()) {
    const std::string k = a.key();
    if (k == "-o" || k == "--output") cl.plot.output = a.value(k);
    else if (k == "--metric") cl.plot.metric = a.value(k);
    else if (k.rfind("-", 0) == 0) throw OptionError(fmt::format("strata plot: unknown option '{}'", k));
    else cl.plot.inputs.push_back(k);
  }
  if (cl.plot.inputs.empty()) throw OptionError("strata plot needs at least one metrics CSV file");
  if (cl.plot.output.empty()) throw OptionError("strata plot needs -o OUT.svg");
}

void parse_predict(CommandLine& cl, const std::vector<std::string>& args) {
  if (args.size() < 2 || args[1].rfind("-", 0) == 0)
    throw OptionError("strata predict needs an app: strata predict <app> --model DIR --data FILE --out FILE");
  PredictCommand& p = cl.predict;
  p.app = &apps::find_app_info(args[1]);
  Args a(args, 2);
  while (!a.done()) {
    const std::string k = a.key();
    if (k == "--model") p.request.model_dir = a.value(k);
    else if (k == "--data") p.request.data_path = a.value(k);
    else if (k == "--out") p.request.out_path = a.value(k);
    else if (k == "--threads") cl.threads = static_cast<int>(integer(k, a.value(k), 1, kMaxThreadsPerRank));
    else throw OptionError(fmt::format("strata predict {}: unknown option '{}' (see strata --help)", p.app->name, k));
  }
  for (const auto& [given, name] : {std::pair{&p.request.model_dir, "--model DIR"},
                                    {&p.request.data_path, "--data FILE"}, {&p.request.out_path, "--out FILE"}})
    if (given->empty()) throw OptionError(fmt::format("strata predict {} needs {}", p.app->name, name));
}

}  // namespace

CommandLine parse_command_line(const std::vector<std::string>& args) {
  CommandLine cl;
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") return cl;
  if (args[0] == "train" || args[0] == "explain") {
    cl.verb = args[0] == "train" ? CommandLine::Verb::train : CommandLine::Verb::explain;
    parse_train(cl, args);
  } else if (args[0] == "predict") {
    cl.verb = CommandLine::Verb::predict;
    parse_predict(cl, args);
  } else if (args[0] == "plot") {
    cl.verb = CommandLine::Verb::plot;
    parse_plot(cl, args);
  } else {
    throw OptionError(fmt::format("unknown command '{}' (train, explain, predict, plot; see strata --help)", args[0]));
  }
  return cl;
}

std::string usage() {
  std::string s =
      "usage:\n"
      "  strata train <app> (--data PATH | --synthetic SPEC) [--epochs N] [--seed S] [app options]\n"
      "               [--threads T] [--plan auto|serial|1d|2d|2d-skewed|groups|data-parallel] [--serial]\n"
      "               [--metrics OUT.csv] [--plot OUT.svg] [--save DIR]\n"
      "               [--checkpoint-dir DIR [--checkpoint-every N] [--checkpoint-write background|inline]]\n"
      "               [--resume DIR] [--record DIR | --replay DIR]\n"
      "  strata explain <app> (--data PATH | --synthetic SPEC) [app options] [--threads T] [--plan P]\n"
      "  strata predict <app> --model DIR --data FILE --out FILE   (mf: one prediction a line of FILE;\n"
      "               slr: a LIBSVM FILE, DIR/model.liblinear or a liblinear model, liblinear's predict -b 1 output;\n"
      "               mlr: a LIBSVM FILE, the same output with every class's probability)\n"
      "  strata plot A.csv [B.csv ...] -o OUT.svg [--metric NAME]\n"
      "Run under mpirun for several ranks. SPEC is key=value,... (keys per app below).\n"
      "--serial runs the app's plain C++ program instead of Strata (one process).\n"
      "--checkpoint-dir writes a checkpoint after every N-th loop call that changes the model (default 1:\n"
      "every pass), from a copy on a background thread unless --checkpoint-write inline; --resume DIR (same\n"
      "command otherwise) skips what the newest checkpoint there covers.\n"
      "--record DIR logs each loop call's order and results; --replay DIR reruns the command checking each\n"
      "call against the log, on the recorded ranks and threads or in one process with --threads 1.\n";
  for (const auto& app : apps::app_catalogue()) {
    s += fmt::format("\n{}: {}\n  --synthetic keys:", app.name, app.summary);
    for (const auto& e : app.synthetic_keys.entries()) s += fmt::format(" {}={}", e.name, e.value);
    s += "\n";
    for (const auto& e : app.options.entries()) s += fmt::format("  --{:<10} {} (default {})\n", e.name, e.help, e.value);
  }
  return s;
}

}  // namespace strata::cli
