// DeltaSet: summed deltas per element of an array, as a Buffer's per-thread buffer
// and a relaxed table's outbox keep them.
//
// Arrays up to kDenseBytes get a slot per element, a bit per element saying which
// slots hold something, and a summary bit per word of those bits (so a summary word
// covers 4096 elements). An add sets both bits and adds, without a branch: a branch
// on "is this element new?" waits for the bit's load, and the set's first add of each
// element is a mispredicted one, so a sparse model's loop body would pay for that
// branch, and for a list of new elements, on every add.
// Walking the set visits the marked words, found through the summary, so it costs
// what the set holds plus a word per 4096 elements of the array, and goes in
// element order. Larger arrays get a hash map. The slots are allocated on the first add.
// The bound is 256 MB: a hash map takes each element of a row apart, and a matrix of
// wide rows (mlr's 20,000 features x 1,000 classes, 80 MB) spent 10 s a pass in it on
// 2 ranks where the dense slots take 1 s; a dense set costs its array's size per
// thread that writes it, once.
//
// The engine's, not the API: it is under include/ because Buffer::add and BufferWriter
// add to it inline.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "strata/element.hpp"

namespace strata::ps {

template <class T>
class DeltaSet {
 public:
  static constexpr std::int64_t kDenseBytes = std::int64_t{256} << 20;
  /// Elements one summary word covers: 64 bitmap words of 64 elements.
  static constexpr std::size_t kSummarySpan = 64 * 64;

  DeltaSet() = default;
  /// A set over the elements [0, volume) of an array.
  explicit DeltaSet(std::int64_t volume)
      : volume_(volume), dense_(volume * static_cast<std::int64_t>(sizeof(T)) <= kDenseBytes) {}
  DeltaSet(const DeltaSet& o)
      : volume_(o.volume_), dense_(o.dense_), slots_(o.slots_), marked_(o.marked_), summary_(o.summary_),
        sparse_(o.sparse_) {
    point();
  }
  DeltaSet(DeltaSet&& o) noexcept
      : volume_(o.volume_), dense_(o.dense_), slots_(std::move(o.slots_)), marked_(std::move(o.marked_)),
        summary_(std::move(o.summary_)), sparse_(std::move(o.sparse_)) {
    point();
    o.point();
  }
  DeltaSet& operator=(DeltaSet o) noexcept {
    volume_ = o.volume_;
    dense_ = o.dense_;
    slots_.swap(o.slots_);
    marked_.swap(o.marked_);
    summary_.swap(o.summary_);
    sparse_.swap(o.sparse_);
    point();
    return *this;
  }

  bool dense() const { return dense_; }
  /// The elements held (a walk of the marked words for a dense set).
  std::size_t size() const {
    if (!dense_) return sparse_.size();
    std::size_t n = 0;
    for_each_marked_word([&](std::size_t w) { n += static_cast<std::size_t>(std::popcount(marked_[w])); });
    return n;
  }
  bool empty() const {
    if (!dense_) return sparse_.empty();
    return std::all_of(summary_.begin(), summary_.end(), [](std::uint64_t s) { return s == 0; });
  }

  /// The hot path's pointers into an allocated dense set (all null otherwise). A
  /// BufferWriter holds them for one call of a loop body; they stay valid until the
  /// set is copied over or its first add allocates it.
  struct Slots {
    T* values = nullptr;
    std::uint64_t* marks = nullptr;
    std::uint64_t* summary = nullptr;
  };
  Slots slots() const { return {values_, marks_, summary_marks_}; }
  /// An add through Slots: both bits, then the sum (k within the volume).
  [[gnu::always_inline]] static void add_to(const Slots& s, std::int64_t k, const T& delta) {
    const auto at = static_cast<std::size_t>(k);
    s.marks[at / 64] |= std::uint64_t{1} << (at % 64);
    s.summary[at / kSummarySpan] |= std::uint64_t{1} << (at / 64 % 64);
    add_into(s.values[at], delta);
  }
  /// Marks the elements [k, k + len) (within the volume) as held: a row's bits a word
  /// at a time, so a row of 50 floats costs two or three ORs, not 50 adds' bits.
  [[gnu::always_inline]] static void mark_row(const Slots& s, std::int64_t k, std::size_t len) {
    if (len == 0) return;
    const auto at = static_cast<std::size_t>(k);
    const std::size_t first = at / 64, last = (at + len - 1) / 64;
    for (std::size_t w = first; w <= last; ++w) {
      std::uint64_t bits = ~std::uint64_t{0};
      if (w == first) bits &= ~std::uint64_t{0} << (at % 64);
      if (w == last) bits &= ~std::uint64_t{0} >> (63 - (at + len - 1) % 64);
      s.marks[w] |= bits;
      s.summary[w / 64] |= std::uint64_t{1} << (w % 64);
    }
  }
  /// A row's adds through Slots: `len` deltas to the elements [k, k + len) (within
  /// the volume): mark_row, then a vectorised sum (add_row_into).
  [[gnu::always_inline]] static void add_row_to(const Slots& s, std::int64_t k, const T* __restrict delta,
                                                std::size_t len) {
    mark_row(s, k, len);
    add_row_into(s.values + k, delta, len);
  }

