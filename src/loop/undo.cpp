#include "strata/loop/undo.hpp"

#include <algorithm>
#include <cstring>

#include "runtime/registry.hpp"
#include "strata/error.hpp"

namespace strata::detail {

UndoableState::UndoableState() { registry_of<UndoableState>().enroll(this); }

UndoableState::UndoableState(const UndoableState&) : UndoableState() {}

UndoableState::~UndoableState() { registry_of<UndoableState>().withdraw(this); }

void UndoableState::save_all() {
  for (auto* s : registry_of<UndoableState>().live()) s->save_state();
}

void UndoableState::restore_all() {
  for (auto* s : registry_of<UndoableState>().live()) s->restore_state();
}

RunSnapshot::RunSnapshot(const std::vector<ArrayBase*>& arrays) {
  for (auto* a : arrays) {
    if (!a || std::any_of(saved_.begin(), saved_.end(), [&](const Saved& s) { return s.array == a; })) continue;
    const auto bytes = a->local_bytes();
    saved_.push_back({a, std::vector<std::byte>(bytes.begin(), bytes.end())});
  }
  UndoableState::save_all();
}

void RunSnapshot::restore() {
  for (auto& s : saved_) {
    const auto bytes = s.array->local_bytes();
    STRATA_CHECK(bytes.size() == s.values.size(), "an array changed its structure during a loop run");
    if (!bytes.empty()) std::memcpy(bytes.data(), s.values.data(), bytes.size());
  }
  UndoableState::restore_all();
}

std::size_t RunSnapshot::bytes() const {
  std::size_t n = 0;
  for (const auto& s : saved_) n += s.values.size();
  return n;
}

}  // namespace strata::detail
