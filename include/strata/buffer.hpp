// Buffer: writes to a DistArray that take no part in dependence analysis (DESIGN.md §5).
//
// When a loop's writes cannot keep dependences (a dense model that every iteration
// updates, weights indexed by the data), route them through a Buffer:
//
//   auto w = strata::DistArray<float, 1>::zeros(rt, {features});
//   strata::Buffer wbuf(w, strata::apply::adagrad(0.1));
//   strata::parallel_for(samples, [&](const strata::Index<1>&, const Sample& s) {
//     float z = 0;
//     for (auto [f, x] : s.features) z += w.read({f}) * x;
//     for (auto [f, x] : s.features) wbuf.add({f}, (sigmoid(z) - s.label) * x);
//   });
//
// The planner ignores buffered writes, so such a loop runs data-parallel. Each thread
// sums its deltas per element; when the loop ends, every rank's sums travel to the
// elements' owners, which fold them in with the apply function one source rank at a
// time, in rank order (so a run is reproducible for a given number of ranks and
// threads). Reads during the loop see the array as it was before the loop: one clock
// per loop call, bulk-synchronous, with the array copied whole to every rank.
// Outside loops, add() collects into thread 0's buffer until flush(). The array must
// be dense and outlive its Buffer.
//
// Given a Consistency (strata/relaxed.hpp), the Buffer makes its array a relaxed
// parameter-server table instead: owners, caches of each rank's read set, clocks
// every N iterations, stale-synchronous reads.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <source_location>
#include <span>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "strata/apply.hpp"
#include "strata/buffer_writer.hpp"
#include "strata/detail/pack.hpp"
#include "strata/dist_array.hpp"
#include "strata/loop/undo.hpp"
#include "strata/detail/worker.hpp"
#include "strata/loop/buffer_base.hpp"
#include "strata/ps/delta_set.hpp"
#include "strata/ps/relaxed_table.hpp"
#include "strata/relaxed.hpp"

namespace strata {

template <class T, std::size_t N, class Apply = apply::Sum>
class Buffer final : public detail::BufferBase, public detail::UndoableState {
 public:
  using state_type = typename Apply::state_type;
  using value_type = T;
  static constexpr std::size_t rank = N;

  explicit Buffer(DistArray<T, N>& target, Apply apply = {}) : Buffer(target, std::move(apply), nullptr) {}
  /// A relaxed array: served by the parameter server with this consistency.
  Buffer(DistArray<T, N>& target, Apply apply, Consistency consistency) : Buffer(target, std::move(apply), nullptr) {
    if (consistency.hybrid && !std::is_same_v<Apply, apply::Sum>)
      throw OptionError(fmt::format("Buffer over array {}: Hybrid consistency adds deltas to the rank's cached copy "
                                    "as they are written, so its apply function must be apply::sum()",
                                    detail::array_label(target)));
    table_ = std::make_unique<ps::RelaxedTable<T, N, Buffer>>(target, *this, consistency);
  }

  detail::RelaxedBase* relaxed() override { return table_.get(); }
  /// What the parameter server did for this array (zeros unless relaxed).
  RelaxedStats stats() const { return table_ ? table_->stats() : RelaxedStats{}; }

  // Automatic checkpoints (strata/recovery): the owners' apply state travels with
  // the array, so a resumed AdaGrad or AdaRevision run continues where it stopped.
  bool has_owner_state() const override { return !std::is_empty_v<state_type>; }
  detail::CheckpointSnapshot owner_state_snapshot(Bytes storage) override {
    if constexpr (std::is_empty_v<state_type>) {
      return BufferBase::owner_state_snapshot(std::move(storage));
    } else {
      ensure_state();
      return state_->checkpoint_snapshot(std::move(storage));
    }
  }
  std::function<void()> stage_owner_state(const std::filesystem::path& dir, std::int64_t rounds) override {
    if constexpr (std::is_empty_v<state_type>) {
      return [this, rounds] { rounds_ = rounds; };
    } else {
      ensure_state();
      auto put = state_->stage_load(dir);
      return [this, put, rounds] {
        put();
        rounds_ = rounds;
      };
    }
  }
  std::int64_t rounds() const override { return rounds_; }

  /// Adds `delta` to element i (folded in by the apply function when flushed).
  void add(const Index<N>& i, const T& delta, std::source_location where = std::source_location::current()) {
    // Reconnaissance records the site; checked runs verify it before it counts. A
    // relaxed run that shares its cache has no checker: nothing to show the write to.
    if (detail::t_observer && !target_->cache_view()) [[unlikely]] {
      detail::t_observer->on_access(*target_, where, detail::AccessMode::buffered, i, false, nullptr, 0);
      if (detail::t_recording) return;
    }
    if (!in_bounds(i, target_->shape())) [[unlikely]]
      throw ShapeError(fmt::format("Buffer::add: index {} is outside shape {}", to_string(i),
                                   to_string(target_->shape())));
    const std::int64_t k = linearize(i, target_->shape());
    pending_[static_cast<std::size_t>(detail::t_delta_set)].set.add(k, delta);
    if constexpr (std::is_arithmetic_v<T>)
      if (table_ && table_->folds_locally()) [[unlikely]] table_->fold_locally(k, delta);
  }

