// Whether a (user, item) pair appears twice among n ratings, in linear time: their
// items bucketed by user (a counting sort), then, user by user, each item's last user
// compared with the current one. load() checks its whole file this way, load_share
// each rank's users (the pairs routed to the rank that holds their user).
#pragma once

#include <cstdint>
#include <numeric>
#include <vector>

namespace strata::apps::mf {

/// `user(k)` in [0, users) and `item(k)` in [0, items) are rating k's (items below 2^31).
template <class User, class Item>
bool has_repeated_pair(std::size_t n, std::int64_t users, std::int64_t items, User user, Item item) {
  std::vector<std::int64_t> begin(static_cast<std::size_t>(users) + 1, 0);
  for (std::size_t k = 0; k < n; ++k) ++begin[static_cast<std::size_t>(user(k)) + 1];
  std::partial_sum(begin.begin(), begin.end(), begin.begin());
  std::vector<std::int64_t> next(begin.begin(), begin.end() - 1);
  std::vector<std::int32_t> item_of(n);
  for (std::size_t k = 0; k < n; ++k)
    item_of[static_cast<std::size_t>(next[static_cast<std::size_t>(user(k))]++)] = static_cast<std::int32_t>(item(k));
  std::vector<std::int64_t> last_user(static_cast<std::size_t>(items), -1);
  for (std::int64_t u = 0; u < users; ++u)
    for (auto k = begin[static_cast<std::size_t>(u)]; k < begin[static_cast<std::size_t>(u) + 1]; ++k) {
      std::int64_t& seen = last_user[static_cast<std::size_t>(item_of[static_cast<std::size_t>(k)])];
      if (seen == u) return true;
      seen = u;
    }
  return false;
}

}  // namespace strata::apps::mf
