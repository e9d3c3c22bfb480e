#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/app.hpp"
#include "strata/error.hpp"

namespace strata::apps {

// Each app's app.cpp defines its factory.
App mf_app();
App slr_app();
App lda_app();

const std::vector<App>& all_apps() {
  static const std::vector<App> apps = {mf_app(), slr_app(), lda_app()};
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
