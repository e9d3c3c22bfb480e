#include "loop/schedule.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "strata/detail/dense_storage.hpp"
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
        s.order[static_cast<std::size_t>(w)].push_back((blocks_per_worker * (w + 1) + step) % s.blocks);
    for (int b = 0; b < s.blocks; ++b) {
      const int home = b / blocks_per_worker;  // the last user
      for (int u = 0; u < workers; ++u)
        s.users[static_cast<std::size_t>(b)].push_back(((home - 1 - u) % workers + workers) % workers);
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

std::vector<int> BlockSchedule::home_ranks(int threads) const {
  std::vector<int> out;
  for (const auto& u : users) out.push_back(u.back() / threads);
  return out;
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

// Per block, this rank's view: how many users have finished with it, and which send
// of it to another rank (a number per send, 0 for none) is to release its pages once
// complete. A block can come back before its sender notices that send complete, and
// be sent on again: the receiving thread then cancels the release (or waits for one
// under way), and an old send's completion never releases a newer send's pages.
struct BlockState {
  std::atomic<int> released{0};
  std::atomic<std::uint32_t> release_after{0};
  std::atomic<std::uint32_t> sends{0};
};
constexpr std::uint32_t kReleasing = UINT32_MAX;

std::span<std::byte> block_bytes(const TravellingArray& a, int b) {
  const auto begin = a.block_rows[static_cast<std::size_t>(b)] * a.row_bytes;
  const auto end = a.block_rows[static_cast<std::size_t>(b) + 1] * a.row_bytes;
  return a.storage.subspan(static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin));
}

// Before a block is received into its rows again.
void cancel_release(BlockState& block) {
  for (;;) {
    std::uint32_t pending = block.release_after.load(std::memory_order_acquire);
    if (pending == 0) return;
    if (pending == kReleasing) {
      std::this_thread::yield();
      continue;
    }
    if (block.release_after.compare_exchange_weak(pending, 0, std::memory_order_acq_rel)) return;
  }
}

// The blocks a thread has finished with and passed to their next users, oldest first:
// those sent to other ranks (one message per travelling array), whose pages go back
// to the system as the sends complete, and those handed to a thread of this rank.
class HandedBlocks {
 public:
  HandedBlocks(std::span<TravellingArray> travelling, bool release) : travelling_(travelling), release_(release) {}
  // Called before the block's sends start: once they have, it may come back and be
  // received here before this thread runs again, and that receive must see the release
  // it cancels.
  void sent(int b, std::span<BlockState> state) {
    BlockState& block = state[static_cast<std::size_t>(b)];
    std::uint32_t send = block.sends.fetch_add(1, std::memory_order_relaxed) + 1;
    if (send == 0 || send == kReleasing) send = 1;  // wrapped round: far older sends are long complete
    block.release_after.store(send, std::memory_order_release);
    sent_.push_back({b, send});
  }
  // Handed to a thread of this rank, whose use of it is the block's use `use`.
  void handed(int b, int use) { handed_.push_back({b, use}); }

  // `messages` more of this thread's sends have completed (Comm::finished_sends).
  void release_finished(std::size_t messages, std::span<BlockState> state) {
    finished_ += messages;
    for (; next_sent_ < sent_.size() && finished_ >= travelling_.size(); ++next_sent_) {
      finished_ -= travelling_.size();
      const auto [b, send] = sent_[next_sent_];
      auto& release_after = state[static_cast<std::size_t>(b)].release_after;
      std::uint32_t expected = send;
      if (!release_after.compare_exchange_strong(expected, kReleasing, std::memory_order_acq_rel)) continue;
      if (release_)
        for (auto& a : travelling_) strata::detail::release_pages(block_bytes(a, b));
      release_after.store(0, std::memory_order_release);
    }
  }
  // After wait_sends: every send has completed.
  void release_all(std::span<BlockState> state) {
    release_finished((sent_.size() - next_sent_) * travelling_.size(), state);
  }
  bool sending() const { return next_sent_ < sent_.size(); }

  // Flow control: waits until at most `most` of the blocks this thread passed on are
  // still waiting for their next users (a send not complete, a handed block its next
  // user has not finished), releasing the pages of sends that completed. A worker ahead
  // of the next one would otherwise pile up blocks, and a rank's memory is the blocks
  // it holds. The rotation keeps every worker k blocks ahead of the next, so a share of
  // k + 1 never waits in step; and as the blocks are fewer than the workers times
  // k + 2, the workers cannot all wait on each other (one whose next worker has taken
  // everything waits for nothing, and one whose previous worker has passed nothing on
  // waits for data, which that one then cannot be waiting on).
  void wait_until_at_most(std::size_t most, Comm& comm, std::span<BlockState> state, int worker) {
    const auto start = std::chrono::steady_clock::now();
    for (long polls = 0;; ++polls) {
      if (sending()) release_finished(comm.finished_sends(), state);
      while (next_handed_ < handed_.size() &&
             state[static_cast<std::size_t>(handed_[next_handed_].block)].released.load(std::memory_order_acquire) >
                 handed_[next_handed_].use)
        ++next_handed_;
      if ((sent_.size() - next_sent_) + (handed_.size() - next_handed_) <= most) return;
      if (polls > 100) std::this_thread::yield();
      if (strata::detail::seconds_since(start) > comm.timeout())
        throw TimeoutError(fmt::format("time blocks worker {} passed on, to be taken by the next worker", worker),
                           comm.rank(), comm.timeout());
    }
  }

 private:
  struct Sent {
    int block;
    std::uint32_t send;
  };
  struct Handed {
    int block;
    int use;
  };
  std::span<TravellingArray> travelling_;
  bool release_;
  std::vector<Sent> sent_;
  std::vector<Handed> handed_;
  std::size_t next_sent_ = 0, next_handed_ = 0, finished_ = 0;
};

}  // namespace

