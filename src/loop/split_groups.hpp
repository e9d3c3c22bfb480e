// Conflict groups too large for one thread, split over several (STRADS-AP's way).
//
// A groups plan runs each conflict group on one thread. When one group holds most of
// the loop (TransE: the 26 relation rows are written by every triple, so all triples
// form one group), that thread does most of the work. A group larger than a thread's
// share is split: its iterations are dealt over all threads, and each of them runs
// under locks on the units (elements, or rows) it touches of the arrays a split group
// writes (every unit of those arrays is *lockable*, loop/ownership.hpp):
//   * before an iteration (of a split group or not), the lockable units its
//     reconnaissance recorded are locked in increasing unit order, so no two threads
//     wait for each other (no deadlock);
//   * an access to a lockable unit it did not lock (its subscripts moved since the
//     loop was planned: a negative drawn from the epoch; or an iteration of a group
//     that was not split reaching into those arrays) locks it on the spot. Such a
//     wait out of order could deadlock: a worker still taking its recorded locks
//     gives way to it (drops them, waits until it got the unit, starts again), and
//     when every worker of a
//     cycle of waits is inside its body the access is refused, and the run undone
//     and planned again like any refused run;
//   * when the iteration ends, its ticket is one more than the largest of its
//     worker's last ticket and the tickets of the iterations that last held the
//     units it touched (a Lamport clock kept per unit in its lock word: no counter
//     all workers would share); then its locks go. A recorded lock the iteration did
//     not touch (a negative of an earlier epoch) is dropped from its list.
// Two iterations that touch a common lockable unit hold it in turn, and the one that
// held it first has the lower ticket; a worker's tickets grow. Everything else an
// iteration touches is claimed as in any re-validated run, so iterations of
// different workers meet only at lockable units. The run therefore equals the serial
// run of its iterations in the order of their tickets (ties: worker, then position),
// each iteration without a ticket kept in place after the last ticket its worker took
// before it (schedule_rows builds that order; a record logs it, so equivalent_order
// and the one-process replay reproduce the run bit for bit).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "analysis/conflict_groups.hpp"
#include "loop/ownership.hpp"

namespace strata::loop {

struct Plan;

/// A group is split when it holds more than this many times a thread's share: below
/// it, running it whole costs less imbalance than its locks cost time.
inline constexpr double kSplitAbove = 1.1;

/// A plan's split groups on this rank: what each iteration locks, and the tickets of
/// the last run.
struct SplitGroups {
  static constexpr std::uint32_t kDropped = ~std::uint32_t{0};
  /// One thread's iterations in the order it runs them (the plan's work list).
  struct Lane {
    /// Its k-th iteration locks units[offsets[k], offsets[k + 1]), in increasing order
    /// (kDropped: a unit it locked once and did not touch; no longer locked first).
    std::vector<std::uint64_t> offsets{0};
    std::vector<std::uint32_t> units;
    /// The last run: the k-th iteration's ticket, -1 when it touched no lockable unit.
    std::vector<std::int64_t> ticket;
  };
  std::vector<Lane> lanes;
  /// Per worker: 1 + the unit it waits for, top bit set for a wait out of unit
  /// order; 0 while it waits for none.
  std::unique_ptr<std::atomic<std::uint64_t>[]> waiting;
  std::size_t workers = 0;

  /// Until arrange(): the locks of each local iteration position, in increasing order.
  std::vector<std::uint64_t> offsets_by_position;
  std::vector<std::uint32_t> units_by_position;

  /// Lays the locks out in the order the threads run their iterations: `work` holds,
  /// per thread, the positions it runs (its one step).
  void arrange(const std::vector<std::vector<std::vector<std::uint32_t>>>& work);
  /// Before a run: no tickets taken, nobody waiting.
  void reset(int threads);
};

/// This rank's iterations placed on its threads from their recorded accesses (and,
/// when `units` is not empty, each access's unit in plan.ownership): conflict groups
/// largest first onto the least-loaded thread; with more than one thread and a table
/// to lock in, groups of more than 1.1x a thread's share are split (plan.split, the
/// table's lockable units). Sets plan.groups, plan.imbalance and, for this rank,
/// plan.split_groups and plan.split_iterations.
std::vector<std::int32_t> place_groups(Plan& plan, std::int64_t iterations,
                                       const std::vector<analysis::ElementAccess>& accesses,
                                       const std::vector<std::uint64_t>& units);

/// Thrown at the next iteration of every other thread once one thread's run was
/// refused (or while a thread waits for a lock): the run will be undone anyway.
struct RunAbandoned {};

/// One thread's locks during one step of a run with split groups.
class SplitLocks {
 public:
  /// The thread `worker` runs its iterations from the `from`-th on.
  SplitLocks(SplitGroups& split, OwnershipTable& table, std::size_t from, int worker,
             const std::atomic<bool>& abandoned);
  ~SplitLocks() { release(); }
  SplitLocks(const SplitLocks&) = delete;
  SplitLocks& operator=(const SplitLocks&) = delete;

  /// Before the next iteration: locks what it recorded, in unit order.
  void begin_iteration();
  /// After it: its ticket when it touched a lockable unit, then every lock goes.
  void end_iteration();
  /// The current iteration's access to a unit of `table` it holds no claim on: true
  /// when the unit is lockable and is now locked for it, false when it is not
  /// lockable; throws SpeculationFailed when waiting for it would deadlock, and
  /// RunAbandoned when another thread's run was refused meanwhile.
  bool lock_extra(const strata::detail::ArrayBase& array, std::span<const std::int64_t> index, bool whole_last);

 private:
  /// Locks `unit`, waiting while another worker holds it; false when the wait
  /// would deadlock (split_groups.cpp).
  bool lock(std::uint32_t unit, bool out_of_order);
  /// A wait out of order: it would close a cycle of waits.
  bool closes_cycle(std::uint32_t unit) const;
  /// A wait in unit order: another worker waits out of order for a unit this one
  /// holds (it is noted in gave_way_to_ and gave_way_for_).
  bool must_give_way();
  /// Drops `unit` from the current iteration's list of recorded locks.
  void drop(std::uint32_t unit);
  void release();

  SplitGroups& split_;
  SplitGroups::Lane& lane_;
  OwnershipTable& table_;
  std::size_t next_;  ///< the iteration begin_iteration starts next
  std::size_t k_ = 0;  ///< the current one
  int worker_;
  const std::atomic<bool>& abandoned_;
  std::vector<std::uint32_t> held_;
  std::uint64_t first_ = 0;  ///< the current iteration's first entry in lane_.units
  std::int64_t last_ticket_ = 0;  ///< this worker's (0: none yet)
  int gave_way_to_ = 0;           ///< the worker this one last gave way to,
  std::uint64_t gave_way_for_ = 0;  ///< and its entry in SplitGroups::waiting then
};

}  // namespace strata::loop
