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
//   asks every
//   thread for its deltas, refills the leaky bucket and sends (1) every delta for
//   an element this rank owns (free: no network) and (2) the most important of the
//   rest, most important first, as long as the bucket covers the messages;
// - the table's tick, while the loop threads are stopped: the rest of the clock goes
//   out with the end-of-clock flush.
// The outbox's mutex is held while the pump hands messages to the Postman and while
// the tick sends its flush, so a rank's early deltas of a clock always travel ahead
// of its flush of that clock.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "strata/random.hpp"
#include "strata/ps/delta_set.hpp"
#include "strata/ps/leaky_bucket.hpp"
#include "strata/relaxed.hpp"

namespace strata::ps {

template <class T>
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

  /// `header_bytes` and `delta_bytes`: what one message and one delta in it cost.
  ManagedOutbox(int threads, std::int64_t volume, const Consistency& c, std::size_t header_bytes,
                std::size_t delta_bytes, std::uint64_t seed)
      : wants_(static_cast<std::size_t>(threads)),
        set_(volume),
        volume_(volume),
        priority_(c.priority),
        budget_(c.budget),
        bucket_(c.budget, std::max(c.budget * kBucketSeconds, static_cast<double>(header_bytes + delta_bytes))),
        header_bytes_(static_cast<double>(header_bytes)),
        delta_bytes_(static_cast<double>(delta_bytes)),
        seed_(seed) {}

  // ---- loop threads ----
  bool wanted(int th) const { return wants_[static_cast<std::size_t>(th)].flag.load(std::memory_order_relaxed); }
  /// hand_over(set): adds thread th's pending deltas to the outbox's set. While the
  /// pump holds the outbox the thread does not wait: it keeps its deltas and offers
  /// them again after its next iteration.
  template <class HandOver>
  void take_from(int th, HandOver&& hand_over) {
    std::unique_lock lock(mu_, std::try_to_lock);
    if (!lock) return;
    wants_[static_cast<std::size_t>(th)].flag.store(false, std::memory_order_relaxed);
    hand_over(set_);
  }

  // ---- the table, with the loop threads stopped ----
  void begin_run(Clock::time_point now) {
    std::lock_guard lock(mu_);
    run_start_ = now;
    bucket_.start(run_start_);
    next_pump_ = run_start_ + kPeriod;
    clock_ = 0;
    active_ = true;
  }
  /// Ends the current clock: flush(set) takes what is left and sends it, under the
  /// outbox's lock.
  template <class Flush>
  void end_clock(Flush&& flush) {
    std::lock_guard lock(mu_);
    flush(set_);
    ++clock_;
  }
  /// Stops pumping; adds the run's figures to `stats`.
  void end_run(Clock::time_point now, RelaxedStats& stats) {
    std::lock_guard lock(mu_);
    active_ = false;
    timeline_offset_ += std::chrono::duration<double>(now - run_start_).count();
    for (auto& w : wants_) w.flag.store(false, std::memory_order_relaxed);
    stats.managed_bytes += sent_bytes_;
    stats.managed_messages += sent_messages_;
    stats.managed_deltas += sent_deltas_;
    stats.bytes_sent += sent_bytes_;
    stats.messages_sent += sent_messages_;
    sent_bytes_ = sent_messages_ = sent_deltas_ = 0;
    if (stats.managed_timeline.size() < timeline_.size()) stats.managed_timeline.resize(timeline_.size());
    for (std::size_t k = 0; k < timeline_.size(); ++k) stats.managed_timeline[k] += timeline_[k];
    timeline_.clear();
  }

  // ---- the Postman's thread ----
  /// One turn of the pump at `now` (a parameter, for tests).
  /// - value_of(k): this rank's cached value of element k, if cached (std::optional);
  /// - owner_of(k): its owner;
  /// - send(owner, clock, deltas): sends one message of (element, delta) pairs and
  ///   returns its size in bytes.
  template <class ValueOf, class OwnerOf, class Send>
  void pump(Clock::time_point now, int me, ValueOf&& value_of, OwnerOf&& owner_of, Send&& send) {
    std::lock_guard lock(mu_);
    if (!active_ || now < next_pump_) return;
    const auto began = Clock::now();
    send_some(now, me, value_of, owner_of, send);
    // Ranking a large outbox takes time the thread also needs for messages.
    const auto spaced = std::chrono::duration_cast<Clock::duration>((Clock::now() - began) * kIdleFactor);
    const auto period = std::max<Clock::duration>(kPeriod, spaced);
    next_pump_ = now + period;
    bucket_.set_capacity(std::max({budget_ * kBucketSeconds, budget_ * 2 * std::chrono::duration<double>(period).count(),
                                   header_bytes_ + delta_bytes_}));
    for (auto& w : wants_) w.flag.store(true, std::memory_order_relaxed);
  }

