// Conflict groups spread over every rank.
//
// Across ranks, a conflict-groups plan places its groups on the workers of every rank
// (largest first onto the least loaded, over ranks x threads) instead of running them
// all on rank 0. No Partition follows an arbitrary assignment of iterations, so the
// plan keeps its own copy of the iterations each rank runs (a HostedSpace), and moves
// the data its groups touch itself:
//   * planning: every rank copies every array the loop touches in place whole (a
//     subscript may read any of them), records the accesses of the iterations it holds,
//     and the ranks find the groups together (groups_across_ranks.hpp: no rank holds
//     another's iterations or accesses) and place them alike. Each iteration then goes
//     to the rank whose worker runs it (kept in key order there), and each rank learns,
//     per array the loop reads or writes in place, the units (rows or elements) the
//     iterations it now hosts touched (`needed`) from the ranks that recorded them;
//     every other unit outside its own part is *absent* on this rank
//     (OwnershipTable::make_absent);
//   * each call: such an array's storage addresses the whole array but holds only the
//     rank's own part and its needed units, fetched from their owners, which note whom
//     they lent each unit of a written array. Each rank's run claims what it touches in
//     its OwnershipTable, as every re-validated run does (arrays the loop only reads are
//     tracked read-only, by row: their reads never conflict, but absent rows are
//     refused; rows under 64 bytes, and 1-D arrays, are copied whole), and an access
//     to an absent unit is refused before it reads. Afterwards the fetched units of a
//     read-only array are dropped, the units each rank wrote go back to their owners, and an
//     owner refuses the run when a unit one rank wrote was touched by another: its own
//     write of a unit it lent, or a returned unit it touched itself or lent to another
//     rank. A refused run is undone and planned again like any refused run.
// Every rank that touches a unit is its owner or a rank the owner lent it to, so the
// owners see every unit one rank wrote and another touched, whatever each rank's
// planning pass concluded; with the claims inside each rank, an unrefused run equals
// the serial run of worker 0's iterations, then worker 1's, and so on (schedule_rows),
// bit for bit whatever the timing.
//
// A plan is spread when the body takes its element by value (the work records carry
// copies, so the hosted elements are never written), every array it touches in place
// is dense, it reads no relaxed array, is not ordered and its space has at most 4
// dimensions. A group rank 0's threads would split (split_groups.hpp: above 1.1x a
// thread's share) runs faster split there: such a plan is gathered on rank 0 instead.
// Each iteration is recorded once, by the rank holding it, so the ranks cannot place
// iterations differently; a driver variable that differs between ranks makes a moved
// iteration touch other units than recorded, which its run refuses (above).
//
// Memory during a call, per array read or written in place: its own part, the pages
// its needed units lie on (untouched pages of the whole-array storage cost nothing;
// element types whose value-initialisation writes memory touch them all) and a round
// of messages. Planning holds the rank's own iterations and their accesses, and every
// array whole.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "loop/plan.hpp"
#include "strata/detail/array_movement.hpp"
#include "strata/loop/loop_body.hpp"

namespace strata::loop {

class OwnershipTable;

/// The iterations a rank of a spread plan runs: indices and elements in key order.
struct HostedSpace {
  std::vector<std::int64_t> keys;  ///< dims per iteration
  std::vector<std::byte> values;   ///< elem_size per iteration
  /// Per iteration of this rank's part of the real space, the rank hosting it; and per
  /// hosted iteration, its place in the order the iterations arrived (from rank 0's
  /// part up, each part in its order). Hosting again after the space's elements changed
  /// sends them the same way (refresh_hosted).
  std::vector<std::int32_t> host_of;
  std::vector<std::int64_t> arrival;
  /// Fingerprint of this rank's part of the real space's elements when hosted.
  std::uint64_t source_fingerprint = 0;
  /// Per array the loop reads or writes in place (OwnershipTable order), what its groups touch.
  struct Units {
    std::uint64_t array_id = 0;
    std::size_t unit_elems = 1;            ///< elements a unit: a row's, or 1
    std::vector<std::uint64_t> needed;  ///< touched by this rank's iterations when planned, ascending
  };
  std::vector<Units> units;
  /// The view the engine runs on: the real space's array and shape, these iterations.
  detail::SpaceView view(const detail::SpaceView& real) const;
};

namespace detail {

/// Whether a groups plan can be spread over the ranks (see above).
bool can_spread(const Plan& plan, const SpaceView& space, const LoopBody& body);

/// Collective. Records the accesses of this rank's iterations with the arrays copied
/// whole, finds the groups with the other ranks and places them on every rank's
/// workers (plan.groups, plan.imbalance). Sets plan.hosted to the iterations this
/// rank's workers run and returns each one's thread; nothing when the plan is better
/// gathered (above). `expected_accesses`: as record_accesses takes it.
std::optional<std::vector<std::int32_t>> spread_groups(Plan& plan, const SpaceView& space, const LoopBody& body,
                                                       const std::vector<std::uint64_t>& row_keyed,
                                                       std::int64_t expected_accesses);

/// Collective: where the real space's elements changed on any rank since they were
/// hosted, hosts them again (the same iterations). True when they changed.
bool refresh_hosted(HostedSpace& hosted, const SpaceView& space);

/// The view a run of `plan` iterates: its hosted iterations, or the space as it is.
SpaceView run_view(const Plan& plan, const SpaceView& given);

/// Marks in `table` the units of each array read or written in place that this rank
/// neither holds in its part nor fetches for a call (HostedSpace::Units::needed): every
/// run refuses an access to them before it reads (OwnershipTable::make_absent); and the
/// units it fetches that hold none of its part, as borrowed (their writes need no undo
/// here).
void make_absent_units(const Plan& plan, OwnershipTable& table, int rank);

/// Every array of a plan the loop reads or writes in place on every rank for as long as
/// this lives (collective): whole where `whole` or where the plan keeps no units of it,
/// else the rank's part and its needed units. Each goes back to its own part when it
/// ends (local); the merge first returns the written ones' units.
class CallCopies {
 public:
  CallCopies(const Plan& plan, bool whole);
  ~CallCopies();
  CallCopies(const CallCopies&) = delete;
  CallCopies& operator=(const CallCopies&) = delete;
  /// Collective, after a run that claimed its accesses in `table`: each rank announces
  /// the units it wrote to their owners, which look for a unit one rank wrote and
  /// another touched (see spread.cpp); then, unless one did, the units go back to
  /// their owners. Returns "" or the first such conflict, the same on every rank; a
  /// refused run leaves every rank's part as its own run left it, for the caller to
  /// undo.
  std::string merge(Runtime& rt, const OwnershipTable& table);

 private:
  const Plan& plan_;
  std::vector<strata::detail::ArrayBase*> arrays_;
  /// Per array in arrays_: the units of this rank's part other ranks fetched, by unit
  /// (empty for an array the loop only reads: the merge has nothing to check there).
  std::vector<std::vector<strata::detail::LentUnit>> lent_;
};

}  // namespace detail
}  // namespace strata::loop
