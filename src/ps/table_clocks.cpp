// A relaxed table's clocks: the clock's deltas to their owners, the staleness wait
// before the next clock, and a one-rank table's own applies.
#include <algorithm>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "ps/ps_internal.hpp"
#include "strata/detail/stopwatch.hpp"

namespace strata::ps {

// This rank's deltas of the clock, one message per owner (empty ones too: an owner
// applies a clock once it has heard from every rank).
void Table::flush_clock(std::int64_t clock) {
  const Header h{kDeltas, 0, clock, 0};
  const auto prefix = std::as_bytes(std::span(&h, 1));
  auto out = geo_.row_len > 1 ? pack_rows_for_owners(ops_, geo_, rt_.size(), prefix)
                              : pack_for_owners(ops_, geo_, rt_.size(), prefix);
  for (int r = 0; r < rt_.size(); ++r) send(r, out[static_cast<std::size_t>(r)]);
  if (refolds_) own_sent_.emplace_back(clock, std::move(out));
}

// Read-my-writes under SSP: the cache now holds clock `take` of the units updates
// overwrote (refreshed_), which lacks this rank's deltas of the clocks after it; they
// are added back from what the rank sent. Units no update touched still hold them.
void Table::refold_own(std::int64_t take) {
  while (!own_sent_.empty() && own_sent_.front().first <= take) own_sent_.pop_front();
  const std::size_t elem = elem_;
  const auto fold = [&](std::int64_t key, const std::byte* delta) {
    if (!refreshed_[static_cast<std::size_t>(key / unit_len_)]) return;
    if (std::byte* at = cached_element(key)) ops_.add_bytes(at, delta);
  };
  for (const auto& [clock, messages] : own_sent_)
    for (const Bytes& m : messages) {
      const std::byte* p = m.data() + sizeof(Header);
      const std::byte* end = m.data() + m.size();
      while (p < end) {
        if (geo_.row_len > 1) {  // row runs (pack_rows_for_owners)
          std::int64_t first, count;
          std::memcpy(&first, p, sizeof first);
          std::memcpy(&count, p + sizeof first, sizeof count);
          p += 2 * sizeof(std::int64_t);
          for (std::int64_t j = 0; j < count; ++j) fold(first + j, p + static_cast<std::size_t>(j) * elem);
          p += (static_cast<std::size_t>(count) * elem + 7) / 8 * 8;
        } else {  // (key, delta) records (pack_for_owners)
          std::int64_t key;
          std::memcpy(&key, p, sizeof key);
          fold(key, p + sizeof key);
          p += ops_.record_size;
        }
      }
    }
  std::fill(refreshed_.begin(), refreshed_.end(), std::uint8_t{0});
}

void Table::tick(std::int64_t clock) {
  const int R = rt_.size();
  if (replica_) {
    if (split_clock_ != clock) return replica_tick(clock);
    split_clock_ = -1;  // one rank: its threads merged the replicas (tick_part)
    return replica_finish_clock(clock);
  }
  if (R == 1 && !managed_) {
    if (split_clock_ != clock) {  // the rank's threads did not share the work
      prepare_tick(clock, 1);
      tick_part(clock, 0, 1);
    }
    finish_own_clock(clock);
    return;
  }
  if (managed_) outbox_->end_clock([&] { flush_clock(clock); });
  else flush_clock(clock);
  for (auto& f : fetched_) f.clear();
  ++stats_.clocks;
  if (clock + 1 >= clocks_) return;  // the last clock: end_run waits for the owners

  // Before clock+1 begins, the cache must hold every update of clock
  // (clock+1)-s-1 and earlier from every owner that serves this rank. It takes one
  // consistent clock of the array: the newest every such owner has sent (newer
  // updates of faster owners wait for a later tick), or in a replay the recorded one.
  const std::int64_t need = clock - consistency_.staleness;
  const bool following = !follow_.empty();
  std::int64_t take = following ? follow_[static_cast<std::size_t>(clock + 1)] : std::max<std::int64_t>(need, -1);
  if (following && (take < need || take > clock))
    throw ReplayError(fmt::format("relaxed array {}: the record says clock {} read clock {} of the array, which "
                                  "staleness {} does not allow",
                                  label(), clock + 1, take, consistency_.staleness));
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock lock(mu_);
  wait_for(lock, fmt::format("relaxed array {}: updates of clock {} from their owners", label(), take), [&] {
    for (int o = 0; o < R; ++o)
      if (!reads_from_[static_cast<std::size_t>(o)].empty() && staged_[static_cast<std::size_t>(o)].clock < take)
        return false;
    return true;
  });
  if (!following) {
    std::int64_t newest_everywhere = clock;
    bool served = false;
    for (int o = 0; o < R; ++o)
      if (!reads_from_[static_cast<std::size_t>(o)].empty()) {
        newest_everywhere = std::min(newest_everywhere, staged_[static_cast<std::size_t>(o)].clock);
        served = true;
      }
    if (served) take = newest_everywhere;
  }
  for (int o = 0; o < R; ++o) {
    auto& updates = staged_[static_cast<std::size_t>(o)].updates;
    std::size_t n = 0;
    for (; n < updates.size() && updates[n].first <= take; ++n) store_update(o, updates[n].second);
    updates.erase(updates.begin(), updates.begin() + static_cast<std::ptrdiff_t>(n));
  }
  lock.unlock();
  if (refolds_) refold_own(take);
  version_ = take;
  versions_[static_cast<std::size_t>(clock + 1)] = take;
  stats_.blocked_seconds += detail::seconds_since(start);
  const auto lag = static_cast<std::size_t>(clock - take);
  if (stats_.staleness_histogram.size() <= lag) stats_.staleness_histogram.resize(lag + 1);
  ++stats_.staleness_histogram[lag];
}

// One rank without managed communication applies its clocks itself (apply_own); for
// a 1-D array the rank's threads can share that work, each taking a range of elements.
// With replicas (one rank: a replica per thread) the shared work is their merge.
void Table::prepare_tick(std::int64_t clock, int parts) {
  if (changed_parts_.size() < static_cast<std::size_t>(parts)) changed_parts_.resize(static_cast<std::size_t>(parts));
  split_clock_ = clock;
}

void Table::tick_part(std::int64_t clock, int part, int parts) {
  if (replica_) return replica_merge_part(part, parts);
  // Parts take ranges of elements. Rows of a matrix may straddle two parts, which
  // only a direct cache tolerates (it tracks no changed units to copy); otherwise
  // part 0 takes the whole clock.
  if (geo_.dims > 1 && !direct_) {
    if (part == 0) apply_own(clock, 0, 1, changed_parts_[0]);
    return;
  }
  apply_own(clock, part, parts, changed_parts_[static_cast<std::size_t>(part)]);
}

// One rank without managed communication: this rank owns every element and its
// cache is the only reader, so tick applies the clock's deltas itself (the rank's
// threads are stopped) and copies the changed units into the cache: the same
// arithmetic as the owner's path, without messages or waiting for the Postman.
// Part `part` of `parts` takes its own elements (tick_part; parts > 1 only for 1-D
// arrays, where elements and units coincide, so no two parts share a unit, and for a
// direct cache, which tracks no units). When the
// cache is the rank's own values (direct_), the apply is all there is.
void Table::apply_own(std::int64_t clock, int part, int parts, std::vector<std::int64_t>& changed) {
  if (direct_) {  // the cache is the values: nothing to copy, no changes to track
    for_drained_runs(ops_, geo_, 0, 0, part, parts, [&](const OwnedRun& run) { apply_logged(run, clock); });
    return;
  }
  for_drained_runs(ops_, geo_, 0, 0, part, parts, [&](const OwnedRun& run) { apply_run(run, clock, changed); });
  if (clock + 1 < clocks_) {
    const std::byte* v = values();
    const std::size_t row = row_bytes();
    const auto& where = position_for_[0];
    for (const auto u : changed)
      if (const std::int32_t pos = where[static_cast<std::size_t>(u)]; pos >= 0)
        std::memcpy(block_.data() + slot_at(0, static_cast<std::size_t>(pos)) * row,
                    v + static_cast<std::size_t>(u) * row, row);
  }
  for (const auto u : changed) is_changed_[static_cast<std::size_t>(u)] = 0;
  changed.clear();
}

// After apply_own's parts: the clock is applied.
void Table::finish_own_clock(std::int64_t clock) {
  split_clock_ = -1;
  const bool last = clock + 1 >= clocks_;
  {
    std::lock_guard lock(mu_);
    ++next_apply_;
    if (!last) ++received_[0];
  }
  for (auto& f : fetched_) f.clear();
  ++stats_.clocks;
  if (!last) next_reads_clock(clock, "on one rank it");
}

// The rank's cache holds clock `clock` whole before clock + 1 begins (one rank, or
// replicas): the next clock reads it, never an older one, and a replay's record must
// say so. `reader` names who reads it so, for the error.
void Table::next_reads_clock(std::int64_t clock, const char* reader) {
  if (!follow_.empty() && follow_[static_cast<std::size_t>(clock + 1)] != clock)
    throw ReplayError(fmt::format("relaxed array {}: the record says clock {} read clock {} of the array; {} reads "
                                  "clock {}",
                                  label(), clock + 1, follow_[static_cast<std::size_t>(clock + 1)], reader, clock));
  version_ = clock;
  versions_[static_cast<std::size_t>(clock + 1)] = clock;
  if (stats_.staleness_histogram.empty()) stats_.staleness_histogram.resize(1);
  ++stats_.staleness_histogram[0];
}

}  // namespace strata::ps
