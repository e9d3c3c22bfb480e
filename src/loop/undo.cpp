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

namespace {

// Copies `bytes` bytes, in shares on the pool's threads when it has several and the
// copy is large (the destination's first touch, page faults included, is most of
// the cost, and the threads take their faults at once).
void copy_bytes(std::byte* to, const std::byte* from, std::size_t bytes, ThreadPool* pool) {
  constexpr std::size_t kThreadedFrom = std::size_t{4} << 20;
  if (!pool || pool->size() < 2 || bytes < kThreadedFrom) {
    if (bytes > 0) std::memcpy(to, from, bytes);
    return;
  }
  pool->run_ranges(static_cast<std::int64_t>(bytes), [&](std::int64_t lo, std::int64_t hi, int) {
    std::memcpy(to + lo, from + lo, static_cast<std::size_t>(hi - lo));
  });
}

}  // namespace

RunSnapshot::RunSnapshot(const std::vector<ArrayBase*>& arrays, ThreadPool* pool) : pool_(pool) {
  for (auto* a : arrays) {
    if (!a || std::any_of(saved_.begin(), saved_.end(), [&](const Saved& s) { return s.array == a; })) continue;
    const auto bytes = a->local_bytes();
    Saved s{a, std::make_unique_for_overwrite<std::byte[]>(bytes.size()), bytes.size()};
    copy_bytes(s.values.get(), bytes.data(), bytes.size(), pool_);
    saved_.push_back(std::move(s));
  }
  UndoableState::save_all();
}

void RunSnapshot::restore() {
  for (auto& s : saved_) {
    const auto bytes = s.array->local_bytes();
    STRATA_CHECK(bytes.size() == s.size, "an array changed its structure during a loop run");
    copy_bytes(bytes.data(), s.values.get(), bytes.size(), pool_);
  }
  UndoableState::restore_all();
}

std::size_t RunSnapshot::bytes() const {
  std::size_t n = 0;
  for (const auto& s : saved_) n += s.size;
  return n;
}

}  // namespace strata::detail
