// DeltaSet: summed deltas per element of an array, as a Buffer's per-thread buffer
// and a relaxed table's outbox keep them.
//
// Arrays up to kDenseBytes get a slot per element, a bit per element saying which
// slots hold something, and the list of those elements: an add is an index, a bit
// test and an addition, and walking the set costs what it holds, not the array's
// size. Larger arrays get a hash map. The slots are allocated on the first add.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

namespace strata::ps {

template <class T>
class DeltaSet {
 public:
  static constexpr std::int64_t kDenseBytes = std::int64_t{64} << 20;

  DeltaSet() = default;
  /// A set over the elements [0, volume) of an array.
  explicit DeltaSet(std::int64_t volume)
      : volume_(volume), dense_(volume * static_cast<std::int64_t>(sizeof(T)) <= kDenseBytes) {}
  DeltaSet(const DeltaSet& o)
      : volume_(o.volume_), dense_(o.dense_), slots_(o.slots_), marked_(o.marked_), touched_(o.touched_),
        sparse_(o.sparse_) {
    point();
  }
  DeltaSet(DeltaSet&& o) noexcept
      : volume_(o.volume_), dense_(o.dense_), slots_(std::move(o.slots_)), marked_(std::move(o.marked_)),
        touched_(std::move(o.touched_)), sparse_(std::move(o.sparse_)) {
    point();
    o.point();
  }
  DeltaSet& operator=(DeltaSet o) noexcept {
    volume_ = o.volume_;
    dense_ = o.dense_;
    slots_.swap(o.slots_);
    marked_.swap(o.marked_);
    touched_.swap(o.touched_);
    sparse_.swap(o.sparse_);
    point();
    return *this;
  }

  bool dense() const { return dense_; }
  std::size_t size() const { return dense_ ? touched_.size() : sparse_.size(); }
  bool empty() const { return size() == 0; }

  void add(std::int64_t k, const T& delta) {
    // The hot path of Buffer::add: a bit test and an addition, through pointers held
    // here (the vectors' own bounds and emptiness would cost loads and branches).
    if (marks_) [[likely]] {
      const auto at = static_cast<std::size_t>(k);
      std::uint64_t& word = marks_[at / 64];
      const std::uint64_t bit = std::uint64_t{1} << (at % 64);
      if (!(word & bit)) {
        word |= bit;
        touched_.push_back(k);
      }
      values_[at] += delta;
      return;
    }
    add_cold(k, delta);
  }

  /// f(k, delta) for every element held, in no particular order.
  template <class F>
  void for_each(F&& f) const {
    if (dense_) {
      for (const auto k : touched_) f(k, slots_[static_cast<std::size_t>(k)]);
    } else {
      for (const auto& [k, d] : sparse_) f(k, d);
    }
  }

  /// Adds every element held to `into` (in the order elements were first added
  /// here, so merging threads in order gives the same sums on every run), then
  /// empties this set.
  void move_into(DeltaSet& into) {
    if (dense_) {
      for (const auto k : touched_) into.add(k, slots_[static_cast<std::size_t>(k)]);
    } else {
      for (const auto& [k, d] : sparse_) into.add(k, d);
    }
    clear();
  }

  /// Sums `sets` per element (in the order given: the same bits on every run), calls
  /// f(element, sum) once for every element any of them holds, and empties them.
  /// When the sets hold many elements for the array's size (walks_bitmaps), they are
  /// walked word by word of their bitmaps, so f sees the elements in increasing
  /// order and the memory behind them (the owner's values and apply state) is
  /// touched in order rather than at random; otherwise in the order the elements
  /// were first added, set by set.
  template <class F>
  static void drain(std::span<DeltaSet* const> sets, F&& f) {
    const bool walk = walks_bitmaps(sets);
    drain_part(sets, walk, 0, 1, f);
    if (walk) forget_listed(sets);
  }

