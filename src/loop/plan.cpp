#include "loop/plan.hpp"

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <map>
#include <numeric>

#include <xxhash.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/conflict_groups.hpp"
#include "strata/detail/pack.hpp"
#include "strata/error.hpp"
#include "loop/buffer_base.hpp"
#include "loop/ownership.hpp"
#include "loop/spread.hpp"
#include "loop/worker_splits.hpp"

namespace strata::loop {
namespace {

analysis::AccessKind kind_of(strata::detail::AccessMode m) {
  switch (m) {
    case strata::detail::AccessMode::read: return analysis::AccessKind::read;
    case strata::detail::AccessMode::write: return analysis::AccessKind::write;
    case strata::detail::AccessMode::read_write: return analysis::AccessKind::read_write;
    case strata::detail::AccessMode::buffered: return analysis::AccessKind::write;
  }
  return analysis::AccessKind::read;
}

const char* mode_name(strata::detail::AccessMode m) {
  switch (m) {
    case strata::detail::AccessMode::read: return "read";
    case strata::detail::AccessMode::write: return "write";
    case strata::detail::AccessMode::read_write: return "read+write";
    case strata::detail::AccessMode::buffered: return "buffered write";
  }
  return "?";
}



std::vector<std::string> dim_names(int dims) {
  static const char* kNames[] = {"i", "j", "k", "l"};
  std::vector<std::string> out;
  for (int d = 0; d < dims; ++d) out.emplace_back(kNames[d]);
  return out;
}

}  // namespace

bool checked_by_environment() {
  static const bool on = [] {
    const char* v = std::getenv("STRATA_CHECKED");
    return v && std::string_view(v) != "0" && std::string_view(v) != "";
  }();
  return on;
}

std::uint64_t fingerprint(std::span<const std::byte> bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

PlanCache& PlanCache::instance() {
  static PlanCache cache;
  return cache;
}

std::vector<std::shared_ptr<Plan>> PlanCache::find(const std::string& key) const {
  auto it = plans_.find(key);
  return it == plans_.end() ? std::vector<std::shared_ptr<Plan>>{} : it->second;
}

Plan& PlanCache::store(const std::string& key, std::shared_ptr<Plan> plan, const Plan* replaced) {
  auto& plans = plans_[key];
  Plan& stored = *plan;
  forget(key, replaced);
  plans.insert(plans.begin(), std::move(plan));
  if (plans.size() > kPlansPerKey) plans.resize(kPlansPerKey);
  return stored;
}

void PlanCache::touch(const std::string& key, const Plan* plan) {
  auto at = plans_.find(key);
  if (at == plans_.end()) return;
  auto& plans = at->second;
  auto it = std::find_if(plans.begin(), plans.end(), [&](const auto& p) { return p.get() == plan; });
  if (it != plans.end()) std::rotate(plans.begin(), it, it + 1);
}

void PlanCache::forget(const std::string& key, const Plan* plan) {
  auto at = plans_.find(key);
  if (at == plans_.end()) return;
  std::erase_if(at->second, [&](const auto& p) { return p.get() == plan; });
}

std::vector<SiteSummary> merge_sites(Runtime& rt, const std::vector<SiteRecord>& local) {
  Bytes mine;
  strata::detail::append<std::uint64_t>(mine, local.size());
  for (const auto& s : local) {
    strata::detail::append(mine, s.array_id);
    strata::detail::append_string(mine, s.array_name);
    strata::detail::append_string(mine, s.site);
    strata::detail::append(mine, s.mode);
    strata::detail::append<std::int64_t>(mine, s.count);
    strata::detail::append<std::uint64_t>(mine, s.fitters.size());
    for (const auto& f : s.fitters) strata::detail::append(mine, f.result());
  }
  // Keyed by (array, site, mode); std::map keeps the order the same on every rank.
  std::map<std::tuple<std::uint64_t, std::string, int>, SiteSummary> merged;
  for (const auto& buf : rt.comm().allgatherv(mine)) {
    strata::detail::Reader in(buf);
    const auto n = in.get<std::uint64_t>();
    for (std::uint64_t k = 0; k < n; ++k) {
      SiteSummary s;
      s.array_id = in.get<std::uint64_t>();
      s.array_name = in.get_string();
      s.site = in.get_string();
      s.mode = in.get<strata::detail::AccessMode>();
      s.count = in.get<std::int64_t>();
      s.subs.resize(in.get<std::uint64_t>());
      for (auto& sub : s.subs) sub = in.get<analysis::Subscript>();
      auto key = std::make_tuple(s.array_id, s.site, static_cast<int>(s.mode));
      auto it = merged.find(key);
      if (it == merged.end()) {
        merged.emplace(key, std::move(s));
        continue;
      }
      it->second.count += s.count;
      for (std::size_t d = 0; d < s.subs.size(); ++d) it->second.subs[d] = combine(it->second.subs[d], s.subs[d]);
    }
  }
  std::vector<SiteSummary> out;
  for (auto& [key, s] : merged) out.push_back(std::move(s));
  return out;
}

void analyse(Plan& plan, const std::vector<std::int64_t>& extents, const LoopOptions& options, std::uint64_t space_id,
             std::int64_t space_nnz) {
  using K = analysis::Subscript::Kind;
  const int M = plan.iter_dims;
  plan.refs.clear();
  for (const auto& s : plan.sites) {
    analysis::Reference r;
    r.array = static_cast<int>(s.array_id);
    r.array_name = s.array_name;
    r.site = s.site;
    r.kind = kind_of(s.mode);
    r.buffered = s.mode == strata::detail::AccessMode::buffered;
    r.subs = s.subs;
    plan.refs.push_back(std::move(r));
  }
  plan.vectors = analysis::dependence_vectors(plan.refs, M, options.ordered);
  plan.irregular = analysis::has_irregular(plan.refs, M, options.ordered);

  // Cost of choosing dimension k as the space (or 1-D) dimension: elements of arrays
  // that follow some other iteration dimension, which would have to move.
  std::vector<double> traffic(static_cast<std::size_t>(M), 0.0);
  for (const auto& s : plan.sites) {
    auto* a = strata::detail::ArrayBase::find_array(s.array_id);
    double volume = 1;
    if (a)
      for (auto e : a->shape_vector()) volume *= static_cast<double>(e);
    for (int k = 0; k < M; ++k) {
      bool follows_k = false, follows_other = false;
      for (const auto& sub : s.subs)
        if (sub.kind == K::affine) (sub.iter_dim == k ? follows_k : follows_other) = true;
      if (follows_other && !follows_k) traffic[static_cast<std::size_t>(k)] += volume;
    }
  }
  // The iteration space itself, where a writing loop split it along another
  // dimension: moved here and back again (lda's likelihood over the tokens of a pass
  // split by documents re-split them by words, and both loops planned again, every
  // pass). The same on every layout: the memory of splits does not depend on ranks.
  if (space_id != 0)
    if (const auto dim = detail::remembered_dim(space_id))
      for (int k = 0; k < M; ++k)
        if (k != *dim) traffic[static_cast<std::size_t>(k)] += 2.0 * static_cast<double>(space_nnz);

  analysis::StrategyInput in;
  in.iter_dims = M;
  in.ordered = options.ordered;
  in.irregular = plan.irregular;
  in.vectors = plan.vectors;
  in.extents = extents;
  in.traffic_per_dim = traffic;
  in.dim_names = dim_names(M);
  in.has_buffered_writes = std::any_of(plan.sites.begin(), plan.sites.end(),
                                       [](const SiteSummary& s) { return s.mode == strata::detail::AccessMode::buffered; });
  if (options.strategy && options.skip_legality_check) {
    plan.choice = {};
    plan.choice.strategy = *options.strategy;
    plan.choice.space_dim = 0;
    plan.choice.time_dim = M > 1 ? 1 : -1;
    plan.choice.reasons.push_back("forced without a legality check (testing checked mode)");
  } else {
    in.forced = options.strategy;
    plan.choice = analysis::choose_strategy(in);
  }
  // Across ranks a skewed plan's space parts must be ranges of its space dimension
  // (loop/wavefront_ranks.hpp). A skew of s by t (a = p_s + f p_t, b = p_t) is legal
  // for the same vectors as a skew of the other dimension with the roles swapped
  // (a = p_t, b = f p_t + p_s), whose parts are ranges: take that one.
  auto& c = plan.choice;
  if (plan.ranks > 1 && c.strategy == analysis::Strategy::two_d_skewed && c.skew[0][1] != 0 && c.skew[1][0] == 0 &&
      c.skew[0][0] == 1 && c.skew[1][1] == 1) {
    const auto f = c.skew[0][1];
    const auto names = dim_names(M);
    std::swap(c.space_dim, c.time_dim);
    c.skew = {{{1, 0}, {f, 1}}};
    c.reasons.push_back(fmt::format("across ranks the same skew is taken with space dimension {} and time dimension "
                                    "{}, so that each rank's part is a range of the space dimension",
                                    names[static_cast<std::size_t>(c.space_dim)],
                                    names[static_cast<std::size_t>(c.time_dim)]));
  }

  // Array roles: which arrays follow the space dimension (partitioned with it) and
  // which follow the time dimension (travel with the time blocks).
  plan.roles.clear();
  std::map<std::uint64_t, ArrayRole> roles;
  const int sdim = plan.choice.space_dim, tdim = plan.choice.time_dim;
  const bool two_d = plan.choice.strategy == analysis::Strategy::two_d;
  for (const auto& s : plan.sites) {
    auto& r = roles[s.array_id];
    r.array_id = s.array_id;
    r.name = s.array_name;
    if (s.mode != strata::detail::AccessMode::read && s.mode != strata::detail::AccessMode::buffered) r.written = true;
    if (s.mode != strata::detail::AccessMode::write && s.mode != strata::detail::AccessMode::buffered) r.read = true;
    for (std::size_t d = 0; d < s.subs.size(); ++d) {
      const auto& sub = s.subs[d];
      if (sub.kind != K::affine) continue;
      if (sub.iter_dim == sdim && r.placement != Placement::aligned) {
        r.placement = Placement::aligned;
        r.array_dim = static_cast<int>(d);
      } else if (two_d && sub.iter_dim == tdim && r.placement == Placement::local) {
        r.placement = Placement::travelling;
        r.array_dim = static_cast<int>(d);
      }
    }
  }
  for (auto& [id, r] : roles) {
    if (strata::detail::BufferBase::relaxed_table(id)) {
      if (r.written)
        throw OptionError(fmt::format("loop at {}: relaxed array {} is written in place; a relaxed array is written "
                                      "only through its Buffer",
                                      plan.loop_site, r.name));
      r.placement = Placement::cached;
      r.array_dim = -1;
    }
    plan.roles.push_back(r);
  }
}

namespace {

// How the iterations are spread over the rounds (RoundDealer), for explain.
std::string rounds_note(int rounds, int slices) {
  if (slices == 1) return "each time index's iterations are dealt over the rounds in turn";
  if (slices == rounds) return fmt::format("each worker's space part is cut into {} slices, one per round", slices);
  return fmt::format("each worker's space part is cut into {} slices, round r runs slice r mod {}, and each time "
                     "index's iterations in a slice are dealt over its {} visits in turn",
                     slices, slices, rounds / slices);
}

// What the plan's correctness rests on, for explain.
std::string validity(const Plan& p) {
  using analysis::Strategy;
  std::string out;
  if (p.ownership)
    out += fmt::format("  validity: the conflict groups hold for the elements recorded when the loop was planned; "
                       "every run claims each element of {} it touches, and a run in which the claims of two {} "
                       "conflict is undone and the loop planned again ({} run(s) checked so far)\n",
                       p.ownership->describe(), p.spread ? "workers (threads or ranks)" : "threads",
                       p.revalidated_runs);
  else if (p.irregular && p.choice.strategy == Strategy::groups)
    out += "  validity: one thread runs the groups, so no recorded access is relied on\n";
  else if (p.irregular && p.choice.strategy != Strategy::serial)
    out += "  validity: the irregular subscripts reach only arrays the loop does not write in place\n";
  if (!p.probe_failure.empty())
    out += fmt::format("  planned for this call: the plan cached for its call site did not fit it ({})\n",
                       p.probe_failure);
  if (!p.revalidation_failure.empty())
    out += fmt::format("  planned again: the previous plan's conflict groups no longer held ({})\n",
                       p.revalidation_failure);
  if (!p.serial_reason.empty()) out += fmt::format("  serial: {}\n", p.serial_reason);
  if (p.choice.strategy == Strategy::groups && !p.ordered)
    out += p.key_order ? "  order: each thread visits its iterations in key order (LoopOptions::key_order)\n"
                       : "  order: each thread visits its iterations in a seeded shuffled order, the same on every "
                         "layout (LoopOptions::key_order for key order)\n";
  return out;
}

}  // namespace

std::string Plan::explain() const {
  const auto names = dim_names(iter_dims);
  std::string out = fmt::format("plan for the loop at {} ({}-D iteration space, {})\n", loop_site, iter_dims,
                                ordered ? "ordered" : "unordered");
  out += "  access sites:\n";
  for (const auto& s : sites) {
    std::vector<std::string> subs;
    for (const auto& sub : s.subs) subs.push_back(sub.describe(names));
    out += fmt::format("    {}[{}]  {}  at {}  ({} accesses)\n", s.array_name, fmt::join(subs, ", "), mode_name(s.mode),
                       s.site, s.count);
  }
  out += "  dependence vectors:";
  if (vectors.empty()) out += " none";
  out += "\n";
  for (const auto& v : vectors) out += fmt::format("    {}  from {}\n", v.describe(), v.source);
  if (irregular) out += "  irregular subscripts present: exact conflicts come from the recorded accesses\n";
  out += validity(*this);
  out += fmt::format("  strategy: {}", analysis::to_string(choice.strategy));
  if (choice.space_dim >= 0) out += fmt::format(", space dimension {}", names[static_cast<std::size_t>(choice.space_dim)]);
  if (choice.time_dim >= 0 && choice.strategy != analysis::Strategy::one_d)
    out += fmt::format(", time dimension {}", names[static_cast<std::size_t>(choice.time_dim)]);
  if (choice.strategy == analysis::Strategy::two_d_skewed)
    out += fmt::format(", skew [[{}, {}], [{}, {}]]", choice.skew[0][0], choice.skew[0][1], choice.skew[1][0],
                       choice.skew[1][1]);
  out += "\n";
  for (const auto& r : choice.reasons) out += fmt::format("    {}\n", r);
  out += fmt::format("  workers: {} rank(s) x {} thread(s) = {}\n", ranks, threads, workers);
  if (gathered)
    out += fmt::format("  gathered: the {} plan is not partitioned across ranks yet, so the iteration space and its "
                       "arrays were moved to rank 0, whose {} thread(s) run every iteration; the other ranks wait\n",
                       analysis::to_string(choice.strategy), threads);
  if (wavefront_ranks)
    out += fmt::format("  wavefront across ranks: each of the {} ranks runs the iterations of its workers' space parts; "
                       "once its last worker has run a time block, a rank passes the elements written in it that a "
                       "later rank holds on to the next rank\n",
                       ranks);
  if (spread)
    out += fmt::format("  spread: the conflict groups are placed on all {} workers of the {} ranks; each rank keeps a "
                       "copy of the iterations it runs and, for each call, fetches the rows or elements its groups "
                       "touch from their owners and returns those it wrote (an access to a unit the rank does not "
                       "hold, or a unit one rank wrote and another touched, refuses the run)\n",
                       workers, ranks);
  if (space_bounds.size() > 1)
    out += fmt::format("  space partition bounds: [{}]\n", fmt::join(space_bounds, ", "));
  if (!space_bounds_note.empty()) out += fmt::format("  worker bounds: {}\n", space_bounds_note);
  if (time_bounds.size() > 1) out += fmt::format("  time block bounds: [{}]\n", fmt::join(time_bounds, ", "));
  if (schedule.rounds > 1)
    out += fmt::format("  rounds: {} (the time blocks go round the workers {} times per pass; {})\n", schedule.rounds,
                       schedule.rounds, rounds_note(schedule.rounds, slices_per_worker));
  if (slice_bounds.size() > 1) out += fmt::format("  slice bounds: [{}]\n", fmt::join(slice_bounds, ", "));
  for (const auto& r : roles) {
    const char* how = wavefront_ranks && r.banded            ? "its rows follow the space dimension: each rank holds its "
                                                               "band of them and, for a call, the rows below and above "
                                                               "it that its iterations read"
                      : wavefront_ranks && r.written         ? "copied whole to every rank for a call; its writes pass "
                                                               "from rank to rank with the time blocks and come back "
                                                               "from the last rank"
                      : wavefront_ranks && r.read            ? "read-only, copied whole to every rank for a call"
                      : r.placement == Placement::aligned    ? "partitioned with the space dimension"
                      : r.placement == Placement::travelling ? "travels with the time blocks"
                      : r.placement == Placement::replicated ? "read-only, copied whole to every rank for the loop"
                      : r.placement == Placement::cached     ? "relaxed: read from each rank's cache of its read set, "
                                                               "written through its Buffer to the owners"
                      : spread && r.written                  ? "written: each rank holds its part and the units its "
                                                               "groups touch during a call"
                      : spread && r.read && hosted && std::any_of(hosted->units.begin(), hosted->units.end(),
                                                                  [&](const auto& u) { return u.array_id == r.array_id; })
                          ? "read-only: each rank holds its part and the rows its groups read during a call"
                      : spread && r.read ? "read-only, copied whole to every rank for each call (its rows, or "
                                           "elements, are under 64 bytes)"
                                         : "used where it is";
    out += fmt::format("  array {}: {}{}{}\n", r.name, how,
                       r.array_dim >= 0 && !wavefront_ranks ? fmt::format(" (array dimension {})", r.array_dim) : "",
                       r.banded ? fmt::format(" ({} row(s) below, {} above; the writes to the rows a later rank "
                                              "reads pass on with the time blocks)",
                                              r.halo_below, r.halo_above)
                                : "");
  }
  if (groups > 0) out += fmt::format("  conflict groups: {}\n", groups);
  if (split_groups > 0)
    out += fmt::format("  split: {} group(s) larger than a thread's share ({} iterations) run on every thread, each "
                       "iteration under locks on the units it touches that the split groups write ({} lockable "
                       "units); a run equals the serial run of its grant order\n",
                       split_groups, split_iterations, split ? ownership->lockable_units() : 0);
  out += fmt::format("  load imbalance (slowest worker / mean): {:.3f}\n", imbalance);
  out += fmt::format("  bytes moved between ranks per pass: {}\n", bytes_per_pass);
  if (ranks > 1)
    out += fmt::format("  bytes the ranks sent each other in the last run (measured): {}\n", last_bytes_moved);
  out += fmt::format("  reconnaissance: {:.3f} s ({} accesses recorded{}); planning: {:.3f} s\n", recon_seconds,
                     recon_accesses,
                     recon_stride > 1 ? fmt::format(" in a sample of 1 in {} iterations; the first run checks every "
                                                    "access against the plan",
                                                    recon_stride)
                                      : "",
                     plan_seconds);
  if (!speculation_failure.empty())
    out += fmt::format("  planned from a full pass: the plan from a sample did not hold ({})\n", speculation_failure);
  return out;
}

}  // namespace strata::loop
