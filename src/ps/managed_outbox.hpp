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
// The outbox is compiled once and works on keys and doubles: the typed set of deltas
// it holds lives in the Buffer's typed front, behind OutboxSet
// (strata/detail/ps_element_ops.hpp), so no code here is instantiated per element
// type. A loop thread's only cost per iteration is reading its flag (wanted()); the
// set is reached through OutboxSet only when the pump has asked.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "ps/leaky_bucket.hpp"
#include "strata/comm.hpp"
#include "strata/detail/ps_element_ops.hpp"
#include "strata/relaxed.hpp"

namespace strata::ps {

class ManagedOutbox {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr auto kPeriod = std::chrono::milliseconds(10);
  /// The bucket holds a tenth of a second of budget (the most one burst may exceed
  /// it), and at least one message of one delta.
  static constexpr double kBucketSeconds = 0.1;
  static constexpr double kTimelineBin = 0.1;
  /// The pump waits at least this many times as long as it last took.
  static constexpr int kIdleFactor = 4;

  /// This rank's cached value of element k, if cached.
  using ValueOf = std::function<std::optional<double>(std::int64_t)>;
  /// The owner of element k.
  using OwnerOf = std::function<int(std::int64_t)>;
  /// Sends one message of (key, delta) records (as OutboxSet::extract_records makes
  /// them) to `owner` as clock `clock`'s; returns the message's size in bytes.
  using Send = std::function<std::size_t(int owner, std::int64_t clock, const Bytes& records)>;

  /// `set`: the typed set the outbox holds (it must outlive the outbox).
  /// `header_bytes` and `delta_bytes`: what one message and one delta in it cost.
  ManagedOutbox(OutboxSet& set, int threads, std::int64_t volume, const Consistency& c, std::size_t header_bytes,
                std::size_t delta_bytes, std::uint64_t seed);

  // ---- loop threads ----
  /// The pump has asked thread th for its deltas.
  bool wanted(int th) const { return wants_[static_cast<std::size_t>(th)].flag.load(std::memory_order_relaxed); }
  /// Moves thread th's pending deltas into the outbox's set. While the pump holds the
  /// outbox the thread does not wait: it keeps its deltas and offers them again after
  /// its next iteration.
  void take_from(int th);

  // ---- the table, with the loop threads stopped ----
  void begin_run(Clock::time_point now);
  /// Ends the current clock under the outbox's lock: what the set holds goes back to
  /// the pending sets, then `flush` sends them.
  void end_clock(const std::function<void()>& flush);
  /// Stops pumping; adds the run's figures to `stats`.
  void end_run(Clock::time_point now, RelaxedStats& stats);

  // ---- the Postman's thread ----
  /// One turn of the pump at `now` (a parameter, for tests); `me` is this rank.
  void pump(Clock::time_point now, int me, const ValueOf& value_of, const OwnerOf& owner_of, const Send& send);

 private:
  struct Candidate {
    double score;
    std::int64_t key;
    int owner;
  };
  struct alignas(64) Want {
    std::atomic<bool> flag{false};
  };
  void send_some(Clock::time_point now, int me, double tokens, const ValueOf& value_of, const OwnerOf& owner_of,
                 const Send& send);
  // Larger goes first.
  double score(std::int64_t k, double delta, const ValueOf& value_of) const;

  OutboxSet& set_;
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

}  // namespace strata::ps
