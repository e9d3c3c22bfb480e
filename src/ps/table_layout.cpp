// A relaxed table's layout: the rank's read set as cache blocks, one per owner, and
// the blocks and per-clock updates owners send to fill them.
#include <algorithm>
#include <cstring>

#include "ps/ps_internal.hpp"
#include "strata/detail/pack.hpp"

namespace strata::ps {

// The read set becomes one block per owner, in unit order within each; owners
// learn which of their units each reader caches. Collective; redone only when a
// read set or the array's partition changed on some rank.
void Table::lay_out(std::span<const std::uint64_t> read_units) {
  const int R = rt_.size();
  std::vector<std::uint64_t> bits;
  if (consistency_.prefetch) {
    bits.assign(read_units.begin(), read_units.end());
    bits.resize(std::max(bits.size(), learned_bits_.size()), 0);
    for (std::size_t w = 0; w < learned_bits_.size(); ++w) bits[w] |= learned_bits_[w];
  }
  bits.resize(static_cast<std::size_t>((units_ + 63) / 64), 0);
  const auto every_unit = [&] {
    std::fill(bits.begin(), bits.end(), ~std::uint64_t{0});
    if (units_ % 64) bits.back() = (std::uint64_t{1} << (units_ % 64)) - 1;
  };
  // One rank whose values can be the cache itself (see direct_ below) caches every
  // unit: the cache costs nothing, every read is a load with no bit test, and the
  // loop needs no full reconnaissance to learn its read set (build_plan.cpp).
  const bool free_cache = holds_everything_for_free();
  if (consistency_.prefetch && free_cache) every_unit();
  const bool changed = bits != laid_out_bits_ || target_.structure_version() != laid_out_version_ ||
                       logging_ != laid_out_logging_;
  if (rt_.comm().allreduce(static_cast<std::int32_t>(changed), ReduceOp::max) == 0) return;
  laid_out_bits_ = bits;
  laid_out_version_ = target_.structure_version();
  laid_out_logging_ = logging_;
  // Every rank reading more than a quarter of the array (each would cache it laid out
  // like the array): each holds all of it as a replica (table_replica.cpp).
  replica_ = false;
  if (replicates_per_thread()) {
    replica_ = true;  // every rank's threads, whatever the read sets
  } else if (replicates_wide_read_sets()) {
    const bool wide = detail::wide_read_set(detail::units_in(bits), units_);
    replica_ = rt_.comm().allreduce(static_cast<std::int32_t>(wide), ReduceOp::min) == 1;
  }
  if (replica_) every_unit();
  reads_from_.assign(static_cast<std::size_t>(R), {});
  std::int64_t index[kMaxDims];
  for (std::size_t w = 0; w < bits.size(); ++w)
    for (std::uint64_t b = bits[w]; b; b &= b - 1) {
      const auto u = static_cast<std::int64_t>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(b)));
      if (u >= units_) break;
      first_of(u, index);
      reads_from_[static_cast<std::size_t>(geo_.dist->owner(index))].push_back(u);
    }
  // A wide read set is cached in an array-shaped block (a read is a bit test and a
  // load); a smaller one compactly, behind a slot table.
  std::int64_t cached = 0;
  for (const auto& r : reads_from_) cached += static_cast<std::int64_t>(r.size());
  whole_ = detail::wide_read_set(cached, units_);
  laid_out_bits_.resize(static_cast<std::size_t>((units_ + 63) / 64), 0);
  slot_of_.assign(whole_ ? 0 : static_cast<std::size_t>(units_), -1);
  base_.assign(static_cast<std::size_t>(R) + 1, 0);
  std::int32_t slot = 0;
  std::vector<Bytes> lists(static_cast<std::size_t>(R));
  for (int o = 0; o < R; ++o) {
    base_[static_cast<std::size_t>(o)] = slot;
    for (const auto u : reads_from_[static_cast<std::size_t>(o)]) {
      if (!whole_) slot_of_[static_cast<std::size_t>(u)] = slot;
      ++slot;
    }
    detail::append_span<std::int64_t>(lists[static_cast<std::size_t>(o)], reads_from_[static_cast<std::size_t>(o)]);
  }
  base_[static_cast<std::size_t>(R)] = slot;
  // Hybrid and read-my-writes fold adds into the cache as they are written: into
  // the values themselves when they are the cache (ElementOps::fold_only), unless the
  // run is logged (a log must see each read's value, and a fold is no delta to log).
  direct_ = whole_ && free_cache && !replica_;
  if (direct_) Bytes().swap(block_);
  else block_.assign(static_cast<std::size_t>(whole_ ? units_ : slot) * row_bytes(), std::byte{0});
  const auto asked = rt_.comm().alltoallv(lists);
  const std::size_t local_units =
      target_.local_bytes().size() / elem_ / static_cast<std::size_t>(std::max<std::int64_t>(unit_len_, 1));
  serves_.assign(static_cast<std::size_t>(R), {});
  position_for_.assign(static_cast<std::size_t>(R), {});
  for (int q = 0; q < R; ++q) {
    auto& where = position_for_[static_cast<std::size_t>(q)];
    where.assign(local_units, -1);
    for (const auto u : detail::as_vector<std::int64_t>(asked[static_cast<std::size_t>(q)])) {
      const std::int64_t off = unit_offset(u);
      STRATA_CHECK(off >= 0, "a reader asked for a unit this rank does not own");
      where[static_cast<std::size_t>(off / unit_len_)] =
          static_cast<std::int32_t>(serves_[static_cast<std::size_t>(q)].size());
      serves_[static_cast<std::size_t>(q)].push_back(off);
    }
  }
  is_changed_.assign(direct_ ? 0 : local_units, 0);  // a direct cache tracks no changes
  changed_.clear();
  // A direct cache whose read set is every unit needs no bit test: the view says
  // it holds them all (reads outside the set, which the test counts, cannot occur).
  const bool holds_all = (direct_ || replica_) && cached == units_;
  view_ = detail::CacheView{direct_ ? static_cast<void*>(values()) : static_cast<void*>(block_.data()),
                            whole_ && !holds_all ? laid_out_bits_.data() : nullptr,
                            whole_ ? nullptr : slot_of_.data(), units_, unit_len_};
  replica_allocate();
}

