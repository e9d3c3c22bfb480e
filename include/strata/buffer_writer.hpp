// BufferWriter: a Buffer's adds inside one call of a loop body, with the thread's
// delta set looked up once per call instead of once per add.
//
//   parallel_for(samples, [&](const Index<1>&, const Sample& s) {
//     const auto wr = w.reader();
//     const auto wb = wbuf.writer();        // inside the body: valid for this call
//     ...
//     for (auto [f, x] : s.features) wb.add({f}, g * x);
//   });
//
// Buffer::add finds the thread's delta set through the Buffer on every add (the
// thread's index, the per-thread vector, the set's pointers) and checks for an
// observer and for Hybrid folding; after each add's stores the compiler reloads
// all of it. A writer takes the set's pointers once (detail/delta_set.hpp, Slots), so
// an add is a bounds test, two bit sets and the sum. It is the companion of
// ArrayReader (strata/array_reader.hpp); docs/buffers.md has the figures.
//
// Whatever the fast path cannot do goes through Buffer::add, so it is observed,
// checked, folded or reported exactly as there: reconnaissance and checked runs (an
// observer watches), Hybrid arrays (folded into the cache as written), a set not yet
// allocated (the thread's first add), hashed sets (large arrays), arrays of more
// than one dimension, and an index out of bounds. A writer must not outlive the
// call of the body that took it.
#pragma once

#include <cstdint>
#include <source_location>

#include "strata/index.hpp"
#include "strata/detail/delta_set.hpp"

namespace strata {

template <class B>
class BufferWriter {
 public:
  using value_type = typename B::value_type;
  static constexpr std::size_t rank = B::rank;

  explicit BufferWriter(B& buffer) : buffer_(&buffer) {
    if constexpr (rank == 1) {
      if (buffer.writes_fast()) {
        slots_ = buffer.thread_slots();
        if (slots_.marks) volume_ = static_cast<std::uint64_t>(buffer.elements());
      }
    }
  }
  BufferWriter(const BufferWriter&) = delete;
  BufferWriter& operator=(const BufferWriter&) = delete;

  /// Adds `delta` to element i, as `buffer.add(i, delta)` does.
  [[gnu::always_inline]] void add(const Index<rank>& i, const value_type& delta,
                                  std::source_location where = std::source_location::current()) const {
    if constexpr (rank == 1) {
      if (static_cast<std::uint64_t>(i[0]) < volume_) {
        ps::DeltaSet<value_type>::add_to(slots_, i[0], delta);
        return;
      }
    }
    slow(buffer_, i, delta, where);
  }

 private:
  // Out of line and static, like ArrayReader's miss: the inner loop keeps its registers.
  [[gnu::noinline, gnu::cold]] static void slow(B* buffer, Index<rank> i, value_type delta,
                                                 std::source_location where) {
    buffer->add(i, delta, where);
  }

  B* buffer_;
  typename ps::DeltaSet<value_type>::Slots slots_{};
  std::uint64_t volume_ = 0;  // 0: every add takes Buffer::add
};

}  // namespace strata
