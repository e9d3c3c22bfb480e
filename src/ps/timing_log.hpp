// What one relaxed array's loop call depended on when its values depend on timing
// (managed communication, Hybrid), kept for an execution record
// (recovery/execution_record.hpp) so a one-process replay can reproduce it.
//
// Under those consistencies a read sees whatever deltas had arrived (or, Hybrid, had
// been folded in by the rank's other threads) when it was made, and with managed
// communication an owner applies early deltas in the order they arrive. So the record
// keeps the outcome rather than the causes: every value each loop thread read, and
// every delta each owner applied, in order.
//
// One table's part of a rank's timing file, all integers int64:
//   array id, unit bytes, element bytes, threads,
//   per thread: reads n, then n x (unit, the unit's bytes as read), zeros to a multiple of 8,
//   applies m, then m x (element key, clock, the delta's element bytes), zeros to a multiple of 8.
// (The padding keeps every part 8-byte aligned, so a replay reads values in place.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "runtime/chunked_log.hpp"
#include "strata/detail/pack.hpp"

namespace strata::ps {

/// One loop thread's reads, in order. The copies stay put until clear(), so the body
/// is handed the copy: it sees exactly what the log holds, even while other threads
/// fold deltas into the cache (Hybrid).
class ReadLog {
 public:
  /// Room for the `bytes` of unit `unit` as read, for the caller to fill; it stays put.
  std::byte* add(std::int64_t unit, std::size_t bytes) {
    ++reads_;
    return log_.add(static_cast<std::uint64_t>(unit), bytes);
  }
  /// Appends the count and the entries to `out`, then pads it to a multiple of 8.
  void append_to(Bytes& out) const {
    detail::append<std::int64_t>(out, reads_);
    log_.for_each_chunk(
        [&](std::span<const std::byte> entries) { out.insert(out.end(), entries.begin(), entries.end()); });
    pad(out);
  }
  static void pad(Bytes& out) { out.resize((out.size() + 7) / 8 * 8); }
  void clear() {
    log_.clear();
    reads_ = 0;
  }

 private:
  detail::ChunkedLog log_;  ///< per read the unit (int64), then its bytes as read
  std::int64_t reads_ = 0;
};

/// A relaxed table's log of one loop call: the loop threads' reads and the deltas
/// this rank's owner applied (managed communication only; the Postman's thread).
/// Elements are `element_size` bytes.
class TimingLog {
 public:
  explicit TimingLog(std::size_t element_size = 0) : element_size_(element_size) {}
  void begin(int threads, bool applies) {
    reads_.clear();
    reads_.resize(static_cast<std::size_t>(threads));
    applies_.clear();
    logs_applies_ = applies;
  }
  ReadLog& reads(int thread) { return reads_[static_cast<std::size_t>(thread)]; }
  void applied(std::int64_t key, std::int64_t clock, const std::byte* delta) {
    if (!logs_applies_) return;
    detail::append<std::int64_t>(applies_, key);
    detail::append<std::int64_t>(applies_, clock);
    applies_.insert(applies_.end(), delta, delta + element_size_);
  }
  /// The table's part of the timing file (see above); empties the log.
  Bytes take(std::uint64_t array_id, std::size_t unit_bytes) {
    Bytes out;
    detail::append<std::int64_t>(out, static_cast<std::int64_t>(array_id));
    detail::append<std::int64_t>(out, static_cast<std::int64_t>(unit_bytes));
    detail::append<std::int64_t>(out, static_cast<std::int64_t>(element_size_));
    detail::append<std::int64_t>(out, static_cast<std::int64_t>(reads_.size()));
    for (auto& r : reads_) {
      r.append_to(out);
      r.clear();
    }
    detail::append<std::int64_t>(out, static_cast<std::int64_t>(applies_.size() / (2 * sizeof(std::int64_t) + element_size_)));
    out.insert(out.end(), applies_.begin(), applies_.end());
    ReadLog::pad(out);
    applies_.clear();
    return out;
  }

 private:
  std::size_t element_size_;
  std::vector<ReadLog> reads_;
  Bytes applies_;
  bool logs_applies_ = false;
};

}  // namespace strata::ps
