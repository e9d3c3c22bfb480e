#include "loop/round_dealer.hpp"

#include <algorithm>
#include <span>

#include "strata/error.hpp"
#include "strata/random.hpp"

namespace strata::loop {

RoundDealer::RoundDealer(Comm& comm, const std::vector<std::uint32_t>& counts, std::int64_t time_extent,
                         int slices_per_worker, int rounds)
    : extent_(static_cast<std::size_t>(time_extent)),
      slices_(slices_per_worker),
      visits_(rounds / slices_per_worker),
      next_(counts.size()) {
  STRATA_CHECK(slices_ >= 1 && rounds % slices_ == 0 && visits_ >= 1 && visits_ <= 255,
               "rounds must be a multiple of the slices per worker, with at most 255 visits per slice");
  const std::size_t S = static_cast<std::size_t>(slices_), n = S * extent_;  // per worker
  STRATA_CHECK(n > 0 && counts.size() % n == 0, "one count per local worker, slice and time index");
  const std::size_t local_workers = counts.size() / n;
  for (std::size_t slice = 0; slice < local_workers * S; ++slice) first_round_.push_back(static_cast<int>(slice % S));
  // Iterations on lower ranks per (slice, time index): every rank's totals side by
  // side, summed (ranks x S x extent numbers, once per plan).
  std::vector<std::int64_t> before(n, 0);
  if (comm.size() > 1) {
    std::vector<std::int64_t> all(static_cast<std::size_t>(comm.size()) * n, 0);
    const auto mine = std::span(all).subspan(static_cast<std::size_t>(comm.rank()) * n, n);
    for (std::size_t j = 0; j < local_workers; ++j)
      for (std::size_t k = 0; k < n; ++k) mine[k] += counts[j * n + k];
    comm.allreduce(std::span(all), ReduceOp::sum);
    for (std::size_t r = 0; r < static_cast<std::size_t>(comm.rank()); ++r)
      for (std::size_t k = 0; k < n; ++k) before[k] += all[r * n + k];
  }
  // The hashed start spreads indices with fewer iterations than visits over all
  // visits instead of crowding the first.
  const auto v = static_cast<std::uint64_t>(visits_);
  for (std::size_t j = 0; j < local_workers; ++j)
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t t = k % extent_;
      next_[j * n + k] = static_cast<std::uint8_t>((mix64(t) % v + static_cast<std::uint64_t>(before[k])) % v);
      before[k] += counts[j * n + k];  // this worker precedes the next one
    }
}

}  // namespace strata::loop
