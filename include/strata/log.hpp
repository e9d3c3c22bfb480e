// Rank-prefixed logging. Each line is written with one call so lines from several
// threads or ranks never interleave mid-line.
#pragma once

#include <chrono>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace strata {

enum class LogLevel { debug = 0, info = 1, warn = 2, error = 3, off = 4 };

/// Parses "debug", "info", "warn", "error" or "off"; throws OptionError otherwise.
LogLevel parse_log_level(std::string_view text);

class Logger {
 public:
  Logger(int rank, int size, LogLevel level);

  LogLevel level() const { return level_; }
  void set_level(LogLevel l) { level_ = l; }
  bool enabled(LogLevel l) const { return l >= level_; }

  /// Writes "[strata r<rank>/<size> <seconds>s] message" to stderr.
  void write(LogLevel l, std::string_view message) const;

  template <class... A>
  void log(LogLevel l, fmt::format_string<A...> f, A&&... args) const {
    if (enabled(l)) write(l, fmt::format(f, std::forward<A>(args)...));
  }

 private:
  int rank_, size_;
  LogLevel level_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace strata
