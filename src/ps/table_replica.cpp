// A Hybrid table on several ranks as a whole replica per rank.
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
  exchange_.writer.assign(units, -1);
  exchange_.parts.resize(replica_ ? static_cast<std::size_t>(rt_.size()) : 0);
  exchange_.scratch.resize(row_bytes());
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
// differences, summed in thread order.
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
      std::int16_t& w = exchange_.writer[u];
      if (exchange_.slot[u] < 0) {
        exchange_.slot[u] = static_cast<std::int32_t>(mine.size());
        mine.push_back(static_cast<std::int64_t>(u));
        w = static_cast<std::int16_t>(t);
      } else {
        w = -2;
      }
    }
  }
  const auto n = static_cast<std::int64_t>(mine.size());
  const std::size_t ids_at = sizeof n + mine.size() * row;
  Bytes& part = exchange_.parts[static_cast<std::size_t>(rt_.rank())];
  part.resize(ids_at + mine.size() * sizeof(std::int64_t));
  std::memcpy(part.data(), &n, sizeof n);
  // On one rank a unit one replica alone changed takes that replica's value
  // (replica_apply): its difference would not be read.
  const bool sole_takes_value = rt_.size() == 1;
  for (const auto& [t, u] : by_thread) {
    const auto unit = static_cast<std::size_t>(u);
    if (sole_takes_value && exchange_.writer[unit] >= 0) continue;
    std::byte* out = part.data() + sizeof n + static_cast<std::size_t>(exchange_.slot[unit]) * row;
    const std::byte* now = static_cast<const std::byte*>(replicas_[static_cast<std::size_t>(t)]) + unit * row;
    if (!exchange_.touched[unit]) {  // the first replica to change it: its difference
      exchange_.touched[unit] = 1;
      ops_.difference(out, now, snapshot + unit * row, len);
    } else {
      ops_.difference(exchange_.scratch.data(), now, snapshot + unit * row, len);
      ops_.add_run(out, exchange_.scratch.data(), len);
    }
  }
  for (const auto u : mine) {
    exchange_.touched[static_cast<std::size_t>(u)] = 0;
    exchange_.slot[static_cast<std::size_t>(u)] = -1;
  }
  if (n > 0) std::memcpy(part.data() + ids_at, mine.data(), mine.size() * sizeof(std::int64_t));
}

void Table::replica_tick(std::int64_t clock) {
  replica_gather_changes();
  const Bytes& part = exchange_.parts[static_cast<std::size_t>(rt_.rank())];
  stats_.bytes_sent += static_cast<std::int64_t>(part.size()) * (rt_.size() - 1);
  stats_.messages_sent += rt_.size() - 1;
  if (rt_.size() > 1) rt_.comm().allgatherv_in_place(exchange_.parts);
  replica_apply(clock);
}

// Every rank's differences, in rank order, into the snapshot; then every replica's
// changed units take the snapshot's values. On one rank a unit one thread alone
// changed takes that thread's value itself, not snapshot + difference, which may
// round differently: its bits are those of the thread's adds, as in a serial run.
void Table::replica_apply(std::int64_t clock) {
  const std::size_t row = row_bytes(), len = static_cast<std::size_t>(unit_len_);
  std::byte* snapshot = snapshot_.data();
  auto& changed = exchange_.changed;
  const bool sole_takes_value = rt_.size() == 1;
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
      const std::int16_t sole = exchange_.writer[unit];
      if (sole_takes_value && sole >= 0)
        std::memcpy(snapshot + unit * row,
                    static_cast<const std::byte*>(replicas_[static_cast<std::size_t>(sole)]) + unit * row, row);
      else
        ops_.add_run(snapshot + unit * row, part.data() + sizeof m + static_cast<std::size_t>(k) * row, len);
      if (!exchange_.touched[unit]) {
        exchange_.touched[unit] = 1;
        changed.push_back(u);
      }
    }
  }
  for (const auto u : exchange_.mine) exchange_.writer[static_cast<std::size_t>(u)] = -1;
  for (const auto u : changed) {
    const auto at = static_cast<std::size_t>(u) * row;
    for (void* replica : replicas_) std::memcpy(static_cast<std::byte*>(replica) + at, snapshot + at, row);
    exchange_.touched[static_cast<std::size_t>(u)] = 0;
  }

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
