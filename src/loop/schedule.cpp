#include "loop/schedule.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "strata/detail/stopwatch.hpp"
#include "strata/error.hpp"
#include "strata/detail/worker.hpp"

namespace strata::loop {

BlockSchedule BlockSchedule::rotation(int workers, int blocks_per_worker, int rounds) {
  STRATA_CHECK(rounds >= 1, "a rotation needs at least one round");
  BlockSchedule s;
  s.workers = workers;
  s.blocks = workers * blocks_per_worker;
  s.rounds = rounds;
  s.order.resize(static_cast<std::size_t>(workers));
  s.users.resize(static_cast<std::size_t>(s.blocks));
  for (int q = 0; q < rounds; ++q) {
    for (int w = 0; w < workers; ++w)
      for (int step = 0; step < s.blocks; ++step)
        s.order[static_cast<std::size_t>(w)].push_back((blocks_per_worker * w + step) % s.blocks);
    for (int b = 0; b < s.blocks; ++b) {
      const int first = b / blocks_per_worker;
      for (int u = 0; u < workers; ++u)
        s.users[static_cast<std::size_t>(b)].push_back(((first - u) % workers + workers) % workers);
    }
  }
  s.index_positions();
  return s;
}

BlockSchedule BlockSchedule::wavefront(int workers, int blocks) {
  BlockSchedule s;
  s.workers = workers;
  s.blocks = blocks;
  s.order.assign(static_cast<std::size_t>(workers), {});
  s.users.assign(static_cast<std::size_t>(blocks), {});
  for (int w = 0; w < workers; ++w)
    for (int b = 0; b < blocks; ++b) s.order[static_cast<std::size_t>(w)].push_back(b);
  for (int b = 0; b < blocks; ++b)
    for (int w = 0; w < workers; ++w) s.users[static_cast<std::size_t>(b)].push_back(w);
  s.index_positions();
  return s;
}

// A worker's k-th run of block b (its k-th occurrence in order[w]) is its k-th use
// of b in users[b]; both lists go round `rounds` times.
void BlockSchedule::index_positions() {
  const auto W = static_cast<std::size_t>(workers), B = static_cast<std::size_t>(blocks),
             Q = static_cast<std::size_t>(rounds);
  steps_.assign(W * B * Q, -1);
  uses_.assign(W * B * Q, -1);
  for (std::size_t w = 0; w < W; ++w) {
    STRATA_CHECK(order[w].size() == B * Q, "a schedule runs every block once per round");
    std::vector<std::size_t> seen(B, 0);
    for (std::size_t step = 0; step < order[w].size(); ++step) {
      const auto b = static_cast<std::size_t>(order[w][step]);
      STRATA_CHECK(seen[b] < Q, "a schedule runs every block once per round");
      steps_[(w * B + b) * Q + seen[b]++] = static_cast<int>(step);
    }
  }
  for (std::size_t b = 0; b < B; ++b) {
    std::vector<std::size_t> seen(W, 0);
    for (std::size_t u = 0; u < users[b].size(); ++u) {
      const auto w = static_cast<std::size_t>(users[b][u]);
      uses_[w * B * Q + static_cast<std::size_t>(step_of(static_cast<int>(w), static_cast<int>(b),
                                                         static_cast<int>(seen[w]++)))] = static_cast<int>(u);
    }
  }
}

namespace {

// Per block: how many users have finished with it (this rank's view).
struct BlockState {
  std::atomic<int> released{0};
};

std::span<std::byte> block_bytes(const TravellingArray& a, int b) {
  const auto begin = a.block_rows[static_cast<std::size_t>(b)] * a.row_bytes;
  const auto end = a.block_rows[static_cast<std::size_t>(b) + 1] * a.row_bytes;
  return a.storage.subspan(static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin));
}

}  // namespace

double run_schedule(Runtime& rt, const BlockSchedule& s, std::span<TravellingArray> travelling,
                    const std::function<void(int thread, int step, int block)>& run_block, bool rank0_only) {
  const int T = rt.threads(), r = rank0_only ? 0 : rt.rank();
  if (rank0_only && rt.rank() != 0) return 0.0;
  STRATA_CHECK(s.workers == (rank0_only ? 1 : rt.size()) * T, "schedule workers must be ranks x threads");
  auto rank_of = [&](int worker) { return worker / T; };
  std::vector<BlockState> state(static_cast<std::size_t>(s.blocks));
  const double timeout = rt.comm().timeout();
  std::vector<double> waited(static_cast<std::size_t>(T), 0.0);
  rt.pool().run([&](int t) {
    strata::detail::WorkerScope worker(t);
    const int w = r * T + t;
    const auto& order = s.order[static_cast<std::size_t>(w)];
    for (int step = 0; step < static_cast<int>(order.size()); ++step) {
      const int b = order[static_cast<std::size_t>(step)];
      const int u = s.use_at(w, step);
      if (u > 0) {
        const auto wait_start = std::chrono::steady_clock::now();
        const int prev = s.users[static_cast<std::size_t>(b)][static_cast<std::size_t>(u - 1)];
        if (rank_of(prev) != r) {
          for (auto& a : travelling)
            rt.comm().recv(block_bytes(a, b), rank_of(prev), b,
                           fmt::format("time block {} from rank {} (worker {} at step {})", b, rank_of(prev), w, step));
        } else {
          // Wait for the previous user on this rank: spin briefly, then yield.
          const auto start = std::chrono::steady_clock::now();
          for (long spins = 0; state[static_cast<std::size_t>(b)].released.load(std::memory_order_acquire) < u; ++spins) {
            if (spins < 1000) continue;
            std::this_thread::yield();
            if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > timeout)
              throw TimeoutError(fmt::format("time block {} from worker {} (thread wait)", b, prev), r, timeout);
          }
        }
        waited[static_cast<std::size_t>(t)] += strata::detail::seconds_since(wait_start);
      }
      run_block(t, step, b);
      state[static_cast<std::size_t>(b)].released.store(u + 1, std::memory_order_release);
      if (u + 1 < static_cast<int>(s.users[static_cast<std::size_t>(b)].size())) {
        const int next = s.users[static_cast<std::size_t>(b)][static_cast<std::size_t>(u + 1)];
        if (rank_of(next) != r)
          for (auto& a : travelling) rt.comm().isend(block_bytes(a, b), rank_of(next), b);
      }
    }
    const auto drain_start = std::chrono::steady_clock::now();
    rt.comm().wait_sends();
    waited[static_cast<std::size_t>(t)] += strata::detail::seconds_since(drain_start);
  });
  double total = 0;
  for (double w : waited) total += w;
  return total;
}

}  // namespace strata::loop
