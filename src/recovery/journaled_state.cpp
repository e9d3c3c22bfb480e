#include "strata/recovery/journaled_state.hpp"

#include <algorithm>
#include <mutex>

namespace strata::recovery {
namespace {
std::mutex g_mu;
std::vector<JournaledState*>& enrolled() {
  static std::vector<JournaledState*> v;
  return v;
}
}  // namespace

JournaledState::JournaledState() {
  std::lock_guard lock(g_mu);
  enrolled().push_back(this);
}

JournaledState::JournaledState(const JournaledState&) : JournaledState() {}

JournaledState::~JournaledState() {
  std::lock_guard lock(g_mu);
  auto& v = enrolled();
  v.erase(std::remove(v.begin(), v.end(), this), v.end());
}

std::vector<JournaledState*> JournaledState::live() {
  std::lock_guard lock(g_mu);
  return enrolled();
}

}  // namespace strata::recovery
