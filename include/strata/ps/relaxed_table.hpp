// A relaxed array's parameter-server table (DESIGN.md §5, strata/relaxed.hpp): the
// owner side (master values, deltas applied per clock in rank order, blocks sent to
// readers) and the reader side (the static cache, clocks, the staleness wait, the
// dynamic path). Message handlers run on the Postman's thread; everything else on
// loop threads. The two meet under one mutex.
//
// `Owner` (the Buffer) provides take_pending(), hand_over(thread, set),
// absorb(set), prepare_apply() and apply_delta(key, delta, round).
//
// With managed communication (ps/managed_outbox.hpp) loop threads also hand their
// deltas to the outbox between clocks, its pump sends some early (kEarly), and
// owners fold those in as they arrive. An execution record of such a run (or a
// Hybrid one) logs what the reads saw and what the owner applied (ps/timing_log.hpp).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "strata/detail/cache_view.hpp"
#include "strata/detail/pack.hpp"
#include "strata/detail/stopwatch.hpp"
#include "strata/dist_array.hpp"
#include "strata/ps/managed_outbox.hpp"
#include "strata/ps/owner_history.hpp"
#include "strata/ps/postman.hpp"
#include "strata/loop/relaxed_base.hpp"
#include "strata/ps/timing_log.hpp"

namespace strata::ps {

template <class T, std::size_t N, class Owner>
class RelaxedTable final : public detail::RelaxedBase {
 public:
  RelaxedTable(DistArray<T, N>& target, Owner& owner, Consistency consistency)
      : target_(target), owner_(owner), consistency_(consistency) {
    detail::check_consistency(consistency, label(), std::is_arithmetic_v<T>);
    if constexpr (std::is_arithmetic_v<T>)
      if (consistency.is_managed())
        outbox_ = std::make_unique<ManagedOutbox<T>>(target.runtime().threads(), volume(target.shape()), consistency,
                                                     sizeof(Header), sizeof(Delta), target.runtime().next_seed());
    unit_len_ = N == 1 ? 1 : target.shape()[N - 1];
    units_ = unit_len_ > 0 ? volume(target.shape()) / unit_len_ : 0;
    history_ = OwnerHistory<T>(unit_len_);
    keeps_history_ = consistency.staleness > 0 && !outbox_ && target.runtime().size() > 1;
    counters_.resize(static_cast<std::size_t>(target.runtime().threads()));
    waiters_.resize(counters_.size());
    fetched_.resize(counters_.size());
    missed_.resize(counters_.size());
  }
  ~RelaxedTable() override {
    if (target_.cache_view() == &view_) target_.set_cache_view(nullptr);
    if (postman_) postman_->unsubscribe(target_.array_id());
  }

  std::uint64_t array_id() const override { return target_.array_id(); }
  const Consistency& consistency() const override { return consistency_; }
  std::int64_t unit_count() const override { return units_; }
  std::int64_t unit_of(std::span<const std::int64_t> index) const override {
    if constexpr (N == 1) return index[0];
    std::int64_t u = 0;
    for (std::size_t d = 0; d + 1 < N; ++d) u = u * target_.shape()[d] + index[d];
    return u;
  }
  const RelaxedStats& stats() const { return stats_; }
  bool managed() const override { return outbox_ != nullptr; }
  /// Hybrid, during a run: Buffer::add also folds its delta into the cache.
  bool folds_locally() const { return folding_; }
  // Lock-free: the rank's threads add concurrently, and read without locks.
  void fold_locally(std::int64_t key, const T& delta) {
    const std::int64_t at = cache_position(key);
    if (at >= 0) std::atomic_ref<T>(block_[static_cast<std::size_t>(at)]).fetch_add(delta, std::memory_order_relaxed);
  }
  void offer(int thread) override {
    if (outbox_->wanted(thread))
      outbox_->take_from(thread, [&](DeltaSet<T>& into) { owner_.hand_over(thread, into); });
  }

