// A Hybrid table as whole replicas: one per rank on several ranks, or one per worker
// thread (Consistency::replica_per_thread) on any number of ranks.
//
// Hybrid (and read-my-writes at staleness 0) lets a rank's threads read and write one
// cached copy of the array lock-free and makes the ranks agree at every clock. The
// owner path does that with two writes per add (the fold into the cache and the
// thread's delta set) and, at the clock, deltas to the owners and changed units back
// through the Postman: two hops and a message per owner and reader, which an embedding
// model whose clocks change most rows pays in full (docs/relaxed_rows.md has figures).
//
// When every rank reads more than a quarter of the array (it would cache it laid out
// like the array anyway), each rank instead holds all of it (block_, its replica)
// and a copy of its values as of the last clock (snapshot_, the same on every rank):
// - an add folds into the replica only (ElementOps::fold_only), as on one rank, and
//   marks its unit written (CacheView::written);
// - at a clock, with the rank's threads stopped, each rank sends every other rank the
//   written units its replica changed and by how much (replica - snapshot, a
//   difference per element: strata::Subtractable types only), and every rank adds
//   all ranks' differences into its snapshot in rank order, so the snapshots stay the
//   same bits everywhere; the changed units of the replica take the snapshot's values;
// - the owned units go back to the array's values when the run ends.
// What a read sees is Hybrid's: the values of the last clock plus the rank's own adds
// since. A delta arrives as a difference of two values, so its rounding may differ
// from the owner path's sum of the adds (integers are exact; one thread a rank is
// still deterministic). The price is the array twice per rank.
//
// On one rank with a replica per thread nothing travels: the clock is a merge of the
// replicas, unit by unit, which the rank's threads share (replica_merge_part).
#include <algorithm>
#include <cstring>

#include "ps/ps_internal.hpp"

