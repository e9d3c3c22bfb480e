// Relaxed consistency for arrays written through a Buffer (DESIGN.md §5).
//
// A Buffer given a Consistency turns its array into a parameter-server table:
//
//   strata::Buffer wbuf(w, strata::apply::adagrad(0.1), strata::ssp(2).every(1000));
//
// - Owners: each element's owning rank (the array's partition, range or hash) keeps
//   the master value and the apply function's state, and folds deltas in.
// - Caches: during a loop every rank reads the array from a cache holding exactly
//   the elements (rows, for 2-D and larger arrays) its iterations read in the
//   reconnaissance pass, laid out as one contiguous block per owner. A read is an
//   index lookup, never a hash lookup. A read outside that set still works: it asks
//   the owner (slow, and counted as a dynamic read), which answers once it holds
//   every update the reader's clock is owed, and the element joins the rank's read
//   set from the next loop call on.
// - Clocks: each worker clocks after every `clock_every` of its iterations (0: once
//   per loop call). At a clock a rank sends its deltas to the owners; an owner that
//   has every rank's deltas of clock c applies them, in rank order, and sends each
//   reader its block (one bulk message per owner and reader).
// - Staleness s: a worker at clock t sees every update of clock t-s-1 and earlier
//   from every worker, and blocks until it can. s = 0 is bulk-synchronous. The
//   bound is an upper one: at each clock a rank's cache takes the newest clock of
//   the array that every owner it reads from has sent, so it always holds one
//   consistent clock, and reads outside the cache are answered as of that same
//   clock. Which clock that is depends on timing, and an execution record keeps it
//   (the engine's src/recovery/execution_record.hpp). A one-rank job applies each clock
//   before the next begins (no messages, the threads share the work), so there SSP
//   computes what BSP does.
//
// - Hybrid (strata::hybrid()): lock-free within a rank, synchronous across ranks.
//   A delta written through the Buffer is also added at once to the rank's cached
//   copy (atomically for a number, with plain adds for a row), so the rank's other
//   threads read it in the same clock (as in Hogwild); other ranks see it after the
//   clock, as under BSP. On one rank the copy is the array, so two threads adding to
//   one row at once may lose an add for good, as Hogwild's do. The cached copy sums
//   deltas, so Hybrid needs apply::sum().
// - Read-my-writes (.read_my_writes(), Bösen's): like Hybrid's folding, a worker's adds
//   reach the rank's cache at once, so a coarse clock does not take a thousand steps
//   from one stale value. Any staleness: when the cache takes an older clock of the
//   owners' values, the rank folds its own later deltas back in. The rank's other
//   threads read them too (one cache per rank). Needs apply::sum().
// - A replica per thread (.replica_per_thread(), with Hybrid or read-my-writes at
//   staleness 0): every worker thread keeps its own copy of the whole array, reads it
//   and adds into it without sharing a cache line with the other threads, and at each
//   clock the copies' changes are summed in thread order (and across ranks, rank order)
//   into one new value that every copy takes. A worker sees its own adds at once and
//   the other workers' at the clock, as BSP with read-my-writes per worker; no add is
//   lost, and a run is the same bits every time for a given ranks x threads. Costs the
//   array once more per thread; elements must subtract (strata::subtractable_v).
// - Managed communication (optional): between clocks, the rank's communication
//   thread sends pending deltas to their owners early, most important first, within
//   a bandwidth budget (bytes per second, a leaky bucket). Owners fold early deltas
//   in as they arrive, so the blocks readers get at the next clocks are fresher than
//   the staleness bound alone would make them. The end-of-clock flush still sends
//   whatever is left. Deltas become eligible at the end of the iteration that made
//   them; deltas for elements this rank owns cost no bandwidth and always go early.
//
// The end of a loop call is always complete: when parallel_for returns, every delta
// of the call has been applied, so driver code and checkpoints see a consistent array.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strata/detail/worker.hpp"

