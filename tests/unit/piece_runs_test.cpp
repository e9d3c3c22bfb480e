// Unit numbers on the wire as runs (src/array/piece_runs.hpp): every ascending list
// comes back as it went, runs cost a few bytes whatever their length, and lists that
// are not ascending or end inside a number are refused.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "array/piece_runs.hpp"
#include "strata/error.hpp"

namespace strata::detail {
namespace {

std::vector<std::uint64_t> round_trip(const std::vector<std::uint64_t>& numbers, std::size_t* bytes = nullptr) {
  Bytes wire;
  put_runs(wire, numbers);
  if (bytes) *bytes = wire.size();
  std::vector<std::uint64_t> back;
  for_each_in_runs(wire, [&](std::uint64_t n) { back.push_back(n); });
  return back;
}

TEST(PieceRuns, AscendingListsComeBackAsTheyWent) {
  const std::uint64_t big = std::numeric_limits<std::uint64_t>::max() - 3;
  const std::vector<std::vector<std::uint64_t>> lists = {
      {}, {0}, {7}, {0, 1, 2, 3}, {5, 6, 9, 10, 11, 200, 100000, 100001}, {1, 3, 5, 7, 9}, {big, big + 1, big + 2}};
  for (const auto& list : lists) EXPECT_EQ(round_trip(list), list);
}

TEST(PieceRuns, ARunCostsAFewBytesWhateverItsLength) {
  std::vector<std::uint64_t> row;  // a 4096-element row's pieces
  for (std::uint64_t k = 4096 * 17; k < 4096 * 18; ++k) row.push_back(k);
  std::size_t bytes = 0;
  EXPECT_EQ(round_trip(row, &bytes), row);
  EXPECT_LE(bytes, 6u);  // the gap (69632: 3 bytes) and the length (4096: 2 bytes)
  std::vector<std::uint64_t> scattered;  // every 7th row of 70,000: 2 bytes each
  for (std::uint64_t k = 0; k < 70000; k += 7) scattered.push_back(k);
  EXPECT_EQ(round_trip(scattered, &bytes), scattered);
  EXPECT_EQ(bytes, 2 * scattered.size());
}

TEST(PieceRuns, ListsNotAscendingAndTruncatedOnesAreRefused) {
  Bytes wire;
  const std::vector<std::uint64_t> descending = {5, 4};
  EXPECT_THROW(put_runs(wire, descending), Error);
  wire.clear();
  const std::vector<std::uint64_t> far = {1000000};
  put_runs(wire, far);
  wire.resize(1);  // the gap's first byte only
  EXPECT_THROW(for_each_in_runs(wire, [](std::uint64_t) {}), Error);
  // Numbers past 2^64 - 2, sent or decoded, and runs that would wrap round.
  wire.clear();
  const std::vector<std::uint64_t> last = {std::numeric_limits<std::uint64_t>::max()};
  EXPECT_THROW(put_runs(wire, last), Error);
  wire.clear();
  put_varint(wire, std::numeric_limits<std::uint64_t>::max() - 1);  // a gap to 2^64 - 2
  put_varint(wire, 5);                                              // and five numbers from there
  EXPECT_THROW(for_each_in_runs(wire, [](std::uint64_t) {}), Error);
  wire.clear();
  put_varint(wire, 3);
  put_varint(wire, 0);  // an empty run
  EXPECT_THROW(for_each_in_runs(wire, [](std::uint64_t) {}), Error);
}

}  // namespace
}  // namespace strata::detail
