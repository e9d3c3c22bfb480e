// Conflict groups spread over every rank.
//
// Across ranks, a conflict-groups plan places its groups on the workers of every rank
// (largest first onto the least loaded, over ranks x threads) instead of running them
// all on rank 0. No Partition follows an arbitrary assignment of iterations, so the
// plan keeps its own copy of the iterations each rank runs (a HostedSpace), and the
// arrays travel whole for the call:
//   * planning: every rank gathers the whole iteration space (indices and elements,
//     in key order), copies every array the loop touches in place whole, records the
//     accesses of every iteration and finds the same groups and placement (the pass
//     and the placement are deterministic); it then keeps only the iterations its own
//     workers run;
//   * each call: the arrays the loop reads or writes in place are copied whole to every
//     rank; each rank's run claims what it touches in its OwnershipTable, as every
//     re-validated run does; then the ranks exchange the units (rows or elements) they
//     wrote. A unit one rank wrote and another touched is a conflict between ranks: the
//     run is refused, undone and planned again like any refused run. Otherwise every
//     rank applies the units the others wrote and keeps its own part of each array.
// Different workers' iterations touch no common unit that one of them writes, so the
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
// Memory: every rank holds every touched array whole during a call (the price of
// moving data by group without a partition that follows the groups).
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

/// Every array of a plan the loop reads or writes in place, copied whole to every
/// rank (collective) for as long as this lives; each goes back to its own part when
/// it ends (local).
class WholeCopies {
 public:
  explicit WholeCopies(const Plan& plan);
  ~WholeCopies();
  WholeCopies(const WholeCopies&) = delete;
  WholeCopies& operator=(const WholeCopies&) = delete;
  /// Collective, after a run that claimed its accesses in `table`: the ranks exchange
  /// the units they wrote; each applies the others'. Returns "" or the first conflict
  /// between ranks (a unit one rank wrote that another touched), the same on every rank.
  std::string merge(Runtime& rt, const OwnershipTable& table);

 private:
  std::vector<strata::detail::ArrayBase*> arrays_;
};

}  // namespace detail
}  // namespace strata::loop