namespace strata {

/// Which pending deltas managed communication sends first.
enum class Priority {
  relative_magnitude,  ///< largest |delta / value| first (value: this rank's cached copy; 1 when not cached)
  absolute_magnitude,  ///< largest |delta| first
  random,              ///< a random order
  round_robin,         ///< element order, resuming after the last element sent
};

struct ManagedConsistency;

/// How a relaxed array's readers may lag its writers.
struct Consistency {
  int staleness = 0;              ///< s: clocks a reader may lag (0: bulk-synchronous)
  std::int64_t clock_every = 0;   ///< iterations of a worker per clock; 0: one clock per loop call
  bool prefetch = true;           ///< false: no caches, every read asks the owner (for comparison)
  bool hybrid = false;            ///< deltas reach the rank's cache at once (see above); staleness 0
  /// Read-my-writes (Bösen's): a worker's adds also reach its rank's cache at once, so it
  /// reads them before the clock (see above); needs apply::sum().
  bool own_writes = false;
  /// Every worker thread keeps a replica of its own (see above); Hybrid or read-my-writes.
  bool thread_replicas = false;
  double budget = 0;              ///< managed communication: bytes per second to other ranks; 0: off
  Priority priority = Priority::relative_magnitude;

  Consistency& every(std::int64_t iterations) {
    clock_every = iterations;
    return *this;
  }
  Consistency& without_prefetch() {
    prefetch = false;
    return *this;
  }
  /// Managed communication within `bytes_per_second`, most important deltas first.
  /// Sets it here and returns a copy typed as managed, so that a Buffer over elements
  /// that are not numbers refuses it at compile time.
  ManagedConsistency managed(double bytes_per_second, Priority order = Priority::relative_magnitude);
  /// Read-my-writes: a worker reads its own adds before they reach the owner.
  Consistency& read_my_writes() {
    own_writes = true;
    return *this;
  }
  /// A replica per worker thread: no sharing between a rank's threads until the clock.
  Consistency& replica_per_thread() {
    thread_replicas = true;
    return *this;
  }
  bool is_managed() const { return budget > 0; }
  /// Whether adds reach the rank's cache as they are written (Hybrid, read-my-writes).
  bool folds() const { return hybrid || own_writes; }
};

/// A Consistency with managed communication (Consistency::managed).
struct ManagedConsistency : Consistency {};

inline ManagedConsistency Consistency::managed(double bytes_per_second, Priority order) {
  budget = bytes_per_second;
  priority = order;
  return ManagedConsistency{*this};
}

/// Bulk-synchronous: every reader sees every update of the previous clock.
inline Consistency bsp() { return {}; }
/// Stale-synchronous parallel with staleness s.
inline Consistency ssp(int staleness) { return {staleness, 0, true}; }
/// Lock-free within a rank, bulk-synchronous across ranks.
inline Consistency hybrid() {
  Consistency c;
  c.hybrid = true;
  return c;
}

/// What a relaxed table did, summed over its loop calls on this rank.
struct RelaxedStats {
  std::int64_t clocks = 0;          ///< clocks ticked
  /// Of clocks: ticked with every rank holding the whole array (Hybrid or read-my-writes
  /// at staleness 0 on several ranks, each rank reading most of it: docs/relaxed_rows.md).
  std::int64_t replica_clocks = 0;
  std::int64_t cache_reads = 0;     ///< reads served by the static cache
  std::int64_t dynamic_reads = 0;   ///< reads outside the recorded read set (one request each)
  std::int64_t learned_units = 0;   ///< units added to the read set because they were read dynamically
  std::int64_t bytes_sent = 0;      ///< deltas, blocks and replies sent to other ranks (managed too)
  std::int64_t messages_sent = 0;   ///< messages sent to other ranks (managed too)
  std::int64_t managed_bytes = 0;   ///< of bytes_sent: early deltas sent by managed communication
  std::int64_t managed_messages = 0;
  std::int64_t managed_deltas = 0;  ///< elements' deltas sent early (to other ranks or to this one)
  /// managed_timeline[k]: bytes managed communication sent to other ranks in the
  /// k-th tenth of a second of this table's managed runs (the clock stops between runs).
  std::vector<std::int64_t> managed_timeline;
  double blocked_seconds = 0;       ///< time computation waited for the staleness bound
  /// staleness_histogram[k]: clocks that began with the cache k clocks behind the
  /// freshest possible (k <= s).
  std::vector<std::int64_t> staleness_histogram;

  double cache_hit_rate() const {
    const auto all = cache_reads + dynamic_reads;
    return all > 0 ? static_cast<double>(cache_reads) / static_cast<double>(all) : 1.0;
  }
};

namespace detail {
/// Throws OptionError, naming `array`, for a consistency that cannot be served.
void check_consistency(const Consistency& c, const std::string& array, bool numeric_elements);

/// The clock of the worker running on this thread (0 outside clocked loops).
inline thread_local std::int64_t t_clock = 0;
}  // namespace detail

/// The calling worker's clock inside a loop over relaxed arrays (0 elsewhere).
inline std::int64_t current_clock() { return detail::t_clock; }

}  // namespace strata