namespace strata::ps {

// The conditions that do not depend on the read sets (the same on every rank).
// A logged run keeps the owner path: its log records each owner's applies.
bool Table::replicates_wide_read_sets() const {
  return rt_.size() > 1 && consistency_.folds() && consistency_.staleness == 0 && consistency_.prefetch &&
         !managed_ && !logging_ && ops_.subtracts();
}

// A replica per worker thread, asked for (the Table's constructor refused element
// types that do not subtract). One worker in all has nothing to share: it keeps the
// one-rank direct cache or the owner path, whose adds are the serial loop's bits.
bool Table::replicates_per_thread() const {
  return consistency_.thread_replicas && !logging_ && rt_.size() * rt_.threads() > 1;
}

// After lay_out: the replicas, their marks and the exchange's per-unit tables.
void Table::replica_allocate() {
  const std::size_t units = replica_ ? static_cast<std::size_t>(units_) : 0;
  const int T = replica_ && consistency_.thread_replicas ? rt_.threads() : 1;
  thread_blocks_.resize(static_cast<std::size_t>(T - 1));
  for (auto& b : thread_blocks_) b.assign(block_.size(), std::byte{0});
  replicas_.assign(1, block_.data());
  for (auto& b : thread_blocks_) replicas_.push_back(b.data());
  exchange_.written.assign(replica_ ? static_cast<std::size_t>(T) : 0, std::vector<std::uint8_t>(units, 0));
  exchange_.written_ptrs.clear();
  for (auto& w : exchange_.written) exchange_.written_ptrs.push_back(w.data());
  exchange_.touched.assign(units, 0);
  exchange_.slot.assign(units, -1);
  exchange_.part_rows.resize(replica_ ? 2 * static_cast<std::size_t>(T) : 0);
  for (auto& r : exchange_.part_rows) r.resize(row_bytes());
  exchange_.parts.resize(replica_ ? static_cast<std::size_t>(rt_.size()) : 0);
  view_.written = replica_ ? exchange_.written[0].data() : nullptr;
  view_.blocks = T > 1 ? replicas_.data() : nullptr;
  view_.written_by = T > 1 ? exchange_.written_ptrs.data() : nullptr;
}

// After the first fill: the snapshot is what every replica holds now, and no unit is
// written or touched yet (a run that stopped early may have left marks).
void Table::replica_fill() {
  snapshot_.assign(block_.begin(), block_.end());
  for (auto& b : thread_blocks_) std::memcpy(b.data(), block_.data(), block_.size());
  for (auto& w : exchange_.written) std::fill(w.begin(), w.end(), std::uint8_t{0});
  std::fill(exchange_.touched.begin(), exchange_.touched.end(), std::uint8_t{0});
}

// This rank's changes of a clock into its part, as it sends them: the count n, n rows
// of differences, then the n units (8-byte aligned only when a row is: read with
// memcpy). A unit several of the rank's replicas changed sends the sum of their
// differences, summed in thread order. Several ranks only (one merges its replicas).
void Table::replica_gather_changes() {
  const std::size_t row = row_bytes(), len = static_cast<std::size_t>(unit_len_);
  const auto units = static_cast<std::size_t>(units_);
  const std::byte* snapshot = snapshot_.data();
  auto& mine = exchange_.mine;
  auto& by_thread = exchange_.by_thread;
  mine.clear();
  by_thread.clear();
  // The units folded into since the last clock whose bytes differ (a unit written
  // back to its value sends nothing), replica by replica.
  for (std::size_t t = 0; t < replicas_.size(); ++t) {
    const auto* replica = static_cast<const std::byte*>(replicas_[t]);
    std::uint8_t* written = exchange_.written[t].data();
    for (std::size_t u = 0; u < units; ++u) {
      if (!written[u]) continue;
      written[u] = 0;
      if (std::memcmp(replica + u * row, snapshot + u * row, row) == 0) continue;
      by_thread.emplace_back(static_cast<int>(t), static_cast<std::int64_t>(u));
      if (exchange_.slot[u] < 0) {
        exchange_.slot[u] = static_cast<std::int32_t>(mine.size());
        mine.push_back(static_cast<std::int64_t>(u));
      }
    }
  }
  const auto n = static_cast<std::int64_t>(mine.size());
  const std::size_t ids_at = sizeof n + mine.size() * row;
  Bytes& part = exchange_.parts[static_cast<std::size_t>(rt_.rank())];
  part.resize(ids_at + mine.size() * sizeof(std::int64_t));
  std::memcpy(part.data(), &n, sizeof n);
  for (const auto& [t, u] : by_thread) {
    const auto unit = static_cast<std::size_t>(u);
    std::byte* out = part.data() + sizeof n + static_cast<std::size_t>(exchange_.slot[unit]) * row;
    const std::byte* now = static_cast<const std::byte*>(replicas_[static_cast<std::size_t>(t)]) + unit * row;
    if (!exchange_.touched[unit]) {  // the first replica to change it: its difference
      exchange_.touched[unit] = 1;
      ops_.difference(out, now, snapshot + unit * row, len);
    } else {
      std::byte* next = exchange_.part_rows[1].data();  // the one part's row for a difference
      ops_.difference(next, now, snapshot + unit * row, len);
      ops_.add_run(out, next, len);
    }
  }
  for (const auto u : mine) {
    exchange_.touched[static_cast<std::size_t>(u)] = 0;
    exchange_.slot[static_cast<std::size_t>(u)] = -1;
  }
  if (n > 0) std::memcpy(part.data() + ids_at, mine.data(), mine.size() * sizeof(std::int64_t));
}

// A clock the rank's threads did not share (tick without tick_part): one rank merges
// its replicas on this thread; several exchange their changes.
void Table::replica_tick(std::int64_t clock) {
  if (rt_.size() == 1) {
    replica_merge_part(0, 1);
  } else {
    replica_gather_changes();
    const Bytes& part = exchange_.parts[static_cast<std::size_t>(rt_.rank())];
    stats_.bytes_sent += static_cast<std::int64_t>(part.size()) * (rt_.size() - 1);
    stats_.messages_sent += rt_.size() - 1;
    rt_.comm().allgatherv_in_place(exchange_.parts);
    replica_apply();
  }
  replica_finish_clock(clock);
}

// One rank, a replica per thread: part `part` of `parts` of the clock's merge, run by
// every thread of the rank at once while the loop is stopped. A unit is merged on its
// own (the replicas, snapshot and marks of one unit are all it touches), so the parts
// take interleaved runs of kMergeRun units: the written units crowd at the ids of the
// frequent rows, which a split in halves would give to one part. Runs are long enough
// that parts write the same cache line only where two runs meet (the buffers are not
// aligned to runs): a unit's bytes are only ever written by its own part. Per unit, in
// thread order:
// - the replicas that wrote it and whose bytes now differ from the snapshot;
// - one such replica: the snapshot takes its value (no snapshot + difference
//   rounding: its bits are those of the thread's adds, as in a serial run);
// - several: the snapshot adds the sum of their differences, summed in thread order;
// - every replica takes the snapshot's value.
void Table::replica_merge_part(int part, int parts) {
  constexpr std::size_t kMergeRun = 64;
  STRATA_CHECK(part >= 0 && part < parts && 2 * static_cast<std::size_t>(parts) <= exchange_.part_rows.size(),
               "a replica merge split into more parts than the rank has threads");
  const std::size_t row = row_bytes(), len = static_cast<std::size_t>(unit_len_);
  const auto units = static_cast<std::size_t>(units_);
  std::byte* snapshot = snapshot_.data();
  std::byte* sum = exchange_.part_rows[2 * static_cast<std::size_t>(part)].data();
  std::byte* next = exchange_.part_rows[2 * static_cast<std::size_t>(part) + 1].data();
  const std::size_t T = replicas_.size();
  for (std::size_t from = static_cast<std::size_t>(part) * kMergeRun; from < units;
       from += static_cast<std::size_t>(parts) * kMergeRun) {
    const std::size_t to = std::min(units, from + kMergeRun);
    for (std::size_t u = from; u < to; ++u) {
      std::byte* base = snapshot + u * row;
      const std::byte* sole = nullptr;
      int changers = 0;
      for (std::size_t t = 0; t < T; ++t) {
        std::uint8_t& mark = exchange_.written[t][u];
        if (!mark) continue;
        mark = 0;
        const std::byte* now = static_cast<const std::byte*>(replicas_[t]) + u * row;
        if (std::memcmp(now, base, row) == 0) continue;
        if (++changers == 1) {
          sole = now;
          continue;
        }
        if (changers == 2) ops_.difference(sum, sole, base, len);
        ops_.difference(next, now, base, len);
        ops_.add_run(sum, next, len);
      }
      if (changers == 0) continue;
      if (changers == 1) std::memcpy(base, sole, row);
      else ops_.add_run(base, sum, len);
      for (void* replica : replicas_) {
        std::byte* mine = static_cast<std::byte*>(replica) + u * row;
        if (changers > 1 || mine != sole) std::memcpy(mine, base, row);
      }
    }
  }
}

// Several ranks: every rank's differences, in rank order, into the snapshot; then
// every replica's changed units take the snapshot's values.
void Table::replica_apply() {
  const std::size_t row = row_bytes(), len = static_cast<std::size_t>(unit_len_);
  std::byte* snapshot = snapshot_.data();
  auto& changed = exchange_.changed;
  changed.clear();
  for (const Bytes& part : exchange_.parts) {
    std::int64_t m = 0;
    STRATA_CHECK(part.size() >= sizeof m, "a replica's changes without their count");
    std::memcpy(&m, part.data(), sizeof m);
    const std::size_t at = sizeof m + static_cast<std::size_t>(m) * row;
    STRATA_CHECK(m >= 0 && part.size() == at + static_cast<std::size_t>(m) * sizeof(std::int64_t),
                 "a replica's changes of the wrong size");
    for (std::int64_t k = 0; k < m; ++k) {
      std::int64_t u = 0;
      std::memcpy(&u, part.data() + at + static_cast<std::size_t>(k) * sizeof u, sizeof u);
      STRATA_CHECK(u >= 0 && u < units_, "a replica's change outside the array");
      const auto unit = static_cast<std::size_t>(u);
      ops_.add_run(snapshot + unit * row, part.data() + sizeof m + static_cast<std::size_t>(k) * row, len);
      if (!exchange_.touched[unit]) {
        exchange_.touched[unit] = 1;
        changed.push_back(u);
      }
    }
  }
  for (const auto u : changed) {
    const auto at = static_cast<std::size_t>(u) * row;
    for (void* replica : replicas_) std::memcpy(static_cast<std::byte*>(replica) + at, snapshot + at, row);
    exchange_.touched[static_cast<std::size_t>(u)] = 0;
  }
}

// After the merge or the exchange: the clock is applied and the next reads it.
void Table::replica_finish_clock(std::int64_t clock) {
  for (auto& f : fetched_) f.clear();
  ++stats_.clocks;
  ++stats_.replica_clocks;
  {
    std::lock_guard lock(mu_);
    next_apply_ = clock + 1;
  }
  if (clock + 1 < clocks_) next_reads_clock(clock, "a Hybrid replica");
}

// The owned units of the snapshot (the values of the last clock) go back to the
// array. In a replica's layout this rank reads every unit, so reads_from_ lists the
// units it owns and serves_ their local offsets, in the same order.
void Table::replica_end() {
  const auto me = static_cast<std::size_t>(rt_.rank());
  const std::size_t row = row_bytes();
  std::byte* v = values();
  const auto& units = reads_from_[me];
  const auto& offsets = serves_[me];
  STRATA_CHECK(units.size() == offsets.size(), "a replica's owned units and offsets differ");
  for (std::size_t k = 0; k < units.size(); ++k)
    std::memcpy(v + static_cast<std::size_t>(offsets[k]) * elem_,
                snapshot_.data() + static_cast<std::size_t>(units[k]) * row, row);
}

}  // namespace strata::ps
