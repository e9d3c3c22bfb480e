// Skewed 2-D wavefronts on every rank.
//
// A skewed plan's tiles are parallelograms of the iteration space: no array dimension
// follows them. The ranks take ranges of the space dimension; an array whose rows
// follow it (banded) is cut the same way, each rank fetching for a call the rows
// beyond its band that its iterations read, and every other array is copied whole to
// every rank for the call. The writes travel with the wavefront. The rule that makes
// this correct: every
// dependence of a legal skewed tiling goes from a tile to one that is no smaller in
// both tile coordinates (worker, block), so data only ever flows from a worker to the
// same or later workers, and from a block to the same or later blocks. Hence
//  * rank r needs, before its first worker runs block b, the writes that the workers
//    of ranks below r made in blocks up to b, and nothing from the ranks above it;
//  * after its last worker has run block b, rank r sends the next rank the writes of
//    block b that a later rank holds: those it received for b (forwarded) and its own,
//    in tile order, so that a later write of an element overrides an earlier one;
//  * a banded array is written only at the iteration's own row, so each rank's band
//    ends the call as the serial loop leaves it; an array copied whole has all its
//    writes passed on, so the last rank ends with the serial result, and the array is
//    returned from it to its owners.
// The rows of a band that a later rank reads are passed on whole after each tile of
// the rank's last thread, where that thread alone writes them; otherwise a thread logs
// the elements it writes (strata::detail::t_claims, or around the run's observer in
// checked and verifying runs) and packs their values right after its tile, before the
// next worker can start it: nothing else writes them in between.
//
// A write the plan never saw (to an array it saw only read, or to a row outside the
// rank's band) is refused on the ranks that log writes and lost on the others: such
// a site makes the plan itself wrong, which checked mode, the first run of a sampled
// plan and the probe of a cached one are there to find.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "loop/plan.hpp"
#include "strata/detail/array_base.hpp"
#include "strata/runtime.hpp"

namespace strata::loop::detail {

/// Whether a skewed plan can run on every rank: its space parts are ranges of the
/// space dimension (skew [[1, 0], [f, 1]]), and every array it touches in place is a
/// dense array other than the iteration space, not relaxed. Otherwise it is gathered
/// on rank 0 (layout.cpp).
bool wavefront_fits_ranks(const Plan& plan, const strata::detail::ArrayBase& space);

/// Places the arrays of a wavefront across ranks (the iteration space is already cut
/// by `rank_bounds` along the space dimension): an array whose rows follow the space
/// dimension at every site, written only at the iteration's own row, is banded (cut
/// by the same bounds; ArrayRole::banded and its halos); every other one is copied
/// whole to every rank for each call. Sets the plan's bytes_per_pass.
void lay_out_wavefront(Plan& plan, const std::vector<std::int64_t>& rank_bounds);

/// The writes of one rank's threads during a wavefront run across ranks, per (thread,
/// block), and the messages that pass them on.
class WriteTrail {
 public:
  /// An array the loop writes in place, whose storage addresses the whole array for
  /// the run; only writes to rows (dimension 0) from `log_from_row` on are passed on
  /// (those some later rank holds). With `copy_to_row` (a banded array whose rows
  /// [log_from_row, copy_to_row) only this rank's last thread writes), nothing is
  /// logged: after each of that thread's tiles those rows are passed on whole, which
  /// spares every access of the run a claim.
  struct Written {
    strata::detail::ArrayBase* array;
    std::int64_t log_from_row = 0;
    std::int64_t copy_to_row = -1;
    /// The end of the rows this rank may write (a banded array's band; -1: all).
    std::int64_t log_to_row = -1;
  };
  /// Without `logs` (the last rank, which passes nothing on) the trail only applies
  /// what it receives. With it, the arrays the loop touches (`written` and
  /// `read_only`) let their accessors pass reads and unlogged writes in place
  /// (strata::detail::ClaimView) until the trail is destroyed.
  WriteTrail(const std::vector<Written>& written,
             const std::vector<strata::detail::ArrayBase*>& read_only, int threads, int blocks,
             bool logs);
  ~WriteTrail();
  WriteTrail(const WriteTrail&) = delete;
  WriteTrail& operator=(const WriteTrail&) = delete;

