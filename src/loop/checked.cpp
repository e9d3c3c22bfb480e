#include "strata/loop/checked.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "strata/error.hpp"

namespace strata::loop {

bool CheckedObserver::planned_site(const detail::ArrayBase& array, const std::source_location& where,
                                   detail::AccessMode mode) {
  for (const auto& k : known_)
    if (k.line == where.line() && k.column == where.column() && k.file == where.file_name() &&
        k.array_id == array.array_id() && k.mode == mode)
      return true;
  const std::string site = detail::site_label(where);
  for (const auto& s : plan_.sites)
    if (s.array_id == array.array_id() && s.site == site && s.mode == mode) {
      known_.push_back({array.array_id(), where.file_name(), where.line(), where.column(), mode});
      return true;
    }
  return false;
}

void* CheckedObserver::on_access(detail::ArrayBase& array, const std::source_location& where,
                                 detail::AccessMode mode, std::span<const std::int64_t> index, bool whole_last,
                                 void* /*real*/, std::size_t /*bytes*/) {
  // Messages are built only when a check fails.
  const auto site = [&] { return detail::site_label(where); };
  const auto shown = [&] {
    std::vector<std::string> subs;
    for (std::size_t d = 0; d < index.size(); ++d)
      subs.push_back(whole_last && d + 1 == index.size() ? ":" : std::to_string(index[d]));
    return fmt::format("{}[{}]", array.name().empty() ? fmt::format("array#{}", array.array_id()) : array.name(),
                       fmt::join(subs, ", "));
  };
  if (!planned_site(array, where, mode))
    throw Error(fmt::format("checked mode: access {} at {} was not seen by the reconnaissance pass, so the plan "
                            "does not cover it; the loop must be re-planned (its access pattern changed)",
                            shown(), site()));
  using analysis::Strategy;
  const auto st = plan_.choice.strategy;
  const bool partitioned = st == Strategy::one_d || st == Strategy::two_d || st == Strategy::two_d_skewed;
  for (const auto& r : plan_.roles) {
    if (r.array_id != array.array_id()) continue;
    if (partitioned && plan_.workers > 1 && mode != detail::AccessMode::read && r.placement == Placement::local)
      throw Error(fmt::format("checked mode: access {} at {} writes an array that the {} plan does not partition, "
                              "so several workers may write it at once: the plan is wrong for this loop",
                              shown(), site(), analysis::to_string(st)));
    // Bounds matter only for arrays the loop writes (read-only data may be shared
    // freely) and only where workers must stay in their partitions: 1D and unordered
    // 2D. Wavefronts legally read what earlier blocks of other workers wrote.
    const bool bounded = st == Strategy::one_d || (st == Strategy::two_d && !plan_.ordered);
    if (r.array_dim < 0 || !r.written || !bounded) continue;
    const std::int64_t i = index[static_cast<std::size_t>(r.array_dim)];
    if (r.placement == Placement::aligned && (i < space_lo_ || i >= space_hi_))
      throw Error(fmt::format("checked mode: access {} at {} falls outside this worker's partition [{}, {}) of "
                              "the space dimension: the plan is wrong for this loop",
                              shown(), site(), space_lo_, space_hi_));
    if (r.placement == Placement::travelling && (i < time_lo_ || i >= time_hi_))
      throw Error(fmt::format("checked mode: access {} at {} falls outside the time block [{}, {}) this worker "
                              "holds: the plan is wrong for this loop",
                              shown(), site(), time_lo_, time_hi_));
  }
  return nullptr;
}

}  // namespace strata::loop
