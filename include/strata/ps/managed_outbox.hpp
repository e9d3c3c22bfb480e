// Managed communication of one relaxed array (strata/relaxed.hpp): the rank's deltas
// that loop threads handed over between clocks, and the pump that sends the most
// important of them early, within the bandwidth budget.
//
// Who runs what:
// - loop threads, at the end of an iteration: when the pump has asked (a flag per
//   thread), they move their pending deltas into the outbox;
// - the Postman's thread: the pump, every kPeriod while a run is on (less often when
//   the outbox is so large that ranking it takes long: the pump keeps to about a
//   fifth of the thread's time, and the bucket then saves up for two periods). It
//   asks every thread for its deltas, refills the leaky bucket and sends (1) every
//   delta for an element this rank owns (free: no network) and (2) the most
//   important of the rest, most important first, as long as the bucket covers the
//   messages;
// - the table's tick, while the loop threads are stopped: the rest of the clock goes
//   out with the end-of-clock flush.
// The outbox's mutex is held while the pump hands messages to the Postman and while
// the tick sends its flush, so a rank's early deltas of a clock always travel ahead
// of its flush of that clock.
//
// The bucket, the ranking and the bookkeeping are compiled once (OutboxCore,
// src/ps/managed_outbox.cpp); ManagedOutbox<T> adds the typed set of deltas.
#pragma once

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "strata/ps/delta_set.hpp"
#include "strata/ps/leaky_bucket.hpp"
#include "strata/relaxed.hpp"

namespace strata::ps {

/// The outbox without its set of deltas: the pump's timing, bucket and ranking.
class OutboxCore {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr auto kPeriod = std::chrono::milliseconds(10);
  /// The bucket holds a tenth of a second of budget (the most one burst may exceed
  /// it), and at least one message of one delta.
  static constexpr double kBucketSeconds = 0.1;
  static constexpr double kTimelineBin = 0.1;
  /// The pump waits at least this many times as long as it last took.
  static constexpr int kIdleFactor = 4;

  /// One pump's view of the set: each(k, |delta|) for every element held.
  using EachHeld = std::function<void(const std::function<void(std::int64_t, double)>&)>;
  /// Sends the deltas of `keys` (taken out of the set) to `owner` as clock `clock`'s;
  /// returns the message's size in bytes.
  using SendKeys = std::function<std::size_t(int owner, std::int64_t clock, const std::vector<std::int64_t>& keys)>;

  /// `header_bytes` and `delta_bytes`: what one message and one delta in it cost.
  OutboxCore(int threads, std::int64_t volume, const Consistency& c, std::size_t header_bytes,
             std::size_t delta_bytes, std::uint64_t seed);

  // ---- loop threads ----
  bool wanted(int th) const { return wants_[static_cast<std::size_t>(th)].flag.load(std::memory_order_relaxed); }

  // ---- the table, with the loop threads stopped ----
  void begin_run(Clock::time_point now);
  /// Stops pumping; adds the run's figures to `stats`.
  void end_run(Clock::time_point now, RelaxedStats& stats);

 protected:
  /// Runs `take` under the outbox's lock unless the pump holds it, clearing thread
  /// th's flag first.
  void try_take(int th, const std::function<void()>& take);
  /// Runs `flush` under the outbox's lock and ends the clock.
  void end_clock_locked(const std::function<void()>& flush);
  /// One turn of the pump at `now`; `empty`: the set holds nothing.
  void pump_core(Clock::time_point now, int me, const std::function<bool()>& empty,
                 const std::function<std::optional<double>(std::int64_t)>& value_of,
                 const std::function<int(std::int64_t)>& owner_of, const EachHeld& each, const SendKeys& send);

 private:
  struct Candidate {
    double score;
    std::int64_t key;
    int owner;
  };
  struct alignas(64) Want {
    std::atomic<bool> flag{false};
  };
  void send_some(Clock::time_point now, int me, double tokens, const std::function<std::optional<double>(std::int64_t)>& value_of,
                 const std::function<int(std::int64_t)>& owner_of, const EachHeld& each, const SendKeys& send);
  // Larger goes first.
  double score(std::int64_t k, double delta, const std::function<std::optional<double>(std::int64_t)>& value_of) const;

  std::vector<Want> wants_;
  std::mutex mu_;
  std::int64_t volume_;
  Priority priority_;
  double budget_;
  LeakyBucket bucket_;
  double header_bytes_, delta_bytes_;
  std::uint64_t seed_;
  bool active_ = false;
  std::int64_t clock_ = 0, cursor_ = 0;
  std::uint64_t pumps_ = 0;
  Clock::time_point run_start_{}, next_pump_{};
  double timeline_offset_ = 0;
  std::vector<std::int64_t> timeline_;
  std::int64_t sent_bytes_ = 0, sent_messages_ = 0, sent_deltas_ = 0;
};

/// The outbox of a relaxed array of T: OutboxCore and the set of deltas it holds.
template <class T>
class ManagedOutbox : public OutboxCore {
 public:
  ManagedOutbox(int threads, std::int64_t volume, const Consistency& c, std::size_t header_bytes,
                std::size_t delta_bytes, std::uint64_t seed)
      : OutboxCore(threads, volume, c, header_bytes, delta_bytes, seed), set_(volume) {}

  /// hand_over(set): adds thread th's pending deltas to the outbox's set. While the
  /// pump holds the outbox the thread does not wait: it keeps its deltas and offers
  /// them again after its next iteration.
  template <class HandOver>
  void take_from(int th, HandOver&& hand_over) {
    try_take(th, [&] { hand_over(set_); });
  }
  /// Ends the current clock: flush(set) takes what is left and sends it, under the
  /// outbox's lock.
  template <class Flush>
  void end_clock(Flush&& flush) {
    end_clock_locked([&] { flush(set_); });
  }
  /// One turn of the pump at `now` (a parameter, for tests).
  /// - value_of(k): this rank's cached value of element k, if cached (std::optional);
  /// - owner_of(k): its owner;
  /// - send(owner, clock, deltas): sends one message of (element, delta) pairs and
  ///   returns its size in bytes.
  template <class ValueOf, class OwnerOf, class Send>
  void pump(Clock::time_point now, int me, ValueOf&& value_of, OwnerOf&& owner_of, Send&& send) {
    pump_core(
        now, me, [&] { return set_.empty(); },
        [&](std::int64_t k) -> std::optional<double> { return value_of(k); },
        [&](std::int64_t k) { return static_cast<int>(owner_of(k)); },
        [&](const std::function<void(std::int64_t, double)>& f) {
          set_.for_each([&](std::int64_t k, const T& d) { f(k, std::abs(static_cast<double>(d))); });
        },
        [&](int owner, std::int64_t clock, const std::vector<std::int64_t>& keys) -> std::size_t {
          const std::vector<T> deltas = set_.extract(keys);
          std::vector<std::pair<std::int64_t, T>> message(keys.size());
          for (std::size_t j = 0; j < keys.size(); ++j) message[j] = {keys[j], deltas[j]};
          return static_cast<std::size_t>(send(owner, clock, message));
        });
  }

 private:
  DeltaSet<T> set_;
};

}  // namespace strata::ps
