// Walking a text file's lines and their whitespace-separated words, for the apps that
// read plain text (word2vec's sentences, transe's triples).
#pragma once

#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>

#include "strata/error.hpp"

namespace strata::apps {

/// Calls f(line number, line) for each line of `text` (split at '\n'; a final newline
/// ends the last line rather than starting an empty one). ParseError naming `path`
/// and the line for a NUL byte: the file is not text.
template <class F>
void for_each_line(const std::string& path, std::string_view text, F&& f) {
  std::int64_t lineno = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t nl = text.find('\n', pos);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl;
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++lineno;
    if (line.find('\0') != std::string_view::npos)
      throw ParseError(path, lineno, std::string(line), "a NUL byte: this is not a text file");
    f(lineno, line);
  }
}

/// Calls f(word) for each whitespace-separated word of `line`, in order.
template <class F>
void for_each_word(std::string_view line, F&& f) {
  for (std::size_t i = 0; i < line.size();) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    std::size_t j = i;
    while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
    if (j > i) f(line.substr(i, j - i));
    i = j;
  }
}

}  // namespace strata::apps
