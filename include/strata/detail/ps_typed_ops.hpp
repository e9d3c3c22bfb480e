// The typed half of a Buffer (strata/buffer.hpp): its per-thread delta sets, its
// apply function and the owners' apply state, behind the engine's table of
// operations (detail/ps_element_ops.hpp). The per-write add is here, inline;
// everything the engine asks of it works on a run of elements. The engine's, not the
// API: it is under include/ because Buffer instantiates it.
#pragma once

#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "strata/apply.hpp"
#include "strata/dist_array.hpp"
#include "strata/loop/undo.hpp"
#include "strata/detail/worker.hpp"
#include "strata/detail/delta_set.hpp"
#include "strata/detail/ps_element_ops.hpp"

namespace strata::ps {

template <class T, std::size_t N, class Apply>
class TypedOps final : public ElementOps, public detail::UndoableState {
 public:
  using state_type = typename Apply::state_type;
  /// An (int64 key, delta) record as the engine packs it: the delta at offset 8,
  /// padded to 8 bytes.
  static constexpr std::size_t kRecordBytes = sizeof(std::int64_t) + (sizeof(T) + 7) / 8 * 8;
  // A replica's differences sit 8-byte aligned in its messages.
  static constexpr bool kSubtracts = subtractable_v<T> && alignof(T) <= 8;

  TypedOps(DistArray<T, N>& target, Apply apply)
      : ElementOps(sizeof(T), kRecordBytes, std::is_arithmetic_v<T>, std::is_integral_v<T>),
        target_(&target),
        apply_(std::move(apply)),
        pending_(static_cast<std::size_t>(target.runtime().threads()), Pending{DeltaSet<T>(volume(target.shape()))}) {}

  /// The per-write path: adds `delta` to element k (row-major) in this thread's set.
  [[gnu::always_inline]] void add(std::int64_t k, const T& delta) {
    if (folding) [[unlikely]] {
        fold(k, delta);
        if (fold_only) return;
      }
    pending_[static_cast<std::size_t>(detail::t_delta_set)].set.add(k, delta);
  }
  /// A row's adds: `len` deltas to the elements [k, k + len) in this thread's set.
  void add_row(std::int64_t k, const T* delta, std::size_t len) {
    if (folding) [[unlikely]] {
        fold_row(k, delta, len);
        if (fold_only) return;
      }
    pending_[static_cast<std::size_t>(detail::t_delta_set)].set.add_row(k, delta, len);
  }
  typename DeltaSet<T>::Slots thread_slots() const {
    return pending_[static_cast<std::size_t>(detail::t_delta_set)].set.slots();
  }
  /// Elements with deltas waiting on this rank (counted per thread).
  std::size_t pending() const {
    std::size_t n = 0;
    for (const auto& p : pending_) n += p.set.size();
    return n;
  }

  // ---- ElementOps ----
  std::size_t set_count() const override { return pending_.size(); }
  void reset_sets(std::size_t n) override { pending_.resize(n, Pending{DeltaSet<T>(volume(target_->shape()))}); }
  void drain(std::size_t from, std::size_t count, int part, int parts, DeltaSink& sink) override {
    std::vector<DeltaSet<T>*> sets;
    for (std::size_t t = from; t < from + count; ++t) sets.push_back(&pending_[t].set);
    constexpr std::size_t kRun = 512;
    std::vector<std::int64_t> keys(kRun);
    std::vector<T> deltas(kRun);
    std::size_t n = 0;
    const auto give = [&] {
      sink.take({keys.data(), reinterpret_cast<const std::byte*>(deltas.data()), n});
      n = 0;
    };
    DeltaSet<T>::drain_part(std::span<DeltaSet<T>* const>(sets), part, parts, [&](std::int64_t k, const T& d) {
      keys[n] = k;
      deltas[n] = d;
      if (++n == kRun) give();
    });
    if (n > 0) give();
  }

  const std::vector<IndexSet>& local_box() const override { return target_->local_box(); }
  // The owners' per-element state lives in a DistArray laid out like the target, so
  // it follows the target when a plan repartitions it (and shares its local offsets).
  void prepare_apply() override {
    if constexpr (!std::is_empty_v<state_type>) {  // apply::Sum keeps nothing
      const Partition& p = target_->distribution_of().partition();
      const detail::AnonymousArrays internal;  // created lazily: must not shift the ids of the user's arrays
      if (!state_)
        state_.emplace(DistArray<state_type, N>::fill(target_->runtime(), target_->shape(), state_type{}, p));
      else if (!(state_->distribution_of().partition() == p)) state_->repartition(p);
    }
  }
  void apply(const std::int64_t* offsets, const std::byte* deltas, std::size_t stride, std::size_t n,
             std::int64_t round) override {
    T* values = target_->local_values().data();
    if constexpr (std::is_empty_v<state_type>) {
      state_type none;
      for (std::size_t j = 0; j < n; ++j) {
        T d;
        std::memcpy(&d, deltas + j * stride, sizeof d);
        apply::call(apply_, values[offsets[j]], none, d, round);
      }
    } else {
      state_type* states = state_->local_values().data();
      for (std::size_t j = 0; j < n; ++j) {
        T d;
        std::memcpy(&d, deltas + j * stride, sizeof d);
        apply::call(apply_, values[offsets[j]], states[offsets[j]], d, round);
      }
    }
  }
  bool has_state() const override { return !std::is_empty_v<state_type>; }
  detail::CheckpointSnapshot state_snapshot(Bytes storage) override {
    if constexpr (std::is_empty_v<state_type>) {
      STRATA_CHECK(false, "a Buffer without owner state was asked for its snapshot");
      return {};
    } else {
      prepare_apply();
      return static_cast<const detail::ArrayBase&>(*state_).checkpoint_snapshot(std::move(storage));
    }
  }
  std::function<void()> stage_state(const std::filesystem::path& dir) override {
    if constexpr (std::is_empty_v<state_type>) {
      return [] {};
    } else {
      prepare_apply();
      return static_cast<detail::ArrayBase&>(*state_).stage_load(dir);
    }
  }
  void add_bytes(std::byte* to, const std::byte* delta) const override {
    T v, d;
    std::memcpy(&v, to, sizeof v);
    std::memcpy(&d, delta, sizeof d);
    add_into(v, d);
    std::memcpy(to, &v, sizeof v);
  }
  void to_doubles(const std::byte* values, std::size_t stride, std::size_t n, double* out) const override {
    if constexpr (std::is_arithmetic_v<T>) {
      for (std::size_t j = 0; j < n; ++j) {
        T v;
        std::memcpy(&v, values + j * stride, sizeof v);
        out[j] = static_cast<double>(v);
      }
    } else {
      STRATA_CHECK(false, "managed communication needs arithmetic elements");
    }
  }

