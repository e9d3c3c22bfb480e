// A re-validating run's per-thread claims (loop/ownership.hpp), taken straight from
// the accessors (strata::detail::t_claims) instead of through an observer: the run
// keeps the accessors' fast path, and each access costs one claim.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>

#include "loop/ownership.hpp"
#include "loop/split_groups.hpp"
#include "strata/loop/loop_body.hpp"

namespace strata::loop {

class RunClaims final : public strata::detail::AccessClaims, public detail::IterationHook {
 public:
  /// Installs itself as the calling thread's claims until destroyed. With `locks`,
  /// iterations also take and drop their locks (split groups), and a claim refused on
  /// a lockable unit tries its lock.
  RunClaims(OwnershipTable& table, int worker, int dims, const std::atomic<bool>& abandoned,
            SplitLocks* locks = nullptr);
  ~RunClaims();
  RunClaims(const RunClaims&) = delete;
  RunClaims& operator=(const RunClaims&) = delete;

  void before(const std::int64_t* index) override {
    if (abandoned_.load(std::memory_order_relaxed)) [[unlikely]]
      throw RunAbandoned{};
    iteration_ = index;
    if (locks_) locks_->begin_iteration();
  }
  void after() override {
    if (locks_) locks_->end_iteration();
  }
  void claim(const strata::detail::ArrayBase& array, std::span<const std::int64_t> index, bool whole_last,
             strata::detail::AccessMode mode) override {
    if (mode == strata::detail::AccessMode::buffered) return;  // deltas conflict with nothing
    if (!table_.claim(array, index, whole_last, mode != strata::detail::AccessMode::read, worker_)) [[unlikely]]
      if (!locks_ || !locks_->lock_extra(array, index, whole_last)) refused(array, index, whole_last, mode);
  }

 private:
  /// Throws SpeculationFailed naming the access and the iteration.
  [[noreturn, gnu::cold, gnu::noinline]] void refused(const strata::detail::ArrayBase& array,
                                                      std::span<const std::int64_t> index, bool whole_last,
                                                      strata::detail::AccessMode mode) const;

  OwnershipTable& table_;
  int worker_;
  std::size_t dims_;
  const std::atomic<bool>& abandoned_;
  const std::int64_t* iteration_ = nullptr;
  SplitLocks* locks_;
};

}  // namespace strata::loop
