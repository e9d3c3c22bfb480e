// The type-erased face of a relaxed array's table, as loop machinery sees it:
// the recorder asks it how to name the cache units an access touches, the executor
// drives its runs and clocks, and the read observer routes reads through it.
#pragma once

#include <bit>
#include <cstdint>
#include <span>
#include <vector>

#include "strata/comm.hpp"
#include "strata/detail/array_base.hpp"
#include "strata/relaxed.hpp"

namespace strata::detail {

/// A read set of more than a quarter of an array's units is wide: it is cached laid
/// out like the array, and where every rank's is, a Hybrid table of elements that
/// subtract holds the array whole on every rank (src/ps/table_replica.cpp).
inline bool wide_read_set(std::int64_t read_units, std::int64_t units) { return read_units * 4 > units; }
/// The units a read set's bits name.
inline std::int64_t units_in(std::span<const std::uint64_t> bits) {
  std::int64_t n = 0;
  for (const auto w : bits) n += std::popcount(w);
  return n;
}

class RelaxedBase {
 public:
  virtual ~RelaxedBase() = default;
  virtual std::uint64_t array_id() const = 0;
  virtual const Consistency& consistency() const = 0;
  /// Cache units: elements of a 1-D array, rows (along the last dimension) otherwise.
  virtual std::int64_t unit_count() const = 0;
  virtual std::int64_t unit_of(std::span<const std::int64_t> index) const = 0;
  /// Whether a run in which every rank's read set is wide (wide_read_set) holds the
  /// array whole on every rank: then a read set sampled wide is as good as a whole one.
  virtual bool replicates_wide_read_sets() const = 0;

  /// Collective: starts a loop call of `clocks` clocks on every rank; `read_units`
  /// is this rank's read set, one bit per unit.
  virtual void begin_run(std::span<const std::uint64_t> read_units, std::int64_t clocks) = 0;
  /// Ends clock `clock` of this rank: called once per clock while every thread of
  /// the rank is stopped. Sends the clock's deltas and, before the next clock
  /// begins, waits until the cache is as fresh as the staleness bound demands.
  virtual void tick(std::int64_t clock) = 0;
  /// Whether the rank's threads can share tick's work: prepare_tick(clock, P) on one
  /// thread, then tick_part(clock, p, P) on every thread at once (p = 0..P-1), then
  /// tick(clock) as usual, all while the loop's iterations are stopped.
  virtual bool splits_tick() const = 0;
  virtual void prepare_tick(std::int64_t clock, int parts) = 0;
  virtual void tick_part(std::int64_t clock, int part, int parts) = 0;
  /// Collective: waits until every delta of the call has been applied at its owner.
  virtual void end_run() = 0;
  /// Per clock of the last run, the clock of the array the rank's cache held during
  /// it (-1: the array as the run began). Under SSP it depends on timing, so an
  /// execution record keeps it (recovery/execution_record.hpp).
  virtual std::span<const std::int64_t> cache_versions() const = 0;
  /// A replay: the next runs take exactly these versions, one per clock (empty: as
  /// fresh as the updates that have arrived).
  virtual void follow_versions(std::vector<std::int64_t> versions) = 0;
  /// Managed communication: at the end of each iteration, loop thread `thread` offers
  /// its pending deltas (taken only when the communication thread asked for them).
  virtual bool managed() const = 0;
  virtual void offer(int thread) = 0;
  /// A read by loop thread `thread` during a run: the cached (or fetched) element or
  /// row. Writes other than through the Buffer are refused.
  virtual void* read(std::span<const std::int64_t> index, bool whole_last, AccessMode mode, int thread) = 0;
  /// During a run: the array's accessors read the cache directly
  /// (detail/cache_view.hpp), bypassing read() for cached units, and count those
  /// reads in slot `counter` of t_cache_reads; -1: they do not (each access must be
  /// shown to a checker, or the run has ended).
  virtual void share_cache(int counter) = 0;
  /// Loop thread `thread` read the cache directly `reads` times (its slot's count).
  virtual void count_cache_reads(int thread, std::int64_t reads) = 0;
  /// An execution record of a run whose values depend on timing (managed
  /// communication, Hybrid): set before begin_run, the next run logs every value its
  /// loop threads read (its cache is then never shared) and, with managed
  /// communication, every delta this rank's owner applies (ps/timing_log.hpp).
  virtual void log_timing(bool on) = 0;
  /// After end_run: the log of the run, in the timing file's layout; empties it.
  virtual Bytes take_timing_log() = 0;
};

}  // namespace strata::detail