  void begin_run(std::span<const std::uint64_t> read_units, std::int64_t clocks) override {
    Runtime& rt = target_.runtime();
    if constexpr (N > 1) {
      const auto& box = target_.local_box();
      if (!box.empty() && box[N - 1].size() != 0 && box[N - 1].size() != target_.shape()[N - 1])
        throw OptionError(fmt::format("relaxed array {}: its last dimension is partitioned ({}); a relaxed array "
                                      "is cached by whole rows, so partition it along another dimension",
                                      label(), target_.distribution_of().describe()));
    }
    if (!postman_) {
      postman_ = &ps::postman(rt);
      postman_->subscribe(target_.array_id(), [this](int from, std::span<const std::byte> body) {
        on_message(from, body);
      });
      if (outbox_) postman_->set_chore(target_.array_id(), [this] { pump(); });
    }
    {
      std::lock_guard lock(mu_);  // reset before any collective, so no message of this run is lost
      clocks_ = std::max<std::int64_t>(clocks, 1);
      next_apply_ = 0;
      deferred_reads_.clear();
      inbound_.clear();
      arrived_.clear();
      received_.assign(static_cast<std::size_t>(rt.size()), 0);
      staged_.assign(static_cast<std::size_t>(rt.size()), Staged{});
      for (auto& w : waiters_) w.ready = false;
      history_.clear();
    }
    owner_.prepare_apply();
    round_ = owner_.reserve_rounds(clocks_);
    split_clock_ = -1;
    lay_out(read_units);
    if (!follow_.empty() && static_cast<std::int64_t>(follow_.size()) != clocks_)
      throw ReplayError(fmt::format("relaxed array {}: the record holds cache versions for {} clock(s), this loop "
                                    "call runs {}",
                                    label(), follow_.size(), clocks_));
    version_ = -1;
    versions_.assign(static_cast<std::size_t>(clocks_), -1);
    if (direct_) {
      view_.block = target_.local_values().data();  // the values may have moved since the last run
    } else {
      // The first fill: every owner sends each reader its block as it is now.
      std::vector<Bytes> blocks(static_cast<std::size_t>(rt.size()));
      for (int q = 0; q < rt.size(); ++q) blocks[static_cast<std::size_t>(q)] = snapshot_for(q);
      const auto filled = rt.comm().alltoallv(blocks);
      for (int o = 0; o < rt.size(); ++o) store_block(o, filled[static_cast<std::size_t>(o)]);
    }
    for (auto& c : counters_) c = Counters{};
    if (logging_) log_.begin(rt.threads(), outbox_ != nullptr);
    if (outbox_) outbox_->begin_run(std::chrono::steady_clock::now());
    folding_ = consistency_.hybrid;
    // A one-rank job without managed communication gets no messages but its own
    // dynamic reads, which wake the Postman when sent: it need not poll. (Its polls
    // every 50 us cost a loop thread sharing the core up to half its speed.)
    polled_ = rt.size() > 1 || outbox_;
    if (polled_) postman_->begin_use();
  }

  void tick(std::int64_t clock) override {
    Runtime& rt = target_.runtime();
    const int R = rt.size(), me = rt.rank();
    // This rank's deltas of the clock, one message per owner (empty ones too: an
    // owner applies a clock once it has heard from every rank).
    auto flush = [&] {
      std::vector<Bytes> out(static_cast<std::size_t>(R));
      for (auto& b : out) detail::append(b, Header{kDeltas, 0, clock, 0});
      owner_.take_pending([&](std::int64_t k, const T& d) {
        detail::append(out[static_cast<std::size_t>(owner_of(k))], Delta{k, d});
      });
      for (int r = 0; r < R; ++r) send(r, me, out[static_cast<std::size_t>(r)]);
    };
    if (R == 1 && !outbox_) {
      if (split_clock_ != clock) {  // the rank's threads did not share the work
        prepare_tick(clock, 1);
        tick_part(clock, 0, 1);
      }
      finish_own_clock(clock);
      return;
    }
    if (outbox_) {
      outbox_->end_clock([&](DeltaSet<T>& rest) {
        owner_.absorb(rest);
        flush();
      });
    } else {
      flush();
    }
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
    version_ = take;
    versions_[static_cast<std::size_t>(clock + 1)] = take;
    stats_.blocked_seconds += detail::seconds_since(start);
    const auto lag = static_cast<std::size_t>(clock - take);
    if (stats_.staleness_histogram.size() <= lag) stats_.staleness_histogram.resize(lag + 1);
    ++stats_.staleness_histogram[lag];
  }

  std::span<const std::int64_t> cache_versions() const override { return versions_; }
  void follow_versions(std::vector<std::int64_t> versions) override { follow_ = std::move(versions); }

  void end_run() override {
    Runtime& rt = target_.runtime();
    folding_ = false;
    if (outbox_) outbox_->end_run(std::chrono::steady_clock::now(), stats_);
    {
      std::unique_lock lock(mu_);
      wait_for(lock, fmt::format("relaxed array {}: the owners applying the last clock", label()), [&] {
        if (next_apply_ < clocks_) return false;
        for (std::size_t o = 0; o < received_.size(); ++o)
          if (!reads_from_[o].empty() && received_[o] < clocks_ - 1) return false;
        return true;
      });
      stats_.bytes_sent += server_bytes_;
      stats_.messages_sent += server_messages_;
      server_bytes_ = server_messages_ = 0;
    }
    if (polled_) postman_->end_use();
    for (const auto& c : counters_) {
      stats_.cache_reads += c.cache;
      stats_.dynamic_reads += c.dynamic;
    }
    learn_missed_units();
    rt.comm().barrier();  // after it, no message of this run is in flight
  }

