// The `strata` command line (cli::parse_command_line): the input, split at NUL bytes,
// is the argument list (without the program name).
//   * a command line is rejected only with OptionError;
//   * an accepted one is consistent: `help` sets nothing; `train` and `explain` name
//     an app of the catalogue, epochs at least 1, threads 0 (the default) or
//     1..kMaxThreadsPerRank, no --plan with --serial, and pass on only
//     --strata-KEY=VALUE runtime options; `explain` writes no files; `plot` has
//     inputs that are not options and an output;
//   * every app option and --synthetic key keeps a value (none is dropped or added).
#include <string>
#include <vector>

#include "command_line.hpp"
#include "fuzz_check.hpp"
#include "strata/error.hpp"
#include "strata/runtime.hpp"

namespace {

using strata::cli::CommandLine;

std::vector<std::string> split_args(std::string_view input) {
  std::vector<std::string> args;
  if (input.empty()) return args;
  for (std::size_t at = 0;;) {
    const std::size_t nul = input.find('\0', at);
    args.emplace_back(input.substr(at, nul == std::string_view::npos ? input.npos : nul - at));
    if (nul == std::string_view::npos) return args;
    at = nul + 1;
  }
}

bool same_keys(const strata::apps::Settings& a, const strata::apps::Settings& b) {
  if (a.entries().size() != b.entries().size()) return false;
  for (std::size_t k = 0; k < a.entries().size(); ++k)
    if (a.entries()[k].name != b.entries()[k].name) return false;
  return true;
}

void check_train(const CommandLine& cl) {
  const auto& t = cl.train;
  FUZZ_CHECK(t.app != nullptr, "train or explain without an app");
  const strata::apps::AppInfo& info = strata::apps::find_app_info(t.app->name);
  FUZZ_CHECK(&info == t.app, "an app that is not the catalogue's");
  FUZZ_CHECK(same_keys(t.config.options, info.options) && same_keys(t.config.synthetic, info.synthetic_keys),
             "app options or --synthetic keys dropped or added");
  FUZZ_CHECK(t.config.epochs >= 1, "epochs below 1");
  FUZZ_CHECK(cl.threads >= 0 && cl.threads <= strata::kMaxThreadsPerRank, "threads out of range");
  FUZZ_CHECK(!(t.config.serial && t.config.plan), "--serial with --plan");
  for (const auto& a : cl.runtime_args)
    FUZZ_CHECK(a.rfind("--strata-", 0) == 0 && a.find('=') != std::string::npos, "a runtime option not --strata-K=V");
  if (cl.verb == CommandLine::Verb::explain)
    FUZZ_CHECK(t.explain_only && t.metrics_path.empty() && t.plot_path.empty() && t.config.save_dir.empty(),
               "explain with files to write");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::string> args = split_args(strata::fuzz::as_text(data, size));
  CommandLine cl;
  try {
    cl = strata::cli::parse_command_line(args);
  } catch (const strata::OptionError& e) {
    FUZZ_CHECK(*e.what() != '\0', "an OptionError without a message");
    return 0;
  }
  switch (cl.verb) {
    case CommandLine::Verb::help:
      FUZZ_CHECK(cl.train.app == nullptr && cl.plot.inputs.empty() && cl.runtime_args.empty(), "help with options");
      FUZZ_CHECK(!strata::cli::usage().empty(), "no usage text");
      break;
    case CommandLine::Verb::train:
    case CommandLine::Verb::explain:
      check_train(cl);
      break;
    case CommandLine::Verb::plot:
      FUZZ_CHECK(!cl.plot.inputs.empty() && !cl.plot.output.empty(), "plot without inputs or output");
      for (const auto& i : cl.plot.inputs) FUZZ_CHECK(i.rfind("-", 0) != 0, "an option taken for a plot input");
      break;
    case CommandLine::Verb::predict: {
      const auto& r = cl.predict.request;
      FUZZ_CHECK(cl.predict.app != nullptr, "predict without an app");
      FUZZ_CHECK(!r.model_dir.empty() && !r.data_path.empty() && !r.out_path.empty(), "predict without its files");
      break;
    }
  }
  return 0;
}
