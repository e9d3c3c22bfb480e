// Memory handed to an observed iteration in place of the arrays' own, so that a pass
// which only looks at what a body does (reconnaissance, the probe of a cached plan)
// leaves no trace: reads of local elements see the real memory, every write gets a
// copy of its element or row that lives until the iteration ends (later accesses of
// the same iteration see it), and reads of elements other ranks hold see zeros.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <vector>

#include "strata/detail/array_base.hpp"

namespace strata::loop {

class IterationScratch {
 public:
  /// The copies of the previous iteration are let go (their memory is reused).
  void begin_iteration() { used_ = 0; }

  /// What an access of `bytes` at `real` (nullptr: not held by this rank) is given:
  /// nullptr for a read of the real memory and for a Buffer's write (a Buffer keeps
  /// no memory to hand out), else scratch memory.
  [[gnu::always_inline]] void* for_access(void* real, std::size_t bytes, strata::detail::AccessMode mode) {
    if (mode == strata::detail::AccessMode::buffered) return nullptr;
    const auto* p = static_cast<const std::byte*>(real);
    // An element or row this iteration already copied (or one containing it): hand out
    // the copy, so the iteration sees its own writes.
    if (p)
      for (std::size_t k = 0; k < used_; ++k) {
        const Slot& s = slots_[k];
        if (s.real && p >= s.real && p + bytes <= s.real + s.bytes) return s.buf.get() + (p - s.real);
      }
    if (mode == strata::detail::AccessMode::read) return p ? nullptr : const_cast<std::byte*>(zeros(bytes));
    if (used_ == slots_.size()) slots_.emplace_back();
    Slot& s = slots_[used_++];
    if (s.capacity < bytes) {
      s.buf = std::make_unique<std::byte[]>(bytes);
      s.capacity = bytes;
    }
    s.real = p;
    s.bytes = bytes;
    if (p) std::memcpy(s.buf.get(), p, bytes);
    else std::memset(s.buf.get(), 0, bytes);
    return s.buf.get();
  }

 private:
  struct Slot {
    const std::byte* real = nullptr;  // the element or row it copies (nullptr: not local)
    std::size_t bytes = 0;
    std::unique_ptr<std::byte[]> buf;
    std::size_t capacity = 0;
  };

  // Zeros shared by every read of another rank's element (a slot each made an
  // iteration's accesses quadratic in its remote reads). Grown by a new buffer, never
  // reallocated: pointers handed out stay valid.
  const std::byte* zeros(std::size_t bytes) {
    if (bytes > zeros_bytes_) {
      zeros_bytes_ = std::max(bytes, 2 * zeros_bytes_);
      zeros_.push_back(std::make_unique<std::byte[]>(zeros_bytes_));  // value-initialised: zeros
    }
    return zeros_.back().get();
  }

  std::vector<Slot> slots_;
  std::size_t used_ = 0;  // slots_ in use by the current iteration
  std::vector<std::unique_ptr<std::byte[]>> zeros_;
  std::size_t zeros_bytes_ = 0;
};

}  // namespace strata::loop
