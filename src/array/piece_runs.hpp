// Numbers of units (or pieces of them) on the wire, as runs.
//
// The ranks of a spread plan ask each other for units, announce the ones they wrote
// and send them back, each time naming ascending unit numbers. Sent as 8-byte numbers
// they cost three times the data of a float element, and still 12 % of a 64-byte row.
// Ascending numbers fall into runs (the elements of a row, the rows of a community),
// so each run is sent as the gap from the previous run's end and its length, both
// LEB128-coded (7 bits a byte): a run of any length costs a few bytes, a lone number
// two where its gap from the previous run is under 128, three up to 16,383. Senders
// check that their numbers ascend; as every list is built ascending, a failed check
// is a bug (and, raised on one rank before a collective, leaves the others waiting).
// Unit numbers stay below 2^63.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
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
    STRATA_CHECK(shift < 63 || b <= 1, "a unit number of more than 64 bits");
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
    STRATA_CHECK(numbers[k] >= end && numbers[last] < std::numeric_limits<std::uint64_t>::max(),
                 "unit numbers to send are not ascending, or too large");
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
    const std::uint64_t gap = get_varint(in, at), count = get_varint(in, at);
    constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
    // A corrupt list must not wrap round or run through 2^64 numbers.
    STRATA_CHECK(gap <= kMax - end && count > 0 && count <= kMax - (end + gap),
                 "a list of unit numbers holds an impossible run");
    const std::uint64_t first = end + gap;
    for (std::uint64_t k = 0; k < count; ++k) f(first + k);
    end = first + count;
  }
}

}  // namespace strata::detail
