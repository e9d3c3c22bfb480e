// Mini-batches of an app's training items (mlr's samples, transe's triples): the
// iterations of its loop, each a contiguous range of items in their stored order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace strata::apps {

/// A mini-batch: the items [first, first + count).
struct Batch {
  std::int64_t first = 0;
  std::int32_t count = 0;
};

/// A pass's batches over n items, `size` each (the last one the rest).
inline std::vector<Batch> batches(std::int64_t n, std::int32_t size) {
  std::vector<Batch> b;
  for (std::int64_t i = 0; i < n; i += size)
    b.push_back({i, static_cast<std::int32_t>(std::min<std::int64_t>(size, n - i))});
  return b;
}

}  // namespace strata::apps
