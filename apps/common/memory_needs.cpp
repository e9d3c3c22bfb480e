#include "common/memory_needs.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "strata/detail/huge_pages.hpp"
#include "strata/error.hpp"

namespace strata::apps {

MemoryNeeds& MemoryNeeds::add(std::string what, double count, double bytes_each) {
  needs_.push_back({std::move(what), count * bytes_each});
  return *this;
}

void MemoryNeeds::check() const {
  if (needs_.empty()) return;
  double total = 0;
  for (const auto& n : needs_) total += n.bytes;
  const auto memory = static_cast<double>(strata::detail::machine_memory());
  if (total <= memory) return;
  const auto largest =
      std::max_element(needs_.begin(), needs_.end(), [](const Need& a, const Need& b) { return a.bytes < b.bytes; });
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  throw OptionError(fmt::format("{} is too large: the run would need about {:.3g} GiB, more than this machine's "
                                "{:.3g} GiB of memory",
                                largest->what, total / kGiB, memory / kGiB));
}

}  // namespace strata::apps
