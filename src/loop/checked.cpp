#include "loop/checked.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace strata::loop {

const CheckedObserver::KnownSite* CheckedObserver::find_site(const strata::detail::ArrayBase& array,
                                                             const std::source_location& where,
                                                             strata::detail::AccessMode mode) {
  for (std::size_t k = 0; k < known_.size(); ++k)
    if (known_[k].array == &array && known_[k].mode == mode && strata::detail::same_site(known_[k].where, where)) {
      last_ = k;
      return &known_[k];
    }
  const std::string label = strata::detail::site_label(where);
  for (const auto& s : plan_.sites) {
    if (s.array_id != array.array_id() || s.site != label || s.mode != mode) continue;
    KnownSite k{&array, where, mode, std::min<std::size_t>(s.subs.size(), analysis::SubscriptFitter::max_dims), {}};
    using K = analysis::Subscript::Kind;
    for (std::size_t d = 0; d < k.dims; ++d) {
      const analysis::Subscript& f = s.subs[d];
      DimCheck& c = k.check[d];
      c.kind = f.kind == K::whole || f.kind == K::irregular ? DimCheck::any
               : f.kind == K::affine                        ? DimCheck::affine
               : f.kind == K::constant                      ? DimCheck::constant
                                                            : DimCheck::never;
      c.iter_dim = static_cast<std::uint8_t>(std::max(f.iter_dim, 0));
      c.offset = f.offset;
      if (probe_ && any_subscript_in_probe(s.array_id, mode)) c.kind = DimCheck::any;
    }
    known_.push_back(k);
    last_ = known_.size() - 1;
    return &known_.back();
  }
  return nullptr;
}

bool CheckedObserver::any_subscript_in_probe(std::uint64_t array_id, strata::detail::AccessMode mode) const {
  if (mode == strata::detail::AccessMode::buffered) return true;
  // A spread plan's ranks hold only the rows of read-only arrays their iterations were
  // seen to read (spread.hpp): another subscript would be refused by the run's claims.
  if (mode != strata::detail::AccessMode::read || plan_.spread) return false;
  for (const auto& r : plan_.roles)
    if (r.array_id == array_id)
      return !r.written && (r.placement == Placement::local || r.placement == Placement::replicated);
  return false;
}

// "W[3, :]": how messages show an access.
std::string shown(const strata::detail::ArrayBase& array, std::span<const std::int64_t> index, bool whole_last) {
  std::vector<std::string> subs;
  for (std::size_t d = 0; d < index.size(); ++d)
    subs.push_back(whole_last && d + 1 == index.size() ? ":" : std::to_string(index[d]));
  return fmt::format("{}[{}]", strata::detail::array_label(array), fmt::join(subs, ", "));
}

void CheckedObserver::fit_failed(const strata::detail::ArrayBase& array, const std::source_location& where,
                                 std::span<const std::int64_t> index, bool whole_last, bool site_known) const {
  unseen_site_ = !site_known;
  const char* source = probe_ ? "the cached plan's reconnaissance" : "the sampled reconnaissance";
  throw SpeculationFailed(fmt::format("access {} at {} in iteration ({}) {}", shown(array, index, whole_last),
                                      strata::detail::site_label(where), fmt::join(iteration_, ", "),
                                      site_known ? fmt::format("does not fit the subscripts {} found", source)
                                                 : fmt::format("comes from a site {} never saw", source)));
}

void claim_refused(const OwnershipTable& table, const strata::detail::ArrayBase& array,
                   std::span<const std::int64_t> index, bool whole_last, bool write,
                   std::span<const std::int64_t> iteration, const std::string& site) {
  std::string why = table.refusal(array, index, whole_last, write);
  if (why.empty()) why = "touches what another worker's iterations touch in this call, one of them writing it";
  // The marks of a one-thread rank refuse without knowing the iteration: say nothing of it there.
  const std::string in =
      iteration.empty() ? std::string() : fmt::format(" in iteration ({})", fmt::join(iteration, ", "));
  throw SpeculationFailed(
      fmt::format("access {}{}{} {}: the conflict groups recorded when the loop was planned no longer hold",
                  shown(array, index, whole_last), site.empty() ? "" : " at " + site, in, why));
}

void CheckedObserver::check_planned(const KnownSite* planned, const strata::detail::ArrayBase& array,
                                    const std::source_location& where, strata::detail::AccessMode mode,
                                    std::span<const std::int64_t> index, bool whole_last) const {
  if (!planned)
    throw Error(fmt::format("checked mode: access {} at {} was not seen by the reconnaissance pass, so the plan "
                            "does not cover it; the loop must be re-planned (its access pattern changed)",
                            shown(array, index, whole_last), strata::detail::site_label(where)));
  if (mode == strata::detail::AccessMode::buffered) return;  // buffered writes conflict with nothing
  const auto site = [&] { return strata::detail::site_label(where); };
  const auto access = [&] { return shown(array, index, whole_last); };
  using analysis::Strategy;
  const auto st = plan_.choice.strategy;
  const bool partitioned = st == Strategy::one_d || st == Strategy::two_d || st == Strategy::two_d_skewed;
  for (const auto& r : plan_.roles) {
    if (r.array_id != array.array_id()) continue;
    // (A skewed wavefront orders every pair of tiles that a dependence vector links,
    // whatever the array's placement: its writes need no partition.)
    if (partitioned && st != Strategy::two_d_skewed && plan_.workers > 1 &&
        mode != strata::detail::AccessMode::read && r.placement == Placement::local)
      throw Error(fmt::format("checked mode: access {} at {} writes an array that the {} plan does not partition, "
                              "so several workers may write it at once: the plan is wrong for this loop",
                              access(), site(), analysis::to_string(st)));
    // Bounds matter only for arrays the loop writes (read-only data may be shared
    // freely) and only where workers must stay in their partitions: 1D and unordered
    // 2D. Wavefronts legally read what earlier blocks of other workers wrote.
    const bool bounded = st == Strategy::one_d || (st == Strategy::two_d && !plan_.ordered);
    if (r.array_dim < 0 || !r.written || !bounded) continue;
    const std::int64_t i = index[static_cast<std::size_t>(r.array_dim)];
    if (r.placement == Placement::aligned && (i < space_lo_ || i >= space_hi_))
      throw Error(fmt::format("checked mode: access {} at {} falls outside this worker's partition [{}, {}) of "
                              "the space dimension: the plan is wrong for this loop",
                              access(), site(), space_lo_, space_hi_));
    if (r.placement == Placement::travelling && (i < time_lo_ || i >= time_hi_))
      throw Error(fmt::format("checked mode: access {} at {} falls outside the time block [{}, {}) this worker "
                              "holds: the plan is wrong for this loop",
                              access(), site(), time_lo_, time_hi_));
  }
}

}  // namespace strata::loop
