// ArrayReader: an array's reads inside one call of a loop body, with the cache
// lookup taken once per call instead of once per read.
//
//   parallel_for(samples, [&](const Index<1>&, const Sample& s) {
//     const auto wr = w.reader();            // inside the body: valid for this call
//     for (auto [f, x] : s.features) z += wr.read({f}) * x;
//     ...
//   });
//
// A read through the array (`w.read(i)`) finds the rank's cache of a relaxed array
// through the array object on every read: the compiler reloads that chain of
// pointers after every possible call, and a sparse model's inner loop holds one
// (the dynamic path), so each non-zero pays a chain of dependent loads before its
// own. A reader copies what it needs of the published cache view
// (detail/cache_view.hpp) once, so the lookup lives in registers; it counts each
// cached read into the thread's counter, as the array's read does (docs/loops.md,
// "Readers", has slr's figures).
//
// Everything a reader does not find in the view (no view: reconnaissance, a checked
// or logged run, a plain array; a unit outside the cache; an index out of bounds)
// goes through the array's own read, so it is observed, fetched, counted or
// reported exactly as `w.read(i)` would be. A reader must not outlive the call of
// the body that took it: the view it copied may change between calls (a new
// layout, the next loop). For a matrix (or any array of more than one dimension),
// `read_row(row)` gives a whole cached row (the elements along the last dimension)
// in one lookup, and `read(i)` one element of it.
#pragma once

#include <array>
#include <cstdint>
#include <source_location>
#include <span>

#include "strata/detail/cache_view.hpp"
#include "strata/index.hpp"

namespace strata {

template <class T, std::size_t N>
class DistArray;

template <class T, std::size_t N>
class ArrayReader {
 public:
  explicit ArrayReader(const DistArray<T, N>& array) : array_(&array) {
    const detail::CacheView* view = array.cache_view();
    if (view && !view->slot_of) {  // array-shaped: unit u at u (a compact cache takes the array's path)
      block_ = static_cast<const T*>(view->block_of(detail::t_worker));
      held_ = view->held;
      units_ = static_cast<std::uint64_t>(view->units);
      count_ = &detail::t_cache_reads[view->counter];
      shape_ = array.shape();
    }
  }
  ArrayReader(const ArrayReader&) = delete;
  ArrayReader& operator=(const ArrayReader&) = delete;

  /// The element at `i`, as `array.read(i)` gives it.
  [[gnu::always_inline]] const T& read(const Index<N>& i,
                                       std::source_location where = std::source_location::current()) const {
    if constexpr (N == 1) {
      const auto u = static_cast<std::uint64_t>(i[0]);
      if (u < units_ && (!held_ || (held_[u / 64] >> (u % 64) & 1))) {
        ++*count_;
        return block_[u];
      }
    } else if (static_cast<std::uint64_t>(i[N - 1]) < static_cast<std::uint64_t>(shape_[N - 1])) {
      if (const T* row = cached_row(i)) return row[i[N - 1]];
    }
    return miss(array_, i, where);
  }

  /// The row at leading indices `row` (the elements along the last dimension), as
  /// `array.read_row(row...)` gives it.
  [[gnu::always_inline]] std::span<const T> read_row(const Index<N - 1>& row,
                                                     std::source_location where = std::source_location::current()) const
    requires(N >= 2)
  {
    Index<N> i{};
    for (std::size_t d = 0; d + 1 < N; ++d) i[d] = row[d];
    const auto len = static_cast<std::size_t>(shape_[N - 1]);
    if (const T* p = cached_row(i)) return {p, len};
    return miss_row(array_, i, where);
  }
  [[gnu::always_inline]] std::span<const T> read_row(std::int64_t row, std::source_location where =
                                                                           std::source_location::current()) const
    requires(N == 2)
  {
    return read_row(Index<1>{row}, where);
  }

 private:
  // Out of line and static, so the inner loop keeps its registers: inlined, the
  // array's read path made the compiler keep the loop's running sum on the stack,
  // and a member would take the reader's address (and so its count) out of them.
  [[gnu::noinline, gnu::cold]] static const T& miss(const DistArray<T, N>* array, Index<N> i,
                                                     std::source_location where) {
    return array->read(i, where);
  }
  [[gnu::noinline, gnu::cold]] static std::span<const T> miss_row(const DistArray<T, N>* array, Index<N> i,
                                                                 std::source_location where) {
    return array->read_row_at(i, where);
  }
  // The cached row holding index i (its leading subscripts), counted as a read, or
  // nullptr when the view lacks it or a subscript is out of bounds.
  [[gnu::always_inline]] const T* cached_row(const Index<N>& i) const {
    std::uint64_t u = 0;
    bool inside = true;
    for (std::size_t d = 0; d + 1 < N; ++d) {
      inside &= static_cast<std::uint64_t>(i[d]) < static_cast<std::uint64_t>(shape_[d]);
      u = u * static_cast<std::uint64_t>(shape_[d]) + static_cast<std::uint64_t>(i[d]);
    }
    if (!inside || u >= units_ || (held_ && !(held_[u / 64] >> (u % 64) & 1))) return nullptr;
    ++*count_;
    return block_ + u * static_cast<std::uint64_t>(shape_[N - 1]);
  }

  const DistArray<T, N>* array_;
  // The published view, when it is array-shaped (CacheView): no units otherwise.
  const T* block_ = nullptr;
  const std::uint64_t* held_ = nullptr;  // nullptr: every unit
  std::uint64_t units_ = 0;
  std::int64_t* count_ = nullptr;  // the thread's count of the view's cached reads
  std::array<std::int64_t, N> shape_{};
};

}  // namespace strata