  // One rank without managed communication applies its clocks itself (see
  // apply_own); for a 1-D array the rank's threads can share that work, each
  // taking a range of elements.
  bool splits_tick() const override { return N == 1 && target_.runtime().size() == 1 && !outbox_; }
  void prepare_tick(std::int64_t clock, int parts) override {
    owner_.take_pending_begin();
    if (changed_parts_.size() < static_cast<std::size_t>(parts)) changed_parts_.resize(static_cast<std::size_t>(parts));
    split_clock_ = clock;
  }
  void tick_part(std::int64_t clock, int part, int parts) override {
    apply_own(clock, part, parts, changed_parts_[static_cast<std::size_t>(part)]);
  }

  void share_cache(int counter) override {
    view_.counter = counter;
    target_.set_cache_view(counter >= 0 && !logging_ ? &view_ : nullptr);  // a logged read goes through read()
  }
  void count_cache_reads(int thread, std::int64_t reads) override {
    counters_[static_cast<std::size_t>(thread)].cache += reads;
  }

  void* read(std::span<const std::int64_t> index, bool whole_last, detail::AccessMode mode, int thread) override {
    if (mode == detail::AccessMode::buffered) return nullptr;
    if (mode != detail::AccessMode::read)
      throw OptionError(fmt::format("relaxed array {} is written in place inside a loop; write it through its Buffer",
                                    label()));
    const std::int64_t u = unit_of(index);
    const std::int64_t within = (N == 1 || whole_last) ? 0 : index[N - 1];
    Counters& c = counters_[static_cast<std::size_t>(thread)];
    T* unit = view_.unit<T>(u);
    if (unit) {
      ++c.cache;
    } else {
      ++c.dynamic;
      unit = fetch(u, thread);
    }
    if (logging_) unit = logged(thread, u, unit);
    return unit + within;
  }

  void log_timing(bool on) override { logging_ = on; }
  Bytes take_timing_log() override { return log_.take(target_.array_id(), row_bytes()); }


 private:
  enum Kind : std::uint32_t { kDeltas = 1, kValues = 2, kRead = 3, kReadReply = 4, kEarly = 5 };
  struct Header {
    std::uint32_t kind;
    std::int32_t thread;
    std::int64_t clock;
    std::int64_t unit;
  };
  struct Delta {
    std::int64_t key;
    T delta;
  };
  // Per owner: the updates that arrived since the cache last took them, oldest
  // first, each with its clock, and the clock of the newest.
  struct Staged {
    std::int64_t clock = -1;
    std::vector<std::pair<std::int64_t, Bytes>> updates;
  };
  // Reads one loop thread served, from the cache and through the dynamic path (a
  // cache line each: every thread counts its own).
  struct alignas(64) Counters {
    std::int64_t cache = 0, dynamic = 0;
  };
  struct Waiter {
    bool ready = false;
    std::vector<T> values;
  };

  std::string label() const { return detail::array_label(target_); }

  // A read while logging: the unit's values go to the thread's log, and the body
  // gets the logged copy. Under Hybrid the rank's threads fold deltas into the cache
  // as this runs, so the copy reads each element atomically.
  T* logged(int thread, std::int64_t u, T* unit) {
    std::byte* at = log_.reads(thread).add(u, row_bytes());
    if constexpr (std::is_arithmetic_v<T>) {
      if (folding_) {
        for (std::int64_t k = 0; k < unit_len_; ++k) {
          const T v = std::atomic_ref<T>(unit[k]).load(std::memory_order_relaxed);
          std::memcpy(at + static_cast<std::size_t>(k) * sizeof(T), &v, sizeof v);
        }
        return reinterpret_cast<T*>(at);
      }
    }
    std::memcpy(at, unit, row_bytes());
    return reinterpret_cast<T*>(at);
  }

  void send(int dest, int me, const Bytes& message) {
    postman_->send(dest, target_.array_id(), message);
    if (dest != me) {
      stats_.bytes_sent += static_cast<std::int64_t>(message.size());
      ++stats_.messages_sent;
    }
  }

