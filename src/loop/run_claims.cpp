#include "loop/run_claims.hpp"

#include "loop/checked.hpp"

namespace strata::loop {

RunClaims::RunClaims(OwnershipTable& table, int worker, int dims, const std::atomic<bool>& abandoned,
                     SplitLocks* locks)
    : table_(table), worker_(worker), dims_(static_cast<std::size_t>(dims)), abandoned_(abandoned), locks_(locks) {
  strata::detail::t_claims = this;
  strata::detail::t_claim_tag = static_cast<std::uint64_t>(worker) + 1;
}

RunClaims::~RunClaims() {
  strata::detail::t_claims = nullptr;
  strata::detail::t_claim_tag = 0;
}

void RunClaims::refused(const strata::detail::ArrayBase& array, std::span<const std::int64_t> index,
                        bool whole_last, strata::detail::AccessMode mode) const {
  claim_refused(table_, array, index, whole_last, mode != strata::detail::AccessMode::read,
                {iteration_, iteration_ ? dims_ : 0}, "");
}

}  // namespace strata::loop
