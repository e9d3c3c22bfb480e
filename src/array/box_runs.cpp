#include "array/box_runs.hpp"

namespace strata::detail {

BoxRuns::BoxRuns(const std::vector<IndexSet>& a, const std::vector<IndexSet>& b) {
  const std::size_t dims = a.size();
  if (dims == 0 || b.size() != dims) {
    empty_ = true;
    return;
  }
  std::vector<std::int64_t> stride_a(dims), stride_b(dims);
  std::int64_t sa = 1, sb = 1;
  for (std::size_t d = dims; d-- > 0;) {
    stride_a[d] = sa;
    stride_b[d] = sb;
    sa *= a[d].size();
    sb *= b[d].size();
  }
  volume_ = 1;
  for (std::size_t d = 0; d < dims; ++d) {
    const std::vector<std::int64_t> common = a[d].intersect(b[d]);
    if (common.empty()) {
      empty_ = true;
      volume_ = 0;
      lead_a_.clear();
      lead_b_.clear();
      last_.clear();
      return;
    }
    volume_ *= static_cast<std::int64_t>(common.size());
    std::vector<std::int64_t> pa = a[d].positions_of(common);
    std::vector<std::int64_t> pb = b[d].positions_of(common);
    if (d + 1 < dims) {
      for (auto& p : pa) p *= stride_a[d];
      for (auto& p : pb) p *= stride_b[d];
      lead_a_.push_back(std::move(pa));
      lead_b_.push_back(std::move(pb));
      continue;
    }
    // The last dimension has stride 1 in both boxes: merge consecutive positions.
    for (std::size_t k = 0; k < pa.size(); ++k) {
      if (!last_.empty()) {
        Run& r = last_.back();
        if (r.a + r.count == pa[k] && r.b + r.count == pb[k]) {
          ++r.count;
          continue;
        }
      }
      last_.push_back({pa[k], pb[k], 1});
    }
  }
}

}  // namespace strata::detail
