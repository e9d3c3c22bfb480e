// Whether a (user, item) pair appears twice among n ratings, in linear time: their
// items bucketed by user (a counting sort), then, user by user, each item's last user
// compared with the current one. load() checks its whole file this way, load_share
// each rank's users (the pairs routed to the rank that holds their user).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <numeric>
#include <vector>

#include "strata/thread_pool.hpp"

namespace strata::apps::mf {

/// `user(k)` in [0, users) and `item(k)` in [0, items) are rating k's (items below 2^31).
/// Each thread of `pool` checks a range of users: it scans all n ratings for its own
/// (reading is cheap next to the scattered writes), so no thread needs a table over
/// every user. Threads beyond those whose table of items' last users (4 bytes an item)
/// fits in 256 MiB together stay idle.
template <class User, class Item>
bool has_repeated_pair(ThreadPool& pool, std::size_t n, std::int64_t users, std::int64_t items, User user,
                       Item item) {
  constexpr std::int64_t kTablesBytes = std::int64_t{256} << 20;
  const std::int64_t T = std::clamp<std::int64_t>(kTablesBytes / std::max<std::int64_t>(4 * items, 1), 1, pool.size());
  std::atomic<bool> repeated{false};
  pool.run([&](int th) {
    if (th >= T) return;
    const std::int64_t lo = users * th / T, hi = users * (th + 1) / T;
    std::vector<std::int64_t> begin(static_cast<std::size_t>(hi - lo) + 1, 0);
    for (std::size_t k = 0; k < n; ++k)
      if (const std::int64_t u = user(k); u >= lo && u < hi) ++begin[static_cast<std::size_t>(u - lo) + 1];
    std::partial_sum(begin.begin(), begin.end(), begin.begin());
    std::vector<std::int64_t> next(begin.begin(), begin.end() - 1);
    std::vector<std::int32_t> item_of(static_cast<std::size_t>(begin.back()));
    for (std::size_t k = 0; k < n; ++k)
      if (const std::int64_t u = user(k); u >= lo && u < hi)
        item_of[static_cast<std::size_t>(next[static_cast<std::size_t>(u - lo)]++)] = static_cast<std::int32_t>(item(k));
    std::vector<std::int32_t> last_user(static_cast<std::size_t>(items), -1);  // as an offset from lo
    for (std::int64_t u = 0; u < hi - lo && !repeated.load(std::memory_order_relaxed); ++u)
      for (auto k = begin[static_cast<std::size_t>(u)]; k < begin[static_cast<std::size_t>(u) + 1]; ++k) {
        std::int32_t& seen = last_user[static_cast<std::size_t>(item_of[static_cast<std::size_t>(k)])];
        if (seen == u) {
          repeated.store(true, std::memory_order_relaxed);
          return;
        }
        seen = static_cast<std::int32_t>(u);
      }
  });
  return repeated.load();
}

}  // namespace strata::apps::mf
