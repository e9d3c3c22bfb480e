// Accumulator<T>: a value that loop bodies combine into (a loss, a count) without
// creating dependences between iterations. Each thread updates its own slot; take()
// combines the slots in thread order and then across ranks, and resets them.
// Updates made during a loop's reconnaissance pass are ignored, and those of a
// speculative run that is undone are undone with it.
//
//   strata::Accumulator<double> sq_err(rt);
//   strata::parallel_for(R, [&](auto ij, float r) { sq_err += e * e; });
//   double total = sq_err.take();      // collective
#pragma once

#include <functional>
#include <vector>

#include "strata/loop/undo.hpp"
#include "strata/loop/worker.hpp"
#include "strata/runtime.hpp"

namespace strata {

template <class T, class Op = std::plus<>>
class Accumulator final : public detail::UndoableState {
 public:
  explicit Accumulator(Runtime& rt, T identity = T{}, Op op = {})
      : rt_(&rt), identity_(identity), op_(op), slots_(static_cast<std::size_t>(rt.threads())) {
    for (auto& s : slots_) s.value = identity_;
  }

  void add(const T& v) {
    if (detail::t_recording) return;
    T& slot = slots_[static_cast<std::size_t>(detail::t_worker)].value;
    slot = op_(slot, v);
  }
  Accumulator& operator+=(const T& v) {
    add(v);
    return *this;
  }

  /// This rank's combined value so far (not collective).
  T local() const {
    T v = identity_;
    for (const auto& s : slots_) v = op_(v, s.value);
    return v;
  }

  /// Collective: the job-wide combined value; resets every slot. Reductions over
  /// ranks use MPI (sum, min or max for std::plus / min / max on arithmetic types).
  T take() {
    T v = local();
    for (auto& s : slots_) s.value = identity_;
    if constexpr (std::is_arithmetic_v<T> && std::is_same_v<Op, std::plus<>>)
      v = rt_->comm().allreduce(v, ReduceOp::sum);
    else
      static_assert(std::is_arithmetic_v<T> && std::is_same_v<Op, std::plus<>>,
                    "Accumulator::take combines across ranks with a sum of arithmetic values");
    return v;
  }

 private:
  void save_state() override { saved_ = slots_; }
  void restore_state() override {
    if (saved_.size() == slots_.size()) slots_ = saved_;
  }

  struct alignas(64) Slot {  // one cache line per thread: no false sharing
    T value;
  };
  Runtime* rt_;
  T identity_;
  Op op_;
  std::vector<Slot> slots_, saved_;
};

}  // namespace strata
