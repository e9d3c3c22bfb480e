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
// an add is a bounds test, two bit sets and the sum. `add_row(row, deltas)` adds a
// whole row of a matrix in one call: its bits a word at a time, the sums vectorised.
// `add_scaled_row(row, alpha, x)` adds alpha * x to a float row, the deltas never
// written out. It is the companion of ArrayReader (strata/array_reader.hpp);
// docs/buffers.md has the figures.
//
// Under Hybrid (and read-my-writes) the writer also folds each add into the rank's
// cache itself (an atomic add per element; plain adds for a row, as Hogwild does)
// when the cache is laid out like the array. On one rank whose cache is the array
// itself the fold is the whole add (ElementOps::fold_only): no delta set at all.
//
// Whatever the fast path cannot do goes through Buffer::add (add_row), so it is
// observed, checked, folded or reported exactly as there: reconnaissance and checked
// runs (an observer watches), a Hybrid cache laid out compactly, a set not yet
// allocated (the thread's first add), hashed sets (large arrays), and an index out of
// bounds. A writer must not outlive the call of the body that took it.
#pragma once

#include <atomic>
#include <cstdint>
#include <source_location>
#include <span>
#include <type_traits>
#include <vector>

#include "strata/index.hpp"
#include "strata/detail/cache_view.hpp"
#include "strata/detail/delta_set.hpp"
#include "strata/kernels.hpp"

namespace strata {

template <class B>
class BufferWriter {
 public:
  using value_type = typename B::value_type;
  static constexpr std::size_t rank = B::rank;

  explicit BufferWriter(B& buffer) : buffer_(&buffer) {
    if (!buffer.writes_fast()) return;  // e.g. Hybrid with a compact cache: Buffer::add folds
    const detail::CacheView* fold = buffer.fold_view();  // set whenever the buffer folds
    keep_ = !buffer.folds_only();
    if (keep_) {
      slots_ = buffer.thread_slots();
      if (!slots_.marks) return;  // not allocated yet: the first add allocates it
    }
    shape_ = buffer.shape();
    if constexpr (rank > 1) row_length_ = static_cast<std::size_t>(shape_[rank - 1]);
    if (fold) {
      fold_ = static_cast<value_type*>(fold->block_of(detail::t_worker));
      fold_held_ = keep_ ? fold->held : nullptr;  // fold_only: the values hold every unit
      fold_written_ = fold->written_of(detail::t_worker);
    }
    fast_ = true;
  }
  BufferWriter(const BufferWriter&) = delete;
  BufferWriter& operator=(const BufferWriter&) = delete;

  /// Adds `delta` to element i, as `buffer.add(i, delta)` does.
  [[gnu::always_inline]] void add(const Index<rank>& i, const value_type& delta,
                                  std::source_location where = std::source_location::current()) const {
    if (fast_) {
      const std::int64_t k = key_of(i, rank);
      if (k >= 0) [[likely]] {
        if (keep_) ps::DeltaSet<value_type>::add_to(slots_, k, delta);
        if (fold_) fold(k, delta);
        return;
      }
    }
    slow(buffer_, i, delta, where);
  }

  /// Adds a row of deltas to row `row` of a matrix, as `buffer.add_row(row, delta)` does.
  [[gnu::always_inline]] void add_row(const Index<rank - 1>& row, std::span<const value_type> delta,
                                      std::source_location where = std::source_location::current()) const
    requires(rank >= 2)
  {
    if (const std::int64_t k = fast_row_key(row, delta.size()); k >= 0) [[likely]] {
      if (keep_) ps::DeltaSet<value_type>::add_row_to(slots_, k, delta.data(), row_length_);
      if (fold_) fold_row(k, delta.data());
      return;
    }
    slow_row(buffer_, row, delta, where);
  }
  [[gnu::always_inline]] void add_row(std::int64_t row, std::span<const value_type> delta,
                                      std::source_location where = std::source_location::current()) const
    requires(rank == 2)
  {
    add_row(Index<1>{row}, delta, where);
  }

  /// Adds alpha * x[j] to element j of row `row` of a float matrix: add_row with the
  /// deltas alpha * x (the same bits: each product is rounded, then added), without
  /// writing them out first. An embedding's step of a row by another row (word2vec's
  /// output rows) is one.
  [[gnu::always_inline]] void add_scaled_row(const Index<rank - 1>& row, float alpha, std::span<const float> x,
                                             std::source_location where = std::source_location::current()) const
    requires(rank >= 2 && std::is_same_v<value_type, float>)
  {
    if (const std::int64_t k = fast_row_key(row, x.size()); k >= 0) [[likely]] {
      if (keep_) {
        ps::DeltaSet<float>::mark_row(slots_, k, row_length_);
        kernels::axpy(alpha, x.data(), slots_.values + k, row_length_);
      }
      if (fold_)
        if (float* unit = fold_unit(k)) kernels::axpy(alpha, x.data(), unit, row_length_);
      return;
    }
    slow_scaled_row(buffer_, row, alpha, x, where);
  }
  [[gnu::always_inline]] void add_scaled_row(std::int64_t row, float alpha, std::span<const float> x,
                                             std::source_location where = std::source_location::current()) const
    requires(rank == 2 && std::is_same_v<value_type, float>)
  {
    add_scaled_row(Index<1>{row}, alpha, x, where);
  }