 private:
  template <class ValueOf, class OwnerOf, class Send>
  void send_some(Clock::time_point now, int me, ValueOf& value_of, OwnerOf& owner_of, Send& send) {
    const double tokens = bucket_.refill(now);
    if (set_.empty()) return;

    std::map<int, std::vector<std::int64_t>> chosen;  // per owner
    std::vector<Candidate> remote;
    set_.for_each([&](std::int64_t k, const T& d) {
      const int o = owner_of(k);
      if (o == me) chosen[o].push_back(k);
      else remote.push_back({score(k, d, value_of), k, o});
    });
    // The most important first, as many as the bucket might cover (no ranking when
    // the bucket covers them all).
    std::vector<char> owners;
    for (const auto& c : remote) {
      if (owners.size() <= static_cast<std::size_t>(c.owner)) owners.resize(static_cast<std::size_t>(c.owner) + 1, 0);
      owners[static_cast<std::size_t>(c.owner)] = 1;
    }
    const double all = static_cast<double>(remote.size()) * delta_bytes_ +
                       static_cast<double>(std::count(owners.begin(), owners.end(), 1)) * header_bytes_;
    const auto room = static_cast<std::size_t>(std::max(0.0, tokens / delta_bytes_));
    const std::size_t m = std::min(remote.size(), room);
    if (all > tokens)
      std::partial_sort(remote.begin(), remote.begin() + static_cast<std::ptrdiff_t>(m), remote.end(),
                        [](const Candidate& a, const Candidate& b) {
                          return a.score != b.score ? a.score > b.score : a.key < b.key;
                        });
    double cost = 0;
    for (std::size_t j = 0; j < m; ++j) {
      const auto& c = remote[j];
      const double more = delta_bytes_ + (chosen.count(c.owner) ? 0 : header_bytes_);
      if (cost + more > tokens) break;
      cost += more;
      chosen[c.owner].push_back(c.key);
      if (priority_ == Priority::round_robin) cursor_ = (c.key + 1) % std::max<std::int64_t>(volume_, 1);
    }
    const double since = timeline_offset_ + std::chrono::duration<double>(now - run_start_).count();
    const auto bin = static_cast<std::size_t>(since / kTimelineBin);
    for (auto& [o, keys] : chosen) {
      const std::vector<T> deltas = set_.extract(keys);
      std::vector<std::pair<std::int64_t, T>> message(keys.size());
      for (std::size_t j = 0; j < keys.size(); ++j) message[j] = {keys[j], deltas[j]};
      const auto bytes = static_cast<std::int64_t>(send(o, clock_, message));
      sent_deltas_ += static_cast<std::int64_t>(keys.size());
      if (o == me) continue;
      bucket_.spend(static_cast<double>(bytes));
      sent_bytes_ += bytes;
      ++sent_messages_;
      if (timeline_.size() <= bin) timeline_.resize(bin + 1, 0);
      timeline_[bin] += bytes;
    }
    ++pumps_;
  }

  struct Candidate {
    double score;
    std::int64_t key;
    int owner;
  };
  struct alignas(64) Want {
    std::atomic<bool> flag{false};
  };

  // Larger goes first.
  template <class ValueOf>
  double score(std::int64_t k, const T& d, ValueOf& value_of) const {
    const double delta = std::abs(static_cast<double>(d));
    switch (priority_) {
      case Priority::relative_magnitude: {
        const std::optional<double> v = value_of(k);
        const double base = v ? std::abs(*v) : 1.0;
        if (base == 0) return delta == 0 ? 0 : std::numeric_limits<double>::infinity();
        return delta / base;
      }
      case Priority::absolute_magnitude: return delta;
      case Priority::random:
        return static_cast<double>(mix64(static_cast<std::uint64_t>(k) ^ mix64(seed_ + pumps_)) >> 11);
      case Priority::round_robin:
        return -static_cast<double>(((k - cursor_) % volume_ + volume_) % volume_);
    }
    return 0;
  }

  std::vector<Want> wants_;
  std::mutex mu_;
  DeltaSet<T> set_;
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
