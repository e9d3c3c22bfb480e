#include <cmath>
#include <string>

#include <fmt/format.h>

#include "strata/error.hpp"
#include "strata/relaxed.hpp"

namespace strata::detail {

void check_consistency(const Consistency& c, const std::string& array, bool numeric_elements) {
  if (c.staleness < 0)
    throw OptionError(fmt::format("array {}: staleness must be 0 or more, not {}", array, c.staleness));
  if (c.clock_every < 0)
    throw OptionError(
        fmt::format("array {}: clock_every must be 0 (once per loop call) or more, not {}", array, c.clock_every));
  if (c.budget < 0 || !std::isfinite(c.budget))
    throw OptionError(fmt::format(
        "array {}: the managed-communication budget must be a positive number of bytes per second (0: off), not {}",
        array, c.budget));
  if (c.is_managed() && !numeric_elements)
    throw OptionError(
        fmt::format("array {}: managed communication ranks deltas by magnitude, so it needs numeric elements", array));
  if (c.own_writes && !c.hybrid && !c.prefetch)
    throw OptionError(fmt::format(
        "array {}: read-my-writes folds deltas into the rank's cache, so it cannot go without prefetch", array));
  // (Without prefetch, Hybrid and read-my-writes are refused on their own.)
  if (c.thread_replicas && (!c.folds() || c.staleness != 0 || c.is_managed()))
    throw OptionError(fmt::format("array {}: a replica per thread goes with Hybrid, or read-my-writes at staleness 0, "
                                  "without managed communication",
                                  array));
  if (!c.hybrid) return;
  if (c.staleness != 0)
    throw OptionError(fmt::format(
        "array {}: Hybrid consistency is synchronous across ranks, so its staleness is 0, not {}", array, c.staleness));
  if (!c.prefetch)
    throw OptionError(
        fmt::format("array {}: Hybrid consistency folds deltas into the rank's cache, so it cannot go without prefetch",
                    array));
}

}  // namespace strata::detail
