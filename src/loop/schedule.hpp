// Block schedules of 2-D plans and the runner that executes them on a rank's threads.
//
// The iteration space is cut into W space parts (one per worker: ranks x threads)
// and B time blocks. Worker w runs the blocks of its space part in order[w]; time
// block b is used by the workers in users[b], one after another, because they all
// touch the same rows of the arrays that follow the time dimension. A worker starts
// block b once b's previous user has released it: by an atomic counter when that
// user is a thread of the same rank, by receiving the block's rows over MPI when it
// is on another rank. No global barrier is needed inside the loop. A rotation may go
// round its blocks several times per pass (rounds): in round q each worker runs only
// the q-th slice of its space part, and every block visits every worker once per round.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "strata/runtime.hpp"

namespace strata::loop {

struct BlockSchedule {
  int workers = 1;
  int blocks = 1;
  int rounds = 1;                       ///< times each worker runs each block per pass
  std::vector<std::vector<int>> order;  ///< per worker: time blocks in processing order (blocks x rounds steps)
  std::vector<std::vector<int>> users;  ///< per block: workers in use order (workers x rounds uses)

  /// The step at which worker w runs block b in round q.
  int step_of(int w, int b, int q = 0) const {
    return steps_[(static_cast<std::size_t>(w) * static_cast<std::size_t>(blocks) + static_cast<std::size_t>(b)) *
                      static_cast<std::size_t>(rounds) +
                  static_cast<std::size_t>(q)];
  }
  /// The position among the users of block order[w][step] of worker w at that step.
  int use_at(int w, int step) const {
    return uses_[static_cast<std::size_t>(w) * order[static_cast<std::size_t>(w)].size() + static_cast<std::size_t>(step)];
  }
  /// The round a step belongs to.
  int round_of(int step) const { return step / blocks; }
  /// Per block, the rank of its last user (workers are ranks x threads): where the rows
  /// of arrays that travel with it stay between passes, and whence its first user
  /// receives them.
  std::vector<int> home_ranks(int threads) const;

  /// Unordered rotation: worker w starts at block k*(w+1) (k = blocks / workers) and
  /// walks forward cyclically, so every worker has k blocks of slack before it needs
  /// the next one from its neighbour (transfers overlap computation). With r rounds
  /// the walk goes round r times. Worker w is the last user of blocks [k*w, k*(w+1)),
  /// and their first user is its neighbour w-1: a pass starts and ends with every
  /// block on its last user, so rows that travel need not move between passes.
  static BlockSchedule rotation(int workers, int blocks_per_worker, int rounds = 1);
  /// Ordered wavefront: every worker runs blocks 0..B-1 in order; block b goes from
  /// worker 0 to worker W-1. Worker w waits only on worker w-1.
  static BlockSchedule wavefront(int workers, int blocks);

 private:
  void index_positions();  // fills steps_ and uses_ from order and users
  std::vector<int> steps_, uses_;
};

/// Rows (along dimension 0) of arrays that travel with the time blocks between ranks.
struct TravellingArray {
  std::span<std::byte> storage;          ///< full-extent local storage
  std::int64_t row_bytes = 0;            ///< bytes per index along dimension 0
  std::vector<std::int64_t> block_rows;  ///< B+1 row boundaries of the time blocks
};

/// Runs the schedule on this rank: thread t of rank r is worker r*T + t and calls
/// run_block(t, step, block) for each of its blocks. Rows of `travelling` arrays are
/// received before and sent after each block whose neighbour user is on another rank;
/// they start on the block's home rank (home_ranks), which sends each block to its
/// first user, and end there. With `release`, a block this rank has sent on gives its
/// pages back to the system once the send completes (strata::detail::release_pages),
/// so a rank holds the blocks in use, not the array.
/// With `rank0_only`, the schedule's workers are rank 0's threads alone (gathered plans).
/// `release`: blocks sent on give their pages back (else they stay resident, unused).
/// Returns the seconds this rank's threads spent waiting for blocks, summed.
double run_schedule(Runtime& rt, const BlockSchedule& s, std::span<TravellingArray> travelling,
                  const std::function<void(int thread, int step, int block)>& run_block, bool rank0_only = false,
                  bool release = true);

}  // namespace strata::loop
