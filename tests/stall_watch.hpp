// Notices when the machine stops running this process on time, so a test of a timing
// property (a send rate, a deadline) can leave out the moments it could not measure.
//
// A watcher thread sleeps kTick at a time; a sleep that overran by more than
// kOverrun means no core was free for this process (another job on a shared CI
// machine, more ranks than cores) and is kept as a stall: [start, end) in seconds
// since the watch began. What the test measures in those moments is the machine's
// load, not the code's behaviour.
#pragma once

#include <atomic>
#include <chrono>
#include <thread>
#include <utility>
#include <vector>

namespace strata::testing {

class StallWatch {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr auto kTick = std::chrono::milliseconds(5);
  static constexpr auto kOverrun = std::chrono::milliseconds(20);

  StallWatch() : start_(Clock::now()), thread_([this] { watch(); }) {}
  ~StallWatch() { stop(); }
  StallWatch(const StallWatch&) = delete;
  StallWatch& operator=(const StallWatch&) = delete;

  /// Stops watching (idempotent); call it right after what it watched, before reading
  /// stalls() or elapsed().
  void stop() {
    if (!thread_.joinable()) return;
    running_.store(false);
    thread_.join();
    watched_ = std::chrono::duration<double>(Clock::now() - start_).count();
  }
  /// Seconds from the watch's start to its stop.
  double elapsed() const { return watched_; }
  /// The stalls seen, [start, end) in seconds since the watch began; after stop().
  const std::vector<std::pair<double, double>>& stalls() const { return stalls_; }

 private:
  void watch() {
    while (running_.load()) {
      const auto before = Clock::now();
      std::this_thread::sleep_for(kTick);
      const auto after = Clock::now();
      if (after - before > kTick + kOverrun)
        stalls_.emplace_back(std::chrono::duration<double>(before - start_).count(),
                             std::chrono::duration<double>(after - start_).count());
    }
  }

  const Clock::time_point start_;
  std::atomic<bool> running_{true};
  std::vector<std::pair<double, double>> stalls_;
  double watched_ = 0;
  std::thread thread_;  // last: starts after the members it uses
};

}  // namespace strata::testing
