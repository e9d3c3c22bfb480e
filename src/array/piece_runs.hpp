// Numbers of units (or pieces of them) on the wire, as runs.
//
// The ranks of a spread plan ask each other for units, announce the ones they wrote
// and send them back, each time naming ascending unit numbers. Sent as 8-byte numbers
// they cost three times the data of a float element, and still 12 % of a 64-byte row.
// Ascending numbers fall into runs (the elements of a row, the rows of a community),
// so each run is sent as the gap from the previous run's end and its length, both
// LEB128-coded (7 bits a byte): a run of any length costs a few bytes, a lone number
// two where its gap from the previous run is under 128.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "strata/comm.hpp"
#include "strata/error.hpp"

namespace strata::detail {

/// Appends `v` to `out`, 7 bits a byte, low bits first.
inline void put_varint(Bytes& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<std::byte>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<std::byte>(v));
}

/// Reads a number put_varint wrote at `at` in `in`, advancing `at`.
inline std::uint64_t get_varint(std::span<const std::byte> in, std::size_t& at) {
  std::uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    STRATA_CHECK(at < in.size(), "a list of unit numbers ends inside a number");
    const auto b = static_cast<std::uint64_t>(in[at++]);
    v |= (b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  STRATA_CHECK(false, "a unit number of more than 64 bits");
  return v;
}

/// Appends ascending, distinct `numbers` to `out` as runs (see above).
inline void put_runs(Bytes& out, std::span<const std::uint64_t> numbers) {
  std::uint64_t end = 0;  // one past the previous run
  for (std::size_t k = 0; k < numbers.size();) {
    std::size_t last = k;
    while (last + 1 < numbers.size() && numbers[last + 1] == numbers[last] + 1) ++last;
    STRATA_CHECK(numbers[k] >= end, "unit numbers to send are not ascending");
    put_varint(out, numbers[k] - end);
    put_varint(out, last - k + 1);
    end = numbers[last] + 1;
    k = last + 1;
  }
}

/// Calls f(number) for every number of the runs in `in` (all of it), ascending.
template <class F>
void for_each_in_runs(std::span<const std::byte> in, F&& f) {
  std::uint64_t end = 0;
  for (std::size_t at = 0; at < in.size();) {
    const std::uint64_t first = end + get_varint(in, at);
    const std::uint64_t count = get_varint(in, at);
    for (std::uint64_t n = first; n < first + count; ++n) f(n);
    end = first + count;
  }
}

}  // namespace strata::detail