double run_schedule(Runtime& rt, const BlockSchedule& s, std::span<TravellingArray> travelling,
                    const std::function<void(int thread, int step, int block)>& run_block, bool rank0_only,
                    bool release) {
  const int T = rt.threads(), r = rank0_only ? 0 : rt.rank();
  if (rank0_only && rt.rank() != 0) return 0.0;
  STRATA_CHECK(s.workers == (rank0_only ? 1 : rt.size()) * T, "schedule workers must be ranks x threads");
  auto rank_of = [&](int worker) { return worker / T; };
  std::vector<BlockState> state(static_cast<std::size_t>(s.blocks));
  const double timeout = rt.comm().timeout();
  std::vector<double> waited(static_cast<std::size_t>(T), 0.0);
  // A block's message to its use u is tagged u * blocks + b where the communicator's
  // tags reach that far, so each message matches one receive whichever thread of the
  // rank posts it first; a worker then posts the next step's receives before it runs a
  // block, so that the transfer can overlap that run instead of starting when the step
  // does. Otherwise the tag is b, and each step posts its receives when it begins, in
  // order. An early receive writes the block's rows only once its message arrives,
  // which is after every earlier use of the block here has ended (each use waits for
  // the one before), so it may be posted while the rows are still in use.
  std::size_t most_uses = 0;
  for (const auto& u : s.users) most_uses = std::max(most_uses, u.size());
  // Not where another thread of the rank may still send a block this worker has posted a
  // receive for, and give its pages back once that send completes (release): the data
  // may have arrived by then.
  const bool early = !travelling.empty() && (!release || T == 1) &&
                     static_cast<std::int64_t>(most_uses) * s.blocks <= rt.comm().max_tag();
  auto tag_of = [&](int b, int u) { return early ? u * s.blocks + b : b; };
  rt.pool().run([&](int t) {
    strata::detail::WorkerScope worker(t);
    const int w = r * T + t;
    const auto& order = s.order[static_cast<std::size_t>(w)];
    HandedBlocks passed(travelling, release);
    // The rank step `step`'s block comes from (its previous user's, its home for a first
    // use), or -1 when a thread of this rank hands it over.
    auto source_of = [&](int step) {
      const auto& users = s.users[static_cast<std::size_t>(order[static_cast<std::size_t>(step)])];
      const int u = s.use_at(w, step);
      const int from = rank_of(u == 0 ? users.back() : users[static_cast<std::size_t>(u - 1)]);
      return from == r ? -1 : from;
    };
    // Receives started early, per step (kAhead steps at most); cancelled if the run
    // stops. A large message moves only once its receive is posted and then both ranks
    // call into MPI (the sender pushes the data at the start of its next step), so a
    // receive needs a few steps' start, not one (docs/loops.md).
    constexpr int kAhead = 3;
    std::map<int, std::vector<std::uint64_t>> posted;
    int posted_up_to = 0;  // steps before it are posted (or need no receive)
    struct CancelOnExit {
      Comm& comm;
      const std::map<int, std::vector<std::uint64_t>>& posted;
      ~CancelOnExit() {
        if (!posted.empty()) comm.cancel_recvs();
      }
    } cancel_on_exit{rt.comm(), posted};
    // Posts the receives of the steps after `step` up to step + kAhead, stopping at a
    // block this worker still has to run before (its rows are not to be received into
    // yet).
    auto post_ahead = [&](int step) {
      const int last = std::min(step + kAhead, static_cast<int>(order.size()) - 1);
      for (posted_up_to = std::max(posted_up_to, step + 1); posted_up_to <= last; ++posted_up_to) {
        const int b = order[static_cast<std::size_t>(posted_up_to)];
        bool earlier = false;
        for (int k = std::max(step, 0); k < posted_up_to && !earlier; ++k)
          earlier = order[static_cast<std::size_t>(k)] == b;
        if (earlier) break;
        const int from = source_of(posted_up_to);
        if (from < 0) continue;
        cancel_release(state[static_cast<std::size_t>(b)]);  // before the rows can be received into
        const int tag = tag_of(b, s.use_at(w, posted_up_to));
        auto& ids = posted[posted_up_to];
        for (auto& a : travelling) ids.push_back(rt.comm().irecv(block_bytes(a, b), from, tag));
      }
    };
    auto receive = [&](int step, int from, const std::string& what) {
      const int b = order[static_cast<std::size_t>(step)];
      if (const auto it = posted.find(step); it != posted.end()) {
        for (const std::uint64_t id : it->second) rt.comm().wait_recv(id, what);
        posted.erase(it);
        return;
      }
      cancel_release(state[static_cast<std::size_t>(b)]);
      for (auto& a : travelling) rt.comm().recv(block_bytes(a, b), from, tag_of(b, s.use_at(w, step)), what);
    };
    // The blocks this worker is home to start at their first users: passed on, as if
    // this worker had just used them (so flow control counts them).
    if (!travelling.empty())
      for (int b = 0; b < s.blocks; ++b) {
        const auto& users = s.users[static_cast<std::size_t>(b)];
        if (users.back() != w) continue;
        if (rank_of(users.front()) == r) {
          passed.handed(b, 0);
          continue;
        }
        passed.sent(b, state);
        for (auto& a : travelling) rt.comm().isend(block_bytes(a, b), rank_of(users.front()), tag_of(b, 0));
      }
    if (early && !order.empty()) post_ahead(-1);
    // Flow control: a worker holds its current block, and the blocks it has kept for
    // good this pass (its home blocks, at the end) and passed on but the next worker has
    // not taken count against its share of blocks, k + 1 (k: blocks per worker).
    const std::size_t share = static_cast<std::size_t>(s.blocks / s.workers) + 1;
    std::size_t kept = 0;
    for (int step = 0; step < static_cast<int>(order.size()); ++step) {
      const int b = order[static_cast<std::size_t>(step)];
      const int u = s.use_at(w, step);
      if (!travelling.empty()) {
        const auto wait_start = std::chrono::steady_clock::now();
        passed.wait_until_at_most(share > kept ? share - kept : 0, rt.comm(), state, w);
        waited[static_cast<std::size_t>(t)] += strata::detail::seconds_since(wait_start);
      }
      const auto& users = s.users[static_cast<std::size_t>(b)];
      // A block's first user takes it from its home (its last user, in the pass before).
      if (u == 0 && rank_of(users.back()) != r) {
        const auto wait_start = std::chrono::steady_clock::now();
        receive(step, rank_of(users.back()),
                fmt::format("time block {} from its home rank {} (worker {} at step {})", b, rank_of(users.back()), w,
                            step));
        waited[static_cast<std::size_t>(t)] += strata::detail::seconds_since(wait_start);
      }
      if (u > 0) {
        const auto wait_start = std::chrono::steady_clock::now();
        const int prev = users[static_cast<std::size_t>(u - 1)];
        if (rank_of(prev) != r) {
          receive(step, rank_of(prev),
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
      if (early) post_ahead(step);
      run_block(t, step, b);
      state[static_cast<std::size_t>(b)].released.store(u + 1, std::memory_order_release);
      if (u + 1 == static_cast<int>(users.size())) {
        ++kept;
      } else if (!travelling.empty()) {
        const int next = users[static_cast<std::size_t>(u + 1)];
        if (rank_of(next) != r) {
          passed.sent(b, state);
          for (auto& a : travelling) rt.comm().isend(block_bytes(a, b), rank_of(next), tag_of(b, u + 1));
        } else {
          passed.handed(b, u + 1);
        }
      }
    }
    const auto drain_start = std::chrono::steady_clock::now();
    rt.comm().wait_sends();
    passed.release_all(state);
    waited[static_cast<std::size_t>(t)] += strata::detail::seconds_since(drain_start);
  });
  double total = 0;
  for (double w : waited) total += w;
  return total;
}

}  // namespace strata::loop
