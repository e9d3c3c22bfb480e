// Entries appended to chunks that never move: a key, then the bytes of a unit, each.
// For logs a run writes as it goes: the old values a re-validating run saves
// (loop/write_log.hpp) and the values a relaxed run read (ps/timing_log.hpp). A log
// holding N bytes peaks near N, where a vector doubling its capacity would hold up to
// 3N while it copied, and an entry's bytes stay where they were written until clear().
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "strata/detail/free_now.hpp"
#include "strata/error.hpp"

namespace strata::detail {

class ChunkedLog {
 public:
  /// Room for an entry of `bytes` under `key`, for the caller to fill.
  std::byte* add(std::uint64_t key, std::size_t bytes) {
    const std::size_t need = sizeof key + bytes;
    if (chunks_.empty() || chunks_.back().used + need > chunks_.back().capacity) {
      const std::size_t capacity = std::max(kChunkBytes, need);  // an entry never straddles chunks
      chunks_.push_back({std::make_unique_for_overwrite<std::byte[]>(capacity), 0, capacity});
    }
    Chunk& c = chunks_.back();
    std::byte* at = c.data.get() + c.used;
    std::memcpy(at, &key, sizeof key);
    c.used += need;
    return at + sizeof key;
  }
  /// Calls f(key, bytes) for every entry, in order; f returns the entry's size in
  /// bytes, as it was added (the log keeps no sizes).
  template <class F>
  void for_each(F&& f) const {
    for (const Chunk& c : chunks_)
      for (std::size_t at = 0; at < c.used;) {
        std::uint64_t key;
        std::memcpy(&key, c.data.get() + at, sizeof key);
        at += sizeof key;
        at += f(key, static_cast<const std::byte*>(c.data.get() + at));
        STRATA_CHECK(at <= c.used, "a log read back with other entry sizes than it was written with");
      }
  }
  /// Calls f(bytes) for each chunk's entries as they lie (keys and bytes, back to back).
  template <class F>
  void for_each_chunk(F&& f) const {
    for (const Chunk& c : chunks_) f(std::span<const std::byte>(c.data.get(), c.used));
  }
  /// Forgets every entry and gives the memory back.
  void clear() { free_now(chunks_); }

 private:
  static constexpr std::size_t kChunkBytes = std::size_t{1} << 20;
  struct Chunk {
    std::unique_ptr<std::byte[]> data;
    std::size_t used = 0, capacity = 0;
  };
  std::vector<Chunk> chunks_;
};

}  // namespace strata::detail