// Whether this rank's cache can be its values themselves (direct_, when the read set
// is cached whole), and so hold every unit for free: one rank, no managed
// communication, no logged folds, values laid out like the array.
bool Table::holds_everything_for_free() const {
  return rt_.size() == 1 && !managed_ && !(consistency_.folds() && logging_) &&
         owner_values_are_laid_out_like_the_array();
}

// Whether unit u of this rank's values sits where an array-shaped cache block
// keeps it (u * unit_len_), for every unit: true of one rank's dense array.
bool Table::owner_values_are_laid_out_like_the_array() const {
  if (target_.local_bytes().size() != static_cast<std::size_t>(units_ * unit_len_) * elem_) return false;
  for (std::int64_t u = 0; u < units_; ++u)
    if (unit_offset(u) != u * unit_len_) return false;
  return true;
}

// The owner's current values of all of reader q's units, in q's order, after a
// header: the first fill of q's cache.
Bytes Table::snapshot_for(int q) const {
  Bytes b;
  detail::append(b, Header{kValues, 0, -1, 0});
  const auto& units = serves_[static_cast<std::size_t>(q)];
  const std::size_t at = b.size(), row = row_bytes();
  b.resize(at + units.size() * row);
  const std::byte* v = values();
  for (std::size_t k = 0; k < units.size(); ++k)
    std::memcpy(b.data() + at + k * row, v + static_cast<std::size_t>(units[k]) * elem_, row);
  return b;
}

// One rank's first fill: what snapshot_for(0) and store_block(0, ...) would do, without
// the message between them (two copies of the block and their allocation per call).
void Table::fill_own_block() {
  const auto& offsets = serves_[0];
  const std::size_t row = row_bytes();
  const std::byte* v = values();
  for (std::size_t pos = 0; pos < offsets.size(); ++pos)
    std::memcpy(block_.data() + slot_at(0, pos) * row, v + static_cast<std::size_t>(offsets[pos]) * elem_, row);
}

void Table::store_block(int o, const Bytes& message) {
  const std::size_t row = row_bytes();
  const std::size_t n = message.size() - sizeof(Header);
  STRATA_CHECK(n == reads_from_[static_cast<std::size_t>(o)].size() * row, "a cache block of the wrong size");
  for (std::size_t pos = 0; pos * row < n; ++pos)
    std::memcpy(block_.data() + slot_at(o, pos) * row, message.data() + sizeof(Header) + pos * row, row);
}

// The units reader q caches that changed in this clock: (position in q's list,
// values) pairs, after a header.
Bytes Table::update_for(int q, std::int64_t clock) const {
  Bytes b;
  detail::append(b, Header{kValues, 0, clock, 0});
  const auto& where = position_for_[static_cast<std::size_t>(q)];
  const std::byte* v = values();
  const std::size_t row = row_bytes(), pair = sizeof(std::int32_t) + row;
  std::size_t n = 0;
  for (const auto u : changed_) n += where[static_cast<std::size_t>(u)] >= 0;
  std::size_t at = b.size();
  b.resize(at + n * pair);  // sized once: a clock may change most of the array
  for (const auto u : changed_) {
    const std::int32_t pos = where[static_cast<std::size_t>(u)];
    if (pos < 0) continue;
    std::memcpy(b.data() + at, &pos, sizeof pos);
    std::memcpy(b.data() + at + sizeof pos, v + static_cast<std::size_t>(u) * row, row);
    at += pair;
  }
  return b;
}

void Table::store_update(int o, const Bytes& pairs) {
  const std::size_t row = row_bytes();
  for (std::size_t at = 0; at < pairs.size(); at += sizeof(std::int32_t) + row) {
    std::int32_t pos;
    std::memcpy(&pos, pairs.data() + at, sizeof pos);
    std::memcpy(block_.data() + slot_at(o, static_cast<std::size_t>(pos)) * row, pairs.data() + at + sizeof pos, row);
    if (refolds_) refreshed_[static_cast<std::size_t>(reads_from_[static_cast<std::size_t>(o)][
                      static_cast<std::size_t>(pos)])] = 1;
  }
}

}  // namespace strata::ps
