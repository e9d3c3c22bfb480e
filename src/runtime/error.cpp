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

// The length of the UTF-8 sequence starting at s[at], or 0 when it is not a valid one
// (overlong forms and surrogates included) or encodes a C1 control (U+0080-U+009F).
std::size_t utf8_length(std::string_view s, std::size_t at) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = byte(at);
  std::size_t n = 0;
  char32_t cp = 0;
  if (lead >= 0xC2 && lead <= 0xDF) n = 2, cp = lead & 0x1F;
  else if (lead >= 0xE0 && lead <= 0xEF) n = 3, cp = lead & 0x0F;
  else if (lead >= 0xF0 && lead <= 0xF4) n = 4, cp = lead & 0x07;
  else return 0;
  if (at + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(at + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(at + k) & 0x3F);
  }
  const char32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < least[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp <= 0x9F) return 0;
  return n;
}

}  // namespace

std::string printable(std::string_view text, std::size_t max) {
  std::string out;
  for (std::size_t at = 0; at < text.size();) {
    if (out.size() >= max) return out + "...";
    const auto c = static_cast<unsigned char>(text[at]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      ++at;
    } else if (const std::size_t n = c >= 0x80 ? utf8_length(text, at) : 0; n > 0) {
      out.append(text.substr(at, n));
      at += n;
    } else {
      out += fmt::format("\\x{:02x}", c);
      ++at;
    }
  }
  return out;
}

ParseError::ParseError(std::string file, std::int64_t line, std::string text, const std::string& reason)
    : Error(fmt::format("{}:{}: {}: '{}'", printable(file), line, reason, printable(text))),
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
