#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/app.hpp"
#include "strata/error.hpp"

namespace strata::apps {

// Each app's app.cpp defines its factory.
App mf_app();
App slr_app();
App lda_app();

namespace {

// The serial programs are plain C++ for one process: refused under mpirun here, once,
// rather than in every app.
App one_process_serial(App app) {
  app.train = [train = std::move(app.train)](Runtime& rt, const RunConfig& c, const InfoCallback& info,
                                              const PassCallback& report) {
    if (c.serial && rt.size() > 1)
      throw OptionError("--serial runs the serial program: start one process, not mpirun");
    train(rt, c, info, report);
  };
  return app;
}

}  // namespace

const std::vector<App>& all_apps() {
  static const std::vector<App> apps = {one_process_serial(mf_app()), one_process_serial(slr_app()),
                                        one_process_serial(lda_app())};
  return apps;
}

const App& find_app(const std::string& name) {
  std::vector<std::string> known;
  for (const auto& a : all_apps()) {
    if (a.name == name) return a;
    known.push_back(a.name);
  }
  throw OptionError(fmt::format("unknown app '{}' (known: {})", name, fmt::join(known, ", ")));
}

}  // namespace strata::apps
