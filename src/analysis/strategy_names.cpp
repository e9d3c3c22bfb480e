// The strategies' names, both ways: for plans and messages, and for --plan options.
// Apart from strategy.cpp so that a command-line parser links no dependence analysis.
#include <fmt/format.h>

#include "strata/analysis/strategy.hpp"
#include "strata/error.hpp"

namespace strata::analysis {

std::string to_string(Strategy s) {
  switch (s) {
    case Strategy::serial:
      return "serial";
    case Strategy::one_d:
      return "one_d";
    case Strategy::two_d:
      return "two_d";
    case Strategy::two_d_skewed:
      return "two_d_skewed";
    case Strategy::groups:
      return "groups";
    case Strategy::data_parallel:
      return "data_parallel";
  }
  return "?";
}

std::optional<Strategy> parse_strategy(std::string_view name) {
  if (name == "auto") return std::nullopt;
  for (Strategy s : {Strategy::serial, Strategy::one_d, Strategy::two_d, Strategy::two_d_skewed,
                     Strategy::groups, Strategy::data_parallel})
    if (name == to_string(s)) return s;
  if (name == "1d") return Strategy::one_d;
  if (name == "2d") return Strategy::two_d;
  if (name == "2d_skewed") return Strategy::two_d_skewed;
  throw OptionError(fmt::format(
      "strategy: unknown value '{}' (expected auto, serial, one_d, two_d, two_d_skewed, "
      "groups or data_parallel)",
      name));
}

}  // namespace strata::analysis
