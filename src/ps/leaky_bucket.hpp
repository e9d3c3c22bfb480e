// A leaky bucket of bytes: the allowance of managed communication (strata/relaxed.hpp).
//
// Tokens flow in at `rate` bytes per second and spill over at `capacity`; a send
// spends what it costs. Over any window of W seconds the bytes spent are at most
// capacity + rate * W, and, while there is always something to send, at least
// rate * W - capacity (minus one pump period's worth): the budget holds to within
// capacity / W. The bucket starts empty.
#pragma once

#include <algorithm>
#include <chrono>

namespace strata::ps {

class LeakyBucket {
 public:
  using Clock = std::chrono::steady_clock;

  LeakyBucket(double rate, double capacity) : rate_(rate), capacity_(capacity) {}

  /// Empties the bucket; tokens flow from `now`.
  void start(Clock::time_point now) {
    tokens_ = 0;
    last_ = now;
  }
  /// The tokens available at `now`.
  double refill(Clock::time_point now) {
    const double dt = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    tokens_ = std::min(capacity_, tokens_ + rate_ * std::max(dt, 0.0));
    return tokens_;
  }
  void spend(double bytes) { tokens_ -= bytes; }
  void set_capacity(double capacity) { capacity_ = capacity; }
  double capacity() const { return capacity_; }
  double tokens() const { return tokens_; }

 private:
  double rate_, capacity_;
  double tokens_ = 0;
  Clock::time_point last_{};
};

}  // namespace strata::ps
