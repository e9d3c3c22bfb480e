#include <fmt/format.h>

#include "common/app.hpp"
#include "strata/error.hpp"

namespace strata::apps {

// Each app's app.cpp defines its factory.
App mf_app();
App slr_app();
App mlr_app();
App lda_app();
App word2vec_app();
App transe_app();

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

// The same apps in the same order as the catalogue, which the command line parses
// against: checked once, so a new app cannot be added to one list only.
const std::vector<App>& all_apps() {
  static const std::vector<App> apps = [] {
    std::vector<App> a = {one_process_serial(mf_app()), one_process_serial(slr_app()), one_process_serial(mlr_app()),
                          one_process_serial(lda_app()), one_process_serial(word2vec_app()),
                          one_process_serial(transe_app())};
    const auto& catalogue = app_catalogue();
    STRATA_CHECK(a.size() == catalogue.size(), "the apps and the app catalogue differ");
    for (std::size_t k = 0; k < a.size(); ++k)
      STRATA_CHECK(a[k].name == catalogue[k].name, fmt::format("app {} is {} in the catalogue", a[k].name,
                                                              catalogue[k].name));
    return a;
  }();
  return apps;
}

const App& find_app(const std::string& name) {
  const AppInfo& info = find_app_info(name);  // OptionError for an unknown name
  for (const auto& a : all_apps())
    if (a.name == info.name) return a;
  throw InternalError(fmt::format("app {} is in the catalogue only", name));
}

}  // namespace strata::apps