  [[gnu::always_inline]] void add(std::int64_t k, const T& delta) {
    // The hot path of Buffer::add, through pointers held here (the vectors' own
    // bounds and emptiness would cost loads and branches). Inlined: a call per add
    // costs a sparse model about as much as the add itself.
    if (marks_) [[likely]] {
      add_to(slots(), k, delta);
      return;
    }
    add_cold(k, delta);
  }
  /// A row's adds (add_row_to), allocating the slots on the set's first add.
  void add_row(std::int64_t k, const T* delta, std::size_t len) {
    if (!marks_) [[unlikely]] {
      if (dense_) {
        allocate();
      } else {
        for (std::size_t j = 0; j < len; ++j) add_into(sparse_[k + static_cast<std::int64_t>(j)], delta[j]);
        return;
      }
    }
    add_row_to(slots(), k, delta, len);
  }

  /// f(k, delta) for every element held: in element order for a dense set, in no
  /// particular order for a hashed one.
  template <class F>
  void for_each(F&& f) const {
    if (!dense_) {
      for (const auto& [k, d] : sparse_) f(k, d);
      return;
    }
    for_each_marked_word([&](std::size_t w) {
      for (std::uint64_t b = marked_[w]; b; b &= b - 1) {
        const std::size_t at = w * 64 + static_cast<std::size_t>(std::countr_zero(b));
        f(static_cast<std::int64_t>(at), slots_[at]);
      }
    });
  }

  /// Adds every element held to `into`, then empties this set.
  void move_into(DeltaSet& into) {
    for_each([&](std::int64_t k, const T& d) { into.add(k, d); });
    clear();
  }

  /// Sums `sets` per element (in the order given: the same bits on every run), calls
  /// f(element, sum) once for every element any of them holds, and empties them.
  /// Dense sets are walked word by word of their bitmaps, so f sees the elements in
  /// increasing order and the memory behind them (the owner's values and apply
  /// state) is touched in order rather than at random.
  template <class F>
  static void drain(std::span<DeltaSet* const> sets, F&& f) {
    drain_part(sets, 0, 1, f);
  }

  /// drain() in parts that may run at once on different threads: part p of P drains
  /// its own range of elements (hashed sets: part 0 drains everything).
  template <class F>
  static void drain_part(std::span<DeltaSet* const> sets, int part, int parts, F&& f) {
    if (sets.empty()) return;
    if (!sets[0]->dense_) {
      if (part == 0) drain_hashed(sets, f);
      return;
    }
    // Parts split the summary, so no two share a summary word (each clears its own).
    const std::size_t S = summary_words(sets[0]->volume_);
    const std::size_t P = static_cast<std::size_t>(parts), p = static_cast<std::size_t>(part);
    for (std::size_t s = S * p / P; s < S * (p + 1) / P; ++s) {
      std::uint64_t any = 0;
      for (const DeltaSet* set : sets)
        if (!set->summary_.empty()) any |= set->summary_[s];
      if (!any) continue;
      for (std::uint64_t b = any; b; b &= b - 1)
        drain_word(sets, s * 64 + static_cast<std::size_t>(std::countr_zero(b)), f);
      for (DeltaSet* set : sets)
        if (!set->summary_.empty()) set->summary_[s] = 0;
    }
  }

  /// The elements held, sorted by element.
  std::vector<std::pair<std::int64_t, T>> sorted() const {
    std::vector<std::pair<std::int64_t, T>> out;
    for_each([&](std::int64_t k, const T& d) { out.emplace_back(k, d); });
    if (!dense_) std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return out;
  }

