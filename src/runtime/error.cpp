#include "strata/error.hpp"

#include <fmt/format.h>

namespace strata {

CommError::CommError(std::string op, int rank, const std::string& detail)
    : Error(fmt::format("rank {}: {} failed: {}", rank, op, detail)), op_(std::move(op)), rank_(rank) {}

TimeoutError::TimeoutError(std::string op, int rank, double seconds)
    : Error(fmt::format("rank {}: timed out after {:.1f} s waiting for {}", rank, seconds, op)),
      op_(std::move(op)),
      rank_(rank) {}

namespace {
std::string clip(const std::string& text) {
  constexpr std::size_t kMax = 200;
  return text.size() <= kMax ? text : text.substr(0, kMax) + "...";
}
}  // namespace

ParseError::ParseError(std::string file, std::int64_t line, std::string text, const std::string& reason)
    : Error(fmt::format("{}:{}: {}: '{}'", file, line, reason, clip(text))),
      file_(std::move(file)),
      line_(line),
      text_(std::move(text)),
      reason_(reason) {}

namespace detail {
void fail_check(const char* expr, const char* file, int line, const std::string& msg) {
  throw InternalError(fmt::format("{}:{}: check '{}' failed: {}", file, line, expr, msg));
}
}  // namespace detail

}  // namespace strata
