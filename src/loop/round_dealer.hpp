// Which round of an unordered 2-D rotation each iteration runs in (docs/loops.md,
// "Rounds").
//
// Each worker's space part is cut into S slices (of about equal iterations), and the
// rotation goes round q times per pass, q a multiple of S: round r runs slice r mod
// S, so each slice is visited v = q / S times. Slice s of every worker runs in the
// same rounds; the iterations of all workers' slices s at one index of the time
// dimension (say, an item's ratings by those users, in mf) are dealt over the v
// visits in turn, in worker order and key order, from a visit picked by a hash of
// the index. So every row spreads its updates over the pass, as in the serial
// program's shuffled order, while a step touches only one slice of the rows that
// follow the space dimension and keeps them in cache.
//
// The deal depends only on the iteration space and the worker count, so 1 rank x 2
// threads and 2 ranks x 1 thread run the same order.
#pragma once

#include <cstdint>
#include <vector>

#include "strata/comm.hpp"

namespace strata::loop {

class RoundDealer {
 public:
  /// Collective. `counts[(j * S + s) * time_extent + t]`: the units to deal (single
  /// iterations, or runs of iterations of one (space, time) pair) of this rank's
  /// worker j (its thread), slice s, at time index t. S = `slices_per_worker`;
  /// `rounds` is a multiple of S.
  RoundDealer(Comm& comm, const std::vector<std::uint32_t>& counts, std::int64_t time_extent, int slices_per_worker,
              int rounds);

  /// The round of the next unit of this rank's worker j, slice s, at time index t;
  /// `slice` = j * S + s. Call in key order.
  int deal(int slice, std::int64_t t) {
    auto& visit = next_[static_cast<std::size_t>(slice) * extent_ + static_cast<std::size_t>(t)];
    const int round = first_round_[static_cast<std::size_t>(slice)] + slices_ * visit;
    visit = static_cast<std::uint8_t>(visit + 1 == visits_ ? 0 : visit + 1);
    return round;
  }

 private:
  std::size_t extent_;
  int slices_, visits_;
  std::vector<std::uint8_t> next_;  // per (local slice, time index): the visit of its next iteration
  std::vector<int> first_round_;    // per local slice: its first round (slice mod S; a division per deal cost more)
};

}  // namespace strata::loop
