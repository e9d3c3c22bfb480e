// Managed communication's outbox (managed_outbox.hpp): the pump's timing, the leaky
// bucket, the ranking of deltas and the bookkeeping; the typed set is reached through
// OutboxSet.
#include "ps/managed_outbox.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "strata/random.hpp"

namespace strata::ps {

ManagedOutbox::ManagedOutbox(OutboxSet& set, int threads, std::int64_t volume, const Consistency& c,
                             std::size_t header_bytes, std::size_t delta_bytes, std::uint64_t seed)
    : set_(set),
      wants_(static_cast<std::size_t>(threads)),
      volume_(volume),
      priority_(c.priority),
      budget_(c.budget),
      bucket_(c.budget, std::max(c.budget * kBucketSeconds, static_cast<double>(header_bytes + delta_bytes))),
      header_bytes_(static_cast<double>(header_bytes)),
      delta_bytes_(static_cast<double>(delta_bytes)),
      seed_(seed) {}

void ManagedOutbox::take_from(int th) {
  std::unique_lock lock(mu_, std::try_to_lock);
  if (!lock) return;
  wants_[static_cast<std::size_t>(th)].flag.store(false, std::memory_order_relaxed);
  set_.take_pending(th);
}

void ManagedOutbox::begin_run(Clock::time_point now) {
  std::lock_guard lock(mu_);
  run_start_ = now;
  bucket_.start(run_start_);
  next_pump_ = run_start_ + kPeriod;
  clock_ = 0;
  active_ = true;
}

void ManagedOutbox::end_clock(const std::function<void()>& flush) {
  std::lock_guard lock(mu_);
  set_.return_to_pending();
  flush();
  ++clock_;
}

void ManagedOutbox::end_run(Clock::time_point now, RelaxedStats& stats) {
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

void ManagedOutbox::pump(Clock::time_point now, int me, const ValueOf& value_of, const OwnerOf& owner_of,
                         const Send& send) {
  std::lock_guard lock(mu_);
  if (!active_ || now < next_pump_) return;
  const auto began = Clock::now();
  const double tokens = bucket_.refill(now);
  if (!set_.empty()) send_some(now, me, tokens, value_of, owner_of, send);
  // Ranking a large outbox takes time the thread also needs for messages.
  const auto spaced = std::chrono::duration_cast<Clock::duration>((Clock::now() - began) * kIdleFactor);
  const auto period = std::max<Clock::duration>(kPeriod, spaced);
  next_pump_ = now + period;
  bucket_.set_capacity(std::max({budget_ * kBucketSeconds, budget_ * 2 * std::chrono::duration<double>(period).count(),
                                 header_bytes_ + delta_bytes_}));
  for (auto& w : wants_) w.flag.store(true, std::memory_order_relaxed);
}

void ManagedOutbox::send_some(Clock::time_point now, int me, double tokens, const ValueOf& value_of,
                              const OwnerOf& owner_of, const Send& send) {
  std::map<int, std::vector<std::int64_t>> chosen;  // per owner
  std::vector<Candidate> remote;
  set_.each_magnitude([&](std::int64_t k, double magnitude) {
    const int o = owner_of(k);
    if (o == me) chosen[o].push_back(k);
    else remote.push_back({score(k, magnitude, value_of), k, o});
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
    const auto bytes = static_cast<std::int64_t>(send(o, clock_, set_.extract_records(keys)));
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

double ManagedOutbox::score(std::int64_t k, double delta, const ValueOf& value_of) const {
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

}  // namespace strata::ps
