// Sealing a fuzzed manifest: both manifest formats end with a checksum of the text
// before that line, which random bytes almost never match. A sealed input is cut at
// its first checksum line, ended with a newline and given the checksum line it needs,
// so that a harness reaches the fields behind the checksum.
#pragma once

#include <string>
#include <string_view>

namespace strata::fuzz {

/// `key` starts the checksum line ("manifest_xxh3=", "checksum "); checksum(text) gives
/// the rest of it.
template <class Checksum>
std::string seal_manifest(std::string_view input, std::string_view key, const Checksum& checksum) {
  std::string text(input);
  for (std::size_t at = 0; at < text.size();) {
    if (std::string_view(text).substr(at).starts_with(key)) {
      text.resize(at);
      break;
    }
    const std::size_t nl = text.find('\n', at);
    at = nl == std::string::npos ? text.size() : nl + 1;
  }
  if (!text.empty() && text.back() != '\n') text += '\n';
  return text + std::string(key) + checksum(text) + "\n";
}

}  // namespace strata::fuzz