  // Units read through the dynamic path join the read set of the next call (the
  // loop will most likely read them again): iterative-ness, learned rather than
  // recorded.
  void learn_missed_units() {
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

  // Waits on the table's condition variable, checking the Postman and the job's
  // timeout: a dead or stuck rank becomes a TimeoutError naming what was awaited.
  template <class Pred>
  void wait_for(std::unique_lock<std::mutex>& lock, const std::string& what, Pred ready) {
    Runtime& rt = target_.runtime();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(rt.comm().timeout());
    if (!ready()) postman_->hurry();
    while (!ready()) {
      cv_.wait_for(lock, std::chrono::milliseconds(50));
      if (ready()) return;
      lock.unlock();
      postman_->check();
      lock.lock();
      if (std::chrono::steady_clock::now() > deadline) throw TimeoutError(what, rt.rank(), rt.comm().timeout());
    }
  }

  // The bytes of one unit: a constant for 1-D arrays, so their copies compile to moves.
  std::size_t row_bytes() const {
    if constexpr (N == 1) return sizeof(T);
    else return static_cast<std::size_t>(unit_len_) * sizeof(T);
  }
  Index<N> first_of(std::int64_t unit) const { return delinearize(unit * unit_len_, target_.shape()); }
  // Where element `key` (row-major) sits in the cache block, or -1 when not cached.
  // Hybrid and managed tables only, which keep a block (never direct_).
  std::int64_t cache_position(std::int64_t key) const {
    const T* unit = view_.unit<T>(key / unit_len_);
    return unit ? (unit - block_.data()) + key % unit_len_ : -1;
  }
  int owner_of(std::int64_t key) const { return target_.distribution_of().owner(delinearize(key, target_.shape()).data()); }

  // The read set becomes one block per owner, in unit order within each; owners
  // learn which of their units each reader caches. Collective; redone only when a
  // read set or the array's partition changed on some rank.
  void lay_out(std::span<const std::uint64_t> read_units) {
    Runtime& rt = target_.runtime();
    const int R = rt.size();
    std::vector<std::uint64_t> bits;
    if (consistency_.prefetch) {
      bits.assign(read_units.begin(), read_units.end());
      bits.resize(std::max(bits.size(), learned_bits_.size()), 0);
      for (std::size_t w = 0; w < learned_bits_.size(); ++w) bits[w] |= learned_bits_[w];
    }
    bits.resize(static_cast<std::size_t>((units_ + 63) / 64), 0);
    const bool changed = bits != laid_out_bits_ || target_.structure_version() != laid_out_version_;
    if (rt.comm().allreduce(static_cast<std::int32_t>(changed), ReduceOp::max) == 0) return;
    laid_out_bits_ = bits;
    laid_out_version_ = target_.structure_version();
    const auto& dist = target_.distribution_of();
    reads_from_.assign(static_cast<std::size_t>(R), {});
    for (std::size_t w = 0; w < bits.size(); ++w)
      for (std::uint64_t b = bits[w]; b; b &= b - 1) {
        const auto u = static_cast<std::int64_t>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(b)));
        if (u >= units_) break;
        reads_from_[static_cast<std::size_t>(dist.owner(first_of(u).data()))].push_back(u);
      }
    // A read set of more than a quarter of the array is cached in an array-shaped
    // block (a read is a bit test and a load); a smaller one compactly, behind a
    // slot table.
    std::int64_t cached = 0;
    for (const auto& r : reads_from_) cached += static_cast<std::int64_t>(r.size());
    whole_ = cached * 4 > units_;
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
    direct_ = whole_ && R == 1 && !outbox_ && !consistency_.hybrid && owner_values_are_laid_out_like_the_array();
    if (direct_) std::vector<T>().swap(block_);
    else block_.assign(static_cast<std::size_t>(whole_ ? units_ : slot) * static_cast<std::size_t>(unit_len_), T{});
    const auto asked = rt.comm().alltoallv(lists);
    const std::size_t local_units = target_.local_values().size() / static_cast<std::size_t>(std::max<std::int64_t>(unit_len_, 1));
    serves_.assign(static_cast<std::size_t>(R), {});
    position_for_.assign(static_cast<std::size_t>(R), {});
    for (int q = 0; q < R; ++q) {
      auto& where = position_for_[static_cast<std::size_t>(q)];
      where.assign(local_units, -1);
      for (const auto u : detail::as_vector<std::int64_t>(asked[static_cast<std::size_t>(q)])) {
        const std::int64_t off = target_.local_offset(first_of(u));
        STRATA_CHECK(off >= 0, "a reader asked for a unit this rank does not own");
        where[static_cast<std::size_t>(off / unit_len_)] = static_cast<std::int32_t>(serves_[static_cast<std::size_t>(q)].size());
        serves_[static_cast<std::size_t>(q)].push_back(off);
      }
    }
    is_changed_.assign(direct_ ? 0 : local_units, 0);  // a direct cache tracks no changes
    changed_.clear();
    // A direct cache whose read set is every unit needs no bit test: the view says
    // it holds them all (reads outside the set, which the test counts, cannot occur).
    const bool holds_all = direct_ && cached == units_;
    view_ = detail::CacheView{direct_ ? target_.local_values().data() : block_.data(),
                              whole_ && !holds_all ? laid_out_bits_.data() : nullptr,
                              whole_ ? nullptr : slot_of_.data(), units_, unit_len_};
  }

