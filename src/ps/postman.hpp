// The communication thread of a rank's parameter server (DESIGN.md §5).
//
// One Postman per process owns every MPI call of the server path: computation
// threads hand it messages (send) and it delivers incoming ones to the handler
// subscribed to their topic, on its own thread. So a computation thread touches MPI
// only where a consistency model makes it wait, and then it waits on a condition
// variable, not on MPI.
//
// A topic is a relaxed array's id (the same on every rank). Messages for a topic
// nobody has subscribed to yet are kept until someone does. While no table is in
// use the thread sleeps; while one is, it polls with a back-off (short while
// messages flow, longer while none do) and runs the tables' chores (managed
// communication's pump).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include "strata/comm.hpp"
#include "strata/runtime.hpp"

namespace strata::ps {

class Postman final : public RuntimeService {
 public:
  /// Runs on the Postman's thread; `body` is the message without its topic.
  using Handler = std::function<void(int from, std::span<const std::byte> body)>;

  explicit Postman(Comm& comm);
  ~Postman() override;
  Postman(const Postman&) = delete;
  Postman& operator=(const Postman&) = delete;

  void subscribe(std::uint64_t topic, Handler handler);
  /// A chore runs on the Postman's thread on every turn of its loop while some table
  /// is in use (it keeps its own time). One per topic.
  void set_chore(std::uint64_t topic, std::function<void()> chore);
  /// After it returns, the topic's handler and chore are not running and will not
  /// run again.
  void unsubscribe(std::uint64_t topic);
  /// Thread-safe: queues `body` for rank `dest` (this rank included) under `topic`.
  void send(int dest, std::uint64_t topic, std::span<const std::byte> body);
  /// A table in use keeps the thread polling; while none is, it sleeps.
  void begin_use();
  void end_use();
  /// A computation thread is about to wait for a message: poll at the fast end.
  void hurry();
  /// Throws the error that stopped the thread (a failed MPI call), if any.
  void check() const;
  int rank() const { return rank_; }

 private:
  static constexpr int kSpins = 64;  // quick polls (yields) before the first pause
  static constexpr std::chrono::microseconds kFastPause{50};  // the shortest pause, and the first
  static constexpr int kTurnsPerStep = 16;  // idle turns before the pause doubles
  static constexpr int kSteps = 4;          // doublings: 50 us << 4 = 800 us at most
  static constexpr int kIdleMost = kSpins + kTurnsPerStep * kSteps;  // idle turns past it change nothing
  static std::chrono::microseconds pause(int idle);
  void run();
  bool deliver(int from, Bytes& message);  // false: no handler yet (kept)

  Comm& comm_;
  int rank_;
  std::mutex out_mu_;
  std::condition_variable out_cv_;
  std::deque<std::pair<int, Bytes>> outbox_;
  int users_ = 0;
  bool stop_ = false;
  std::mutex handlers_mu_;
  std::map<std::uint64_t, Handler> handlers_;
  std::map<std::uint64_t, std::function<void()>> chores_;
  std::vector<std::pair<int, Bytes>> unclaimed_;
  std::atomic<bool> hurried_{false};
  std::atomic<bool> failed_{false};
  std::exception_ptr failure_;
  std::thread thread_;
};

/// The run's postman: its thread starts on first use and stops before the Runtime's
/// communicator goes.
Postman& postman(Runtime& rt);

}  // namespace strata::ps
