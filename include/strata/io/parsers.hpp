// Built-in line parsers, and the interface for user parsers.
//
// A line parser is any callable `parser(std::string_view line, io::Emit<T, N>& emit)`
// that calls emit(index, value) for each element the line holds (none for blank or
// comment lines) and throws io::LineError{"reason"} for a malformed line. Indices
// are passed as they appear in the file; Emit subtracts the index base and checks
// them against the shape, so parsers stay format-only. A parser whose format may
// start with a header line has a static member `bool is_header(std::string_view)`;
// the loaders then skip the first line that is not blank or a comment when it says so.
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "strata/index.hpp"
#include "strata/io/header_line.hpp"
#include "strata/io/text_scan.hpp"

namespace strata::io {

/// Collects a thread's parsed elements.
template <class T, std::size_t N>
class Emit {
 public:
  /// `base` is subtracted from each dimension's index (1 for 1-based files).
  Emit(const Index<N>& base, const std::optional<Shape<N>>& shape, std::vector<Entry<T, N>>& out)
      : base_(base), shape_(shape), out_(out) {}

  void operator()(Index<N> i, const T& value) {
    for (std::size_t d = 0; d < N; ++d) {
      i[d] -= base_[d];
      if (i[d] < 0) throw LineError{fmt::format("index {} is below the index base {}", i[d] + base_[d], base_[d])};
      if (shape_ && i[d] >= (*shape_)[d])
        throw LineError{fmt::format("index {} is outside the shape {} (indices counted from {})",
                                    i[d] + base_[d], to_string(*shape_), base_[d])};
    }
    out_.push_back({i, value});
  }

 private:
  Index<N> base_;
  const std::optional<Shape<N>>& shape_;
  std::vector<Entry<T, N>>& out_;
};

namespace detail {
template <class T>
T finite(T v) {
  if constexpr (std::is_floating_point_v<T>)
    if (!std::isfinite(v)) throw LineError{"value is not a finite number"};
  return v;
}
}  // namespace detail

}  // namespace strata::io

namespace strata::parse {

/// "row col value": rating triplets, separated by spaces, tabs or commas.
struct Triplets {
  template <class T>
  void operator()(std::string_view line, io::Emit<T, 2>& emit) const {
    io::Scanner s(line);
    if (s.blank_or_comment()) return;
    const std::int64_t i = s.get_index("row index");
    s.separator("column index");
    const std::int64_t j = s.get_index("column index");
    s.separator("value");
    const T v = io::detail::finite(s.template get_number<T>("value"));
    s.finish("row, column and value");
    emit({i, j}, v);
  }
};
inline constexpr Triplets triplets{};

/// "src dst [weight]": edge lists; a missing weight is 1.
struct Edges {
  template <class T>
  void operator()(std::string_view line, io::Emit<T, 2>& emit) const {
    io::Scanner s(line);
    if (s.blank_or_comment()) return;
    const std::int64_t a = s.get_index("source vertex");
    s.separator("target vertex");
    const std::int64_t b = s.get_index("target vertex");
    T w = T(1);
    const bool more = s.skip_blanks();
    if (!s.at_end() && *s.pos() != '#') {
      if (!more && *s.pos() != ',') throw io::LineError{"expected a separator before the weight"};
      if (*s.pos() == ',') s.separator("weight");
      w = io::detail::finite(s.template get_number<T>("weight"));
    }
    s.finish("source, target and weight");
    emit({a, b}, w);
  }
};
inline constexpr Edges edges{};

/// "doc word count" records of a UCI bag-of-words (docword) file, after its header.
struct DocwordRecords {
  template <class T>
  void operator()(std::string_view line, io::Emit<T, 2>& emit) const {
    io::Scanner s(line);
    if (s.blank_or_comment()) return;
    const std::int64_t d = s.get_index("document id");
    s.separator("word id");
    const std::int64_t w = s.get_index("word id");
    s.separator("count");
    const T c = io::detail::finite(s.template get_number<T>("count"));
    if (!(c > T(0))) throw io::LineError{"count must be positive"};
    s.finish("document, word and count");
    emit({d, w}, c);
  }
};
inline constexpr DocwordRecords docword_records{};

/// "user item rating [timestamp]": rating files as MovieLens ships them (ratings.csv,
/// u.data). Ids are non-negative integers of at most 18 digits (so below 2^63: a
/// longer id is a malformed line, never a saturated one), the rating a finite number
/// of type T (one that T cannot hold, as 1e300 for float, is malformed), and the
/// optional fourth field an integer timestamp, read and dropped. Fields are
/// separated by spaces, tabs or commas. A header of column names
/// ("userId,movieId,rating,timestamp") is recognised by io::is_header_line.
struct Ratings {
  template <class T>
  void operator()(std::string_view line, io::Emit<T, 2>& emit) const {
    io::Scanner s(line);
    if (s.blank_or_comment()) return;
    const std::int64_t user = s.get_index("user id");
    s.separator("item id");
    const std::int64_t item = s.get_index("item id");
    s.separator("rating");
    const char* field = s.pos();
    const T rating = io::detail::finite(s.template get_number<T>("rating"));
    whole_field(s, field, "rating");  // "2.5e-" of a cut line is not 2.5
    if (s.skip_blanks(), !s.at_end() && *s.pos() != '#') {
      if (*s.pos() == ',') s.separator("timestamp");
      field = s.pos();
      s.template get_number<std::int64_t>("timestamp");
      whole_field(s, field, "timestamp");
    }
    s.finish("user, item, rating and timestamp");
    emit({user, item}, rating);
  }
  static bool is_header(std::string_view line) { return io::is_header_line(line); }

 private:
  // A number must be the whole field: what follows it is a separator, a comment or
  // the end of the line.
  static void whole_field(const io::Scanner& s, const char* field, const char* what) {
    if (s.at_end() || *s.pos() == ' ' || *s.pos() == '\t' || *s.pos() == ',' || *s.pos() == '#') return;
    const char* end = s.pos();
    while (end != s.end() && *end != ' ' && *end != '\t' && *end != ',') ++end;
    throw io::LineError{std::string("bad ") + what + " '" + std::string(field, end) + "'"};
  }
};
inline constexpr Ratings ratings{};

}  // namespace strata::parse