  /// Adds for one call of a loop body, with this thread's delta set looked up once
  /// (strata/buffer_writer.hpp): take it inside the body.
  BufferWriter<Buffer> writer() { return BufferWriter<Buffer>(*this); }

  void replay_begin(int workers) override {
    pending_.resize(static_cast<std::size_t>(workers), Pending{ps::DeltaSet<T>(volume(target_->shape()))});
  }
  std::int64_t replay_reserve(std::int64_t n) override {
    prepare_apply();
    return reserve_rounds(n);
  }
  void replay_apply(int ranks, std::int64_t round) override {
    const std::size_t per_rank = pending_.size() / static_cast<std::size_t>(ranks);
    for (std::size_t r = 0; r < static_cast<std::size_t>(ranks); ++r)
      take_pending([&](std::int64_t k, const T& d) { apply_delta(k, d, round); }, r * per_rank, per_rank);
  }
  void replay_apply_logged(std::span<const std::span<const std::byte>> applies, std::int64_t first_round,
                           const std::string& call) override {
    if constexpr (!std::is_arithmetic_v<T>) {
      STRATA_CHECK(false, "managed communication needs arithmetic elements");
    } else {
      // Per element: the sums recomputed by the replayed workers and logged at the
      // owners, and the sum of magnitudes of both, which bounds their rounding.
      struct Sums {
        double recomputed = 0, logged = 0, magnitude = 0;
        bool in_log = false, in_sets = false;
      };
      std::unordered_map<std::int64_t, Sums> sums;
      for (auto& p : pending_) {
        p.set.for_each([&](std::int64_t k, const T& d) {
          Sums& s = sums[k];
          s.recomputed += static_cast<double>(d);
          s.magnitude += std::abs(static_cast<double>(d));
          s.in_sets = true;
        });
        p.set.clear();
      }
      constexpr std::size_t entry = 2 * sizeof(std::int64_t) + sizeof(T);
      auto each_logged = [&](auto&& f) {
        for (const auto& from : applies)
          for (std::size_t at = 0; at + entry <= from.size(); at += entry) {
            std::int64_t key, clock;
            T delta;
            std::memcpy(&key, from.data() + at, sizeof key);
            std::memcpy(&clock, from.data() + at + sizeof key, sizeof clock);
            std::memcpy(&delta, from.data() + at + 2 * sizeof key, sizeof delta);
            f(key, clock, delta);
          }
      };
      const std::int64_t elements = volume(target_->shape());
      each_logged([&](std::int64_t key, std::int64_t, const T& d) {
        if (key < 0 || key >= elements)
          throw ReplayError(fmt::format("replay of {}: the timing log of {} applies a delta to element {}, outside "
                                        "shape {}",
                                        call, detail::array_label(*target_), key, to_string(target_->shape())));
        Sums& s = sums[key];
        s.logged += static_cast<double>(d);
        s.magnitude += std::abs(static_cast<double>(d));
        s.in_log = true;
      });
      // Sums of the same deltas in another grouping differ by a few units of T's
      // precision times their magnitude; a changed program differs by far more.
      const double tolerance = std::is_integral_v<T> ? 0.0 : 1e-3;
      for (const auto& [k, s] : sums)
        if (s.in_log != s.in_sets || std::abs(s.recomputed - s.logged) > tolerance * s.magnitude)
          throw ReplayError(fmt::format("replay of {}: the replayed workers' deltas to element {} of {} sum to {}, "
                                        "the deltas its owner applied in the recorded run to {}{}",
                                        call, to_string(delinearize(k, target_->shape())),
                                        detail::array_label(*target_), s.recomputed, s.logged,
                                        s.in_log ? "" : " (it applied none)"));
      each_logged([&](std::int64_t key, std::int64_t clock, const T& d) { apply_delta(key, d, first_round + clock); });
    }
  }
  void replay_end() override { pending_.resize(static_cast<std::size_t>(target_->runtime().threads())); }

  /// Elements with deltas waiting on this rank (counted per thread).
  std::size_t pending() const {
    std::size_t n = 0;
    for (const auto& p : pending_) n += p.set.size();
    return n;
  }

  /// Collective: every rank's deltas go to the elements' owners and are applied there.
  void flush() override {
    Runtime& rt = target_->runtime();
    const auto& shape = target_->shape();
    const auto& dist = target_->distribution_of();
    std::vector<Bytes> send(static_cast<std::size_t>(rt.size()));
    take_pending([&](std::int64_t k, const T& d) {
      const Index<N> i = delinearize(k, shape);
      detail::append(send[static_cast<std::size_t>(dist.owner(i.data()))], Delta{k, d});
    });
    const auto received = rt.comm().alltoallv(send);
    prepare_apply();
    const std::int64_t round = reserve_rounds(1);
    for (const auto& from : received)  // rank order
      for (const Delta& x : detail::as_vector<Delta>(from)) apply_delta(x.key, x.delta, round);
  }