 private:
  // The row-major key of `i`, checking its first `checked` subscripts (the others are
  // 0), or -1 when one is out of bounds.
  [[gnu::always_inline]] std::int64_t key_of(const Index<rank>& i, std::size_t checked) const {
    std::int64_t k = 0;
    bool inside = true;
    for (std::size_t d = 0; d < rank; ++d) {
      if (d < checked) inside &= static_cast<std::uint64_t>(i[d]) < static_cast<std::uint64_t>(shape_[d]);
      k = k * shape_[d] + i[d];
    }
    return inside ? k : -1;
  }
  // The key of row `row`'s first element when the fast path takes a row of `len`
  // values there (the right length, inside the array), else -1.
  [[gnu::always_inline]] std::int64_t fast_row_key(const Index<rank - 1>& row, std::size_t len) const
    requires(rank >= 2)
  {
    if (!fast_ || len != row_length_) return -1;
    Index<rank> i{};
    for (std::size_t d = 0; d + 1 < rank; ++d) i[d] = row[d];
    return key_of(i, rank - 1);
  }
  // The cached unit holding key k under Hybrid, or nullptr (the cache lacks it).
  [[gnu::always_inline]] value_type* fold_unit(std::int64_t k) const {
    const auto u = static_cast<std::uint64_t>(rank == 1 ? k : k / static_cast<std::int64_t>(row_length_));
    if (fold_held_ && !(fold_held_[u / 64] >> (u % 64) & 1)) return nullptr;
    detail::CacheView::note_written(fold_written_, u);
    return fold_ + (rank == 1 ? k : static_cast<std::int64_t>(u * row_length_));
  }
  // An element: an atomic add for a number, a plain one for a row struct.
  [[gnu::always_inline]] void fold(std::int64_t k, const value_type& delta) const {
    if (value_type* unit = fold_unit(k)) {
      value_type& at = unit[rank == 1 ? 0 : k % static_cast<std::int64_t>(row_length_)];
      if constexpr (std::is_arithmetic_v<value_type>)
        std::atomic_ref<value_type>(at).fetch_add(delta, std::memory_order_relaxed);
      else
        add_into(at, delta);
    }
  }
  // A row: plain adds into the cached row, as Hogwild adds (ps_typed_ops.hpp, fold_row).
  [[gnu::always_inline]] void fold_row(std::int64_t k, const value_type* delta) const {
    if (value_type* row = fold_unit(k)) add_row_into(row, delta, row_length_);
  }

  // Out of line and static, like ArrayReader's miss: the inner loop keeps its registers.
  [[gnu::noinline, gnu::cold]] static void slow(B* buffer, Index<rank> i, value_type delta,
                                                 std::source_location where) {
    buffer->add(i, delta, where);
  }
  [[gnu::noinline, gnu::cold]] static void slow_row(B* buffer, Index<rank - 1> row,
                                                     std::span<const value_type> delta, std::source_location where) {
    buffer->add_row(row, delta, where);
  }
  [[gnu::noinline, gnu::cold]] static void slow_scaled_row(B* buffer, Index<rank - 1> row, float alpha,
                                                            std::span<const float> x, std::source_location where) {
    thread_local std::vector<float> delta;
    delta.resize(x.size());
    for (std::size_t j = 0; j < x.size(); ++j) delta[j] = alpha * x[j];
    buffer->add_row(row, std::span<const float>(delta), where);
  }

  B* buffer_;
  typename ps::DeltaSet<value_type>::Slots slots_{};
  Shape<rank> shape_{};
  std::size_t row_length_ = 1;
  value_type* fold_ = nullptr;                 // Hybrid: the cache block laid out like the array
  const std::uint64_t* fold_held_ = nullptr;   // its held bits (nullptr: every unit)
  std::uint8_t* fold_written_ = nullptr;       // a replica's written units (CacheView::written)
  bool keep_ = true;                           // false: a fold is the whole add (ElementOps::fold_only)
  bool fast_ = false;                          // false: every add takes Buffer::add
};

}  // namespace strata
