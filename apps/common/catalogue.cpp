// The apps' infos (names, help, options) without their run functions: all that the
// command line's parser needs (common/app.hpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/app.hpp"
#include "strata/error.hpp"

namespace strata::apps {

const std::vector<AppInfo>& app_catalogue() {
  static const std::vector<AppInfo> apps = {mf_info(),  slr_info(),      mlr_info(),
                                            lda_info(), word2vec_info(), transe_info()};
  return apps;
}

const AppInfo& find_app_info(const std::string& name) {
  std::vector<std::string> known;
  for (const auto& a : app_catalogue()) {
    if (a.name == name) return a;
    known.push_back(a.name);
  }
  throw OptionError(fmt::format("unknown app '{}' (known: {})", name, fmt::join(known, ", ")));
}

}  // namespace strata::apps
