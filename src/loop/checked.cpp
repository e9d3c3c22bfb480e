#include "strata/loop/checked.hpp"

#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "strata/error.hpp"

namespace strata::loop {

void* CheckedObserver::on_access(detail::ArrayBase& array, const std::source_location& where,
                                 detail::AccessMode mode, std::span<const std::int64_t> index, bool whole_last,
                                 void* /*real*/, std::size_t /*bytes*/) {
  std::string file = where.file_name();
  if (const auto slash = file.rfind('/'); slash != std::string::npos) file = file.substr(slash + 1);
  const std::string site = fmt::format("{}:{}:{}", file, where.line(), where.column());
  const auto shown = [&] {
    std::vector<std::string> subs;
    for (std::size_t d = 0; d < index.size(); ++d)
      subs.push_back(whole_last && d + 1 == index.size() ? ":" : std::to_string(index[d]));
    return fmt::format("{}[{}]", array.name().empty() ? fmt::format("array#{}", array.array_id()) : array.name(),
                       fmt::join(subs, ", "));
  };
  bool seen = false;
  for (const auto& s : plan_.sites)
    if (s.array_id == array.array_id() && s.site == site && s.mode == mode) seen = true;
  if (!seen)
    throw Error(fmt::format("checked mode: access {} at {} was not seen by the reconnaissance pass, so the plan "
                            "does not cover it; the loop must be re-planned (its access pattern changed)",
                            shown(), site));
  using analysis::Strategy;
  const auto st = plan_.choice.strategy;
  const bool partitioned = st == Strategy::one_d || st == Strategy::two_d || st == Strategy::two_d_skewed;
  for (const auto& r : plan_.roles) {
    if (r.array_id != array.array_id()) continue;
    if (partitioned && plan_.workers > 1 && mode != detail::AccessMode::read && r.placement == Placement::local)
      throw Error(fmt::format("checked mode: access {} at {} writes an array that the {} plan does not partition, "
                              "so several workers may write it at once: the plan is wrong for this loop",
                              shown(), site, analysis::to_string(st)));
    // Bounds matter only for arrays the loop writes (read-only data may be shared
    // freely) and only where workers must stay in their partitions: 1D and unordered
    // 2D. Wavefronts legally read what earlier blocks of other workers wrote.
    const bool bounded = st == Strategy::one_d || (st == Strategy::two_d && !plan_.ordered);
    if (r.array_dim < 0 || !r.written || !bounded) continue;
    const std::int64_t i = index[static_cast<std::size_t>(r.array_dim)];
    if (r.placement == Placement::aligned && (i < space_lo_ || i >= space_hi_))
      throw Error(fmt::format("checked mode: access {} at {} falls outside this worker's partition [{}, {}) of "
                              "the space dimension: the plan is wrong for this loop",
                              shown(), site, space_lo_, space_hi_));
    if (r.placement == Placement::travelling && (i < time_lo_ || i >= time_hi_))
      throw Error(fmt::format("checked mode: access {} at {} falls outside the time block [{}, {}) this worker "
                              "holds: the plan is wrong for this loop",
                              shown(), site, time_lo_, time_hi_));
  }
  return nullptr;
}

}  // namespace strata::loop