  bool subtracts() const override { return kSubtracts; }
  void difference(std::byte* out, const std::byte* now, const std::byte* before, std::size_t n) const override {
    if constexpr (kSubtracts) {
      T* o = reinterpret_cast<T*>(out);
      const T* a = reinterpret_cast<const T*>(now);
      const T* b = reinterpret_cast<const T*>(before);
      for (std::size_t j = 0; j < n; ++j) o[j] = difference_of(a[j], b[j]);
    } else {
      STRATA_CHECK(false, "a difference of elements that do not subtract");
    }
  }
  void add_run(std::byte* to, const std::byte* deltas, std::size_t n) const override {
    add_row_into(reinterpret_cast<T*>(to), reinterpret_cast<const T*>(deltas), n);
  }

  OutboxSet& open_outbox() override {
    STRATA_CHECK(std::is_arithmetic_v<T>, "managed communication needs arithmetic elements");
    outbox_ = std::make_unique<Outbox>(*this);
    return *outbox_;
  }

 private:
  // One per thread, on its own cache line.
  struct alignas(64) Pending {
    DeltaSet<T> set;
  };

  // Managed communication's set of deltas, typed (the engine's outbox drives it).
  class Outbox final : public OutboxSet {
   public:
    explicit Outbox(TypedOps& ops) : ops_(ops), set_(volume(ops.target_->shape())) {}
    void take_pending(int thread) override { ops_.pending_[static_cast<std::size_t>(thread)].set.move_into(set_); }
    void return_to_pending() override { set_.move_into(ops_.pending_.front().set); }
    bool empty() const override { return set_.empty(); }
    void each_magnitude([[maybe_unused]] const std::function<void(std::int64_t, double)>& f) const override {
      if constexpr (std::is_arithmetic_v<T>)
        set_.for_each([&](std::int64_t k, const T& d) { f(k, std::abs(static_cast<double>(d))); });
    }
    Bytes extract_records(const std::vector<std::int64_t>& keys) override {
      const std::vector<T> deltas = set_.extract(keys);
      Bytes records(keys.size() * kRecordBytes);
      for (std::size_t j = 0; j < keys.size(); ++j) {
        std::byte* record = records.data() + j * kRecordBytes;
        std::memcpy(record, &keys[j], sizeof(std::int64_t));
        std::memcpy(record + sizeof(std::int64_t), &deltas[j], sizeof(T));
      }
      return records;
    }

   private:
    TypedOps& ops_;
    DeltaSet<T> set_;
  };

  // Hybrid: the delta also goes into the rank's cached copy (the rank's threads add
  // concurrently and read without locks): atomically for a number.
  [[gnu::noinline]] void fold(std::int64_t k, const T& delta) {
    T* unit = folded_unit(k / cache->unit_len);
    if (!unit) return;
    if constexpr (std::is_arithmetic_v<T>)
      std::atomic_ref<T>(unit[k % cache->unit_len]).fetch_add(delta, std::memory_order_relaxed);
    else  // a row struct: a plain add, as fold_row's
      add_into(unit[k % cache->unit_len], delta);
  }

  // The cached unit `u` a fold adds into: with fold_only the cache is the values,
  // laid out like the array, and every unit is there (read or not).
  T* folded_unit(std::int64_t u) const {
    if (!fold_only) return cache->unit<T>(u);
    detail::CacheView::note_written(cache->written_of(detail::t_worker), static_cast<std::uint64_t>(u));
    return static_cast<T*>(cache->block_of(detail::t_worker)) + u * cache->unit_len;
  }
  // Hybrid, a row: added into the cached row with plain adds, as Hogwild adds. Two
  // threads adding to the same element at once may lose one of the two in the cache
  // until the clock; the delta sets lose nothing, and the clock's values hold every add.
  [[gnu::noinline]] void fold_row(std::int64_t k, const T* delta, std::size_t len) {
    if (T* unit = folded_unit(k / cache->unit_len)) add_row_into(unit + k % cache->unit_len, delta, len);
  }

  // Before a loop run the sets are almost always empty: then undoing is clearing.
  void save_state() override {
    saved_.clear();
    if (pending() > 0) saved_ = pending_;
  }
  void restore_state() override {
    if (saved_.empty()) {
      for (auto& p : pending_) p.set.clear();
    } else {
      pending_ = saved_;
    }
  }

  DistArray<T, N>* target_;
  Apply apply_;
  std::vector<Pending> pending_, saved_;
  std::optional<DistArray<state_type, N>> state_;
  std::unique_ptr<Outbox> outbox_;  // managed communication only
};

}  // namespace strata::ps