  // Whether unit u of this rank's values sits where an array-shaped cache block
  // keeps it (u * unit_len_), for every unit: true of one rank's dense array.
  bool owner_values_are_laid_out_like_the_array() const {
    if (target_.local_values().size() != static_cast<std::size_t>(units_ * unit_len_)) return false;
    for (std::int64_t u = 0; u < units_; ++u)
      if (target_.local_offset(first_of(u)) != u * unit_len_) return false;
    return true;
  }

  // The owner's current values of all of reader q's units, in q's order, after a
  // header: the first fill of q's cache.
  Bytes snapshot_for(int q) const {
    Bytes b;
    detail::append(b, Header{kValues, 0, -1, 0});
    const auto& units = serves_[static_cast<std::size_t>(q)];
    const std::size_t at = b.size(), row = row_bytes();
    b.resize(at + units.size() * row);
    const auto values = target_.local_values();
    for (std::size_t k = 0; k < units.size(); ++k)
      std::memcpy(b.data() + at + k * row, values.data() + units[k], row);
    return b;
  }

  void store_block(int o, const Bytes& message) {
    const std::size_t row = row_bytes();
    const std::size_t n = message.size() - sizeof(Header);
    STRATA_CHECK(n == reads_from_[static_cast<std::size_t>(o)].size() * row, "a cache block of the wrong size");
    for (std::size_t pos = 0; pos * row < n; ++pos)
      std::memcpy(block_.data() + slot_at(o, pos) * unit_len_, message.data() + sizeof(Header) + pos * row, row);
  }

  // Where the pos-th unit this rank reads from owner o sits in the block.
  std::size_t slot_at(int o, std::size_t pos) const {
    return whole_ ? static_cast<std::size_t>(reads_from_[static_cast<std::size_t>(o)][pos])
                  : static_cast<std::size_t>(base_[static_cast<std::size_t>(o)]) + pos;
  }

  // The units reader q caches that changed in this clock: (position in q's list,
  // values) pairs, after a header.
  Bytes update_for(int q, std::int64_t clock) const {
    Bytes b;
    detail::append(b, Header{kValues, 0, clock, 0});
    const auto& where = position_for_[static_cast<std::size_t>(q)];
    const auto values = target_.local_values();
    const std::size_t row = row_bytes(), pair = sizeof(std::int32_t) + row;
    std::size_t n = 0;
    for (const auto u : changed_) n += where[static_cast<std::size_t>(u)] >= 0;
    std::size_t at = b.size();
    b.resize(at + n * pair);  // sized once: a clock may change most of the array
    for (const auto u : changed_) {
      const std::int32_t pos = where[static_cast<std::size_t>(u)];
      if (pos < 0) continue;
      std::memcpy(b.data() + at, &pos, sizeof pos);
      std::memcpy(b.data() + at + sizeof pos, values.data() + u * unit_len_, row);
      at += pair;
    }
    return b;
  }

  void store_update(int o, const Bytes& pairs) {
    const std::size_t row = row_bytes();
    for (std::size_t at = 0; at < pairs.size(); at += sizeof(std::int32_t) + row) {
      std::int32_t pos;
      std::memcpy(&pos, pairs.data() + at, sizeof pos);
      std::memcpy(block_.data() + slot_at(o, static_cast<std::size_t>(pos)) * unit_len_, pairs.data() + at + sizeof pos,
                  row);
    }
  }

  // The dynamic path: one request to the owner, answered as of the clock of the array
  // the cache holds (so a read does not depend on when it is made). The value stays
  // put (for references the body holds) until the clock ends.
  T* fetch(std::int64_t u, int thread) {
    if (u < 0 || u >= units_)
      throw ShapeError(fmt::format("relaxed array {}: unit {} is outside the array", label(), u));
    Runtime& rt = target_.runtime();
    Waiter& w = waiters_[static_cast<std::size_t>(thread)];
    {
      std::lock_guard lock(mu_);
      w.ready = false;
    }
    Bytes ask;  // with the clock of the array the cache holds: the owner answers as of it
    detail::append(ask, Header{kRead, thread, version_, u});
    send(target_.distribution_of().owner(first_of(u).data()), rt.rank(), ask);
    std::unique_lock lock(mu_);
    wait_for(lock, fmt::format("relaxed array {}: a read of unit {} from its owner", label(), u),
             [&] { return w.ready; });
    missed_[static_cast<std::size_t>(thread)].push_back(u);
    auto& keep = fetched_[static_cast<std::size_t>(thread)][u];
    keep = w.values;
    return keep.data();
  }

