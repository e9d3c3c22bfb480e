#include "strata/detail/journaled_state.hpp"

#include "runtime/registry.hpp"

namespace strata::detail {

JournaledState::JournaledState() { registry_of<JournaledState>().enroll(this); }

JournaledState::JournaledState(const JournaledState&) : JournaledState() {}

JournaledState::~JournaledState() { registry_of<JournaledState>().withdraw(this); }

std::vector<JournaledState*> JournaledState::live() { return registry_of<JournaledState>().live(); }

}  // namespace strata::detail
