#include "strata/detail/histogram.hpp"

#include <algorithm>
#include <span>

namespace strata::detail {
namespace {

// Counts per index (bins == 0) or per equal-width bin of dimension `dim`.
struct Binning {
  std::int64_t extent, bins;
  std::size_t count() const { return static_cast<std::size_t>(bins > 0 ? bins : extent); }
  std::size_t of(std::int64_t i) const {
    return static_cast<std::size_t>(bins > 0 ? i * bins / std::max<std::int64_t>(1, extent) : i);
  }
};

}  // namespace

std::vector<std::int64_t> histogram_of_keys(Comm& comm, const KeyColumn& keys, const std::vector<std::int64_t>& shape,
                                            int dim, std::int64_t bins, ThreadPool* pool) {
  const Binning b{shape[static_cast<std::size_t>(dim)], bins};
  std::vector<std::int64_t> h(b.count(), 0);
  // Keys [from, to) counted into `into`; one loop per width, so that neither pays a
  // test per key.
  auto count = [&](std::int64_t from, std::int64_t to, std::vector<std::int64_t>& into) {
    auto by = [&](const auto* subscripts) {
      for (std::int64_t k = from; k < to; ++k) ++into[b.of(subscripts[k * keys.dims + dim])];
    };
    if (keys.width == 4) by(reinterpret_cast<const std::int32_t*>(keys.data));
    else by(reinterpret_cast<const std::int64_t*>(keys.data));
  };
  // Threads pay for their own histograms (zeroed, then summed) only on many keys,
  // and only where those histograms are small beside the keys (an extent of 2^32
  // with few keys would cost each thread more than the count).
  constexpr std::int64_t kThreadedFrom = std::int64_t{1} << 20;
  const int threads = pool ? pool->size() : 1;
  if (threads > 1 && keys.size >= kThreadedFrom && static_cast<std::int64_t>(h.size()) * threads <= keys.size) {
    std::vector<std::vector<std::int64_t>> part(static_cast<std::size_t>(threads - 1));
    pool->run_ranges(keys.size, [&](std::int64_t from, std::int64_t to, int th) {
      if (th == 0) return count(from, to, h);
      auto& mine = part[static_cast<std::size_t>(th - 1)];
      mine.assign(h.size(), 0);
      count(from, to, mine);
    });
    for (const auto& p : part)
      for (std::size_t i = 0; i < p.size(); ++i) h[i] += p[i];
  } else {
    count(0, keys.size, h);
  }
  comm.allreduce(std::span(h), ReduceOp::sum);
  return h;
}

std::vector<std::int64_t> histogram_of_box(Comm& comm, const std::vector<IndexSet>& box,
                                           const std::vector<std::int64_t>& shape, int dim, std::int64_t bins) {
  const Binning b{shape[static_cast<std::size_t>(dim)], bins};
  std::vector<std::int64_t> h(b.count(), 0);
  std::int64_t volume = 1;
  for (const auto& s : box) volume *= s.size();
  const IndexSet& along = box[static_cast<std::size_t>(dim)];
  if (volume > 0) {
    const std::int64_t per_index = volume / along.size();
    for (std::int64_t k = 0; k < along.size(); ++k) h[b.of(along.global(k))] += per_index;
  }
  comm.allreduce(std::span(h), ReduceOp::sum);
  return h;
}

}  // namespace strata::detail
