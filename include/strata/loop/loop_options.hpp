// LoopOptions: how parallel_for plans and runs a loop (strata/loop/parallel_for.hpp).
#pragma once

#include <cstdint>
#include <optional>

#include "strata/analysis/strategy.hpp"

#ifndef STRATA_CHECKED_DEFAULT
#define STRATA_CHECKED_DEFAULT 0
#endif

namespace strata {

/// How parallel_for runs a loop.
struct LoopOptions {
  /// Dependent iterations keep their lexicographic order (default: any serial order).
  bool ordered = false;
  /// Force a strategy (serial, 1d, 2d, 2d-skewed, groups); it must be legal.
  std::optional<analysis::Strategy> strategy;
  /// Print the plan (rank 0) when it is built.
  bool explain = false;
  /// Verify every access during execution against the plan. On by default in builds
  /// configured with -DSTRATA_CHECKED=ON, and for every loop when the environment
  /// variable STRATA_CHECKED=1 is set.
  bool checked = STRATA_CHECKED_DEFAULT != 0;
  /// Time blocks per worker in 2-D plans; 0 = automatic: at least 2 (so transfers
  /// overlap computation), more when the rows that follow the time dimension are
  /// large, so one block of them stays in a core's L2 cache.
  int blocks_per_worker = 0;
  /// Unordered 2-D plans: times the time blocks go round the workers per pass. Each
  /// worker's space part is cut into S slices (slices_per_worker); round r runs
  /// slice r mod S, and the slice's iterations at each time index are dealt over its
  /// rounds / S visits in turn (RoundDealer). 0 = automatic: 8 S (8 visits of
  /// each slice a pass), fewer when a step would hold under 1024 iterations. With one round a block visits each worker
  /// once, so SGD sees each time-dimension row's updates in W bursts per pass and
  /// converges per pass slower than on a shuffled serial order (docs/loops.md,
  /// "Strategies and layouts", has mf's figures).
  int rounds = 0;
  /// Unordered 2-D plans: slices of each worker's space part (see rounds); 0 =
  /// automatic: enough that a slice of the arrays following the space dimension
  /// fits in about 8 MiB, at most rounds and a divisor of it. Set, it must divide
  /// rounds.
  int slices_per_worker = 0;
  /// For tests of checked mode only: run a forced strategy even if it is illegal.
  bool skip_legality_check = false;
  /// The reconnaissance pass visits every recon_stride-th iteration only, and the
  /// first run checks every access of every iteration against the plan built from
  /// that sample: if one does not fit, the run is undone and the loop re-planned from
  /// a full pass. 1 = a full reconnaissance pass; 0 = automatic: 1 below 2^14
  /// iterations, otherwise 16 or, above 2^22 iterations, enough that about 2^18
  /// iterations are sampled.
  int recon_stride = 0;
  /// 0: each worker visits its iterations of a block in key order. Otherwise the
  /// order inside each block is a random permutation drawn from this seed (the same
  /// for every run with the same seed, ranks and threads). Any order inside a block
  /// keeps the plan's guarantees; SGD converges per pass more like a serial loop over
  /// shuffled data when the order is not sorted by key.
  std::uint64_t shuffle_seed = 0;
  /// Conflict-groups plans (loops whose iterations conflict, so whose result depends
  /// on their order) visit each thread's iterations in a seeded random order by
  /// default: the job's seed (Runtime::seed), or shuffle_seed when set, hashed with
  /// each iteration's index, so any two iterations keep their relative order on every
  /// layout. Set, they visit them in key order instead (docs/loops.md says what that
  /// costs SGD).
  bool key_order = false;
  /// 2-D plans across ranks: arrays that follow the time dimension travel between
  /// ranks with the blocks; a rank holds its home blocks between calls and, during
  /// one, the blocks in use. Its storage addresses the whole array, and once a block
  /// it sent on has arrived its pages go back to the system (to be faulted in again
  /// when the block returns, about 10 % of mf's pass at 2 ranks) when the travelling
  /// arrays together take more than this many bytes. -1 = automatic: a sixteenth of
  /// the machine's memory; 0 = always.
  std::int64_t release_travelling_above = -1;
};

}  // namespace strata
