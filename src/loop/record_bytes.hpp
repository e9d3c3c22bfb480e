// The bytes of a thread's work records for one step (run_plan.cpp packs them).
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

namespace strata::loop {

/// An allocator that leaves new elements uninitialised: every packed byte is
/// written by the packing pass, so zero-filling the records first would only add a
/// pass over memory as large as the iteration space.
template <class T>
struct UninitialisedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitialisedAllocator<U>;
  };
  UninitialisedAllocator() = default;
  template <class U>
  UninitialisedAllocator(const UninitialisedAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

using RecordBytes = std::vector<std::byte, UninitialisedAllocator<std::byte>>;

/// Copies one field of a record. Fields have a few sizes (the subscripts, an
/// element, a pointer), and a fixed-size copy is a move or two where a call to
/// memcpy per field cost about as much as the rest of the packing.
inline void copy_field(std::byte* to, const void* from, std::size_t bytes) {
  switch (bytes) {
    case 4: std::memcpy(to, from, 4); return;
    case 8: std::memcpy(to, from, 8); return;
    case 16: std::memcpy(to, from, 16); return;
    case 24: std::memcpy(to, from, 24); return;
    case 32: std::memcpy(to, from, 32); return;
    default: std::memcpy(to, from, bytes);
  }
}

}  // namespace strata::loop
