// Plan cache keys and validity: which loop call a cached plan belongs to, whether it
// still fits the loop's arrays, and how large a reconnaissance sample to take.
#include <algorithm>
#include <climits>
#include <cstdint>

#include <fmt/format.h>

#include "loop/loop_internal.hpp"
#include "strata/error.hpp"

namespace strata::loop::detail {

std::string loop_key(const std::source_location& where, std::uint64_t space_id, const LoopBody& body,
                     const LoopOptions& o) {
  // The body's type counts too: a helper that calls parallel_for from one line with
  // several bodies (a lambda each) must not run one body by another's plan. Its
  // `visit` is instantiated once per body type.
  return fmt::format("{}:{}:{}#{}#{}#{}#{}#{}#{}#{}#{}#{}#{}", where.file_name(), where.line(), where.column(),
                     space_id, reinterpret_cast<std::uintptr_t>(body.visit), o.ordered,
                     o.strategy ? analysis::to_string(*o.strategy) : "auto", o.blocks_per_worker, o.rounds,
                     o.slices_per_worker, o.skip_legality_check, o.shuffle_seed, o.key_order);
}

std::string why_plan_is_stale(const Plan& plan, Runtime& rt, std::uint64_t space_version) {
  if (plan.ranks != rt.size() || plan.threads != rt.threads())
    return fmt::format("it was built for {} rank(s) x {} thread(s)", plan.ranks, plan.threads);
  if (plan.space_version != space_version) return "the iteration space changed its keys or partition";
  for (const auto& a : plan.arrays) {
    auto* array = strata::detail::ArrayBase::find_array(a.id);
    if (!array) return fmt::format("array #{} it uses no longer exists", a.id);
    if (array->shape_vector() != a.shape) return fmt::format("array {} changed its shape", array->name());
    if (array->structure_version() != a.version)
      return fmt::format("array {} changed its partition or was assigned", array->name());
  }
  return {};
}

void remember_versions(Plan& plan) {
  plan.arrays.clear();
  for (const auto& r : plan.roles)
    if (auto* a = strata::detail::ArrayBase::find_array(r.array_id))
      plan.arrays.push_back({r.array_id, a->shape_vector(), a->structure_version()});
}

int recon_stride_for(std::int64_t iterations, const LoopOptions& options) {
  if (options.recon_stride < 0)
    throw OptionError(fmt::format("LoopOptions::recon_stride must be 0 (automatic) or positive, not {}",
                                  options.recon_stride));
  if (options.recon_stride > 0) return options.recon_stride;
  // A sample of 1 in 16 still has 1,024 iterations at the threshold, in 128 runs
  // spread over the space (reconnoitre.cpp): enough to meet every access site a body
  // has in practice; the first run checks the rest. Below it a full pass is cheap.
  // Above 2^22 iterations the sample stays near 2^18 iterations (64 or more runs):
  // what it must find (the access sites and the form of each subscript) does not
  // grow with the loop, and its cost is part of the first call's (docs/loops.md).
  constexpr std::int64_t kSampleFrom = std::int64_t{1} << 14, kSampleAtMost = std::int64_t{1} << 18;
  if (iterations < kSampleFrom) return 1;
  const std::int64_t stride = std::max<std::int64_t>(16, (iterations + kSampleAtMost - 1) / kSampleAtMost);
  return static_cast<int>(std::min<std::int64_t>(stride, INT_MAX));
}

std::uint64_t next_plan_serial() {
  static std::uint64_t built = 0;
  return ++built;
}

}  // namespace strata::loop::detail
