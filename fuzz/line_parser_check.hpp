// The checks every line-parser harness makes (triplets, edges, docword records).
//
// The text is scanned as a loader's thread scans its chunk (io::scan_chunk), each line
// handed to the parser through an Emit with a fuzzed index base and shape. Then:
//   * a line is rejected only with LineError, with a reason;
//   * an accepted line yields one element, or none exactly when it is blank or a
//     comment; its indices lie in [0, shape) and a floating-point value is finite;
//   * the scan sees the text's lines (reference_lines) in order, each once; without
//     skip_bad it stops at the first bad line; it keeps the first few bad lines with
//     their text and 0-based position.
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "fuzz_check.hpp"
#include "strata/io/chunk_scan.hpp"
#include "strata/io/parsers.hpp"

namespace strata::fuzz {

/// Every value is acceptable to a format that says nothing more of its values.
struct AnyValue {
  template <class T>
  bool operator()(const T&) const {
    return true;
  }
};

template <class T, std::size_t N, class Parser, class ValueCheck>
class CheckedParser {
 public:
  CheckedParser(const Parser& parser, std::int64_t base, std::optional<Shape<N>> shape, ValueCheck value_ok)
      : parser_(parser), base_(filled(base)), shape_(shape), value_ok_(value_ok), emit_(base_, shape_, out_) {}

  void operator()(std::string_view line) {
    seen.push_back(line);
    const std::size_t before = out_.size();
    try {
      parser_(line, emit_);
    } catch (const io::LineError& e) {
      FUZZ_CHECK(!e.reason.empty(), "a LineError without a reason");
      throw;
    }
    const std::size_t added = out_.size() - before;
    const bool blank = io::Scanner(line).blank_or_comment();
    FUZZ_CHECK(added == (blank ? 0u : 1u), "an accepted line must yield one element, a blank one none");
    for (std::size_t k = before; k < out_.size(); ++k) check(out_[k]);
  }

  std::vector<std::string_view> seen;  ///< every line handed over, in order

 private:
  static Index<N> filled(std::int64_t v) {
    Index<N> i;
    i.fill(v);
    return i;
  }

  void check(const Entry<T, N>& e) const {
    for (std::size_t d = 0; d < N; ++d) {
      FUZZ_CHECK(e.index[d] >= 0, "an index below 0 after subtracting the base");
      if (shape_) FUZZ_CHECK(e.index[d] < (*shape_)[d], "an index outside the shape");
    }
    if constexpr (std::is_floating_point_v<T>) FUZZ_CHECK(std::isfinite(e.value), "a value that is not finite");
    FUZZ_CHECK(value_ok_(e.value), "a value the format does not allow");
  }

  const Parser& parser_;
  Index<N> base_;
  std::optional<Shape<N>> shape_;  // before emit_, which keeps a reference to it
  ValueCheck value_ok_;
  std::vector<Entry<T, N>> out_;
  io::Emit<T, N> emit_;
};

/// Scans `text` with `parser` (through CheckedParser) and checks what the scan reports;
/// `value_ok` says which values the format allows.
template <class T, std::size_t N, class Parser, class ValueCheck = AnyValue>
void check_line_parser(const Parser& parser, std::string_view text, std::int64_t base,
                       const std::optional<Shape<N>>& shape, bool skip_bad, ValueCheck value_ok = {}) {
  CheckedParser<T, N, Parser, ValueCheck> handler(parser, base, shape, value_ok);
  const io::ChunkScan scan = io::scan_chunk(text, handler, skip_bad);
  const std::vector<std::string_view> lines = reference_lines(text);
  FUZZ_CHECK(scan.lines == static_cast<std::int64_t>(handler.seen.size()), "line count != lines handed over");
  for (std::size_t k = 0; k < handler.seen.size(); ++k)
    FUZZ_CHECK(k < lines.size() && handler.seen[k] == lines[k], "the scan's lines differ from the text's");
  FUZZ_CHECK(scan.bad <= scan.lines, "more bad lines than lines");
  FUZZ_CHECK(scan.bad_lines.size() == std::min<std::size_t>(static_cast<std::size_t>(scan.bad), 5),
             "the scan keeps the first five bad lines");
  if (skip_bad || scan.bad == 0)
    FUZZ_CHECK(handler.seen.size() == lines.size(), "the scan stopped early");
  else
    FUZZ_CHECK(scan.bad == 1 && scan.bad_lines[0].line == scan.lines - 1, "without skip_bad: stop at the bad line");
  for (const io::BadLine& b : scan.bad_lines) {
    FUZZ_CHECK(b.line >= 0 && b.line < scan.lines, "a bad line's position outside the scan");
    FUZZ_CHECK(b.text == lines[static_cast<std::size_t>(b.line)], "a bad line's text is not that line");
    FUZZ_CHECK(!b.reason.empty(), "a bad line without a reason");
  }
}

/// The settings a line-parser harness takes from its input's first bytes: the index
/// base (0 or 1), whether a shape is given (then extents 0..255 per dimension, so
/// that out-of-shape indices are common) and skip_bad.
template <std::size_t N>
struct LineParserSettings {
  std::int64_t base = 0;
  std::optional<Shape<N>> shape;
  bool skip_bad = false;

  explicit LineParserSettings(Settings& in) {
    const std::uint8_t flags = in.byte();
    base = flags & 1;
    skip_bad = (flags & 2) != 0;
    if (flags & 4) {
      Shape<N> s;
      for (auto& e : s) e = in.byte();
      shape = s;
    }
  }
};

}  // namespace strata::fuzz