 private:
  friend class ps::RelaxedTable<T, N, Buffer>;
  friend class BufferWriter<Buffer>;

  // For BufferWriter: whether an add may skip add()'s checks on this thread now (no
  // observer to show it to, no Hybrid folding), and the thread's set's pointers.
  bool writes_fast() const {
    if (detail::t_observer && !target_->cache_view()) return false;
    return !(table_ && table_->folds_locally());
  }
  typename ps::DeltaSet<T>::Slots thread_slots() const {
    return pending_[static_cast<std::size_t>(detail::t_delta_set)].set.slots();
  }
  std::int64_t elements() const { return strata::volume(target_->shape()); }

  Buffer(DistArray<T, N>& target, Apply apply, std::nullptr_t)
      : detail::BufferBase(target.array_id()),
        target_(&target),
        apply_(std::move(apply)),
        pending_(static_cast<std::size_t>(target.runtime().threads()), Pending{ps::DeltaSet<T>(volume(target.shape()))}) {
    if (target.is_sparse())
      throw OptionError(fmt::format("Buffer over array {}: only dense arrays can be written through a Buffer",
                                    target.name().empty() ? "(unnamed)" : target.name()));
  }

  // At the owner: folds one delta into element `key` (row-major) as apply round
  // `round` (one round per flush or per clock; adaptive rules keep per-round state).
  void apply_delta(std::int64_t key, const T& delta, std::int64_t round) {
    const Index<N> i = delinearize(key, target_->shape());
    T* value = target_->find(i);
    STRATA_CHECK(value != nullptr, "a buffered delta reached a rank that does not own its element");
    if constexpr (std::is_empty_v<state_type>) {
      state_type none;
      apply::call(apply_, *value, none, delta, round);
    } else {
      apply::call(apply_, *value, *state_->find(i), delta, round);
    }
  }
  void prepare_apply() { ensure_state(); }
  std::int64_t reserve_rounds(std::int64_t n) {
    const std::int64_t first = rounds_;
    rounds_ += n;
    return first;
  }

  struct Delta {
    std::int64_t key;
    T delta;
  };
  // One per thread, on its own cache line.
  struct alignas(64) Pending {
    ps::DeltaSet<T> set;
  };

  // Calls f(element, delta) for each of this rank's pending deltas, one sum per
  // element (threads added in order: the same bits on every run; the order of the
  // elements, deterministic too, does not matter, as owners apply each element's
  // deltas independently), and leaves the per-thread buffers empty. A replay takes
  // the sets [from, from + count) of one recorded rank.
  template <class F>
  void take_pending(F&& f, std::size_t from = 0, std::size_t count = 0) {
    take_pending_begin(from, count);
    take_pending_part(f, 0, 1);
    take_pending_end();
  }
  // take_pending() shared by the rank's threads (a one-rank table's clock): begin
  // on one thread, then part p of P on each thread at once (each calls f for its
  // own elements), then end on one thread.
  void take_pending_begin(std::size_t from = 0, std::size_t count = 0) {
    if (count == 0) count = pending_.size();
    taking_.clear();
    for (std::size_t t = from; t < from + count; ++t) taking_.push_back(&pending_[t].set);
  }
  template <class F>
  void take_pending_part(F&& f, int part, int parts) {
    ps::DeltaSet<T>::drain_part(taking_, part, parts, f);
  }
  void take_pending_end() { taking_.clear(); }
  // Thread `th`'s pending deltas, added to `into`; the thread's buffer is left empty.
  // Runs on that thread.
  void hand_over(int th, ps::DeltaSet<T>& into) { pending_[static_cast<std::size_t>(th)].set.move_into(into); }
  // Adds `from` to this rank's pending deltas (thread 0's buffer) and empties it.
  void absorb(ps::DeltaSet<T>& from) { from.move_into(pending_.front().set); }

  // The owners' per-element state lives in a DistArray laid out like the target, so
  // it follows the target when a plan repartitions it.
  void ensure_state() {
    if constexpr (std::is_empty_v<state_type>) return;  // apply::Sum keeps nothing
    const Partition& p = target_->distribution_of().partition();
    const detail::AnonymousArrays internal;  // created lazily: must not shift the ids of the user's arrays
    if (!state_) state_.emplace(DistArray<state_type, N>::fill(target_->runtime(), target_->shape(), state_type{}, p));
    else if (!(state_->distribution_of().partition() == p)) state_->repartition(p);
  }

  // Before a loop run the buffers are almost always empty: then undoing is clearing.
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
  std::vector<ps::DeltaSet<T>*> taking_;  // between take_pending_begin and _end
  std::optional<DistArray<state_type, N>> state_;
  std::int64_t rounds_ = 0;
  std::unique_ptr<ps::RelaxedTable<T, N, Buffer>> table_;  // relaxed arrays only
};

}  // namespace strata
