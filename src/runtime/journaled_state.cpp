#include "strata/detail/journaled_state.hpp"

#include "strata/detail/registry.hpp"

namespace strata::detail {
namespace {
RegistryOf<JournaledState>& live_journaled_states() {
  static RegistryOf<JournaledState> r;
  return r;
}
}  // namespace

JournaledState::JournaledState() { live_journaled_states().enroll(this); }

JournaledState::JournaledState(const JournaledState&) : JournaledState() {}

JournaledState::~JournaledState() { live_journaled_states().withdraw(this); }

std::vector<JournaledState*> JournaledState::live() { return live_journaled_states().live(); }

}  // namespace strata::detail
