#include "strata/io/header_line.hpp"

#include <charconv>
#include <cstring>
#include <system_error>

#include "strata/io/text_scan.hpp"

namespace strata::io {

namespace {

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_separator(char c) { return c == ' ' || c == '\t' || c == ','; }

// A whole field that std::from_chars reads as a double: "nan", "Inf", "infinity".
bool reads_as_number(std::string_view field) {
  double v = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
  return ec == std::errc() && end == field.data() + field.size();
}

}  // namespace

bool is_header_line(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
  std::size_t fields = 0;
  for (std::size_t i = 0; i < line.size();) {
    if (is_separator(line[i])) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < line.size() && !is_separator(line[end])) ++end;
    const std::string_view field = line.substr(i, end - i);
    if (!is_letter(field.front()) || reads_as_number(field)) return false;
    ++fields;
    i = end;
  }
  return fields > 0;
}

DataStart skip_header_line(std::string_view text, bool (*is_header)(std::string_view)) {
  std::size_t pos = 0;
  for (std::int64_t line_no = 1; pos < text.size(); ++line_no) {
    const std::size_t nl = text.find('\n', pos);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl;
    const std::string_view line = text.substr(pos, end - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    if (Scanner(line).blank_or_comment()) continue;
    if (is_header(line)) return {pos, line_no};
    break;
  }
  return {};
}

}  // namespace strata::io
