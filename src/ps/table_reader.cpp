// A relaxed table's reader side: reads from the cache, the dynamic path to the owner
// for units outside it, logged reads, and the units a call learned it reads.
#include <atomic>
#include <cstring>

#include <fmt/format.h>

#include "ps/ps_internal.hpp"
#include "strata/detail/pack.hpp"

namespace strata::ps {

void* Table::read(std::span<const std::int64_t> index, bool whole_last, detail::AccessMode mode, int thread) {
  if (mode == detail::AccessMode::buffered) return nullptr;
  if (mode != detail::AccessMode::read)
    throw OptionError(fmt::format("relaxed array {} is written in place inside a loop; write it through its Buffer",
                                  label()));
  const std::int64_t u = unit_of(index);
  const std::int64_t within = (geo_.dims == 1 || whole_last) ? 0 : index[geo_.dims - 1];
  Counters& c = counters_[static_cast<std::size_t>(thread)];
  std::byte* unit = cached_unit(u);
  if (unit) {
    ++c.cache;
  } else {
    ++c.dynamic;
    unit = fetch(u, thread);
  }
  if (logging_) unit = logged(thread, u, unit);
  return unit + static_cast<std::size_t>(within) * elem_;
}

namespace {
// Copies `bytes` of elements of U from `from`, each read atomically.
template <class U>
void copy_atomically(std::byte* to, std::byte* from, std::size_t bytes) {
  for (std::size_t k = 0; k < bytes; k += sizeof(U)) {
    const U v = std::atomic_ref<U>(*reinterpret_cast<U*>(from + k)).load(std::memory_order_relaxed);
    std::memcpy(to + k, &v, sizeof v);
  }
}
}  // namespace

// A read while logging: the unit's values go to the thread's log, and the body gets
// the logged copy. Under Hybrid the rank's threads fold deltas into the cache as this
// runs, so the copy reads each number atomically (a row struct is copied as it is:
// its folds are plain adds).
std::byte* Table::logged(int thread, std::int64_t u, std::byte* unit) {
  const std::size_t row = row_bytes();
  std::byte* at = log_.reads(thread).add(u, row);
  if (!ops_.folding || elem_ > 8) std::memcpy(at, unit, row);  // a row struct's folds are plain adds
  else if (elem_ == 8) copy_atomically<std::uint64_t>(at, unit, row);
  else if (elem_ == 4) copy_atomically<std::uint32_t>(at, unit, row);
  else if (elem_ == 2) copy_atomically<std::uint16_t>(at, unit, row);
  else copy_atomically<std::uint8_t>(at, unit, row);
  return at;
}

// The dynamic path: one request to the owner, answered as of the clock of the array
// the cache holds (so a read does not depend on when it is made). The value stays
// put (for references the body holds) until the clock ends.
std::byte* Table::fetch(std::int64_t u, int thread) {
  if (u < 0 || u >= units_) throw ShapeError(fmt::format("relaxed array {}: unit {} is outside the array", label(), u));
  Waiter& w = waiters_[static_cast<std::size_t>(thread)];
  {
    std::lock_guard lock(mu_);
    w.ready = false;
  }
  Bytes ask;  // with the clock of the array the cache holds: the owner answers as of it
  detail::append(ask, Header{kRead, thread, version_, u});
  std::int64_t index[kMaxDims];
  first_of(u, index);
  send(geo_.dist->owner(index), ask);
  std::unique_lock lock(mu_);
  wait_for(lock, fmt::format("relaxed array {}: a read of unit {} from its owner", label(), u),
           [&] { return w.ready; });
  missed_[static_cast<std::size_t>(thread)].push_back(u);
  auto& keep = fetched_[static_cast<std::size_t>(thread)][u];
  keep = w.values;
  return keep.data();
}

// Units read through the dynamic path join the read set of the next call (the loop
// will most likely read them again): iterative-ness, learned rather than recorded.
void Table::learn_missed_units() {
  if (!consistency_.prefetch) {
    for (auto& missed : missed_) missed.clear();
    return;
  }
  learned_bits_.resize(static_cast<std::size_t>((units_ + 63) / 64), 0);
  for (auto& missed : missed_) {
    for (const auto u : missed) {
      std::uint64_t& word = learned_bits_[static_cast<std::size_t>(u) / 64];
      const std::uint64_t bit = std::uint64_t{1} << (u % 64);
      if (!(word & bit)) ++stats_.learned_units;
      word |= bit;
    }
    missed.clear();
  }
}

}  // namespace strata::ps
