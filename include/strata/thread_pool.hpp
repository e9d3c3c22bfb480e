// A fork-join pool of worker threads owned by one rank. The calling thread takes
// part as thread 0, so a pool of size 1 runs everything inline.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace strata {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return size_; }

  /// Runs fn(thread_id) once on every thread (ids 0..size-1) and returns when all
  /// are done. The first exception thrown by any thread is rethrown here.
  /// Not reentrant: a task must not call run() on the same pool.
  void run(const std::function<void(int)>& fn);

  /// Splits [0, n) into contiguous chunks of about `grain` items handed out
  /// dynamically; calls fn(begin, end, thread_id) for each chunk.
  void run_chunks(std::int64_t n, std::int64_t grain,
                  const std::function<void(std::int64_t, std::int64_t, int)>& fn);

  /// Splits [0, n) into exactly size() contiguous static ranges, one per thread
  /// (deterministic assignment), and calls fn(begin, end, thread_id).
  void run_ranges(std::int64_t n, const std::function<void(std::int64_t, std::int64_t, int)>& fn);

 private:
  void worker_loop(int id);

  int size_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable start_cv_, done_cv_;
  const std::function<void(int)>* task_ = nullptr;
  std::uint64_t generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

}  // namespace strata
