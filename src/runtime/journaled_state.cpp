#include "strata/detail/journaled_state.hpp"

#include "strata/detail/registry.hpp"

namespace strata::detail {
namespace {
RegistryOf<JournaledState>& registry() {
  static RegistryOf<JournaledState> r;
  return r;
}
}  // namespace

JournaledState::JournaledState() { registry().enroll(this); }

JournaledState::JournaledState(const JournaledState&) : JournaledState() {}

JournaledState::~JournaledState() { registry().withdraw(this); }

std::vector<JournaledState*> JournaledState::live() { return registry().live(); }

}  // namespace strata::detail
