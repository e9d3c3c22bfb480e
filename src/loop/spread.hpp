// Conflict groups spread over every rank.
//
// Across ranks, a conflict-groups plan places its groups on the workers of every rank
// (largest first onto the least loaded, over ranks x threads) instead of running them
// all on rank 0. No Partition follows an arbitrary assignment of iterations, so the
// plan keeps its own copy of the iterations each rank runs (a HostedSpace), and moves
// the data its groups touch itself:
//   * planning: every rank gathers the whole iteration space (indices and elements,
//     in key order), copies every array the loop touches in place whole, records the
//     accesses of every iteration and finds the same groups and placement (the pass
//     and the placement are deterministic); it then keeps only the iterations its own
//     workers run and, per array the loop writes in place, the units (rows or
//     elements) they touched (`needed`) and those no other rank's iterations touched
//     (`exclusive`);
//   * each call: a written array's storage addresses the whole array but holds only
//     the rank's own part and its needed units, fetched from their owners; arrays the
//     loop only reads are copied whole (any copy will do). Each rank's run claims what
//     it touches in its OwnershipTable, as every re-validated run does. Afterwards a
//     rank that touched a unit outside its needed ones, or wrote one outside its
//     exclusive ones, refuses the run (undone and planned again like any refused run):
//     the groups recorded no longer hold. Otherwise each written unit goes back to its
//     owner, and every rank keeps its own part.
// A rank touches only its needed units and writes only units no other rank touches, so
// no unit one rank writes is touched by another; with the claims inside each rank, the
// run equals the serial run of worker 0's iterations, then worker 1's, and so on
// (schedule_rows), bit for bit whatever the timing.
//
// A plan is spread when the body takes its element by value (the work records carry
// copies, so the hosted elements are never written), every array it touches in place
// is dense, it reads no relaxed array, is not ordered and its space has at most 4
// dimensions. A group rank 0's threads would split (split_groups.hpp: above 1.1x a
// thread's share) runs faster split there: such a plan is gathered on rank 0 instead,
// as is one whose ranks placed the iterations differently (a body whose subscripts
// its reconnaissance cannot replay, driver variables that differ between ranks).
//
// Memory during a call: a written array's own part and the pages its needed units lie
// on (untouched pages of the whole-array storage cost nothing); read-only arrays whole.
// Planning still holds the whole space and every array whole.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "loop/plan.hpp"
#include "strata/loop/loop_body.hpp"

namespace strata::loop {

class OwnershipTable;

/// The iterations a rank of a spread plan runs: indices and elements in key order.
struct HostedSpace {
  std::vector<std::int64_t> keys;  ///< dims per iteration
  std::vector<std::byte> values;   ///< elem_size per iteration
  /// Each hosted iteration's place in the whole space (key order): re-hosting after
  /// the space's elements changed keeps the same iterations.
  std::vector<std::int64_t> whole_positions;
  /// Fingerprint of this rank's part of the real space's elements when hosted.
  std::uint64_t source_fingerprint = 0;
  /// Per array the loop writes in place (OwnershipTable order), what its groups touch.
  struct Units {
    std::uint64_t array_id = 0;
    std::size_t unit_elems = 1;            ///< elements a unit: a row's, or 1
    std::vector<std::uint64_t> needed;     ///< touched by this rank's iterations when planned, ascending
    std::vector<std::uint64_t> exclusive;  ///< of those, touched by no other rank's, ascending
  };
  std::vector<Units> units;
  /// The view the engine runs on: the real space's array and shape, these iterations.
  detail::SpaceView view(const detail::SpaceView& real) const;
};

namespace detail {

/// Whether a groups plan can be spread over the ranks (see above).
bool can_spread(const Plan& plan, const SpaceView& space, const LoopBody& body);

/// Collective. Hosts the whole space on every rank, records every iteration's
/// accesses with the arrays copied whole, and places the groups on every rank's
/// workers (plan.groups, plan.imbalance). Sets plan.hosted to this rank's iterations
/// and returns each one's thread; nothing when the plan is better gathered (above).
std::optional<std::vector<std::int32_t>> spread_groups(Plan& plan, const SpaceView& space, const LoopBody& body,
                                                       const std::vector<std::uint64_t>& row_keyed);

/// Collective: where the real space's elements changed on any rank since they were
/// hosted, hosts them again (the same iterations). True when they changed.
bool refresh_hosted(HostedSpace& hosted, const SpaceView& space);

/// The view a run of `plan` iterates: its hosted iterations, or the space as it is.
SpaceView run_view(const Plan& plan, const SpaceView& given);

/// Every array of a plan the loop reads or writes in place on every rank for as long as
/// this lives (collective): whole where `whole` or where the plan keeps no units of it,
/// else the rank's part and its needed units. Each goes back to its own part when it
/// ends (local).
class CallCopies {
 public:
  CallCopies(const Plan& plan, bool whole);
  ~CallCopies();
  CallCopies(const CallCopies&) = delete;
  CallCopies& operator=(const CallCopies&) = delete;
  /// Collective, after a run that claimed its accesses in `table`: "" when every rank
  /// touched only its needed units and wrote only its exclusive ones, and then the
  /// written units have gone back to their owners; else the first rank's refusal, the
  /// same on every rank.
  std::string merge(Runtime& rt, const OwnershipTable& table);

 private:
  const Plan& plan_;
  std::vector<strata::detail::ArrayBase*> arrays_;
};

}  // namespace detail
}  // namespace strata::loop