  // ---- the Postman's thread ----
  void on_message(int from, std::span<const std::byte> body) {
    Header h;
    std::memcpy(&h, body.data(), sizeof h);
    const auto payload = body.subspan(sizeof h);
    switch (h.kind) {
      case kDeltas: {
        {
          std::lock_guard lock(mu_);
          auto& per_rank = inbound_[h.clock];
          per_rank.resize(staged_.size());
          per_rank[static_cast<std::size_t>(from)].assign(payload.begin(), payload.end());
          ++arrived_[h.clock];
        }
        apply_ready();
        break;
      }
      case kEarly: {
        for (const Delta& d : detail::as_vector<Delta>(payload)) apply_one(d, h.clock);
        break;
      }
      case kValues: {
        std::lock_guard lock(mu_);
        auto& s = staged_[static_cast<std::size_t>(from)];
        s.clock = h.clock;  // one owner's messages arrive in the order it sent them
        s.updates.emplace_back(h.clock, Bytes(payload.begin(), payload.end()));
        ++received_[static_cast<std::size_t>(from)];
        cv_.notify_all();
        break;
      }
      case kRead: {
        {
          // A reader whose cache holds clock m sees the unit as of clock m: until
          // this owner has applied it, the request waits (apply_ready answers it).
          std::lock_guard lock(mu_);
          if (must_wait(h)) {
            deferred_reads_.push_back({from, h});
            break;
          }
        }
        answer_read(from, h);
        break;
      }
      case kReadReply: {
        std::lock_guard lock(mu_);
        Waiter& w = waiters_[static_cast<std::size_t>(h.thread)];
        w.values.resize(static_cast<std::size_t>(unit_len_));
        std::memcpy(w.values.data(), payload.data(), payload.size());
        w.ready = true;
        cv_.notify_all();
        break;
      }
      default: STRATA_CHECK(false, "an unknown parameter-server message");
    }
  }

  // Whether a kRead as of clock m must wait: this owner has not yet applied clock m.
  // Under mu_.
  bool must_wait(const Header& ask) const { return next_apply_ <= ask.clock; }

  // The unit a kRead asked for, to the reader: the owner's master value, rolled back
  // over the clocks applied after the one the reader's cache holds (there are some
  // only under SSP; with managed communication the master value, early deltas and
  // all, is the point).
  void answer_read(int reader, const Header& ask) {
    const std::size_t row = row_bytes();
    Bytes reply;
    detail::append(reply, Header{kReadReply, ask.thread, 0, ask.unit});
    const std::size_t at = reply.size();
    reply.resize(at + row);
    const std::int64_t off = target_.local_offset(first_of(ask.unit));
    STRATA_CHECK(off >= 0, "a read reached a rank that does not own the unit");
    std::memcpy(reply.data() + at, target_.local_values().data() + off, row);
    if (keeps_history_) {
      std::int64_t applied;
      {
        std::lock_guard lock(mu_);
        applied = next_apply_;
      }
      STRATA_CHECK(history_.oldest(applied) <= ask.clock + 1, "a read older than the kept history");
      history_.roll_back(off / unit_len_, ask.clock, reinterpret_cast<T*>(reply.data() + at));
    }
    server_send(reader, reply);
  }

  void server_send(int dest, const Bytes& message) {
    postman_->send(dest, target_.array_id(), message);
    if (dest != postman_->rank()) {
      std::lock_guard lock(mu_);
      server_bytes_ += static_cast<std::int64_t>(message.size());
      ++server_messages_;
    }
  }

  // Folds one delta of clock `clock` in at its owner (this rank) and notes its unit
  // as changed: the next update each of its readers gets carries it.
  void apply_one(const Delta& d, std::int64_t clock) { apply_one(d, clock, changed_); }
  void apply_one(const Delta& d, std::int64_t clock, std::vector<std::int64_t>& changed) {
    std::int64_t off = target_.local_offset(delinearize(d.key, target_.shape()));
    if constexpr (N > 1) off /= unit_len_;
    const auto u = static_cast<std::size_t>(off);
    if (!is_changed_[u]) {
      is_changed_[u] = 1;
      changed.push_back(static_cast<std::int64_t>(u));
      if (keeps_history_) history_.note(off, target_.local_values().data() + off * unit_len_);
    }
    apply_logged(d.key, d.delta, clock);
  }
  void apply_logged(std::int64_t key, const T& delta, std::int64_t clock) {
    if (logging_) log_.applied(key, clock, delta);
    owner_.apply_delta(key, delta, round_ + clock);
  }

