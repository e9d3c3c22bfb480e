// Parallel line scanning: the machinery every text loader shares.
//
// The data region of a file is split into one byte range per rank and, inside a
// rank, one per thread; every range is snapped to line boundaries (a line belongs
// to the range holding its first byte). Each thread hands its lines to its own
// handler. Line numbers are recovered afterwards by a prefix sum over the line
// counts, so a malformed line is reported with its true file line number, and the
// same error is raised on every rank.
#pragma once

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "strata/detail/collective_error.hpp"
#include "strata/io/mapped_file.hpp"
#include "strata/io/text_scan.hpp"
#include "strata/runtime.hpp"

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

/// The job-wide outcome of a parallel scan.
struct ScanSummary {
  std::int64_t lines = 0;           ///< lines scanned by all ranks
  std::int64_t bad = 0;             ///< malformed lines (skipped) by all ranks
  std::int64_t bytes = 0;           ///< bytes of the data region
  std::int64_t local_bytes = 0;     ///< bytes this rank parsed
  std::vector<BadLine> bad_lines;   ///< this rank's first few, with file line numbers
  double seconds = 0;               ///< slowest rank's scan time
};

/// Scans the lines of file.text() from byte region_begin on, across ranks and
/// threads. handler_for(t) returns the handler of thread t. `lines_before` is the
/// number of lines before region_begin (headers), for line numbers. Collective.
template <class HandlerFor>
ScanSummary parallel_scan(Runtime& rt, const MappedFile& file, std::size_t region_begin, std::int64_t lines_before,
                          bool skip_bad, HandlerFor&& handler_for) {
  const auto start = std::chrono::steady_clock::now();
  const std::string_view text = file.text();
  const std::size_t region = text.size() - region_begin;
  const auto P = static_cast<std::size_t>(rt.size()), r = static_cast<std::size_t>(rt.rank());
  const auto [rb, re] = snap_to_lines(text, region_begin + region * r / P, region_begin + region * (r + 1) / P,
                                      region_begin);
  const int T = rt.threads();
  std::vector<ChunkScan> scans(static_cast<std::size_t>(T));
  rt.pool().run([&](int t) {
    const auto ut = static_cast<std::size_t>(t), uT = static_cast<std::size_t>(T);
    const auto [tb, te] = snap_to_lines(text, rb + (re - rb) * ut / uT, rb + (re - rb) * (ut + 1) / uT, rb);
    auto&& handler = handler_for(t);
    if constexpr (requires { handler.begin_chunk(std::size_t{}); }) handler.begin_chunk(te - tb);
    scans[ut] = scan_chunk(text.substr(tb, te - tb), handler, skip_bad);
  });
  // Before any line is reported: a file truncated under the map read zeros at its end.
  strata::detail::all_or_none(rt.comm(), [&] { file.check_unchanged(); });

  ScanSummary out;
  std::int64_t local_lines = 0, local_bad = 0;
  for (const auto& s : scans) local_lines += s.lines, local_bad += s.bad;
  std::int64_t offset = lines_before + rt.comm().exclusive_scan(local_lines, &out.lines);
  for (auto& s : scans) {
    for (auto& b : s.bad_lines) {
      b.line += offset + 1;
      out.bad_lines.push_back(std::move(b));
    }
    offset += s.lines;
  }
  if (!skip_bad) {
    strata::detail::all_or_none(rt.comm(), [&] {
      if (!out.bad_lines.empty()) {
        const BadLine& b = out.bad_lines.front();
        throw ParseError(file.path(), b.line, b.text, b.reason);
      }
    });
  }
  out.bad = rt.comm().allreduce(local_bad, ReduceOp::sum);
  out.bytes = static_cast<std::int64_t>(region);
  out.local_bytes = static_cast<std::int64_t>(re - rb);
  out.seconds = rt.comm().allreduce(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), ReduceOp::max);
  return out;
}

}  // namespace strata::io
