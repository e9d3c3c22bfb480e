#include "strata/log.hpp"

#include <cstdio>
#include <string>

#include "strata/error.hpp"

namespace strata {

LogLevel parse_log_level(std::string_view text) {
  if (text == "debug") return LogLevel::debug;
  if (text == "info") return LogLevel::info;
  if (text == "warn") return LogLevel::warn;
  if (text == "error") return LogLevel::error;
  if (text == "off") return LogLevel::off;
  throw OptionError(fmt::format("--strata-log: expected debug, info, warn, error or off, got '{}'", text));
}

Logger::Logger(int rank, int size, LogLevel level)
    : rank_(rank), size_(size), level_(level), start_(std::chrono::steady_clock::now()) {}

void Logger::write(LogLevel l, std::string_view message) const {
  static constexpr const char* kTag[] = {"debug", "", "warning", "error", ""};
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const char* tag = kTag[static_cast<int>(l)];
  std::string line = fmt::format("[strata r{}/{} {:.3f}s] {}{}{}\n", rank_, size_, t, tag, *tag ? ": " : "", message);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace strata