  // One rank without managed communication: this rank owns every element and its
  // cache is the only reader, so tick applies the clock's deltas itself (the rank's
  // threads are stopped) and copies the changed units into the cache: the same
  // arithmetic as the owner's path, without messages or waiting for the Postman.
  // Part `part` of `parts` takes its own elements (tick_part; parts > 1 only for
  // 1-D arrays, where elements and units coincide, so no two parts share a unit).
  // When the cache is the rank's own values (direct_), the apply is all there is.
  void apply_own(std::int64_t clock, int part, int parts, std::vector<std::int64_t>& changed) {
    if (direct_) {  // the cache is the values: nothing to copy, no changes to track
      owner_.take_pending_part([&](std::int64_t k, const T& d) { apply_logged(k, d, clock); }, part, parts);
      return;
    }
    owner_.take_pending_part([&](std::int64_t k, const T& d) { apply_one(Delta{k, d}, clock, changed); }, part, parts);
    if (clock + 1 < clocks_) {
      const auto values = target_.local_values();
      const std::size_t row = row_bytes();
      const auto& where = position_for_[0];
      for (const auto u : changed)
        if (const std::int32_t pos = where[static_cast<std::size_t>(u)]; pos >= 0)
          std::memcpy(block_.data() + slot_at(0, static_cast<std::size_t>(pos)) * unit_len_,
                      values.data() + u * unit_len_, row);
    }
    for (const auto u : changed) is_changed_[static_cast<std::size_t>(u)] = 0;
    changed.clear();
  }
  // After apply_own's parts: the clock is applied.
  void finish_own_clock(std::int64_t clock) {
    owner_.take_pending_end();
    split_clock_ = -1;
    const bool last = clock + 1 >= clocks_;
    {
      std::lock_guard lock(mu_);
      ++next_apply_;
      if (!last) ++received_[0];
    }
    for (auto& f : fetched_) f.clear();
    ++stats_.clocks;
    if (last) return;
    if (!follow_.empty() && follow_[static_cast<std::size_t>(clock + 1)] != clock)
      throw ReplayError(fmt::format("relaxed array {}: the record says clock {} read clock {} of the array; on one "
                                    "rank it reads clock {}",
                                    label(), clock + 1, follow_[static_cast<std::size_t>(clock + 1)], clock));
    version_ = clock;
    versions_[static_cast<std::size_t>(clock + 1)] = clock;
    if (stats_.staleness_histogram.empty()) stats_.staleness_histogram.resize(1);
    ++stats_.staleness_histogram[0];
  }

  // Managed communication, every turn of the Postman's loop (it keeps its own time).
  // Cached values rank the deltas, so the cache must hold still: under mu_.
  void pump() {
    std::lock_guard lock(mu_);
    outbox_->pump(
        std::chrono::steady_clock::now(), postman_->rank(),
        [&](std::int64_t k) -> std::optional<double> {
          const std::int64_t at = cache_position(k);
          if (at < 0) return std::nullopt;
          return static_cast<double>(block_[static_cast<std::size_t>(at)]);
        },
        [&](std::int64_t k) { return owner_of(k); },
        [&](int owner, std::int64_t clock, const std::vector<std::pair<std::int64_t, T>>& deltas) {
          Bytes b;
          detail::append(b, Header{kEarly, 0, clock, 0});
          for (const auto& [k, d] : deltas) detail::append(b, Delta{k, d});
          postman_->send(owner, target_.array_id(), b);
          return b.size();
        });
  }

  // Applies every clock whose deltas have all arrived, in clock order and, within a
  // clock, in rank order; then sends each reader its refreshed block.
  void apply_ready() {
    const int R = static_cast<int>(staged_.size());
    for (;;) {
      std::vector<Bytes> per_rank;
      std::int64_t clock;
      {
        std::lock_guard lock(mu_);
        clock = next_apply_;
        if (arrived_[clock] < R) return;
        per_rank = std::move(inbound_[clock]);
        inbound_.erase(clock);
        arrived_.erase(clock);
      }
      if (keeps_history_) history_.begin_clock(clock);
      for (const auto& from : per_rank)
        for (const Delta& d : detail::as_vector<Delta>(from)) apply_one(d, clock);
      if (clock + 1 < clocks_)
        for (int q = 0; q < R; ++q)
          if (!serves_[static_cast<std::size_t>(q)].empty()) server_send(q, update_for(q, clock));
      for (const auto u : changed_) is_changed_[static_cast<std::size_t>(u)] = 0;
      changed_.clear();
      std::vector<std::pair<int, Header>> now;
      {
        std::lock_guard lock(mu_);
        ++next_apply_;
        // Every rank has sent clock next_apply_-1, so no reader's cache is older
        // than clock next_apply_-1-s: only the clocks after that can be asked about.
        if (keeps_history_) history_.forget_before(next_apply_ - consistency_.staleness);
        cv_.notify_all();
        std::erase_if(deferred_reads_, [&](const auto& d) {
          if (must_wait(d.second)) return false;
          now.push_back(d);
          return true;
        });
      }
      for (const auto& [reader, ask] : now) answer_read(reader, ask);
    }
  }

