#include "runtime/registry.hpp"

#include <algorithm>

namespace strata::detail {

bool Registry::enroll(void* object, std::uint64_t key) {
  std::lock_guard lock(mu_);
  if (key != 0 && !by_key_.emplace(key, object).second) return false;
  order_.push_back(object);
  return true;
}

void Registry::replace(void* object, std::uint64_t key) {
  std::lock_guard lock(mu_);
  by_key_[key] = object;
}

void Registry::withdraw(void* object, std::uint64_t key) {
  std::lock_guard lock(mu_);
  // Newest first: objects are mostly short-lived temporaries.
  if (auto it = std::find(order_.rbegin(), order_.rend(), object); it != order_.rend())
    order_.erase(std::next(it).base());
  if (key == 0) return;
  auto it = by_key_.find(key);
  if (it != by_key_.end() && it->second == object) by_key_.erase(it);
}

void* Registry::find(std::uint64_t key) const {
  std::lock_guard lock(mu_);
  auto it = by_key_.find(key);
  return it == by_key_.end() ? nullptr : it->second;
}

std::uint64_t Registry::lowest_key() const {
  std::lock_guard lock(mu_);
  std::uint64_t lowest = 0;
  for (const auto& [key, object] : by_key_)
    if (lowest == 0 || key < lowest) lowest = key;
  return lowest;
}

std::vector<void*> Registry::live() const {
  std::lock_guard lock(mu_);
  return order_;
}

}  // namespace strata::detail
