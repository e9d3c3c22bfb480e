// Conveniences of the Comm interface built on its primitives.
#include "strata/comm.hpp"

namespace strata {

std::int64_t Comm::exclusive_scan(std::int64_t value, std::int64_t* total) {
  std::vector<std::int64_t> all(static_cast<std::size_t>(size()), 0);
  all[static_cast<std::size_t>(rank())] = value;
  allreduce(std::span(all), ReduceOp::sum);
  std::int64_t before = 0, sum = 0;
  for (int r = 0; r < size(); ++r) {
    if (r < rank()) before += all[static_cast<std::size_t>(r)];
    sum += all[static_cast<std::size_t>(r)];
  }
  if (total) *total = sum;
  return before;
}

}  // namespace strata
