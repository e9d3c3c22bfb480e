// The old values a re-validating run saves before its first write of each unit
// (src/loop/write_log.hpp): every unit comes back as it was saved, in saving order,
// across the log's chunks and for units larger than a chunk.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "loop/write_log.hpp"

namespace strata::loop {
namespace {

// The bytes of unit `place` of `size` bytes: a pattern no two units share.
std::vector<std::byte> bytes_of(std::size_t place, std::size_t size) {
  std::vector<std::byte> b(size);
  for (std::size_t k = 0; k < size; ++k) b[k] = static_cast<std::byte>((place * 131 + k * 7) & 0xff);
  return b;
}

// Saves units of the given sizes (place k has size sizes[k % sizes.size()]) and reads
// them back.
void round_trip(const std::vector<std::size_t>& sizes, std::size_t units) {
  WriteLog log;
  std::size_t total = 0;
  for (std::size_t p = 0; p < units; ++p) {
    const std::size_t size = sizes[p % sizes.size()];
    log.save(p * 3, bytes_of(p * 3, size));
    total += size;
  }
  EXPECT_EQ(log.bytes(), total);
  std::size_t next = 0;
  log.for_each([&](std::size_t place, const std::byte* old) {
    EXPECT_EQ(place, next * 3);
    const std::size_t size = sizes[next % sizes.size()];
    const auto want = bytes_of(place, size);
    EXPECT_TRUE(std::equal(want.begin(), want.end(), old)) << "unit " << next;
    ++next;
    return size;
  });
  EXPECT_EQ(next, units);
  log.clear();
  EXPECT_EQ(log.bytes(), 0u);
  log.for_each([&](std::size_t, const std::byte*) -> std::size_t {
    ADD_FAILURE() << "a cleared log holds a unit";
    return 0;
  });
}

TEST(WriteLog, UnitsComeBackAcrossChunks) {
  round_trip({64}, 40'000);              // 2.8 MB of 72-byte entries: three chunks
  round_trip({256, 64, 1000, 8}, 9'000);  // mixed sizes, entries never split across chunks
}

TEST(WriteLog, UnitsLargerThanAChunkGetOneOfTheirOwn) {
  round_trip({3 << 20, 100}, 5);  // 3 MiB units between small ones
}

TEST(WriteLog, EmptyUnitsKeepTheirPlaces) {
  round_trip({0, 16}, 1000);
}

}  // namespace
}  // namespace strata::loop
