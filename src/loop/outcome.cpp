// What a loop call touched and left: the arrays it changed, its relaxed arrays and
// read sets, the first failure of any thread on any rank, and the placeholder plans
// of calls that a resumed run skipped or a single-process replay ran.
#include <algorithm>
#include <map>
#include <memory>
#include <span>

#include "loop/buffer_base.hpp"
#include "loop/loop_internal.hpp"
#include "loop/relaxed_base.hpp"

namespace strata::loop::detail {

std::vector<std::uint64_t> changed_arrays(const Plan& plan, std::uint64_t space_id, bool space_written) {
  std::vector<std::uint64_t> ids;
  for (const auto& r : plan.roles)
    if (r.written) ids.push_back(r.array_id);
  for (const auto& s : plan.sites)
    if (s.mode == strata::detail::AccessMode::buffered) ids.push_back(s.array_id);
  if (space_written) ids.push_back(space_id);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

namespace {
// A plan with nothing but its site and a flag, one per site and flag for the run.
std::shared_ptr<const Plan> placeholder_plan(const std::source_location& where, bool replayed) {
  static std::map<std::pair<std::string, bool>, std::shared_ptr<Plan>> plans;
  const std::string site = strata::detail::site_label(where);
  auto& p = plans[{site, replayed}];
  if (!p) {
    p = std::make_shared<Plan>();
    p->loop_site = site;
    p->skipped = !replayed;
    p->replayed = replayed;
  }
  return p;
}
}  // namespace

std::shared_ptr<const Plan> skipped_plan(const std::source_location& where) { return placeholder_plan(where, false); }
std::shared_ptr<const Plan> replayed_plan(const std::source_location& where) { return placeholder_plan(where, true); }

void merge_read_sets(std::vector<ReadSet>& into, const std::vector<ReadSet>& from) {
  for (const auto& r : from) {
    auto it = std::find_if(into.begin(), into.end(), [&](const ReadSet& x) { return x.array_id == r.array_id; });
    if (it == into.end()) {
      into.push_back(r);
      continue;
    }
    for (std::size_t w = 0; w < r.bits.size(); ++w) it->bits[w] |= r.bits[w];
  }
}

std::vector<std::uint64_t> relaxed_arrays(const Plan& plan) {
  std::vector<std::uint64_t> ids;
  for (const auto& r : plan.roles)
    if (r.placement == Placement::cached) ids.push_back(r.array_id);
  return ids;
}

bool reads_relaxed_arrays(const Plan& plan) {
  return std::any_of(plan.roles.begin(), plan.roles.end(),
                     [](const ArrayRole& r) { return r.placement == Placement::cached && r.read; });
}

bool relaxed_reads_replicated(Runtime& rt, const Plan& plan) {
  bool all = true;
  for (const auto& role : plan.roles) {
    if (role.placement != Placement::cached || !role.read) continue;
    const auto* table = strata::detail::BufferBase::relaxed_table(role.array_id);
    const auto set = std::find_if(plan.read_sets.begin(), plan.read_sets.end(),
                                  [&](const ReadSet& r) { return r.array_id == role.array_id; });
    if (!table || !table->replicates_wide_read_sets() || set == plan.read_sets.end()) {
      all = false;
      continue;
    }
    all = all && strata::detail::wide_read_set(strata::detail::units_in(set->bits), table->unit_count());
  }
  return rt.comm().allreduce(static_cast<std::int32_t>(all), ReduceOp::min) == 1;
}

std::string first_failure(Runtime& rt, const std::vector<std::string>& per_thread) {
  std::string mine;
  for (const auto& f : per_thread)
    if (!f.empty()) {
      mine = f;
      break;
    }
  if (rt.comm().allreduce<std::int64_t>(mine.empty() ? 0 : 1, ReduceOp::max) == 0) return {};
  for (const auto& part : rt.comm().allgatherv(std::as_bytes(std::span(mine))))
    if (!part.empty()) return {reinterpret_cast<const char*>(part.data()), part.size()};
  return {};
}

}  // namespace strata::loop::detail
