// One loop call over relaxed arrays (DESIGN.md §5): the tables' runs and clocks as
// the executor drives them, and the observer that routes the body's reads of
// relaxed arrays to their caches.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "loop/plan.hpp"
#include "strata/detail/array_base.hpp"
#include "loop/relaxed_base.hpp"
#include "strata/runtime.hpp"

namespace strata::loop::detail {

/// A loop thread's observer during a relaxed run: reads of relaxed arrays come from
/// their tables; every access is shown first to `inner` (a checker) if any.
class RelaxedReads final : public strata::detail::AccessObserver {
 public:
  RelaxedReads(std::span<strata::detail::RelaxedBase* const> tables, strata::detail::AccessObserver* inner, int thread)
      : tables_(tables), inner_(inner), thread_(thread) {}
  void* on_access(strata::detail::ArrayBase& array, const std::source_location& where, strata::detail::AccessMode mode,
                  std::span<const std::int64_t> index, bool whole_last, void* real, std::size_t bytes) override;

 private:
  std::span<strata::detail::RelaxedBase* const> tables_;
  strata::detail::AccessObserver* inner_;
  int thread_;
};

class RelaxedRun {
 public:
  /// The relaxed arrays of `plan`; none makes the run inactive.
  explicit RelaxedRun(const Plan& plan);
  /// The arrays' accessors stop reading the caches directly (even when the run failed).
  ~RelaxedRun();
  RelaxedRun(const RelaxedRun&) = delete;
  RelaxedRun& operator=(const RelaxedRun&) = delete;
  bool active() const { return !tables_.empty(); }
  /// Whether a table has managed communication: threads offer deltas per iteration.
  bool managed() const { return !managed_.empty(); }
  void offer(int th) const {
    for (auto* t : managed_) t->offer(th);
  }
  /// Iterations of a worker per clock (0: one clock for the call).
  std::int64_t clock_every() const { return clock_every_; }

  /// Collective: starts every table's run; `most` is the largest number of
  /// iterations any thread of this rank runs, so ranks agree on the clocks.
  void begin(Runtime& rt, const Plan& plan, std::int64_t most);
  std::int64_t clocks() const { return clocks_; }
  /// Makes thread `th`'s observer (owned by the run), wrapping `inner`.
  void make_observer(int th, strata::detail::AccessObserver* inner);
  strata::detail::AccessObserver* observer_of(int th) const { return observers_[static_cast<std::size_t>(th)].get(); }
  /// After begin: cached reads skip the observers (detail/cache_view.hpp). Only for
  /// runs whose observers wrap no checker, which must see every access.
  void share_caches();
  /// On loop thread `th`, at the end of each of its steps: hands the thread's counts
  /// of direct cache reads to the tables.
  void count_cache_reads(int th) const;
  /// Ends the current clock on every table. For a barrier's completion step: an
  /// error is kept (and later clocks skipped) for end() to throw.
  void tick() noexcept;
  /// Whether some table lets the rank's threads share its clock's work: then, before
  /// tick(), prepare_tick(threads) runs on one thread and tick_part(th, threads) on each.
  bool splits_ticks() const { return !splitting_.empty(); }
  void prepare_tick(int threads) noexcept;
  void tick_part(int th, int threads) noexcept;
  /// After a failed tick the threads only go through the motions.
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  /// Collective: ends every table's run; throws a tick's error.
  void end();

 private:
  void keep(std::exception_ptr e) noexcept;

  std::vector<strata::detail::RelaxedBase*> tables_, managed_, splitting_;
  std::mutex error_mu_;  // tick_part runs on every thread
  std::vector<std::unique_ptr<RelaxedReads>> observers_;
  std::int64_t clock_every_ = 0, clocks_ = 1, clock_ = 0;
  std::size_t shared_ = 0;  // tables_[0, shared_) publish their caches
  std::exception_ptr error_;
  std::atomic<bool> failed_{false};
};

}  // namespace strata::loop::detail
