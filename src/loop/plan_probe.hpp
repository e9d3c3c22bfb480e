// Whether a cached plan fits a new call of its loop.
//
// A plan is cached by call site, iteration space, body type and options. That does not
// name everything its analysis rests on: a helper whose lambda captures its array
// parameters, or an offset, calls parallel_for from one line with one closure type
// but other arrays or other subscripts each time, and a plan for one call would run
// another unchecked (a 1-D plan for a shifted write: a silent race; arrays the plan
// never placed: "index belongs to rank 1"). So before a cached plan runs again, a few
// of the call's iterations are visited, as reconnaissance visits them (nothing is
// written), and every access is checked against the plan's sites and fitted
// subscripts. A probe catches what changes every iteration's accesses (another array,
// another offset or constant) for sure; a data-dependent subscript that now differs
// in a few iterations only is found by chance (checked mode checks every access).
#pragma once

#include <cstdint>
#include <string>

#include "loop/loop_internal.hpp"

namespace strata::loop::detail {

/// Iterations of this rank a probe visits (fewer when it holds fewer).
inline constexpr std::int64_t kProbedIterations = 8;

/// What a probe found, the same on every rank.
struct ProbeOutcome {
  /// Why an access of the lowest rank that met one does not fit the plan; empty when
  /// every access of every rank fits.
  std::string why;
  /// That access came from a site the plan never saw (a plan from a sample may have
  /// missed a site few iterations reach: planning again should take every iteration).
  bool unseen_site = false;
};

/// Collective: visits up to kProbedIterations of each rank's iterations of `space`,
/// spread over them and chosen anew by `call`, and checks their accesses against
/// `plan`. A body that throws counts as not fitting (planning again meets the error,
/// collectively).
ProbeOutcome probe_plan(const SpaceView& space, const LoopBody& body, const Plan& plan, std::uint64_t call);

}  // namespace strata::loop::detail
