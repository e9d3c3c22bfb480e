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

// After the first fill: the snapshot is what every rank's replica holds now, and no
// unit is written or touched yet (a run that stopped early may have left marks).
void Table::replica_fill() {
  snapshot_.assign(block_.begin(), block_.end());
  std::fill(exchange_.written.begin(), exchange_.written.end(), std::uint8_t{0});
  std::fill(exchange_.touched.begin(), exchange_.touched.end(), std::uint8_t{0});
}

// A rank's changes of a clock, as it sends them: the count n, n rows of differences,
// then the n units (8-byte aligned only when a row is: read with memcpy).
void Table::replica_tick(std::int64_t clock) {
  const std::size_t row = row_bytes(), len = static_cast<std::size_t>(unit_len_);
  const auto units = static_cast<std::size_t>(units_);
  std::byte* replica = block_.data();
  std::byte* snapshot = snapshot_.data();
  auto& changed = exchange_.changed;

  // The units folded into since the last clock whose bytes differ (a unit written
  // back to its value sends nothing).
  changed.clear();
  std::uint8_t* written = exchange_.written.data();
  for (std::size_t u = 0; u < units; ++u)
    if (written[u]) {
      written[u] = 0;
      if (std::memcmp(replica + u * row, snapshot + u * row, row) != 0) changed.push_back(static_cast<std::int64_t>(u));
    }
  const auto n = static_cast<std::int64_t>(changed.size());
  const std::size_t ids_at = sizeof n + changed.size() * row;
  Bytes& mine = exchange_.parts[static_cast<std::size_t>(rt_.rank())];
  mine.resize(ids_at + changed.size() * sizeof(std::int64_t));
  std::memcpy(mine.data(), &n, sizeof n);
  for (std::size_t k = 0; k < changed.size(); ++k) {
    const auto u = static_cast<std::size_t>(changed[k]);
    ops_.difference(mine.data() + sizeof n + k * row, replica + u * row, snapshot + u * row, len);
  }
  if (n > 0) std::memcpy(mine.data() + ids_at, changed.data(), changed.size() * sizeof(std::int64_t));
  stats_.bytes_sent += static_cast<std::int64_t>(mine.size()) * (rt_.size() - 1);
  stats_.messages_sent += rt_.size() - 1;
  rt_.comm().allgatherv_in_place(exchange_.parts);

  // Every rank's differences, in rank order, into the snapshot; then the replica's
  // changed units take the snapshot's values.
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
    std::memcpy(replica + at, snapshot + at, row);
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