  DistArray<T, N>& target_;
  Owner& owner_;
  Consistency consistency_;
  std::int64_t unit_len_ = 1, units_ = 0;
  Postman* postman_ = nullptr;

  // Layout: set by lay_out, read-only during a run.
  std::vector<std::uint64_t> laid_out_bits_;
  std::uint64_t laid_out_version_ = ~std::uint64_t{0};
  std::vector<std::vector<std::int64_t>> reads_from_;  // per owner: the units this rank caches
  std::vector<std::vector<std::int64_t>> serves_;      // per reader: local offsets of the units it caches
  std::vector<std::vector<std::int32_t>> position_for_;  // per reader, per local unit: its place in serves_, or -1
  // The Postman's thread, during a clock's apply: local units that changed.
  std::vector<std::uint8_t> is_changed_;
  std::vector<std::int64_t> changed_;
  // A one-rank table's clock: units each part changed, and the clock whose work the
  // rank's threads are sharing (-1: none).
  std::vector<std::vector<std::int64_t>> changed_parts_;
  std::int64_t split_clock_ = -1;
  bool whole_ = false;                                 // block_ is laid out like the array
  std::vector<std::int32_t> slot_of_;                  // compact layout: per unit, its slot in block_, or -1
  std::vector<std::int32_t> base_;                     // per owner: its first slot
  std::vector<T> block_;                               // the cache (empty when direct_)
  // One rank, neither managed nor Hybrid, array-shaped layout: the cache is the rank's
  // own values. The rank's threads apply each clock while stopped (apply_own), so no
  // read sees a value change, and a copy would cost a write per change and the memory.
  bool direct_ = false;
  detail::CacheView view_;                             // block_ as reads find units in it (set by lay_out)

  // Reader side, loop threads (tick runs while the rank's threads are stopped).
  std::int64_t version_ = -1;            // the clock of the array the cache holds (-1: none applied)
  std::vector<std::int64_t> versions_;   // per clock of the run: version_ during it
  std::vector<std::int64_t> follow_;     // a replay: the versions_ to take (empty: as fresh as allowed)
  std::vector<Counters> counters_;
  std::vector<std::unordered_map<std::int64_t, std::vector<T>>> fetched_;  // per thread, this clock
  std::vector<std::vector<std::int64_t>> missed_;  // per thread: units read dynamically in this call
  std::vector<std::uint64_t> learned_bits_;        // units read dynamically in earlier calls
  RelaxedStats stats_;
  std::unique_ptr<ManagedOutbox<T>> outbox_;  // managed communication only
  bool folding_ = false;                      // Hybrid, during a run
  bool logging_ = false;                      // an execution record logs this run's timing
  TimingLog<T> log_;                          // what the run's reads saw and its owner applied
  bool polled_ = false;                       // the Postman polls for this run's messages
  std::int64_t round_ = 0;  // the apply round of clock 0 of this run
  // SSP across ranks: the owner's last clocks, to answer reads as of a reader's clock.
  // The Postman's thread only (begin_run clears it under mu_).
  bool keeps_history_ = false;
  OwnerHistory<T> history_;

  // Shared with the Postman's thread, under mu_.
  std::mutex mu_;
  std::condition_variable cv_;
  std::int64_t clocks_ = 1, next_apply_ = 0;
  std::map<std::int64_t, std::vector<Bytes>> inbound_;  // per clock, per rank: deltas
  std::map<std::int64_t, int> arrived_;
  std::vector<Staged> staged_;             // per owner: updates not yet in the cache
  std::vector<std::int64_t> received_;     // per owner: blocks received this run
  std::vector<Waiter> waiters_;            // per thread: the dynamic read in flight
  std::vector<std::pair<int, Header>> deferred_reads_;  // (reader, request) waiting for a clock's apply
  std::int64_t server_bytes_ = 0, server_messages_ = 0;
};

}  // namespace strata::ps
