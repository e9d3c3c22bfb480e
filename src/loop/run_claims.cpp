#include "loop/run_claims.hpp"

#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "loop/checked.hpp"

namespace strata::loop {

RunClaims::RunClaims(OwnershipTable& table, int worker, int dims, const std::atomic<bool>& abandoned)
    : table_(table), worker_(worker), dims_(static_cast<std::size_t>(dims)), abandoned_(abandoned) {
  strata::detail::t_claims = this;
}

RunClaims::~RunClaims() { strata::detail::t_claims = nullptr; }

void RunClaims::refused(const strata::detail::ArrayBase& array, std::span<const std::int64_t> index,
                        bool whole_last) const {
  std::vector<std::string> subs;
  for (std::size_t d = 0; d < index.size(); ++d)
    subs.push_back(whole_last && d + 1 == index.size() ? ":" : std::to_string(index[d]));
  const std::span<const std::int64_t> iteration(iteration_, iteration_ ? dims_ : 0);
  throw SpeculationFailed(fmt::format(
      "access {}[{}] in iteration ({}) touches what another thread's iterations touch in this call, one of them "
      "writing it (or writes an array the plan never saw written): the conflict groups recorded when the loop was "
      "planned no longer hold",
      strata::detail::array_label(array), fmt::join(subs, ", "), fmt::join(iteration, ", ")));
}

}  // namespace strata::loop
