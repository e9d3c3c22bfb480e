// Accumulator<T>: a value that loop bodies combine into (a loss, a count) without
// creating dependences between iterations. Each thread updates its own slot; take()
// combines the slots in thread order, then the ranks' values in rank order, and
// resets them. A one-process replay (src/recovery/execution_record.hpp) keeps a
// slot per recorded worker and combines them the same way, so a replayed loss is
// the recorded run's to the last bit.
// Updates made during a loop's reconnaissance pass are ignored, and those of a
// speculative run that is undone are undone with it. Their values after every loop
// call are journaled, so a run resumed from a checkpoint sees them as they were.
//
//   strata::Accumulator<double> sq_err(rt);
//   strata::parallel_for(R, [&](auto ij, float r) { sq_err += e * e; });
//   double total = sq_err.take();      // collective
#pragma once

#include <cstring>
#include <functional>
#include <span>
#include <vector>

#include "strata/error.hpp"

#include "strata/loop/call_hooks.hpp"
#include "strata/loop/undo.hpp"
#include "strata/detail/worker.hpp"
#include "strata/detail/journaled_state.hpp"
#include "strata/runtime.hpp"

namespace strata {

template <class T, class Op = std::plus<>>
class Accumulator final : public detail::UndoableState, public detail::JournaledState {
 public:
  explicit Accumulator(Runtime& rt, T identity = T{}, Op op = {}) : rt_(&rt), identity_(identity), op_(op) {
    static_assert(std::is_arithmetic_v<T> && std::is_same_v<Op, std::plus<>>,
                  "Accumulator combines across ranks with a sum of arithmetic values");
    if (auto& calls = loop::call_hooks(rt); calls.replaying_serially()) {
      ranks_ = calls.recorded_ranks();
      threads_ = calls.recorded_threads();
    } else {
      threads_ = rt.threads();
    }
    slots_.resize(static_cast<std::size_t>(ranks_ * threads_));
    for (auto& s : slots_) s.value = identity_;
  }

  void add(const T& v) {
    if (detail::t_recording) return;
    // t_delta_set is the running thread, or in a one-process replay the recorded
    // worker whose iteration runs.
    T& slot = slots_[static_cast<std::size_t>(detail::t_delta_set)].value;
    slot = op_(slot, v);
  }
  Accumulator& operator+=(const T& v) {
    add(v);
    return *this;
  }

  /// This rank's combined value so far (not collective; in a one-process replay,
  /// the whole recorded job's).
  T local() const {
    T v = identity_;
    for (int r = 0; r < ranks_; ++r) v = op_(v, rank_value(r));
    return v;
  }

  /// Collective: the job-wide combined value, ranks added in rank order (MPI's own
  /// reductions fix no order); resets every slot.
  T take() {
    T v = identity_;
    if (ranks_ > 1) {
      v = local();
    } else {
      const T mine = rank_value(0);
      for (const auto& part : rt_->comm().allgatherv(std::as_bytes(std::span(&mine, 1)))) {
        T theirs;
        STRATA_CHECK(part.size() == sizeof(T), "an accumulator's value of the wrong size");
        std::memcpy(&theirs, part.data(), sizeof(T));
        v = op_(v, theirs);
      }
    }
    for (auto& s : slots_) s.value = identity_;
    return v;
  }

 private:
  Bytes journal_bytes() const override {
    Bytes out(slots_.size() * sizeof(T));
    for (std::size_t t = 0; t < slots_.size(); ++t) std::memcpy(out.data() + t * sizeof(T), &slots_[t].value, sizeof(T));
    return out;
  }
  void restore_journal(const std::vector<std::span<const std::byte>>& parts, int rank, bool same_layout) override {
    for (auto& s : slots_) s.value = identity_;
    auto value_at = [](std::span<const std::byte> part, std::size_t t) {
      T v;
      std::memcpy(&v, part.data() + t * sizeof(T), sizeof(T));
      return v;
    };
    if (same_layout) {
      const auto part = parts.at(static_cast<std::size_t>(rank));
      if (part.size() != slots_.size() * sizeof(T))
        throw CheckpointError("an accumulator's journaled value does not fit it (another program?)");
      for (std::size_t t = 0; t < slots_.size(); ++t) slots_[t].value = value_at(part, t);
      return;
    }
    if (rank != 0) return;  // another layout: rank 0 holds the combined value
    for (const auto part : parts) {
      if (part.size() % sizeof(T) != 0)
        throw CheckpointError("an accumulator's journaled value does not fit it (another program?)");
      for (std::size_t t = 0; t < part.size() / sizeof(T); ++t) slots_[0].value = op_(slots_[0].value, value_at(part, t));
    }
  }

  void save_state() override { saved_ = slots_; }
  void restore_state() override {
    if (saved_.size() == slots_.size()) slots_ = saved_;
  }

  // Rank r's threads' slots, in thread order.
  T rank_value(int r) const {
    T v = identity_;
    for (int t = 0; t < threads_; ++t) v = op_(v, slots_[static_cast<std::size_t>(r * threads_ + t)].value);
    return v;
  }

  struct alignas(64) Slot {  // one cache line per thread: no false sharing
    T value;
  };
  Runtime* rt_;
  T identity_;
  Op op_;
  int ranks_ = 1, threads_ = 1;  // slots: ranks_ x threads_ (ranks_ > 1 only in a one-process replay)
  std::vector<Slot> slots_, saved_;
};

}  // namespace strata
