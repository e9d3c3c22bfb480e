#include "strata/loop/call_hooks.hpp"

#include "strata/error.hpp"

namespace strata::loop {
namespace {
const ServiceKind* g_kind = nullptr;
}  // namespace

void provide_call_hooks(const ServiceKind& kind) {
  g_kind = &kind;
  strata::detail::start_with_every_runtime(kind);
}

CallHooks& call_hooks(Runtime& rt) {
  // The recovery layer provides the hooks; CMake links it into every program that
  // links `strata` (src/CMakeLists.txt), so this is a build error, not a user's.
  if (!g_kind) throw InternalError("no loop-call hooks: the recovery layer of Strata is not linked");
  return static_cast<CallHooks&>(rt.service(*g_kind));
}

}  // namespace strata::loop
