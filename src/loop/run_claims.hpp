// A re-validating run's per-thread claims (loop/ownership.hpp), taken straight from
// the accessors (strata::detail::t_claims) instead of through an observer: the run
// keeps the accessors' fast path, and each access costs one claim.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>

#include "loop/ownership.hpp"
#include "strata/loop/loop_body.hpp"

namespace strata::loop {

/// Thrown at the next iteration of every other thread once one thread's claim was
/// refused: the run will be undone anyway.
struct RunAbandoned {};

class RunClaims final : public strata::detail::AccessClaims, public detail::IterationHook {
 public:
  /// Installs itself as the calling thread's claims until destroyed.
  RunClaims(OwnershipTable& table, int worker, int dims, const std::atomic<bool>& abandoned);
  ~RunClaims();
  RunClaims(const RunClaims&) = delete;
  RunClaims& operator=(const RunClaims&) = delete;

  void before(const std::int64_t* index) override {
    if (abandoned_.load(std::memory_order_relaxed)) [[unlikely]]
      throw RunAbandoned{};
    iteration_ = index;
  }
  void after() override {}
  void claim(const strata::detail::ArrayBase& array, std::span<const std::int64_t> index, bool whole_last,
             strata::detail::AccessMode mode) override {
    if (mode == strata::detail::AccessMode::buffered) return;  // deltas conflict with nothing
    if (!table_.claim(array, index, whole_last, mode != strata::detail::AccessMode::read, worker_)) [[unlikely]]
      refused(array, index, whole_last);
  }

 private:
  /// Throws SpeculationFailed naming the access and the iteration.
  [[noreturn, gnu::cold, gnu::noinline]] void refused(const strata::detail::ArrayBase& array,
                                                      std::span<const std::int64_t> index, bool whole_last) const;

  OwnershipTable& table_;
  int worker_;
  std::size_t dims_;
  const std::atomic<bool>& abandoned_;
  const std::int64_t* iteration_ = nullptr;
};

}  // namespace strata::loop
