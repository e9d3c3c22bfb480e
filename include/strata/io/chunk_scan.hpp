// Scanning one chunk of text line by line: what each thread of a parallel scan
// (scan.hpp) does with its byte range. Apart from scan.hpp so that it can be tested
// and fuzzed without a Runtime.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "strata/io/text_scan.hpp"

namespace strata::io {

struct BadLine {
  std::int64_t line = 0;  ///< 1-based line number in the file
  std::string text;
  std::string reason;
};

/// What scanning one chunk found.
struct ChunkScan {
  std::int64_t lines = 0;
  std::int64_t bad = 0;
  std::vector<BadLine> bad_lines;  ///< first few; line = 0-based position in the chunk
};

/// Calls handler(line) for every line of `chunk`. A LineError marks the line bad;
/// without skip_bad, scanning stops at the first bad line.
template <class Handler>
ChunkScan scan_chunk(std::string_view chunk, Handler& handler, bool skip_bad, std::size_t keep = 5) {
  ChunkScan s;
  const char* p = chunk.data();
  const char* const end = p + chunk.size();
  while (p < end) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
    const char* line_end = nl ? nl : end;
    try {
      handler(std::string_view(p, static_cast<std::size_t>(line_end - p)));
    } catch (LineError& e) {
      ++s.bad;
      if (s.bad_lines.size() < keep) s.bad_lines.push_back({s.lines, std::string(p, line_end), std::move(e.reason)});
      if (!skip_bad) {
        ++s.lines;
        return s;
      }
    }
    ++s.lines;
    p = nl ? nl + 1 : end;
  }
  return s;
}

}  // namespace strata::io
