#include "strata/loop/undo.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "strata/error.hpp"

namespace strata::detail {
namespace {
std::mutex g_mu;
std::vector<UndoableState*>& enrolled() {
  static std::vector<UndoableState*> v;
  return v;
}
}  // namespace

UndoableState::UndoableState() {
  std::lock_guard lock(g_mu);
  enrolled().push_back(this);
}

UndoableState::UndoableState(const UndoableState&) : UndoableState() {}

UndoableState::~UndoableState() {
  std::lock_guard lock(g_mu);
  auto& v = enrolled();
  v.erase(std::remove(v.begin(), v.end(), this), v.end());
}

void UndoableState::save_all() {
  std::lock_guard lock(g_mu);
  for (auto* s : enrolled()) s->save_state();
}

void UndoableState::restore_all() {
  std::lock_guard lock(g_mu);
  for (auto* s : enrolled()) s->restore_state();
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
