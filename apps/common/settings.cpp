#include "common/settings.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "strata/error.hpp"

namespace strata::apps {

Settings& Settings::declare(std::string name, std::string default_value, std::string help) {
  entries_.push_back({std::move(name), std::move(default_value), std::move(help)});
  return *this;
}

bool Settings::has(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.name == name) return true;
  return false;
}

const Settings::Entry& Settings::get(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.name == name) return e;
  std::vector<std::string> known;
  for (const auto& e : entries_) known.push_back(e.name);
  throw OptionError(fmt::format("unknown {}{} (known: {})", origin_, name, fmt::join(known, ", ")));
}

void Settings::set(const std::string& name, const std::string& value) {
  const_cast<Entry&>(get(name)).value = value;
}

void Settings::parse_spec(const std::string& spec) {
  std::size_t begin = 0;
  while (begin <= spec.size()) {
    const std::size_t end = std::min(spec.find(',', begin), spec.size());
    const std::string part = spec.substr(begin, end - begin);
    const auto eq = part.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == part.size())
      throw OptionError(fmt::format("{}'{}': '{}' is not key=value", origin_, spec, part));
    set(part.substr(0, eq), part.substr(eq + 1));
    begin = end + 1;
  }
}

const std::string& Settings::text(const std::string& name) const { return get(name).value; }

std::int64_t Settings::integer(const std::string& name, std::int64_t min, std::int64_t max) const {
  const std::string& v = text(name);
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end) throw OptionError(fmt::format("{}{}: '{}' is not an integer", origin_, name, v));
  // Checked as 64-bit before any caller narrows it: a value beyond the range is an
  // error, never wrapped round (3000000000 epochs must not become -1294967296).
  if (errno == ERANGE || x < min || x > max)
    throw OptionError(fmt::format("{}{}: {} is outside the allowed range [{}, {}]", origin_, name, v, min, max));
  return x;
}

double Settings::real(const std::string& name, double min, double max) const {
  const std::string& v = text(name);
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end || !std::isfinite(x))
    throw OptionError(fmt::format("{}{}: '{}' is not a number", origin_, name, v));
  if (x < min || x > max) throw OptionError(fmt::format("{}{}: {} is outside [{}, {}]", origin_, name, x, min, max));
  return x;
}

const std::string& Settings::choice(const std::string& name, const std::vector<std::string>& choices) const {
  const std::string& v = text(name);
  for (const auto& c : choices)
    if (c == v) return v;
  throw OptionError(fmt::format("{}{}: '{}' is not one of {}", origin_, name, v, fmt::join(choices, ", ")));
}

std::string Settings::describe() const {
  std::vector<std::string> parts;
  for (const auto& e : entries_) parts.push_back(e.name + "=" + e.value);
  return fmt::format("{}", fmt::join(parts, ","));
}

}  // namespace strata::apps
