#include "training.hpp"

#include <algorithm>
#include <cmath>
#include <new>
#include <system_error>

#include <fmt/format.h>

#include "common/run_binding.hpp"
#include "strata/error.hpp"
#include "strata/recovery.hpp"

namespace strata::cli {

namespace {

// Thrown from the pass callback to end training after a diverged pass.
struct Diverged {
  std::string message;
};

}  // namespace

TrainingResult run_training(Runtime& rt, const TrainCommand& t, const apps::InfoCallback& info,
                            const apps::PassCallback& on_pass) {
  TrainingResult result;
  auto report = [&](const apps::PassReport& r) {
    result.passes.push_back(r);
    on_pass(r);
    // A restored pass replays a checkpointed run that did not diverge; a figure it
    // cannot know (one taken outside loops) is NaN there.
    for (const auto& m : r.metrics)
      if (!r.restored && !std::isfinite(m.value))
        throw Diverged{fmt::format("training diverged: {} is {} after pass {}; stopped{}. A smaller --lr usually "
                                   "helps{}",
                                   m.name, m.value, r.pass, t.config.save_dir.empty() ? "" : ", nothing saved",
                                   t.config.plan == analysis::Strategy::data_parallel
                                       ? ", and with --plan data-parallel so do clocks more often (--clock)"
                                       : "")};
  };
  apps::bind_run_to_checkpoints(rt, *t.app, t.config);
  try {
    apps::find_app(t.app->name).train(rt, t.config, info, report);
  } catch (const Diverged& d) {
    result.diverged = d.message;
  }
  recovery::finish_checkpoints(rt);
  return result;
}

std::vector<std::string> runtime_arguments(const CommandLine& cl) {
  std::vector<std::string> args;
  if (cl.threads > 0) args.push_back("--strata-threads=" + std::to_string(cl.threads));
  args.insert(args.end(), cl.runtime_args.begin(), cl.runtime_args.end());
  return args;
}

std::string failure_line(const std::exception& e) {
  std::string what;
  if (dynamic_cast<const Error*>(&e)) what = e.what();
  else if (dynamic_cast<const std::bad_alloc*>(&e))
    what = "out of memory: an allocation failed (a size in the data or the options is too large for this machine)";
  else if (dynamic_cast<const std::system_error*>(&e)) what = fmt::format("system error: {}", e.what());
  else what = fmt::format("unexpected error: {}", e.what());
  std::replace(what.begin(), what.end(), '\n', ' ');
  return printable(what, 4000);
}

}  // namespace strata::cli
