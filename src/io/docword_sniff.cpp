// Telling a UCI docword file from other text by its first lines (text_records.hpp).
#include <charconv>
#include <cstdint>
#include <string_view>
#include <system_error>

#include "strata/io/text_records.hpp"

namespace strata::io {

namespace {

// The number of fields of `line` when every one is an integer (separated by spaces,
// tabs or commas); -1 when some field is not.
int integer_fields(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  int n = 0;
  for (std::size_t i = 0;;) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == ',')) ++i;
    if (i == line.size()) return n;
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(line.data() + i, line.data() + line.size(), v);
    if (ec != std::errc() || (end != line.data() + line.size() && *end != ' ' && *end != '\t' && *end != ','))
      return -1;
    ++n;
    i = static_cast<std::size_t>(end - line.data());
  }
}

}  // namespace

bool looks_like_docword(std::string_view text) {
  int fields[4] = {-1, -1, -1, -1};
  std::size_t pos = 0;
  for (int k = 0; k < 4 && pos < text.size(); ++k) {
    const std::size_t nl = text.find('\n', pos);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl;
    fields[k] = integer_fields(text.substr(pos, end - pos));
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
  }
  return fields[0] == 1 && ((fields[1] == 1 && fields[2] == 1) || fields[3] == 3);
}

}  // namespace strata::io
