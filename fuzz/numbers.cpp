// The number fields of every text format (io::Scanner::get_number, get_index) against
// a reference: std::from_chars on the field, after at most one sign, and for indices
// 1 to 18 decimal digits. Scanner reads short decimals ("3.5", "-0.25") by a fast path
// of its own, which must give the very bits from_chars gives. The input's first byte
// picks the type; the rest is a line of fields read one after another, as a parser
// reads them, with separators between them.
//   * a field the reference accepts gives its value (bit for bit) and leaves the
//     scanner just after it; one it rejects is a LineError with a reason;
//   * the scanner never moves backwards nor past the line.
#include <charconv>
#include <cstring>
#include <optional>

#include "fuzz_check.hpp"
#include "strata/io/text_scan.hpp"

namespace {

using strata::io::LineError;
using strata::io::Scanner;

// The reference reading of the field at [p, end): the value and where it ends.
template <class T>
std::optional<std::pair<T, const char*>> reference(const char* p, const char* end) {
  if (p < end && *p == '+') {
    ++p;
    if (p < end && *p == '-') return std::nullopt;  // one sign, not two
  }
  T v{};
  const auto [next, ec] = std::from_chars(p, end, v);
  if (ec != std::errc() || next == p) return std::nullopt;
  return std::pair{v, next};
}

std::optional<std::pair<std::int64_t, const char*>> reference_index(const char* p, const char* end) {
  const char* q = p;
  std::int64_t v = 0;
  while (q < end && *q >= '0' && *q <= '9' && q - p < 18) v = v * 10 + (*q++ - '0');
  if (q == p || (q < end && *q >= '0' && *q <= '9')) return std::nullopt;  // none, or more than 18
  return std::pair{v, q};
}

template <class T>
bool same(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    if (a != a) return b != b;  // NaN: its payload is not compared
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// An index field (get_index) when kIndex, else a number of type T (get_number<T>).
template <class T, bool kIndex = false>
void check_field(Scanner& s, const char* end) {
  const char* at = s.pos();
  std::optional<std::pair<T, const char*>> want;
  if constexpr (kIndex)
    want = reference_index(at, end);
  else
    want = reference<T>(at, end);
  try {
    T got;
    if constexpr (kIndex)
      got = s.get_index("field");
    else
      got = s.get_number<T>("field");
    FUZZ_CHECK(want.has_value(), "the scanner accepted a field the reference rejects");
    FUZZ_CHECK(same(got, want->first), "the scanner's value differs from the reference");
    FUZZ_CHECK(s.pos() == want->second, "the scanner stopped elsewhere than the reference");
  } catch (const LineError& e) {
    FUZZ_CHECK(!e.reason.empty(), "a LineError without a reason");
    FUZZ_CHECK(!want.has_value(), "the scanner rejected a field the reference accepts");
    FUZZ_CHECK(s.pos() == at, "a rejected field moved the scanner");
    throw;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  strata::fuzz::Settings in(data, size);
  const int kind = in.byte() % 5;  // float, double, int32, int64, index
  const std::string_view line = in.rest();
  Scanner s(line);
  const char* end = line.data() + line.size();
  while (end > s.pos() && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t')) --end;  // as Scanner trims
  try {
    for (const char* last = s.pos(); !s.at_end(); last = s.pos()) {
      switch (kind) {
        case 0: check_field<float>(s, end); break;
        case 1: check_field<double>(s, end); break;
        case 2: check_field<std::int32_t>(s, end); break;
        case 3: check_field<std::int64_t>(s, end); break;
        default: check_field<std::int64_t, true>(s, end); break;
      }
      if (s.at_end()) break;
      s.separator("next field");
      FUZZ_CHECK(s.pos() > last && s.pos() <= end, "the scanner moved backwards or past the line");
    }
  } catch (const LineError&) {
  }
  FUZZ_CHECK(s.pos() >= line.data() && s.pos() <= end, "the scanner left the line");
  return 0;
}
