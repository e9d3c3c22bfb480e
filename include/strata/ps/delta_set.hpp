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

  bool dense() const { return dense_; }
  std::size_t size() const { return dense_ ? touched_.size() : sparse_.size(); }
  bool empty() const { return size() == 0; }

  void add(std::int64_t k, const T& delta) {
    if (!dense_) {
      sparse_[k] += delta;
      return;
    }
    if (slots_.empty()) {
      slots_.assign(static_cast<std::size_t>(volume_), T{});
      marked_.assign(static_cast<std::size_t>((volume_ + 63) / 64), 0);
    }
    const auto at = static_cast<std::size_t>(k);
    std::uint64_t& word = marked_[at / 64];
    const std::uint64_t bit = std::uint64_t{1} << (at % 64);
    if (!(word & bit)) {
      word |= bit;
      touched_.push_back(k);
    }
    slots_[at] += delta;
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
  std::int64_t volume_ = 0;
  bool dense_ = true;
  std::vector<T> slots_;
  std::vector<std::uint64_t> marked_;
  std::vector<std::int64_t> touched_;
  std::unordered_map<std::int64_t, T> sparse_;
};

}  // namespace strata::ps