  struct Log;
  /// Thread `th` runs tile (th, block) while a scope lives: its writes are logged,
  /// through the run's `observer` when it has one (checked, verifying), else as the
  /// thread's claims. Without a trail the scope does nothing.
  class Scope {
   public:
    Scope(WriteTrail* trail, int th, int block, strata::detail::AccessObserver* observer);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    /// The observer the run is to install: the log around the run's own, else the
    /// run's own (null when it has none).
    strata::detail::AccessObserver* observer() const;

   private:
    Log* log_ = nullptr;
    strata::detail::AccessObserver* observer_;
    strata::detail::AccessClaims* claims_before_ = nullptr;
  };
  /// After tile (th, block): the values of the elements it wrote, packed.
  void pack(int th, int block);
  /// The message for the next rank after this rank's last thread has packed `block`:
  /// what came from the rank below for it, then each thread's tile in order.
  std::vector<std::byte> message(int block);
  /// Writes a message from the rank below into the arrays and keeps it to forward.
  void apply(int block, std::vector<std::byte> message);
  /// The first write this rank's threads made to an array the plan saw only read
  /// (not logged, so not passed on), or "".
  std::string refusal() const;

  struct Slot;

 private:
  std::vector<std::unique_ptr<Slot>> slots_;
  bool logging_ = false;  // some written array is logged (not copied by rows)
  std::vector<strata::detail::ClaimView> views_;
  std::vector<strata::detail::ArrayBase*> viewed_;
  std::vector<std::unique_ptr<Log>> logs_;  // per thread
  int threads_;
  std::vector<std::vector<std::vector<std::byte>>> packed_;  // [thread][block]
  std::vector<std::vector<std::byte>> received_;             // [block]
};

/// The arrays of a wavefront run on this rank, from the start of the run to its end:
/// banded ones hold their part and halo rows, the others the whole array.
class WavefrontArrays {
 public:
  /// Collective: fetches the halo rows and the whole copies.
  WavefrontArrays(const Plan& plan, Runtime& rt);
  /// Where finish() was not reached (the run threw): each rank keeps its part as it is.
  ~WavefrontArrays();
  WavefrontArrays(const WavefrontArrays&) = delete;
  WavefrontArrays& operator=(const WavefrontArrays&) = delete;
  const std::vector<WriteTrail::Written>& written() const { return written_; }
  const std::vector<strata::detail::ArrayBase*>& read_only() const { return read_only_; }
  /// Collective: written arrays copied whole come back from the last rank (which ends
  /// with the loop's result); the rest keep their parts and drop the copies.
  void finish();

 private:
  Runtime& rt_;
  std::vector<strata::detail::ArrayBase*> arrays_;
  std::vector<bool> returned_;  // per array: whole and written
  std::vector<WriteTrail::Written> written_;
  std::vector<strata::detail::ArrayBase*> read_only_;
  bool finished_ = false;
};

/// Runs a wavefront schedule on every rank: thread t of rank r is worker r T + t and
/// calls run_block(t, step, block) for each of its blocks; between ranks, `trail`'s
/// messages carry the writes (above). Returns the seconds this rank's threads waited.
/// A tile that throws stops this rank's threads from running more tiles, but they go
/// on passing blocks, so that no rank waits for them; `failure` gets the exception
/// (the first thread's that threw), for the caller to make collective.
double run_wavefront_across_ranks(
    Runtime& rt, const BlockSchedule& s, WriteTrail& trail,
    const std::function<void(int thread, int step, int block)>& run_block,
    std::exception_ptr& failure);

}  // namespace strata::loop::detail