  /// Removes the listed elements (each held, each once) and returns their deltas in
  /// the same order.
  std::vector<T> extract(const std::vector<std::int64_t>& keys) {
    std::vector<T> out;
    out.reserve(keys.size());
    if (!dense_) {
      for (const auto k : keys) {
        auto it = sparse_.find(k);
        out.push_back(it->second);
        sparse_.erase(it);
      }
      return out;
    }
    for (const auto k : keys) {
      const auto at = static_cast<std::size_t>(k);
      out.push_back(slots_[at]);
      slots_[at] = T{};
      std::uint64_t& word = marked_[at / 64];
      word &= ~(std::uint64_t{1} << (at % 64));
      if (word == 0) summary_[at / kSummarySpan] &= ~(std::uint64_t{1} << (at / 64 % 64));
    }
    return out;
  }

  void clear() {
    if (!dense_) {
      sparse_.clear();
      return;
    }
    for_each_marked_word([&](std::size_t w) {
      for (std::uint64_t b = marked_[w]; b; b &= b - 1)
        slots_[w * 64 + static_cast<std::size_t>(std::countr_zero(b))] = T{};
      marked_[w] = 0;
    });
    std::fill(summary_.begin(), summary_.end(), 0);
  }

 private:
  // Every add the hot path does not take: the first add of a dense set (which
  // allocates its slots), and every add of a sparse set (a hashed map).
  [[gnu::noinline]] void add_cold(std::int64_t k, const T& delta) {
    if (!dense_) {
      add_into(sparse_[k], delta);
      return;
    }
    allocate();
    add(k, delta);
  }
  void allocate() {
    slots_.assign(static_cast<std::size_t>(volume_), T{});
    marked_.assign(static_cast<std::size_t>((volume_ + 63) / 64), 0);
    summary_.assign(summary_words(volume_), 0);
    point();
  }
  // The hot path's pointers: set once the slots exist (never for a sparse set).
  void point() {
    const bool ready = dense_ && !slots_.empty();
    values_ = ready ? slots_.data() : nullptr;
    marks_ = ready ? marked_.data() : nullptr;
    summary_marks_ = ready ? summary_.data() : nullptr;
  }

  static std::size_t summary_words(std::int64_t volume) {
    return (static_cast<std::size_t>(volume) + kSummarySpan - 1) / kSummarySpan;
  }
  // f(w) for every word w of marked_ with a bit set, in increasing order.
  template <class F>
  void for_each_marked_word(F&& f) const {
    for (std::size_t s = 0; s < summary_.size(); ++s)
      for (std::uint64_t b = summary_[s]; b; b &= b - 1) {
        const std::size_t w = s * 64 + static_cast<std::size_t>(std::countr_zero(b));
        if (marked_[w]) f(w);  // extract() may have emptied it
      }
  }

  template <class F>
  static void drain_hashed(std::span<DeltaSet* const> sets, F& f) {
    DeltaSet& head = *sets[0];
    for (std::size_t t = 1; t < sets.size(); ++t) sets[t]->move_into(head);
    head.for_each(f);
    head.clear();
  }
  // The elements of bitmap word w, summed in set order; their slots and bits are
  // cleared (the summary is the caller's).
  template <class F>
  static void drain_word(std::span<DeltaSet* const> sets, std::size_t w, F& f) {
    std::uint64_t any = 0;
    for (const DeltaSet* s : sets)
      if (!s->marked_.empty()) any |= s->marked_[w];
    for (std::uint64_t b = any; b; b &= b - 1) {
      const std::size_t at = w * 64 + static_cast<std::size_t>(std::countr_zero(b));
      T sum{};
      for (DeltaSet* s : sets)
        if (!s->marked_.empty() && (s->marked_[w] >> (at % 64) & 1)) {
          add_into(sum, s->slots_[at]);
          s->slots_[at] = T{};
        }
      f(static_cast<std::int64_t>(at), sum);
    }
    for (DeltaSet* s : sets)
      if (!s->marked_.empty()) s->marked_[w] = 0;
  }

  std::int64_t volume_ = 0;
  bool dense_ = true;
  std::vector<T> slots_;
  std::vector<std::uint64_t> marked_;   // a bit per element
  std::vector<std::uint64_t> summary_;  // a bit per word of marked_
  std::unordered_map<std::int64_t, T> sparse_;
  T* values_ = nullptr;                    // slots_.data() once allocated
  std::uint64_t* marks_ = nullptr;         // marked_.data() once allocated
  std::uint64_t* summary_marks_ = nullptr;  // summary_.data() once allocated
};

}  // namespace strata::ps
