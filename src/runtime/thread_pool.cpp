#include "strata/thread_pool.hpp"

#include <algorithm>
#include <atomic>

#include "strata/error.hpp"

namespace strata {

ThreadPool::ThreadPool(int threads) : size_(std::max(1, threads)) {
  workers_.reserve(static_cast<std::size_t>(size_ - 1));
  for (int id = 1; id < size_; ++id) workers_.emplace_back([this, id] { worker_loop(id); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::worker_loop(int id) {
  std::uint64_t seen = 0;
  for (;;) {
    const std::function<void(int)>* task;
    {
      std::unique_lock lock(mu_);
      start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      task = task_;
    }
    std::exception_ptr err;
    try {
      (*task)(id);
    } catch (...) {
      err = std::current_exception();
    }
    std::lock_guard lock(mu_);
    if (err && !error_) error_ = err;
    if (--pending_ == 0) done_cv_.notify_one();
  }
}

void ThreadPool::run(const std::function<void(int)>& fn) {
  if (size_ == 1) {
    fn(0);
    return;
  }
  {
    std::lock_guard lock(mu_);
    STRATA_CHECK(task_ == nullptr, "ThreadPool::run is not reentrant");
    task_ = &fn;
    pending_ = size_ - 1;
    error_ = nullptr;
    ++generation_;
  }
  start_cv_.notify_all();
  std::exception_ptr mine;
  try {
    fn(0);
  } catch (...) {
    mine = std::current_exception();
  }
  std::exception_ptr theirs;
  {
    std::unique_lock lock(mu_);
    done_cv_.wait(lock, [&] { return pending_ == 0; });
    task_ = nullptr;
    theirs = error_;
    error_ = nullptr;
  }
  if (mine) std::rethrow_exception(mine);
  if (theirs) std::rethrow_exception(theirs);
}

void ThreadPool::run_chunks(std::int64_t n, std::int64_t grain,
                            const std::function<void(std::int64_t, std::int64_t, int)>& fn) {
  if (n <= 0) return;
  grain = std::max<std::int64_t>(1, grain);
  if (size_ == 1 || n <= grain) {
    fn(0, n, 0);
    return;
  }
  std::atomic<std::int64_t> next{0};
  run([&](int tid) {
    for (;;) {
      const std::int64_t b = next.fetch_add(grain, std::memory_order_relaxed);
      if (b >= n) return;
      fn(b, std::min(n, b + grain), tid);
    }
  });
}

void ThreadPool::run_ranges(std::int64_t n,
                            const std::function<void(std::int64_t, std::int64_t, int)>& fn) {
  if (n <= 0) return;
  run([&](int tid) {
    const std::int64_t b = n * tid / size_, e = n * (tid + 1) / size_;
    if (b < e) fn(b, e, tid);
  });
}

}  // namespace strata
