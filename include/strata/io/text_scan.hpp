// Low-level scanning of text records: the hot path of every parser. A Scanner walks
// one line; each get_* reads one field and throws LineError with a reason when the
// field is malformed. Parsers never see file names or line numbers: the loader
// attaches those when it turns a LineError into a ParseError.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

namespace strata::io {

/// A malformed line. The loader adds the file and line number.
struct LineError {
  std::string reason;
};

class Scanner {
 public:
  explicit Scanner(std::string_view line) : p_(line.data()), end_(line.data() + line.size()) {
    while (end_ > p_ && (end_[-1] == '\r' || end_[-1] == ' ' || end_[-1] == '\t')) --end_;
    skip_blanks();
  }

  /// True for an empty line, a blank one, or a comment ('#' or '%' first).
  bool blank_or_comment() const { return p_ == end_ || *p_ == '#' || *p_ == '%'; }
  bool at_end() const { return p_ == end_; }
  const char* pos() const { return p_; }
  /// One past the line's last character (trailing blanks and '\r' excluded).
  const char* end() const { return end_; }

  /// Skips the separator before the next field: spaces/tabs, or one comma with
  /// optional spaces around it. Throws if there is no separator.
  [[gnu::always_inline]] void separator(const char* what) {
    if (p_ == end_ || *p_ == '#') throw LineError{std::string("missing ") + what};
    const char* start = p_;
    skip_blanks();
    if (p_ < end_ && *p_ == ',') {
      ++p_;
      skip_blanks();
    }
    if (p_ == start) throw LineError{std::string("expected a separator before ") + what};
    if (p_ == end_) throw LineError{std::string("missing ") + what};
  }

  /// A non-negative decimal integer.
  [[gnu::always_inline]] std::int64_t get_index(const char* what) {
    const char* q = p_;
    std::uint64_t v = 0;
    while (q < end_ && static_cast<unsigned>(*q - '0') < 10) {
      v = v * 10 + static_cast<unsigned>(*q - '0');
      ++q;
    }
    if (q == p_ || q - p_ > 18) throw bad_field(what);
    p_ = q;
    return static_cast<std::int64_t>(v);
  }

  /// A number of type T (integral or floating point).
  template <class T>
  T get_number(const char* what) {
    static_assert(std::is_arithmetic_v<T>);
    if constexpr (std::is_floating_point_v<T>) {
      T fast;
      if (short_decimal(fast)) return fast;
    }
    T v{};
    const char* q = p_;
    if (q < end_ && *q == '+') {  // from_chars rejects a leading '+'
      ++q;
      if (q < end_ && *q == '-') throw bad_field(what);  // and then would take "+-5" for -5
    }
    const auto [next, ec] = std::from_chars(q, end_, v);
    if (ec != std::errc() || next == q) throw bad_field(what);
    p_ = next;
    return v;
  }

  /// Skips `word` when the rest of the line starts with it. Compares only bytes of the
  /// line: a short last token of a file must not make it read past the mapped end.
  bool consume(std::string_view word) {
    if (static_cast<std::size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word) return false;
    p_ += word.size();
    return true;
  }

  /// Expects a specific character (e.g. ':' between a feature id and its value).
  void expect(char c, const char* what) {
    if (p_ == end_ || *p_ != c) throw LineError{std::string("expected '") + c + "' in " + what};
    ++p_;
  }

  /// Spaces and tabs only; returns whether any were skipped.
  bool skip_blanks() {
    const char* start = p_;
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t')) ++p_;
    return p_ != start;
  }

  /// Throws unless only blanks or a trailing comment remain.
  void finish(const char* fields) {
    skip_blanks();
    if (p_ < end_ && *p_ != '#') throw LineError{std::string("unexpected text after ") + fields};
  }

 private:
  LineError bad_field(const char* what) const {
    const char* q = p_;
    while (q < end_ && *q != ' ' && *q != '\t' && *q != ',') ++q;
    return LineError{std::string("bad ") + what + " '" + std::string(p_, q) + "'"};
  }

  // Clinger's fast path for short plain decimals ("4", "3.5", "-0.25"): when the
  // digits form an integer m exactly representable in T and the scale 10^k is too,
  // m / 10^k is one correctly rounded IEEE division, i.e. exactly what from_chars
  // returns. Anything else (exponents, long mantissas) falls back to from_chars.
  template <class T>
  [[gnu::always_inline]] bool short_decimal(T& out) {
    constexpr int kMaxScale = std::is_same_v<T, float> ? 10 : 22;
    constexpr std::uint64_t kMaxMantissa = std::is_same_v<T, float> ? (1u << 24) : (std::uint64_t{1} << 53);
    static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const char* q = p_;
    const bool negative = q < end_ && *q == '-';
    if (q < end_ && (*q == '-' || *q == '+')) ++q;
    std::uint64_t m = 0;
    int digits = 0, scale = 0;
    const char* first = q;
    while (q < end_ && static_cast<unsigned>(*q - '0') < 10 && digits < 19) m = m * 10 + static_cast<unsigned>(*q++ - '0'), ++digits;
    if (q == first) return false;
    if (q < end_ && *q == '.') {
      ++q;
      while (q < end_ && static_cast<unsigned>(*q - '0') < 10 && digits < 19) {
        m = m * 10 + static_cast<unsigned>(*q++ - '0');
        ++digits, ++scale;
      }
    }
    if (q < end_ && ((static_cast<unsigned>(*q - '0') < 10) || *q == 'e' || *q == 'E' || *q == '.')) return false;
    if (m > kMaxMantissa || scale > kMaxScale) return false;
    T v = static_cast<T>(m) / static_cast<T>(kPow10[scale]);
    out = negative ? -v : v;
    p_ = q;
    return true;
  }

  const char* p_;
  const char* end_;
};

}  // namespace strata::io
