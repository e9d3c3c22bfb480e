// Parallel line scanning: the machinery every text loader shares.
//
// The data region of a file is split into one byte range per rank and, inside a
// rank, one per thread; every range is snapped to line boundaries (a line belongs
// to the range holding its first byte). Each thread hands its lines to its own
// handler. Line numbers are recovered afterwards by a prefix sum over the line
// counts, so a malformed line is reported with its true file line number, and the
// same error is raised on every rank.
#pragma once

#include <algorithm>
#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "strata/detail/collective_error.hpp"
#include "strata/io/chunk_scan.hpp"
#include "strata/io/mapped_file.hpp"
#include "strata/runtime.hpp"

namespace strata::io {

/// The job-wide outcome of a parallel scan.
struct ScanSummary {
  std::int64_t lines = 0;           ///< lines scanned by all ranks
  std::int64_t bad = 0;             ///< malformed lines (skipped) by all ranks
  std::int64_t bytes = 0;           ///< bytes of the data region
  std::int64_t local_bytes = 0;     ///< bytes this rank parsed
  std::vector<BadLine> bad_lines;   ///< this rank's first few, with file line numbers
  double seconds = 0;               ///< slowest rank's scan time
};

/// Scans the lines [begin, end) of the file (a range on line boundaries) with
/// scan_chunk, a piece of about `piece` bytes (32 MB) at a time, releasing each
/// piece's pages once its lines are parsed (MappedFile::release), so a load holds its
/// output and about a piece of the file per thread. The result is scan_chunk's over
/// the whole range.
template <class Handler>
ChunkScan scan_releasing(const MappedFile& file, std::size_t begin, std::size_t end, Handler& handler, bool skip_bad,
                         std::size_t piece = std::size_t{32} << 20, std::size_t keep = 5) {
  const std::string_view text = file.text();
  piece = std::max<std::size_t>(piece, 1);  // a piece of 0 bytes would never advance
  ChunkScan total;
  for (std::size_t at = begin; at < end;) {
    const std::size_t stop = end - at <= piece ? end : snap_to_lines(text, at + piece, at + piece, begin).first;
    ChunkScan part = scan_chunk(text.substr(at, stop - at), handler, skip_bad, keep);
    for (auto& b : part.bad_lines) {
      b.line += total.lines;
      if (total.bad_lines.size() < keep) total.bad_lines.push_back(std::move(b));
    }
    total.lines += part.lines;
    total.bad += part.bad;
    file.release(at, stop);
    if (!skip_bad && part.bad > 0) break;  // scan_chunk stopped at the first bad line
    at = stop;
  }
  return total;
}

/// Scans the lines of file.text() from byte region_begin on, across ranks and
/// threads. handler_for(t) returns the handler of thread t. `lines_before` is the
/// number of lines before region_begin (headers), for line numbers. Collective.
template <class HandlerFor>
ScanSummary parallel_scan(Runtime& rt, const MappedFile& file, std::size_t region_begin, std::int64_t lines_before,
                          bool skip_bad, HandlerFor&& handler_for) {
  const auto start = std::chrono::steady_clock::now();
  const std::string_view text = file.text();
  const std::size_t region = text.size() - region_begin;
  const auto [rb, re] = line_share(text, region_begin, text.size(), static_cast<std::size_t>(rt.rank()),
                                   static_cast<std::size_t>(rt.size()));
  const int T = rt.threads();
  std::vector<ChunkScan> scans(static_cast<std::size_t>(T));
  rt.pool().run([&](int t) {
    const auto ut = static_cast<std::size_t>(t);
    const auto [tb, te] = line_share(text, rb, re, ut, static_cast<std::size_t>(T));
    auto&& handler = handler_for(t);
    if constexpr (requires { handler.begin_chunk(std::size_t{}); }) handler.begin_chunk(te - tb);
    scans[ut] = scan_releasing(file, tb, te, handler, skip_bad);
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