  /// drain() in parts that may run at once on different threads. `walk` is
  /// walks_bitmaps(sets), decided before any part starts: then part p of P drains
  /// its own range of elements, and once every part has run forget_listed()
  /// empties the sets' lists; otherwise part 0 drains everything.
  template <class F>
  static void drain_part(std::span<DeltaSet* const> sets, bool walk, int part, int parts, F&& f) {
    if (sets.empty()) return;
    if (!walk) {
      if (part == 0) drain_listed(sets, f);
      return;
    }
    const std::size_t words = words_of(sets), P = static_cast<std::size_t>(parts), p = static_cast<std::size_t>(part);
    drain_words(sets, words * p / P, words * (p + 1) / P, f);
  }
  static void forget_listed(std::span<DeltaSet* const> sets) {
    for (DeltaSet* s : sets) s->touched_.clear();
  }
  /// Whether drain walks the bitmaps: dense sets holding at least one element per
  /// 64 of the array, where a walk costs less than following the lists at random.
  static bool walks_bitmaps(std::span<DeltaSet* const> sets) {
    std::size_t held = 0;
    for (const DeltaSet* s : sets) {
      if (!s->dense_) return false;
      held += s->size();
    }
    return !sets.empty() && held * 64 >= static_cast<std::size_t>(sets[0]->volume_);
  }

  /// The elements held, sorted by element.
  std::vector<std::pair<std::int64_t, T>> sorted() const {
    std::vector<std::pair<std::int64_t, T>> out;
    out.reserve(size());
    for_each([&](std::int64_t k, const T& d) { out.emplace_back(k, d); });
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
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
      marked_[at / 64] &= ~(std::uint64_t{1} << (at % 64));
    }
    // The touched list keeps only what is still marked.
    std::erase_if(touched_, [&](std::int64_t k) {
      const auto at = static_cast<std::size_t>(k);
      return !(marked_[at / 64] >> (at % 64) & 1);
    });
    return out;
  }

  void clear() {
    for (const auto k : touched_) {
      slots_[static_cast<std::size_t>(k)] = T{};
      marked_[static_cast<std::size_t>(k) / 64] = 0;
    }
    touched_.clear();
    sparse_.clear();
  }

 private:
  // Every add the hot path does not take: the first add of a dense set (which
  // allocates its slots), and every add of a sparse set (a hashed map).
  void add_cold(std::int64_t k, const T& delta) {
    if (!dense_) {
      sparse_[k] += delta;
      return;
    }
    slots_.assign(static_cast<std::size_t>(volume_), T{});
    marked_.assign(static_cast<std::size_t>((volume_ + 63) / 64), 0);
    point();
    add(k, delta);
  }
  // The hot path's pointers: set once the slots exist (never for a sparse set).
  void point() {
    const bool ready = dense_ && !slots_.empty();
    values_ = ready ? slots_.data() : nullptr;
    marks_ = ready ? marked_.data() : nullptr;
  }

  static std::size_t words_of(std::span<DeltaSet* const> sets) {
    return static_cast<std::size_t>((sets[0]->volume_ + 63) / 64);
  }
  template <class F>
  static void drain_listed(std::span<DeltaSet* const> sets, F& f) {
    DeltaSet& head = *sets[0];
    for (std::size_t t = 1; t < sets.size(); ++t) sets[t]->move_into(head);
    head.for_each(f);
    head.clear();
  }
  // The elements of bitmap words [from, to), summed in set order; their slots and
  // bits are cleared, the lists left alone.
  template <class F>
  static void drain_words(std::span<DeltaSet* const> sets, std::size_t from, std::size_t to, F& f) {
    for (std::size_t w = from; w < to; ++w) {
      std::uint64_t any = 0;
      for (const DeltaSet* s : sets)
        if (!s->marked_.empty()) any |= s->marked_[w];
      if (!any) continue;
      for (std::uint64_t b = any; b; b &= b - 1) {
        const std::size_t bit = static_cast<std::size_t>(__builtin_ctzll(b)), at = w * 64 + bit;
        T sum{};
        for (DeltaSet* s : sets)
          if (!s->marked_.empty() && (s->marked_[w] >> bit & 1)) {
            sum += s->slots_[at];
            s->slots_[at] = T{};
          }
        f(static_cast<std::int64_t>(at), sum);
      }
      for (DeltaSet* s : sets)
        if (!s->marked_.empty()) s->marked_[w] = 0;
    }
  }

  std::int64_t volume_ = 0;
  bool dense_ = true;
  std::vector<T> slots_;
  std::vector<std::uint64_t> marked_;
  std::vector<std::int64_t> touched_;
  std::unordered_map<std::int64_t, T> sparse_;
  T* values_ = nullptr;            // slots_.data() once allocated
  std::uint64_t* marks_ = nullptr;  // marked_.data() once allocated
};

}  // namespace strata::ps
